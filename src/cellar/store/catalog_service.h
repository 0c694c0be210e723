// store/catalog_service.h: a store's catalog, and the one path that changes it.
//
// The catalog maps each table name to an immutable `table_runtime` (its schema and its
// partitions, dispatch/dispatch.h), published as a whole map: data calls read it without a
// lock (lookup), DDL builds a new map and swaps it in. Every change of the catalog goes
// through this class, from a store's own DDL (the calls below, which store.h forwards) and
// from a cluster member applying the cluster's catalog (cluster/member.cc, which takes
// mutex() and uses the "cluster's path" below) alike:
//   commit:  the schema made durable (new partitions' tables, then the catalog entry), a
//            runtime built for it (reusing the old one's partitions, or starting new
//            ones), published;
//   retire:  a runtime the catalog no longer names: its partitions stopped, the tables of
//            this node's partitions dropped;
//   purge:   the cells of dropped or truncated families freed in every partition and
//            queued for removal from disk.
// A change is durable before the call that made it returns; nothing is published when
// making it durable fails.
//
// Thread safety: lookups and current() from any thread, lock-free. Changes serialise on
// mutex(); the lock order is this mutex, then the persistence's snapshot lock.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <caf/all.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/namespaces.h"
#include "cellar/schema.h"
#include "cellar/status.h"
#include "store/catalog_map.h"
#include "store/partition_factory.h"
#include "store/persistence.h"
#include "store/reshape_plan.h"

namespace cellar::detail {

class catalog_service {
 public:
  // `persistence` is null for a memory-only store; all must outlive the service.
  catalog_service(const partition_factory& partitions, store_persistence* persistence);
  catalog_service(const catalog_service&) = delete;
  catalog_service& operator=(const catalog_service&) = delete;

  // --- reads: any thread, no lock ---------------------------------------------------------
  // The runtime of `table`, or null.
  runtime_ptr lookup(std::string_view table) const;
  // lookup(), or `cache`'s answer when it is for `table` and the catalog has not changed
  // since it was filled.
  const runtime_ptr& lookup(std::string_view table, table_lookup_cache& cache) const;
  // The whole catalog now; it stays valid (unchanged) while the caller holds it.
  std::shared_ptr<const catalog_map> current() const { return catalog_.load(std::memory_order_acquire); }

  // --- a store's own DDL (store.h documents each call and its errors) ------------------------
  status create_table(table_descriptor desc, schema_origin origin);
  status create_table_group(std::string name);
  status add_family(const std::string& table, family_descriptor family, const partition_spec& partitioning);
  status alter_family(const std::string& table, family_descriptor family);
  status drop_family(const std::string& table, const std::string& family, schema_origin origin);
  // `set` already checked (catalog/hbase_options.h: check_table_attributes).
  status alter_table(const std::string& table, const std::map<std::string, std::string>& set,
                     const std::vector<std::string>& unset);
  status drop_table(const std::string& table);
  status truncate_table(const std::string& table);
  // Empties `table` by giving it new partitions under a new incarnation (uid), its schema
  // otherwise as it is; the old partitions stop and their tables are dropped (kept while a
  // named snapshot holds them). A restore's first step: the cells loaded next go into
  // tables that were never written, as a bulk load, where a truncate leaves the old cells
  // to be purged around them. Requests the old partitions held are answered UNAVAILABLE.
  status renew_partitions(const std::string& table);
  status truncate_family(const std::string& table, const std::string& family);
  status set_disabled(const std::string& table, bool disabled);
  // HBase's split and merge_region of RANGE partitions (store.h: split_region,
  // split_partition, split_table, merge_regions; how: store/reshape.h). A one-partition
  // table splits into RANGE partitions.
  status split_region(const std::string& table, const std::string& key);
  status split_partition(const std::string& table, std::uint32_t index, const std::string& key);
  result<std::uint32_t> split_table(const std::string& table);
  status merge_regions(const std::string& table, std::uint32_t index);
  // Any of the four: plans `c` (store/reshape_plan.h) and runs it; the number of splits.
  result<std::uint32_t> reshape_by(const reshape_call& c) ABSL_LOCKS_EXCLUDED(mu_);
  // HBase's size-driven split: each partition of `table` whose cells take more bytes than
  // its MAX_FILESIZE attribute is split at its middle row (none without the attribute,
  // with SPLIT_ENABLED false or SPLIT_POLICY DisabledRegionSplitPolicy, or for KEY
  // partitions). Returns how many splits ran.
  result<std::uint32_t> split_oversized(const std::string& table);

