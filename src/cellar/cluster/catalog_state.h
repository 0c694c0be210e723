// cluster/catalog_state.h: the cluster's catalog and the DDL that changes it, as values.
//
// The cluster catalog is what a single store keeps in its own catalog table, kept in
// ZooKeeper instead: every table group's schema (catalog/catalog.h: families with ids,
// partition rule, uid), plus a version bumped by every DDL and the counters that hand out
// table uids and family ids, so they are unique in the whole cluster. The master applies
// DDL with apply_ddl() and commits the result with compare-and-set on the version
// (cluster/ddl.h); every node reads it back (cluster/zk_state.h).
//
// apply_ddl() follows the store's DDL (store.h) rule for rule: the same checks, the same
// errors, the same family-id and partition-rule handling, so a DDL means the same thing on
// one node and on a cluster.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/namespaces.h"
#include "cellar/schema.h"
#include "cellar/status.h"

namespace cellar::cluster {

struct cluster_catalog {
  std::uint64_t version = 0;  // 0: no DDL yet
  std::uint64_t next_uid = 1;
  std::uint32_t next_family_id = 1;
  std::map<std::string, detail::table_schema> tables;  // schema.version: catalog version of its last change
  detail::namespace_map namespaces = detail::builtin_namespaces();

  const detail::table_schema* find(std::string_view table) const;
};

// One DDL statement, as store.h's calls.
struct ddl_request {
  enum class kind : std::uint8_t {
    create_table,        // table group and families at once (descriptor, origin)
    create_table_group,  // an empty group (table)
    add_family,          // (table, family, partitioning)
    alter_family,        // change or add a family (table, family)
    drop_family,         // (table, family_name)
    drop_table,          // (table)
    truncate_table,      // new family ids: the old cells become unreachable (table)
    disable_table,       // HBase's disable (table)
    enable_table,        // HBase's enable (table)
    truncate_family,     // a new id for one family (table, family_name)
    alter_table,         // table attributes (table, unset_attributes, then set_attributes)
    create_namespace,    // (ns)
    drop_namespace,      // (ns.name)
    alter_namespace,     // (ns.name, unset_attributes, then set_attributes)
    reshape_table,       // a split or merge: RANGE bounds `partitioning`, incarnation `uid` (below)
  };
  kind what = kind::create_table_group;
  std::string table;
  table_descriptor descriptor;
  schema_origin origin = schema_origin::oceanbase_ddl;
  family_descriptor family;
  partition_spec partitioning;
  std::string family_name;
  std::map<std::string, std::string> set_attributes;
  std::vector<std::string> unset_attributes;
  namespace_descriptor ns;
  // When set, the DDL applies only to this catalog version (CONFLICT otherwise): a caller
  // that decided from what it read is refused if anything changed since.
  std::optional<std::uint64_t> expected_version;
  // reshape_table (cluster/reshaper.h): the table's new incarnation must get uid `uid`
  // (CONFLICT otherwise: its partitions were built under it), its partitions go to
  // `owners` (one node each), and the move intents `intents`, under which the old
  // partitions were frozen, must still exist; the commit removes them. A replicated table's
  // partitions are Raft groups: `replica_sets` gives each one's replicas (the preferred
  // leader, its owner, first); empty for single-copy partitions.
  std::uint64_t uid = 0;
  std::vector<std::string> owners;
  std::vector<std::string> intents;
  std::vector<std::vector<std::string>> replica_sets;

  static ddl_request create(table_descriptor d, schema_origin o);
  static ddl_request create_group(std::string table);
  static ddl_request add(std::string table, family_descriptor f, partition_spec p);
  static ddl_request alter(std::string table, family_descriptor f);
  // `origin`: whose rule applies to a table's last family (store.h: drop_family).
  static ddl_request drop_family(std::string table, std::string family,
                                 schema_origin origin = schema_origin::oceanbase_ddl);
  static ddl_request drop(std::string table);
  static ddl_request truncate(std::string table);
  static ddl_request set_disabled(std::string table, bool disabled);
  static ddl_request truncate_family(std::string table, std::string family);
  static ddl_request alter_table(std::string table, std::map<std::string, std::string> set,
                                 std::vector<std::string> unset);
  static ddl_request create_namespace(namespace_descriptor ns);
  static ddl_request drop_namespace(std::string name);
  static ddl_request alter_namespace(std::string name, std::map<std::string, std::string> set,
                                     std::vector<std::string> unset);
  static ddl_request reshape(std::string table, partition_spec p, std::uint64_t uid, std::vector<std::string> owners,
                             std::vector<std::string> intents, std::uint64_t expected_version);

  friend bool operator==(const ddl_request&, const ddl_request&) = default;
};

// What a DDL did to one table group.
struct ddl_outcome {
  cluster_catalog catalog;  // the whole catalog after the DDL (version + 1)
  std::string table;
  bool dropped = false;              // the table group is gone
  bool new_partitions = false;       // its partitions are new (created, or a new partition rule)
  bool old_partitions_gone = false;  // partitions it had before are retired (dropped, new rule)
};

// Applies `r` to `c`. Errors as the store's: INVALID_ARGUMENT, ALREADY_EXISTS,
// TABLE_NOT_FOUND, FAMILY_NOT_FOUND; CONFLICT when r.expected_version is not c.version.
result<ddl_outcome> apply_ddl(const cluster_catalog& c, const ddl_request& r);

std::string encode_ddl_request(const ddl_request& r);
result<ddl_request> decode_ddl_request(std::string_view bytes);  // CORRUPTION

// The /catalog znode: version, counters and each table's version (so readers fetch only
// the tables that changed, and can tell a consistent read from a torn one).
struct catalog_header {
  std::uint64_t version = 0;
  std::uint64_t next_uid = 1;
  std::uint32_t next_family_id = 1;
  std::map<std::string, std::uint64_t> tables;  // name -> schema version
  detail::namespace_map namespaces = detail::builtin_namespaces();
};
catalog_header header_of(const cluster_catalog& c);
std::string encode_catalog_header(const catalog_header& h);
result<catalog_header> decode_catalog_header(std::string_view bytes);
// A /catalog/tables/t_<name> znode: the schema's version, then encode_schema().
std::string encode_table_entry(const detail::table_schema& t);
result<detail::table_schema> decode_table_entry(std::string_view bytes);

}  // namespace cellar::cluster
