// store_impl.h: what a store is inside (private to the library).
//
// The catalog is a map from table name to an immutable `table_runtime` (schema plus the
// partition actors), published as a whole through an atomic shared_ptr: client threads
// read it without locks; DDL calls serialise on `ddl_mutex`, persist the change, build a
// new map and swap it. Snapshots serialise on `snapshot_mutex` (lock order: ddl_mutex,
// then snapshot_mutex).
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/store.h"
#include "partition/partition_actor.h"
#include "persist/redo_log.h"
#include "persist/wt_home.h"

namespace cellar::detail {

struct table_runtime {
  schema_ptr schema;
  std::vector<partition_actor> partitions;  // empty until the group's partitioning is fixed
  std::vector<std::shared_ptr<partition_shared>> shared;  // one per partition (table::read_now)
};

using runtime_ptr = std::shared_ptr<const table_runtime>;
using catalog_map = std::map<std::string, runtime_ptr, std::less<>>;

// Cells of a dropped or truncated family still in a partition table on disk.
struct pending_purge {
  std::uint64_t uid;
  std::uint32_t partitions;
  std::uint32_t family;
};

struct store_impl {
  explicit store_impl(store_options o);
  ~store_impl();
  status close();

  status recover();  // when options.directory is set; before any use
  runtime_ptr lookup(std::string_view table) const;
  std::int64_t now() const { return options.clock(); }
  bool persistent() const { return wt != nullptr; }
  // Persists the schema of `t` (and the counters) durably; caller holds ddl_mutex.
  status persist_schema(const table_schema& t);
  result<snapshot_stats> snapshot();

  store_options options;
  std::atomic<std::int64_t> bytes{0};
  // Set by every data call (batch, read, scan), and batches sent to partitions and not yet
  // answered: the snapshot's helper threads take a partition only while the store is idle
  // by both (store_persist.cc).
  mutable std::atomic<bool> foreground_seen{false};
  mutable std::atomic<int> foreground_in_flight{0};
  void note_foreground() const {
    if (!foreground_seen.load(std::memory_order_relaxed)) foreground_seen.store(true, std::memory_order_relaxed);
  }
  // Returns true once `windows` windows of `window` in a row have passed with no data call
  // and, at each window's end, none in flight; false as soon as `give_up()` says so.
  bool wait_until_idle(int windows, std::chrono::milliseconds window, const std::function<bool()>& give_up) const;
  std::unique_ptr<caf::actor_system_config> caf_config;
  std::unique_ptr<caf::actor_system> system;

  std::mutex ddl_mutex;
  std::atomic<std::shared_ptr<const catalog_map>> catalog;
  std::uint64_t next_version = 1;    // guarded by ddl_mutex
  std::uint32_t next_family_id = 1;  // guarded by ddl_mutex
  std::uint64_t next_uid = 1;        // guarded by ddl_mutex

  // Persistence (null for a memory-only store).
  std::unique_ptr<wt_home> wt;
  std::unique_ptr<redo_log> log;
  std::mutex snapshot_mutex;
  std::uint64_t generation = 0;             // guarded by snapshot_mutex
  std::vector<pending_purge> purges;        // guarded by snapshot_mutex
  recovery_stats recovered;
  // The last completed snapshot, for store::info (its own mutex: never waits for one).
  mutable std::mutex info_mutex;
  std::optional<snapshot_stats> last_snapshot;  // guarded by info_mutex
  std::int64_t last_snapshot_unix_ms = 0;       // guarded by info_mutex
  std::uint64_t snapshots_taken = 0;            // guarded by info_mutex
  // Recovered memtables waiting for their actors: table name -> per partition.
  std::map<std::string, std::vector<std::shared_ptr<std::unique_ptr<memtable>>>> recovered_mem;

  std::thread snapshotter;
  std::mutex snapshotter_mutex;
  std::condition_variable snapshotter_cv;
  bool stopping = false;
  bool opened = false;  // recovery finished: a close may snapshot
  std::atomic<bool> closed{false};
};

}  // namespace cellar::detail
