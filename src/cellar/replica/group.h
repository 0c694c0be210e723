// replica/group.h: one replica of a Raft group, run by the actor that owns it.
//
// A replica_group is a libraft instance (the consensus algorithm: elections, log
// replication, commitment, snapshots, all libraft's) wired to cellar: its raft_io is an
// actor_io (replica/actor_io.h) over the owner's loop, a storage and a transport, and
// its state machine is the owner's. The owner proposes commands; each command is applied,
// on every replica, in log order, once a majority of the group has it in its log; the
// proposer hears the outcome with what its replica's state machine answered.
//
// The owner routes three kinds of its own messages here: ticks and flushes it posted to
// itself (io_loop) and a peer's bytes (transport). Nothing else calls libraft.
//
// Thread safety: none; every call comes from the owner.
#pragma once

#include "replica/raft_c.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"
#include "replica/actor_io.h"
#include "replica/storage.h"

namespace cellar::replica {

// The owner's state, changed only by committed commands, the same on every replica.
class state_machine {
 public:
  virtual ~state_machine() = default;
  // Applies the command at log index `index`; returns what the proposer is told.
  virtual std::string apply(std::uint64_t index, std::string_view command) = 0;
  // The whole state as bytes, for a snapshot (the log before it is then discarded).
  virtual std::vector<char> snapshot() = 0;
  // Replaces the whole state with a snapshot's bytes.
  virtual status restore(std::string_view bytes) = 0;
};

struct member {
  std::uint64_t id = 0;  // nonzero, unique in the group
  std::string address;   // how the transport reaches it
};

struct group_options {
  std::uint64_t id = 0;
  std::string address;
  unsigned election_timeout_ms = 1000;  // libraft randomises each election between 1x and 2x
  unsigned heartbeat_timeout_ms = 100;  // also the tick interval
  // Entries applied between two snapshots, at least. A snapshot copies the whole state, so
  // the next one waits until the log written since holds about as many bytes as the last
  // snapshot did (each entry's command and 64 bytes): each byte written then costs at most
  // about one byte of snapshot, however large the state and whatever the entries' sizes
  // (the log kept in memory or on disk grows alike).
  unsigned snapshot_threshold = 1024;
  unsigned snapshot_trailing = 128;  // entries kept after a snapshot, for followers close behind
  // The replica that should lead (0: whichever wins the elections). Another replica that
  // leads hands leadership to it (raft_transfer) once its log matches the leader's, at
  // most once per election timeout, so that leaders sit where the placement put them.
  // A handover fails no request: the leader first lets the entries in flight commit and
  // holds new proposals and barriers; once another replica leads they are answered
  // NOT_LEADER (never proposed, so safe to send again), or run here if the transfer failed.
  std::uint64_t preferred_leader = 0;
  // How long a membership change may take (add_member: the new replica's catch-up) before
  // it fails and the next one may start.
  unsigned change_timeout_ms = 120000;
};

// What a replica knows of its group, for operators (replica_group::report).
struct group_status {
  std::string role;  // "leader", "follower", "candidate" or "stopped"
  std::uint64_t term = 0;
  member leader;                   // id 0: none known
  std::uint64_t last_index = 0;    // the last entry of this replica's log
  std::uint64_t commit_index = 0;  // the last entry this replica knows is committed
  std::uint64_t last_applied = 0;  // the last entry applied to its cells
  // On a leader, each other replica's progress: its last entry known to match the leader's.
  struct peer {
    member who;
    std::uint64_t match_index = 0;
    bool voter = true;  // false: a learner (a replica being added, still catching up)
  };
  std::vector<peer> peers;
};

// A membership change under way on a leader (replica_group::add_member, remove_member).
struct membership_change {
  bool adding = false;
  member who;
  std::function<void(const status&)> done;
  bool in_flight = false;  // a libraft request of it has not completed yet
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point learning_since{};  // when `who` became a stand-by
};

class replica_group {
 public:
  replica_group(group_options opt, replica_storage& storage, transport& net, io_loop& loop, state_machine& sm);
  replica_group(const replica_group&) = delete;
  replica_group& operator=(const replica_group&) = delete;
  // Stops libraft at once if close() did not: proposals still pending are dropped
  // without their callbacks (the owner is going away).
  ~replica_group();

