// cellar/store.h: the embedded API.
//
// A `store` is one cellar instance in this process: a catalog of table groups, and for each
// table group a set of partition actors (CAF) that own the cells in memory. A `table` is a
// cheap handle on one table group; its calls route each row to its partition, wait for
// the answer and return it. Operations on rows of one partition are atomic together
// (cross-row, cross-family); nothing is atomic across partitions.
//
//   auto s = cellar::store::open({});
//   s.value()->create_table(desc, cellar::schema_origin::hbase_shell);
//   auto t = s.value()->open_table("blogtable").value();
//   t.put(cellar::put("1").add("info", "title", "hello"));
//   auto r = t.get(cellar::get("1"));
//
// Thread safety: `store` and `table` may be used from any number of threads at once. The
// calls of this API, from all threads together, take effect at each partition in the order
// they were made (docs/concurrency.md). Synchronous calls block the calling thread until
// the partitions answer (a call whose partitions are free runs on the calling thread); the
// asynchronous forms call their callback on a thread of the store, which must not block.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cellar/backup.h"
#include "cellar/durability.h"
#include "cellar/env.h"
#include "cellar/ops.h"
#include "cellar/recovery_progress.h"
#include "cellar/schema.h"
#include "cellar/status.h"

namespace cellar {

class store;

namespace detail {
struct store_impl;
struct scan_state;
struct store_access;
class data_path;
}  // namespace detail

// How snapshot files compress their pages (WiredTiger block compression). The setting
// applies to partition tables written from then on; a directory written with one setting
// opens under any other.
enum class compression : std::uint8_t {
  none,
  snappy,  // fast, a moderate ratio
  zlib,    // a better ratio, slower snapshots and recovery
};

struct store_options {
  // Data directory, one WiredTiger home. Empty: memory only, nothing survives the process.
  std::string directory;
  cellar::durability durability = cellar::durability::snapshot;
  std::chrono::milliseconds log_sync_interval{100};
  // Periodic snapshots; zero: only on demand (store::snapshot) and at a clean close.
  std::chrono::milliseconds snapshot_interval{std::chrono::minutes(1)};
  // Compression of the snapshot files (docs/operations.md, "Disk").
  cellar::compression compression = cellar::compression::snappy;
  // WiredTiger cache size in MiB.
  std::size_t cache_mb = 256;
  // Threads writing a snapshot's partitions (0: one per core). One always writes; the
  // others help only while the store is idle (no data call for a few milliseconds), so a
  // snapshot of a busy store takes one core from serving at most.
  std::size_t snapshot_threads = 0;
  // Threads reading the partitions at open (0: one per core this process may run on; at
  // most 64 and one per partition are used). Each reads whole partitions; nothing is
  // served until all are read.
  std::size_t recovery_threads = 0;
  // Whether the store's background threads (snapshot writers, the thread that returns
  // freed memory to the system, and WiredTiger's own threads) run at idle CPU priority
  // (SCHED_IDLE, or nice 10 where that is refused), so that they use only a core nothing
  // else wants. Off: their priority is the embedding program's business. cellar-server
  // turns it on. A closing store raises them back, so its final snapshot does not wait
  // for an idle core.
  bool idle_background_threads = false;
  // CAF worker threads; 0 means one per core.
  std::size_t worker_threads = 0;
  // Bytes of cell data the store may hold; 0 means unlimited. Past it, writes fail with
  // MEMORY_LIMIT and nothing already stored is lost.
  std::uint64_t memory_limit_bytes = 0;
  // How often each partition reclaims expired cells and trims versions beyond
  // MaxVersions in the background (one bounded slice per tick). Zero disables it.
  std::chrono::milliseconds maintenance_interval{500};
  // Cells examined per maintenance slice, so a partition never stalls for long.
  std::size_t maintenance_slice_cells = 4096;
  // How often the store looks for a partition of a table with MAX_FILESIZE that has grown
  // past it, and splits it at its middle row (HBase's size-driven split; RANGE and
  // one-partition tables). In a cluster each node checks the partitions it is responsible
  // for. Zero: only store::compact looks.
  std::chrono::milliseconds split_check_interval{std::chrono::seconds(10)};
  // Milliseconds since the epoch; replaceable for deterministic tests.
  std::function<std::int64_t()> clock;
  // The file system every file of the store goes through (cellar/env.h): the redo log,
  // the snapshot writer and WiredTiger's files. Null: env::posix().
  std::shared_ptr<cellar::env> env;
  // Open a damaged directory anyway. Without it, a damaged snapshot file fails the open
  // with CORRUPTION naming the file. With it, WiredTiger salvages its own damaged files
  // and every partition table is rebuilt from what can still be read of it
  // (WT_SESSION::salvage): cells on damaged pages are lost, the rest is served and
  // written out whole by the next snapshot. For an operator who has no better copy.
  bool salvage = false;
  // Updated while the open recovers the directory, for another thread to watch
  // (cellar/recovery_progress.h); it ends `done`, or `failed` when the open fails. Null:
  // nothing is shown but the log's progress lines.
  std::shared_ptr<cellar::recovery_progress> recovery_progress;
};

struct snapshot_stats {
  std::uint64_t generation = 0;
  std::uint64_t changes = 0;  // cells written or erased: the changes since the last snapshot
  std::uint64_t bytes = 0;    // bytes written to WiredTiger
  double seconds = 0;
  double cut_seconds = 0;    // time from the first to the last partition cut
  double write_seconds = 0;  // of `seconds`: the snapshot threads writing the partitions
  // Of `seconds`: the checkpoint that makes the snapshot durable, then freeing the
  // written deltas (their pages go back to the OS after the call, on a thread of its own).
  double finish_seconds = 0;
  std::uint32_t writers = 0;  // snapshot threads that wrote at least one partition
  // Partitions whose changes went into their base table this time (a first snapshot, or
  // a merge of their runs: docs/storage.md) rather than into a run of their own.
  std::uint32_t merged_partitions = 0;
};

struct recovery_stats {
  std::uint64_t cells_loaded = 0;  // from the last snapshot (its bases with their change runs applied)
  // Cells read from the change runs of the snapshots since each base was last merged
  // (docs/storage.md), applied on top of the base: written, replaced or erased.
  std::uint64_t change_cells = 0;
  std::uint64_t log_records = 0;  // replayed from the log
  // A torn tail of the log (a record cut by a crash while it was written, never
  // acknowledged in log-sync mode): its bytes were not replayed. Also logged.
  std::uint64_t log_bytes_dropped = 0;
  std::string log_torn_file;          // the file that ended in it; empty if none
  std::uint32_t tables_salvaged = 0;  // partition tables rebuilt (store_options::salvage)
  std::uint32_t partitions = 0;       // partitions read from the last snapshot
  std::uint32_t threads = 0;          // threads that read them
  double seconds = 0;
};

// Store-wide figures for monitoring (store::info): read without asking the partitions
// and without waiting for a snapshot in progress.
struct store_info {
  std::string directory;  // empty: memory only
  cellar::durability durability = cellar::durability::snapshot;
  std::uint64_t memory_used_bytes = 0;          // cell data held now, as memory_limit_bytes counts it
  std::uint64_t memory_limit_bytes = 0;         // 0: unlimited
  std::uint64_t snapshots = 0;                  // snapshots completed since open
  std::optional<snapshot_stats> last_snapshot;  // the last one completed since open
  std::int64_t last_snapshot_unix_ms = 0;       // when it completed (wall clock)
  std::uint64_t log_generation = 0;             // the redo log file being written; 0 without a log
  std::uint64_t log_records = 0;                // records written to the log since open
  std::uint64_t log_bytes = 0;                  // bytes written to the log since open
  std::uint64_t log_syncs = 0;                  // fdatasync calls since open
  recovery_stats recovery;                      // what the open found on disk
  // A cluster member (docs/cluster.md): its nodes, their partitions and the master, as
  // the shell's `status 'detailed'` prints them. Empty: not a cluster member.
  std::string cluster;
  // A cluster member: its nodes as `status` counts them, "id address" each: those
  // registered now (live), and those the placement map names that are not (down, by
  // id). Empty: not a cluster member.
  std::vector<std::string> cluster_live_nodes;
  std::vector<std::string> cluster_down_nodes;
};

// Memory and cell counts, summed over partitions.
struct table_stats {
  std::string table;
  std::uint64_t cells = 0;
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> cells_per_partition;
};

// One partition of a table as HBase's list_regions shows a region (store::list_regions).
struct region_info {
  std::uint32_t index = 0;  // its place in the table's partition order
  // The row keys it holds, for a RANGE-partitioned table: [start_key, end_key), an empty
  // start_key from the first key, an empty end_key to the last. Empty both for KEY (hash)
  // partitions, which hold rows by hash, and for a one-partition table.
  std::string start_key;
  std::string end_key;
  std::string node;  // the cluster node that serves it; empty outside a cluster
  std::uint64_t cells = 0;
  std::uint64_t bytes = 0;
};

class scanner;

class table {
 public:
  const std::string& name() const;

