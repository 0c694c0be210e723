#include "cluster/replica_router.h"

#include <algorithm>
#include <functional>
#include <map>

#include "partition/partition.h"
#include "replica/group.h"

namespace cellar::cluster {

namespace {

using namespace cellar::detail;

using router_retry_atom = caf::atom_constant<caf::atom("rtretry")>;
using router_actor = partition_actor::extend<caf::reacts_to<router_retry_atom, std::uint64_t>>;

struct router_state {
  std::shared_ptr<peer_directory> peers;
  replica_router_config cfg;
  std::size_t target = 0;  // the replica believed to lead, in cfg.replicas
  std::map<std::string, partition_actor> remotes;
  std::uint64_t next_retry = 0;
  std::map<std::uint64_t, std::function<void()>> retries;  // waiting for their pause
  std::size_t in_flight = 0;                               // requests taken and not answered yet
  // Requests sent and not answered, each with its target and what answers it if the target
  // goes down first (see `attempt`).
  struct waiting {
    caf::actor_addr target;
    std::function<void(const status&)> fail;
  };
  std::map<std::uint64_t, waiting> sent;
  std::uint64_t next_sent = 0;
  bool stopping = false;  // a stop came: quit once `in_flight` is zero
};

using router_pointer = router_actor::stateful_pointer<router_state>;
using steady = std::chrono::steady_clock;

partition_actor actor_for(router_pointer self, const std::string& node) {
  auto& st = self->state;
  if (node == st.cfg.self && st.cfg.local) return st.cfg.local;
  auto& r = st.remotes[node];
  if (!r) {
    r = spawn_remote_partition(self->system(), st.peers, node, st.cfg.table, st.cfg.index, st.cfg.forward_timeout,
                               st.cfg.uid);
    self->monitor(r);
  }
  return r;
}

// The target `who` stopped: the requests sent to it and not answered never will be. A
// remote partition that stopped is made again for the next request.
void target_down(router_pointer self, const caf::actor_addr& who) {
  auto& st = self->state;
  std::vector<std::function<void(const status&)>> failed;
  for (auto it = st.sent.begin(); it != st.sent.end();) {
    if (it->second.target == who) {
      failed.push_back(std::move(it->second.fail));
      it = st.sent.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = st.remotes.begin(); it != st.remotes.end();) {
    if (it->second && it->second.address() == who)
      it = st.remotes.erase(it);
    else
      ++it;
  }
  for (auto& fail : failed) fail({code::unavailable, "it stopped before it answered"});
}

void advance(router_pointer self) {
  auto& st = self->state;
  st.target = (st.target + 1) % st.cfg.replicas.size();
}

// Points at `leader`, which a replica named; one not among the replicas joined the group
// since the placement was read, and is added to them.
bool point_at(router_pointer self, const std::string& leader) {
  auto& r = self->state.cfg.replicas;
  auto it = std::find(r.begin(), r.end(), leader);
  if (it == r.end()) it = r.insert(r.end(), leader);
  self->state.target = static_cast<std::size_t>(it - r.begin());
  return true;
}

// Stops the remotes and this node's replica (or lets go of its lease) and quits, once a
// stop came and every request taken has its answer: a router replaced by a new placement
// still holds requests waiting for a leader, and they must not be dropped.
void quit_if_done(router_pointer self) {
  auto& st = self->state;
  if (!st.stopping || st.in_flight > 0) return;
  for (auto& [node, remote] : st.remotes) caf::anon_send(remote, stop_request{});
  if (st.cfg.local_lease)
    st.cfg.local_lease.reset();
  else if (st.cfg.local)
    caf::anon_send(st.cfg.local, stop_request{});
  self->quit();
}

template <class Reply>
void answer(router_pointer self, caf::typed_response_promise<Reply>& rp, Reply r) {
  rp.deliver(std::move(r));
  --self->state.in_flight;
  quit_if_done(self);
}

void after_pause(router_pointer self, std::function<void()> then) {
  auto& st = self->state;
  const auto id = ++st.next_retry;
  st.retries.emplace(id, std::move(then));
  self->delayed_send(self, st.cfg.pause, router_retry_atom::value, id);
}

// Whether `s` sends the request on to another replica: NOT_LEADER, UNAVAILABLE, or
// NOT_OWNER (a node whose replica left the group: the request reached no replica).
bool redirects(const status& s) {
  return s.code() == code::not_leader || s.code() == code::unavailable || s.code() == code::not_owner;
}

// The status of a reply that decides what happens next: the first that redirects, else OK.
status verdict(const batch_reply& r) {
  for (const auto& x : r.results)
    if (redirects(x.st)) return x.st;
  return status::ok();
}
status verdict(const scan_reply& r) { return redirects(r.st) ? r.st : status::ok(); }

batch_reply refusal(const batch_request& req, const status& s) {
  batch_reply out;
  out.results.resize(req.ops.size());
  fail_all(out.results, s);
  return out;
}
scan_reply refusal(const scan_request&, const status& s) {
  scan_reply out;
  out.st = s;
  return out;
}

bool reads_only(const batch_request& r) {
  return std::all_of(r.ops.begin(), r.ops.end(), [](const batch_op& op) { return std::holds_alternative<get>(op); });
}
bool reads_only(const scan_request&) { return true; }

// Sends `req` to the replica believed to lead and follows the answer (see the header).
template <class Req, class Reply>
void attempt(router_pointer self, std::shared_ptr<const Req> req, caf::typed_response_promise<Reply> rp,
             steady::time_point deadline) {
  auto& st = self->state;
  const std::string node = st.cfg.replicas[st.target];
  auto target = actor_for(self, node);
  // No timer per request: the target is an actor of this node that answers within a
  // bounded time (this node's replica, within an election timeout of losing its majority;
  // a remote partition, within its forward timeout), or stops, and the monitor then
  // answers for it. CAF's request timers cost the clock thread two wake-ups per request.
  const auto id = ++st.next_sent;
  st.sent.emplace(id, router_state::waiting{target.address(), [self, req, rp, node](const status& why) mutable {
                                              advance(self);
                                              const auto& cfg = self->state.cfg;
                                              answer(self, rp,
                                                     refusal(*req, {code::unavailable,
                                                                    "partition " + std::to_string(cfg.index) + " of '" +
                                                                        cfg.table + "': its replica on node '" + node +
                                                                        "' did not answer: " + why.message()}));
                                            }});
  self->request(target, caf::infinite, Req(*req))
      .then(
          [self, req, rp, deadline, node, id](Reply& r) mutable {
            if (self->state.sent.erase(id) == 0) return;  // answered when the target went down
            const status v = verdict(r);
            if (v.is_ok() || steady::now() >= deadline) return answer(self, rp, std::move(r));
            if (v.code() == code::not_leader || v.code() == code::not_owner) {
              const std::string leader = replica::leader_address_in(v);
              if (!leader.empty() && leader != node && point_at(self, leader))
                return attempt<Req, Reply>(self, req, rp, deadline);
              advance(self);
              return after_pause(self,
                                 [self, req, rp, deadline]() mutable { attempt<Req, Reply>(self, req, rp, deadline); });
            }
            // UNAVAILABLE: the next request starts at the next replica either way.
            advance(self);
            if (!reads_only(*req) && !never_sent(v)) return answer(self, rp, std::move(r));
            after_pause(self, [self, req, rp, deadline]() mutable { attempt<Req, Reply>(self, req, rp, deadline); });
          },
          [self, id](caf::error& e) mutable {
            auto it = self->state.sent.find(id);
            if (it == self->state.sent.end()) return;
            auto fail = std::move(it->second.fail);
            self->state.sent.erase(it);
            fail({code::unavailable, self->system().render(e)});
          });
}

template <class Reply, class Req>
caf::result<Reply> route(router_pointer self, Req&& r) {
  auto rp = self->template make_response_promise<Reply>();
  ++self->state.in_flight;
  attempt<std::decay_t<Req>, Reply>(self, std::make_shared<const std::decay_t<Req>>(std::move(r)), rp,
                                    steady::now() + self->state.cfg.deadline);
  return rp;
}

router_actor::behavior_type router_fn(router_pointer self, std::shared_ptr<peer_directory> peers,
                                      replica_router_config cfg) {
  auto& st = self->state;
  st.peers = std::move(peers);
  st.cfg = std::move(cfg);
  if (st.cfg.local) self->monitor(st.cfg.local);
  self->set_down_handler([self](caf::down_msg& m) { target_down(self, m.source); });
  return {
      [self](batch_request& r) -> caf::result<batch_reply> { return route<batch_reply>(self, std::move(r)); },
      [self](scan_request& r) -> caf::result<scan_reply> { return route<scan_reply>(self, std::move(r)); },
      [self](adopt_schema_request& r) -> caf::result<admin_reply> {
        if (!self->state.cfg.local) return admin_reply{};
        return self->delegate(self->state.cfg.local, std::move(r));
      },
      [self](drop_families_request& r) -> caf::result<admin_reply> {
        if (!self->state.cfg.local) return admin_reply{};
        return self->delegate(self->state.cfg.local, std::move(r));
      },
      [self](reclaim_request& r) -> caf::result<reclaim_reply> {
        if (!self->state.cfg.local) return reclaim_reply{};
        return self->delegate(self->state.cfg.local, std::move(r));
      },
      [self](stats_request& r) -> caf::result<stats_reply> {
        if (!self->state.cfg.local) return stats_reply{};
        return self->delegate(self->state.cfg.local, std::move(r));
      },
      [](cut_request&) { return cut_reply{}; },
      [](merge_delta_request&) { return admin_reply{}; },
      [](move_request&) {
        return move_reply{{code::unsupported, "a replicated partition moves by Raft membership change, not by copy"},
                          {},
                          {},
                          false};
      },
      [](handoff_request&) { return admin_reply{}; },
      [self](stop_request&) {
        self->state.stopping = true;
        quit_if_done(self);
        return admin_reply{};
      },
      [](tick_atom) {},
      [](log_synced_atom) {},
      [self](router_retry_atom, std::uint64_t id) {
        auto& retries = self->state.retries;
        auto it = retries.find(id);
        if (it == retries.end()) return;
        auto run = std::move(it->second);
        retries.erase(it);
        run();
      },
  };
}

}  // namespace

partition_actor spawn_replica_router(caf::actor_system& sys, std::shared_ptr<peer_directory> peers,
                                     replica_router_config cfg) {
  return caf::actor_cast<partition_actor>(sys.spawn(router_fn, std::move(peers), std::move(cfg)));
}

}  // namespace cellar::cluster
