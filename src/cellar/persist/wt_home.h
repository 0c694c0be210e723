// persist/wt_home.h: the WiredTiger home of a store directory.
//
// Tables (docs/storage.md):
//   table:catalog      logged; key = table name, value = encoded table schema; the key
//                      "\0store" holds the store's counters. Every change commits with
//                      sync=on, so DDL is durable when it returns.
//   table:meta         not logged; "snapshot_gen" = generation of the last snapshot.
//   table:d<uid>p<i>   not logged; the base of partition i of table <uid>: its cells in
//                      runs (persist/runs.h).
//   table:c<uid>p<i>   not logged; the partition's changes since they were last merged
//                      into its base: one or more change runs (persist/runs.h) per
//                      snapshot, keyed by the snapshot's generation (u64 big-endian) and
//                      the run's first cell key. Recovery applies them on top of the base,
//                      oldest generation first. An incremental snapshot appends here, so
//                      it writes about the bytes of its changes; writing them into the
//                      base instead dirtied a 32 KB page per scattered change.
// A partition's two tables are created by the first write that needs each (write_delta,
// write_cells, write_changes), not when its table is created: a WiredTiger create makes
// and syncs a file, and most partitions of a new table hold nothing for a while. Until
// then the partition has no tables, which every reader takes as empty and drop_partition
// as nothing to drop.
// Tables that are not logged are recovered by WiredTiger to its last checkpoint, and a
// checkpoint is only taken at the end of a snapshot: that is what makes a snapshot
// atomic even when it is written in many transactions.
//
// WiredTiger stops for good ("panic") when a sync of its files fails during a checkpoint:
// every later call fails. stopped() says so, and reopen() closes the connection and opens
// the home again, which WiredTiger recovers to its last checkpoint (the last snapshot)
// plus its own log (the catalog).
//
// Thread safety: every method opens its own WiredTiger session, so methods may run on
// any thread; reopen() waits for the calls running and holds the others back. Callers
// serialise snapshot work among themselves.
#pragma once

#include <sys/types.h>
#include <wiredtiger.h>

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/env.h"
#include "cellar/status.h"
#include "persist/delta_map.h"

namespace cellar::detail {

class wt_home {
 public:
  // Opens (creating) the home in `dir`, its files through `e` (cellar/env.h). `salvage`:
  // WiredTiger salvages its own damaged files (metadata, log) while it opens.
  // `idle_threads`: WiredTiger's own threads (eviction, log and sweep servers) run at idle
  // CPU priority (persist/priority.h); the program's other threads are left as they are.
  // `compression`: the block compressor of partition tables created from now on ("none",
  // "snappy" or "zlib"); tables written with another stay readable. INVALID_ARGUMENT for
  // another name.
  static result<std::unique_ptr<wt_home>> open(const std::string& dir, std::size_t cache_mb,
                                               std::shared_ptr<cellar::env> e, bool salvage, bool idle_threads = false,
                                               const std::string& compression = "none");
  ~wt_home();  // closes without a checkpoint: callers snapshot first

  // Catalog.
  status read_catalog(const std::function<void(std::string_view key, std::string_view value)>& fn);
  // Writes and erases catalog entries in one durable transaction.
  status write_catalog(const std::vector<std::pair<std::string, std::string>>& puts,
                       const std::vector<std::string>& erases);

  // Drops the partition's tables, those it has (none if nothing was ever written to it).
  status drop_partition(std::uint64_t uid, std::uint32_t partition);

  // Snapshot work.
  //
  // A bulk load whose cells WiredTiger has taken but whose file is not yet synced and
  // closed. finish_load() makes it durable; destroying it unfinished closes it, and the
  // snapshot is then abandoned. Either way WiredTiger checkpoints the file when the bulk
  // cursor closes, so the table may come back loaded after a crash even though no snapshot
  // took it: a point-in-time cut of its partition (docs/storage.md).
  class pending_load;
  struct pending_load_deleter {
    void operator()(pending_load* p) const;
  };
  using pending_load_ptr = std::unique_ptr<pending_load, pending_load_deleter>;

