// store/persistence.h: a store's directory: one WiredTiger home with the catalog and the
// partitions' tables, the redo log, and the snapshots that bring those tables up to a
// point-in-time cut of each partition (docs/storage.md).
//
// Recovery (recover(), once, at open): the catalog as last made durable, each partition's
// cells as of the last snapshot, then the redo log since that snapshot replayed on top;
// the store starts its partitions on what it returns.
//
// A snapshot (snapshot()): rotate the log to generation G, cut every partition (an O(1)
// swap of its change delta, inside its actor, so the cut is point-in-time per partition
// and atomic with respect to its batches), write the deltas to WiredTiger, record G,
// checkpoint. Only the checkpoint makes it durable, so a crash at any point before it
// leaves the previous snapshot plus the log intact. Then log generations below G go.
//
// Thread policy (store_options::idle_background_threads): when asked, snapshot threads,
// the memory releaser and WiredTiger's own threads run at idle CPU priority, until the
// store is closing (hurry()).
//
// Thread safety: every call may be made from any thread; snapshots run one at a time,
// and a partition's tables are dropped only between snapshots.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <sys/types.h>
#include <caf/all.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/store.h"
#include "partition/memory_budget.h"
#include "persist/dir_lock.h"
#include "persist/free_memory.h"
#include "persist/redo_log.h"
#include "persist/wt_home.h"
#include "store/catalog_map.h"

namespace cellar::detail {

class memtable;
class delta_map;
struct table_cut;
struct partition_load;

// The catalog key of a namespace's entry is this prefix and its name (a table's key is its
// name, which never starts with a NUL byte).
inline constexpr std::string_view namespace_key_prefix("\0namespace:", 11);

// What a partition holds in WiredTiger, as stored before compression: the bytes of its
// change runs and of its base's records (keys and runs).
struct stored_bytes {
  std::uint64_t runs = 0;
  std::uint64_t base = 0;
};

// Where a partition's changes go (docs/storage.md): into change runs appended to its
// change table, so an incremental snapshot writes about the bytes of its changes; or,
// merged with the runs written so far, into its base, once the runs and this delta would
// reach `merge_fraction` of the base (or the base is empty: a first snapshot is a bulk
// load). Merging rewrites the base's pages the changes fall in (for scattered changes,
// all of them), so each changed byte costs about 1 + 1 / merge_fraction written bytes
// amortised, and recovery reads at most 1 + merge_fraction times the base. All three are
// bytes before compression, so the choice does not depend on how well the files compress.
inline constexpr double merge_fraction = 0.5;
bool merge_into_base_now(std::uint64_t run_bytes, std::uint64_t delta_bytes, std::uint64_t base_bytes);

// One partition's cells as recovered, until its actor takes them.
using recovered_cells = std::shared_ptr<std::unique_ptr<memtable>>;

// What recovery found: the catalog's tables and counters, and each partitioned table's
// cells (by table name, one per partition).
struct recovered_catalog {
  std::vector<table_schema> schemas;
  std::uint64_t next_uid = 1;
  std::uint32_t next_family_id = 1;
  std::map<std::string, std::vector<recovered_cells>> cells;
  // Namespaces written by write_namespace (the built-in ones only when altered).
  std::map<std::string, std::map<std::string, std::string>> namespaces;
};

class store_persistence {
 public:
  // Opens (creating) the WiredTiger home of options.directory, which this process then
  // holds until close() (persist/dir_lock.h: another process's open fails naming it).
  // `memory` and `system` must
  // outlive this; `activity` tells whether data calls are coming in (snapshot helpers work
  // only while none are).
  static result<std::unique_ptr<store_persistence>> open(const store_options& options, memory_pool& memory,
                                                         caf::actor_system& system,
                                                         std::shared_ptr<dispatch_stats> activity);
  ~store_persistence();
  store_persistence(const store_persistence&) = delete;
  store_persistence& operator=(const store_persistence&) = delete;

  // Reads the last snapshot and replays the log since it, then opens a new log generation
  // (log modes). Once, before anything else. Errors: CORRUPTION naming the damaged file
  // (see store_options::salvage), IO_ERROR, UNSUPPORTED (a directory of an older format).
  result<recovered_catalog> recover();
  // What recover() found on disk.
  const recovery_stats& recovered() const { return recovered_; }

  // The redo log partitions append to; null in snapshot mode.
  redo_log* log() const { return log_.get(); }

