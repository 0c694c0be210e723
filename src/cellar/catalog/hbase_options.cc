// catalog/hbase_options.cc: the table of HBase's family settings and table attributes
// (hbase_options.h), with the kind of value each takes and what cellar does with it.
#include "catalog/hbase_options.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "ascii.h"

namespace cellar {
namespace {

enum class value_kind : std::uint8_t { boolean, integer, enumeration, text };

// What cellar does with a setting whose value passed its kind's check: nothing more
// (kept: honoured, or without effect), or a refusal for some values.
struct setting {
  std::string_view name;
  value_kind kind;
  std::int64_t min = 0, max = std::numeric_limits<std::int64_t>::max();  // integer
  std::vector<std::string_view> values = {};                             // enumeration (upper case), text (known names)
  // Returns the refusal of a value (in its shown form) cellar cannot honour; ok when it
  // keeps it.
  status (*refuse)(std::string_view shown) = nullptr;
};

status unsupported(std::string_view name, std::string_view shown, std::string_view why) {
  return {code::unsupported,
          std::string(name) + " => '" + std::string(shown) + "' is not supported: " + std::string(why)};
}

const std::vector<setting>& family_settings() {
  static const std::vector<setting> s = [] {
    const auto b = value_kind::boolean;
    const auto e = value_kind::enumeration;
    const auto i = value_kind::integer;
    const std::vector<std::string_view> compression{"NONE",  "LZO",  "GZ",   "SNAPPY", "LZ4",
                                                    "BZIP2", "ZSTD", "LZMA", "BROTLI"};
    std::vector<setting> v{
        {"BLOCKCACHE", b},
        {"BLOCKSIZE", i, 1024, 16 << 20},
        {"BLOOMFILTER", e, 0, 0, {"NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH", "ROWPREFIX_DELIMITED"}},
        {"CACHE_BLOOMS_ON_WRITE", b},
        {"CACHE_DATA_ON_WRITE", b},
        {"CACHE_INDEX_ON_WRITE", b},
        {"COMPRESSION", e, 0, 0, compression},
        {"COMPRESSION_COMPACT", e, 0, 0, compression},
        {"COMPRESS_TAGS", b},
        {"DATA_BLOCK_ENCODING", e, 0, 0, {"NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"}},
        {"DFS_REPLICATION",
         i,
         0,
         32767,
         {},
         [](std::string_view v) {
           return v == "0" || v == "1" ? status::ok()
                                       : unsupported("DFS_REPLICATION", v,
                                                     "cellar keeps one copy of a store's files, on the disk of the "
                                                     "node that serves it");
         }},
        {"ENCRYPTION",
         value_kind::text,
         0,
         0,
         {},
         [](std::string_view v) {
           return unsupported("ENCRYPTION", v, "cellar does not encrypt the files it writes");
         }},
        {"ENCRYPTION_KEY",
         value_kind::text,
         0,
         0,
         {},
         [](std::string_view) {
           return status{code::unsupported,
                         "ENCRYPTION_KEY is not supported: cellar does not encrypt the files it writes"};
         }},
        {"EVICT_BLOCKS_ON_CLOSE", b},
        {"IN_MEMORY", b},
        {"IN_MEMORY_COMPACTION", e, 0, 0, {"NONE", "BASIC", "EAGER", "ADAPTIVE"}},
        {"IS_MOB", b},
        {"KEEP_DELETED_CELLS",
         e,
         0,
         0,
         {"FALSE", "TRUE", "TTL"},
         [](std::string_view v) {
           return v == "FALSE" ? status::ok()
                               : unsupported("KEEP_DELETED_CELLS", v,
                                             "deletes are physical in cellar (semantics R16): a deleted cell is "
                                             "gone at once, no delete marker keeps it for time-range or raw reads");
         }},
        {"MOB_COMPACT_PARTITION_POLICY", e, 0, 0, {"DAILY", "WEEKLY", "MONTHLY"}},
        {"MOB_THRESHOLD", i},
        {"NEW_VERSION_BEHAVIOR",
         b,
         0,
         0,
         {},
         [](std::string_view v) {
           return v == "true" ? status::ok()
                              : unsupported("NEW_VERSION_BEHAVIOR", v,
                                            "deletes are physical in cellar (semantics R16), which is the new "
                                            "version behaviour: a delete never masks a later put");
         }},
        {"PREFETCH_BLOCKS_ON_OPEN", b},
        {"REPLICATION_SCOPE",
         i,
         0,
         1,
         {},
         [](std::string_view v) {
           return v == "0" ? status::ok()
                           : unsupported("REPLICATION_SCOPE", v, "cellar does not replicate to peer clusters");
         }},
        {"STORAGE_POLICY",
         e,
         0,
         0,
         {"HOT", "WARM", "COLD", "ALL_SSD", "ONE_SSD", "LAZY_PERSIST", "ALL_NVDIMM", "PROVIDED"}},
    };
    return v;
  }();
  return s;
}

const std::vector<setting>& table_settings() {
  static const std::vector<setting> s = [] {
    const auto b = value_kind::boolean;
    const auto i = value_kind::integer;
    const auto t = value_kind::text;
    std::vector<setting> v{
        {"COMPACTION_ENABLED", b},
        // Checked against the store's durability in check_table_attributes.
        {"DURABILITY",
         value_kind::enumeration,
         0,
         0,
         {"USE_DEFAULT", "SKIP_WAL", "ASYNC_WAL", "SYNC_WAL", "FSYNC_WAL"}},
        {"FLUSH_POLICY",
         t,
         0,
         0,
         {"FlushAllStoresPolicy", "FlushAllLargeStoresPolicy", "FlushNonSloppyStoresFirstPolicy"}},
        // HBase's sanity checks refuse a MAX_FILESIZE below 2 MiB and a MEMSTORE_FLUSHSIZE
        // below 1 MiB (TableDescriptorChecker).
        {"MAX_FILESIZE", i, 2 << 20},
        {"MEMSTORE_FLUSHSIZE", i, 1 << 20},
        {"MERGE_ENABLED", b},
        {"NORMALIZATION_ENABLED", b},
        {"NORMALIZER_TARGET_REGION_COUNT", i, -1},
        {"NORMALIZER_TARGET_REGION_SIZE", i, -1},
        {"NORMALIZER_TARGET_REGION_SIZE_MB", i, -1},
        {"OWNER", t},
        {"PRIORITY", i, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()},
        {"READONLY", b},
        {"REGION_MEMSTORE_REPLICATION", b},
        // Each partition a Raft group of this many voting replicas on distinct nodes
        // (docs/cluster.md §9); the cluster's master refuses more than its live nodes.
        {"REGION_REPLICATION",
         i,
         1,
         5,
         {},
         [](std::string_view v) {
           return v == "1" || v == "3" || v == "5"
                      ? status::ok()
                      : status{code::invalid_argument,
                               "REGION_REPLICATION => '" + std::string(v) +
                                   "': a partition has 1, 3 or 5 replicas (a Raft group needs an odd number)"};
         }},
        {"SPLIT_ENABLED", b},
        {"SPLIT_POLICY",
         t,
         0,
         0,
         {"ConstantSizeRegionSplitPolicy", "IncreasingToUpperBoundRegionSplitPolicy", "SteppingSplitPolicy",
          "DisabledRegionSplitPolicy", "KeyPrefixRegionSplitPolicy", "DelimitedKeyPrefixRegionSplitPolicy",
          "BusyRegionSplitPolicy"}},
    };
    return v;
  }();
  return s;
}

const setting* find(const std::vector<setting>& list, std::string_view name) {
  for (const auto& s : list)
    if (s.name == name) return &s;
  return nullptr;
}

// HBase's classes, by simple name or as org.apache.hadoop.hbase.regionserver.<name>.
bool known_class(const std::vector<std::string_view>& known, std::string_view v) {
  constexpr std::string_view package = "org.apache.hadoop.hbase.regionserver.";
  if (v.starts_with(package)) v.remove_prefix(package.size());
  return std::find(known.begin(), known.end(), v) != known.end();
}

std::string joined(const std::vector<std::string_view>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::string(values[i]);
  return out;
}

// Checks `value` against `s` and rewrites it in its shown form.
status check_value(const setting& s, std::string_view where, std::string& value) {
  const std::string name = std::string(where) + std::string(s.name);
  switch (s.kind) {
    case value_kind::boolean: {
      if (ascii_iequal(value, "true")) {
        value = "true";
      } else if (ascii_iequal(value, "false")) {
        value = "false";
      } else {
        return {code::invalid_argument, name + " must be true or false, not '" + value + "'"};
      }
      break;
    }
    case value_kind::integer: {
      errno = 0;
      char* end = nullptr;
      const long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE || n < s.min || n > s.max)
        return {code::invalid_argument, name + " must be a whole number from " + std::to_string(s.min) + " to " +
                                            std::to_string(s.max) + ", not '" + value + "'"};
      value = std::to_string(n);
      break;
    }
    case value_kind::enumeration: {
      std::string up = value;
      for (char& c : up) c = ascii_upper(c);
      if (std::find(s.values.begin(), s.values.end(), up) == s.values.end())
        return {code::invalid_argument, name + " must be one of " + joined(s.values) + ", not '" + value + "'"};
      value = up;
      break;
    }
    case value_kind::text:
      if (!s.values.empty() && !known_class(s.values, value))
        return {code::invalid_argument, name + " must be one of HBase's " + joined(s.values) +
                                            " (by its simple "
                                            "or qualified name), not '" +
                                            value + "'"};
      break;
  }
  if (s.refuse != nullptr)
    if (auto r = s.refuse(value); !r) return {r.code(), std::string(where) + r.message()};
  return status::ok();
}

constexpr std::size_t max_attributes = 256;
constexpr std::size_t max_name_bytes = 256;
constexpr std::size_t max_value_bytes = 16 << 10;

status check_sizes(const attribute_map& a, std::string_view where) {
  if (a.size() > max_attributes)
    return {code::invalid_argument, std::string(where) + "at most " + std::to_string(max_attributes) + " attributes"};
  for (const auto& [k, v] : a) {
    if (k.empty() || k.size() > max_name_bytes)
      return {code::invalid_argument,
              std::string(where) + "an attribute name must be 1 to " + std::to_string(max_name_bytes) + " bytes"};
    if (v.size() > max_value_bytes)
      return {code::invalid_argument,
              std::string(where) + "the value of " + k + " is over " + std::to_string(max_value_bytes) + " bytes"};
  }
  return status::ok();
}

int strength(durability d) {
  switch (d) {
    case durability::snapshot: return 0;
    case durability::log: return 1;
    case durability::log_sync: return 2;
  }
  return 0;
}

const char* durability_flag(durability d) {
  switch (d) {
    case durability::snapshot: return "snapshot";
    case durability::log: return "log";
    case durability::log_sync: return "log-sync";
  }
  return "?";
}

}  // namespace

