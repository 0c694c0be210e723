#include "replica/group.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>

namespace cellar::replica {

// libraft's leadership transfer request (the function of the same name hides the struct).
using transfer_request = struct raft_transfer;

// A proposal or barrier libraft holds until it completes.
struct replica_group::pending {
  union {
    struct raft_apply apply;
    struct raft_barrier barrier;
  };
  replica_group* group = nullptr;
  std::uint64_t term = 0;  // the leader's term when it was proposed
  applied_fn on_applied;
  std::function<void(const status&)> on_barrier;
  pending() { std::memset(&apply, 0, std::max(sizeof apply, sizeof barrier)); }
};

replica_group::replica_group(group_options opt, replica_storage& storage, transport& net, io_loop& loop,
                             state_machine& sm)
    : opt_(std::move(opt)), sm_(sm), io_(storage, net, loop) {
  fsm_.version = 1;
  fsm_.data = this;
  fsm_.apply = fsm_apply;
  fsm_.snapshot = fsm_snapshot;
  fsm_.restore = fsm_restore;
}

replica_group::~replica_group() {
  if (!initialized_ || closed_) return;
  dying_ = true;
  if (!closing_) raft_close(&raft_, [](raft* r) { static_cast<replica_group*>(r->data)->closed_ = true; });
  io_.drain();
}

status replica_group::failure(int rv) const {
  std::string what = std::string(raft_strerror(rv)) + ": " + raft_.errmsg;
  if (rv == RAFT_IOERR) return {code::io_error, "replica " + std::to_string(opt_.id) + ": " + what};
  if (rv == RAFT_CORRUPT) return {code::corruption, "replica " + std::to_string(opt_.id) + ": " + what};
  return {code::internal, "replica " + std::to_string(opt_.id) + ": " + what};
}

status replica_group::start(const std::vector<member>& members) {
  if (initialized_) return {code::internal, "replica " + std::to_string(opt_.id) + " started twice"};
  if (int rv = raft_init(&raft_, io_.io(), &fsm_, opt_.id, opt_.address.c_str()); rv != 0) return failure(rv);
  raft_.data = this;
  initialized_ = true;
  raft_set_election_timeout(&raft_, opt_.election_timeout_ms);
  raft_set_heartbeat_timeout(&raft_, opt_.heartbeat_timeout_ms);
  raft_set_snapshot_threshold(&raft_, opt_.snapshot_threshold);
  raft_set_snapshot_trailing(&raft_, opt_.snapshot_trailing);
  // A replica cut off from the others asks first whether it could win before it raises its
  // term, so rejoining does not depose a working leader.
  raft_set_pre_vote(&raft_, true);
  io_.set_vote_quiet(std::chrono::milliseconds(opt_.election_timeout_ms));
  if (!members.empty()) {
    raft_configuration conf;
    raft_configuration_init(&conf);
    int rv = 0;
    for (const auto& m : members) {
      rv = raft_configuration_add(&conf, m.id, m.address.c_str(), RAFT_VOTER);
      if (rv != 0) break;
    }
    if (rv == 0) rv = raft_bootstrap(&raft_, &conf);
    raft_configuration_close(&conf);
    if (rv != 0 && rv != RAFT_CANTBOOTSTRAP) return failure(rv);
  }
  if (int rv = raft_start(&raft_); rv != 0) return failure(rv);
  return status::ok();
}

bool replica_group::is_leader() const {
  return initialized_ && !closing_ && raft_state(const_cast<raft*>(&raft_)) == RAFT_LEADER;
}

member replica_group::leader() const {
  member m;
  if (!initialized_ || closing_) return m;
  raft_id id = 0;
  const char* address = nullptr;
  raft_leader(const_cast<raft*>(&raft_), &id, &address);
  m.id = id;
  if (address != nullptr) m.address = address;
  return m;
}

status replica_group::not_leader() const {
  auto l = leader();
  if (l.id == 0)
    return {code::not_leader, "replica " + std::to_string(opt_.id) + " is not the leader; no leader known"};
  return {code::not_leader, "replica " + std::to_string(opt_.id) + " is not the leader; leader " +
                                std::to_string(l.id) + " at " + l.address};
}

std::string leader_address_in(const status& s) {
  if (s.code() != code::not_leader) return {};
  const std::string& m = s.message();
  const auto lead = m.rfind("; leader ");
  if (lead == std::string::npos) return {};
  const auto at = m.find(" at ", lead);
  if (at == std::string::npos) return {};
  return m.substr(at + 4);
}

std::uint64_t replica_group::last_applied() const {
  return initialized_ ? raft_last_applied(const_cast<raft*>(&raft_)) : 0;
}

void replica_group::note_leadership() {
  if (lease_term_ != raft_.current_term && is_leader()) {
    lease_term_ = raft_.current_term;
    leader_since_ = actor_io::now_ns();
  }
}

bool replica_group::lease_valid() {
  if (!is_leader() || handover_ != handover::none || raft_.transfer != nullptr) return false;
  note_leadership();
  const std::uint64_t term = raft_.current_term;
  if (applied_term_ != term || io_.timeout_now_term() >= term) return false;
  // The newest stamps the other voters echoed; `need` of them make a majority with this one.
  std::uint64_t echoes[8];
  unsigned others = 0, voters = 0;
  bool voter = false;
  for (unsigned i = 0; i < raft_.configuration.n; ++i) {
    const auto& s = raft_.configuration.servers[i];
    if (s.role != RAFT_VOTER) continue;
    ++voters;
    if (s.id == opt_.id)
      voter = true;
    else if (others < std::size(echoes))
      echoes[others++] = io_.echoed_by(s.id);
  }
  if (!voter) return false;
  const unsigned need = voters / 2;
  if (need == 0) return true;
  if (others < need) return false;
  std::nth_element(echoes, echoes + (need - 1), echoes + others, std::greater<>());
  const std::uint64_t since = echoes[need - 1];
  if (since < leader_since_) return false;  // not all of them from this term's leadership
  const std::uint64_t lease = std::uint64_t{opt_.election_timeout_ms} * 800'000;  // 80%, in ns
  return actor_io::now_ns() < since + lease;
}

void replica_group::on_tick(std::uint64_t generation) {
  io_.on_tick(generation);
  note_leadership();
  // Entries that are not applied by the state machine (barriers) count toward the next
  // snapshot too.
  if (initialized_) pace_snapshots(raft_last_applied(&raft_));
  // A membership change holds the preferred leader's handover back until it is done.
  if (change_)
    continue_change();
  else
    hand_over_if_due();
  advance_handover();
}

void replica_group::on_flush() {
  io_.on_flush();
  note_leadership();
  advance_handover();
}

void replica_group::on_receive(std::string_view bytes) {
  io_.on_receive(bytes);
  // A message from the leader of this replica's term that libraft took as such (it restarted
  // the election timer): echoed back to that leader from now on, for its lease.
  const auto& got = io_.last_received();
  if ((got.type == RAFT_IO_APPEND_ENTRIES || got.type == RAFT_IO_INSTALL_SNAPSHOT) && got.sent != 0 && initialized_ &&
      raft_state(&raft_) == RAFT_FOLLOWER && raft_.follower_state.current_leader.id == got.from &&
      raft_.current_term == got.term)
    io_.accept_from_leader(got.from, got.sent);
  note_leadership();
  advance_handover();
}

void replica_group::hand_over_if_due() {
  const auto to = opt_.preferred_leader;
  if (to == 0 || to == opt_.id || !is_leader() || handover_ != handover::none || raft_.transfer != nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - handed_over_at_ < std::chrono::milliseconds(opt_.election_timeout_ms)) return;
  if (raft_.leader_state.progress == nullptr) return;
  const auto last = raft_last_index(&raft_);
  for (unsigned i = 0; i < raft_.configuration.n; ++i) {
    if (raft_.configuration.servers[i].id != to) continue;
    // Only to a replica that has the whole log: it then wins its election at once.
    if (raft_.leader_state.progress[i].match_index != last) return;
    return begin_handover(to);
  }
}

void replica_group::begin_handover(std::uint64_t to) {
  handed_over_at_ = handover_step_at_ = std::chrono::steady_clock::now();
  handover_to_ = to;
  handover_ = handover::draining;
}

void replica_group::advance_handover() {
  if (handover_ == handover::none || closing_ || closed_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool overdue = now - handover_step_at_ > std::chrono::milliseconds(opt_.election_timeout_ms);
  switch (handover_) {
    case handover::none: return;
    case handover::draining: {
      // A leader that steps down with entries in flight fails them with their outcome
      // unknown: they commit first.
      if (!is_leader() || overdue) return finish_handover();
      if (in_flight_ > 0) return;
      auto* req = new transfer_request();
      req->data = this;
      const int rv = raft_transfer(&raft_, req, handover_to_, [](transfer_request* r) {
        auto* g = static_cast<replica_group*>(r->data);
        delete r;
        if (g->dying_) return;
        g->handover_ = handover::handed;
        g->handover_step_at_ = std::chrono::steady_clock::now();
      });
      if (rv != 0) {
        delete req;
        return finish_handover();
      }
      handover_ = handover::transferring;
      handover_step_at_ = now;
      return;
    }
    case handover::transferring: return;  // until libraft completes the transfer, either way
    case handover::handed:
      // The held requests go where they can be served: to the new leader once this replica
      // knows it (their NOT_LEADER names it), or here if the transfer failed.
      if (is_leader() || leader().id != 0 || overdue) finish_handover();
      return;
  }
}

void replica_group::finish_handover() {
  handover_ = handover::none;
  for (auto& h : std::exchange(held_, {})) {
    if (h.applied)
      propose(std::move(h.command), std::move(h.applied));
    else
      barrier(std::move(h.read));
  }
}

group_status replica_group::report() const {
  group_status out;
  if (!initialized_ || closing_) {
    out.role = "stopped";
    return out;
  }
  auto* r = const_cast<raft*>(&raft_);
  switch (raft_state(r)) {
    case RAFT_LEADER: out.role = "leader"; break;
    case RAFT_CANDIDATE: out.role = "candidate"; break;
    case RAFT_FOLLOWER: out.role = "follower"; break;
    default: out.role = "stopped"; break;
  }
  out.term = raft_.current_term;
  out.leader = leader();
  out.last_index = raft_last_index(r);
  out.commit_index = raft_.commit_index;
  out.last_applied = raft_last_applied(r);
  if (raft_state(r) == RAFT_LEADER && raft_.leader_state.progress != nullptr)
    // libraft keeps one progress entry per server of the configuration, in its order.
    for (unsigned i = 0; i < raft_.configuration.n; ++i) {
      const auto& s = raft_.configuration.servers[i];
      if (s.id == opt_.id) continue;
      out.peers.push_back({{s.id, s.address != nullptr ? s.address : ""},
                           raft_.leader_state.progress[i].match_index,
                           s.role == RAFT_VOTER});
    }
  return out;
}

void replica_group::propose(std::string command, applied_fn done) {
  if (!is_leader()) {
    done(not_leader(), {});
    return;
  }
  if (handover_ != handover::none) {
    held_.push_back({std::move(command), std::move(done), {}});
    return;
  }
  raft_buffer buf;
  buf.len = command.size();
  buf.base = raft_malloc(buf.len > 0 ? buf.len : 1);
  if (buf.base == nullptr) {
    done({code::memory_limit, "no memory for a Raft entry"}, {});
    return;
  }
  if (!command.empty()) std::memcpy(buf.base, command.data(), command.size());
  auto* p = new pending;
  p->group = this;
  p->term = raft_.current_term;
  p->on_applied = std::move(done);
  p->apply.data = p;
  int rv = raft_apply(&raft_, &p->apply, &buf, 1, [](struct raft_apply* req, int st, void* result) {
    auto* p = static_cast<pending*>(req->data);
    auto* g = p->group;
    if (!g->dying_) {
      --g->in_flight_;
      if (st == 0) {
        g->applied(p->term);
        p->on_applied(status::ok(), result != nullptr ? std::move(*static_cast<std::string*>(result)) : std::string());
      } else if (st == RAFT_NOTLEADER) {
        p->on_applied(g->not_leader(), {});
      } else {
        p->on_applied({code::unavailable, "replica " + std::to_string(g->opt_.id) + " lost its leadership (" +
                                              raft_strerror(st) + "); the write may or may not be applied"},
                      {});
      }
    }
    delete p;
  });
  if (rv != 0) {
    raft_free(buf.base);
    auto f = std::move(p->on_applied);
    delete p;
    f(rv == RAFT_NOTLEADER ? not_leader() : failure(rv), {});
    return;
  }
  ++in_flight_;
}

void replica_group::barrier(std::function<void(const status&)> done) {
  if (!is_leader()) {
    done(not_leader());
    return;
  }
  if (handover_ != handover::none) {
    held_.push_back({{}, {}, std::move(done)});
    return;
  }
  auto* p = new pending;
  p->group = this;
  p->term = raft_.current_term;
  p->on_barrier = std::move(done);
  p->barrier.data = p;
  int rv = raft_barrier(&raft_, &p->barrier, [](struct raft_barrier* req, int st) {
    auto* p = static_cast<pending*>(req->data);
    auto* g = p->group;
    if (!g->dying_) {
      --g->in_flight_;
      if (st == 0 && g->is_leader()) {
        g->applied(p->term);
        p->on_barrier(status::ok());
      } else if (st == 0 || st == RAFT_NOTLEADER) {
        p->on_barrier(g->not_leader());
      } else {
        p->on_barrier({code::unavailable,
                       "replica " + std::to_string(g->opt_.id) + " lost its leadership (" + raft_strerror(st) + ")"});
      }
    }
    delete p;
  });
  if (rv != 0) {
    auto f = std::move(p->on_barrier);
    delete p;
    f(rv == RAFT_NOTLEADER ? not_leader() : failure(rv));
    return;
  }
  ++in_flight_;
}

void replica_group::close(std::function<void()> done) {
  if (!initialized_ || closing_ || closed_) {
    closed_ = true;
    if (done) done();
    return;
  }
  closing_ = true;
  if (change_ && !change_->in_flight)
    finish_change({code::unavailable, "replica " + std::to_string(opt_.id) + " closed during a membership change"});
  // Held requests were never proposed: whoever leads next can take them.
  for (auto& h : std::exchange(held_, {})) {
    if (h.applied)
      h.applied(not_leader(), {});
    else
      h.read(not_leader());
  }
  on_closed_ = std::move(done);
  raft_close(&raft_, [](raft* r) {
    auto* g = static_cast<replica_group*>(r->data);
    g->closed_ = true;
    if (g->on_closed_ && !g->dying_) g->on_closed_();
  });
}

int replica_group::fsm_apply(raft_fsm* fsm, const raft_buffer* buf, void** result) {
  auto* g = static_cast<replica_group*>(fsm->data);
  // Entries are applied in log order, so the one being applied follows the last applied.
  std::uint64_t index = raft_last_applied(&g->raft_) + 1;
  if (g->restored_) {
    g->snapshot_at_ = index - 1;
    g->restored_ = false;
  }
  g->last_result_ = g->sm_.apply(index, std::string_view(static_cast<const char*>(buf->base), buf->len));
  g->applied_bytes_ += buf->len;
  g->pace_snapshots(index);
  *result = &g->last_result_;
  return 0;
}

namespace {
// An entry's bytes in the log beyond its command; barriers and configuration changes are
// entries with no command.
constexpr std::uint64_t entry_overhead = 64;
// Entries between two snapshots, at most.
constexpr std::uint64_t max_snapshot_interval = 1u << 22;
}  // namespace

void replica_group::pace_snapshots(std::uint64_t applied) {
  // libraft takes a snapshot after an apply once `threshold` entries were applied since the
  // last one: the threshold is the entries so far once the snapshot is due, else the most.
  const std::uint64_t entries = applied > snapshot_at_ ? applied - snapshot_at_ : 0;
  const std::uint64_t bytes = applied_bytes_ + entries * entry_overhead;
  const bool due = (entries >= opt_.snapshot_threshold && bytes >= state_bytes_) || entries >= max_snapshot_interval;
  raft_set_snapshot_threshold(&raft_,
                              static_cast<unsigned>(due ? std::max<std::uint64_t>(entries, 1) : max_snapshot_interval));
}

void replica_group::snapshot_taken(std::size_t state_bytes) {
  applied_bytes_ = 0;
  state_bytes_ = state_bytes;
  snapshot_at_ = raft_last_applied(&raft_);
  pace_snapshots(snapshot_at_);
}

int replica_group::fsm_snapshot(raft_fsm* fsm, raft_buffer* bufs[], unsigned* n_bufs) {
  auto* g = static_cast<replica_group*>(fsm->data);
  std::vector<char> state = g->sm_.snapshot();
  g->snapshot_taken(state.size());
  auto* out = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
  void* data = raft_malloc(state.empty() ? 1 : state.size());
  if (out == nullptr || data == nullptr) {
    raft_free(out);
    raft_free(data);
    return RAFT_NOMEM;
  }
  if (!state.empty()) std::memcpy(data, state.data(), state.size());
  out[0].base = data;
  out[0].len = state.size();
  *bufs = out;
  *n_bufs = 1;
  return 0;
}

int replica_group::fsm_restore(raft_fsm* fsm, raft_buffer* buf) {
  auto* g = static_cast<replica_group*>(fsm->data);
  auto st = g->sm_.restore(std::string_view(static_cast<const char*>(buf->base), buf->len));
  if (!st) return RAFT_MALFORMED;
  // Snapshots are paced from this one on, as from one this replica took.
  g->applied_bytes_ = 0;
  g->state_bytes_ = buf->len;
  g->restored_ = true;
  raft_free(buf->base);  // the state machine owns a restored buffer
  return 0;
}

}  // namespace cellar::replica
