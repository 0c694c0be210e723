// shell/table_options.h: the arguments of the HBase shell's `create` and `alter` read into
// descriptors, and descriptors written back as `describe` shows them (private to
// src/cellar/shell).
//
// Every option the HBase 2.x shell takes there is read (hbase-shell's admin.rb: `hcd`
// for a family, `update_htd_from_arg` for the table): the family fields (VERSIONS,
// MIN_VERSIONS, TTL) into family_descriptor, the other settings and METADATA into the
// attributes, which the store checks (catalog/hbase_options.h: honoured, kept without
// effect, or refused by name). CONFIGURATION is refused here (cellar reads no HBase
// configuration keys); a key HBase does not know is INVALID_ARGUMENT naming it.
//
// Thread safety: plain functions.
#pragma once

#include <string>
#include <vector>

#include "cellar/schema.h"
#include "shell/command.h"

namespace cellar::shell {

// A family given as a name or a {NAME => ..., ...} hash. `old`: the family as it is now
// (alter), whose settings the hash does not name keep their value; null for a new family.
result<family_descriptor> family_from(const shell_value& v, const family_descriptor* old);

// One hash of `create` that is not a family: SPLITS, SPLITS_FILE, NUMREGIONS (with
// SPLITALGO: HBase's HexStringSplit, DecimalStringSplit or UniformSplit range bounds;
// alone: that many KEY(K) hash partitions), METHOD => 'table_att' and the table's
// attributes, into `d`.
status create_options_from(const shell_hash& h, table_descriptor& d);

// One hash of `alter` that is not a family: the attributes it sets. METHOD =>
// 'table_att' may be given; the partitioning cannot change (SPLITS, NUMREGIONS:
// INVALID_ARGUMENT).
result<std::map<std::string, std::string>> alter_options_from(const shell_hash& h);

// `describe`'s text: "{NAME => 'f', VERSIONS => '1', ...}" and, for a table with
// attributes, "{TABLE_ATTRIBUTES => {...}}" (empty without).
std::string describe_family(const family_descriptor& f);
std::string describe_table_attributes(const std::map<std::string, std::string>& a);

}  // namespace cellar::shell