  // The catalog now, for a snapshot.
  using catalog_source = std::function<std::shared_ptr<const catalog_map>()>;
  // A snapshot of the partitions of the tables `tables()` returns. One runs at a time, and
  // it asks for the catalog once it runs: a table dropped meanwhile (its partitions' tables
  // dropped while no snapshot runs) is not in it, so no write makes its tables again.
  result<snapshot_stats> snapshot(const catalog_source& tables);
  // --- named snapshots kept as WiredTiger checkpoints (docs/backup.md) ------------------
  struct named_cut {
    std::vector<std::string> tables;   // the WiredTiger tables checkpointed
    std::vector<std::uint64_t> cells;  // per partition of the table: its cells at its cut
  };
  // A snapshot as snapshot() takes, then, before another can write, WiredTiger checkpoint
  // `checkpoint` of the tables of partitions [0, partitions) of table `uid`: each partition
  // as its cut left it, sharing its pages with the live tables until they are rewritten.
  // An earlier checkpoint of that name is replaced. Errors: those of snapshot(), IO_ERROR.
  result<named_cut> snapshot_named(const catalog_source& tables, std::uint64_t uid, std::uint32_t partitions,
                                   const std::string& checkpoint);
  // Calls `fn` for every cell of partition `index` of table `uid` as checkpoint `checkpoint`
  // holds it (of its tables, those in `tables`): its base with its change runs applied, in
  // key order, with the expiry and value of each. CORRUPTION when a table lost the
  // checkpoint or holds a malformed cell.
  using cell_fn = std::function<status(std::string_view key, std::int64_t expires_at, std::string_view value)>;
  status read_named(std::uint64_t uid, std::uint32_t index, const std::string& checkpoint,
                    const std::set<std::string>& tables, const cell_fn& fn);
  // Keeps checkpoint `checkpoint` from drop_named while the handle lives: a reader's
  // several read_named calls.
  std::shared_ptr<void> hold_named(const std::string& checkpoint);
  // Drops checkpoint `checkpoint` of `tables` (those that have it). CONFLICT while it is
  // held or read.
  status drop_named(const std::string& checkpoint, const std::vector<std::string>& tables);
  // From now on drop_partitions keeps the tables of every table `keep(uid)` answers true for
  // (a named snapshot holds checkpoints of them): the caller drops them once none does.
  void keep_tables_when(std::function<bool(std::uint64_t uid)> keep);
  // Drops the partition tables of every table incarnation `keep(uid)` answers false for:
  // what a crash left between a catalog change and the drop of the tables it retired (a
  // drop, a split, a restore, the delete of the last snapshot holding them). Once, after
  // recovery, on a store that is not a cluster member, whose tables follow the cluster's
  // catalog instead. Failures are logged (the tables are never read).
  void drop_unnamed_tables(const std::function<bool(std::uint64_t uid)>& keep);

  // Takes a snapshot every options.snapshot_interval of what `tables()` returns then,
  // until stop_periodic() (also called by close()).
  void start_periodic(catalog_source tables);
  void stop_periodic();
  // The store is closing and serves nothing any more: the threads of a snapshot running
  // now, and of every later one, the memory releaser's and WiredTiger's run at normal
  // priority from now on, so the final snapshot does not wait for an idle core.
  void hurry();
  // Drains and syncs the log, then closes WiredTiger. Idempotent.
  void close();

  // --- what the catalog makes durable ----------------------------------------------------
  // A new partition needs nothing here: its tables are made by the first write that needs
  // them (a snapshot, write_copy), and until then it reads as empty (persist/wt_home.h).
  //
  // Partition `index` of table `uid` made empty: its tables dropped, so a copy a move
  // brings here starts from nothing, whatever an earlier stay left.
  status reset_partition(std::uint64_t uid, std::uint32_t index);
  // Drops the tables of partitions `indices` of table `uid` once no snapshot writes to
  // them; failures are logged (the files are stale, never read again).
  void drop_partitions(std::uint64_t uid, const std::vector<std::uint32_t>& indices, std::string_view table);
  // Writes catalog entries `puts` (name -> encoded value) and removes `removes`, at once.
  status write_catalog(const std::vector<std::pair<std::string, std::string>>& puts,
                       const std::vector<std::string>& removes);
  // The schema of `t` with the store's counters, durably.
  status write_schema(const table_schema& t, std::uint64_t next_uid, std::uint32_t next_family_id);
  // Namespace `name` with its properties, durably; with `remove`, its entry erased.
  status write_namespace(const std::string& name, const std::map<std::string, std::string>& properties,
                         bool remove = false);
  // Cells of family `family` in partitions [0, partitions) of table `uid` go from disk
  // with the next snapshot (their family was dropped or truncated).
  void queue_purge(std::uint64_t uid, std::uint32_t partitions, std::uint32_t family);
  // A partition copied here by a move or a split: `delta` (its cells) written to its base,
  // checkpointed. An empty delta makes no tables.
  status write_copy(std::uint64_t uid, std::uint32_t index, const delta_map& delta);

  // The lock a running snapshot holds; whoever holds it keeps snapshots and the dropping
  // of partitions' tables waiting (a test holds it to stand for a long snapshot).
  absl::Mutex& snapshot_lock() ABSL_LOCK_RETURNED(snapshot_mu_) { return snapshot_mu_; }
  // Has `f` called whenever a partition's tables are about to wait for the snapshot lock
  // (reset_partition, drop_partitions), on the waiting thread: a test that holds the lock
  // learns that the wait has begun. Null calls nothing.
  void on_snapshot_lock_wait(std::function<void()> f);