  // Starts the replica. If its storage is pristine and `members` is not empty, first
  // writes the group's initial configuration (`members`, all voters; every initial
  // replica is given the same). A replica with state resumes from it and ignores
  // `members`. INTERNAL or IO_ERROR with libraft's message if it cannot start.
  status start(const std::vector<member>& members);

  // Appends `command` to the log if this replica is the leader. `done` runs once with the
  // outcome: OK and the state machine's answer once applied here; NOT_LEADER (naming the
  // leader this replica knows) if it is not the leader; UNAVAILABLE if leadership was
  // lost or the replica closed before the command was applied (it may still commit).
  using applied_fn = std::function<void(const status&, std::string reply)>;
  void propose(std::string command, applied_fn done);
  // Completes once every command appended before it is applied here, on a replica that
  // is still the leader: a read after it sees every write acknowledged before it was
  // asked (a read index). Errors as propose.
  void barrier(std::function<void(const status&)> done);

  // Membership changes, on the leader only (else NOT_LEADER naming the leader), one at a
  // time: while one runs (or a leadership transfer does) another is refused CONFLICT.
  // `done` runs once with the outcome; UNAVAILABLE if leadership was lost or the replica
  // closed meanwhile (the change may still take effect: ask the new leader again, as
  // each change is idempotent).
  //
  // add_member: `m` joins as a learner (libraft's spare, then stand-by: it receives the log,
  // or a snapshot when the log it missed is gone, but does not vote), and becomes a voter
  // once its log matches the leader's. OK at once if it is a voter already; a learner
  // already present goes on from where it is. `m`'s replica must be started empty (start
  // with no members): the leader's entries bring it the configuration. UNAVAILABLE if it
  // has not caught up within change_timeout_ms (it stays a learner: remove it or retry).
  void add_member(member m, std::function<void(const status&)> done);
  // remove_member: the replica `id` leaves the group once the configuration without it is
  // committed; OK at once if it is not in it. When `id` is this replica (the leader), it
  // first hands leadership to another voter (the preferred leader if it can) as a handover
  // to the preferred leader does, failing no request (group_options::preferred_leader),
  // and answers NOT_LEADER naming the new leader, which is then asked again.
  void remove_member(std::uint64_t id, std::function<void(const status&)> done);
  // The replica that should lead from now on (group_options::preferred_leader; 0: none).
  void set_preferred_leader(std::uint64_t id) { opt_.preferred_leader = id; }

  // Whether this replica may serve a read now from its applied state, without a barrier,
  // and the read sees every write acknowledged before it was asked (a leader lease). True
  // when it leads, has applied an entry it proposed in its current term, and a majority of
  // the group's voters (itself included) accepted a message it sent as leader of this term
  // less than 80% of the election timeout ago. A replica that accepted a leader's message
  // refuses votes until its election timer runs out (libraft's rule; a restarted replica
  // refuses them for one election timeout, actor_io::set_vote_quiet), so no other leader can
  // be elected before the lease ends; the margin covers the replicas' clocks running at
  // slightly different rates. False from the moment a leadership transfer starts (its target
  // asks for votes that replicas grant despite a leader) until the next term.
  bool lease_valid();

  bool is_leader() const;
  // The leader this replica knows (id 0: none).
  member leader() const;
  // NOT_LEADER naming the leader this replica knows, for a request it cannot serve
  // (leader_address_in reads the leader's address back from it).
  status not_leader() const;
  std::uint64_t term() const { return raft_.current_term; }
  std::uint64_t last_applied() const;
  std::uint64_t commit_index() const { return raft_.commit_index; }
  const group_options& options() const { return opt_; }
  group_status report() const;