  result<row_result> get(const cellar::get& g);
  result<bool> exists(const cellar::get& g);
  // Multi-get: one result per get, in order. Rows of one partition are read together.
  result<std::vector<row_result>> get(const std::vector<cellar::get>& gets);
  status put(const cellar::put& p);
  status put(const std::vector<cellar::put>& puts);
  status remove(const cellar::deletion& d);  // HBase's delete
  result<row_result> increment(const cellar::increment& inc);
  result<std::int64_t> increment_column_value(std::string row, std::string family, std::string qualifier,
                                              std::int64_t amount);
  result<row_result> append(const cellar::append& app);
  status mutate_row(const row_mutations& m);
  result<bool> check_and_mutate(const cellar::check_and_mutate& c);
  result<scanner> scan(const cellar::scan& s);

  // Runs every action; returns one result per action, in order. Actions on rows of one
  // partition are applied as one atomic unit, in order: if one fails, that partition's
  // actions are all undone (the failing one reports its error, the others ABORTED).
  // A batch with an invalid action (unknown family, too large, ...) is refused whole
  // before anything runs. Blocks until every partition has answered. In a cluster, the
  // actions a split or merge of the table refuses (RESHAPING: not applied) are sent again
  // until the split ends, for up to 30 s; then they answer RESHAPING.
  std::vector<op_result> batch(std::vector<batch_op> ops);

