// cluster/reshaper.cc: a split or merge of RANGE partitions in a cluster (reshaper.h).
#include "cluster/reshaper.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <mutex>
#include <optional>
#include <set>

#include "cluster/catalog_state.h"
#include "cluster/layout.h"
#include "cluster/placement.h"
#include "cluster/zk_state.h"
#include "persist/codec.h"
#include "route/router.h"

namespace cellar::cluster {

namespace {

using detail::delta_map;
using detail::reshape_call;

// Partitions copied, or built, at once.
constexpr std::size_t parallel_steps = 8;

// The middle row of `cells` (the row half of its rows sort before), or none under two rows.
std::optional<std::string> middle_row(const delta_map& cells) {
  std::set<std::string> rows;
  for (auto it = cells.begin(); it != cells.end(); ++it)
    if (auto key = detail::decode_cell_key(it->first.bytes)) rows.insert(std::move(key->row));
  if (rows.size() < 2) return std::nullopt;
  auto mid = rows.begin();
  std::advance(mid, rows.size() / 2);
  return *mid;
}

// Whether `c` needs the partitions' cells to be planned (a middle row).
bool needs_cells(const reshape_call& c) {
  return c.what == reshape_call::kind::split_all || (c.what == reshape_call::kind::split_region && c.key.empty());
}

struct reshaper {
  cluster_node& node;
  snapshot_service& snaps;
  const reshape_call& c;
  std::vector<std::string> owners;  // of the old partitions
  // A replicated table: each old partition's replica set (empty: single-copy partitions).
  std::vector<std::vector<std::string>> sets;
  std::vector<std::string> intents;  // made, with their czxid
  std::vector<std::int64_t> czxids;
  std::vector<bool> frozen;
  // (node, index) staged: a new partition's owner, or each replica of its new group.
  std::vector<std::pair<std::string, std::uint32_t>> built;
  std::uint64_t uid = 0;
  std::uint64_t committed = 0;  // undo(): the catalog version that named `uid` after all
  // The table's next incarnation (uid `uid`) and where its partitions go (place_next).
  detail::table_schema next;
  std::string schema;  // `next`, encoded
  std::vector<std::string> new_owners;
  std::vector<std::vector<std::string>> new_sets;  // a replicated table's
  bool started = false;                            // start_groups ran

  // Runs `step` for every index below `n`, `parallel_steps` at a time; every step runs (so
  // undo() knows what each did); the first error, or OK.
  template <class F>
  status each(std::size_t n, F step) {
    status first = status::ok();
    for (std::size_t from = 0; from < n; from += parallel_steps) {
      std::vector<std::future<status>> running;
      for (std::size_t i = from; i < std::min(n, from + parallel_steps); ++i)
        running.push_back(std::async(std::launch::async, step, static_cast<std::uint32_t>(i)));
      for (auto& r : running)
        if (auto st = r.get(); !st && first) first = st;
    }
    return first;
  }

  status take_intents() {
    auto& zk = node.zookeeper();
    if (auto st = zk.ensure_path(layout::moves); !st) return st;
    for (std::uint32_t i = 0; i < owners.size(); ++i) {
      const std::string intent = layout::move_intent(c.table, i);
      auto made = zk.create(intent, "reshape " + owners[i], create_mode::ephemeral);
      if (!made)
        return made.code() == code::already_exists
                   ? status{code::conflict, "a move or snapshot of partition " + std::to_string(i) + " of '" + c.table +
                                                "' is running; split or merge again once it is done"}
                   : made.error();
      auto e = zk.exists(intent);
      intents.push_back(intent);
      czxids.push_back(e && e->has_value() ? (*e)->czxid : 0);
    }
    return status::ok();
  }