  // The owner's handlers (see above).
  void on_tick(std::uint64_t generation);
  void on_flush();
  void on_receive(std::string_view bytes);

  // Stops the replica: pending proposals fail with UNAVAILABLE, and `done` runs from a
  // later on_flush once libraft has let go of everything.
  void close(std::function<void()> done);
  bool closed() const { return closed_; }

 private:
  struct pending;
  static int fsm_apply(raft_fsm* fsm, const raft_buffer* buf, void** result);
  static int fsm_snapshot(raft_fsm* fsm, raft_buffer* bufs[], unsigned* n_bufs);
  // Hands leadership to the preferred replica when it is due (see preferred_leader): the
  // steps of a handover, each taken from the owner's handlers, never inside libraft.
  enum class handover { none, draining, transferring, handed };
  struct held_request {
    std::string command;
    applied_fn applied;                       // a proposal,
    std::function<void(const status&)> read;  // or a barrier
  };
  void hand_over_if_due();
  void begin_handover(std::uint64_t to);  // to replica `to` (0: whichever voter libraft picks)
  void advance_handover();
  void finish_handover();
  // Whether the next snapshot is due at applied index `applied` (see snapshot_threshold),
  // told to libraft as its threshold.
  void pace_snapshots(std::uint64_t applied);
  void snapshot_taken(std::size_t state_bytes);
  static int fsm_restore(raft_fsm* fsm, raft_buffer* buf);
  status failure(int rv) const;
  // The membership change under way (add_member, remove_member): each step is one libraft
  // request; continue_change issues the next once the last one has completed.
  void begin_change(bool adding, member who, std::function<void(const status&)> done);
  void continue_change();
  void issue_change_step(const raft_server* s);
  void change_step_done(int rv);
  void finish_change(const status& st);
  status change_failure(int rv) const;

  // Notes when this replica became the leader of its current term (lease_valid).
  void note_leadership();
  // An entry this replica proposed in `term` was applied.
  void applied(std::uint64_t term) {
    if (term == raft_.current_term && is_leader()) applied_term_ = term;
  }

  group_options opt_;
  state_machine& sm_;
  actor_io io_;
  raft raft_{};
  raft_fsm fsm_{};
  bool initialized_ = false;
  bool closing_ = false;
  bool closed_ = false;
  bool dying_ = false;               // in the destructor: callbacks are not run
  std::string last_result_;          // what the state machine answered for the entry just applied
  std::uint64_t applied_bytes_ = 0;  // the commands' bytes applied since the last snapshot
  std::uint64_t snapshot_at_ = 0;    // the last applied index at the last snapshot
  std::uint64_t state_bytes_ = 0;    // the last snapshot's size
  // The state was just restored from a snapshot: libraft sets its index as the last applied
  // after the restore returns, so the next apply takes it as snapshot_at_.
  bool restored_ = false;
  std::chrono::steady_clock::time_point handed_over_at_{};  // the last handover begun
  handover handover_ = handover::none;
  std::uint64_t handover_to_ = 0;  // the replica the handover under way is for (0: any voter)
  std::chrono::steady_clock::time_point handover_step_at_{};  // when handover_ last changed
  std::vector<held_request> held_;                            // proposals and barriers held during a handover, in order
  std::size_t in_flight_ = 0;                                 // proposals and barriers libraft holds
  std::function<void()> on_closed_;
  std::optional<membership_change> change_;
  std::uint64_t lease_term_ = 0;    // the term leader_since_ is of
  std::uint64_t leader_since_ = 0;  // actor_io::now_ns when this replica was seen leading lease_term_
  std::uint64_t applied_term_ = 0;  // the term of the last entry this replica proposed and applied as leader
};

// The address of the leader a NOT_LEADER status of replica_group::not_leader names, also
// when a caller put the partition's name before it; empty when it names none (an election
// is under way) or `s` is another status.
std::string leader_address_in(const status& s);

}  // namespace cellar::replica