  // The same without waiting: `done` gets the results once, on a thread of the store (a
  // partition's worker, or the log's writer in log-sync mode), or on this thread if every
  // partition answered before this returns. `done` must not block. Actions answered
  // RESHAPING are not sent again.
  void batch_async(std::vector<batch_op> ops, std::function<void(std::vector<op_result>)> done);

 private:
  friend class store;
  friend class scanner;
  table(std::shared_ptr<detail::store_impl> s, std::string name);
  std::vector<op_result> batch_once(std::vector<batch_op> ops);
  std::shared_ptr<detail::store_impl> store_;
  std::string name_;
};

// Where a filter ended a scan (a WhileMatchFilter met a row it rejects, ...): no row after
// `row` in scan direction belongs to the scan, from any partition. `before_all`: no row at
// all does (`row` is then empty).
struct scan_end {
  std::string row;
  bool before_all = false;
  bool operator==(const scan_end&) const = default;
};

// A scan in progress: pages rows from the partitions and merges them in global key
// order (descending for a reversed scan). LIMIT holds for the whole scan. Consistency is
// per partition and per page: rows written after the scan started may or may not appear.
class scanner {
 public:
  scanner(scanner&&) noexcept;
  scanner& operator=(scanner&&) noexcept;
  ~scanner();

  // The next result, or nullopt at the end.
  result<std::optional<row_result>> next();
  // Up to n results (fewer only at the end).
  result<std::vector<row_result>> next(std::size_t n);
  // Every remaining result.
  result<std::vector<row_result>> all();
  // Up to n results, delivered to `done` once: on this thread when every page it needed
  // could be read here, else on a thread of the store (so `done` must not block). The
  // scanner must stay alive, and see no other call, until `done` has run.
  void next_async(std::size_t n, std::function<void(result<std::vector<row_result>>)> done);
  // Whether the scan has no result left to return (known without asking the partitions:
  // false when in doubt).
  bool finished() const;
  // Where a filter ended the scan, as far as the pages read so far tell (the earliest end
  // any partition reported); nullopt when none did. Final once the scan is over. A client
  // that merges several scanners' streams of one scan (each over some of the partitions)
  // drops every row beyond the earliest end of them all, as this scanner does across its
  // partitions. Not while a next_async is running.
  std::optional<scan_end> filter_end() const;

 private:
  friend class detail::data_path;
  explicit scanner(std::unique_ptr<detail::scan_state> st);
  std::unique_ptr<detail::scan_state> st_;
};

class store {
 public:
  // Opens (creating when needed) the store in options.directory, recovering the last
  // snapshot and then the log. The directory is this store's until it closes: another
  // process's open fails with IO_ERROR "... is in use by another process (pid N)", as does
  // a second open in this process. Errors: IO_ERROR, CORRUPTION (a damaged file, named in
  // the message; see store_options::salvage).
  static result<std::unique_ptr<store>> open(store_options options);
  // close() if not yet closed.
  ~store();
  // Stops the periodic snapshots, takes the final snapshot, stops the partitions and
  // closes the log and WiredTiger. Later calls on tables fail with UNAVAILABLE. Returns
  // the final snapshot's error, if any; idempotent.
  status close();
  store(const store&) = delete;
  store& operator=(const store&) = delete;

