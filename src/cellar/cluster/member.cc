#include "cluster/member.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>

#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>

#include "catalog/hbase_options.h"
#include "cluster/layout.h"
#include "cluster/member_state.h"
#include "cluster/mover.h"
#include "cluster/remote.h"
#include "cluster/replica_host.h"
#include "cluster/replica_mover.h"
#include "cluster/replica_sweep.h"
#include "cluster/replica_warden.h"
#include "cluster/zk_state.h"
#include "store/access.h"
#include "store/catalog_service.h"
#include "store/cluster_state.h"
#include "store/partition_factory.h"
#include "store/persistence.h"

namespace cellar::cluster {

namespace {

// A local partition that moved to another node: requests it holds or still gets go on to
// `to` (waits for its answer, so that they are in `to`'s mailbox before anything sent to
// `to` afterwards). It is stopped by let_go().
void hand_off(const detail::partition_ref& p, const detail::partition_actor& to) {
  caf::scoped_actor self{p.actor->home_system()};
  self->request(p.actor, std::chrono::seconds(10), detail::handoff_request{caf::actor_cast<caf::actor>(to)})
      .receive([](detail::admin_reply&) {},
               [](caf::error& e) { spdlog::warn("cellar: handing a moved partition over: {}", to_string(e)); });
}

}  // namespace

detail::partition_ref stops_when_released(detail::partition_ref r) {
  struct stopper {
    explicit stopper(detail::partition_actor a) : actor(std::move(a)) {}
    stopper(const stopper&) = delete;
    stopper& operator=(const stopper&) = delete;
    ~stopper() { caf::anon_send(actor, detail::stop_request{}); }
    detail::partition_actor actor;
  };
  if (r.actor && !r.stop_when_released) r.stop_when_released = std::make_shared<const stopper>(r.actor);
  return r;
}

namespace {

// A partition of the runtime being replaced that the new one does not name: stopped when
// the last copy of its ref goes (or by the store's close, should a client still hold one
// then), else (a ref made without that) now.
void let_go(detail::catalog_service& c, const detail::partition_ref& r, std::vector<detail::partition_actor>& stop_now)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(c.mutex()) {
  if (!r.stop_when_released) {
    stop_now.push_back(r.actor);
    return;
  }
  c.linger(r);
}

// Whether two placements of a partition put it on the same node(s).
bool same_place(const partition_owner& a, const partition_owner& b) {
  return a.node == b.node && a.replicas == b.replicas;
}

bool same_places(const std::vector<partition_owner>& a, const std::vector<partition_owner>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_place);
}

// Stops the partitions of `rt` (local ones and forwarders) without waiting.
void stop_all(const table_runtime& rt) {
  for (const auto& p : rt.partitions) caf::anon_send(p.actor, detail::stop_request{});
}

}  // namespace

void member::state::reconcile() {
  std::shared_ptr<const cluster_catalog> cat;
  std::shared_ptr<const placement_map> pm;
  {
    absl::MutexLock lock(&mu);
    cat = catalog;
    pm = map;
  }
  if (!cat) return;
  static const placement_map no_map;
  const placement_map& m = pm ? *pm : no_map;
  bool complete = true;

  absl::MutexLock ddl(&local.mutex());
  local.set_namespaces(cat->namespaces);
  auto current = local.current();
  auto next = std::make_shared<detail::catalog_map>(*current);
  reconcile_effects fx;
  for (const auto& [name, cs] : cat->tables) {
    std::vector<partition_owner> want;
    if (cs.partitioned) {
      auto it = m.tables.find(name);
      if (it == m.tables.end() || it->second.size() != cs.partitioning.count()) {
        complete = false;  // the map comes separately: wait for it
        continue;
      }
      want = it->second;
    }
    runtime_ptr old;
    if (auto it = current->find(name); it != current->end()) old = it->second;
    auto applied_it = applied_owners.find(name);
    const std::vector<partition_owner>* was = applied_it == applied_owners.end() ? nullptr : &applied_it->second;
    if (old && was && old->schema->uid == cs.uid && old->schema->version == cs.version && same_places(*was, want))
      continue;  // nothing new
    (*next)[name] = apply_table(name, cs, want, old, was, fx);
    applied_owners[name] = std::move(want);
  }
  for (const auto& [name, rt] : *current) {
    if (cat->find(name)) continue;
    fx.retired.push_back(rt);
    next->erase(name);
    applied_owners.erase(name);
    local.forget(name);
  }
  local.publish(std::move(next));
  finish_reconcile(*cat, fx);

  if (complete) {
    absl::MutexLock lock(&mu);
    applied = std::max(applied, cat->version);
  }
}

