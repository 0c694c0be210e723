// cellar/schema.h: what a table group, a column family and a partition rule are.
//
// An HBase table is a table group; each of its column families is the OBKV table
// `group$family` with columns K (row key), Q (qualifier), T (timestamp) and V (value), or,
// for time-series families, K, T, S, V json and G. All families of a group share the
// group's partition rule. These are plain values: the DDL parser (shell) and the embedded
// API both build them and hand them to `store`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cellar {

// Limits from the OBKV schema (K varbinary(1024), Q varbinary(256), V varbinary(1 MiB)).
inline constexpr std::size_t max_row_key_bytes = 1024;
inline constexpr std::size_t max_qualifier_bytes = 256;
inline constexpr std::size_t default_value_bytes = 1u << 20;     // varbinary(1048576)
inline constexpr std::size_t longblob_value_bytes = 512u << 20;  // OceanBase LOB limit
inline constexpr std::size_t max_partitions = 8192;

enum class family_kind : std::uint8_t {
  normal,       // K, Q, T, V
  time_series,  // K, T, S, V json, G (OBKV 4.3.5 BP2 time-series model)
};

struct family_descriptor {
  std::string name;
  // Versions kept per column; 0 means "keep all" (OBKV DDL without MaxVersions).
  std::uint32_t max_versions = 0;
  // Family TimeToLive in seconds; 0 means cells never expire by age.
  std::int64_t ttl_seconds = 0;
  // Largest value accepted: varbinary(n) gives n, longblob gives 512 MiB.
  std::size_t max_value_bytes = default_value_bytes;
  family_kind kind = family_kind::normal;
  // HBase's MIN_VERSIONS: the family TimeToLive never removes the newest `min_versions`
  // versions of a column (a cell TTL still does). At most max_versions when that is set;
  // normal families only.
  std::uint32_t min_versions = 0;
  // HBase column family settings kept with the family, by their shell names (BLOOMFILTER,
  // COMPRESSION, KEEP_DELETED_CELLS, ...), and the user's METADATA under its own keys:
  // name -> value as `describe` shows them. The store checks them when a family is
  // created or altered: it keeps those whose meaning cellar has (most describe HBase's
  // files and block cache, which cellar does not have, and change nothing here) and
  // refuses with UNSUPPORTED, naming it, a setting it cannot honour (KEEP_DELETED_CELLS
  // => TRUE, ENCRYPTION, ...). docs/semantics.md §7 lists each one.
  std::map<std::string, std::string> attributes = {};

  friend bool operator==(const family_descriptor&, const family_descriptor&) = default;
};

// How rows map to partitions. One level only, as in OBKV.
struct partition_spec {
  enum class method : std::uint8_t {
    none,        // a single partition (OBKV: non-partitioned table)
    key,         // PARTITION BY KEY(K) PARTITIONS n: MurmurHash64A(K) % n
    key_prefix,  // KEY(K_PREFIX) with K_PREFIX = substring(K, 1, prefix_bytes)
    range,       // PARTITION BY RANGE COLUMNS(K): partition i holds keys < bounds[i]
  };
  method how = method::none;
  std::uint32_t partitions = 1;    // for key and key_prefix
  std::uint32_t prefix_bytes = 0;  // for key_prefix
  // For range: ascending exclusive upper bounds of every partition but the last, whose
  // bound is MAXVALUE. bounds.size() + 1 partitions.
  std::vector<std::string> bounds;

  static partition_spec single() { return {}; }
  static partition_spec hash(std::uint32_t n) { return {method::key, n, 0, {}}; }
  static partition_spec hash_prefix(std::uint32_t n, std::uint32_t prefix) {
    return {method::key_prefix, n, prefix, {}};
  }
  static partition_spec range_bounds(std::vector<std::string> b) {
    partition_spec s{method::range, 0, 0, std::move(b)};
    s.partitions = static_cast<std::uint32_t>(s.bounds.size() + 1);
    return s;
  }
  std::uint32_t count() const { return how == method::none ? 1 : partitions; }

  friend bool operator==(const partition_spec&, const partition_spec&) = default;
};

// An HBase namespace, an OceanBase database (cellar/names.h): its name and properties.
// The store keeps every property as given and honours HBase's quotas:
// hbase.namespace.quota.maxtables (tables the namespace may hold) and
// hbase.namespace.quota.maxregions (partitions its tables may have together).
struct namespace_descriptor {
  std::string name;
  std::map<std::string, std::string> properties = {};

  friend bool operator==(const namespace_descriptor&, const namespace_descriptor&) = default;
};

// Where the default number of versions comes from (semantics R7).
enum class schema_origin : std::uint8_t {
  oceanbase_ddl,  // families keep all versions unless MaxVersions is given
  hbase_shell,    // families keep 1 version unless VERSIONS is given
};

struct table_descriptor {
  std::string name;
  partition_spec partitioning;
  std::vector<family_descriptor> families;
  // HBase table attributes by their shell names (READONLY, MAX_FILESIZE, DURABILITY,
  // OWNER, ...) and the user's METADATA under its own keys: name -> value as `describe`
  // shows them. READONLY => 'true' makes the table refuse every write with
  // TABLE_READ_ONLY; the store checks the others as it does family attributes
  // (docs/semantics.md §7).
  std::map<std::string, std::string> attributes = {};

  friend bool operator==(const table_descriptor&, const table_descriptor&) = default;
};

}  // namespace cellar
