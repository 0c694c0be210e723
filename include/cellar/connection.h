// cellar/connection.h: one interface over an embedded store or a cellar-server.
//
// The shell, the load generator and the integration tests talk to cellar through a
// `connection`, so the embedded path and the RPC path run the same code above it.
// `connect_embedded` wraps a store in this process; `connect` (cellar/client.h) dials a
// server. Errors are the shared status codes either way; a lost server connection is
// UNAVAILABLE.
//
// Thread safety: an embedded connection may be shared between threads; an RPC
// connection belongs to the thread that made it (Cap'n Proto runs an event loop there).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/ops.h"
#include "cellar/schema.h"
#include "cellar/status.h"
#include "cellar/store.h"
#include "cellar/summary.h"

namespace cellar {

// Pages the results of one scan.
class row_stream {
 public:
  virtual ~row_stream() = default;
  // Up to `n` results; an empty vector means the scan is over.
  virtual result<std::vector<row_result>> next(std::size_t n) = 0;
};

class connection {
 public:
  virtual ~connection() = default;

  // One result per action (store.h: table::batch). Every connection cellar makes sends the
  // actions a split or merge in a cluster refuses (RESHAPING: not applied) again, for up
  // to 30 s, so a writer sees a split as a pause.
  virtual std::vector<op_result> batch(const std::string& table, std::vector<batch_op> ops) = 0;
  virtual result<std::unique_ptr<row_stream>> scan(const std::string& table, const cellar::scan& s) = 0;

  // One or more OceanBase DDL statements (CREATE TABLEGROUP, CREATE TABLE g$f ..., DROP ...).
  virtual status ddl(std::string_view statements) = 0;
  virtual status create_table(const table_descriptor& d, schema_origin origin) = 0;
  virtual status alter_family(const std::string& table, const family_descriptor& f) = 0;
  virtual status drop_family(const std::string& table, const std::string& family) = 0;
  virtual status drop_table(const std::string& table) = 0;
  virtual status truncate_table(const std::string& table) = 0;
  // HBase's disable / enable / is_enabled (store.h: disable_table, enable_table,
  // is_table_enabled): a disabled table answers reads and writes with TABLE_DISABLED.
  virtual status disable_table(const std::string& table) = 0;
  virtual status enable_table(const std::string& table) = 0;
  virtual result<bool> is_table_enabled(const std::string& table) = 0;
  // HBase's alter of table attributes (store.h: alter_table).
  virtual status alter_table(const std::string& table, const std::map<std::string, std::string>& set,
                             const std::vector<std::string>& unset) = 0;

  // HBase's namespaces (store.h: create_namespace ... list_namespace_tables). A connection
  // that cannot reach them answers UNSUPPORTED.
  virtual status create_namespace(const namespace_descriptor& ns);
  virtual status drop_namespace(const std::string& name);
  virtual status alter_namespace(const std::string& name, const std::map<std::string, std::string>& set,
                                 const std::vector<std::string>& unset);
  virtual result<namespace_descriptor> describe_namespace(const std::string& name);
  virtual result<std::vector<namespace_descriptor>> list_namespaces();
  virtual result<std::vector<std::string>> list_namespace_tables(const std::string& name);

  // HBase's list_regions, split and merge_region (store.h: list_regions, split_region,
  // split_partition, split_table, merge_regions). A connection that cannot reach them
  // answers UNSUPPORTED (so does a server older than split_partition and split_table).
  virtual result<std::vector<region_info>> list_regions(const std::string& table);
  virtual status split_region(const std::string& table, const std::string& key);
  virtual status split_partition(const std::string& table, std::uint32_t index, const std::string& key);
  virtual result<std::uint32_t> split_table(const std::string& table);
  virtual status merge_regions(const std::string& table, std::uint32_t index);

  virtual result<std::vector<std::string>> list_tables() = 0;
  virtual result<table_descriptor> describe(const std::string& table) = 0;
  virtual result<snapshot_stats> snapshot() = 0;
  virtual result<table_stats> stats(const std::string& table) = 0;
  // Every table's description and counts and the store-wide figures (memory, durability,
  // last snapshot, log): what cellar-server's status page shows. Asks every partition.
  // Over RPC `connections` is the server's open client connections; embedded it is -1.
  virtual result<store_summary> summary() = 0;

  // Named snapshots, their files and bulk loads (store.h documents each call; over RPC the
  // directories are the server's). A connection that cannot reach them answers UNSUPPORTED.
  virtual status snapshot_table(const std::string& table, const std::string& name);
  // Snapshots of tables matching `table_regex` named to match `name_regex` (empty: any).
  virtual result<std::vector<snapshot_info>> list_snapshots(const std::string& table_regex,
                                                            const std::string& name_regex);
  virtual status delete_snapshot(const std::string& name);
  virtual status restore_snapshot(const std::string& name);
  virtual status clone_snapshot(const std::string& name, const std::string& table);
  virtual status export_snapshot(const std::string& name, const std::string& dir);
  virtual result<snapshot_info> import_snapshot(const std::string& dir);
  virtual result<bulk_load_stats> bulk_load(const std::string& table, const std::string& dir);

  // Conveniences over batch().
  result<row_result> get(const std::string& table, const cellar::get& g);
  status put(const std::string& table, const cellar::put& p);
};

// A connection to `s`, which must outlive it.
std::unique_ptr<connection> connect_embedded(store& s);

}  // namespace cellar