  // Every call that names a table takes `t` or `ns:t` (cellar/names.h); `default:t` is `t`.
  // HBase-style create: the table group and all its families at once. `origin` picks the
  // default MaxVersions of families that do not set one (R7): hbase_shell gives 1,
  // oceanbase_ddl keeps all versions. The attributes of the table and of each family are
  // checked and kept as catalog/hbase_options.h says (UNSUPPORTED naming a setting cellar
  // cannot honour, INVALID_ARGUMENT for a bad value).
  status create_table(table_descriptor desc, schema_origin origin);
  // OceanBase-style: CREATE TABLEGROUP, then one CREATE TABLE `group$family` per family.
  // A group's partitioning is fixed by its first family; later families must match.
  status create_table_group(std::string name);
  status add_family(const std::string& table, family_descriptor family, const partition_spec& partitioning);
  // HBase alter: change a family's MaxVersions/TTL/size/attributes, or add it when
  // missing. The family is replaced as given (attributes included).
  status alter_family(const std::string& table, family_descriptor family);
  // HBase's alter of table attributes (`alter 't', MAX_FILESIZE => ...`, and METHOD =>
  // 'table_att_unset'): removes each attribute named in `unset`, then sets each of `set`,
  // checked as at create_table; durable before it returns, as one schema change. Errors:
  // TABLE_NOT_FOUND; INVALID_ARGUMENT (an attribute to unset that is not set, a bad
  // value); UNSUPPORTED (a setting cellar cannot honour).
  status alter_table(const std::string& table, const std::map<std::string, std::string>& set,
                     const std::vector<std::string>& unset);
  // Removes a family and its cells. `origin` says whose rule applies to the last family
  // of a table: HBase's (hbase_shell, `alter 't', 'delete' => 'f'`) refuses to delete it,
  // INVALID_ARGUMENT "Family 'f' is the only column family in the table, so it cannot be
  // deleted" (drop the table instead); OceanBase's (oceanbase_ddl, DROP TABLE g$f) drops
  // it, and the group stays, empty, taking a new partition rule with its next family.
  // Errors: TABLE_NOT_FOUND, FAMILY_NOT_FOUND, INVALID_ARGUMENT.
  status drop_family(const std::string& table, const std::string& family,
                     schema_origin origin = schema_origin::hbase_shell);
  status drop_table(const std::string& table);
  // Removes every cell, keeps the schema.
  status truncate_table(const std::string& table);
  // OceanBase's TRUNCATE TABLE group$family: removes every cell of one family, keeps the
  // schema. Errors: TABLE_NOT_FOUND, FAMILY_NOT_FOUND.
  status truncate_family(const std::string& table, const std::string& family);

  // HBase's disable / enable (semantics SH3). A disabled table refuses every read and
  // write (batches, scans; every action of a batch answers TABLE_DISABLED) until it is
  // enabled again; DDL and admin calls (describe, alter, truncate, drop, stats) still
  // work. The state is kept with the schema: durable before the call returns, and
  // restored at open. Disabling a disabled table, or enabling an enabled one, does
  // nothing. Calls admitted before disable_table returns may still complete; scanners
  // opened before it may still page. Errors: TABLE_NOT_FOUND.
  status disable_table(const std::string& table);
  status enable_table(const std::string& table);
  // Whether `table` is enabled (true) or disabled (false). Errors: TABLE_NOT_FOUND.
  result<bool> is_table_enabled(const std::string& table) const;

  // HBase's namespaces (cellar/names.h; an OceanBase database). A table `ns:t` can be
  // created only in an existing namespace; `default` and `hbase` always exist. Each call is
  // durable before it returns. create: ALREADY_EXISTS, INVALID_ARGUMENT (a bad name or
  // quota value). drop: only an empty namespace (INVALID_ARGUMENT "Only empty namespaces
  // can be removed...", as HBase), never `default` or `hbase`; NOT_FOUND. alter: removes
  // each property of `unset` (one not set: INVALID_ARGUMENT), then sets `set`; NOT_FOUND.
  status create_namespace(namespace_descriptor ns);
  status drop_namespace(const std::string& name);
  status alter_namespace(const std::string& name, const std::map<std::string, std::string>& set,
                         const std::vector<std::string>& unset);
  // NOT_FOUND when there is no such namespace.
  result<namespace_descriptor> describe_namespace(const std::string& name) const;
  // Every namespace, by name.
  std::vector<namespace_descriptor> list_namespaces() const;
  // The full names of the tables of namespace `name`, by name. NOT_FOUND.
  result<std::vector<std::string>> list_namespace_tables(const std::string& name) const;