  // --- namespaces (store.h documents each call and its errors) ------------------------------
  status create_namespace(namespace_descriptor ns);
  status drop_namespace(const std::string& name);
  status alter_namespace(const std::string& name, const std::map<std::string, std::string>& set,
                         const std::vector<std::string>& unset);
  result<namespace_descriptor> describe_namespace(const std::string& name);
  std::vector<namespace_descriptor> list_namespaces();

  // --- recovery --------------------------------------------------------------------------
  // Publishes the tables recovery found. With `start`, each partitioned table's partitions
  // start on their recovered cells; without (a cluster member, whose cluster says which
  // partitions are its own), the cells wait in the service for take_recovered().
  void restore(recovered_catalog recovered, bool start);

  // --- the cluster's path (cluster/member.cc), under mutex() ----------------------------------
  absl::Mutex& mutex() ABSL_LOCK_RETURNED(mu_) { return mu_; }
  // Makes `schema` durable as the cluster gave it: the catalog entry written (the tables
  // of this node's partitions are made when first written). Failures are logged: the node
  // keeps serving from memory and the next change writes the entry again.
  void persist_cluster_schema(const table_schema& schema) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes `table` from the durable catalog and drops its recovered cells, if any.
  void forget(const std::string& table) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The cells recovery kept for `table`, one per partition (empty if none), taken out.
  std::vector<recovered_cells> take_recovered(const std::string& table) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void drop_recovered(const std::string& table) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `all` the namespaces, as the cluster gave them; the durable catalog follows
  // (failures are logged, as in persist_cluster_schema).
  void set_namespaces(const namespace_map& all) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes `next` the catalog.
  void publish(std::shared_ptr<const catalog_map> next) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A partition the catalog no longer names that a client may still reach through a
  // runtime it loaded before: it stops when its last reference goes (partition_ref::
  // stop_when_released), and close() stops it should it still run then.
  void linger(const partition_ref& ref) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Retires `rt` (above): stops its partitions, waits for them, and drops the tables of
  // those of this node (all of them when it never started any).
  void retire(const table_runtime& rt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Has every partition of `rt` free the cells of families `ids` (which a schema now
  // published no longer has) and queues their purge from disk; waits for the partitions.
  void purge_families(const table_runtime& rt, const std::vector<std::uint32_t>& ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Publishes an empty catalog and stops every partition, lingering ones included.
  void close();

 private:
  // Persists `schema` (new partitions' tables first), builds its runtime from `old`'s
  // partitions or new ones, and publishes it.
  result<runtime_ptr> commit(std::shared_ptr<table_schema> schema, const table_runtime* old)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  runtime_ptr make_runtime(std::shared_ptr<table_schema> schema, const table_runtime* old)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void publish_one(const std::string& name, runtime_ptr rt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  status write_schema(const table_schema& t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives RANGE table `old` the partition bounds `bounds` (store/reshape.h).
  status reshape(const runtime_ptr& old, std::vector<std::string> bounds) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `table`, with `now` partitions, may have `more` (the table limit and its
  // namespace's region quota); INVALID_ARGUMENT otherwise.
  status check_more_regions(const std::string& table, std::size_t now, std::size_t more)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What the tables of namespace `ns` hold now.
  namespace_usage usage(std::string_view ns) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const partition_factory& partitions_;
  store_persistence* const persistence_;

  absl::Mutex mu_;
  std::atomic<std::shared_ptr<const catalog_map>> catalog_;  // replaced under mu_ only
  // Bumped after each publish: a table_lookup_cache filled at this number still holds
  // what lookup() answers.
  std::atomic<std::uint64_t> version_{0};
  std::vector<caf::weak_actor_ptr> lingering_ ABSL_GUARDED_BY(mu_);
  std::uint64_t next_version_ ABSL_GUARDED_BY(mu_) = 1;
  std::uint32_t next_family_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::uint64_t next_uid_ ABSL_GUARDED_BY(mu_) = 1;
  namespace_map namespaces_ ABSL_GUARDED_BY(mu_) = builtin_namespaces();
  // Recovered cells waiting for their partitions (a cluster member's), by table.
  std::map<std::string, std::vector<recovered_cells>, std::less<>> recovered_ ABSL_GUARDED_BY(mu_);
};

// TABLE_DISABLED for a call on disabled `table`.
status table_disabled_error(std::string_view table);

}  // namespace cellar::detail
