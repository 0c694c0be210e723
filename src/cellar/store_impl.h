// store_impl.h: what a store is inside (private to the library).
//
// The catalog is a map from table name to an immutable `table_runtime` (schema plus the
// partitions, route/dispatch.h), published as a whole through an atomic shared_ptr: client
// threads read it without locks; DDL calls serialise on `ddl_mutex`, persist the change,
// build a new map and swap it. Snapshots serialise on `snapshot_mutex` (lock order:
// ddl_mutex, then snapshot_mutex).
//
// Every data call of every front end (the embedded API, the RPC server, frames) comes in
// through `run_batch` and `open_scan`, which check it and hand it to the dispatcher with the
// caller's call_order (docs/concurrency.md).
#pragma once

#include <caf/all.hpp>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/store.h"
#include "partition/memory_budget.h"
#include "partition/partition.h"
#include "persist/free_memory.h"
#include "persist/redo_log.h"
#include "persist/wt_home.h"
#include "route/call_order.h"
#include "route/dispatch.h"
#include "route/scan_scope.h"
#include "scheduler_tuning.h"

namespace cellar::detail {

using catalog_map = std::map<std::string, runtime_ptr, std::less<>>;

// One DDL call of store.h, as a value: in a cluster the store hands it to the cluster
// (cluster/member.h) instead of applying it; the cluster applies it to every node's store.
struct ddl_call {
  enum class kind : std::uint8_t {
    create_table, create_table_group, add_family, alter_family, drop_family, drop_table, truncate_table,
    disable_table, enable_table, truncate_family,
  };
  kind what = kind::create_table;
  std::string table;
  table_descriptor descriptor;
  schema_origin origin = schema_origin::oceanbase_ddl;
  family_descriptor family;
  partition_spec partitioning;
  std::string family_name;
};

// What a store that is a cluster member delegates to the cluster.
struct cluster_hooks {
  virtual ~cluster_hooks() = default;
  // Runs `c` through the cluster; returns once this node's store has applied it.
  virtual status ddl(const ddl_call& c) = 0;
  // The nodes, their partitions and the master, as text (store_info::cluster).
  virtual std::string report() const = 0;
  // NOT_OWNER for a request of a client that asked not to be forwarded (wire: noForward),
  // for partition `index` of `table`, which another node owns; the message names this
  // node's placement epoch and the owner it knows. Counted for `status 'detailed'`.
  virtual status not_owner(const std::string& table, std::uint32_t index) {
    return {code::not_owner, "this node does not own partition " + std::to_string(index) + " of '" + table + "'"};
  }
  // Moves a partition ("table/index") to a node with its data (cluster/mover.h).
  virtual status move(const std::string& partition, const std::string& node) = 0;
  // Runs the balancer's moves; returns how many ran.
  virtual result<std::uint32_t> balance() = 0;
  // A request named a table this node does not know: waits, bounded, until this node has
  // applied the catalog the cluster has now (another node's DDL reaches this one a moment
  // later). True once it has (look again); false when it could not tell or did not catch
  // up in time. Blocks: not on a CAF worker.
  virtual bool catch_up() { return false; }
};

// Cells of a dropped or truncated family still in a partition table on disk.
struct pending_purge {
  std::uint64_t uid;
  std::uint32_t partitions;
  std::uint32_t family;
};

// One caller's last table lookup (store_impl::lookup), reused while the catalog is
// unchanged: an event loop serving a read's worth of requests to one table skips the
// catalog's atomic load, its map search and the reference counting of both. What it holds
// keeps that table's runtime, and so its partitions, alive: clear() it when the caller
// goes idle.
struct table_lookup_cache {
  static constexpr std::uint64_t none = ~std::uint64_t{0};
  std::uint64_t version = none;
  std::string name;
  runtime_ptr rt;  // nullptr with a version: no such table
  void clear() {
    version = none;
    rt.reset();
  }
};

struct store_impl {
  // `tuning`: how idle CAF workers wait (scheduler_tuning.h). `configure` (may be empty)
  // adjusts the actor system's configuration before the system starts (a cluster member
  // loads CAF's middleman there). A `cluster_member` store starts no partition at
  // recovery: its cluster (cluster/member.h) says which to start.
  store_impl(store_options o, const scheduler_tuning& tuning,
             const std::function<void(caf::actor_system_config&)>& configure = {}, bool cluster_member = false);
  ~store_impl();
  // store::open with the arguments of the constructor.
  static result<std::unique_ptr<store>> open(store_options o, const scheduler_tuning& tuning,
                                             const std::function<void(caf::actor_system_config&)>& configure,
                                             bool cluster_member);
  status close();