runtime_ptr member::state::apply_table(const std::string& name, const detail::table_schema& cs,
                                       const std::vector<partition_owner>& want, const runtime_ptr& old,
                                       const std::vector<partition_owner>* was, reconcile_effects& fx) {
  const bool same = old && was && old->schema->uid == cs.uid;
  auto schema = std::make_shared<detail::table_schema>(cs);
  auto rt = std::make_shared<table_runtime>();
  rt->schema = schema;
  if (old && !same) {
    // First sight since start (the recovered table: its cells are in recovered_mem if
    // the uid matches), or a new incarnation of the table.
    if (was || old->schema->uid != cs.uid) {
      fx.retired.push_back(old);
      if (old->schema->uid != cs.uid) local.drop_recovered(name);
    }
  }
  local.persist_cluster_schema(*schema);
  if (cs.partitioned) {
    auto recovered = local.take_recovered(name);
    for (std::uint32_t i = 0; i < want.size(); ++i) {
      const detail::partition_ref* prev = same && i < old->partitions.size() ? &old->partitions[i] : nullptr;
      const bool keep = prev && i < was->size() && same_place((*was)[i], want[i]);
      auto mem = i < recovered.size() ? recovered[i] : nullptr;
      rt->partitions.push_back(place_partition(name, schema, i, want[i], prev, keep, std::move(mem), fx));
    }
  }
  if (same) {
    std::set<std::uint32_t> now;
    for (const auto& f : schema->families) now.insert(f.id);
    std::vector<std::uint32_t> gone;
    for (const auto& f : old->schema->families)
      if (!now.count(f.id)) gone.push_back(f.id);
    if (!gone.empty()) fx.dropped_families.emplace_back(rt, std::move(gone));
  }
  return rt;
}

detail::partition_ref member::state::place_partition(const std::string& name, const detail::schema_ptr& schema,
                                                     std::uint32_t i, const partition_owner& placed,
                                                     const detail::partition_ref* prev, bool keep,
                                                     std::shared_ptr<std::unique_ptr<detail::memtable>> recovered,
                                                     reconcile_effects& fx) {
  if (keep) {
    if (prev->local || prev->replica_here) caf::anon_send(prev->actor, detail::adopt_schema_request{*schema});
    return *prev;
  }
  if (placed.replicated()) {
    // A Raft group: its replicas hold its cells, not the store's files. A replica that stays
    // in a changed set keeps running: the new router shares it with the old one.
    if (prev) let_go(local, *prev, fx.stopped);
    return stops_when_released(replicas->place(schema, i, placed));
  }
  const std::string& owner = placed.node;
  const part_key key{name, i};
  if (owner == opts.node_id) {
    if (prev) let_go(local, *prev, fx.stopped);  // the partition changed owner
    absl::MutexLock mlock(&move_mu);
    moved_out.erase(key);
    if (auto st = staged.find(key); st != staged.end() && st->second.uid == schema->uid) {
      auto ref = std::move(st->second.ref);  // a split or merge built it here (reshaper.h)
      staged.erase(st);
      caf::anon_send(ref.actor, detail::adopt_schema_request{*schema});
      return ref;
    }
    if (auto in = incoming.find(key); in != incoming.end() && in->second.uid == schema->uid) {
      // A move brought it here: its copy serves from now on. It stays in `incoming` until
      // the catalog naming it is published (reconcile), so that find() keeps holding
      // requests for it meanwhile instead of finding the old runtime, where the partition
      // is still another node's (that answered NOT_OWNER).
      caf::anon_send(in->second.ref.actor, detail::adopt_schema_request{*schema});
      fx.adopted.push_back(key);
      return in->second.ref;
    }
    return stops_when_released(seat.partitions().start(schema, i, std::move(recovered)));
  }
  detail::partition_ref r;
  r.id = {schema->uid, i};
  r.actor = spawn_remote_partition(seat.system(), peers, owner, name, i, opts.forward_timeout, schema->uid);
  r = stops_when_released(std::move(r));
  if (prev && prev->local) {
    // It moved away: what it held during the move's freeze, and whatever still reaches
    // it, goes on to the new owner, in order; then its copy here goes.
    hand_off(*prev, r.actor);
    let_go(local, *prev, fx.stopped);
    fx.moved_out_here.push_back(prev->id);  // its files go in finish_reconcile
  } else if (prev) {
    let_go(local, *prev, fx.stopped);
  }
  absl::MutexLock mlock(&move_mu);
  if (prev && prev->local)
    moved_out[key] = r.actor;
  else if (auto mo = moved_out.find(key); mo != moved_out.end())
    mo->second = r.actor;
  return r;
}

