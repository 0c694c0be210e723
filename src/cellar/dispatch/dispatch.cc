#include "dispatch/dispatch.h"

#include <thread>

#include <algorithm>

#include "route/router.h"

namespace cellar::detail {

bool writes_any(const std::vector<batch_op>& ops) {
  for (const auto& op : ops)
    if (!std::holds_alternative<get>(op)) return true;
  return false;
}

namespace {

std::vector<op_result> failed(std::size_t n, const status& st) {
  std::vector<op_result> out(n);
  for (auto& r : out) r.st = st;
  return out;
}

// A batch over several partitions: the results fill in as parts finish. `pending` counts
// unfinished parts plus one held by the dispatching thread until it has started them all,
// so the last one to finish (a part, or the dispatcher) is known.
struct batch_call {
  std::vector<op_result> results;
  std::atomic<std::uint32_t> pending{1};
  batch_done done;

  void part_done() {
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) done(std::move(results));
  }
};

// One partition's part on its way.
struct part {
  const partition_ref* ref;
  std::vector<std::uint32_t> indices;  // into the batch, in batch order
  batch_request req;
  bool writes = false;
};

// Runs `p` in place if the caller, the ordering rule and the partition allow it. Returns
// local_partition::outcome::after_sync when the reply comes later through `durable`.
local_partition::outcome try_in_place(const dispatch_context& ctx, part& p, batch_reply& out,
                                      const log_stream::durable_fn& durable) {
  if (!ctx.in_place || !p.ref->local || !ctx.order->may_run_now(p.ref->id, p.writes))
    return local_partition::outcome::declined;
  return p.ref->local->try_run(p.req, out, durable);
}

// Sends `p` to its partition's actor; `finish` gets the reply's results.
template <class Finish>
void send(const dispatch_context& ctx, part& p, Finish finish) {
  ctx.order->enter(p.ref->id, p.writes);
  ctx.stats->queued.fetch_add(1, std::memory_order_relaxed);
  ctx.stats->in_flight.fetch_add(1, std::memory_order_relaxed);
  const auto n = p.req.ops.size();
  ask<batch_reply>(*ctx.system, p.ref->actor, std::move(p.req),
                   [order = ctx.order, stats = ctx.stats, id = p.ref->id, writes = p.writes, n,
                    finish = std::move(finish)](result<batch_reply> r) mutable {
                     order->leave(id, writes);
                     stats->in_flight.fetch_sub(1, std::memory_order_relaxed);
                     if (r)
                       finish(std::move(r->results));
                     else
                       finish(failed(n, r.error()));
                   });
}

// The whole batch falls in one partition: no shared state unless the part has to wait.
std::optional<std::vector<op_result>> dispatch_one(const dispatch_context& ctx, part& p, batch_done& done) {
  batch_reply out;
  if (ctx.in_place && p.writes && p.ref->local && p.ref->local->acknowledges_after_log()) {
    // log, log-sync: a write run here is answered once its record is in the log.
    auto held = std::make_shared<batch_reply>();
    auto outcome = try_in_place(ctx, p, *held, [held, done](const status& st) {
      if (!st) fail_all(held->results, st);
      done(std::move(held->results));
    });
    if (outcome == local_partition::outcome::done) {
      ctx.stats->in_place.fetch_add(1, std::memory_order_relaxed);
      return std::move(held->results);
    }
    if (outcome == local_partition::outcome::after_sync) {
      ctx.stats->in_place.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
  } else if (try_in_place(ctx, p, out, nullptr) == local_partition::outcome::done) {
    ctx.stats->in_place.fetch_add(1, std::memory_order_relaxed);
    return std::move(out.results);
  }
  send(ctx, p, std::move(done));
  return std::nullopt;
}

// Gets over several partitions, every one of them allowed in place and free: read straight
// into the results, partition by partition (each under its shared lock, so one partition's
// rows are read in one state of it), without splitting the batch into requests. Nullopt if
// any partition declines; the caller then dispatches the batch as usual (reads change
// nothing, so what was read is simply read again).
std::optional<std::vector<op_result>> read_in_place(const dispatch_context& ctx, const table_runtime& rt,
                                                    const std::vector<batch_op>& ops,
                                                    const std::vector<std::uint32_t>& where) {
  const auto n = ops.size();
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return where[a] < where[b]; });
  std::vector<op_result> results(n);
  std::uint64_t parts = 0;
  for (std::size_t k = 0; k < n;) {
    const auto p = where[order[k]];
    std::size_t e = k;
    while (e < n && where[order[e]] == p) ++e;
    const auto& ref = rt.partitions[p];
    if (!ref.local || !ctx.order->may_run_now(ref.id, false) ||
        !ref.local->try_read_into(rt.schema->version, ops, order.data() + k, e - k, results))
      return std::nullopt;
    ++parts;
    k = e;
  }
  ctx.stats->in_place.fetch_add(parts, std::memory_order_relaxed);
  return results;
}

}  // namespace

bool read_views_in_place(const dispatch_context& ctx, const table_runtime& rt, const get& g,
                         std::vector<read_cell_view>& scratch, local_partition::views_fn use, void* arg) {
  if (!ctx.in_place || rt.partitions.empty()) return false;
  const auto& ref = rt.partitions[partition_of(rt.schema->partitioning, g.row)];
  if (!ref.local || !ctx.order->may_run_now(ref.id, false)) return false;
  if (!ref.local->try_read_views(rt.schema->version, g, scratch, use, arg)) return false;
  ctx.stats->note();
  ctx.stats->in_place.fetch_add(1, std::memory_order_relaxed);
  return true;
}