  status recover();  // when options.directory is set; before any use
  runtime_ptr lookup(std::string_view table) const;
  // lookup(), or `cache`'s answer when it is for `table` and the catalog has not changed
  // since (catalog_version). Not thread-safe: one cache per caller thread.
  const runtime_ptr& lookup(std::string_view table, table_lookup_cache& cache) const;
  // lookup(); for a table a cluster member does not know, once more after it has caught up
  // with the cluster's catalog (cluster_hooks::catch_up), so that a table another node
  // just created is found. For requests that name a table; blocks on a miss in a cluster.
  runtime_ptr lookup_current(std::string_view table) const;
  // Makes `next` the catalog, then bumps catalog_version. Every change of the catalog
  // goes through here; callers order their own read-modify-write of it.
  void publish_catalog(std::shared_ptr<const catalog_map> next);
  std::int64_t now() const { return options.clock(); }
  bool persistent() const { return wt != nullptr; }
  // Persists the schema of `t` (and the counters) durably; caller holds ddl_mutex.
  status persist_schema(const table_schema& t);
  result<snapshot_stats> snapshot();
  // The threads of a snapshot run at idle CPU priority (persist/priority.h; snapshot_thread
  // in store_persist.cc) so that serving comes first. A closing store serves nothing any
  // more, and its final snapshot must not wait for an idle core: this raises the threads of
  // a snapshot running now back to normal priority and keeps those of any later snapshot
  // there; the memory releaser's and WiredTiger's threads too.
  void hurry_snapshots();

  // Starts partition `index` of `schema` on this node, on `recovered` cells if given.
  partition_ref start_partition(const schema_ptr& schema, std::uint32_t index,
                                std::shared_ptr<std::unique_ptr<memtable>> recovered);

  // --- data calls, for every front end ---------------------------------------------------
  // Checks every action of a batch of `table` (a bad one refuses the whole batch: it gets
  // its error, the others ABORTED) and dispatches it for `order` (route/dispatch.h: the
  // results now, or nullopt and `done` later). `in_place`: the caller lets parts run on
  // its thread.
  std::optional<std::vector<op_result>> run_batch(std::string_view table, std::vector<batch_op> ops,
                                                  const std::shared_ptr<call_order>& order, bool in_place,
                                                  batch_done done);
  // For a cluster member asked not to forward (wire: noForward): the actions of `ops` that
  // fall in partitions of `rt` another node owns, with their NOT_OWNER (cluster_hooks::
  // not_owner, once per partition), in action order. Empty when this node owns them all,
  // or is not a cluster member.
  std::vector<std::pair<std::uint32_t, status>> not_owned(const table_runtime& rt, const std::vector<batch_op>& ops);
  // `op`, a get of `table` without a filter and not exists_only, that passes run_batch's
  // checks, read in place now for `order` (route/dispatch.h: read_views_in_place): its
  // cells go to `use` as views. False, having read nothing, for anything else (the
  // caller then calls run_batch, which answers it, errors included).
  // `cache`: the caller's (lookup above).
  bool read_views(std::string_view table, table_lookup_cache& cache, const batch_op& op,
                  const std::shared_ptr<call_order>& order, std::vector<read_cell_view>& scratch,
                  local_partition::views_fn use, void* arg);
  // `req`, a batch of one write action of `table` that passes run_batch's checks, run in
  // place now for `order` (route/dispatch.h: write_in_place): its result in out.results.
  // `req` is not consumed: its action's storage can serve the caller's next one. False,
  // having run nothing, for anything else (the caller then calls run_batch, which answers
  // it, errors included).
  bool write_in_place(std::string_view table, table_lookup_cache& cache, batch_request& req,
                      const std::shared_ptr<call_order>& order, batch_reply& out);
  // Where a point operation on `row` of `table` would find its row when this process
  // holds the row's partition, for hints only (local_partition::prefetch_row); null for
  // an unknown or disabled table or a partition of another node. Nothing is checked or
  // changed. The partition lives while the table's runtime does: unless `keep` already
  // ends with that runtime, it is appended there. `cache`: as lookup's.
  local_partition* local_partition_of(std::string_view table, table_lookup_cache& cache, std::string_view row,
                                      std::vector<runtime_ptr>& keep) const;
  // A scan of `table` whose pages are fetched for `order` (in place when it allows), over
  // the partitions of `scope` that its range touches. A partition number out of range is
  // INVALID_ARGUMENT; with scope.no_forward a cluster member answers NOT_OWNER when
  // another node owns a partition the scan would visit.
  result<scanner> open_scan(std::string_view table, const cellar::scan& s, const std::shared_ptr<call_order>& order,
                            const scan_scope& scope = {});
  dispatch_context context(const std::shared_ptr<call_order>& order, bool in_place) {
    return {system.get(), order, dispatch, in_place};
  }