void member::state::finish_reconcile(const cluster_catalog& cat, reconcile_effects& fx) {
  if (!fx.adopted.empty()) {
    absl::MutexLock mlock(&move_mu);
    for (const auto& k : fx.adopted) incoming.erase(k);
  }
  drop_stale_staged(cat);
  for (auto& a : fx.stopped) caf::anon_send(a, detail::stop_request{});
  for (auto& rt : fx.retired) {
    // A recovered table the cluster still has (same uid) keeps its WiredTiger tables.
    auto still = cat.find(rt->schema->name);
    if (still && still->uid == rt->schema->uid) {
      stop_all(*rt);
    } else {
      local.retire(*rt);
      if (rt->schema->partitioned) replicas->drop_table(rt->schema->uid);  // its Raft groups went with it
    }
  }
  for (auto& [rt, ids] : fx.dropped_families) local.purge_families(*rt, ids);
  auto* persistence = seat.persistence();
  if (persistence != nullptr)
    for (const auto& id : fx.moved_out_here) persistence->drop_partitions(id.table_uid, {id.index}, "(moved away)");
  // The redo log still holds the old records of what moved away. Should a partition come
  // back here later, a restart would replay them over the copy it came back with (a deleted
  // cell would return), so a snapshot now retires the log generations that hold them.
  // Here, on the ZooKeeper event thread, not a CAF worker: the snapshot's cuts need one.
  if (persistence != nullptr && persistence->log() != nullptr && !fx.moved_out_here.empty())
    if (auto r = seat.snapshot(); !r)
      spdlog::warn(
          "cellar: the snapshot after a move away failed ({}): the moved partitions' old log records "
          "stay until the next snapshot",
          r.error().to_string());
}

void member::state::sweep_replicas() {
  zk_client* zk = nullptr;
  {
    absl::MutexLock lock(&move_mu);  // ~member closes the guards before `node` goes
    if (!guards_open || node == nullptr) return;
    zk = &node->zookeeper();
  }
  std::shared_ptr<const cluster_catalog> cat;
  std::uint64_t epoch = 0;
  {
    absl::MutexLock lock(&mu);
    cat = catalog;
    epoch = map ? map->epoch : 0;
  }
  if (!cat) return;
  if (const auto session = zk->session_id(); session != swept_session) {
    // The first sweep of a session (the one at start included) syncs first: the server this
    // session reads may lag, and later reads of the session are never older (replica_sweep.h).
    if (auto st = sweep_view_current(*zk, *cat, epoch); !st) {
      spdlog::info("cellar: node '{}' keeps its Raft files for now: {}", opts.node_id, st.to_string());
      return;
    }
    swept_session = session;
  }
  replica_view v;
  v.self = opts.node_id;
  v.catalog = cat.get();
  v.applied = [this](const std::string& table, std::uint64_t uid) -> const std::vector<partition_owner>* {
    auto rt = local.lookup(table);
    auto it = applied_owners.find(table);
    return rt && rt->schema->uid == uid && it != applied_owners.end() ? &it->second : nullptr;
  };
  v.intent = [zk](const std::string& table, std::uint32_t index) -> result<std::string> {
    auto z = zk->get(layout::move_intent(table, index));
    if (!z) return z.error();
    return z->data;
  };
  replicas->sweep([&](std::uint64_t uid, std::uint32_t index) { return stale_replica(v, uid, index); });
}

bool member::state::find(const std::string& table, std::uint32_t index, std::uint64_t version,
                         detail::partition_ref& out) const {
  {
    // A copy being moved here: requests wait until the map gives it to this node (the
    // old owner sends what it held during the freeze as soon as it sees the flip).
    absl::MutexLock lock(&move_mu);
    if (incoming.count({table, index})) return false;
  }
  auto rt = local.lookup(table);
  if (!rt || rt->schema->version < version || index >= rt->partitions.size()) return false;
  out = rt->partitions[index];
  // Another node's router sent it to this replica: the replica answers (NOT_LEADER names
  // the leader to that router), so that a request crosses the network at most once more.
  // So does a replica that joined the group before the placement names this node: it may
  // lead already.
  if (auto r = replicas->replica(replica_host::group_name(*rt->schema), index)) {
    out.actor = caf::actor_cast<detail::partition_actor>(r);
    out.replica_here = true;
  }
  return true;
}

