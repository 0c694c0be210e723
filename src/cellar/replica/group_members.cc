// replica_group's membership changes (replica/group.h: add_member, remove_member).
#include "replica/group.h"

namespace cellar::replica {

namespace {

// A libraft configuration change under way, for the group that asked it.
struct change_request {
  struct raft_change req {};
  replica_group* group = nullptr;
};

const raft_server* find_server(const raft_configuration& c, std::uint64_t id) {
  for (unsigned i = 0; i < c.n; ++i)
    if (c.servers[i].id == id) return &c.servers[i];
  return nullptr;
}

}  // namespace

status replica_group::change_failure(int rv) const {
  if (rv == RAFT_NOTLEADER || rv == RAFT_LEADERSHIPLOST) {
    if (!is_leader() && rv == RAFT_NOTLEADER) return not_leader();
    return {code::unavailable, "replica " + std::to_string(opt_.id) +
                                   " lost its leadership during a membership "
                                   "change (" +
                                   raft_strerror(rv) + "); the change may or may not take effect"};
  }
  if (rv == RAFT_CANTCHANGE)
    return {code::conflict, "replica " + std::to_string(opt_.id) + ": another membership change is under way"};
  if (rv == RAFT_DUPLICATEID || rv == RAFT_DUPLICATEADDRESS)
    return {code::already_exists, "replica " + std::to_string(opt_.id) + ": " + raft_strerror(rv)};
  return failure(rv);
}

void replica_group::add_member(member m, std::function<void(const status&)> done) {
  begin_change(true, std::move(m), std::move(done));
}

void replica_group::remove_member(std::uint64_t id, std::function<void(const status&)> done) {
  begin_change(false, {id, {}}, std::move(done));
}

void replica_group::begin_change(bool adding, member who, std::function<void(const status&)> done) {
  if (!is_leader()) return done(not_leader());
  if (who.id == 0) return done({code::invalid_argument, "a replica's id is not 0"});
  if (adding && who.address.empty()) return done({code::invalid_argument, "the new replica has no address"});
  if (change_ || handover_ != handover::none || raft_.transfer != nullptr || raft_.configuration_uncommitted_index != 0)
    return done({code::conflict, "replica " + std::to_string(opt_.id) +
                                     ": another membership change or a leadership transfer is under way"});
  change_.emplace();
  change_->adding = adding;
  change_->who = std::move(who);
  change_->done = std::move(done);
  change_->started = std::chrono::steady_clock::now();
  continue_change();
}

void replica_group::finish_change(const status& st) {
  if (!change_) return;
  auto done = std::move(change_->done);
  change_.reset();
  if (done && !dying_) done(st);
}

void replica_group::continue_change() {
  if (!change_ || change_->in_flight || dying_) return;
  if (!is_leader()) return finish_change(not_leader());
  const auto now = std::chrono::steady_clock::now();
  if (now - change_->started > std::chrono::milliseconds(opt_.change_timeout_ms))
    return finish_change({code::unavailable, "replica " + std::to_string(change_->who.id) + " at " +
                                                 change_->who.address + " did not catch up within " +
                                                 std::to_string(opt_.change_timeout_ms) + " ms; it stays a learner"});
  // A leadership transfer blocks configuration changes: wait for it (a handover, the
  // preferred leader's or this change's, ends with finish_handover).
  if (raft_.transfer != nullptr || handover_ != handover::none) return;
  issue_change_step(find_server(raft_.configuration, change_->who.id));
}

// The next libraft request of the change, given where `s` (the replica concerned, null if
// it is not in the configuration) stands; or the end of the change.
void replica_group::issue_change_step(const raft_server* s) {
  auto& c = *change_;
  auto* req = new change_request();
  req->group = this;
  req->req.data = req;
  const auto on_change = [](struct raft_change* r, int st) {
    auto* req = static_cast<change_request*>(r->data);
    auto* g = req->group;
    delete req;
    g->change_step_done(st);
  };
  int rv = 0;
  if (c.adding) {
    if (s == nullptr) {
      rv = raft_add(&raft_, &req->req, c.who.id, c.who.address.c_str(), on_change);
    } else if (s->role == RAFT_SPARE) {
      rv = raft_assign(&raft_, &req->req, c.who.id, RAFT_STANDBY, on_change);
    } else if (s->role == RAFT_STANDBY) {
      const auto now = std::chrono::steady_clock::now();
      if (c.learning_since == std::chrono::steady_clock::time_point{}) c.learning_since = now;
      const unsigned i = static_cast<unsigned>(s - raft_.configuration.servers);
      const auto match = raft_.leader_state.progress[i].match_index;
      // Promoted once its log matches the leader's. Under a steady stream of writes it may
      // stay a few entries behind: after an election timeout within the committed entries,
      // libraft's own catch-up rounds (raft_assign to a voter) finish the last stretch.
      const bool level = match == raft_last_index(&raft_);
      const bool close =
          match >= raft_.commit_index && now - c.learning_since > std::chrono::milliseconds(opt_.election_timeout_ms);
      if (!level && !close) {
        delete req;
        return;  // the next tick looks again
      }
      rv = raft_assign(&raft_, &req->req, c.who.id, RAFT_VOTER, on_change);
    } else {
      delete req;
      return finish_change(status::ok());
    }
  } else {
    if (s == nullptr) {
      delete req;
      return finish_change(status::ok());
    }
    if (c.who.id == opt_.id) {
      // The leader leaves: another voter leads first, by a handover (a step down with
      // entries in flight would fail them with their outcome unknown), and is asked again;
      // continue_change waits for it.
      delete req;
      bool other_voter = false;
      for (unsigned i = 0; i < raft_.configuration.n; ++i)
        other_voter |=
            raft_.configuration.servers[i].id != opt_.id && raft_.configuration.servers[i].role == RAFT_VOTER;
      if (!other_voter)
        return finish_change({code::invalid_argument,
                              "replica " + std::to_string(opt_.id) + " is the group's only voter: it cannot leave"});
      std::uint64_t to = 0;
      if (const auto* p = find_server(raft_.configuration, opt_.preferred_leader);
          p != nullptr && p->id != opt_.id && p->role == RAFT_VOTER)
        to = p->id;
      return begin_handover(to);
    } else {
      rv = raft_remove(&raft_, &req->req, c.who.id, on_change);
    }
  }
  if (rv != 0) {
    delete req;
    return finish_change(change_failure(rv));
  }
  c.in_flight = true;
}

void replica_group::change_step_done(int rv) {
  if (dying_ || !change_) return;
  change_->in_flight = false;
  if (rv != 0) return finish_change(change_failure(rv));
  continue_change();
}

}  // namespace cellar::replica
