// catalog/ddl_describe.cc: one-line descriptions of DDL statements (catalog/ddl.h) and
// SQL's LIKE, which need no store.
#include <algorithm>
#include <string>

#include "catalog/ddl.h"

namespace cellar {
namespace {

std::string partitioning_text(const partition_spec& p) {
  switch (p.how) {
    case partition_spec::method::none: return "not partitioned";
    case partition_spec::method::key: return "KEY(K) PARTITIONS " + std::to_string(p.partitions);
    case partition_spec::method::key_prefix:
      return "KEY(substring(K, 1, " + std::to_string(p.prefix_bytes) + ")) PARTITIONS " + std::to_string(p.partitions);
    case partition_spec::method::range: {
      std::string out = "RANGE COLUMNS(K) LESS THAN (";
      for (const auto& b : p.bounds) {
        const bool plain =
            std::all_of(b.begin(), b.end(), [](char c) { return c >= 0x20 && c <= 0x7E && c != '\'' && c != '\\'; });
        if (plain) {
          out += "'" + b + "', ";
          continue;
        }
        static constexpr char hex[] = "0123456789ABCDEF";
        out += "X'";
        for (unsigned char c : b) out += std::string{hex[c >> 4], hex[c & 0xF]};
        out += "', ";
      }
      return out + "MAXVALUE)";
    }
  }
  return "?";
}

}  // namespace

bool like_match(std::string_view pattern, std::string_view text) {
  // Iterative wildcard matching with backtracking to the last '%'.
  std::size_t p = 0, t = 0, star = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star = ++p;
      star_t = t;
      continue;
    }
    if (p < pattern.size()) {
      const bool escaped = pattern[p] == '\\' && p + 1 < pattern.size();
      const char want = escaped ? pattern[p + 1] : pattern[p];
      if ((!escaped && want == '_') || want == text[t]) {
        p += escaped ? 2 : 1;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

std::string describe_ddl(const ddl_statement& st) {
  using k = ddl_statement::kind;
  const std::string table = st.group + "$" + st.family;
  switch (st.what) {
    case k::alter_table: {
      const auto& f = st.descriptor;
      return "ALTER TABLE " + table + ": MaxVersions " +
             (f.max_versions == 0 ? std::string("all") : std::to_string(f.max_versions)) + ", TimeToLive " +
             (f.ttl_seconds == 0 ? std::string("none") : std::to_string(f.ttl_seconds) + "s");
    }
    case k::truncate_table: return "TRUNCATE TABLE " + table;
    case k::move_partition:
      return "ALTER SYSTEM MOVE PARTITION '" + st.partition + "'" +
             (st.from_node.empty() ? std::string() : " FROM '" + st.from_node + "'") + " TO '" + st.node + "'";
    case k::transfer_leader:
      return "ALTER SYSTEM TRANSFER LEADER PARTITION '" + st.partition + "' TO '" + st.node + "'";
    case k::create_database:
      return std::string("CREATE DATABASE ") + (st.if_not_exists ? "IF NOT EXISTS " : "") + st.group;
    case k::drop_database: return std::string("DROP DATABASE ") + (st.if_exists ? "IF EXISTS " : "") + st.group;
    case k::use_database: return "USE " + st.group;
    case k::show_databases: return std::string("SHOW DATABASES") + (st.pattern ? " LIKE '" + *st.pattern + "'" : "");
    case k::balance: return "ALTER SYSTEM BALANCE";
    case k::describe_table: return "DESC " + table;
    case k::show_table_groups:
    case k::show_tables:
      return std::string(st.what == k::show_tables ? "SHOW TABLES" : "SHOW TABLEGROUPS") +
             (st.pattern ? " LIKE '" + *st.pattern + "'" : "");
    case k::create_table_group:
      return std::string("CREATE TABLEGROUP ") + (st.if_not_exists ? "IF NOT EXISTS " : "") + st.group;
    case k::drop_table_group: return std::string("DROP TABLEGROUP ") + (st.if_exists ? "IF EXISTS " : "") + st.group;
    case k::drop_table: return std::string("DROP TABLE ") + (st.if_exists ? "IF EXISTS " : "") + table;
    case k::create_table_like:
      return std::string("CREATE TABLE ") + (st.if_not_exists ? "IF NOT EXISTS " : "") + table + " LIKE " +
             st.source_group + "$" + st.source_family;
    case k::create_table: {
      const auto& f = st.descriptor;
      std::string out = std::string("CREATE TABLE ") + (st.if_not_exists ? "IF NOT EXISTS " : "") + table + ": ";
      if (f.kind == family_kind::time_series) {
        out += "time-series family";
      } else {
        out += "normal family, V ";
        out += f.max_value_bytes == longblob_value_bytes ? std::string("longblob")
                                                         : "varbinary(" + std::to_string(f.max_value_bytes) + ")";
      }
      out += ", MaxVersions " + (f.max_versions == 0 ? std::string("all") : std::to_string(f.max_versions));
      out += ", TimeToLive " + (f.ttl_seconds == 0 ? std::string("none") : std::to_string(f.ttl_seconds) + "s");
      out += ", " + partitioning_text(st.partitioning);
      if (st.explicit_table_group) out += ", TABLEGROUP " + st.group;
      return out;
    }
  }
  return "?";
}

}  // namespace cellar