std::string member::state::describe_owner(const std::string& table, std::uint32_t index) const {
  absl::MutexLock lock(&mu);
  const std::uint64_t epoch = map ? map->epoch : 0;
  const partition_owner* o = map ? map->owner({table, index}) : nullptr;
  if (!o) return "the placement map at epoch " + std::to_string(epoch) + " has no such partition";
  return "the placement map at epoch " + std::to_string(epoch) + " gives it to node '" + o->node + "'";
}

status member::state::not_owner(const std::string& table, std::uint32_t index) {
  refused.fetch_add(1, std::memory_order_relaxed);
  return {code::not_owner, "node '" + opts.node_id + "' does not own partition " + std::to_string(index) + " of '" +
                               table + "': " + describe_owner(table, index)};
}

status member::state::prepare_incoming(const std::string& table, std::uint32_t index) {
  auto rt = local.lookup(table);
  if (!rt || !rt->schema->partitioned)
    return {code::table_not_found, "node '" + opts.node_id + "' has no table '" + table + "'"};
  if (index >= rt->partitions.size())
    return {code::not_found, "table '" + table + "' has no partition " + std::to_string(index)};
  if (rt->partitions[index].local)
    return {code::already_exists,
            "node '" + opts.node_id + "' owns partition " + std::to_string(index) + " of '" + table + "' already"};
  drop_incoming(table, index);  // a copy left by an earlier attempt
  // Files left by an earlier owner spell here are stale: start empty.
  if (auto* persistence = seat.persistence())
    if (auto st = persistence->reset_partition(rt->schema->uid, index); !st) return st;
  incoming_copy c;
  c.uid = rt->schema->uid;
  c.ref = stops_when_released(seat.partitions().start(rt->schema, index, nullptr));
  absl::MutexLock lock(&move_mu);
  incoming[{table, index}] = std::move(c);
  return status::ok();
}

status member::state::persist_incoming(const std::string& table, std::uint32_t index, const detail::delta_handle& cut) {
  std::uint64_t uid = 0;
  {
    absl::MutexLock lock(&move_mu);
    auto it = incoming.find({table, index});
    if (it == incoming.end())
      return {code::not_found, "node '" + opts.node_id + "' has no incoming copy of partition " +
                                   std::to_string(index) + " of '" + table + "'"};
    uid = it->second.uid;
  }
  auto* persistence = seat.persistence();
  if (persistence == nullptr || !cut.map) return status::ok();
  return persistence->write_copy(uid, index, *cut.map);
}

void member::state::drop_incoming(const std::string& table, std::uint32_t index) {
  incoming_copy c;
  {
    absl::MutexLock lock(&move_mu);
    auto it = incoming.find({table, index});
    if (it == incoming.end()) return;
    c = std::move(it->second);
    incoming.erase(it);
  }
  caf::anon_send(c.ref.actor, detail::stop_request{});
  if (auto* persistence = seat.persistence()) persistence->drop_partitions(c.uid, {index}, table);
}

void member::state::guard_move(const std::string& table, std::uint32_t index, bool source) {
  const part_key key{table, index};
  absl::MutexLock lock(&move_mu);
  // No node yet: a move step served while this member is still joining (its endpoint is
  // published before its ZooKeeper node starts) goes unguarded, as before the join.
  if (!guards_open || node == nullptr) return;
  auto& g = guarded[key];
  (source ? g.source : g.target) = true;
  if (auto rt = source ? local.lookup(table) : nullptr) g.uid = rt->schema->uid;
  g.czxid = 0;  // a new move: the intent there now is the one to watch
  node->zookeeper().post([this, key] { arm_guard(key); });
}

void member::state::arm_guard(const part_key& key) {
  std::int64_t want = 0;
  {
    absl::MutexLock lock(&move_mu);
    auto it = guarded.find(key);
    if (!guards_open || it == guarded.end()) return;
    want = it->second.czxid;
  }
  auto& zk = node->zookeeper();
  const auto path = layout::move_intent(key.first, key.second);
  auto seen = zk.exists(path);
  if (!seen) return;  // ZooKeeper unreachable: armed again when the session is back (on_session)
  if (!seen->has_value() || (want != 0 && (*seen)->czxid != want)) return settle_move(key, want);
  const std::int64_t czxid = (*seen)->czxid;
  {
    absl::MutexLock lock(&move_mu);
    auto it = guarded.find(key);
    if (it == guarded.end()) return;
    it->second.czxid = czxid;
  }
  auto watched = zk.get(path, [this, key, czxid](const watch_event& ev) {
    if (ev.kind == watch_kind::deleted)
      settle_move(key, czxid);
    else
      arm_guard(key);
  });
  if (!watched && watched.code() == code::not_found) return settle_move(key, czxid);
  if (watched && watched->stat.czxid != czxid) settle_move(key, czxid);
}