  // Merges `delta` into the partition's base (a bulk load if the base is empty; a base
  // that has no table yet is created, empty, first).
  // *bytes += the cells' bytes written. *base_bytes (if given) holds the bytes of the
  // base's records (keys and runs, as stored before compression) and is updated to what
  // they are after the write: the runs replaced go, the runs written come.
  // With `pending`, a bulk load returns before its file is synced and leaves itself in
  // *pending: the caller encodes its next partition while the disk writes this one, and
  // calls finish_load() before the checkpoint. Every load must be finished or destroyed
  // before reopen() or drop_cache(), which refuse (code::internal) while one is pending.
  status write_delta(std::uint64_t uid, std::uint32_t partition, const delta_map& delta, std::uint64_t* bytes,
                     std::uint64_t* base_bytes = nullptr, pending_load_ptr* pending = nullptr);
  // Cells in key order, as a source: calls `visit` for each until one returns nonzero,
  // and returns that (0 after the last).
  using cell_visitor = std::function<int(std::string_view key, std::int64_t expires_at, std::string_view value)>;
  using cell_source = std::function<int(const cell_visitor& visit)>;
  // If the partition's base is empty, bulk-loads the cells of `source` into it, as
  // write_delta does a delta (with `pending` likewise), and sets *written. A base that is
  // not empty, or a table WiredTiger cannot bulk-load now, is left as it was: *written is
  // false.
  status write_cells(std::uint64_t uid, std::uint32_t partition, const cell_source& source, std::uint64_t* bytes,
                     std::uint64_t* base_bytes, pending_load_ptr* pending, bool* written);
  // Syncs the load's file and closes its bulk cursor.
  status finish_load(pending_load_ptr load);
  // Appends `delta` to the partition's changes as the change runs of `generation`, after
  // removing any of that generation or later (left by a snapshot that failed); creates the
  // change table if the partition has none yet.
  // *bytes += the cells' bytes (key, expiry, value; the key of an erased one);
  // *run_bytes += the bytes of the runs written.
  status write_changes(std::uint64_t uid, std::uint32_t partition, std::uint64_t generation, const delta_map& delta,
                       std::uint64_t* bytes, std::uint64_t* run_bytes);
  // Calls fn for every cell of the partition's change runs, oldest generation first and
  // in key order within one; an empty `stored` is an erasure. *run_bytes (if given) gets
  // the bytes of the runs read. No change table: nothing. With a `checkpoint` name, the
  // runs as that named checkpoint of the table holds them (CORRUPTION if it has none).
  status scan_changes(std::uint64_t uid, std::uint32_t partition,
                      const std::function<status(std::string_view key, std::string_view stored)>& fn,
                      std::uint64_t* run_bytes = nullptr, const std::string& checkpoint = {});
  // Removes every change run of the partition (after they were merged into its base).
  status clear_changes(std::uint64_t uid, std::uint32_t partition);
  // Removes the base's cells of `family`. No base table: nothing to do.
  status purge_family(std::uint64_t uid, std::uint32_t partition, std::uint32_t family);
  status set_meta(std::string_view key, std::uint64_t value);
  status checkpoint();

  // WiredTiger has stopped after a failure it cannot go on from (WT_PANIC).
  bool stopped();
  status reopen();
  // Closes the connection and opens it again, which frees WiredTiger's cache: what
  // recovery read is served from memory now, and WiredTiger is only written to again.
  // Same locking as reopen().
  status drop_cache();
  // Sets the size of WiredTiger's cache until the next reopen() or drop_cache(), which
  // bring back the size the home was opened with.
  status set_cache_size(std::size_t mb);
  // With idle_threads, WiredTiger's own threads run at idle priority; this raises them,
  // and those of any later reopen, back to normal (persist/priority.h): for a closing store.
  void hurry();

