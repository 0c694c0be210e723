// catalog/catalog.h: the immutable schema of one table group, as the partitions see it.
//
// The store keeps one `table_schema` per table group behind a shared_ptr and replaces it
// whole on every DDL change (copy, modify, swap), so readers never lock: a request holds
// the schema it was routed with for as long as it runs. Family ids are unique for the
// life of the store, so a dropped or truncated family's cells can never be reached
// through a new family of the same name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/schema.h"
#include "cellar/status.h"

namespace cellar::detail {

struct family_schema {
  family_descriptor desc;
  std::uint32_t id = 0;
};

struct table_schema {
  std::string name;
  std::uint64_t uid = 0;  // unique for the life of the store directory (names of WT tables)
  std::uint64_t version = 0;
  bool partitioned = false;  // false until the group's first family fixes its rule
  // HBase's disable (SH3): reads and writes are refused with TABLE_DISABLED while set.
  // Persisted with the schema, so it survives a restart.
  bool disabled = false;
  // HBase table attributes (table_descriptor::attributes), checked by
  // catalog/hbase_options.h.
  std::map<std::string, std::string> attributes;
  partition_spec partitioning;
  std::vector<family_schema> families;  // sorted by name

  const family_schema* find(std::string_view family) const;
  table_descriptor descriptor() const;
};

using schema_ptr = std::shared_ptr<const table_schema>;

// Checks a table or family name: 1..128 bytes of [A-Za-z0-9_.-] (HBase's table name
// characters; '$' and ':' are separators in cellar's names).
status check_name(std::string_view what, std::string_view name);
// Checks a table (group) name: `qualifier`, or `namespace:qualifier` with each part as
// check_name wants it (cellar/names.h).
status check_table_name(std::string_view name);
// A family's own fields: its name, TTL, value size, and MIN_VERSIONS (at most
// max_versions when that is set; not for a time-series family). Its attributes are
// checked by catalog/hbase_options.h.
status check_family(const family_descriptor& f);
status check_partitioning(const partition_spec& p);
// Whether `family` (one of t's) may be dropped: HBase's rule (hbase_shell) keeps a table's
// last family (INVALID_ARGUMENT, with HBase's words); OceanBase's (oceanbase_ddl) lets a
// table group go empty (store.h: drop_family).
status check_family_drop(const table_schema& t, std::string_view family, schema_origin origin);

// The catalog's stored form of a schema (docs/storage.md); decode reports CORRUPTION.
std::string encode_schema(const table_schema& t);
result<table_schema> decode_schema(std::string_view bytes);

}  // namespace cellar::detail