void member::state::settle_move(const part_key& key, std::int64_t czxid) {
  const auto& [table, index] = key;
  move_side side;
  {
    absl::MutexLock lock(&move_mu);
    auto it = guarded.find(key);
    if (!guards_open) return;                                      // leaving: `node` is going (~member)
    if (it == guarded.end() || it->second.czxid != czxid) return;  // settled, or a newer move's
    side = it->second;
    guarded.erase(it);
  }
  auto& zk = node->zookeeper();
  auto pl = read_placement(zk);
  if (!pl) {
    absl::MutexLock lock(&move_mu);
    guarded.emplace(key, side);  // armed again when the session is back
    return;
  }
  const partition_owner* owner = pl->map.owner({table, index});
  const std::string where = "partition " + std::to_string(index) + " of '" + table + "'";
  // A split or merge committed: the table's new incarnation replaces the frozen partition,
  // which answers what it held UNAVAILABLE (sent again, to the new partitions).
  bool reshaped = false;
  if (side.source && side.uid != 0) {
    auto cat = read_catalog(zk, nullptr);
    if (!cat) {
      absl::MutexLock lock(&move_mu);
      guarded.emplace(key, side);  // armed again when the session is back
      return;
    }
    if (const auto* t = cat->catalog.find(table); t && t->uid != side.uid) reshaped = true;
  }
  if (side.source && !reshaped && owner && owner->replicated() && owner->holds(opts.node_id)) {
    // A split's freeze is in the group's log: the release goes there too, naming the intent
    // watched, so that it never ends a later split's freeze. (An intent gone before it was
    // seen names none: that split released the partition itself, or a later one will.)
    if (czxid != 0) release_frozen(table, index, owner->replicas, static_cast<std::uint64_t>(czxid));
    return;
  }
  if (side.source && !reshaped && owner && owner->node == opts.node_id) {
    // Not flipped, and it never will be in that move: run what the freeze held. (Should a
    // newer move of the partition have started meanwhile, it fails at its next step,
    // ABORTED, and aborts cleanly.)
    if (auto rt = local.lookup(table); rt && index < rt->partitions.size() && rt->partitions[index].local) {
      detail::move_request abort;
      abort.what = detail::move_request::abort;
      caf::anon_send(rt->partitions[index].actor, std::move(abort));
      spdlog::info(
          "cellar: the move of {} away from '{}' ended without a flip (its intent is gone): it serves "
          "here as before",
          where, opts.node_id);
    }
  }
  if (side.target && !(owner && owner->node == opts.node_id)) {
    // A newer move to this node owns the copy now (its prepare made it afresh).
    if (auto now = zk.get(layout::move_intent(table, index)); now && now->data.ends_with(" " + opts.node_id)) return;
    bool had = false;
    {
      absl::MutexLock lock(&move_mu);
      had = incoming.count(key) > 0;
    }
    drop_incoming(table, index);
    if (had)
      spdlog::warn(
          "cellar: the move of {} to '{}' ended without a flip (its intent is gone): its copy here is "
          "dropped",
          where, opts.node_id);
  }
}

move_options member::state::admin_moves() const {
  move_options o;
  o.cancelled = [this] { return gate.closing(); };
  return o;
}

status member::state::move(const std::string& partition, const std::string& to) {
  auto p = parse_partition_name(partition);
  if (!p) return p.error();
  auto use = gate.enter(opts.node_id);
  if (!use) return use.error();
  return run_move(**use, *peers, seat.system(), p->first, p->second, to, admin_moves());
}

status member::state::move_replica(const std::string& partition, const std::string& from, const std::string& to) {
  auto p = parse_partition_name(partition);
  if (!p) return p.error();
  auto use = gate.enter(opts.node_id);
  if (!use) return use.error();
  return run_move_from(**use, *peers, seat.system(), p->first, p->second, from, to, admin_moves());
}

status member::state::transfer_leader(const std::string& partition, const std::string& to) {
  auto p = parse_partition_name(partition);
  if (!p) return p.error();
  auto use = gate.enter(opts.node_id);
  if (!use) return use.error();
  return run_leader_transfer(**use, *peers, seat.system(), p->first, p->second, to, admin_moves());
}

