#include "cluster/remote.h"

#include <deque>

#include "replica/caf_loop.h"
#include "rpc/socket_stream.h"

namespace cellar::cluster {

using namespace detail;

void add_cluster_protocol(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman>();
  cfg.add_message_type<node_batch>("cellar.node_batch");
  cfg.add_message_type<node_scan>("cellar.node_scan");
  cfg.add_message_type<node_move>("cellar.node_move");
  cfg.add_message_type<node_replica>("cellar.node_replica");
  cfg.add_message_type<node_member>("cellar.node_member");
  cfg.add_message_type<node_member_reply>("cellar.node_member_reply");
  cfg.add_message_type<node_snapshot>("cellar.node_snapshot");
  cfg.add_message_type<node_snapshot_reply>("cellar.node_snapshot_reply");
}

namespace {

batch_reply failed(std::size_t n, const status& st) {
  batch_reply out;
  out.results.resize(n);
  for (auto& r : out.results) r.st = st;
  return out;
}

status not_owner(const endpoint_context& ctx, const std::string& table, std::uint32_t index) {
  return {code::not_owner, "node '" + ctx.self + "' does not own partition " + std::to_string(index) + " of '" + table +
                               "': " + ctx.describe_owner(table, index)};
}

status not_caught_up(const endpoint_context& ctx, const std::string& table, std::uint64_t version) {
  return {code::unavailable, "node '" + ctx.self + "' has not applied schema version " + std::to_string(version) +
                                 " of '" + table + "' yet"};
}

// --- the endpoint ----------------------------------------------------------------------------

struct endpoint_state {
  endpoint_context ctx;
  // Requests waiting for the catalog to catch up, in arrival order. Each entry tries to
  // serve its request (true: served or refused, it leaves the queue); `expired` makes it
  // refuse instead of waiting.
  struct waiting {
    std::chrono::steady_clock::time_point deadline;
    std::function<bool(bool expired)> serve;
  };
  std::deque<waiting> queue;
  bool ticking = false;
};

using endpoint_pointer = node_endpoint::stateful_pointer<endpoint_state>;

partition_actor moved_to(const endpoint_context& ctx, const std::string& table, std::uint32_t index) {
  return ctx.moved_to ? ctx.moved_to(table, index) : partition_actor{};
}

bool has_writes(const batch_request& r) {
  for (const auto& op : r.ops)
    if (!std::holds_alternative<cellar::get>(op)) return true;
  return false;
}

move_reply move_failed(status st) {
  move_reply r;
  r.st = std::move(st);
  return r;
}

// Runs `work`, a move step on this node's files, on a thread of its own, and answers `rp`
// with its status. Not on a CAF worker: a snapshot holds the snapshot lock while it waits
// for every partition's cut, which needs a worker, so a step that waited for that lock on
// the only worker stopped the node for good; and writing a partition's copy on a worker
// stalls the partitions that share it.
void run_off_worker(endpoint_pointer self, caf::typed_response_promise<move_reply> rp, std::function<status()> work) {
  auto helper = self->system().spawn<caf::detached + caf::hidden>([work](caf::event_based_actor* h) -> caf::behavior {
    return {[h, work](caf::ok_atom) {
      auto out = move_failed(work());
      h->quit();
      return out;
    }};
  });
  self->request(helper, caf::infinite, caf::ok_atom::value)
      .then([rp](move_reply& r) mutable { rp.deliver(std::move(r)); },
            [self, rp](caf::error& e) mutable {
              rp.deliver(move_failed({code::internal, "a move step did not finish: " + self->system().render(e)}));
            });
}

caf::result<move_reply> off_worker(endpoint_pointer self, std::function<status()> work) {
  auto rp = self->make_response_promise<move_reply>();
  run_off_worker(self, rp, std::move(work));
  return rp;
}

caf::result<move_reply> serve_move(endpoint_pointer self, node_move& m) {
  auto& ctx = self->state.ctx;
  const std::string where = "partition " + std::to_string(m.index) + " of '" + m.table + "'";
  switch (m.step) {
    case node_move::on_source: {
      detail::partition_ref ref;
      if (!ctx.find(m.table, m.index, 0, ref) || !ref.local) return move_failed(not_owner(ctx, m.table, m.index));
      if (m.req.what == move_request::track && ctx.guard_move) ctx.guard_move(m.table, m.index, true);
      return self->delegate(ref.actor, std::move(m.req));
    }
    case node_move::prepare:
      if (!ctx.prepare_incoming) return move_failed({code::unsupported, "this node takes no moves"});
      return off_worker(self, [prepare = ctx.prepare_incoming, guard = ctx.guard_move, t = m.table, i = m.index] {
        if (auto st = prepare(t, i); !st) return st;
        if (guard) guard(t, i, false);
        return status::ok();
      });
    case node_move::apply:
    case node_move::finish: {
      auto to = ctx.incoming ? ctx.incoming(m.table, m.index) : partition_actor{};
      if (!to) return move_failed({code::not_found, "node '" + ctx.self + "' has no incoming copy of " + where});
      if (m.step == node_move::apply) {
        m.req.what = move_request::apply;
        return self->delegate(to, std::move(m.req));
      }
      // The copy is complete: write everything it holds to this node's files.
      auto rp = self->make_response_promise<move_reply>();
      self->request(to, std::chrono::seconds(30), cut_request{})
          .then(
              [self, rp, t = m.table, i = m.index](cut_reply& c) mutable {
                run_off_worker(self, rp,
                               [persist = self->state.ctx.persist_incoming, t, i,
                                cut = std::make_shared<delta_handle>(std::move(c.delta))] {
                                 return persist(t, i, *cut);
                               });
              },
              [self, rp, where](caf::error& e) mutable {
                rp.deliver(
                    move_failed({code::unavailable, "writing the copy of " + where + ": " + self->system().render(e)}));
              });
      return rp;
    }
    case node_move::drop:
      if (!ctx.drop_incoming) return move_reply{};
      return off_worker(self, [drop = ctx.drop_incoming, t = m.table, i = m.index] {
        drop(t, i);
        return status::ok();
      });
  }
  return move_failed({code::invalid_argument, "unknown move step " + std::to_string(m.step)});
}

node_member_reply member_failed(status st) {
  node_member_reply r;
  r.st = std::move(st);
  return r;
}

// A step of a membership change (node_member) at this node.
caf::result<node_member_reply> serve_member(endpoint_pointer self, node_member& m) {
  auto& ctx = self->state.ctx;
  const std::string where = "partition " + std::to_string(m.index) + " of '" + m.table + "'";
  switch (m.step) {
    case node_member::join:
      if (!ctx.join_replica) return member_failed({code::unsupported, "this node holds no replicas"});
      return member_failed(ctx.join_replica(m.table, m.uid, m.index, m.id));
    case node_member::leave:
      if (ctx.leave_replica) ctx.leave_replica(m.table, m.uid, m.index);
      return node_member_reply{};
    default: break;
  }
  // The replica's group is named as replica_host::group_name names it.
  auto replica = ctx.replica ? ctx.replica(m.table + "#" + std::to_string(m.uid), m.index) : caf::actor{};
  if (!replica) return member_failed({code::not_found, "node '" + ctx.self + "' holds no replica of " + where});
  auto r = caf::actor_cast<replica::replicated_partition_actor>(replica);
  if (m.step == node_member::prefer) {
    caf::anon_send(r, replica::replica_prefer_atom::value, m.id);
    return node_member_reply{};
  }
  auto rp = self->make_response_promise<node_member_reply>();
  const auto failed = [self, rp, where](caf::error& e) mutable {
    rp.deliver(
        member_failed({code::unavailable, "the replica of " + where + " did not answer: " + self->system().render(e)}));
  };
  // A change waits for the new replica's catch-up (replica_group: change_timeout_ms).
  const auto timeout = std::chrono::minutes(3);
  if (m.step == node_member::report) {
    self->request(r, std::chrono::seconds(10), replica::replica_status_atom::value)
        .then(
            [rp](replica::group_status& s) mutable {
              rp.deliver(node_member_reply{status::ok(), std::move(s)});
            },
            failed);
  } else if (m.step == node_member::add) {
    self->request(r, timeout, replica::replica_add_atom::value, m.id, m.address)
        .then([rp](admin_reply& a) mutable { rp.deliver(member_failed(std::move(a.st))); }, failed);
  } else if (m.step == node_member::remove) {
    self->request(r, timeout, replica::replica_remove_atom::value, m.id)
        .then([rp](admin_reply& a) mutable { rp.deliver(member_failed(std::move(a.st))); }, failed);
  } else {
    rp.deliver(member_failed({code::invalid_argument, "unknown membership step " + std::to_string(m.step)}));
  }
  return rp;
}

// A snapshot step (node_snapshot) at this node, on a thread of its own: it blocks (a copy
// waits for the partition's chunks, a persist for every partition's cut, which need the
// CAF workers).
caf::result<node_snapshot_reply> serve_snapshot(endpoint_pointer self, node_snapshot& m) {
  auto step = self->state.ctx.snapshot_step;
  if (!step) return node_snapshot_reply{{code::unsupported, "this node takes no snapshot steps"}, {}, {}};
  auto rp = self->make_response_promise<node_snapshot_reply>();
  auto req = std::make_shared<node_snapshot>(std::move(m));
  auto helper =
      self->system().spawn<caf::detached + caf::hidden>([step, req](caf::event_based_actor* h) -> caf::behavior {
        return {[h, step, req](caf::ok_atom) {
          auto out = step(*req);
          h->quit();
          return out;
        }};
      });
  self->request(helper, caf::infinite, caf::ok_atom::value)
      .then([rp](node_snapshot_reply& r) mutable { rp.deliver(std::move(r)); },
            [self, rp](caf::error& e) mutable {
              rp.deliver(node_snapshot_reply{
                  {code::internal, "a snapshot step did not finish: " + self->system().render(e)}, {}, {}});
            });
  return rp;
}

void drain(endpoint_pointer self) {
  auto& q = self->state.queue;
  while (!q.empty() && q.front().serve(std::chrono::steady_clock::now() >= q.front().deadline)) q.pop_front();
  if (!q.empty() && !self->state.ticking) {
    self->state.ticking = true;
    self->delayed_send(self, std::chrono::milliseconds(5), catch_up_atom::value);
  }
}

status reshaped(const endpoint_context& ctx, const std::string& table) {
  return {code::reshaping, "the partitions of '" + table +
                               "' were split or merged since the request was routed (node '" + ctx.self +
                               "' has the new ones): send it again"};
}

template <class Reply, class Request, class Refuse>
caf::result<Reply> serve(endpoint_pointer self, const std::string& table, std::uint32_t index, std::uint64_t uid,
                         Request& req, Refuse refuse) {
  auto& ctx = self->state.ctx;
  ctx.served->fetch_add(1, std::memory_order_relaxed);
  if (self->state.queue.empty()) {
    detail::partition_ref ref;
    if (ctx.find(table, index, req.schema_version, ref)) {
      if (uid != 0 && ref.id.table_uid != uid) return refuse(reshaped(ctx, table));
      if (ref.local || ref.replica_here) return self->delegate(ref.actor, std::move(req));
      if (auto to = moved_to(ctx, table, index)) return self->delegate(to, std::move(req));
      return refuse(not_owner(ctx, table, index));
    }
  }
  auto rp = self->template make_response_promise<Reply>();
  self->state.queue.push_back({std::chrono::steady_clock::now() + ctx.catch_up_wait,
                               [self, table, index, uid, req = std::move(req), rp, refuse](bool expired) mutable {
                                 auto& c = self->state.ctx;
                                 detail::partition_ref ref;
                                 if (c.find(table, index, req.schema_version, ref)) {
                                   if (uid != 0 && ref.id.table_uid != uid)
                                     rp.deliver(refuse(reshaped(c, table)));
                                   else if (ref.local || ref.replica_here)
                                     rp.delegate(ref.actor, std::move(req));
                                   else if (auto to = moved_to(c, table, index))
                                     rp.delegate(to, std::move(req));
                                   else
                                     rp.deliver(refuse(not_owner(c, table, index)));
                                   return true;
                                 }
                                 if (!expired) return false;
                                 rp.deliver(refuse(not_caught_up(c, table, req.schema_version)));
                                 return true;
                               }});
  drain(self);
  return rp;
}

node_endpoint::behavior_type endpoint_fn(endpoint_pointer self, endpoint_context ctx) {
  self->state.ctx = std::move(ctx);
  return {
      [self](node_batch& b) -> caf::result<batch_reply> {
        const auto n = b.req.ops.size();
        if (self->state.ctx.writable && !self->state.ctx.writable() && has_writes(b.req))
          return failed(n, {code::unavailable, "node '" + self->state.ctx.self +
                                                   "' lost its ZooKeeper session: it takes no writes until it has "
                                                   "rejoined and re-read the placement map"});
        return serve<batch_reply>(self, b.table, b.index, b.uid, b.req,
                                  [n](const status& st) { return failed(n, st); });
      },
      [self](node_scan& s) -> caf::result<scan_reply> {
        return serve<scan_reply>(self, s.table, s.index, s.uid, s.req, [](const status& st) {
          scan_reply r;
          r.st = st;
          return r;
        });
      },
      [self](node_move& m) { return serve_move(self, m); },
      [self](node_member& m) { return serve_member(self, m); },
      [self](node_snapshot& m) { return serve_snapshot(self, m); },
      [self](node_replica& m) {
        const auto& find = self->state.ctx.replica;
        if (auto a = find ? find(m.table, m.index) : caf::actor{})
          caf::anon_send(a, replica::replica_msg_atom::value, std::move(m.bytes));
      },
      [self](catch_up_atom) {
        self->state.ticking = false;
        drain(self);
      },
  };
}

// --- a remote partition ----------------------------------------------------------------------

// Ends the message of a failure that happened before the request left this node.
constexpr std::string_view not_sent = " (the request was not sent)";

struct remote_state {
  std::shared_ptr<peer_directory> peers;
  std::string node;
  std::string table;
  std::uint32_t index = 0;
  std::uint64_t uid = 0;  // the table's incarnation (node_batch)
  std::chrono::milliseconds timeout{10000};
  node_endpoint ep;
  std::uint64_t next = 0;
  std::map<std::uint64_t, std::function<void(const status&)>> pending;
  // While the middleman connects to the owner: the requests waiting for the endpoint.
  bool connecting = false;
  std::vector<std::function<void(const result<node_endpoint>&)>> waiting;
  // Told to stop with requests in flight: it quits once they are answered (a partition
  // that changed owner; the old owner answers them, or sends them on after a move).
  bool stopping = false;