  // Recovery.
  // Rebuilds a table's file from what can still be read of it (WT_SESSION::salvage):
  // damaged pages and what they held are dropped. A missing table is not an error;
  // *existed (if given) says whether there was one.
  status salvage_table(const std::string& uri, bool* existed = nullptr);
  result<std::uint64_t> get_meta(std::string_view key);
  // Calls fn for every cell of the partition's base, in key order (none if it has no base
  // table). *record_bytes (if given) gets the bytes of the records read (keys and runs,
  // before compression). `checkpoint` as for scan_changes.
  status scan_partition(std::uint64_t uid, std::uint32_t partition,
                        const std::function<status(std::string_view key, std::string_view value)>& fn,
                        std::uint64_t* record_bytes = nullptr, const std::string& checkpoint = {});

  // Named checkpoints: the state of some tables kept under a name until it is dropped,
  // sharing every page with the live table until the live table rewrites it (a store's
  // named snapshots, docs/backup.md). WiredTiger keeps a named checkpoint across later
  // checkpoints and restarts; dropping a table drops its checkpoints with it.
  //
  // Takes checkpoint `name` of those of `uris` that exist, each as it is now (the caller
  // has just checkpointed them, so that is their last checkpoint). Returns the ones taken.
  result<std::vector<std::string>> take_named_checkpoint(const std::string& name, const std::vector<std::string>& uris);
  // Drops checkpoint `name` of each of `uris` that has it. CONFLICT while a reader has it open.
  status drop_named_checkpoint(const std::string& name, const std::vector<std::string>& uris);
  // Every partition table the home holds, as (uid, partition) of its name (d<uid>p<i> or
  // c<uid>p<i>, both listed once), whatever table it belongs to.
  result<std::vector<std::pair<std::uint64_t, std::uint32_t>>> partition_tables();

  // WiredTiger's message for the first page it found damaged since open ("... d1p3.wt:
  // fatal read error ..."), or empty. After such a read WiredTiger fails every call (it
  // panics), so calls running on other threads fail too; this names the damage itself.
  std::string damage_reported();

  // The file of a partition's table, and "table:x (file DIR/x.wt)" for messages.
  std::string file_of(std::uint64_t uid, std::uint32_t partition) const;
  std::string describe(const std::string& uri) const;

 private:
  struct events;
  wt_home() = default;
  // write_cells' work; the caller holds conn_mu_ shared.
  status bulk_if_empty(std::uint64_t uid, std::uint32_t partition, const cell_source& cells, std::uint64_t* bytes,
                       std::uint64_t* base_bytes, pending_load_ptr* pending, bool* written);
  status connect();  // conn_ from config_; callers hold conn_mu_ exclusively or own *this alone
  // Creates the partition table `uri` in session `s` unless it exists (one whose create
  // was cut short is made anew; a failed create is undone); WiredTiger's code.
  int create_cell_table(WT_SESSION* s, const std::string& uri) const;
  std::shared_mutex conn_mu_;          // shared by every call, exclusive for reopen
  std::atomic<int> pending_loads_{0};  // pending_load objects alive
  std::unique_ptr<events> events_;     // the connection's event handler
  std::string config_;
  std::string cell_table_config_;  // WT_SESSION::create's config of a partition table
  WT_CONNECTION* conn_ = nullptr;
  std::string dir_;
  std::shared_ptr<cellar::env> env_;
  bool idle_threads_ = false;
  void hurry_threads() ABSL_EXCLUSIVE_LOCKS_REQUIRED(threads_mu_);
  absl::Mutex threads_mu_;
  std::vector<pid_t> wt_threads_ ABSL_GUARDED_BY(threads_mu_);  // WiredTiger's threads, idled
  bool hurry_ ABSL_GUARDED_BY(threads_mu_) = false;
};

std::string partition_uri(std::uint64_t uid, std::uint32_t partition);
std::string changes_uri(std::uint64_t uid, std::uint32_t partition);
// Its file in the home is this stem plus ".wt".
std::string partition_file_stem(std::uint64_t uid, std::uint32_t partition);

}  // namespace cellar::detail