result<std::uint32_t> member::state::balance() {
  auto use = gate.enter(opts.node_id);
  if (!use) return use.error();
  return run_balance(**use, *peers, seat.system(), admin_moves());
}

// Session loss (docs/cluster.md §1): from the moment the connection drops the node cannot
// know whether it still owns its partitions (a move may flip them once its session is
// gone), so it takes no writes until it is connected again: with the same session nothing
// can have moved (a move needs the owner's part); with a new one only once the placement
// map was read again (cluster_node's listener, registered before this one, has done that
// when this runs).
void member::state::on_session(const session_event& ev) {
  const bool ok = ev.state == session_state::connected;
  if (!ok)
    spdlog::warn("cellar: node '{}' lost its ZooKeeper {}: refusing writes", opts.node_id,
                 ev.state == session_state::expired ? "session" : "connection");
  seat.cluster().refuse_writes(!ok);
  if (ok) {
    // Watches of an ended session are gone, and a guard may have waited for ZooKeeper.
    absl::MutexLock lock(&move_mu);
    if (!guards_open) return;
    for (const auto& [key, side] : guarded) node->zookeeper().post([this, key = key] { arm_guard(key); });
    // Snapshots may have been deleted while the session was gone, their drops missing this
    // node: its copies of them go now, as at a join.
    if (ev.new_session) node->zookeeper().post([this] { sweep_snapshots(); });
  }
}

void member::state::sweep_snapshots() {
  {
    // ~member closes the guards, then waits for the event thread (which runs the sweep of a
    // new session) before the node goes.
    absl::MutexLock lock(&move_mu);
    if (!guards_open || node == nullptr) return;
  }
  if (auto swept = snaps->drop_unnamed(); !swept)
    spdlog::warn("cellar: node '{}' kept the snapshot files it holds: {}", opts.node_id, swept.to_string());
}

// --- member --------------------------------------------------------------------------------

namespace {

// The DDL of a member that has not joined yet.
struct not_joined final : detail::cluster_hooks {
  status ddl(const detail::ddl_call& c) override {
    return {code::unavailable, "this node has not joined its cluster yet (DDL on '" + c.table + "')"};
  }
  std::string report() const override { return "cluster: this node has not joined yet\n"; }
  status move(const std::string&, const std::string&) override {
    return {code::unavailable, "this node has not joined its cluster yet"};
  }
  result<std::uint32_t> balance() override {
    return status{code::unavailable, "this node has not joined its cluster yet"};
  }
};

}  // namespace

result<std::unique_ptr<store>> member::open_store(store_options options, const detail::scheduler_tuning& tuning) {
  auto s = detail::store_access::open_cluster_store(std::move(options), tuning, add_cluster_protocol);
  if (s) detail::store_access::seat(*s.value()).cluster().set_hooks(std::make_shared<not_joined>());
  return s;
}

