// store/data_path.cc: the checks every batch passes and its hand-off to the dispatcher.
// open_scan is in scanner.cc, beside the scan it starts.
#include "store/data_path.h"

#include <algorithm>
#include <map>

#include "catalog/hbase_options.h"
#include "model/validate.h"
#include "route/router.h"

namespace cellar::detail {

namespace {

// The index of the first action that writes; ops.size() when none does.
std::size_t first_write(const std::vector<batch_op>& ops) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (!std::holds_alternative<get>(ops[i])) return i;
  return ops.size();
}

}  // namespace

data_path::data_path(catalog_service& catalog, cluster_state& cluster, caf::actor_system& system,
                     std::shared_ptr<dispatch_stats> stats)
    : catalog_(catalog), cluster_(cluster), system_(system), stats_(std::move(stats)) {}

runtime_ptr data_path::lookup_current(std::string_view table) const {
  auto rt = catalog_.lookup(table);
  // A table this node does not know, or knows as disabled, may have been created or enabled
  // through another node a moment ago (a DDL returns once the node that ran it applied it):
  // such an answer is given only after catching up with the cluster's catalog.
  if ((rt && !rt->schema->disabled) || !cluster_.member() || closed_.load(std::memory_order_acquire)) return rt;
  if (auto hooks = cluster_.hooks(); hooks && hooks->catch_up()) rt = catalog_.lookup(table);
  return rt;
}

status data_path::missing(std::string_view table) const {
  if (closed_.load(std::memory_order_acquire)) return {code::unavailable, "the store is closed"};
  return {code::table_not_found, "table '" + std::string(table) + "' does not exist"};
}

bool data_path::admit(const runtime_ptr& rt, std::string_view name, std::vector<batch_op>& ops,
                      std::vector<op_result>& results) const {
  if (auto not_ready = cluster_.ready(); !not_ready.is_ok()) {  // a cluster member that has not joined
    results.resize(ops.size());
    for (auto& r : results) r.st = not_ready;
    return false;
  }
  if (cluster_.writes_refused() &&
      std::any_of(ops.begin(), ops.end(), [](const batch_op& op) { return !std::holds_alternative<get>(op); })) {
    results.resize(ops.size());
    for (auto& r : results)
      r.st = {code::unavailable,
              "this node lost its ZooKeeper session: it takes no writes until it has rejoined "
              "and re-read the placement map"};
    return false;
  }
  status bad;
  std::size_t bad_index = 0;
  if (!rt) {
    bad = missing(name);
  } else if (rt->schema->disabled) {
    bad = table_disabled_error(name);
  } else if (read_only(rt->schema->attributes) && (bad_index = first_write(ops)) < ops.size()) {
    bad = {code::table_read_only,
           "table '" + std::string(name) + "' is read-only (READONLY => true); writes are refused"};
  } else {
    for (std::size_t i = 0; i < ops.size() && bad.is_ok(); ++i) {
      bad = validate(*rt->schema, ops[i]);
      bad_index = i;
    }
    if (bad.is_ok() && !ops.empty() && rt->partitions.empty())
      bad = {code::family_not_found, "table group '" + std::string(name) + "' has no column family yet"};
  }
  if (bad.is_ok()) return true;
  results.resize(ops.size());
  // A read-only table refuses every write of the batch (so the whole batch).
  const bool refused_write = bad.code() == code::table_read_only;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const bool own =
        i == bad_index || !rt || rt->schema->disabled || (refused_write && !std::holds_alternative<get>(ops[i]));
    results[i].st = own ? bad
                        : status{code::aborted, "not applied: action #" + std::to_string(bad_index) +
                                                    " of the batch is invalid (" + bad.to_string() + ")"};
  }
  return false;
}

std::optional<std::vector<op_result>> data_path::run_batch(std::string_view table, std::vector<batch_op> ops,
                                                           const std::shared_ptr<call_order>& order, bool in_place,
                                                           batch_done done) {
  auto rt = lookup_current(table);
  std::vector<op_result> refused;
  if (!admit(rt, table, ops, refused)) return refused;
  return dispatch_batch(context(order, in_place), *rt, std::move(ops), std::move(done));
}

std::vector<std::pair<std::uint32_t, status>> data_path::not_owned(const table_runtime& rt,
                                                                   const std::vector<batch_op>& ops) {
  std::vector<std::pair<std::uint32_t, status>> out;
  if (!cluster_.member() || !rt.schema->partitioned || rt.partitions.empty()) return out;
  auto hooks = cluster_.hooks();
  if (!hooks) return out;
  std::map<std::uint32_t, status> refused;  // by partition: one NOT_OWNER each
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    const auto p = partition_of(rt.schema->partitioning, row_of(ops[i]));
    if (p >= rt.partitions.size() || rt.partitions[p].local || rt.partitions[p].replica_here) continue;
    auto it = refused.find(p);
    if (it == refused.end()) it = refused.emplace(p, hooks->not_owner(rt.schema->name, p)).first;
    out.emplace_back(i, it->second);
  }
  return out;
}

bool data_path::read_views(std::string_view table, table_lookup_cache& cache, const batch_op& op,
                           const std::shared_ptr<call_order>& order, std::vector<read_cell_view>& scratch,
                           local_partition::views_fn use, void* arg) {
  const get* g = std::get_if<get>(&op);
  if (g == nullptr || g->options.filter || g->exists_only_ || !cluster_.ready().is_ok()) return false;
  const runtime_ptr& rt = catalog_.lookup(table, cache);
  if (!rt || rt->schema->disabled || rt->partitions.empty() || !validate(*rt->schema, op).is_ok()) return false;
  return read_views_in_place(context(order, true), *rt, *g, scratch, use, arg);
}

bool data_path::write_in_place(std::string_view table, table_lookup_cache& cache, batch_request& req,
                               const std::shared_ptr<call_order>& order, batch_reply& out) {
  if (req.ops.size() != 1 || std::holds_alternative<get>(req.ops[0])) return false;
  const runtime_ptr& rt = catalog_.lookup(table, cache);
  // run_batch's own checks; a refusal is left to run_batch, which answers it.
  std::vector<op_result> refused;
  if (!admit(rt, table, req.ops, refused)) return false;
  req.schema_version = rt->schema->version;
  return detail::write_in_place(context(order, true), *rt, req, out);
}

local_partition* data_path::local_partition_of(std::string_view table, table_lookup_cache& cache, std::string_view row,
                                               std::vector<runtime_ptr>& keep) const {
  const runtime_ptr& rt = catalog_.lookup(table, cache);
  if (!rt || rt->schema->disabled) return nullptr;
  local_partition* part = detail::local_partition_of(*rt, row);
  if (part != nullptr && (keep.empty() || keep.back() != rt)) keep.push_back(rt);
  return part;
}

}  // namespace cellar::detail
