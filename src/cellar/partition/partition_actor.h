// partition/partition_actor.h: the actor that owns one partition of a table group.
//
// One partition actor exists per (table group, partition). It owns the partition's
// memtable (every family's cells for its rows) and handles one message at a time, so
// everything it does for one message is atomic: a multi-row, multi-family batch part is
// one local transaction, as OBKV's node-level transaction. It holds the partition's
// mutex while it does (partition_shared), only so that other threads may read the
// memtable in place between two messages (table::read_now); every write still goes
// through the actor.
//
// Protocol (typed, see `partition_actor`):
//  - batch_part: run some actions of a client batch, in order, as one unit; write each
//    action's result into the shared batch_state and count the part done.
//  - scan_part: serve one page of a scan.
//  - admin_part: adopt a new schema, drop families, reclaim now, report stats, stop.
//  - tick_atom: a background slice of reclamation (expired cells, extra versions).
//
// Replies travel through the completion objects inside the messages rather than as
// response messages: the embedded caller is a plain thread, and a response message to
// it would need a scoped_actor (a thread wake-up of 50-100 us per call on these machines,
// design.md section 7) or one more actor hop. Every completion object answers exactly
// once: if a message is dropped unprocessed (actor stopped), its destructor answers
// UNAVAILABLE, so no caller ever waits forever.
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/ops.h"
#include "partition/memtable.h"
#include "partition/rw_lock.h"
#include "persist/redo_log.h"

namespace cellar::detail {

// A one-shot flag a thread can block on.
class waiter {
 public:
  void notify() noexcept {
    flag_.store(1, std::memory_order_release);
    flag_.notify_all();
  }
  void wait() const noexcept {
    while (flag_.load(std::memory_order_acquire) == 0) flag_.wait(0, std::memory_order_acquire);
  }

 private:
  std::atomic<std::uint32_t> flag_{0};
};

// One client batch, split over `pending` partitions.
struct batch_state {
  std::vector<batch_op> ops;
  std::vector<op_result> results;
  std::atomic<std::uint32_t> pending{0};
  std::function<void(std::vector<op_result>)> done;  // async callers; else `finished`
  waiter finished;
  std::atomic<int>* in_flight = nullptr;  // the store's count of batches in flight

  void part_done() {
    if (pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (in_flight) in_flight->fetch_sub(1, std::memory_order_relaxed);
    if (done)
      done(std::move(results));
    else
      finished.notify();
  }
};

// The actions of one batch that fall in one partition.
struct batch_part {
  schema_ptr schema;
  std::shared_ptr<batch_state> state;
  std::vector<std::uint32_t> indices;  // into state->ops, in batch order
  bool answered = false;

  batch_part(schema_ptr s, std::shared_ptr<batch_state> st) : schema(std::move(s)), state(std::move(st)) {}
  batch_part(const batch_part&) = delete;
  ~batch_part();  // answers UNAVAILABLE if never run
};

// One page of a scan. `done` runs once, on the thread that answers (a partition's worker,
// or whoever drops the last reference to an unserved request).
struct scan_part {
  schema_ptr schema;
  scan_page_request request;
  scan_page page;
  status st;
  bool answered = false;
  std::function<void(scan_part&)> done;

  scan_part() = default;
  scan_part(const scan_part&) = delete;
  ~scan_part();
  void answer() {
    if (answered) return;
    answered = true;
    if (auto f = std::move(done)) f(*this);
  }
};

// Completion of an admin request sent to every partition of a table group.
struct admin_fanout {
  std::vector<memtable_stats> stats;  // per partition
  std::vector<delta_map> deltas;      // per partition, for a snapshot cut
  std::atomic<std::size_t> reclaimed{0};
  std::atomic<std::uint32_t> pending{0};
  waiter finished;

