#include "shell/session.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "shell/hbase_syntax.h"

namespace cellar {

namespace {

using json = nlohmann::ordered_json;  // "ok" first, as written

// What one command produced, printed as the HBase shell would or as one JSON object.
struct outcome {
  status st;
  std::string text;                       // human output (without the timing line)
  std::optional<std::vector<cell>> cells; // get / scan
  std::optional<std::int64_t> count;
  std::optional<std::int64_t> counter;
  std::optional<std::vector<std::string>> tables;
  std::optional<std::string> value;       // append: the new value
};

outcome fail(status s) {
  outcome o;
  o.st = std::move(s);
  return o;
}

outcome fail(code c, std::string msg) { return fail(status{c, std::move(msg)}); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// ---- argument access -----------------------------------------------------------------

struct args_view {
  const std::string& command;
  const std::vector<shell_value>& args;

  std::size_t positional() const {  // arguments before a trailing options hash
    return !args.empty() && args.back().is_hash() ? args.size() - 1 : args.size();
  }
  const shell_hash* options() const {
    return !args.empty() && args.back().is_hash() ? &args.back().as_hash() : nullptr;
  }
  const shell_value* option(std::string_view key) const {
    auto* h = options();
    if (!h) return nullptr;
    for (const auto& [k, v] : *h)
      if (upper(k) == key) return &v;
    return nullptr;
  }
  result<std::string> str(std::size_t i, std::string_view what) const {
    if (i >= args.size() || !(args[i].is_string() || args[i].is_constant()))
      return status{code::invalid_argument, command + ": argument " + std::to_string(i + 1) + " (" +
                                                std::string(what) + ") must be a string"};
    return args[i].is_string() ? args[i].as_string() : args[i].as_constant();
  }
};

result<std::string> as_text(const shell_value& v, std::string_view what) {
  if (v.is_string()) return v.as_string();
  if (v.is_constant()) return v.as_constant();
  if (v.is_integer()) return std::to_string(v.as_integer());
  return status{code::invalid_argument, std::string(what) + " must be a string"};
}

result<std::int64_t> as_int(const shell_value& v, std::string_view what) {
  if (v.is_integer()) return v.as_integer();
  if (v.is_string()) {
    try {
      std::size_t pos = 0;
      auto n = std::stoll(v.as_string(), &pos);
      if (pos == v.as_string().size()) return static_cast<std::int64_t>(n);
    } catch (...) {
    }
  }
  return status{code::invalid_argument, std::string(what) + " must be an integer"};
}

result<bool> as_bool(const shell_value& v, std::string_view what) {
  if (v.is_boolean()) return v.as_boolean();
  if (v.is_string() && (lower(v.as_string()) == "true" || lower(v.as_string()) == "false"))
    return lower(v.as_string()) == "true";
  return status{code::invalid_argument, std::string(what) + " must be true or false"};
}

// "family:qualifier" -> (family, qualifier); "family" -> (family, nullopt).
std::pair<std::string, std::optional<std::string>> split_column(const std::string& c) {
  auto colon = c.find(':');
  if (colon == std::string::npos) return {c, std::nullopt};
  return {c.substr(0, colon), c.substr(colon + 1)};
}

// COLUMN / COLUMNS: a string or an array of strings.
status add_columns(const shell_value& v, read_options& o) {
  std::vector<std::string> names;
  if (v.is_array()) {
    for (const auto& e : v.as_array()) {
      auto s = as_text(e, "a column");
      if (!s) return s.error();
      names.push_back(s.value());
    }
  } else {
    auto s = as_text(v, "COLUMNS");
    if (!s) return s.error();
    names.push_back(s.value());
  }
  for (const auto& n : names) {
    auto [f, q] = split_column(n);
    if (f.empty()) return {code::invalid_argument, "column '" + n + "' has no family"};
    if (q)
      o.columns.add_column(f, *q);
    else
      o.columns.add_family(f);
  }
  return status::ok();
}

// FILTER => "..." in HBase's filter language (cellar/filter.h parse_filter).
status read_filter(const args_view& a, read_options& o) {
  if (auto* v = a.option("FILTER")) {
    auto text = as_text(*v, "FILTER");
    if (!text) return text.error();
    auto f = parse_filter(text.value());
    if (!f) return f.error();
    o.filter = std::move(f.value());
  }
  return status::ok();
}

status read_common(const args_view& a, read_options& o) {
  for (const char* key : {"COLUMN", "COLUMNS"})
    if (auto* v = a.option(key))
      if (auto s = add_columns(*v, o); !s) return s;
  if (auto* v = a.option("VERSIONS")) {
    auto n = as_int(*v, "VERSIONS");
    if (!n) return n.error();
    if (n.value() < 1) return {code::invalid_argument, "VERSIONS must be at least 1"};
    o.max_versions = static_cast<std::uint32_t>(std::min<std::int64_t>(n.value(), UINT32_MAX));
  }
  if (auto* v = a.option("TIMESTAMP")) {
    auto n = as_int(*v, "TIMESTAMP");
    if (!n) return n.error();
    o.range = time_range::at(n.value());
  }
  if (auto* v = a.option("TIMERANGE")) {
    if (!v->is_array() || v->as_array().size() != 2) return {code::invalid_argument, "TIMERANGE must be [min, max]"};
    auto lo = as_int(v->as_array()[0], "TIMERANGE"), hi = as_int(v->as_array()[1], "TIMERANGE");
    if (!lo || !hi) return {code::invalid_argument, "TIMERANGE must hold two integers"};
    o.range = {lo.value(), hi.value()};
  }
  return read_filter(a, o);
}

// ---- formatting ----------------------------------------------------------------------

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }

std::string cell_text(const cell& c) {
  return "timestamp=" + std::to_string(c.timestamp) + ", value=" + to_string_binary(c.value);
}

std::string column_name(const cell& c) { return c.family + ":" + to_string_binary(c.qualifier); }

std::string human_get(const std::vector<cell>& cells) {
  std::string out = pad("COLUMN", 33) + "CELL\n";
  for (const auto& c : cells) out += " " + pad(column_name(c), 32) + cell_text(c) + "\n";
  out += std::to_string(cells.empty() ? 0 : 1) + " row(s)\n";
  return out;
}

std::string human_scan(const std::vector<cell>& cells, std::size_t rows) {
  std::string out = pad("ROW", 33) + "COLUMN+CELL\n";
  for (const auto& c : cells) out += " " + pad(to_string_binary(c.row), 32) + "column=" + column_name(c) + ", " + cell_text(c) + "\n";
  out += std::to_string(rows) + " row(s)\n";
  return out;
}

std::string describe_family(const family_descriptor& f) {
  std::string out = "{NAME => '" + f.name + "', VERSIONS => '" +
                    (f.max_versions == 0 ? std::string("ALL") : std::to_string(f.max_versions)) + "', TTL => '" +
                    (f.ttl_seconds == 0 ? std::string("FOREVER") : std::to_string(f.ttl_seconds) + " SECONDS") +
                    "', MAX_VALUE_BYTES => '" + std::to_string(f.max_value_bytes) + "'";
  if (f.kind == family_kind::time_series) out += ", TIME_SERIES => 'true'";
  return out + "}";
}

std::string describe_partitioning(const partition_spec& p) {
  using m = partition_spec::method;
  switch (p.how) {
    case m::none: return "none";
    case m::key: return "KEY(K) PARTITIONS " + std::to_string(p.partitions);
    case m::key_prefix:
      return "KEY(substring(K, 1, " + std::to_string(p.prefix_bytes) + ")) PARTITIONS " + std::to_string(p.partitions);
    case m::range: {
      std::string s = "RANGE COLUMNS(K) bounds [";
      for (std::size_t i = 0; i < p.bounds.size(); ++i) s += (i ? ", '" : "'") + to_string_binary(p.bounds[i]) + "'";
      return s + ", MAXVALUE]";
    }
  }
  return "?";
}

// ---- commands ------------------------------------------------------------------------

using handler = std::function<outcome(connection&, const args_view&, const session_options&)>;

outcome check_ops(const std::vector<op_result>& r) {
  for (const auto& x : r)
    if (!x.st) return fail(x.st);
  return {};
}

result<family_descriptor> family_from(const shell_value& v) {
  family_descriptor f;
  if (v.is_string() || v.is_constant()) {
    f.name = as_text(v, "family").value();
    return f;
  }
  if (!v.is_hash()) return status{code::invalid_argument, "a column family is a name or {NAME => ...}"};
  const shell_value* name = v.find("NAME");
  if (!name) return status{code::invalid_argument, "a column family needs NAME => 'family'"};
  auto n = as_text(*name, "NAME");
  if (!n) return n.error();
  f.name = n.value();
  for (const auto& [k, val] : v.as_hash()) {
    auto key = upper(k);
    if (key == "NAME" || key == "METHOD") continue;
    if (key == "VERSIONS" || key == "MAX_VERSIONS") {
      auto x = as_int(val, "VERSIONS");
      if (!x) return x.error();
      if (x.value() < 1) return status{code::invalid_argument, "VERSIONS must be at least 1"};
      f.max_versions = static_cast<std::uint32_t>(std::min<std::int64_t>(x.value(), UINT32_MAX));
    } else if (key == "TTL") {
      if (val.is_string() && upper(val.as_string()) == "FOREVER") {
        f.ttl_seconds = 0;
        continue;
      }
      auto x = as_int(val, "TTL");
      if (!x) return x.error();
      if (x.value() < 1) return status{code::invalid_argument, "TTL must be a positive number of seconds"};
      f.ttl_seconds = x.value();
    } else if (key == "BLOCKCACHE" || key == "IN_MEMORY" || key == "BLOOMFILTER" || key == "COMPRESSION" ||
               key == "BLOCKSIZE" || key == "DATA_BLOCK_ENCODING" || key == "MIN_VERSIONS" ||
               key == "KEEP_DELETED_CELLS" || key == "REPLICATION_SCOPE") {
      // Storage tuning of HBase with no meaning in cellar: accepted and ignored.
    } else {
      return status{code::unsupported, "column family option " + k + " is not supported"};
    }
  }
  return f;
}

outcome cmd_create(connection& c, const args_view& a, const session_options& o) {
  auto name = a.str(0, "table");
  if (!name) return fail(name.error());
  table_descriptor d;
  d.name = name.value();
  d.partitioning = partition_spec::hash(o.default_partitions);
  for (std::size_t i = 1; i < a.args.size(); ++i) {
    const auto& v = a.args[i];
    if (v.is_hash() && !v.find("NAME")) {  // table options
      for (const auto& [k, val] : v.as_hash()) {
        auto key = upper(k);
        if (key == "SPLITS") {
          if (!val.is_array()) return fail(code::invalid_argument, "SPLITS must be an array of row keys");
          std::vector<std::string> bounds;
          for (const auto& b : val.as_array()) {
            auto s = as_text(b, "a split");
            if (!s) return fail(s.error());
            bounds.push_back(s.value());
          }
          std::sort(bounds.begin(), bounds.end());
          d.partitioning = partition_spec::range_bounds(std::move(bounds));
        } else if (key == "NUMREGIONS") {
          auto n = as_int(val, "NUMREGIONS");
          if (!n) return fail(n.error());
          if (n.value() < 1) return fail(code::invalid_argument, "NUMREGIONS must be at least 1");
          d.partitioning = partition_spec::hash(static_cast<std::uint32_t>(n.value()));
        } else if (key == "SPLITALGO" || key == "REGION_REPLICATION" || key == "DURABILITY") {
        } else {
          return fail(code::unsupported, "table option " + k + " is not supported");
        }
      }
      continue;
    }
    auto f = family_from(v);
    if (!f) return fail(f.error());
    d.families.push_back(std::move(f.value()));
  }
  if (d.families.empty()) return fail(code::invalid_argument, "create needs at least one column family");
  if (auto s = c.create_table(d, schema_origin::hbase_shell); !s) return fail(s);
  outcome out;
  out.text = "Created table " + d.name + "\n";
  return out;
}

outcome cmd_alter(connection& c, const args_view& a, const session_options&) {
  auto name = a.str(0, "table");
  if (!name) return fail(name.error());
  if (a.args.size() < 2) return fail(code::invalid_argument, "alter needs a column family");
  for (std::size_t i = 1; i < a.args.size(); ++i) {
    const auto& v = a.args[i];
    if (v.is_hash()) {
      if (auto* del = v.find("delete")) {
        auto f = as_text(*del, "family");
        if (!f) return fail(f.error());
        if (auto s = c.drop_family(name.value(), f.value()); !s) return fail(s);
        continue;
      }
      if (auto* m = v.find("METHOD"); m && m->is_string() && lower(m->as_string()) == "delete") {
        auto f = as_text(*v.find("NAME"), "NAME");
        if (!f) return fail(f.error());
        if (auto s = c.drop_family(name.value(), f.value()); !s) return fail(s);
        continue;
      }
    }
    auto f = family_from(v);
    if (!f) return fail(f.error());
    if (f->max_versions == 0) f->max_versions = 1;  // HBase's default VERSIONS
    if (auto d = c.describe(name.value()); d) {
      for (const auto& old : d->families)
        if (old.name == f->name && v.is_hash()) {
          // Options not named keep their value.
          if (!v.find("VERSIONS") && !v.find("MAX_VERSIONS")) f->max_versions = old.max_versions;
          if (!v.find("TTL")) f->ttl_seconds = old.ttl_seconds;
          f->max_value_bytes = old.max_value_bytes;
        }
    } else {
      return fail(d.error());
    }
    if (auto s = c.alter_family(name.value(), f.value()); !s) return fail(s);
  }
  outcome out;
  out.text = "Updating all regions with the new schema...\nDone.\n";
  return out;
}

outcome cmd_describe(connection& c, const args_view& a, const session_options&) {
  auto name = a.str(0, "table");
  if (!name) return fail(name.error());
  auto d = c.describe(name.value());
  if (!d) return fail(d.error());
  outcome out;
  out.text = "Table " + d->name + " is ENABLED\n" + d->name + ", PARTITIONS => " + describe_partitioning(d->partitioning) +
             "\nCOLUMN FAMILIES DESCRIPTION\n";
  for (const auto& f : d->families) out.text += describe_family(f) + "\n";
  out.text += std::to_string(d->families.size()) + " row(s)\n";
  out.tables = std::vector<std::string>{d->name};
  return out;
}

outcome cmd_list(connection& c, const args_view& a, const session_options&) {
  auto t = c.list_tables();
  if (!t) return fail(t.error());
  std::vector<std::string> names = t.value();
  if (a.positional() >= 1) {
    auto pattern = a.str(0, "regex");
    if (!pattern) return fail(pattern.error());
    try {
      std::regex re(pattern.value());
      names.erase(std::remove_if(names.begin(), names.end(), [&](const std::string& n) { return !std::regex_match(n, re); }),
                  names.end());
    } catch (const std::regex_error&) {
      return fail(code::invalid_argument, "bad regular expression: " + pattern.value());
    }
  }
  outcome out;
  out.text = "TABLE\n";
  for (const auto& n : names) out.text += n + "\n";
  out.text += std::to_string(names.size()) + " row(s)\n";
  out.tables = names;
  return out;
}

outcome cmd_exists(connection& c, const args_view& a, const session_options&) {
  auto name = a.str(0, "table");
  if (!name) return fail(name.error());
  auto d = c.describe(name.value());
  if (!d && d.code() != code::table_not_found) return fail(d.error());
  outcome out;
  out.text = "Table " + name.value() + (d ? " does exist\n" : " does not exist\n");
  out.count = d ? 1 : 0;
  return out;
}

outcome cmd_table_admin(connection& c, const args_view& a, const std::string& verb) {
  auto name = a.str(0, "table");
  if (!name) return fail(name.error());
  status s;
  std::string text;
  if (verb == "drop") {
    s = c.drop_table(name.value());
    text = "Dropped table " + name.value() + "\n";
  } else if (verb == "truncate") {
    s = c.truncate_table(name.value());
    text = "Truncating '" + name.value() + "' table (it may take a while):\n";
  } else {  // disable / enable / is_enabled: cellar never takes a table offline
    auto d = c.describe(name.value());
    s = d.error();
    if (verb == "is_enabled") text = "true\n";
    if (verb == "is_disabled") text = "false\n";
  }
  if (!s) return fail(s);
  outcome out;
  out.text = text;
  return out;
}

outcome cmd_put(connection& c, const args_view& a, const session_options&) {
  auto t = a.str(0, "table"), r = a.str(1, "row"), col = a.str(2, "column");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (!col) return fail(col.error());
  if (a.positional() < 4) return fail(code::invalid_argument, "put needs a value");
  auto v = as_text(a.args[3], "value");
  if (!v) return fail(v.error());
  auto [f, q] = split_column(col.value());
  std::int64_t ts = latest_timestamp;
  if (a.positional() >= 5) {
    auto x = as_int(a.args[4], "timestamp");
    if (!x) return fail(x.error());
    ts = x.value();
  }
  put p(r.value());
  p.add(f, q.value_or(""), ts, v.value());
  if (auto* ttl = a.option("TTL")) {
    auto x = as_int(*ttl, "TTL");
    if (!x) return fail(x.error());
    p.ttl(x.value());
  }
  if (auto s = c.put(t.value(), p); !s) return fail(s);
  return {};
}

outcome cmd_get(connection& c, const args_view& a, const session_options&) {
  auto t = a.str(0, "table"), r = a.str(1, "row");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  get g(r.value());
  for (std::size_t i = 2; i < a.positional(); ++i)
    if (auto s = add_columns(a.args[i], g.options); !s) return fail(s);
  if (auto s = read_common(a, g.options); !s) return fail(s);
  auto res = c.get(t.value(), g);
  if (!res) return fail(res.error());
  outcome out;
  out.text = human_get(res->cells);
  out.cells = std::move(res->cells);
  return out;
}

outcome cmd_scan(connection& c, const args_view& a, const session_options&) {
  auto t = a.str(0, "table");
  if (!t) return fail(t.error());
  scan s;
  if (auto st = read_common(a, s.options); !st) return fail(st);
  if (auto* v = a.option("STARTROW")) {
    auto x = as_text(*v, "STARTROW");
    if (!x) return fail(x.error());
    s.start_row(x.value());
  }
  if (auto* v = a.option("STOPROW")) {
    auto x = as_text(*v, "STOPROW");
    if (!x) return fail(x.error());
    s.stop_row(x.value());
  }
  if (auto* v = a.option("ROWPREFIXFILTER")) {
    auto x = as_text(*v, "ROWPREFIXFILTER");
    if (!x) return fail(x.error());
    std::string stop = x.value();
    while (!stop.empty() && static_cast<unsigned char>(stop.back()) == 0xff) stop.pop_back();
    if (!stop.empty()) stop.back() = static_cast<char>(static_cast<unsigned char>(stop.back()) + 1);
    s.start_row(x.value()).stop_row(stop);
  }
  if (auto* v = a.option("LIMIT")) {
    auto x = as_int(*v, "LIMIT");
    if (!x) return fail(x.error());
    if (x.value() < 0) return fail(code::invalid_argument, "LIMIT must be >= 0");
    s.limit(x.value());
  }
  if (auto* v = a.option("REVERSED")) {
    auto x = as_bool(*v, "REVERSED");
    if (!x) return fail(x.error());
    s.reversed(x.value());
  }
  auto stream = c.scan(t.value(), s);
  if (!stream) return fail(stream.error());
  std::vector<cell> cells;
  std::size_t rows = 0;
  for (;;) {
    auto page = stream.value()->next(1000);
    if (!page) return fail(page.error());
    if (page->empty()) break;
    for (auto& r : page.value()) {
      if (!r.partial) ++rows;
      for (auto& x : r.cells) cells.push_back(std::move(x));
    }
  }
  outcome out;
  out.text = human_scan(cells, rows);
  out.cells = std::move(cells);
  return out;
}

outcome cmd_count(connection& c, const args_view& a, const session_options&) {
  auto t = a.str(0, "table");
  if (!t) return fail(t.error());
  scan s;
  s.caching(1000);
  if (auto st = read_filter(a, s.options); !st) return fail(st);
  auto stream = c.scan(t.value(), s);
  if (!stream) return fail(stream.error());
  std::int64_t rows = 0;
  for (;;) {
    auto page = stream.value()->next(1000);
    if (!page) return fail(page.error());
    if (page->empty()) break;
    rows += static_cast<std::int64_t>(page->size());
  }
  outcome out;
  out.text = std::to_string(rows) + " row(s)\n";
  out.count = rows;
  return out;
}

outcome cmd_delete(connection& c, const args_view& a, bool all) {
  auto t = a.str(0, "table"), r = a.str(1, "row");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  std::int64_t ts = latest_timestamp;
  std::optional<std::string> column;
  if (a.positional() >= 3) {
    auto col = a.str(2, "column");
    if (!col) return fail(col.error());
    column = col.value();
  } else if (!all) {
    return fail(code::invalid_argument, "delete needs a column; use deleteall for a whole row");
  }
  if (a.positional() >= 4) {
    auto x = as_int(a.args[3], "timestamp");
    if (!x) return fail(x.error());
    ts = x.value();
  }
  deletion d(r.value(), ts);
  if (column) {
    auto [f, q] = split_column(*column);
    if (q)
      d.columns(f, *q, ts);  // the HBase shell deletes every version <= ts
    else
      d.family(f, ts);
  }
  auto res = c.batch(t.value(), {d});
  if (auto o = check_ops(res); !o.st) return o;
  return {};
}

// "COUNTER VALUE = n" for an 8-byte counter; NOT_A_LONG for anything else.
outcome counter_outcome(std::string_view bytes) {
  auto n = to_long(bytes);
  if (!n) return fail(code::not_a_long, "Field is not a long, it's " + std::to_string(bytes.size()) + " bytes wide");
  outcome out;
  out.counter = *n;
  out.text = "COUNTER VALUE = " + std::to_string(*n) + "\n";
  return out;
}

outcome cmd_incr(connection& c, const args_view& a, const session_options&) {
  auto t = a.str(0, "table"), r = a.str(1, "row"), col = a.str(2, "column");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (!col) return fail(col.error());
  std::int64_t amount = 1;
  if (a.positional() >= 4) {
    auto x = as_int(a.args[3], "increment");
    if (!x) return fail(x.error());
    amount = x.value();
  }
  auto [f, q] = split_column(col.value());
  increment inc(r.value());
  inc.add(f, q.value_or(""), amount);
  auto res = c.batch(t.value(), {inc});
  if (!res[0].st) return fail(res[0].st);
  return counter_outcome(res[0].row.cells.at(0).value);
}

outcome cmd_get_counter(connection& c, const args_view& a, const session_options&) {
  auto t = a.str(0, "table"), r = a.str(1, "row"), col = a.str(2, "column");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (!col) return fail(col.error());
  auto [f, q] = split_column(col.value());
  auto res = c.get(t.value(), get(r.value()).column(f, q.value_or("")));
  if (!res) return fail(res.error());
  if (res->cells.empty()) return fail(code::invalid_argument, "no counter found at " + col.value());
  return counter_outcome(res->cells[0].value);
}

outcome cmd_append(connection& c, const args_view& a, const session_options&) {
  auto t = a.str(0, "table"), r = a.str(1, "row"), col = a.str(2, "column");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (!col) return fail(col.error());
  if (a.positional() < 4) return fail(code::invalid_argument, "append needs a value");
  auto v = as_text(a.args[3], "value");
  if (!v) return fail(v.error());
  auto [f, q] = split_column(col.value());
  append app(r.value());
  app.add(f, q.value_or(""), v.value());
  auto res = c.batch(t.value(), {app});
  if (!res[0].st) return fail(res[0].st);
  outcome out;
  out.value = res[0].row.cells.at(0).value;
  out.text = "CURRENT VALUE = " + to_string_binary(*out.value) + "\n";
  return out;
}

outcome cmd_snapshot(connection& c, const args_view&, const session_options&) {
  auto s = c.snapshot();
  if (!s) return fail(s.error());
  outcome out;
  out.text = "Snapshot " + std::to_string(s->generation) + ": " + std::to_string(s->changes) + " changes, " +
             std::to_string(s->bytes) + " bytes\n";
  out.count = static_cast<std::int64_t>(s->changes);
  return out;
}

const std::map<std::string, handler>& handlers() {
  static const std::map<std::string, handler> h = {
      {"create", cmd_create},
      {"alter", cmd_alter},
      {"describe", cmd_describe},
      {"desc", cmd_describe},
      {"list", cmd_list},
      {"exists", cmd_exists},
      {"drop", [](connection& c, const args_view& a, const session_options&) { return cmd_table_admin(c, a, "drop"); }},
      {"truncate",
       [](connection& c, const args_view& a, const session_options&) { return cmd_table_admin(c, a, "truncate"); }},
      {"disable",
       [](connection& c, const args_view& a, const session_options&) { return cmd_table_admin(c, a, "disable"); }},
      {"enable", [](connection& c, const args_view& a, const session_options&) { return cmd_table_admin(c, a, "enable"); }},
      {"is_enabled",
       [](connection& c, const args_view& a, const session_options&) { return cmd_table_admin(c, a, "is_enabled"); }},
      {"is_disabled",
       [](connection& c, const args_view& a, const session_options&) { return cmd_table_admin(c, a, "is_disabled"); }},
      {"put", cmd_put},
      {"get", cmd_get},
      {"scan", cmd_scan},
      {"count", cmd_count},
      {"delete", [](connection& c, const args_view& a, const session_options&) { return cmd_delete(c, a, false); }},
      {"deleteall", [](connection& c, const args_view& a, const session_options&) { return cmd_delete(c, a, true); }},
      {"incr", cmd_incr},
      {"get_counter", cmd_get_counter},
      {"append", cmd_append},
      {"snapshot", cmd_snapshot},
  };
  return h;
}

json cells_json(const std::vector<cell>& cells) {
  json out = json::array();
  for (const auto& c : cells)
    out.push_back({{"row", to_string_binary(c.row)},
                   {"column", c.family + ":" + to_string_binary(c.qualifier)},
                   {"timestamp", c.timestamp},
                   {"value", to_string_binary(c.value)}});
  return out;
}

}  // namespace

bool starts_sql(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string first, second;
  in >> first >> second;
  first = lower(first);
  second = lower(second);
  if (first != "create" && first != "drop") return false;
  return second.rfind("table", 0) == 0 && (second == "table" || second == "tablegroup" || second == "table;" ||
                                            second == "tablegroup;");
}

shell_session::shell_session(connection& c, std::ostream& out, session_options o) : conn_(c), out_(out), opts_(o) {}

void shell_session::finish() {
  if (pending_sql_.empty()) return;
  std::string sql;
  sql.swap(pending_sql_);
  run_sql(sql);
}

bool shell_session::feed(std::string_view line) {
  if (!pending_sql_.empty() || starts_sql(line)) {
    pending_sql_ += line;
    pending_sql_ += '\n';
    // A statement ends at a `;` outside quotes and comments.
    bool in_single = false, in_double = false, in_back = false;
    for (std::size_t i = 0; i < pending_sql_.size(); ++i) {
      char ch = pending_sql_[i];
      if (ch == '\\' && (in_single || in_double)) {
        ++i;
        continue;
      }
      if (!in_double && !in_back && ch == '\'') in_single = !in_single;
      else if (!in_single && !in_back && ch == '"') in_double = !in_double;
      else if (!in_single && !in_double && ch == '`') in_back = !in_back;
      else if (!in_single && !in_double && !in_back && ch == '-' && i + 1 < pending_sql_.size() && pending_sql_[i + 1] == '-') {
        while (i < pending_sql_.size() && pending_sql_[i] != '\n') ++i;
      } else if (!in_single && !in_double && !in_back && ch == ';') {
        std::string sql = pending_sql_.substr(0, i + 1);
        std::string rest = pending_sql_.substr(i + 1);
        pending_sql_.clear();
        run_sql(sql);
        if (rest.find_first_not_of(" \t\r\n") != std::string::npos) return feed(rest.substr(0, rest.find_last_not_of("\n") + 1));
        return true;
      }
    }
    return true;
  }
  auto trimmed = line.substr(std::min(line.size(), line.find_first_not_of(" \t\r")));
  if (trimmed == "exit" || trimmed == "quit") return false;
  if (trimmed.rfind("--", 0) == 0) return true;  // an SQL comment line between statements
  run_command(line);
  return true;
}

namespace {

void print(std::ostream& out, const outcome& o, const session_options& opts, double seconds) {
  if (opts.json) {
    json j;
    if (!o.st) {
      j = {{"ok", false}, {"error", std::string(code_name(o.st.code()))}, {"message", o.st.message()}};
    } else {
      j["ok"] = true;
      if (o.cells) j["cells"] = cells_json(*o.cells);
      if (o.count) j["count"] = *o.count;
      if (o.counter) j["counter"] = *o.counter;
      if (o.tables) j["tables"] = *o.tables;
      if (o.value) j["value"] = to_string_binary(*o.value);
    }
    out << j.dump() << '\n';
    return;
  }
  if (!o.st)
    out << "ERROR: " << code_name(o.st.code()) << ": " << o.st.message() << '\n';
  else
    out << o.text;
  if (opts.show_timing) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "Took %.4f seconds\n", seconds);
    out << buf;
  }
  out.flush();
}

}  // namespace

void shell_session::run_sql(const std::string& sql) {
  auto t0 = std::chrono::steady_clock::now();
  outcome o;
  o.st = conn_.ddl(sql);
  if (o.st) o.text = "Query OK\n";
  if (!o.st) ++errors_;
  print(out_, o, opts_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

void shell_session::run_command(std::string_view line) {
  auto parsed = parse_shell_line(line);
  if (parsed && parsed->name.empty()) return;  // blank or comment
  auto t0 = std::chrono::steady_clock::now();
  outcome o;
  if (!parsed) {
    o = fail(parsed.error());
  } else {
    auto it = handlers().find(parsed->name);
    if (it == handlers().end()) {
      o = fail(code::invalid_argument, "unknown command '" + parsed->name + "'");
    } else {
      args_view a{parsed->name, parsed->args};
      o = it->second(conn_, a, opts_);
    }
  }
  if (!o.st) ++errors_;
  print(out_, o, opts_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace cellar
