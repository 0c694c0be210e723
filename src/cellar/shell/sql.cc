// shell/sql.cc: OceanBase statements in the shell. Statements that change the schema go
// to the store as DDL text (connection::ddl); SHOW TABLEGROUPS, SHOW TABLES and DESC are
// answered here from list_tables and describe, printed as the MySQL client prints a
// result set (or as JSON).
#include <algorithm>

#include "catalog/ddl.h"
#include "cellar/names.h"
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

// The table groups of the current database: (full name, name within the database).
result<std::vector<std::pair<std::string, std::string>>> groups_here(context& c) {
  auto names = c.conn.list_tables();
  if (!names) return names.error();
  const std::string db = c.database.empty() ? std::string(default_namespace) : c.database;
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& full : names.value()) {
    auto t = parse_table_name(full);
    if (t && t->ns == db) out.emplace_back(full, t->qualifier);
  }
  return out;
}

// The group `g` names: in the current database unless it names one.
std::string qualified(const context& c, const std::string& g) {
  if (c.database.empty() || g.find(':') != std::string::npos) return g;
  return c.database + ":" + g;
}

outcome show_databases(context& c, const ddl_statement& st) {
  auto all = c.conn.list_namespaces();
  if (!all) return fail(all.error());
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> names;
  for (const auto& n : all.value()) {
    if (st.pattern && !like_match(*st.pattern, n.name)) continue;
    rows.push_back({n.name});
    names.push_back(n.name);
  }
  outcome out;
  out.text = grid({"Database"}, rows);
  out.data["databases"] = names;
  return out;
}

outcome show_table_groups(context& c, const ddl_statement& st) {
  auto here = groups_here(c);
  if (!here) return fail(here.error());
  std::vector<std::vector<std::string>> rows;
  json groups = json::array();
  for (const auto& [full, g] : here.value()) {
    if (st.pattern && !like_match(*st.pattern, g)) continue;
    auto d = c.conn.describe(full);
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
  auto here = groups_here(c);
  if (!here) return fail(here.error());
  std::vector<std::string> tables;
  for (const auto& [full, g] : here.value()) {
    auto d = c.conn.describe(full);
    if (!d) continue;
    for (const auto& f : d->families) {
      std::string t = g + "$" + f.name;
      if (!st.pattern || like_match(*st.pattern, t)) tables.push_back(std::move(t));
    }
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : tables) rows.push_back({t});
  outcome out;
  out.text = grid({"Tables_in_" + (c.database.empty() ? std::string("cellar") : c.database)}, rows);
  out.data["tables"] = tables;
  return out;
}

// DESC g$f: the columns of the OBKV-HBase table model the family was created with.
outcome describe_table(context& c, const ddl_statement& st) {
  auto d = c.conn.describe(qualified(c, st.group));
  if (!d) return fail(d.error());
  auto it = std::find_if(d->families.begin(), d->families.end(),
                         [&](const family_descriptor& f) { return f.name == st.family; });
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
    columns.push_back({{"field", x.field},
                       {"type", x.type},
                       {"null", x.nullable},
                       {"key", x.key},
                       {"default", nullptr},
                       {"extra", x.extra}});
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
      case ddl_statement::kind::show_databases: return show_databases(c, st);
      case ddl_statement::kind::use_database: {
        auto d = c.conn.describe_namespace(st.group);
        if (!d) return fail(d.code(), "Unknown database '" + st.group + "' (" + d.error().message() + ")");
        c.database = st.group == default_namespace ? std::string() : st.group;
        outcome out;
        out.text = "Database changed\n";
        out.data["database"] = st.group;
        return out;
      }
      default: break;
    }
  }
  // The server runs the text alone: the current database goes first, as a USE.
  const std::string text = c.database.empty() ? sql : "USE `" + c.database + "`; " + sql;
  if (auto s = c.conn.ddl(text); !s) return fail(s);
  for (const auto& st : *parsed)
    if (st.what == ddl_statement::kind::use_database)
      c.database = st.group == default_namespace ? std::string() : st.group;
    else if (st.what == ddl_statement::kind::drop_database && st.group == c.database)
      c.database.clear();
  outcome out;
  out.text = "Query OK\n";
  return out;
}

}  // namespace cellar::shell
