// dispatch/dispatch.h: how a batch reaches its partitions.
//
// A table group's partitions are reached through `partition_ref`s: the actor (the typed
// protocol of partition/protocol.h, in this process or on another node) and, for a partition
// of this process, its in-place path. `dispatch_batch` splits a batch by partition (the
// router), and for each partition's part either runs it in place, when the caller allows
// it and the ordering rule (dispatch/call_order.h) and the partition (free this instant) both
// do, or sends it to the partition's actor. Every front end (the embedded API, RPC, frames,
// the scanner's pages) goes through here, so the ordering rule is applied in one place.
//
// Thread safety: any thread may dispatch; completions run on the thread that finishes the
// last part (the caller's, a partition's worker, or the log's writer in log-sync mode).
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/ops.h"
#include "dispatch/call_order.h"
#include "partition/partition.h"
#include "partition/protocol.h"

namespace cellar::detail {

struct partition_ref {
  partition_actor actor;
  std::shared_ptr<local_partition> local;  // null: the partition lives on another node
  partition_id id;
  // A replicated partition (cluster/replica_host.h) with a replica on this node: `actor` is
  // its replica router, which serves it here (following its leader) though `local` is null.
  bool replica_here = false;
  // Set in a cluster (member.cc): shared by every copy of this ref, it stops `actor` when
  // the last copy goes, that is when no runtime a client may still hold names the actor.
  // A partition replaced by a move or a placement change keeps serving (forwarding)
  // requests sent through a runtime loaded just before the change, instead of refusing
  // them as a stopped actor would.
  std::shared_ptr<const void> stop_when_released;
};

// A table group as the router sees it: its schema and its partitions, in partition order
// (empty until the group's first family fixes its partition rule). Immutable once
// published: DDL builds a new one.
struct table_runtime {
  schema_ptr schema;
  std::vector<partition_ref> partitions;
};

using runtime_ptr = std::shared_ptr<const table_runtime>;

// What the dispatcher has seen: how parts ran (for metrics and tests), and whether data
// calls are coming in (the snapshot's helper threads work only while none are).
struct dispatch_stats {
  std::atomic<std::uint64_t> in_place{0};  // parts run on the caller's thread
  std::atomic<std::uint64_t> queued{0};    // parts sent to a partition's actor
  std::atomic<int> in_flight{0};           // parts sent and not yet answered
  std::atomic<bool> seen{false};           // a data call since the flag was last cleared

  void note() {
    if (!seen.load(std::memory_order_relaxed)) seen.store(true, std::memory_order_relaxed);
  }
};

// Returns true once `windows` windows of `window` in a row have passed with no data call
// and, at each window's end, none in flight; false as soon as `give_up()` says so. (The
// snapshot's helper threads write only while the store is idle.) Clears stats.seen.
bool wait_until_idle(dispatch_stats& stats, int windows, std::chrono::milliseconds window,
                     const std::function<bool()>& give_up);

using batch_done = std::function<void(std::vector<op_result>)>;

struct dispatch_context {
  caf::actor_system* system = nullptr;
  std::shared_ptr<call_order> order;  // the caller's
  std::shared_ptr<dispatch_stats> stats;
  bool in_place = true;  // the caller allows running parts on its thread
};

// Runs `ops` (already checked against rt.schema) on their partitions: the actions that fall
// in one partition run there in batch order as one unit; partitions are independent.
// Returns the results, in action order, when every part has finished by the time it
// returns; then `done` is never called. Otherwise returns nullopt and `done` is called
// exactly once with the results, from whichever thread finishes last (possibly before this
// returns).
std::optional<std::vector<op_result>> dispatch_batch(const dispatch_context& ctx, const table_runtime& rt,
                                                     std::vector<batch_op> ops, batch_done done);

// A get (already checked against rt.schema; no filter, not exists_only) read in place
// when the caller, the ordering rule and its partition allow it now, its cells handed to
// `use` as views (local_partition::try_read_views). False: nothing was read (then
// dispatch_batch).
bool read_views_in_place(const dispatch_context& ctx, const table_runtime& rt, const get& g,
                         std::vector<read_cell_view>& scratch, local_partition::views_fn use, void* arg);

// The partition of `row` in `rt` when this process holds it, null otherwise: for hints
// such as local_partition::prefetch_row. It lives as long as `rt` does. Checks nothing.
local_partition* local_partition_of(const table_runtime& rt, std::string_view row);

// A batch of one write (already checked against rt.schema and stamped with its version) run
// in place when the caller, the ordering rule and its partition allow it now and the
// partition answers at once (not in log or log-sync mode): its result in out.results. `req`
// is not consumed. False: nothing ran (then dispatch_batch).
bool write_in_place(const dispatch_context& ctx, const table_runtime& rt, batch_request& req, batch_reply& out);

// Whether a batch part changes anything (for the ordering rule).
bool writes_any(const std::vector<batch_op>& ops);

// Sends `make(i)` to every partition of `rt` and waits for every reply; replies are in
// partition order, each a value or UNAVAILABLE.
template <class Reply, class Make>
std::vector<result<Reply>> ask_all(caf::actor_system& sys, const table_runtime& rt, Make make);

}  // namespace cellar::detail

#include "dispatch/dispatch_inl.h"