  // The table's schema. Errors: TABLE_NOT_FOUND. In a cluster, a table this node does not
  // know yet (another node's DDL reaches it a moment later) is waited for, at most the
  // member's apply_wait, as are the data calls that name a table (docs/cluster.md).
  result<table_descriptor> describe(const std::string& table) const;
  // The tables this node knows now (no wait).
  std::vector<std::string> list_tables() const;
  // Whether `table` exists; in a cluster, waits as describe() does.
  bool table_exists(const std::string& table) const;
  result<table> open_table(const std::string& name);

  result<table_stats> stats(const std::string& table);

  // HBase's list_regions: the table's partitions in order, with bounds and counts (asks
  // every partition; on a cluster member, a partition another node holds is asked of that
  // node, or of any replica of a replicated one). Errors: TABLE_NOT_FOUND; on a cluster
  // member UNAVAILABLE when no node holding a partition answers.
  result<std::vector<region_info>> list_regions(const std::string& table);
  // HBase's split: the RANGE partition holding `key` becomes two, [start, key) and [key,
  // end), at once: a reader sees every cell exactly once, before or after, and writes
  // made meanwhile wait for the split and then go to the new partitions. Durable before it
  // returns. Errors: TABLE_NOT_FOUND; INVALID_ARGUMENT (an empty key, or a key that is
  // already a bound); UNSUPPORTED (a KEY-partitioned table, whose partitions are fixed as
  // in OceanBase; a cluster member).
  status split_region(const std::string& table, const std::string& key);
  // HBase's split of a region named as list_regions numbers it ('t1/3'): RANGE partition
  // `index` of `table` becomes two at `key`, or, with `key` empty, at its middle row (the
  // row half of its rows sort before), as split_region does it. Errors: as split_region's;
  // INVALID_ARGUMENT too when the table has no partition `index`, when `key` is outside the
  // partition's bounds (the message names them), or, with no key, when the partition holds
  // fewer than two rows.
  status split_partition(const std::string& table, std::uint32_t index, const std::string& key = {});
  // HBase's split of a whole table: every RANGE partition of `table` holding at least two
  // rows is split at its middle row, all in one change made as split_region makes one; a
  // partition with fewer rows stays as it is. Returns how many partitions were split (0:
  // nothing changed). Errors: TABLE_NOT_FOUND; INVALID_ARGUMENT (the table would pass the
  // partition limit or its namespace's region quota); UNSUPPORTED (as split_region).
  result<std::uint32_t> split_table(const std::string& table);
  // HBase's merge_region: RANGE partitions `index` and `index + 1` become one, as
  // split_region does it. Errors: TABLE_NOT_FOUND, INVALID_ARGUMENT (no such pair),
  // UNSUPPORTED (as split_region).
  status merge_regions(const std::string& table, std::uint32_t index);
  // Runs the background reclamation (expired cells, versions beyond MaxVersions) over
  // every partition now and waits for it; then, as HBase checks after a compaction, splits
  // each partition past the table's MAX_FILESIZE at its middle row (see
  // store_options::split_check_interval); in a cluster, every partition of the table,
  // wherever it lives, measured by the node holding it. A partition of one row is not split.
  status compact(const std::string& table);

  // Writes a point-in-time cut of every partition to WiredTiger and checkpoints. Costs
  // what changed since the last snapshot; partitions keep serving meanwhile (each one
  // stops only for the O(1) cut). UNSUPPORTED for a memory-only store.
  result<snapshot_stats> snapshot();

