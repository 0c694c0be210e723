// replica/actor_io.h: libraft's raft_io, run by the actor that owns the replica.
//
// libraft drives a replica through a raft_io: a tick at a fixed interval, messages to and
// from peers, and writes of its term, vote, log and snapshots, each write completing
// through a callback that must run later, never inside the call that asked for it.
// actor_io is that raft_io with the owner's event loop as its loop:
//  - ticks are delayed messages the owner sends itself (io_loop::post_tick), and each
//    comes back as on_tick;
//  - a completion (append, snapshot, send, close) is queued and the owner is asked for one
//    on_flush (io_loop::post_flush), which runs the queued completions in order;
//  - writes go to a replica_storage (replica/storage.h) when asked, so they are in the
//    storage in the order libraft issued them (an append, then a truncate, then an append
//    land in that order) and only their callbacks wait for the flush;
//  - `send` encodes the message (replica/wire.h) at once and hands the bytes to a transport,
//    and a peer's bytes come in through on_receive.
// So libraft runs only inside the owner's message handlers: one thread at a time, never
// concurrently with itself, and nothing outside the owner touches it.
//
// Thread safety: none; every call comes from the owner.
#pragma once

#include "replica/raft_c.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "replica/storage.h"

namespace cellar::replica {

// What actor_io needs from its owner's loop.
class io_loop {
 public:
  virtual ~io_loop() = default;
  // Calls on_flush() once, from the owner's loop, after the current handler returns.
  virtual void post_flush() = 0;
  // Calls on_tick(generation) from the owner's loop after `delay`.
  virtual void post_tick(std::chrono::milliseconds delay, std::uint64_t generation) = 0;
};

// Carries a replica's messages to its peers.
class transport {
 public:
  virtual ~transport() = default;
  // Hands `bytes` on to replica `to` (libraft's id) at `address` (its address in the
  // group's configuration). False when it cannot go now (no link to that peer); Raft
  // sends again later, so a lost message only costs time.
  virtual bool deliver(raft_id to, const std::string& address, std::string bytes) = 0;
};

class actor_io {
 public:
  actor_io(replica_storage& storage, transport& net, io_loop& loop);
  actor_io(const actor_io&) = delete;
  actor_io& operator=(const actor_io&) = delete;

  raft_io* io() { return &io_; }

  // The owner's handlers for what it posted to itself and for a peer's message.
  void on_tick(std::uint64_t generation);
  void on_flush();
  void on_receive(std::string_view bytes);

  // Runs every queued completion now. Only for an owner that stops without its loop: it
  // calls raft_close, then drain, and the close callback has run when drain returns.
  void drain();

  // Messages that could not be decoded (dropped).
  std::uint64_t malformed() const { return malformed_; }

  // For read leases (replica_group::lease_valid). Every message carries the time it was
  // sent and echoes the newest time this replica accepted from the receiver as its leader
  // (replica/wire.h, lease_stamps).
  // The steady clock, in nanoseconds: what the stamps count in.
  static std::uint64_t now_ns();
  // Drops vote requests for `quiet` after start: a replica that followed a leader promised
  // it, by refusing votes, an election timeout without another leader; a restart must not
  // break that promise.
  void set_vote_quiet(std::chrono::milliseconds quiet) { vote_quiet_ = quiet; }
  // The message on_receive handed libraft last (type 0: none).
  struct received {
    raft_id from = 0;
    unsigned short type = 0;
    raft_term term = 0;
    std::uint64_t sent = 0;
  };
  const received& last_received() const { return last_; }
  // This replica accepted, as its leader's, a message `from` sent at `sent`; what it sends
  // `from` from now on echoes it.
  void accept_from_leader(raft_id from, std::uint64_t sent);
  // The newest stamp of this replica's that `peer` echoed (0: none).
  std::uint64_t echoed_by(raft_id peer) const;
  // The highest term in which this replica sent a TimeoutNow (a leadership transfer: its
  // target then asks for votes that replicas grant despite a leader); 0: none.
  raft_term timeout_now_term() const { return timeout_now_term_; }

 private:
  static actor_io& of(raft_io* io) { return *static_cast<actor_io*>(io->impl); }
  void queue(std::function<void()> completion);
  void fail(const status& st);

  static int m_init(raft_io* io, raft_id id, const char* address);
  static void m_close(raft_io* io, raft_io_close_cb cb);
  static int m_load(raft_io* io, raft_term* term, raft_id* voted_for, raft_snapshot** snapshot, raft_index* start_index,
                    raft_entry** entries, size_t* n_entries);
  static int m_start(raft_io* io, unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv);
  static int m_bootstrap(raft_io* io, const raft_configuration* conf);
  static int m_recover(raft_io* io, const raft_configuration* conf);
  static int m_set_term(raft_io* io, raft_term term);
  static int m_set_vote(raft_io* io, raft_id server_id);
  static int m_send(raft_io* io, raft_io_send* req, const raft_message* message, raft_io_send_cb cb);
  static int m_append(raft_io* io, raft_io_append* req, const raft_entry entries[], unsigned n, raft_io_append_cb cb);
  static int m_truncate(raft_io* io, raft_index index);
  static int m_snapshot_put(raft_io* io, unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* snapshot,
                            raft_io_snapshot_put_cb cb);
  static int m_snapshot_get(raft_io* io, raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb);
  static raft_time m_time(raft_io* io);
  static int m_random(raft_io* io, int min, int max);

  raft_io io_{};
  replica_storage& storage_;
  transport& net_;
  io_loop& loop_;
  raft_id id_ = 0;
  std::string address_;
  unsigned tick_ms_ = 0;
  raft_io_tick_cb tick_cb_ = nullptr;
  raft_io_recv_cb recv_cb_ = nullptr;
  std::uint64_t generation_ = 0;  // ticks of an older generation are ignored
  std::deque<std::function<void()>> pending_;
  bool flush_posted_ = false;
  bool closing_ = false;
  std::uint64_t malformed_ = 0;
  std::mt19937_64 rng_;
  // Per peer (a group has a handful): the newest stamp accepted from it as leader, and the
  // newest stamp of ours it echoed.
  std::vector<std::pair<raft_id, std::uint64_t>> accepted_, echoed_;
  received last_;
  raft_term timeout_now_term_ = 0;
  std::chrono::milliseconds vote_quiet_{0};
  std::uint64_t votes_from_ns_ = 0;  // vote requests before this steady-clock time are dropped
};

}  // namespace cellar::replica