local_partition* local_partition_of(const table_runtime& rt, std::string_view row) {
  if (rt.partitions.empty()) return nullptr;
  return rt.partitions[partition_of(rt.schema->partitioning, row)].local.get();
}

bool write_in_place(const dispatch_context& ctx, const table_runtime& rt, batch_request& req, batch_reply& out) {
  if (!ctx.in_place || rt.partitions.empty() || req.ops.size() != 1) return false;
  const auto& ref = rt.partitions[partition_of(rt.schema->partitioning, row_of(req.ops[0]))];
  if (!ref.local || ref.local->acknowledges_after_log() || !ctx.order->may_run_now(ref.id, true)) return false;
  out.results.clear();
  if (ref.local->try_run(req, out, nullptr) != local_partition::outcome::done) return false;
  ctx.stats->note();
  ctx.stats->in_place.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::optional<std::vector<op_result>> dispatch_batch(const dispatch_context& ctx, const table_runtime& rt,
                                                     std::vector<batch_op> ops, batch_done done) {
  ctx.stats->note();
  const auto n = ops.size();
  if (n == 0) return std::vector<op_result>{};
  if (rt.partitions.empty()) return failed(n, {code::family_not_found, "table group has no column family yet"});
  const auto& spec = rt.schema->partitioning;
  const auto version = rt.schema->version;

  // Route: the partition of every action.
  std::vector<std::uint32_t> where(n);
  bool one = true;
  for (std::size_t i = 0; i < n; ++i) {
    where[i] = partition_of(spec, row_of(ops[i]));
    one = one && where[i] == where[0];
  }
  if (one) {
    part p{&rt.partitions[where[0]], {}, batch_request{version, std::move(ops)}, false};
    p.writes = writes_any(p.req.ops);
    return dispatch_one(ctx, p, done);
  }
  if (ctx.in_place && !writes_any(ops))
    if (auto read = read_in_place(ctx, rt, ops, where)) return read;

  // Parts in order of first appearance, each sized exactly (a batch_op is large to move).
  std::vector<part> parts;
  std::vector<std::int32_t> slot(rt.partitions.size(), -1);
  std::vector<std::uint32_t> sizes;
  for (std::uint32_t i = 0; i < n; ++i) {
    auto& s = slot[where[i]];
    if (s < 0) {
      s = static_cast<std::int32_t>(sizes.size());
      sizes.push_back(0);
    }
    ++sizes[static_cast<std::size_t>(s)];
  }
  parts.reserve(sizes.size());
  for (auto& s : slot) s = -1;
  for (std::uint32_t i = 0; i < n; ++i) {
    auto& s = slot[where[i]];
    if (s < 0) {
      s = static_cast<std::int32_t>(parts.size());
      parts.push_back(part{&rt.partitions[where[i]], {}, batch_request{version, {}}, false});
      parts.back().indices.reserve(sizes[parts.size() - 1]);
      parts.back().req.ops.reserve(sizes[parts.size() - 1]);
    }
    auto& p = parts[static_cast<std::size_t>(s)];
    p.indices.push_back(i);
    p.writes = p.writes || !std::holds_alternative<get>(ops[i]);
    p.req.ops.push_back(std::move(ops[i]));
  }

  auto call = std::make_shared<batch_call>();
  call->results.resize(n);
  call->done = std::move(done);
  auto scatter = [call](const std::vector<std::uint32_t>& indices, std::vector<op_result> results) {
    for (std::size_t k = 0; k < indices.size() && k < results.size(); ++k)
      call->results[indices[k]] = std::move(results[k]);
  };
  const bool log_sync_writes = ctx.in_place;  // asked per part below
  for (auto& p : parts) {
    call->pending.fetch_add(1, std::memory_order_relaxed);
    // A reply that may be delivered later (a logged write) lives with its callback; any other
    // is complete when try_in_place returns.
    batch_reply here;
    std::shared_ptr<batch_reply> held;
    log_stream::durable_fn durable;
    if (log_sync_writes && p.writes && p.ref->local && p.ref->local->acknowledges_after_log()) {
      held = std::make_shared<batch_reply>();
      durable = [call, held, scatter, indices = p.indices](const status& st) {
        if (!st) fail_all(held->results, st);
        scatter(indices, std::move(held->results));
        call->part_done();
      };
    }
    batch_reply& out = held ? *held : here;
    switch (try_in_place(ctx, p, out, durable)) {
      case local_partition::outcome::done:
        ctx.stats->in_place.fetch_add(1, std::memory_order_relaxed);
        scatter(p.indices, std::move(out.results));
        call->part_done();
        break;
      case local_partition::outcome::after_sync: ctx.stats->in_place.fetch_add(1, std::memory_order_relaxed); break;
      case local_partition::outcome::declined:
        send(ctx, p, [call, scatter, indices = p.indices](std::vector<op_result> r) {
          scatter(indices, std::move(r));
          call->part_done();
        });
        break;
    }
  }
  // The dispatcher's own count: if every part has finished, the results are the caller's.
  if (call->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) return std::move(call->results);
  return std::nullopt;
}

bool wait_until_idle(dispatch_stats& stats, int windows, std::chrono::milliseconds window,
                     const std::function<bool()>& give_up) {
  for (int idle = 0; idle < windows;) {
    if (give_up()) return false;
    stats.seen.store(false, std::memory_order_relaxed);
    std::this_thread::sleep_for(window);
    const bool busy = stats.seen.load(std::memory_order_relaxed) || stats.in_flight.load(std::memory_order_relaxed) > 0;
    idle = busy ? 0 : idle + 1;
  }
  return true;
}

}  // namespace cellar::detail
