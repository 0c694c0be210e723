// catalog/hbase_options.h: HBase's column family settings and table attributes, as cellar
// keeps them (family_descriptor::attributes, table_descriptor::attributes).
//
// The HBase 2.x shell's `create` and `alter` take, besides a family's NAME, VERSIONS,
// MIN_VERSIONS and TTL (fields of family_descriptor), a set of family settings and table
// attributes. No setting is ignored: each one is either
//   - honoured: READONLY (writes are refused with TABLE_READ_ONLY), DURABILITY (when the
//     store's own durability gives at least as much), REGION_REPLICATION => 1, 3 or 5
//     (replicas on distinct nodes of a cluster, replication_factor() below),
//     KEEP_DELETED_CELLS => FALSE and NEW_VERSION_BEHAVIOR => true (what physical deletes
//     are), REPLICATION_SCOPE => 0, DFS_REPLICATION => 0 or 1, OWNER and METADATA
//     (kept and shown);
//   - kept and shown, without effect: the settings of HBase's files, block cache,
//     memstore flushes, compactions and region splits (BLOCKSIZE, BLOOMFILTER,
//     COMPRESSION, IN_MEMORY, MEMSTORE_FLUSHSIZE, MAX_FILESIZE, SPLIT_POLICY, ...): cellar
//     holds every cell in memory and persists by snapshots, so none of them changes what
//     a read or write does;
//   - refused with UNSUPPORTED naming it: KEEP_DELETED_CELLS => TRUE/TTL (deletes are
//     physical, semantics R16), NEW_VERSION_BEHAVIOR => false (the same), ENCRYPTION,
//     REPLICATION_SCOPE => 1, DFS_REPLICATION above 1, CONFIGURATION and coprocessors.
// A name that is none of HBase's settings is the user's METADATA. Values are kept in the
// form HBase's `describe` prints them: booleans 'true'/'false', names of an enumeration in
// upper case, numbers in decimal. docs/semantics.md §7 has the table of every setting.
//
// Thread safety: plain functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/durability.h"
#include "cellar/schema.h"
#include "cellar/status.h"

namespace cellar {

using attribute_map = std::map<std::string, std::string>;

// Whether `name` (as the shell writes it, upper case) is one of HBase's column family
// settings other than NAME, VERSIONS, MIN_VERSIONS and TTL; or one of its table
// attributes (not counting METADATA and CONFIGURATION, which are groups of them).
bool is_family_setting(std::string_view name);
bool is_table_setting(std::string_view name);

// Checks f.attributes and rewrites each value in its shown form. Errors: UNSUPPORTED
// naming a setting cellar cannot honour; INVALID_ARGUMENT naming a setting whose value is
// not of its kind, or a name or value that is empty or too long.
status check_family_attributes(family_descriptor& f);

// The same for a table's attributes. `store` is the durability the store gives every
// write: a table's DURABILITY may ask for as much or less (SKIP_WAL: snapshot, ASYNC_WAL:
// log, SYNC_WAL and FSYNC_WAL: log-sync), never more (UNSUPPORTED).
status check_table_attributes(attribute_map& a, durability store);

// `a` with each attribute named in `unset` removed, then each of `set` set (HBase's
// table_att_unset, then the new values). Errors: INVALID_ARGUMENT for a name in `unset`
// that is not set (HBase's "Could not find attribute"); `a` is then unchanged.
status apply_table_attributes(attribute_map& a, const attribute_map& set, const std::vector<std::string>& unset);

// Whether `a` makes a table read-only (READONLY => 'true', as checked).
inline bool read_only(const attribute_map& a) {
  if (a.empty()) return false;
  auto it = a.find("READONLY");
  return it != a.end() && it->second == "true";
}

// The replicas of each partition `a` asks for (REGION_REPLICATION, as checked); 1 when unset.
inline std::uint32_t replication_factor(const attribute_map& a) {
  auto it = a.find("REGION_REPLICATION");
  return it == a.end() ? 1 : static_cast<std::uint32_t>(std::stoul(it->second));
}

}  // namespace cellar
