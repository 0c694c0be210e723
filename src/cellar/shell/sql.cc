// shell/sql.cc: OceanBase statements in the shell. Statements that change the schema go
// to the store as DDL text (connection::ddl); SHOW TABLEGROUPS, SHOW TABLES and DESC are
// answered here from list_tables and describe, printed as the MySQL client prints a
// result set (or as JSON).
#include <algorithm>

#include "catalog/ddl.h"
#include "shell/command.h"

namespace cellar::shell {

namespace {

// A MySQL client result grid: +---+ borders, "| a | b |" rows, then "N rows in set".
std::string grid(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> w(headers.size());
  for (std::size_t i = 0; i < headers.size(); ++i) w[i] = headers[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::string rule = "+";
  for (auto x : w) rule += std::string(x + 2, '-') + "+";
  rule += "\n";
  auto line = [&](const std::vector<std::string>& r) {
    std::string out = "|";
    for (std::size_t i = 0; i < r.size(); ++i) out += " " + r[i] + std::string(w[i] - r[i].size(), ' ') + " |";
    return out + "\n";
  };
  if (rows.empty()) return "Empty set\n";
  std::string out = rule + line(headers) + rule;
  for (const auto& r : rows) out += line(r);
  out += rule;
  out += std::to_string(rows.size()) + (rows.size() == 1 ? " row in set\n" : " rows in set\n");
  return out;
}

outcome show_table_groups(context& c, const ddl_statement& st) {
  auto names = c.conn.list_tables();
  if (!names) return fail(names.error());
  std::vector<std::vector<std::string>> rows;
  json groups = json::array();
  for (const auto& g : names.value()) {
    if (st.pattern && !like_match(*st.pattern, g)) continue;
    auto d = c.conn.describe(g);
    if (!d) continue;  // dropped meanwhile
    std::vector<std::string> tables;
    for (const auto& f : d->families) tables.push_back(g + "$" + f.name);
    if (tables.empty()) rows.push_back({g, "NULL"});
    for (const auto& t : tables) rows.push_back({g, t});
    groups.push_back({{"name", g}, {"tables", tables}});
  }
  outcome out;
  out.text = grid({"Tablegroup_name", "Table_name"}, rows);
  out.data["tablegroups"] = groups;
  return out;
}

outcome show_tables(context& c, const ddl_statement& st) {
  auto names = c.conn.list_tables();
  if (!names) return fail(names.error());
  std::vector<std::string> tables;
  for (const auto& g : names.value()) {
    auto d = c.conn.describe(g);
    if (!d) continue;
    for (const auto& f : d->families) {
      std::string t = g + "$" + f.name;
      if (!st.pattern || like_match(*st.pattern, t)) tables.push_back(std::move(t));
    }
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : tables) rows.push_back({t});
  outcome out;
  out.text = grid({"Tables_in_cellar"}, rows);
  out.data["tables"] = tables;
  return out;
}

// DESC g$f: the columns of the OBKV-HBase table model the family was created with.
outcome describe_table(context& c, const ddl_statement& st) {
  auto d = c.conn.describe(st.group);
  if (!d) return fail(d.error());
  auto it = std::find_if(d->families.begin(), d->families.end(), [&](const family_descriptor& f) { return f.name == st.family; });
  if (it == d->families.end())
    return fail(code::family_not_found, "table " + st.group + "$" + st.family + " does not exist");
  const family_descriptor& f = *it;
  struct column {
    std::string field, type;
    bool nullable;
    std::string key, extra;
  };
  std::vector<column> cols;
  const std::string value_type = f.max_value_bytes == longblob_value_bytes
                                     ? std::string("longblob")
                                     : "varbinary(" + std::to_string(f.max_value_bytes) + ")";
  if (f.kind == family_kind::time_series) {
    cols = {{"K", "varbinary(1024)", false, "PRI", ""},
            {"T", "bigint(20)", false, "PRI", ""},
            {"S", "bigint(20)", false, "PRI", ""},
            {"V", "json", false, "", ""},
            {"G", "bigint(20)", true, "", "VIRTUAL GENERATED"}};
  } else {
    cols = {{"K", "varbinary(1024)", false, "PRI", ""},
            {"Q", "varbinary(256)", false, "PRI", ""},
            {"T", "bigint(20)", false, "PRI", ""},
            {"V", value_type, false, "", ""}};
    if (d->partitioning.how == partition_spec::method::key_prefix)
      cols.push_back({"K_PREFIX", "varbinary(" + std::to_string(d->partitioning.prefix_bytes) + ")", true, "",
                      "VIRTUAL GENERATED"});
  }
  std::vector<std::vector<std::string>> rows;
  json columns = json::array();
  for (const auto& x : cols) {
    rows.push_back({x.field, x.type, x.nullable ? "YES" : "NO", x.key, "NULL", x.extra});
    columns.push_back({{"field", x.field}, {"type", x.type}, {"null", x.nullable}, {"key", x.key},
                       {"default", nullptr}, {"extra", x.extra}});
  }
  outcome out;
  out.text = grid({"Field", "Type", "Null", "Key", "Default", "Extra"}, rows);
  out.data["table"] = st.group + "$" + st.family;
  out.data["columns"] = columns;
  out.data["family"] = family_json(f);
  out.data["partitioning"] = partitioning_json(d->partitioning);
  return out;
}

}  // namespace

outcome run_sql(context& c, const std::string& sql) {
  auto parsed = parse_ddl(sql);
  if (!parsed) return fail(parsed.error());
  if (parsed->size() == 1) {
    const ddl_statement& st = parsed->front();
    switch (st.what) {
      case ddl_statement::kind::show_table_groups: return show_table_groups(c, st);
      case ddl_statement::kind::show_tables: return show_tables(c, st);
      case ddl_statement::kind::describe_table: return describe_table(c, st);
      default: break;
    }
  }
  if (auto s = c.conn.ddl(sql); !s) return fail(s);
  outcome out;
  out.text = "Query OK\n";
  return out;
}

}  // namespace cellar::shell
