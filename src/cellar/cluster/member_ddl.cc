// cluster/member_ddl.cc: a member's DDL (member.h): the store's DDL calls through the master,
// splits and merges (reshaper.h) with the partitions they build here, and waiting until
// this node has applied what the master committed.
#include <spdlog/spdlog.h>

#include <absl/time/time.h>

#include <cstdlib>
#include <future>
#include <thread>

#include "catalog/hbase_options.h"
#include "cluster/catalog_state.h"
#include "cluster/layout.h"
#include "cluster/member_state.h"
#include "cluster/reshaper.h"
#include "cluster/zk_state.h"
#include "partition/memtable.h"
#include "persist/codec.h"
#include "store/partition_factory.h"
#include "store/persistence.h"

namespace cellar::cluster {

status member::state::ddl(const detail::ddl_call& c) {
  using k = detail::ddl_call::kind;
  ddl_request r;
  switch (c.what) {
    case k::create_table: {
      // The node's default replication factor, written into the table so that describe
      // shows it and the master places that many replicas.
      auto d = c.descriptor;
      if (opts.replication_factor != 1 && !d.attributes.count("REGION_REPLICATION"))
        d.attributes["REGION_REPLICATION"] = std::to_string(opts.replication_factor);
      r = ddl_request::create(d, c.origin);
      break;
    }
    case k::create_table_group: r = ddl_request::create_group(c.table); break;
    case k::add_family: r = ddl_request::add(c.table, c.family, c.partitioning); break;
    case k::alter_family: r = ddl_request::alter(c.table, c.family); break;
    case k::drop_family: r = ddl_request::drop_family(c.table, c.family_name, c.origin); break;
    case k::drop_table: r = ddl_request::drop(c.table); break;
    case k::truncate_table: r = ddl_request::truncate(c.table); break;
    case k::disable_table: r = ddl_request::set_disabled(c.table, true); break;
    case k::enable_table: r = ddl_request::set_disabled(c.table, false); break;
    case k::truncate_family: r = ddl_request::truncate_family(c.table, c.family_name); break;
    case k::alter_table: r = ddl_request::alter_table(c.table, c.set_attributes, c.unset_attributes); break;
    case k::create_namespace: r = ddl_request::create_namespace(c.ns); break;
    case k::drop_namespace: r = ddl_request::drop_namespace(c.ns.name); break;
    case k::alter_namespace: r = ddl_request::alter_namespace(c.ns.name, c.set_attributes, c.unset_attributes); break;
  }
  result<std::uint64_t> v = status{code::unavailable, "not sent"};
  {
    auto use = gate.enter(opts.node_id);
    if (!use) return use.error();
    v = (*use)->ddl(r);
  }
  if (!v) return v.error();
  if (!wait_applied(*v, opts.apply_wait))
    return {code::unavailable, "the DDL was committed as catalog version " + std::to_string(*v) + " but node '" +
                                   opts.node_id + "' has not applied it within " +
                                   std::to_string(opts.apply_wait.count()) + " ms"};
  return status::ok();
}

// Reads the catalog's version in ZooKeeper on the event thread (where the member applies
// catalogs, so it reads after every change applied so far), then waits until this node has
// applied it; both within apply_wait.
bool member::state::catch_up() {
  const auto deadline = std::chrono::steady_clock::now() + opts.apply_wait;
  auto seen = std::make_shared<std::promise<std::uint64_t>>();
  auto got = seen->get_future();
  {
    // ~member closes the guards, then lets posted work end, before `node` goes.
    absl::MutexLock lock(&move_mu);
    if (!guards_open || node == nullptr) return false;
    node->zookeeper().post([this, seen] {
      std::uint64_t version = 0;
      if (auto head = node->zookeeper().get(layout::catalog); head)
        if (auto h = decode_catalog_header(head->data); h) version = h->version;
      seen->set_value(version);
    });
  }
  if (got.wait_until(deadline) != std::future_status::ready) return false;
  return wait_applied(got.get(), std::max(std::chrono::nanoseconds(0), deadline - std::chrono::steady_clock::now()));
}

bool member::state::wait_applied(std::uint64_t version, std::chrono::nanoseconds timeout) {
  absl::MutexLock lock(&mu);
  const auto reached = [this, version] {
    mu.AssertHeld();
    return applied >= version;
  };
  return mu.AwaitWithTimeout(absl::Condition(&reached), absl::FromChrono(timeout));
}

result<std::uint32_t> member::state::reshape(const detail::reshape_call& c) {
  result<reshape_result> r = status{code::unavailable, "not run"};
  {
    auto use = gate.enter(opts.node_id);
    if (!use) return use.error();
    r = run_reshape(**use, *snaps, c);
  }
  if (!r) return r.error();
  if (r->version != 0 && !wait_applied(r->version, opts.apply_wait))
    return status{code::unavailable,
                  "the split or merge was committed as catalog version " + std::to_string(r->version) + " but node '" +
                      opts.node_id + "' has not applied it within " + std::to_string(opts.apply_wait.count()) + " ms"};
  return r->splits;
}

std::vector<split_candidate> member::state::split_candidates() const {
  std::vector<split_candidate> out;
  // Leaving, or unsure it still owns its partitions (its session lost): nothing splits.
  if (gate.closing() || !seat.cluster().joined() || seat.cluster().writes_refused()) return out;
  std::shared_ptr<const placement_map> placed;
  {
    absl::MutexLock lock(&mu);
    placed = map;
  }
  if (!placed) return out;
  const auto tables = local.current();  // held: a concurrent change would free it
  for (const auto& [name, rt] : *tables) {
    if (!rt || !rt->schema) continue;
    const auto limit = detail::size_split_limit(*rt->schema, rt->partitions.size());
    auto owners = placed->tables.find(name);
    // The map and the runtime disagree while a change is being applied: the next round.
    if (!limit || owners == placed->tables.end() || owners->second.size() != rt->partitions.size()) continue;
    for (std::uint32_t i = 0; i < rt->partitions.size(); ++i) {
      const auto& o = owners->second[i];
      split_candidate c{name, i, rt->schema->uid, *limit, {}, o.replicated()};
      if (!o.replicated()) {
        if (o.node != opts.node_id || !rt->partitions[i].local) continue;
        c.actor = rt->partitions[i].actor;
      } else {
        if (!o.holds(opts.node_id)) continue;
        auto r = replicas->replica(replica_host::group_name(*rt->schema), i);
        if (!r) continue;
        c.actor = caf::actor_cast<detail::partition_actor>(r);
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

status member::state::stage(const node_snapshot& m) {
  const part_key key{m.table, m.index};
  if (m.step == node_snapshot::fill || (m.step == node_snapshot::stage && !m.replicas.empty())) return stage_replica(m);
  if (m.step == node_snapshot::unstage) {
    const std::uint64_t uid = std::strtoull(m.name.c_str(), nullptr, 10);
    incoming_copy gone;
    {
      absl::MutexLock lock(&move_mu);
      if (auto r = staged_replicas.find(key); r != staged_replicas.end() && r->second == uid) {
        staged_replicas.erase(r);
        replicas->leave(replica_host::group_name(m.table, uid), m.index);
      }
      auto it = staged.find(key);
      if (it == staged.end() || it->second.uid != uid) return status::ok();
      gone = std::move(it->second);
      staged.erase(it);
    }
    caf::anon_send(gone.ref.actor, detail::stop_request{});
    if (auto* persistence = seat.persistence()) persistence->drop_partitions(uid, {m.index}, m.table);
    return status::ok();
  }
  auto decoded = decode_table_entry(m.manifest);
  if (!decoded) return decoded.error();
  auto schema = std::make_shared<const detail::table_schema>(std::move(*decoded));
  const auto cells = m.cells.map ? m.cells.map : std::make_shared<detail::delta_map>();
  // Durable before the commit names it: a restart after the commit finds its cells.
  if (auto* persistence = seat.persistence())
    if (auto st = persistence->write_copy(schema->uid, m.index, *cells); !st) return st;
  auto mem = std::make_shared<std::unique_ptr<detail::memtable>>(
      std::make_unique<detail::memtable>(&seat.partitions().memory()));
  for (auto it = cells->begin(); it != cells->end(); ++it) {
    auto k = detail::decode_cell_key(it->first.bytes);
    if (!k) continue;
    (*mem)->load(k->family, detail::cell_key{std::move(k->row), std::move(k->qualifier), k->ts},
                 detail::cell_value{detail::short_bytes(it->second.value()), it->second.expires_at});
  }
  incoming_copy c;
  c.uid = schema->uid;
  c.ref = stops_when_released(seat.partitions().start(schema, m.index, std::move(mem)));
  incoming_copy replaced;
  {
    absl::MutexLock lock(&move_mu);
    auto& slot = staged[key];
    replaced = std::move(slot);
    slot = std::move(c);
  }
  if (replaced.ref.actor) caf::anon_send(replaced.ref.actor, detail::stop_request{});
  return status::ok();
}

status member::state::stage_replica(const node_snapshot& m) {
  const part_key key{m.table, m.index};
  if (m.step == node_snapshot::fill) {
    auto r = replicas->replica(replica_host::group_name(m.table, m.uid), m.index);
    if (!r)
      return {code::not_owner, "node '" + opts.node_id + "' runs no replica of partition " + std::to_string(m.index) +
                                   " of incarnation " + std::to_string(m.uid) + " of '" + m.table + "'"};
    detail::move_request load;
    load.what = detail::move_request::apply;
    load.cells = m.cells;
    caf::scoped_actor self{seat.system()};
    status out{code::unavailable, "no answer"};
    self->request(caf::actor_cast<detail::partition_actor>(r), std::chrono::minutes(10), std::move(load))
        .receive([&](detail::move_reply& rep) { out = rep.st; },
                 [&](caf::error& e) {
                   out = {code::unavailable, "the replica did not answer: " + seat.system().render(e)};
                 });
    return out;
  }
  auto decoded = decode_table_entry(m.manifest);
  if (!decoded) return decoded.error();
  auto schema = std::make_shared<const detail::table_schema>(std::move(*decoded));
  partition_owner owner;
  owner.node = m.replicas.front();
  owner.replicas = m.replicas;
  {
    // Recorded first: drop_stale_staged stops it should the catalog pass it meanwhile.
    absl::MutexLock lock(&move_mu);
    staged_replicas[key] = schema->uid;
  }
  return replicas->stage(schema, m.index, owner);
}

void member::state::release_frozen(const std::string& table, std::uint32_t index, std::vector<std::string> replicas,
                                   std::uint64_t hold) {
  auto count = releasing;
  {
    absl::MutexLock lock(&count->mu);
    ++count->running;
  }
  std::thread([w = self, count, table, index, replicas = std::move(replicas), hold] {
    if (auto s = w.lock(); s && s->snaps) {
      node_snapshot m;
      m.step = node_snapshot::release;
      m.table = table;
      m.index = index;
      m.hold = hold;
      auto at_start = s->local.lookup(table);
      const std::uint64_t uid = at_start ? at_start->schema->uid : 0;
      // A group without a leader (a majority of its replicas down) keeps the freeze until one
      // takes the release: asked again while this incarnation of the table is the one that
      // froze and the node stays, lest the partition refuse writes for good.
      for (;;) {
        auto r = s->snaps->ask_leader(replicas, m);
        if (r) {
          spdlog::info("cellar: the split or merge of '{}' ended without a commit: partition {} is released", table,
                       index);
          break;
        }
        const auto c = r.error().code();
        auto now = s->local.lookup(table);
        if ((c != code::unavailable && c != code::not_leader) || s->gate.closing() || !now || now->schema->uid != uid) {
          spdlog::warn("cellar: partition {} of '{}' stays frozen: its release failed: {}", index, table,
                       r.error().to_string());
          break;
        }
        spdlog::warn("cellar: partition {} of '{}' is still frozen: its release found no leader ({}); asking again",
                     index, table, r.error().to_string());
      }
    }
    absl::MutexLock lock(&count->mu);  // the state is let go of first
    --count->running;
  }).detach();
}

void member::state::drop_stale_staged(const cluster_catalog& cat) {
  std::vector<std::pair<part_key, incoming_copy>> gone;
  {
    absl::MutexLock lock(&move_mu);
    for (auto it = staged_replicas.begin(); it != staged_replicas.end();) {
      const auto* t = cat.find(it->first.first);
      if (t && t->uid == it->second) {
        it = staged_replicas.erase(it);  // the catalog names it: a placement took it over
      } else if (it->second < cat.next_uid) {
        // Started for an incarnation the catalog has passed without naming it.
        replicas->leave(replica_host::group_name(it->first.first, it->second), it->first.second);
        it = staged_replicas.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = staged.begin(); it != staged.end();) {
      const auto* t = cat.find(it->first.first);
      // Built for an incarnation the catalog has passed without naming it.
      if (it->second.uid < cat.next_uid && (!t || t->uid != it->second.uid)) {
        gone.emplace_back(it->first, std::move(it->second));
        it = staged.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& [key, c] : gone) {
    caf::anon_send(c.ref.actor, detail::stop_request{});
    if (auto* persistence = seat.persistence()) persistence->drop_partitions(c.uid, {key.second}, key.first);
  }
}

}  // namespace cellar::cluster
