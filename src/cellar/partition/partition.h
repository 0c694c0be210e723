// partition/partition.h: one partition of a table group, and its owner.
//
// A partition holds every family's cells for its rows (a memtable), the schema it runs
// with, its stream in the node's redo log, its account in the node's memory pool and the
// clock it is given (partition_config): everything it needs, so the same code serves a
// partition on any node. It answers the requests of partition/protocol.h.
//
// Ownership and concurrency (docs/concurrency.md has the whole model):
//  - The partition's actor owns it. The actor handles one request at a time, so whatever
//    one request does is atomic: a multi-row, multi-family batch part is one local
//    transaction (OBKV's node-level transaction).
//  - The in-place path: a caller in this process may run a request on its own thread,
//    through `local_partition`, when the partition is free at that instant. It runs the
//    same code under the partition's lock, which the actor also holds while it handles a
//    request, so an in-place request is atomic in exactly the same way and sees the
//    partition between two requests. Reads share the lock with each other; writes and the
//    actor take it alone. The caller decides whether it may use the in-place path at all
//    (the ordering rule, dispatch/call_order.h); the partition only says whether it is free.
//  - Nobody else touches a partition's memtable.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "catalog/catalog.h"
#include "partition/log_stream.h"
#include "partition/memory_budget.h"
#include "partition/memtable.h"
#include "partition/protocol.h"
#include "partition/rw_lock.h"

namespace cellar::detail {

struct partition_config {
  schema_ptr schema;
  std::uint32_t index = 0;  // the partition's number in its table group
  // The cells recovered for this partition (else it starts empty). Taken at start.
  std::shared_ptr<std::unique_ptr<memtable>> recovered;
  bool track_delta = false;                           // keep the changes since the last cut (persistent stores)
  log_stream log;                                     // disabled: no log
  memory_pool* memory = nullptr;                      // null: no limit
  std::function<std::int64_t()> clock;                // milliseconds since the epoch
  std::chrono::milliseconds maintenance_interval{0};  // zero: no background reclamation
  std::size_t maintenance_slice = 4096;
};

// The state of one partition and the code that answers its requests. Whoever calls it
// holds the partition (its actor, or an in-place caller under local_partition's lock).
class partition {
 public:
  explicit partition(partition_config cfg);
  partition(const partition&) = delete;
  partition& operator=(const partition&) = delete;

  const partition_config& config() const { return cfg_; }
  std::uint64_t schema_version() const { return cfg_.schema ? cfg_.schema->version : 0; }

  // Runs the actions of `r` in order as one unit (one failing undoes the others, which
  // answer ABORTED) and logs what they changed. Returns whether a record was logged (log
  // and log-sync modes): the reply must then wait until `durable` runs, and holds the record's
  // failure if `durable` gets one. A log that failed refuses writes before they are
  // applied, and a record the log refuses fails every action: neither is acknowledged
  // (redo_log.h).
  bool run(batch_request& r, batch_reply& out, log_stream::durable_fn durable);
  // A request of gets only, run without changing anything (safe under a shared lock).
  void read(const batch_request& r, batch_reply& out) const;
  // The gets ops[indices[0..n)] (each a get), read into results[indices[k]]; as read().
  void read_into(const std::vector<batch_op>& ops, const std::uint32_t* indices, std::size_t n,
                 std::vector<op_result>& results) const;
  scan_reply scan(const scan_request& r) const;
  // The cells of `g` (no filter, not exists_only) as views into the memtable; returns
  // whether any matched.
  bool read_views(const get& g, std::vector<read_cell_view>& out) const;
  // memtable::prefetch_row.
  void prefetch_row(std::string_view row, cell_map::prefetch_step step) const { mem_->prefetch_row(row, step); }

  void adopt(table_schema s);
  void drop_families(const std::vector<std::uint32_t>& ids);
  std::uint64_t reclaim_all();
  // One bounded slice of background reclamation.
  void reclaim_slice();
  memtable_stats stats() const { return mem_->stats(); }
  delta_handle cut();
  void merge(delta_handle older);
  // A step of a move (protocol.h: move_request); freeze only sets `frozen`, the actor
  // holds what comes after.
  move_reply move(move_request& r);
  // Frozen by a move: the in-place path runs no write.
  bool frozen() const { return frozen_; }

 private:
  // UNAVAILABLE for every action if the request was checked against a schema this
  // partition has not adopted yet.
  bool stale(std::uint64_t version, std::size_t n, batch_reply& out) const;

  partition_config cfg_;
  std::unique_ptr<memtable> mem_;
  bool frozen_ = false;
};

// What a partition of this process lets other threads do: run a request in place when the
// partition is free at that instant. Every call either runs the request exactly as the
// actor would, or declines and changes nothing.
class local_partition {
 public:
  enum class outcome {
    done,        // ran; `out` holds the reply
    after_sync,  // ran; `out` holds the reply, to be given once `durable` runs (logged)
    declined,    // the partition is busy, gone, or has not adopted the request's schema
  };

  // A batch: gets under the lock shared with other readers, anything else alone.
  outcome try_run(batch_request& r, batch_reply& out, const log_stream::durable_fn& durable);
  // Gets of a batch that has not been split into requests (ops[indices[0..n)], checked
  // against schema version `schema_version`), read into results[indices[k]] under the
  // lock shared with other readers. False: declined, nothing read.
  bool try_read_into(std::uint64_t schema_version, const std::vector<batch_op>& ops, const std::uint32_t* indices,
                     std::size_t n, std::vector<op_result>& results);
  // One scan page, under the lock shared with other readers.
  bool try_scan(const scan_request& r, scan_reply& out);
  // One get (no filter, not exists_only; checked against schema version
  // `schema_version`) read under the lock shared with other readers: `use(arg, exists,
  // cells)` is called with its cells as views, valid during the call only, and the
  // family names of the partition's schema. False: declined, nothing read.
  using views_fn = void (*)(void* arg, bool exists, const std::vector<read_cell_view>& cells);
  bool try_read_views(std::uint64_t schema_version, const get& g, std::vector<read_cell_view>& scratch, views_fn use,
                      void* arg);
  // A hint that a point operation on `row` follows soon: under the lock shared with other
  // readers, if it is free at once, starts step `step` of loading what its row lookup
  // reads (cell_map::prefetch_row). Nothing is read back or changed; skipped when busy.
  void prefetch_row(std::string_view row, cell_map::prefetch_step step);
  // `acknowledges_after_log`: the partition logs (log or log-sync mode): a write run here
  // is answered only once its log record is written (log) or on disk (log-sync).
  explicit local_partition(bool acknowledges_after_log = false) : acks_after_log_(acknowledges_after_log) {}
  bool acknowledges_after_log() const { return acks_after_log_; }

 private:
  friend class partition_owner;
  const bool acks_after_log_;
  rw_lock mu_;
  partition* core_ = nullptr;  // null until the actor started, and once it stopped
};

// Starts the actor of a partition. `local` (may be null) becomes the partition's in-place
// path.
partition_actor spawn_partition(caf::actor_system& sys, partition_config cfg, std::shared_ptr<local_partition> local);

// Every result of `results` becomes `why` (a failure no action of the unit escapes).
void fail_all(std::vector<op_result>& results, const status& why);

// Runs ops[indices...] against `mem` as one unit, as a partition runs the part of a batch
// that falls in it: on the first failure the unit is rolled back and the other actions
// are answered ABORTED. Returns whether the unit was applied.
bool run_actions(memtable& mem, const table_schema& schema, std::vector<batch_op>& ops, std::vector<op_result>& results,
                 std::int64_t now);

}  // namespace cellar::detail