  std::string where() const {
    return "partition " + std::to_string(index) + " of '" + table + "' is on node '" + node + "'";
  }
};

using remote_pointer = partition_actor::stateful_pointer<remote_state>;

void quit_if_done(remote_pointer self) {
  auto& st = self->state;
  if (st.stopping && st.pending.empty() && st.waiting.empty()) self->quit();
}

// The connect started by with_endpoint ended: the requests that waited for it go on.
void connected(remote_pointer self, result<node_endpoint> ep) {
  auto& st = self->state;
  st.connecting = false;
  if (ep) {
    st.ep = *ep;
    self->monitor(st.ep);
  } else {
    ep = status{code::unavailable,
                st.where() + ", which is unavailable: " + ep.error().message() + std::string(not_sent)};
  }
  auto waiting = std::move(st.waiting);
  st.waiting.clear();
  for (auto& w : waiting) w(ep);
  quit_if_done(self);
}

// Runs `then` with the owner's endpoint: at once when connected; else when the middleman
// has connected (requests that come meanwhile wait in line), or with UNAVAILABLE naming the
// node when it is not a member or cannot be reached within the forward timeout. The actor
// never blocks for a connect. CAF's middleman decodes incoming messages on the scheduler's
// workers and handles a connection's close only after them, so a connect that waited on a
// worker for a peer that died during the handshake would wait for ever when it held the
// only worker, and every actor of the node would stop with it.
void with_endpoint(remote_pointer self, std::function<void(const result<node_endpoint>&)> then) {
  auto& st = self->state;
  if (st.ep) return then(st.ep);
  st.waiting.push_back(std::move(then));
  if (st.connecting) return;
  auto where = st.peers->find(st.node);
  if (!where) return connected(self, where.error());
  if (where->ep) return connected(self, where->ep);
  st.connecting = true;
  self->request(self->system().middleman().actor_handle(), st.timeout, caf::connect_atom::value, where->host,
                where->port)
      .then(
          [self, w = *where](caf::node_id&, caf::strong_actor_ptr& found, std::set<std::string>& interface) {
            connected(self, self->state.peers->accept(self->state.node, w, std::move(found), interface));
          },
          [self, w = *where](caf::error& e) {
            connected(self, self->state.peers->unreachable(self->state.node, w, e));
          });
}

void fail_pending(remote_pointer self, const status& s) {
  auto pending = std::move(self->state.pending);
  self->state.pending.clear();
  for (auto& [id, fail] : pending) fail(s);
}

// Forwards `msg` to the owner's endpoint; `refuse` turns a status into the reply.
template <class Reply, class Msg, class Refuse>
caf::result<Reply> forward(remote_pointer self, Msg msg, Refuse refuse) {
  auto rp = self->template make_response_promise<Reply>();
  auto held = std::make_shared<Msg>(std::move(msg));
  with_endpoint(self, [self, held, rp, refuse](const result<node_endpoint>& ep) mutable {
    if (!ep) {
      rp.deliver(refuse(ep.error()));
      return;
    }
    auto& st = self->state;
    const auto id = ++st.next;
    st.pending.emplace(id, [rp, refuse](const status& s) mutable { rp.deliver(refuse(s)); });
    self->request(ep.value(), st.timeout, std::move(*held))
        .then(
            [self, id, rp](Reply& r) mutable {
              if (self->state.pending.erase(id) > 0) rp.deliver(std::move(r));
              quit_if_done(self);
            },
            [self, id, rp, refuse](caf::error& e) mutable {
              if (self->state.pending.erase(id) == 0) return;
              rp.deliver(refuse(status{code::unavailable,
                                       self->state.where() + ", which did not answer: " + self->system().render(e)}));
              quit_if_done(self);
            });
  });
  return rp;
}

partition_actor::behavior_type remote_fn(remote_pointer self, std::shared_ptr<peer_directory> peers, std::string node,
                                         std::string table, std::uint32_t index, std::chrono::milliseconds timeout,
                                         std::uint64_t uid) {
  auto& st = self->state;
  st.uid = uid;
  st.peers = std::move(peers);
  st.node = std::move(node);
  st.table = std::move(table);
  st.index = index;
  st.timeout = timeout;
  self->set_down_handler([self](caf::down_msg& m) {
    auto& s = self->state;
    if (!s.ep || m.source != s.ep.address()) return;
    s.peers->forget(s.node, m.source);
    s.ep = nullptr;
    fail_pending(self, {code::unavailable, s.where() + ", which is unavailable: the connection to it was lost"});
    quit_if_done(self);
  });
  return {
      [self](batch_request& r) -> caf::result<batch_reply> {
        const auto n = r.ops.size();
        auto& s = self->state;
        return forward<batch_reply>(self, node_batch{s.table, s.index, std::move(r), s.uid},
                                    [n](const status& e) { return failed(n, e); });
      },
      [self](scan_request& r) -> caf::result<scan_reply> {
        auto& s = self->state;
        return forward<scan_reply>(self, node_scan{s.table, s.index, std::move(r), s.uid}, [](const status& e) {
          scan_reply out;
          out.st = e;
          return out;
        });
      },
      // A remote partition holds nothing on this node: admin requests are answered here.
      [](adopt_schema_request&) { return admin_reply{}; },
      [](drop_families_request&) { return admin_reply{}; },
      [](reclaim_request&) { return reclaim_reply{}; },
      [](stats_request&) { return stats_reply{}; },
      [](cut_request&) { return cut_reply{}; },
      [](merge_delta_request&) { return admin_reply{}; },
      [self](move_request&) {
        return move_failed({code::unavailable, self->state.where() + ", not here: a move runs on the owner"});
      },
      [](handoff_request&) { return admin_reply{}; },
      [self](stop_request&) {
        self->state.stopping = true;
        quit_if_done(self);
        return admin_reply{};
      },
      [](tick_atom) {},
      [](log_synced_atom) {},
  };
}

}  // namespace

bool never_sent(const status& s) { return s.code() == code::unavailable && s.message().ends_with(not_sent); }

node_endpoint spawn_node_endpoint(caf::actor_system& sys, endpoint_context ctx) {
  return sys.spawn(endpoint_fn, std::move(ctx));
}

partition_actor spawn_remote_partition(caf::actor_system& sys, std::shared_ptr<peer_directory> peers, std::string node,
                                       std::string table, std::uint32_t index,
                                       std::chrono::milliseconds forward_timeout, std::uint64_t uid) {
  return sys.spawn(remote_fn, std::move(peers), std::move(node), std::move(table), index, forward_timeout, uid);
}

// --- peers -----------------------------------------------------------------------------------

void peer_directory::set_members(const std::vector<node_info>& members) {
  std::lock_guard lock(mu_);
  std::map<std::string, node_info> next;
  for (const auto& m : members) next[m.id] = m;
  for (auto it = connected_.begin(); it != connected_.end();) {
    auto m = next.find(it->first);
    auto old = members_.find(it->first);
    if (m == next.end() || old == members_.end() || old->second.peer_address != m->second.peer_address)
      it = connected_.erase(it);
    else
      ++it;
  }
  members_ = std::move(next);
}

result<peer_directory::location> peer_directory::find(const std::string& node) {
  location where;
  {
    std::lock_guard lock(mu_);
    if (auto c = connected_.find(node); c != connected_.end()) {
      where.ep = c->second;
      return where;
    }
    auto m = members_.find(node);
    if (m == members_.end())
      return status{code::unavailable, "node '" + node + "' is not a live member of the cluster"};
    where.address = m->second.peer_address;
  }
  auto at = rpc::split_host_port(where.address);
  if (!at || at->second == 0)
    return status{code::unavailable, "node '" + node + "' has no usable peer address ('" + where.address + "')"};
  where.host = std::move(at->first);
  where.port = at->second;
  return where;
}

result<node_endpoint> peer_directory::accept(const std::string& node, const location& where,
                                             caf::strong_actor_ptr found, const std::set<std::string>& interface) {
  const std::string at = "node '" + node + "' at " + where.address + " cannot be reached: ";
  if (!found) return status{code::unavailable, at + "nothing is published there"};
  if (!sys_.assignable<node_endpoint>(interface))
    return status{code::unavailable, at + "what is published there is not a node endpoint"};
  auto ep = caf::actor_cast<node_endpoint>(std::move(found));
  std::lock_guard lock(mu_);
  connected_[node] = ep;
  return ep;
}

status peer_directory::unreachable(const std::string& node, const location& where, const caf::error& e) {
  return {code::unavailable, "node '" + node + "' at " + where.address + " cannot be reached: " + sys_.render(e)};
}

result<node_endpoint> peer_directory::endpoint(const std::string& node, std::chrono::milliseconds timeout) {
  auto where = find(node);
  if (!where) return where.error();
  if (where->ep) return where->ep;
  // The middleman's own connect (middleman::remote_actor) waits for its answer without a
  // bound; this one gives up after `timeout`.
  result<node_endpoint> out = status{code::unavailable, "node '" + node + "' cannot be reached"};
  caf::scoped_actor self{sys_};
  self->request(sys_.middleman().actor_handle(), timeout, caf::connect_atom::value, where->host, where->port)
      .receive([&](caf::node_id&, caf::strong_actor_ptr& found,
                   std::set<std::string>& interface) { out = accept(node, *where, std::move(found), interface); },
               [&](caf::error& e) { out = unreachable(node, *where, e); });
  return out;
}

void peer_directory::forget(const std::string& node, const caf::actor_addr& ep) {
  std::lock_guard lock(mu_);
  auto c = connected_.find(node);
  if (c != connected_.end() && c->second.address() == ep) connected_.erase(c);
}

}  // namespace cellar::cluster
