// shell/commands_data.cc: the HBase shell's data commands (put, get, scan, count, delete,
// deleteall, incr, get_counter, append), mapped onto cellar's operations as the HBase 2.x
// shell maps them onto the Java client (hbase-shell/src/main/ruby/hbase/table.rb).
#include <algorithm>
#include <cstdio>

#include "cellar/filter.h"
#include "shell/command.h"

namespace cellar::shell {

namespace {

// HBase options of reads and writes that cellar does not do, and why.
constexpr std::string_view no_attributes = "operation attributes are not supported";
constexpr std::string_view no_visibility = "cell visibility labels are not supported";
constexpr std::string_view no_replicas = "cellar has no region replicas";
constexpr std::string_view no_formatter = "output formatters are not supported (values print as Bytes.toStringBinary)";
constexpr std::string_view no_metrics = "scan metrics are not supported";

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

status time_options(const args_view& a, read_options& o) {
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
  return status::ok();
}

// CONSISTENCY => 'STRONG' is what every cellar read is; TIMELINE reads from replicas.
status consistency_option(const args_view& a) {
  auto* v = a.option("CONSISTENCY");
  if (!v) return status::ok();
  auto s = as_text(*v, "CONSISTENCY");
  if (!s) return s.error();
  if (upper(s.value()) == "STRONG") return status::ok();
  if (upper(s.value()) == "TIMELINE")
    return {code::unsupported,
            "CONSISTENCY => 'TIMELINE' is not supported: " + std::string(no_replicas) + "; every read is STRONG"};
  return {code::invalid_argument, "CONSISTENCY must be 'STRONG' or 'TIMELINE', not '" + s.value() + "'"};
}

// MAXLENGTH: how many characters of each cell's text the human output shows.
result<std::int64_t> max_length(const args_view& a) {
  auto* v = a.option("MAXLENGTH");
  if (!v) return std::int64_t{-1};
  return as_int(*v, "MAXLENGTH");
}

std::string pad(const std::string& s, std::size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

std::string cell_text(const cell& c, std::int64_t maxlength) {
  std::string t = "timestamp=" + std::to_string(c.timestamp) + ", value=" + to_string_binary(c.value);
  if (maxlength >= 0 && t.size() > static_cast<std::size_t>(maxlength)) t.resize(static_cast<std::size_t>(maxlength));
  return t;
}

std::string column_name(const cell& c) { return c.family + ":" + to_string_binary(c.qualifier); }

json cells_json(const std::vector<cell>& cells) {
  json out = json::array();
  for (const auto& c : cells)
    out.push_back({{"row", to_string_binary(c.row)},
                   {"column", c.family + ":" + to_string_binary(c.qualifier)},
                   {"timestamp", c.timestamp},
                   {"value", to_string_binary(c.value)}});
  return out;
}

outcome ok_cells(std::string text, std::vector<cell> cells, std::int64_t rows) {
  outcome out;
  out.text = std::move(text);
  out.data["cells"] = cells_json(cells);
  out.data["rows"] = rows;
  return out;
}

// ---- scan options (Table#_hash_to_scan) -------------------------------------------------

struct scan_request {
  scan s;
  std::int64_t maxlength = -1;
};

const std::vector<option_spec>& scan_options() {
  static const std::vector<option_spec> o = {
      {"COLUMNS"},
      {"COLUMN"},
      {"STARTROW"},
      {"STOPROW"},
      {"ROWPREFIXFILTER"},
      {"TIMESTAMP"},
      {"TIMERANGE"},
      {"VERSIONS"},
      {"REVERSED"},
      {"LIMIT"},
      {"BATCH"},
      {"MAX_RESULT_SIZE"},
      {"ALLOW_PARTIAL_RESULTS"},
      {"CACHE"},
      {"CACHE_BLOCKS"},
      {"MAXLENGTH"},
      {"CONSISTENCY"},
      {"RAW"},  // RAW => true: refused below
      {"FILTER"},
      {"ATTRIBUTES", no_attributes},
      {"AUTHORIZATIONS", no_visibility},
      {"REGION_REPLICA_ID", no_replicas},
      {"ISOLATION_LEVEL", "isolation levels are not supported (reads see committed data)"},
      {"READ_TYPE", "READ_TYPE (pread / stream) has no meaning in an in-memory store"},
      {"METRICS", no_metrics},
      {"ALL_METRICS", no_metrics},
      {"FORMATTER", no_formatter},
      {"FORMATTER_CLASS", no_formatter},
  };
  return o;
}

// The HBase shell's rules: LIMIT, BATCH, MAX_RESULT_SIZE, CACHE and VERSIONS take effect
// only when above their neutral value (LIMIT => 0 is no limit, SH2); ROWPREFIXFILTER
// replaces STARTROW and STOPROW.
status apply_scan_options(const args_view& a, scan_request& r) {
  scan& s = r.s;
  for (const char* key : {"COLUMN", "COLUMNS"})
    if (auto* v = a.option(key))
      if (auto st = add_columns(*v, s.options); !st) return st;
  if (auto st = time_options(a, s.options); !st) return st;
  if (auto st = read_filter(a, s.options); !st) return st;
  if (auto st = consistency_option(a); !st) return st;
  auto int_option = [&](const char* key, auto apply) -> status {
    auto* v = a.option(key);
    if (!v) return status::ok();
    auto n = as_int(*v, key);
    if (!n) return n.error();
    apply(n.value());
    return status::ok();
  };
  auto bool_option = [&](const char* key, auto apply) -> status {
    auto* v = a.option(key);
    if (!v) return status::ok();
    auto b = as_bool(*v, key);
    if (!b) return b.error();
    apply(b.value());
    return status::ok();
  };
  status st;
  if (st = int_option("VERSIONS",
                      [&](std::int64_t n) {
                        if (n >= 1) s.max_versions(static_cast<std::uint32_t>(std::min<std::int64_t>(n, UINT32_MAX)));
                      });
      !st)
    return st;
  if (st = int_option("LIMIT",
                      [&](std::int64_t n) {
                        if (n > 0) s.limit(n);
                      });
      !st)
    return st;
  if (st = int_option("BATCH",
                      [&](std::int64_t n) {
                        if (n > 0) s.batch(n);
                      });
      !st)
    return st;
  if (st = int_option("MAX_RESULT_SIZE",
                      [&](std::int64_t n) {
                        if (n > 0) s.max_result_size(n);
                      });
      !st)
    return st;
  if (st = int_option("CACHE",
                      [&](std::int64_t n) {
                        if (n > 0) s.caching(n);
                      });
      !st)
    return st;
  if (st = bool_option("REVERSED", [&](bool b) { s.reversed(b); }); !st) return st;
  if (st = bool_option("ALLOW_PARTIAL_RESULTS", [&](bool b) { s.allow_partial_results(b); }); !st) return st;
  if (st = bool_option("CACHE_BLOCKS", [](bool) {}); !st) return st;  // no block cache: nothing to skip
  bool raw = false;
  if (st = bool_option("RAW", [&](bool b) { raw = b; }); !st) return st;
  if (raw)
    return {code::unsupported,
            "RAW => true is not supported: deletes are physical in cellar (no delete markers "
            "or masked versions to show); a plain scan shows every stored cell"};
  auto ml = max_length(a);
  if (!ml) return ml.error();
  r.maxlength = ml.value();

  if (auto* v = a.option("STARTROW")) {
    auto x = as_text(*v, "STARTROW");
    if (!x) return x.error();
    s.start_row(x.value());
  }
  if (auto* v = a.option("STOPROW")) {
    auto x = as_text(*v, "STOPROW");
    if (!x) return x.error();
    s.stop_row(x.value());
  }
  if (auto* v = a.option("ROWPREFIXFILTER")) {
    auto x = as_text(*v, "ROWPREFIXFILTER");
    if (!x) return x.error();
    // The first row after every row with the prefix (Scan#setRowPrefixFilter); all-0xFF
    // prefixes have none.
    std::string next = x.value();
    while (!next.empty() && static_cast<unsigned char>(next.back()) == 0xff) next.pop_back();
    if (!next.empty()) next.back() = static_cast<char>(static_cast<unsigned char>(next.back()) + 1);
    // A reversed prefix scan runs from the end of the prefix's range down to its start.
    if (s.reversed_)
      s.start_row(next, false).stop_row(x.value(), true);
    else
      s.start_row(x.value()).stop_row(next);
  }
  return status::ok();
}

result<scan_request> scan_from(const args_view& a, const std::vector<option_spec>& extra) {
  std::vector<option_spec> known = scan_options();
  known.insert(known.end(), extra.begin(), extra.end());
  if (auto st = check_options(a, known); !st) return st;
  scan_request r;
  if (auto st = apply_scan_options(a, r); !st) return st;
  return r;
}

}  // namespace

outcome cmd_put(context& c, const args_view& a) {
  auto t = a.str(0, "table"), r = a.str(1, "row"), col = a.str(2, "column");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (!col) return fail(col.error());
  if (a.positional() < 4) return fail(code::invalid_argument, "put needs a value");
  if (a.positional() > 5) return fail(code::invalid_argument, "put takes table, row, column, value[, timestamp]");
  if (auto st = check_options(a, {{"TTL"}, {"ATTRIBUTES", no_attributes}, {"VISIBILITY", no_visibility}}); !st)
    return fail(st);
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
  if (auto s = c.conn.put(t.value(), p); !s) return fail(s);
  return {};
}

outcome cmd_get(context& c, const args_view& a) {
  auto t = a.str(0, "table"), r = a.str(1, "row");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (auto st = check_options(a, {{"COLUMN"},
                                  {"COLUMNS"},
                                  {"VERSIONS"},
                                  {"TIMESTAMP"},
                                  {"TIMERANGE"},
                                  {"MAXLENGTH"},
                                  {"CONSISTENCY"},
                                  {"FILTER"},
                                  {"ATTRIBUTES", no_attributes},
                                  {"AUTHORIZATIONS", no_visibility},
                                  {"REGION_REPLICA_ID", no_replicas},
                                  {"FORMATTER", no_formatter},
                                  {"FORMATTER_CLASS", no_formatter}});
      !st)
    return fail(st);
  get g(r.value());
  for (std::size_t i = 2; i < a.positional(); ++i)
    if (auto s = add_columns(a.args[i], g.options); !s) return fail(s);
  for (const char* key : {"COLUMN", "COLUMNS"})
    if (auto* v = a.option(key))
      if (auto s = add_columns(*v, g.options); !s) return fail(s);
  if (auto* v = a.option("VERSIONS")) {
    auto n = as_int(*v, "VERSIONS");
    if (!n) return fail(n.error());
    if (n.value() < 1) return fail(code::invalid_argument, "VERSIONS must be at least 1");
    g.max_versions(static_cast<std::uint32_t>(std::min<std::int64_t>(n.value(), UINT32_MAX)));
  }
  if (auto s = time_options(a, g.options); !s) return fail(s);
  if (auto s = read_filter(a, g.options); !s) return fail(s);
  if (auto s = consistency_option(a); !s) return fail(s);
  auto ml = max_length(a);
  if (!ml) return fail(ml.error());
  auto res = c.conn.get(t.value(), g);
  if (!res) return fail(res.error());
  std::string text = pad("COLUMN", 33) + "CELL\n";
  for (const auto& x : res->cells) text += " " + pad(column_name(x), 32) + cell_text(x, ml.value()) + "\n";
  const std::int64_t rows = res->cells.empty() ? 0 : 1;
  text += std::to_string(rows) + " row(s)\n";
  return ok_cells(std::move(text), std::move(res->cells), rows);
}

outcome cmd_scan(context& c, const args_view& a) {
  auto t = a.str(0, "table");
  if (!t) return fail(t.error());
  if (a.positional() > 1) return fail(code::invalid_argument, "scan takes a table and an options hash");
  auto req = scan_from(a, {});
  if (!req) return fail(req.error());
  auto stream = c.conn.scan(t.value(), req->s);
  if (!stream) return fail(stream.error());
  std::vector<cell> cells;
  std::string text = pad("ROW", 33) + "COLUMN+CELL\n";
  std::int64_t rows = 0;  // results, as the HBase shell counts them (a batched row counts per piece)
  for (;;) {
    auto page = stream.value()->next(1000);
    if (!page) return fail(page.error());
    if (page->empty()) break;
    for (auto& r : page.value()) {
      ++rows;
      for (auto& x : r.cells) {
        text += " " + pad(to_string_binary(x.row), 32) + "column=" + column_name(x) + ", " +
                cell_text(x, req->maxlength) + "\n";
        cells.push_back(std::move(x));
      }
    }
  }
  text += std::to_string(rows) + " row(s)\n";
  return ok_cells(std::move(text), std::move(cells), rows);
}

outcome cmd_count(context& c, const args_view& a) {
  auto t = a.str(0, "table");
  if (!t) return fail(t.error());
  std::int64_t interval = 1000;
  // The old form: count 't', 100000 (the interval).
  if (a.positional() == 2) {
    auto n = as_int(a.args[1], "interval");
    if (!n) return fail(n.error());
    interval = n.value();
  } else if (a.positional() > 2) {
    return fail(code::invalid_argument, "count takes a table and an options hash");
  }
  auto req = scan_from(a, {{"INTERVAL"}});
  if (!req) return fail(req.error());
  if (auto* v = a.option("INTERVAL")) {
    auto n = as_int(*v, "INTERVAL");
    if (!n) return fail(n.error());
    interval = n.value();
  }
  if (interval < 1) return fail(code::invalid_argument, "INTERVAL must be at least 1");
  if (!a.option("CACHE")) req->s.caching(10);  // the HBase shell's count default
  auto stream = c.conn.scan(t.value(), req->s);
  if (!stream) return fail(stream.error());
  std::int64_t rows = 0;
  std::string text;
  const std::size_t page_rows = static_cast<std::size_t>(std::clamp<std::int64_t>(req->s.caching_, 1, 10000));
  for (;;) {
    auto page = stream.value()->next(page_rows);
    if (!page) return fail(page.error());
    if (page->empty()) break;
    for (const auto& r : page.value()) {
      if (r.partial) continue;  // a row split by BATCH counts once, at its last piece
      if (++rows % interval == 0)
        text += "Current count: " + std::to_string(rows) + ", row: " + to_string_binary(r.row) + "\n";
    }
  }
  outcome out;
  out.text = text + std::to_string(rows) + " row(s)\n";
  out.data["count"] = rows;
  return out;
}

namespace {

// The optional column and timestamp after the row of delete / deleteall.
struct delete_target {
  std::optional<std::string> column;
  std::int64_t ts = latest_timestamp;
};

result<delete_target> delete_args(const args_view& a, std::size_t first) {
  delete_target d;
  if (a.positional() > first) {
    auto col = a.str(first, "column");
    if (!col) return col.error();
    d.column = col.value();
  }
  if (a.positional() > first + 1) {
    auto x = as_int(a.args[first + 1], "timestamp");
    if (!x) return x.error();
    d.ts = x.value();
  }
  if (a.positional() > first + 2) return status{code::invalid_argument, a.command + ": too many arguments"};
  return d;
}

// deleteall's mutation (Table#_createdelete_internal with all_version = true): the whole
// row, a column (addColumns) or a family (addFamily), every version up to ts.
result<deletion> delete_all_versions(std::string row, const delete_target& t) {
  deletion d(std::move(row), t.ts);
  if (t.column) {
    auto [f, q] = split_column(*t.column);
    if (f.empty()) return status{code::invalid_argument, "column '" + *t.column + "' has no family"};
    if (q)
      d.columns(f, *q, t.ts);
    else
      d.family(f, t.ts);
  }
  return d;
}

outcome run_deletes(context& c, const std::string& table, std::vector<batch_op> ops) {
  if (ops.empty()) return {};
  for (const auto& r : c.conn.batch(table, std::move(ops)))
    if (!r.st) return fail(r.st);
  return {};
}

}  // namespace

// SH1: delete 't', 'r', 'f:q' deletes the newest version of the column; with a timestamp,
// exactly that version (Delete#addColumn). 'f' alone deletes the family's cells at exactly
// the timestamp (addFamilyVersion).
outcome cmd_delete(context& c, const args_view& a) {
  auto t = a.str(0, "table"), r = a.str(1, "row");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (auto st = check_options(a, {{"VISIBILITY", no_visibility}}); !st) return fail(st);
  if (a.positional() < 3) return fail(code::invalid_argument, "delete needs a column; use deleteall for a whole row");
  auto target = delete_args(a, 2);
  if (!target) return fail(target.error());
  auto [f, q] = split_column(*target->column);
  if (f.empty()) return fail(code::invalid_argument, "column '" + *target->column + "' has no family");
  deletion d(r.value());
  if (q) {
    if (target->ts == latest_timestamp)
      d.column(f, *q);
    else
      d.column(f, *q, target->ts);
  } else {
    // HBase stamps addFamilyVersion(f, LATEST_TIMESTAMP) with the server's "now", which
    // matches no cell in practice: refuse rather than silently delete nothing.
    if (target->ts == latest_timestamp)
      return fail(code::invalid_argument, "delete '" + t.value() + "', '" + to_string_binary(r.value()) + "', '" + f +
                                              "' deletes the family's cells at one timestamp: give the timestamp, or "
                                              "use deleteall to delete every version of the family");
    d.family_version(f, target->ts);
  }
  return run_deletes(c, t.value(), {d});
}

// deleteall 't', 'r'[, 'f[:q]'[, ts]], or deleteall 't', {ROWPREFIXFILTER => 'p'[, CACHE
// => n]}[, 'f[:q]'[, ts]]: every version up to ts.
outcome cmd_deleteall(context& c, const args_view& a) {
  auto t = a.str(0, "table");
  if (!t) return fail(t.error());
  // The prefix form: the hash is the second argument.
  if (a.args.size() >= 2 && a.args[1].is_hash()) {
    const shell_value& spec = a.args[1];
    std::optional<std::string> prefix;
    std::int64_t cache = 100;
    for (const auto& [k, v] : spec.as_hash()) {
      if (upper(k) == "ROWPREFIXFILTER") {
        auto p = as_text(v, "ROWPREFIXFILTER");
        if (!p) return fail(p.error());
        prefix = p.value();
      } else if (upper(k) == "CACHE") {
        auto n = as_int(v, "CACHE");
        if (!n) return fail(n.error());
        cache = std::max<std::int64_t>(1, n.value());
      } else {
        return fail(code::invalid_argument, "deleteall: unknown option " + k + " (it takes ROWPREFIXFILTER and CACHE)");
      }
    }
    if (!prefix) return fail(code::invalid_argument, "deleteall with a hash needs ROWPREFIXFILTER => 'prefix'");
    std::vector<shell_value> rest(a.args.begin() + 2, a.args.end());
    if (!rest.empty() && rest.back().is_hash())
      return fail(code::invalid_argument, "deleteall: options after the column");
    args_view tail{a.command, rest};
    auto target = delete_args(tail, 0);
    if (!target) return fail(target.error());
    // The rows with the prefix, then their deletes CACHE at a time.
    shell_hash scan_opts = {{"ROWPREFIXFILTER", *prefix}};
    std::vector<shell_value> scan_args = {t.value(), shell_value(scan_opts)};
    auto req = scan_from(args_view{a.command, scan_args}, {});
    if (!req) return fail(req.error());
    auto stream = c.conn.scan(t.value(), req->s);
    if (!stream) return fail(stream.error());
    std::vector<std::string> rows;
    for (;;) {
      auto page = stream.value()->next(1000);
      if (!page) return fail(page.error());
      if (page->empty()) break;
      for (auto& r : page.value())
        if (rows.empty() || rows.back() != r.row) rows.push_back(std::move(r.row));
    }
    std::vector<batch_op> ops;
    for (auto& row : rows) {
      auto d = delete_all_versions(std::move(row), *target);
      if (!d) return fail(d.error());
      ops.push_back(std::move(d.value()));
      if (static_cast<std::int64_t>(ops.size()) >= cache) {
        if (auto o = run_deletes(c, t.value(), std::move(ops)); !o.st) return o;
        ops.clear();
      }
    }
    return run_deletes(c, t.value(), std::move(ops));
  }
  auto r = a.str(1, "row");
  if (!r) return fail(r.error());
  if (auto st = check_options(a, {{"VISIBILITY", no_visibility}}); !st) return fail(st);
  auto target = delete_args(a, 2);
  if (!target) return fail(target.error());
  auto d = delete_all_versions(r.value(), *target);
  if (!d) return fail(d.error());
  return run_deletes(c, t.value(), {std::move(d.value())});
}

namespace {

// "COUNTER VALUE = n" for an 8-byte counter; NOT_A_LONG for anything else.
outcome counter_outcome(std::string_view bytes) {
  auto n = to_long(bytes);
  if (!n) return fail(code::not_a_long, "Field is not a long, it's " + std::to_string(bytes.size()) + " bytes wide");
  outcome out;
  out.data["counter"] = *n;
  out.text = "COUNTER VALUE = " + std::to_string(*n) + "\n";
  return out;
}

const std::vector<option_spec> rmw_options = {{"TTL"}, {"ATTRIBUTES", no_attributes}, {"VISIBILITY", no_visibility}};

result<std::int64_t> optional_ttl(const args_view& a) {
  auto* v = a.option("TTL");
  if (!v) return std::int64_t{-1};
  auto x = as_int(*v, "TTL");
  if (!x) return x.error();
  if (x.value() < 0) return status{code::invalid_argument, "TTL must be at least 0 (milliseconds)"};
  return x.value();
}

}  // namespace

outcome cmd_incr(context& c, const args_view& a) {
  auto t = a.str(0, "table"), r = a.str(1, "row"), col = a.str(2, "column");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (!col) return fail(col.error());
  if (auto st = check_options(a, rmw_options); !st) return fail(st);
  std::int64_t amount = 1;
  if (a.positional() >= 4) {
    auto x = as_int(a.args[3], "increment");
    if (!x) return fail(x.error());
    amount = x.value();
  }
  auto ttl = optional_ttl(a);
  if (!ttl) return fail(ttl.error());
  auto [f, q] = split_column(col.value());
  increment inc(r.value());
  inc.add(f, q.value_or(""), amount);
  if (ttl.value() >= 0) inc.ttl(ttl.value());
  auto res = c.conn.batch(t.value(), {inc});
  if (!res[0].st) return fail(res[0].st);
  return counter_outcome(res[0].row.cells.at(0).value);
}

outcome cmd_get_counter(context& c, const args_view& a) {
  auto t = a.str(0, "table"), r = a.str(1, "row"), col = a.str(2, "column");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (!col) return fail(col.error());
  if (auto st = check_options(a, {}); !st) return fail(st);
  auto [f, q] = split_column(col.value());
  auto res = c.conn.get(t.value(), get(r.value()).column(f, q.value_or("")));
  if (!res) return fail(res.error());
  if (res->cells.empty()) {  // as the HBase shell: an answer, not an error
    outcome out;
    out.text = "No counter found at specified coordinates\n";
    out.data["counter"] = nullptr;
    return out;
  }
  return counter_outcome(res->cells[0].value);
}

outcome cmd_append(context& c, const args_view& a) {
  auto t = a.str(0, "table"), r = a.str(1, "row"), col = a.str(2, "column");
  if (!t) return fail(t.error());
  if (!r) return fail(r.error());
  if (!col) return fail(col.error());
  if (a.positional() < 4) return fail(code::invalid_argument, "append needs a value");
  if (auto st = check_options(a, rmw_options); !st) return fail(st);
  auto v = as_text(a.args[3], "value");
  if (!v) return fail(v.error());
  auto ttl = optional_ttl(a);
  if (!ttl) return fail(ttl.error());
  auto [f, q] = split_column(col.value());
  append app(r.value());
  app.add(f, q.value_or(""), v.value());
  if (ttl.value() >= 0) app.ttl(ttl.value());
  auto res = c.conn.batch(t.value(), {app});
  if (!res[0].st) return fail(res[0].st);
  outcome out;
  const std::string value = res[0].row.cells.at(0).value;
  out.data["value"] = to_string_binary(value);
  out.text = "CURRENT VALUE = " + to_string_binary(value) + "\n";
  return out;
}

}  // namespace cellar::shell