result<std::unique_ptr<member>> member::join(store& s, member_options o) {
  auto& seat = detail::store_access::seat(s);
  if (!seat.cluster().member())
    return status{code::invalid_argument, "the store was not opened for a cluster (member::open_store)"};
  if (auto st = check_node_id(o.node_id); !st) return st;
  auto st = std::make_shared<state>(seat, std::move(o));
  st->self = st;
  st->peers = std::make_shared<peer_directory>(seat.system());
  replica_host_options ro;
  ro.self = st->opts.node_id;
  ro.forward_timeout = st->opts.forward_timeout;
  ro.election_timeout_ms = static_cast<unsigned>(st->opts.election_timeout.count());
  ro.heartbeat_timeout_ms = std::max(10u, ro.election_timeout_ms / 10);
  st->replicas = std::make_unique<replica_host>(seat, st->peers, ro);
  state* raw = st.get();
  endpoint_context ec;
  ec.self = st->opts.node_id;
  ec.find = [raw](const std::string& t, std::uint32_t i, std::uint64_t v, detail::partition_ref& out) {
    return raw->find(t, i, v, out);
  };
  ec.describe_owner = [raw](const std::string& t, std::uint32_t i) { return raw->describe_owner(t, i); };
  ec.writable = [raw] { return !raw->seat.cluster().writes_refused(); };
  ec.moved_to = [raw](const std::string& t, std::uint32_t i) {
    absl::MutexLock lock(&raw->move_mu);
    auto it = raw->moved_out.find({t, i});
    return it == raw->moved_out.end() ? detail::partition_actor{} : it->second;
  };
  // The move steps on this node's files run on threads of their own (remote.cc:
  // off_worker), which may still run while the member leaves: they hold the state.
  std::weak_ptr<state> weak = st;
  const std::string self_id = st->opts.node_id;
  auto leaving = [self_id] { return status{code::unavailable, "node '" + self_id + "' is leaving the cluster"}; };
  ec.prepare_incoming = [weak, leaving](const std::string& t, std::uint32_t i) {
    auto s = weak.lock();
    return s ? s->prepare_incoming(t, i) : leaving();
  };
  ec.incoming = [raw](const std::string& t, std::uint32_t i) {
    absl::MutexLock lock(&raw->move_mu);
    auto it = raw->incoming.find({t, i});
    return it == raw->incoming.end() ? detail::partition_actor{} : it->second.ref.actor;
  };
  ec.persist_incoming = [weak, leaving](const std::string& t, std::uint32_t i, const detail::delta_handle& d) {
    auto s = weak.lock();
    return s ? s->persist_incoming(t, i, d) : leaving();
  };
  ec.drop_incoming = [weak](const std::string& t, std::uint32_t i) {
    if (auto s = weak.lock()) s->drop_incoming(t, i);
  };
  ec.guard_move = [weak](const std::string& t, std::uint32_t i, bool source) {
    if (auto s = weak.lock()) s->guard_move(t, i, source);
  };
  ec.replica = [raw](const std::string& group, std::uint32_t i) { return raw->replicas->replica(group, i); };
  ec.join_replica = [weak, leaving](const std::string& t, std::uint64_t uid, std::uint32_t i, std::uint64_t id) {
    auto s = weak.lock();
    if (!s) return leaving();
    auto rt = s->local.lookup(t);
    if (!rt || rt->schema->uid != uid)
      return status{code::unavailable,
                    "node '" + s->opts.node_id + "' has not applied this incarnation of '" + t + "' yet"};
    if (i >= rt->partitions.size())
      return status{code::not_found, "table '" + t + "' has no partition " + std::to_string(i)};
    return s->replicas->join(rt->schema, i, id);
  };
  ec.leave_replica = [weak](const std::string& t, std::uint64_t uid, std::uint32_t i) {
    if (auto s = weak.lock()) s->replicas->leave(replica_host::group_name(t, uid), i);
  };
  snapshot_service_options so;
  so.self = st->opts.node_id;
  so.connect_timeout = st->opts.forward_timeout;
  so.leader_wait = st->opts.leader_wait;
  so.repo = &seat.snapshots();
  so.find = [raw](const std::string& t, std::uint32_t i, detail::partition_ref& out) {
    return raw->find(t, i, 0, out);
  };
  so.table_uid = [raw](const std::string& t) -> std::uint64_t {
    auto rt = raw->local.lookup(t);
    return rt ? rt->schema->uid : 0;
  };
  so.guard_source = [weak](const std::string& t, std::uint32_t i) {
    if (auto s = weak.lock()) s->guard_move(t, i, true);
  };
  so.stage = [weak, leaving](const node_snapshot& m) {
    auto s = weak.lock();
    return s ? s->stage(m) : leaving();
  };
  st->snaps = std::make_unique<snapshot_service>(seat, *st->peers, st->gate, std::move(so));
  ec.snapshot_step = [weak, leaving](node_snapshot& m) {
    auto s = weak.lock();
    return s ? s->snaps->serve(m) : node_snapshot_reply{leaving(), {}, {}};
  };
  st->served = ec.served;
  st->endpoint = spawn_node_endpoint(seat.system(), std::move(ec));
  auto port = seat.system().middleman().publish(st->endpoint, st->opts.peer_port, st->opts.peer_host.c_str(), true);
  if (!port) {
    caf::anon_send_exit(st->endpoint, caf::exit_reason::user_shutdown);
    return status{code::io_error, "cannot listen for peers on " + st->opts.peer_host + ":" +
                                      std::to_string(st->opts.peer_port) + ": " + seat.system().render(port.error())};
  }
  st->peer_address = st->opts.peer_host + ":" + std::to_string(*port);

  cluster_options co;
  co.zookeeper = st->opts.zookeeper;
  co.self = {st->opts.node_id, st->opts.data_address, st->peer_address};
  co.ddl_timeout = st->opts.ddl_timeout;
  co.wait_for_previous = st->opts.wait_for_previous;
  cluster_callbacks cb;
  cb.members_changed = [raw](const std::vector<node_info>& m) {
    raw->peers->set_members(m);
    absl::MutexLock lock(&raw->mu);
    raw->members = m;
  };
  cb.catalog_changed = [raw](std::shared_ptr<const cluster_catalog> c) {
    {
      absl::MutexLock lock(&raw->mu);
      raw->catalog = std::move(c);
    }
    raw->reconcile();
    raw->sweep_replicas();
  };
  cb.placement_changed = [raw](std::shared_ptr<const placement_map> m) {
    {
      absl::MutexLock lock(&raw->mu);
      raw->map = std::move(m);
    }
    raw->reconcile();
    raw->sweep_replicas();
  };
  auto node = cluster_node::start(std::move(co), std::move(cb));
  if (!node) {
    seat.system().middleman().unpublish(st->endpoint, *port);
    caf::anon_send_exit(st->endpoint, caf::exit_reason::user_shutdown);
    return node.error();
  }
  {
    // Under move_mu: the peer endpoint, published above, may already serve a move step
    // (guard_move reads `node` under the same lock).
    absl::MutexLock lock(&st->move_mu);
    st->node = std::move(node.value());
    // The Raft state this node's replicas left while it was away: a table dropped, a
    // replica replaced after --dead-node-timeout (the callbacks so far ran before `node`).
    st->node->zookeeper().post([raw] { raw->sweep_replicas(); });
  }
  st->gate.open(st->node.get());
  // Snapshots deleted while this node was down: their files here go now (docs/backup.md).
  st->sweep_snapshots();
  st->warden = std::make_unique<replica_warden>(*st->node, *st->peers, seat.system(), st->opts.dead_node_timeout);
  if (const auto every = seat.split_check_interval(); every.count() > 0) {
    size_splitter_options so;
    so.self = st->opts.node_id;
    so.interval = every;
    so.candidates = [raw] { return raw->split_candidates(); };
    so.split = [raw](const detail::reshape_call& c) { return raw->reshape(c).error(); };
    st->splitter = std::make_unique<size_splitter>(seat.system(), std::move(so));
  }
  {
    std::weak_ptr<state> w = st;
    st->node->zookeeper().add_session_listener([w](const session_event& ev) {
      if (auto s2 = w.lock()) s2->on_session(ev);
    });
  }
  seat.cluster().set_hooks(st);
  seat.cluster().set_joined(true);
  spdlog::info("cellar: node '{}' joined the cluster (peers reach it on {})", st->opts.node_id, st->peer_address);
  return std::unique_ptr<member>(new member(std::move(st)));
}