status apply_table_attributes(attribute_map& a, const attribute_map& set, const std::vector<std::string>& unset) {
  attribute_map next = a;
  for (const auto& name : unset)
    if (next.erase(name) == 0) return {code::invalid_argument, "Could not find attribute: " + name};
  for (const auto& [k, v] : set) next[k] = v;
  a = std::move(next);
  return status::ok();
}

bool is_family_setting(std::string_view name) { return find(family_settings(), name) != nullptr; }

bool is_table_setting(std::string_view name) { return find(table_settings(), name) != nullptr; }

status check_family_attributes(family_descriptor& f) {
  const std::string where = "column family '" + f.name + "': ";
  if (auto s = check_sizes(f.attributes, where); !s) return s;
  for (auto& [k, v] : f.attributes) {
    if (k == "NAME" || k == "VERSIONS" || k == "MIN_VERSIONS" || k == "TTL" || k == "METHOD" || k == "METADATA" ||
        k == "CONFIGURATION")
      return {code::invalid_argument, where + k + " is an option of the family, not one of its attributes"};
    if (const setting* s = find(family_settings(), k))
      if (auto st = check_value(*s, where, v); !st) return st;
  }
  return status::ok();
}

status check_table_attributes(attribute_map& a, durability store) {
  if (auto s = check_sizes(a, ""); !s) return s;
  for (auto& [k, v] : a) {
    if (k == "NAME" || k == "METHOD" || k == "METADATA" || k == "CONFIGURATION" || k == "SPLITS" ||
        k == "SPLITS_FILE" || k == "NUMREGIONS" || k == "SPLITALGO")
      return {code::invalid_argument, k + " is an option of the table, not one of its attributes"};
    std::string lower = k;
    for (char& c : lower) c = ascii_lower(c);
    if (lower.starts_with("coprocessor"))
      return {code::unsupported, k + " is not supported: cellar runs no coprocessors"};
    const setting* s = find(table_settings(), k);
    if (s == nullptr) continue;  // the user's METADATA
    if (auto st = check_value(*s, "", v); !st) return st;
    if (k == "DURABILITY" && v != "USE_DEFAULT") {
      const durability wants = v == "SKIP_WAL"    ? durability::snapshot
                               : v == "ASYNC_WAL" ? durability::log
                                                  : durability::log_sync;
      if (strength(wants) > strength(store))
        return unsupported("DURABILITY", v,
                           std::string("this store's writes are durable as its --durability ") +
                               durability_flag(store) + " makes them, less than " + v + " asks (--durability " +
                               durability_flag(wants) + " gives it)");
    }
  }
  return status::ok();
}

}  // namespace cellar
