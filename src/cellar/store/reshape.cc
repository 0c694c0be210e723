// store/reshape.cc: split_region, split_partition, split_table and merge_regions of a store
// (store/reshape.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <optional>
#include <set>

#include "partition/ask.h"
#include "partition/memtable.h"
#include "persist/codec.h"
#include "route/router.h"
#include "store/catalog_service.h"
#include "store/reshape.h"
#include "store/reshape_plan.h"

namespace cellar::detail {

namespace {

constexpr std::uint64_t copy_chunk_bytes = 4u << 20;

status table_not_found(std::string_view name) {
  return {code::table_not_found, "table '" + std::string(name) + "' does not exist"};
}

move_request step(std::uint8_t what, std::string after = {}) {
  move_request r;
  r.what = what;
  r.after = std::move(after);
  r.max_bytes = copy_chunk_bytes;
  return r;
}

// One partition's answer to `req`, waited for.
template <class Reply, class Request>
result<Reply> ask_one(caf::actor_system& sys, const partition_actor& p, Request req) {
  std::promise<result<Reply>> got;
  auto f = got.get_future();
  ask<Reply>(sys, p, std::move(req), [&got](result<Reply> r) { got.set_value(std::move(r)); });
  return f.get();
}

}  // namespace

result<std::optional<std::string>> middle_row_of(caf::actor_system& sys, const partition_actor& p, bool replicated) {
  std::set<std::string> rows;
  std::string after;
  for (;;) {
    // A replicated partition copies no chunks: it answers its leader's cells whole.
    auto c = ask_one<move_reply>(sys, p, replicated ? step(move_request::copy) : step(move_request::chunk, after));
    if (!c || !c->st) return c ? c->st : c.error();
    for (auto it = c->cells.map->begin(); it != c->cells.map->end(); ++it)
      if (auto key = decode_cell_key(it->first.bytes)) rows.insert(std::move(key->row));
    if (replicated || c->done || c->last.empty()) break;
    after = c->last;
  }
  if (rows.size() < 2) return std::optional<std::string>();
  auto mid = rows.begin();
  std::advance(mid, rows.size() / 2);
  return std::optional<std::string>(*mid);
}

status catalog_service::check_more_regions(const std::string& table, std::size_t now, std::size_t more) {
  if (now + more > max_partitions)
    return {code::invalid_argument, "split: '" + table + "' would have more partitions than a table may have (" +
                                        std::to_string(max_partitions) + ")"};
  return check_namespace_regions(namespaces_, namespace_of(table), more, usage(namespace_of(table)));
}

status catalog_service::split_region(const std::string& table, const std::string& key) {
  if (auto s = check_split_key(key); !s) return s;
  return reshape_by(reshape_call{reshape_call::kind::split_at_key, table, 0, key}).error();
}

status catalog_service::split_partition(const std::string& table, std::uint32_t index, const std::string& key) {
  if (!key.empty())
    if (auto s = check_split_key(key); !s) return s;
  return reshape_by(reshape_call{reshape_call::kind::split_region, table, index, key}).error();
}

result<std::uint32_t> catalog_service::split_table(const std::string& table) {
  return reshape_by(reshape_call{reshape_call::kind::split_all, table, 0, {}});
}

status catalog_service::merge_regions(const std::string& table, std::uint32_t index) {
  return reshape_by(reshape_call{reshape_call::kind::merge, table, index, {}}).error();
}

result<std::uint32_t> catalog_service::reshape_by(const reshape_call& c) {
  absl::MutexLock lock(&mu_);
  auto old = lookup(c.table);
  if (!old) return table_not_found(c.table);
  auto plan = plan_reshape(*old->schema, old->partitions.size(), c, [&](std::uint32_t i) {
    return middle_row_of(partitions_.system(), old->partitions[i].actor, false);
  });
  if (!plan) return plan.error();
  if (!plan->changes) return plan->splits;
  if (auto s = check_more_regions(c.table, old->partitions.size(), plan->splits); !s) return s;
  if (auto s = reshape(old, std::move(plan->bounds)); !s) return s;
  return plan->splits;
}

result<std::uint32_t> catalog_service::split_oversized(const std::string& table) {
  caf::actor_system& sys = partitions_.system();
  std::uint32_t splits = 0;
  // One split per round: each changes the partitions, so the next round looks again.
  for (int round = 0; round < 64; ++round) {
    auto rt = lookup(table);
    if (!rt) return splits;
    const auto limit = size_split_limit(*rt->schema, rt->partitions.size());
    if (!limit) return splits;
    auto stats = ask_all<stats_reply>(sys, *rt, [](std::uint32_t) { return stats_request{}; });
    std::optional<std::uint32_t> big;
    for (std::uint32_t i = 0; i < stats.size() && !big; ++i)
      if (stats[i] && stats[i]->stats.bytes > *limit) big = i;
    if (!big) return splits;
    auto mid = middle_row_of(sys, rt->partitions[*big].actor, false);
    if (!mid) return mid.error();
    if (!mid->has_value()) return splits;  // one huge row cannot be split
    if (auto s = split_region(table, **mid); !s) return s;
    ++splits;
  }
  return splits;
}

status catalog_service::reshape(const runtime_ptr& old, std::vector<std::string> bounds) {
  caf::actor_system& sys = partitions_.system();
  const table_schema& was = *old->schema;
  const auto n = static_cast<std::uint32_t>(old->partitions.size());
  auto unfreeze = [&] {
    for (const auto& p : old->partitions) (void)ask_one<move_reply>(sys, p.actor, step(move_request::abort));
  };
  // 1. Freeze every partition (writes held from here on), then copy its cells.
  for (const auto& p : old->partitions) {
    auto t = ask_one<move_reply>(sys, p.actor, step(move_request::track));
    if (t && t->st) t = ask_one<move_reply>(sys, p.actor, step(move_request::freeze));
    if (!t || !t->st) {
      unfreeze();
      return t ? t->st : t.error();
    }
  }
  auto schema = std::make_shared<table_schema>(was);
  schema->partitioning = partition_spec::range_bounds(std::move(bounds));
  const std::uint32_t m = schema->partitioning.count();
  std::vector<delta_map> cells(m);
  for (const auto& p : old->partitions) {
    std::string after;
    for (;;) {
      auto c = ask_one<move_reply>(sys, p.actor, step(move_request::chunk, after));
      if (!c || !c->st) {
        unfreeze();
        return c ? c->st : c.error();
      }
      for (auto it = c->cells.map->begin(); it != c->cells.map->end(); ++it) {
        auto key = decode_cell_key(it->first.bytes);
        if (!key) continue;
        cells[partition_of(schema->partitioning, key->row)].put(it->first.bytes, it->second.expires_at,
                                                                it->second.value());
      }
      if (c->done || c->last.empty()) break;
      after = c->last;
    }
  }
  // 2. The new partitions, under a new uid, durable before the catalog names them (those
  // without cells have no tables yet, and read as empty).
  schema->uid = next_uid_++;
  if (persistence_ != nullptr) {
    status st;
    for (std::uint32_t j = 0; j < m && st; ++j) st = persistence_->write_copy(schema->uid, j, cells[j]);
    if (st) st = write_schema(*schema);
    if (!st) {
      std::vector<std::uint32_t> all(m);
      for (std::uint32_t j = 0; j < m; ++j) all[j] = j;
      persistence_->drop_partitions(schema->uid, all, was.name);
      unfreeze();
      return st;
    }
  }
  schema->version = next_version_++;
  auto rt = std::make_shared<table_runtime>();
  rt->schema = schema;
  for (std::uint32_t j = 0; j < m; ++j) {
    auto mem = std::make_shared<std::unique_ptr<memtable>>(std::make_unique<memtable>(&partitions_.memory()));
    for (auto it = cells[j].begin(); it != cells[j].end(); ++it) {
      auto key = decode_cell_key(it->first.bytes);
      (*mem)->load(key->family, cell_key{std::move(key->row), std::move(key->qualifier), key->ts},
                   cell_value{short_bytes(it->second.value()), it->second.expires_at});
    }
    cells[j] = delta_map();
    rt->partitions.push_back(partitions_.start(schema, j, std::move(mem)));
  }
  publish_one(was.name, rt);
  // 3. The old partitions pass what they held, and what still reaches them, to the new
  // ones; their cells go.
  std::vector<std::uint32_t> ids;
  for (const auto& f : was.families) ids.push_back(f.id);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto& p = old->partitions[i];
    auto [lo, hi] = range_of(was.partitioning.bounds, i);
    partition_ref fwd;
    fwd.actor = spawn_reshape_forwarder(sys, rt, std::move(lo), std::move(hi));
    (void)ask_one<admin_reply>(sys, p.actor, handoff_request{caf::actor_cast<caf::actor>(fwd.actor)});
    (void)ask_one<admin_reply>(sys, p.actor, drop_families_request{ids});
    linger(p);
    linger(fwd);
  }
  if (persistence_ != nullptr) {
    std::vector<std::uint32_t> all(n);
    for (std::uint32_t i = 0; i < n; ++i) all[i] = i;
    persistence_->drop_partitions(was.uid, all, was.name);
  }
  spdlog::info("cellar: '{}' now has {} partitions (was {})", was.name, m, n);
  return status::ok();
}

}  // namespace cellar::detail
