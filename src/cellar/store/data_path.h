// store/data_path.h: how every data call reaches the partitions.
//
// Every front end (the embedded API, the RPC server's two protocols, the scanner) calls
// run_batch and open_scan, which check a call against the catalog (the table, its state,
// every action) and hand it to the dispatcher (dispatch/dispatch.h) with the caller's
// call_order (docs/concurrency.md). The frames protocol also reads and writes single
// rows through read_views / write_in_place, which run the same checks and the same
// in-place path and decline (running nothing) whenever they cannot.
//
// Thread safety: every call may be made from any thread, concurrently; each caller passes
// its own call_order and table_lookup_cache.
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "cellar/store.h"
#include "dispatch/call_order.h"
#include "dispatch/dispatch.h"
#include "route/scan_scope.h"
#include "store/catalog_service.h"
#include "store/cluster_state.h"

namespace cellar::detail {

class data_path {
 public:
  // All must outlive the data path.
  data_path(catalog_service& catalog, cluster_state& cluster, caf::actor_system& system,
            std::shared_ptr<dispatch_stats> stats);
  data_path(const data_path&) = delete;
  data_path& operator=(const data_path&) = delete;

  // Checks every action of a batch of `table` (a bad one refuses the whole batch: it gets
  // its error, the others ABORTED) and dispatches it for `order` (dispatch/dispatch.h: the
  // results now, or nullopt and `done` later). `in_place`: the caller lets parts run on
  // its thread.
  std::optional<std::vector<op_result>> run_batch(std::string_view table, std::vector<batch_op> ops,
                                                  const std::shared_ptr<call_order>& order, bool in_place,
                                                  batch_done done);
  // A scan of `table` whose pages are fetched for `order` (in place when it allows), over
  // the partitions of `scope` that its range touches. A partition number out of range is
  // INVALID_ARGUMENT; with scope.no_forward a cluster member answers NOT_OWNER when
  // another node owns a partition the scan would visit.
  result<scanner> open_scan(std::string_view table, const cellar::scan& s, const std::shared_ptr<call_order>& order,
                            const scan_scope& scope = {});

  // For a cluster member asked not to forward (wire: noForward): the actions of `ops` that
  // fall in partitions of `rt` another node owns, with their NOT_OWNER (cluster_hooks::
  // not_owner, once per partition), in action order. Empty when this node owns them all,
  // or is not a cluster member.
  std::vector<std::pair<std::uint32_t, status>> not_owned(const table_runtime& rt, const std::vector<batch_op>& ops);

  // `op`, a get of `table` without a filter and not exists_only, that passes run_batch's
  // checks, read in place now for `order` (dispatch/dispatch.h: read_views_in_place): its
  // cells go to `use` as views. False, having read nothing, for anything else (the
  // caller then calls run_batch, which answers it, errors included).
  bool read_views(std::string_view table, table_lookup_cache& cache, const batch_op& op,
                  const std::shared_ptr<call_order>& order, std::vector<read_cell_view>& scratch,
                  local_partition::views_fn use, void* arg);
  // `req`, a batch of one write action of `table` that passes run_batch's checks, run in
  // place now for `order` (dispatch/dispatch.h: write_in_place): its result in out.results.
  // `req` is not consumed: its action's storage can serve the caller's next one. False,
  // having run nothing, for anything else (the caller then calls run_batch).
  bool write_in_place(std::string_view table, table_lookup_cache& cache, batch_request& req,
                      const std::shared_ptr<call_order>& order, batch_reply& out);
  // Where a point operation on `row` of `table` would find its row when this process
  // holds the row's partition, for hints only (local_partition::prefetch_row); null for
  // an unknown or disabled table or a partition of another node. Nothing is checked or
  // changed. The partition lives while the table's runtime does: unless `keep` already
  // ends with that runtime, it is appended there.
  local_partition* local_partition_of(std::string_view table, table_lookup_cache& cache, std::string_view row,
                                      std::vector<runtime_ptr>& keep) const;

  // The runtime of `table` now, or null (catalog_service::lookup). Never blocks.
  runtime_ptr lookup(std::string_view table) const { return catalog_.lookup(table); }
  // The runtime of `table` (catalog_service::lookup); in a cluster, once more after the
  // member has caught up with the cluster's catalog when this node does not know it yet or
  // knows it as disabled. Blocks on such a miss: not on a CAF worker.
  runtime_ptr lookup_current(std::string_view table) const;
  // The error of a call naming `table`, which lookup did not find.
  status missing(std::string_view table) const;
  bool cluster_member() const { return cluster_.member(); }

  // How data calls ran, and whether any came lately (the snapshot reads it).
  const std::shared_ptr<dispatch_stats>& stats() const { return stats_; }
  // The embedded API is one caller: its calls keep their order per partition.
  const std::shared_ptr<call_order>& embedded_order() const { return embedded_order_; }
  // Every call after this answers UNAVAILABLE ("the store is closed").
  void close() { closed_.store(true, std::memory_order_release); }

 private:
  dispatch_context context(const std::shared_ptr<call_order>& order, bool in_place) {
    return {&system_, order, stats_, in_place};
  }
  // Checks every action; on the first failure fills every result and returns false.
  bool admit(const runtime_ptr& rt, std::string_view name, std::vector<batch_op>& ops,
             std::vector<op_result>& results) const;
  result<std::vector<std::uint32_t>> scan_partitions(const table_runtime& rt, std::string_view low,
                                                     std::string_view high, bool empty, const scan_scope& scope);

  catalog_service& catalog_;
  cluster_state& cluster_;
  caf::actor_system& system_;
  const std::shared_ptr<dispatch_stats> stats_;
  const std::shared_ptr<call_order> embedded_order_ = std::make_shared<call_order>();
  std::atomic<bool> closed_{false};
};

}  // namespace cellar::detail
