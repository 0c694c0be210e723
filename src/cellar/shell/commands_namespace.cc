// shell/commands_namespace.cc: HBase's namespace commands (create_namespace, ...) and its
// region tools (list_regions, split, merge_region), where a region is a partition named
// TABLE/INDEX as status 'detailed' shows it.
#include <algorithm>
#include <optional>
#include <utility>

#include "cellar/names.h"
#include "shell/command.h"

namespace cellar::shell {

namespace {

result<std::string> one_name(const args_view& a, std::string_view what) {
  if (a.positional() != 1)
    return status{code::invalid_argument, a.command + " takes one argument, the " + std::string(what)};
  return a.str(0, what);
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// A region named as list_regions shows it, TABLE/INDEX: (TABLE, INDEX); none when `name`
// has no '/' (a table's name never does); INVALID_ARGUMENT when the index is not a number.
result<std::optional<std::pair<std::string, std::uint32_t>>> region_name(const std::string& name,
                                                                         const std::string& usage) {
  using named = std::optional<std::pair<std::string, std::uint32_t>>;
  auto slash = name.rfind('/');
  if (slash == std::string::npos) return named();
  const status bad{code::invalid_argument, "'" + name + "' is not a region name; " + usage};
  if (slash == 0 || slash + 1 == name.size() || name.size() - slash > 9) return bad;
  std::uint32_t i = 0;
  for (std::size_t k = slash + 1; k < name.size(); ++k) {
    if (name[k] < '0' || name[k] > '9') return bad;
    i = i * 10 + static_cast<std::uint32_t>(name[k] - '0');
  }
  return named(std::make_pair(name.substr(0, slash), i));
}

std::string describe_text(const namespace_descriptor& d) {
  std::string out = "{NAME => " + quoted(d.name);
  for (const auto& [k, v] : d.properties) out += ", " + quoted(k) + " => " + quoted(v);
  return out + "}";
}

// The string properties of a hash (every key but METHOD and NAME when `skip_control`).
result<std::map<std::string, std::string>> properties_of(const args_view& a, bool skip_control) {
  std::map<std::string, std::string> out;
  const shell_hash* h = a.options();
  if (!h) return out;
  for (const auto& [k, v] : *h) {
    if (skip_control && (upper(k) == "METHOD" || upper(k) == "NAME")) continue;
    auto text = as_text(v, "the value of " + k);
    if (!text) return text.error();
    out[k] = text.value();
  }
  return out;
}

}  // namespace

outcome cmd_create_namespace(context& c, const args_view& a) {
  if (a.positional() != 1)
    return fail(code::invalid_argument, "create_namespace takes the namespace and an optional hash of properties");
  auto name = a.str(0, "namespace");
  if (!name) return fail(name.error());
  auto props = properties_of(a, false);
  if (!props) return fail(props.error());
  if (auto s = c.conn.create_namespace({name.value(), props.value()}); !s) return fail(s);
  outcome out;
  out.data["namespace"] = name.value();
  return out;
}

outcome cmd_drop_namespace(context& c, const args_view& a) {
  auto name = one_name(a, "namespace");
  if (!name) return fail(name.error());
  if (auto s = c.conn.drop_namespace(name.value()); !s) return fail(s);
  outcome out;
  out.data["namespace"] = name.value();
  return out;
}

outcome cmd_alter_namespace(context& c, const args_view& a) {
  if (a.positional() != 1 || !a.options())
    return fail(code::invalid_argument,
                "alter_namespace takes the namespace and a hash: {METHOD => 'set', 'NAME' => "
                "'VALUE'} or {METHOD => 'unset', NAME => 'NAME'}");
  auto name = a.str(0, "namespace");
  if (!name) return fail(name.error());
  const shell_value* method = a.option("METHOD");
  auto m = method ? as_text(*method, "METHOD") : result<std::string>(std::string("set"));
  if (!m) return fail(m.error());
  std::map<std::string, std::string> set;
  std::vector<std::string> unset;
  if (lower(m.value()) == "set") {
    auto props = properties_of(a, true);
    if (!props) return fail(props.error());
    if (a.option("NAME"))
      return fail(code::invalid_argument, "alter_namespace: METHOD => 'set' takes the properties as 'NAME' => 'VALUE'");
    set = std::move(props.value());
  } else if (lower(m.value()) == "unset") {
    const shell_value* n = a.option("NAME");
    if (!n) return fail(code::invalid_argument, "alter_namespace: METHOD => 'unset' needs NAME => 'PROPERTY'");
    auto text = as_text(*n, "NAME");
    if (!text) return fail(text.error());
    unset.push_back(text.value());
  } else {
    return fail(code::invalid_argument, "alter_namespace: METHOD must be 'set' or 'unset', not '" + m.value() + "'");
  }
  if (set.empty() && unset.empty()) return fail(code::invalid_argument, "alter_namespace: nothing to change");
  if (auto s = c.conn.alter_namespace(name.value(), set, unset); !s) return fail(s);
  outcome out;
  out.data["namespace"] = name.value();
  return out;
}

outcome cmd_describe_namespace(context& c, const args_view& a) {
  auto name = one_name(a, "namespace");
  if (!name) return fail(name.error());
  auto d = c.conn.describe_namespace(name.value());
  if (!d) return fail(d.error());
  outcome out;
  out.text = "DESCRIPTION\n" + describe_text(d.value()) + "\n";
  out.data["namespace"] = d->name;
  out.data["properties"] = d->properties;
  return out;
}

outcome cmd_list_namespace(context& c, const args_view& a) {
  if (a.args.size() > 1) return fail(code::invalid_argument, "list_namespace takes one argument, a regular expression");
  auto all = c.conn.list_namespaces();
  if (!all) return fail(all.error());
  std::vector<std::string> names;
  for (const auto& n : all.value()) names.push_back(n.name);
  return name_listing(a, std::move(names), "NAMESPACE", "namespaces");
}

outcome cmd_list_namespace_tables(context& c, const args_view& a) {
  auto name = one_name(a, "namespace");
  if (!name) return fail(name.error());
  auto t = c.conn.list_namespace_tables(name.value());
  if (!t) return fail(t.error());
  // As HBase prints them: the names within the namespace.
  std::vector<std::string> names;
  for (const auto& full : t.value()) {
    auto parsed = parse_table_name(full);
    names.push_back(parsed ? parsed->qualifier : full);
  }
  outcome out;
  out.text = "TABLE\n";
  for (const auto& n : names) out.text += n + "\n";
  out.text += std::to_string(names.size()) + " row(s)\n";
  out.data["tables"] = names;
  return out;
}

outcome cmd_list_regions(context& c, const args_view& a) {
  if (a.positional() != 1) return fail(code::invalid_argument, "list_regions takes one argument, the table");
  auto name = a.str(0, "table");
  if (!name) return fail(name.error());
  auto regions = c.conn.list_regions(name.value());
  if (!regions) return fail(regions.error());
  std::vector<std::vector<std::string>> rows;
  json list = json::array();
  for (const auto& r : regions.value()) {
    const std::string region = name.value() + "/" + std::to_string(r.index);
    rows.push_back({r.node.empty() ? "local" : r.node, region, to_string_binary(r.start_key),
                    to_string_binary(r.end_key), std::to_string(r.bytes), std::to_string(r.cells)});
    list.push_back({{"region", region},
                    {"index", r.index},
                    {"server", r.node},
                    {"start_key", to_string_binary(r.start_key)},
                    {"end_key", to_string_binary(r.end_key)},
                    {"bytes", r.bytes},
                    {"cells", r.cells}});
  }
  const std::vector<std::string> headers = {"SERVER_NAME", "REGION_NAME", "START_KEY", "END_KEY", "SIZE", "CELLS"};
  std::vector<std::size_t> w(headers.size());
  for (std::size_t i = 0; i < headers.size(); ++i) w[i] = headers[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) s += std::string(w[i] - r[i].size() + 1, ' ') + r[i] + " |";
    return s + "\n";
  };
  outcome out;
  out.text = line(headers);
  for (const auto& r : rows) out.text += line(r);
  out.text += std::to_string(rows.size()) + " rows\n";
  out.data["regions"] = list;
  return out;
}

// split 'T' (each partition at its middle row), split 'T/I' (partition I at its middle
// row), split 'T', 'key' (the partition holding key), split 'T/I', 'key' (partition I).
outcome cmd_split(context& c, const args_view& a) {
  const std::string usage =
      "split takes a table or a region named as list_regions shows it, and an optional split key: "
      "split 't1', split 't1/3', split 't1', 'key', split 't1/3', 'key'";
  if (a.positional() != 1 && a.positional() != 2) return fail(code::invalid_argument, usage);
  auto name = a.str(0, "table or region");
  if (!name) return fail(name.error());
  std::optional<std::string> key;
  if (a.positional() == 2) {
    auto k = a.str(1, "split key");
    if (!k) return fail(k.error());
    key = k.value();
  }
  auto region = region_name(name.value(), usage);
  if (!region) return fail(region.error());
  outcome out;
  if (region->has_value()) {
    const auto& [table, index] = **region;
    // An empty key given is refused, as split 't1', '' is; no key at all means the middle row.
    if (key && key->empty()) return fail(code::invalid_argument, "split: a split key is needed (a row key, not empty)");
    if (auto s = c.conn.split_partition(table, index, key.value_or("")); !s) return fail(s);
    out.data["table"] = table;
    out.data["region"] = name.value();
    out.data["splits"] = 1;
  } else if (key) {
    if (auto s = c.conn.split_region(name.value(), *key); !s) return fail(s);
    out.data["table"] = name.value();
    out.data["splits"] = 1;
  } else {
    auto n = c.conn.split_table(name.value());
    if (!n) return fail(n.error());
    out.data["table"] = name.value();
    out.data["splits"] = n.value();
    out.text = std::to_string(n.value()) + " region(s) split\n";
  }
  return out;
}

// merge_region 'T/I', 'T/J' (or ['T/I', 'T/J']): regions I and J = I + 1 of table T.
outcome cmd_merge_region(context& c, const args_view& a) {
  std::vector<std::string> names;
  if (a.positional() == 1 && a.args[0].is_array()) {
    for (const auto& v : a.args[0].as_array()) {
      auto t = as_text(v, "region");
      if (!t) return fail(t.error());
      names.push_back(t.value());
    }
  } else {
    for (std::size_t i = 0; i < a.positional(); ++i) {
      if (i == 2 && a.args[i].is_boolean()) continue;  // HBase's FORCE: adjacent regions need none
      auto t = a.str(i, "region");
      if (!t) return fail(t.error());
      names.push_back(t.value());
    }
  }
  const status usage{code::invalid_argument,
                     "merge_region takes two adjacent regions of one table, named as "
                     "list_regions shows them: merge_region 't1/0', 't1/1'"};
  if (names.size() != 2) return fail(usage);
  std::string table;
  std::vector<std::uint32_t> index;
  for (const auto& n : names) {
    auto slash = n.rfind('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == n.size() || n.size() - slash > 9) return fail(usage);
    std::uint32_t i = 0;
    for (std::size_t k = slash + 1; k < n.size(); ++k) {
      if (n[k] < '0' || n[k] > '9') return fail(usage);
      i = i * 10 + static_cast<std::uint32_t>(n[k] - '0');
    }
    if (!table.empty() && n.substr(0, slash) != table)
      return fail(code::invalid_argument, "merge_region: the regions belong to different tables");
    table = n.substr(0, slash);
    index.push_back(i);
  }
  std::sort(index.begin(), index.end());
  if (index[1] != index[0] + 1)
    return fail(code::invalid_argument, "merge_region: regions " + std::to_string(index[0]) + " and " +
                                            std::to_string(index[1]) + " of '" + table + "' are not adjacent");
  if (auto s = c.conn.merge_regions(table, index[0]); !s) return fail(s);
  outcome out;
  out.data["table"] = table;
  return out;
}

}  // namespace cellar::shell