  // Undoes what ran: the intents first (a commit on its way then fails), then the freezes
  // and the built partitions. OK when the commit happened after all.
  status undo(const status& why) {
    auto& zk = node.zookeeper();
    for (std::size_t i = 0; i < intents.size(); ++i)
      if (auto now = zk.exists(intents[i]); now && now->has_value() && (*now)->czxid == czxids[i])
        (void)zk.remove(intents[i]);
    if (uid != 0)
      if (auto cat = read_catalog(zk, nullptr); cat)
        if (const auto* t = cat->catalog.find(c.table); t && t->uid == uid) {
          committed = cat->catalog.version;
          return status::ok();
        }
    for (std::uint32_t i = 0; i < frozen.size(); ++i) {
      if (!frozen[i]) continue;
      node_snapshot m;
      m.step = node_snapshot::release;
      m.table = c.table;
      m.index = i;
      m.hold = static_cast<std::uint64_t>(czxids[i]);
      const auto done = sets.empty() ? snaps.ask(owners[i], std::move(m)) : snaps.ask_leader(sets[i], m);
      if (!done && !sets.empty())
        spdlog::warn("cellar: the release of partition {} of '{}' failed ({}); the watch on its intent releases it", i,
                     c.table, done.error().to_string());
    }
    for (const auto& [n, j] : built) {
      node_snapshot m;
      m.step = node_snapshot::unstage;
      m.table = c.table;
      m.index = j;
      m.name = std::to_string(uid);
      (void)snaps.ask(n, std::move(m));
    }
    if (!why) spdlog::warn("cellar: the split or merge of '{}' was undone: {}", c.table, why.to_string());
    return why;
  }

  // The table's next incarnation after `plan`, placed as table creation places partitions
  // (a replicated one's replicas on distinct nodes).
  status place_next(const cluster_catalog& cat, const detail::table_schema& t, const placement_map& map,
                    const std::vector<std::string>& live, const detail::reshape_plan& plan, std::uint32_t factor) {
    next = t;
    next.partitioning = partition_spec::range_bounds(plan.bounds);
    next.uid = cat.next_uid;
    next.version = cat.version + 1;
    uid = next.uid;
    schema = encode_table_entry(next);
    auto to = assign_table(map, c.table, next.partitioning.count(), live, factor);
    if (!to) return to.error();
    for (const auto& o : to->tables.at(c.table)) {
      new_owners.push_back(o.node);
      if (o.replicated()) new_sets.push_back(o.replicas);
    }
    return status::ok();
  }

  // A replicated table's new partitions: each a Raft group started empty on its replicas
  // (stage with the replica set), which elect a leader meanwhile.
  status start_groups(std::mutex& mu) {
    started = true;
    return each(new_sets.size(), [&](std::uint32_t j) -> status {
      status first = status::ok();
      for (const auto& n : new_sets[j]) {
        node_snapshot s;
        s.step = node_snapshot::stage;
        s.table = c.table;
        s.index = j;
        s.manifest = schema;
        s.replicas = new_sets[j];
        {
          std::lock_guard lock(mu);
          built.emplace_back(n, j);  // undone even if the answer is lost
        }
        if (auto r = snaps.ask(n, std::move(s)); !r && first) first = r.error();
      }
      return first;
    });
  }

  // Fills each new group through its log at its leader (fill: one entry, or a staged load
  // written in one step), so every replica holds all of its cells or none.
  status fill_groups(std::vector<detail::delta_handle>& parts) {
    return each(new_sets.size(), [&](std::uint32_t j) -> status {
      node_snapshot f;
      f.step = node_snapshot::fill;
      f.table = c.table;
      f.index = j;
      f.uid = uid;
      f.cells = std::move(parts[j]);
      auto r = snaps.ask_leader(new_sets[j], f);
      return r ? status::ok() : r.error();
    });
  }