  store_options options;
  const bool cluster_member = false;
  // A cluster member's DDL goes there (cluster/member.h): set when the store opens (a hook
  // that refuses, until the node has joined), replaced once at join; the owner stops
  // serving before it resets it. Atomic: the event loops and the RPC workers read it while
  // the joining thread replaces it, and a reader that sees the joined hooks must see the
  // member state they point to (the store's release, the load's acquire).
  std::atomic<std::shared_ptr<cluster_hooks>> cluster;
  // A cluster member serves data calls only once it has joined and applied the cluster's
  // catalog and placement: before, its tables have no partitions yet.
  std::atomic<bool> cluster_joined{false};
  // A cluster member that lost its ZooKeeper connection or session refuses writes until
  // it is back and has re-read the placement map (cluster/member.cc: on_session).
  std::atomic<bool> cluster_writes_refused{false};
  // UNAVAILABLE while a cluster member has not joined yet; OK otherwise.
  status ready() const;
  memory_pool memory;
  std::unique_ptr<caf::actor_system_config> caf_config;
  std::unique_ptr<caf::actor_system> system;
  // How data calls ran, and whether any came lately (the snapshot's helper threads work
  // only while the store is idle: wait_until_idle).
  std::shared_ptr<dispatch_stats> dispatch = std::make_shared<dispatch_stats>();
  // The embedded API is one caller: its calls keep their order per partition.
  std::shared_ptr<call_order> embedded_order = std::make_shared<call_order>();

  // Returns true once `windows` windows of `window` in a row have passed with no data call
  // and, at each window's end, none in flight; false as soon as `give_up()` says so.
  bool wait_until_idle(int windows, std::chrono::milliseconds window, const std::function<bool()>& give_up) const;

  std::mutex ddl_mutex;
  std::atomic<std::shared_ptr<const catalog_map>> catalog;  // changed by publish_catalog only
  // Bumped after each change of `catalog`: a table_lookup_cache filled at this number
  // still holds what lookup() answers.
  std::atomic<std::uint64_t> catalog_version{0};
  // Partitions the catalog no longer names that stop when the last runtime naming them
  // goes (dispatch.h: stop_when_released); close() stops those still running. Guarded by
  // ddl_mutex.
  std::vector<caf::weak_actor_ptr> lingering;
  std::uint64_t next_version = 1;    // guarded by ddl_mutex
  std::uint32_t next_family_id = 1;  // guarded by ddl_mutex
  std::uint64_t next_uid = 1;        // guarded by ddl_mutex

  // Persistence (null for a memory-only store).
  std::unique_ptr<wt_home> wt;
  std::unique_ptr<redo_log> log;
  std::mutex snapshot_mutex;
  std::uint64_t generation = 0;             // guarded by snapshot_mutex
  std::vector<pending_purge> purges;        // guarded by snapshot_mutex
  // Bytes of each partition's change runs, (uid, partition) -> bytes (persist/wt_home.h):
  // weighed against its base's file to decide when a snapshot merges them into the base.
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t> change_bytes;  // guarded by snapshot_mutex
  // Returns the pages of the deltas a snapshot wrote to the OS, after the snapshot.
  memory_releaser releaser;
  recovery_stats recovered;
  // The last completed snapshot, for store::info (its own mutex: never waits for one).
  mutable std::mutex info_mutex;
  std::optional<snapshot_stats> last_snapshot;  // guarded by info_mutex
  std::int64_t last_snapshot_unix_ms = 0;       // guarded by info_mutex
  std::uint64_t snapshots_taken = 0;            // guarded by info_mutex
  // Recovered memtables waiting for their actors: table name -> per partition.
  std::map<std::string, std::vector<std::shared_ptr<std::unique_ptr<memtable>>>> recovered_mem;

  // The threads of the snapshot running now (Linux thread ids), and whether they, and
  // those of later snapshots, run at normal priority (hurry_snapshots).
  std::mutex snapshot_threads_mutex;
  std::set<pid_t> snapshot_threads;  // guarded by snapshot_threads_mutex
  bool snapshot_hurry = false;       // guarded by snapshot_threads_mutex

  std::thread snapshotter;
  std::mutex snapshotter_mutex;
  std::condition_variable snapshotter_cv;
  bool stopping = false;
  bool opened = false;  // recovery finished: a close may snapshot
  std::atomic<bool> closed{false};
};

// The store behind a public handle (for the RPC server, which serves it).
store_impl& impl_of(store& s);

// DDL steps shared by store.cc and store_admin.cc. Callers hold ddl_mutex.
// Persists `schema` and publishes a runtime for it (reusing `old`'s partitions).
result<runtime_ptr> commit_schema(store_impl& s, std::shared_ptr<table_schema> schema, const table_runtime* old);
// Has every partition of `rt` free the cells of these family ids (after a schema without
// them was committed) and queues their purge from disk; waits for the partitions.
void drop_family_cells(store_impl& s, const table_runtime& rt, const std::vector<std::uint32_t>& ids);

status table_disabled_error(std::string_view table);

}  // namespace cellar::detail