  // Snapshots, log figures and recovery, for store::info.
  void fill_info(store_info& out) const;
  std::uint64_t log_syncs() const { return log_ ? log_->syncs() : 0; }

 private:
  struct pending_purge {
    std::uint64_t uid;
    std::uint32_t partitions;
    std::uint32_t family;
  };
  friend class snapshot_thread;
  friend class snapshot_writers;

  store_persistence(const store_options& options, memory_pool& memory, caf::actor_system& system,
                    std::shared_ptr<dispatch_stats> activity, std::unique_ptr<dir_lock> held,
                    std::unique_ptr<wt_home> wt);

  // Recovery's steps (store/recovery.cc).
  status read_catalog(recovered_catalog& out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(snapshot_mu_);
  // One partition's cells, on any thread: touches no guarded state (what it finds goes
  // into `job`, the cells it reads are counted in `progress` as it goes).
  status load_partition(partition_load& job, recovery_progress& progress);
  // Every partition of `jobs`, by up to options_.recovery_threads threads, logging progress.
  status load_partitions(std::vector<partition_load>& jobs) ABSL_EXCLUSIVE_LOCKS_REQUIRED(snapshot_mu_);
  status replay_log(const std::map<std::uint64_t, std::pair<const table_schema*, std::vector<memtable*>>>& tables)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(snapshot_mu_);
  // A snapshot's last step: purges, the generation recorded, the checkpoint; then the
  // deltas of `cuts` freed (store/snapshot.cc).
  status finish_snapshot(std::vector<table_cut>& cuts, std::uint64_t generation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(snapshot_mu_);

  const store_options& options_;
  memory_pool& memory_;
  caf::actor_system& system_;
  const std::shared_ptr<dispatch_stats> activity_;  // the data path's: cleared by wait_until_idle
  std::unique_ptr<dir_lock> held_;                  // the directory, until close() has closed WiredTiger
  std::unique_ptr<wt_home> wt_;                     // reset by close()
  std::unique_ptr<redo_log> log_;
  recovery_stats recovered_;  // written by recover() only
  // Returns the pages of the deltas a snapshot wrote to the OS, after the snapshot.
  memory_releaser releaser_;

  // Calls the hook of on_snapshot_lock_wait, if any.
  void about_to_wait_for_snapshot_lock();
  // snapshot()'s work, under its lock; the cells at the cut of each partition of table
  // `uid` into *cells (if given).
  result<snapshot_stats> snapshot_locked(const catalog_source& tables, std::uint64_t uid,
                                         std::vector<std::uint64_t>* cells) ABSL_EXCLUSIVE_LOCKS_REQUIRED(snapshot_mu_);

  absl::Mutex hook_mu_;
  std::function<void()> lock_wait_hook_ ABSL_GUARDED_BY(hook_mu_);
  std::function<bool(std::uint64_t)> keep_tables_ ABSL_GUARDED_BY(hook_mu_);
  // Named checkpoints being read (hold_named), by name. Held across drop_named's drop.
  absl::Mutex named_mu_ ABSL_ACQUIRED_BEFORE(snapshot_mu_);
  std::map<std::string, int> named_readers_ ABSL_GUARDED_BY(named_mu_);
  absl::Mutex snapshot_mu_;  // one snapshot at a time; held while a partition's tables go
  std::uint64_t generation_ ABSL_GUARDED_BY(snapshot_mu_) = 0;
  std::vector<pending_purge> purges_ ABSL_GUARDED_BY(snapshot_mu_);
  // Each partition's change runs and base, (uid, partition) -> bytes: weighed by
  // merge_into_base_now. Its own lock: a move's copy (write_copy) records its base without
  // waiting for a snapshot. A partition not listed has neither.
  absl::Mutex sizes_mu_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, stored_bytes> sizes_ ABSL_GUARDED_BY(sizes_mu_);

  // The last completed snapshot, for info(): its own lock, never held across a snapshot.
  mutable absl::Mutex info_mu_;
  std::optional<snapshot_stats> last_snapshot_ ABSL_GUARDED_BY(info_mu_);
  std::int64_t last_snapshot_unix_ms_ ABSL_GUARDED_BY(info_mu_) = 0;
  std::uint64_t snapshots_taken_ ABSL_GUARDED_BY(info_mu_) = 0;

  // The threads of the snapshot running now (Linux thread ids), and whether they, and
  // those of later snapshots, run at normal priority.
  absl::Mutex threads_mu_;
  std::set<pid_t> snapshot_threads_ ABSL_GUARDED_BY(threads_mu_);
  bool hurry_ ABSL_GUARDED_BY(threads_mu_) = false;

  absl::Mutex periodic_mu_;
  bool periodic_stop_ ABSL_GUARDED_BY(periodic_mu_) = false;
  std::thread periodic_;
};

}  // namespace cellar::detail