  explicit admin_fanout(std::uint32_t partitions) : stats(partitions), deltas(partitions), pending(partitions) {}
  void part_done() {
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) finished.notify();
  }
};

struct admin_part {
  enum class kind { adopt_schema, drop_families, reclaim_all, stats, cut, merge_delta, stop };
  kind what;
  schema_ptr schema;
  delta_map delta;  // merge_delta: changes a failed snapshot could not write
  std::vector<std::uint32_t> family_ids;
  std::shared_ptr<admin_fanout> fan;  // may be null: nobody waits
  std::uint32_t partition = 0;
  bool answered = false;

  admin_part(kind k, std::shared_ptr<admin_fanout> f, std::uint32_t p)
      : what(k), fan(std::move(f)), partition(p) {}
  admin_part(const admin_part&) = delete;
  ~admin_part() { answer(); }
  void answer() {
    if (answered) return;
    answered = true;
    if (fan) fan->part_done();
  }
};

using batch_part_ptr = std::shared_ptr<batch_part>;
using scan_part_ptr = std::shared_ptr<scan_part>;
using admin_part_ptr = std::shared_ptr<admin_part>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;

using partition_actor = caf::typed_actor<caf::reacts_to<batch_part_ptr>, caf::reacts_to<scan_part_ptr>,
                                         caf::reacts_to<admin_part_ptr>, caf::reacts_to<tick_atom>>;

// What a partition shares with threads that read it in place (table::read_now): the
// actor holds `mu` exclusively whenever it touches its memtable, and a reader that gets
// `mu` shared at once may read the memtable meanwhile, next to other such readers; one
// that does not goes through the actor. `mem` is null once the actor is gone. The actor
// itself never waits on a reader for longer than one read (readers only try_lock_shared,
// which fails while the actor waits, and never hold `mu` across anything else).
struct partition_shared {
  rw_lock mu;
  memtable* mem = nullptr;
};

struct partition_config {
  schema_ptr schema;
  std::uint32_t partition = 0;
  // Persistence: the memtable recovered for this partition (else a new one), whether to
  // keep a snapshot delta, and the redo log (null: no log).
  std::shared_ptr<std::unique_ptr<memtable>> recovered;
  bool track_delta = false;
  redo_log* log = nullptr;
  bool log_sync = false;
  std::atomic<std::int64_t>* global_bytes = nullptr;
  std::uint64_t memory_limit = 0;
  std::function<std::int64_t()> clock;
  std::chrono::milliseconds maintenance_interval{0};
  std::size_t maintenance_slice = 4096;
  std::shared_ptr<partition_shared> shared;  // may be null: no in-place readers
};

struct partition_state {
  std::unique_ptr<memtable> mem;
  partition_config cfg;

  // Held while a message touches the memtable (see partition_shared).
  std::unique_lock<rw_lock> lock() {
    return cfg.shared ? std::unique_lock<rw_lock>(cfg.shared->mu) : std::unique_lock<rw_lock>();
  }
  partition_state() = default;
  partition_state(const partition_state&) = delete;
  ~partition_state() {
    if (!cfg.shared) return;
    std::lock_guard l(cfg.shared->mu);
    cfg.shared->mem = nullptr;
  }
  static inline const char* name = "cellar.partition";
};

partition_actor::behavior_type partition_behavior(partition_actor::stateful_pointer<partition_state> self,
                                                  partition_config cfg);

// Runs the actions of `part` against `mem` as one unit (exposed for tests).
void run_batch_part(memtable& mem, batch_part& part, std::int64_t now);

// Runs ops[indices...] against `mem` as one unit, as a partition runs the part of a batch
// that falls in it: on the first failure the unit is rolled back and the other actions
// are answered ABORTED. Returns whether the unit was applied.
bool run_actions(memtable& mem, const table_schema& schema, const std::vector<batch_op>& ops,
                 const std::vector<std::uint32_t>& indices, std::vector<op_result>& results, std::int64_t now);

// The log record of what `mem` changed since its redo was last taken (u64 table uid |
// u32 partition | redo); clears the redo.
std::string log_record(memtable& mem, std::uint64_t table_uid, std::uint32_t partition);

}  // namespace cellar::detail

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cellar::detail::batch_part_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cellar::detail::scan_part_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cellar::detail::admin_part_ptr)