  // --- named snapshots, their files, bulk loads (cellar/backup.h) ---------------------------
  // HBase's `snapshot 'table', 'name'`: keeps every partition of `table`, each at one
  // instant, under `name`, while writes go on; durable when it returns (a store with a
  // directory, where it is a persistence snapshot and a WiredTiger checkpoint of the
  // table's files: no cell is copied). Errors: TABLE_NOT_FOUND; ALREADY_EXISTS (the name is taken);
  // INVALID_ARGUMENT (a name outside [A-Za-z0-9_.-], 1 to 128 bytes, or starting with
  // '.'); IO_ERROR. On a cluster member the snapshot covers every partition wherever it
  // lives and every node answers for it (docs/backup.md, "In a cluster"); there also
  // CONFLICT (a move of a partition, or DDL of the table, ran meanwhile: take it again),
  // UNAVAILABLE (a node holding a partition, or enough nodes to keep two copies, could not
  // be reached). The other calls below work the same way on a cluster member, with
  // UNAVAILABLE for a node that could not be reached.
  status snapshot(const std::string& table, const std::string& name);
  // The named snapshots whose name matches `regex` (RE2, whole name; empty: all), by
  // name. Errors: INVALID_ARGUMENT (a bad regex); IO_ERROR.
  result<std::vector<snapshot_info>> list_snapshots(const std::string& regex = "") const;
  // HBase's list_table_snapshots: those of tables matching `table_regex` whose name
  // matches `name_regex` (empty: any). Errors as list_snapshots.
  result<std::vector<snapshot_info>> list_table_snapshots(const std::string& table_regex,
                                                          const std::string& name_regex = "") const;
  // Removes a named snapshot, and the files of its table when that table was dropped or
  // split since and no other snapshot holds them. Errors: NOT_FOUND; CONFLICT (a restore,
  // clone or export of it is running); IO_ERROR.
  status delete_snapshot(const std::string& name);
  // Puts the snapshot's table back as the snapshot has it: its attributes and families
  // (families added since are dropped), and exactly the snapshot's cells. The table must
  // be disabled (as in HBase) and stays so; a table that no longer exists is created from
  // the snapshot (disabled). The files are checked before anything changes. Durable when it
  // returns; a crash during it leaves the table disabled, to be restored again. Errors:
  // NOT_FOUND (no such snapshot); TABLE_NOT_DISABLED; INVALID_ARGUMENT (the table's
  // partitioning differs from the snapshot's); CORRUPTION (a damaged file); IO_ERROR.
  status restore_snapshot(const std::string& name);
  // Creates `table` (enabled) with the snapshot's schema and cells; it shares nothing
  // with the snapshot's table afterwards. Errors: NOT_FOUND; ALREADY_EXISTS (the table);
  // CORRUPTION; IO_ERROR; create_table's errors.
  status clone_snapshot(const std::string& name, const std::string& table);
  // Writes the snapshot's files to directory `dir` (created; it must not exist or be
  // empty), checksums verified on the way. Errors: NOT_FOUND; ALREADY_EXISTS (`dir` is
  // not empty); CORRUPTION; IO_ERROR.
  status export_snapshot(const std::string& name, const std::string& dir);
  // Takes the snapshot in `dir` (as export_snapshot writes it, possibly from another
  // store) into this store under its own name, checked whole first. Returns it. Errors:
  // ALREADY_EXISTS (a snapshot of that name); CORRUPTION (a damaged or missing file);
  // IO_ERROR.
  result<snapshot_info> import_snapshot(const std::string& dir);
  // Attaches the per-partition cell files in `dir` (cellar/backup.h: a manifest naming
  // families, one part file per partition of `table`, rows routed to that partition) to
  // the live table: each partition takes all of its file's cells in one step, so a reader
  // sees all of them or none. Everything is checked before the first partition changes.
  // Durable when it returns. Errors: TABLE_NOT_FOUND; FAMILY_NOT_FOUND; INVALID_ARGUMENT
  // (a file of another partition count, a row in the wrong partition); CORRUPTION; IO_ERROR.
  // On a cluster member a replicated partition stages a large file's cells in its Raft log,
  // then writes them in one step: there too a reader sees all of them or none.
  result<bulk_load_stats> bulk_load(const std::string& table, const std::string& dir);
  // Moving and balancing partitions over a cluster's nodes: cellar/cluster_admin.h.

  // What the open found on disk.
  recovery_stats recovery() const;
  // Redo log syncs (fdatasync calls) since open; 0 without a log.
  std::uint64_t log_syncs() const;
  // Memory, durability, the last snapshot and the log, at this instant. Cheap: for
  // status pages and metrics. Thread-safe, but not concurrently with close() (after it,
  // the log figures read 0).
  store_info info() const;

  const store_options& options() const;

 private:
  friend struct detail::store_access;
  explicit store(std::shared_ptr<detail::store_impl> impl);
  std::shared_ptr<detail::store_impl> impl_;
};

}  // namespace cellar