member::member(std::shared_ptr<state> st) : st_(std::move(st)) {}

member::~member() {
  // No size-driven split starts from here on; one under way gives up once the gate closes.
  if (st_->splitter) st_->splitter->stop();
  st_->seat.cluster().set_joined(false);
  st_->warden.reset();
  {
    std::vector<std::pair<std::string, std::uint32_t>> copies;
    {
      absl::MutexLock lock(&st_->move_mu);
      for (auto& [k, c] : st_->incoming) copies.push_back(k);
    }
    for (auto& [t, i] : copies) st_->drop_incoming(t, i);
    absl::MutexLock lock(&st_->move_mu);
    st_->guards_open = false;
  }
  // A guard callback (arm_guard, settle_move, on_session) that passed its guards_open check
  // still uses `node`: let it end before node goes (reset() nulls the pointer before the
  // node's destructor stops the event thread).
  st_->node->zookeeper().barrier();
  st_->seat.cluster().set_hooks(std::make_shared<not_joined>());
  // Admin calls that took the hooks before they were replaced end first (a move or a
  // snapshot waiting for another node gives up).
  st_->gate.close();
  st_->splitter.reset();
  {
    // Releases of frozen replicated partitions give up once the gate is closed.
    auto& r = *st_->releasing;
    absl::MutexLock lock(&r.mu);
    r.mu.Await(absl::Condition(
        +[](int* running) { return *running == 0; }, &r.running));
  }
  st_->node.reset();  // no callback runs after this
  st_->seat.system().middleman().unpublish(st_->endpoint, 0);
  // The endpoint's handlers use the state (find, replica, ...) without holding it: it has
  // stopped before the state can go. A message already in its mailbox would otherwise run
  // after ~member let go of the state.
  caf::scoped_actor self{st_->seat.system()};
  self->monitor(st_->endpoint);
  self->send_exit(st_->endpoint, caf::exit_reason::user_shutdown);
  self->receive([](const caf::down_msg&) {});
}

cluster_node& member::node() { return *st_->node; }

std::string member::peer_address() const { return st_->peer_address; }

std::uint64_t member::applied_version() const {
  absl::MutexLock lock(&st_->mu);
  return st_->applied;
}

}  // namespace cellar::cluster