  result<reshape_result> run() {
    auto& zk = node.zookeeper();
    auto cat = read_catalog(zk, nullptr);
    if (!cat) return cat.error();
    const auto* t = cat->catalog.find(c.table);
    if (!t) return status{code::table_not_found, "table '" + c.table + "' does not exist"};
    auto pl = read_placement(zk);
    if (!pl) return pl.error();
    const std::size_t n = t->partitioned ? t->partitioning.count() : 0;
    auto placed = pl->map.tables.find(c.table);
    const bool merge = c.what == reshape_call::kind::merge;
    if (auto st = detail::check_reshapable(*t, n, merge ? "merge_region" : "split"); !st) return st;
    if (placed == pl->map.tables.end() || placed->second.size() != n)
      return status{code::unavailable, "the placement of '" + c.table + "' is not written yet"};
    const bool replicated = placed->second.front().replicated();
    for (const auto& o : placed->second) {
      if (o.replicated() != replicated)
        return status{code::unavailable, "the partitions of '" + c.table +
                                             "' are partly replicated (a change of REGION_REPLICATION is under way)"};
      owners.push_back(o.node);
      if (replicated) sets.push_back(o.replicas);
    }
    const auto factor = static_cast<std::uint32_t>(replicated ? sets.front().size() : 1);
    // A plan that needs no cells is checked before anything is frozen.
    const auto no_cells = [](std::uint32_t) -> result<std::optional<std::string>> {
      return status{code::internal, "no cells"};
    };
    std::optional<detail::reshape_plan> plan;
    if (!needs_cells(c)) {
      auto p = detail::plan_reshape(*t, n, c, no_cells);
      if (!p) return p.error();
      plan = std::move(*p);
    }
    auto live = zk.children(layout::nodes);
    if (!live) return live.error();
    // A replicated partition is frozen at whichever replica leads (asked in turn).
    for (const auto& o : owners)
      if (!replicated && std::find(live->begin(), live->end(), o) == live->end())
        return status{code::unavailable,
                      "a partition of '" + c.table + "' is on node '" + o + "', which is down: it cannot be split"};

    if (auto st = take_intents(); !st) return undo(st);
    std::mutex mu;
    if (replicated && plan) {
      // The new groups start, and elect their leaders, before the freeze: writes are refused
      // only while the cells are copied, filled and committed.
      if (auto st = place_next(cat->catalog, *t, pl->map, *live, *plan, factor); !st) return undo(st);
      if (auto st = start_groups(mu); !st) return undo(st);
    }
    // 2. Copy and freeze every partition, all at once.
    std::vector<std::shared_ptr<delta_map>> cells(n);
    frozen.assign(n, false);
    auto st = each(n, [&](std::uint32_t i) -> status {
      node_snapshot m;
      m.step = node_snapshot::freeze;
      m.table = c.table;
      m.index = i;
      m.uid = t->uid;
      m.hold = static_cast<std::uint64_t>(czxids[i]);
      if (replicated) {
        std::lock_guard lock(mu);
        frozen[i] = true;  // released on undo even if the answer is lost: the entry may be in the log
      }
      auto r = replicated ? snaps.ask_leader(sets[i], m) : snaps.ask(owners[i], std::move(m));
      std::lock_guard lock(mu);
      if (!r) return r.error();
      frozen[i] = true;
      cells[i] = r->cells.map ? std::move(r->cells.map) : std::make_shared<delta_map>();
      return status::ok();
    });
    if (!st) return undo(st);
    // 3. Plan, place, deal and build.
    if (!plan) {
      auto p = detail::plan_reshape(*t, n, c, [&](std::uint32_t i) -> result<std::optional<std::string>> {
        return middle_row(*cells[i]);
      });
      if (!p) return undo(p.error());
      plan = std::move(*p);
    }
    if (!plan->changes) {
      (void)undo(status::ok());
      return reshape_result{};
    }
    if (uid == 0)
      if (auto placed_next = place_next(cat->catalog, *t, pl->map, *live, *plan, factor); !placed_next)
        return undo(placed_next);
    const std::uint32_t m = next.partitioning.count();
    std::vector<detail::delta_handle> parts(m);
    for (auto& from : cells) {
      for (auto it = from->begin(); it != from->end(); ++it) {
        auto key = detail::decode_cell_key(it->first.bytes);
        if (!key) continue;
        parts[detail::partition_of(next.partitioning, key->row)].map->put(it->first.bytes, it->second.expires_at,
                                                                          it->second.value());
      }
      from.reset();
    }
    if (replicated && !started) st = start_groups(mu);
    if (st)
      st = replicated ? fill_groups(parts) : each(m, [&](std::uint32_t j) -> status {
        node_snapshot s;
        s.step = node_snapshot::stage;
        s.table = c.table;
        s.index = j;
        s.manifest = schema;
        s.cells = std::move(parts[j]);
        {
          std::lock_guard lock(mu);
          built.emplace_back(new_owners[j], j);  // undone even if the answer is lost
        }
        auto r = snaps.ask(new_owners[j], std::move(s));
        return r ? status::ok() : r.error();
      });
    if (!st) return undo(st);
    // 4. The commit.
    auto commit = ddl_request::reshape(c.table, next.partitioning, uid, new_owners, intents, cat->catalog.version);
    commit.replica_sets = std::move(new_sets);
    auto v = node.ddl(commit);
    if (!v) {
      auto why = undo(v.error());
      if (why) return reshape_result{plan->splits, committed};  // committed after all
      return why;
    }
    spdlog::info("cellar: '{}' now has {} partitions (was {}), catalog version {}", c.table, m, n, *v);
    return reshape_result{plan->splits, *v};
  }
};

}  // namespace

result<reshape_result> run_reshape(cluster_node& node, snapshot_service& snaps, const detail::reshape_call& c) {
  reshaper r{node, snaps, c};
  return r.run();
}

}  // namespace cellar::cluster
