// catalog/ddl.h: the OceanBase DDL subset that OBKV-HBase users write, parsed and described
// (store/ddl_apply.h applies it to a store).
//
// OBKV-HBase maps an HBase table to a table group and each column family to a table
// `group$family` (seeds 000 and 001). This parser reads that schema language:
//
//   CREATE TABLEGROUP [IF NOT EXISTS] g;          DROP TABLEGROUP [IF EXISTS] g;
//   CREATE TABLE [IF NOT EXISTS] `g$f` (K varbinary(1024), Q varbinary(256), T bigint,
//       V varbinary(1048576) NOT NULL, [K_PREFIX varbinary(1024) GENERATED ALWAYS AS
//       (substring(K, 1, n)),] PRIMARY KEY(K, Q, T))
//       [TABLEGROUP = g] [kv_attributes = '{"HBase": {"TimeToLive": s, "MaxVersions": n}}']
//       [PARTITION BY KEY(K) PARTITIONS n | KEY(K_PREFIX) PARTITIONS n
//        | RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN ('a'), ..., PARTITION pn VALUES
//          LESS THAN MAXVALUE)];
//   CREATE TABLE `g$f` (K, T, S, V json, G bigint GENERATED ALWAYS AS (ABS(T)),
//       PRIMARY KEY(K, T, S)) [PARTITION BY KEY(K) PARTITIONS n];       -- time series
//   CREATE TABLE [IF NOT EXISTS] g2$f2 LIKE g1$f1;
//   DROP TABLE [IF EXISTS] g$f [, g2$f2 ...];
//   ALTER TABLE g$f [SET] kv_attributes = '{"HBase": {...}}';   -- replaces TTL and MaxVersions
//   TRUNCATE [TABLE] g$f;                                           -- empties one family
//   SHOW TABLEGROUPS [LIKE 'p'];  SHOW TABLES [LIKE 'p'];  DESC g$f;   -- change nothing
//   CREATE DATABASE [IF NOT EXISTS] db;  DROP DATABASE [IF EXISTS] db;  USE db;
//   SHOW DATABASES [LIKE 'p'];       -- a database is an HBase namespace (cellar/names.h):
//       table group g of database db is the HBase table db:g; `db.g$f` names it anywhere
//   ALTER SYSTEM MOVE PARTITION 'g/i' [FROM 'node'] TO 'node';  ALTER SYSTEM BALANCE;
//   ALTER SYSTEM TRANSFER LEADER PARTITION 'g/i' TO 'node';     -- a cluster's moves
//       (cellar's own statements, in OceanBase's ALTER SYSTEM style: the shell's `move`,
//       `balancer` and `transfer_leader` send them)
//
// Statements are separated by `;`; keywords are case-insensitive; identifiers may be
// backquoted; `-- `, `#` and `/* */` comments are ignored. Anything outside the OBKV-HBase
// model (other columns, other keys, two-level partitioning, other generated columns) is
// refused with INVALID_ARGUMENT or UNSUPPORTED and a message naming the line and column;
// another statement (SELECT, CREATE INDEX, SHOW DATABASES, ...) with UNSUPPORTED naming it.
//
// Thread safety: plain functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/schema.h"
#include "cellar/status.h"

namespace cellar {

struct ddl_statement {
  enum class kind : std::uint8_t {
    create_table_group,  // CREATE TABLEGROUP group
    drop_table_group,    // DROP TABLEGROUP group
    create_table,        // CREATE TABLE group$family (...): adds a family
    create_table_like,   // CREATE TABLE group$family LIKE source_group$source_family
    drop_table,          // DROP TABLE group$family: drops a family
    alter_table,         // ALTER TABLE group$family kv_attributes = '...': descriptor's TTL, versions
    truncate_table,      // TRUNCATE TABLE group$family: removes the family's cells
    show_table_groups,   // SHOW TABLEGROUPS [LIKE pattern]
    show_tables,         // SHOW TABLES [LIKE pattern]: the families, as group$family
    describe_table,      // DESC group$family
    move_partition,      // ALTER SYSTEM MOVE PARTITION 'group/index' [FROM 'node'] TO 'node'
    balance,             // ALTER SYSTEM BALANCE
    transfer_leader,     // ALTER SYSTEM TRANSFER LEADER PARTITION 'group/index' TO 'node'
    create_database,     // CREATE DATABASE db: a namespace (cellar/names.h)
    drop_database,       // DROP DATABASE db: an empty namespace
    use_database,        // USE db: later statements of the same text name db's tables
    show_databases,      // SHOW DATABASES [LIKE pattern]: the namespaces
  };
  kind what = kind::create_table_group;
  bool if_not_exists = false;  // CREATE ... IF NOT EXISTS: an existing object is not an error
  bool if_exists = false;      // DROP ... IF EXISTS: a missing object is not an error

  std::string group;   // the table group (the HBase table; `db.g` is read as `db:g`); the database
  std::string family;  // the family, for the TABLE statements

  // create_table: the family (descriptor.name == family) and the group's partition rule.
  family_descriptor descriptor;
  partition_spec partitioning;
  // create_table: true when the statement said TABLEGROUP = group. Without it, a missing
  // group is created implicitly (OceanBase would create an unbound table).
  bool explicit_table_group = false;

  // create_table_like: the template table.
  std::string source_group;
  std::string source_family;

  // move_partition, transfer_leader: the partition ("group/index", as status 'detailed'
  // names it) and the node it goes to; move_partition with FROM: the node holding the
  // replica that moves (empty: the partition's owner, or its preferred leader's replica).
  std::string partition;
  std::string node;
  std::string from_node;

  // show_*: the LIKE pattern (% any bytes, _ one byte, \ escapes), if given.
  std::optional<std::string> pattern;

  friend bool operator==(const ddl_statement&, const ddl_statement&) = default;
};

// Parses one or more statements. Errors: INVALID_ARGUMENT (syntax, or a table outside the
// OBKV-HBase model), UNSUPPORTED (valid OceanBase DDL cellar does not do: SUBPARTITION,
// generated columns other than substring, secondary indexes, ...). Nothing is parsed
// partially: either every statement parses or the error is returned.
result<std::vector<ddl_statement>> parse_ddl(std::string_view sql);

// SQL's LIKE: whether `text` matches `pattern` (% any run of bytes, _ one byte, a
// backslash makes the next character literal), byte for byte.
bool like_match(std::string_view pattern, std::string_view text);

// One line describing the statement, e.g. "CREATE TABLE htable1$family1: normal family,
// V varbinary(1048576), MaxVersions all, TimeToLive none, KEY(K) PARTITIONS 97".
std::string describe_ddl(const ddl_statement& st);

}  // namespace cellar
