#include "model/validate.h"

#include <algorithm>

namespace cellar::detail {

namespace {

status check_row(const std::string& row) {
  if (row.empty()) return {code::invalid_argument, "row key must not be empty"};
  if (row.size() > max_row_key_bytes)
    return {code::too_large,
            "row key of " + std::to_string(row.size()) + " bytes exceeds " + std::to_string(max_row_key_bytes)};
  return status::ok();
}

status check_family(const table_schema& schema, const std::string& family, const family_schema** out = nullptr) {
  const family_schema* f = schema.find(family);
  if (f == nullptr)
    return {code::family_not_found, "family '" + family + "' does not exist in table '" + schema.name + "'"};
  if (out) *out = f;
  return status::ok();
}

status check_qualifier(const std::string& q) {
  if (q.size() > max_qualifier_bytes)
    return {code::too_large,
            "qualifier of " + std::to_string(q.size()) + " bytes exceeds " + std::to_string(max_qualifier_bytes)};
  return status::ok();
}

status check_ts(std::int64_t ts) {
  if (ts < 0) return {code::invalid_argument, "timestamp must not be negative"};
  return status::ok();
}

status check_value(const family_schema& f, std::size_t n) {
  if (n > f.desc.max_value_bytes)
    return {code::too_large, "value of " + std::to_string(n) + " bytes exceeds family '" + f.desc.name + "' limit of " +
                                 std::to_string(f.desc.max_value_bytes)};
  return status::ok();
}

#define CELLAR_TRY(expr)                  \
  do {                                    \
    if (auto s_ = (expr); !s_) return s_; \
  } while (0)

status check_read(const table_schema& schema, const read_options& o) {
  for (const auto& fc : o.columns.families) {
    CELLAR_TRY(check_family(schema, fc.family));
    for (const auto& q : fc.qualifiers) CELLAR_TRY(check_qualifier(q));
  }
  if (o.max_versions == 0) return {code::invalid_argument, "max versions must be at least 1"};
  if (o.range.min < 0 || o.range.max < o.range.min)
    return {code::invalid_argument, "time range must satisfy 0 <= min <= max"};
  if (o.max_per_family < -1) return {code::invalid_argument, "max results per family must be >= 0"};
  if (o.offset_per_family < 0) return {code::invalid_argument, "row offset per family must be >= 0"};
  if (o.filter) CELLAR_TRY(o.filter->check());
  return status::ok();
}

status check(const table_schema& schema, const put& p) {
  CELLAR_TRY(check_row(p.row));
  if (p.entries.empty()) return {code::invalid_argument, "a put needs at least one cell"};
  if (p.timestamp != latest_timestamp) CELLAR_TRY(check_ts(p.timestamp));
  for (const auto& e : p.entries) {
    const family_schema* f = nullptr;
    CELLAR_TRY(check_family(schema, e.family, &f));
    CELLAR_TRY(check_qualifier(e.qualifier));
    if (e.timestamp != latest_timestamp) CELLAR_TRY(check_ts(e.timestamp));
    CELLAR_TRY(check_value(*f, e.value.size()));
  }
  return status::ok();
}

status check(const table_schema& schema, const deletion& d) {
  CELLAR_TRY(check_row(d.row));
  CELLAR_TRY(check_ts(d.timestamp));
  for (const auto& e : d.entries) {
    CELLAR_TRY(check_family(schema, e.family));
    CELLAR_TRY(check_qualifier(e.qualifier));
    CELLAR_TRY(check_ts(e.timestamp));
  }
  return status::ok();
}

status check(const table_schema& schema, const get& g) {
  CELLAR_TRY(check_row(g.row));
  // A get's replies have no room for them (the frames path writes a get's cells directly).
  if (g.options.cell_ttls) return {code::invalid_argument, "cell TTLs come back from scans only"};
  return check_read(schema, g.options);
}

status check(const table_schema& schema, const increment& inc) {
  CELLAR_TRY(check_row(inc.row));
  if (inc.entries.empty()) return {code::invalid_argument, "an increment needs at least one column"};
  for (const auto& e : inc.entries) {
    CELLAR_TRY(check_family(schema, e.family));
    CELLAR_TRY(check_qualifier(e.qualifier));
  }
  return status::ok();
}

status check(const table_schema& schema, const append& app) {
  CELLAR_TRY(check_row(app.row));
  if (app.entries.empty()) return {code::invalid_argument, "an append needs at least one column"};
  for (const auto& e : app.entries) {
    const family_schema* f = nullptr;
    CELLAR_TRY(check_family(schema, e.family, &f));
    CELLAR_TRY(check_qualifier(e.qualifier));
    CELLAR_TRY(check_value(*f, e.value.size()));
  }
  return status::ok();
}

status check(const table_schema& schema, const row_mutations& m) {
  CELLAR_TRY(check_row(m.row));
  if (m.mutations.empty()) return {code::invalid_argument, "row mutations need at least one mutation"};
  for (const auto& mu : m.mutations) {
    const std::string& r = std::visit([](const auto& x) -> const std::string& { return x.row; }, mu);
    if (r != m.row) return {code::invalid_argument, "mutation row '" + r + "' is not equal to the row '" + m.row + "'"};
    CELLAR_TRY(std::visit([&](const auto& x) { return check(schema, x); }, mu));
  }
  return status::ok();
}

status check(const table_schema& schema, const check_and_mutate& c) {
  CELLAR_TRY(check_row(c.row));
  if (c.filter) {
    CELLAR_TRY(c.filter->check());
  } else {
    CELLAR_TRY(check_family(schema, c.family));
    CELLAR_TRY(check_qualifier(c.qualifier));
    if (c.op == compare_op::no_op)
      return {code::invalid_argument, "checkAndMutate needs a compare operator (NO_OP compares nothing)"};
  }
  if (c.range.min < 0 || c.range.max < c.range.min)
    return {code::invalid_argument, "time range must satisfy 0 <= min <= max"};
  if (c.mutation.row != c.row) return {code::invalid_argument, "mutation row is not equal to the check row"};
  CELLAR_TRY(check(schema, c.mutation));
  if (c.filter) return status::ok();  // no checked family: the mutations may touch any
  // OBKV: every mutation must be on the checked family (R24). A whole-row delete is
  // allowed: the row is one partition's, so it stays atomic.
  for (const auto& mu : c.mutation.mutations) {
    if (const auto* p = std::get_if<put>(&mu)) {
      for (const auto& e : p->entries)
        if (e.family != c.family) return {code::invalid_argument, "mutation family is not equal check family"};
    } else {
      for (const auto& e : std::get<deletion>(mu).entries)
        if (e.family != c.family) return {code::invalid_argument, "mutation family is not equal check family"};
    }
  }
  return status::ok();
}

// ---- time-series families (OBKV TS5) --------------------------------------------------

bool is_ts(const table_schema& schema, const std::string& family) {
  const auto* f = schema.find(family);
  return f && f->desc.kind == family_kind::time_series;
}

// Whether any family of the table is a time-series family.
bool any_ts(const table_schema& schema) {
  return std::any_of(schema.families.begin(), schema.families.end(),
                     [](const family_schema& f) { return f.desc.kind == family_kind::time_series; });
}

status ts_unsupported(const std::string& what) {
  return {code::unsupported, what + " is not supported on a time-series family (OBKV time-series model)"};
}

// The families a read touches (the selection, or every family of the table): how many,
// and whether one is a time-series family. Copies nothing: every get is checked here.
struct read_families {
  std::size_t count = 0;
  bool ts = false;
  read_families(const table_schema& schema, const read_options& o) {
    if (o.columns.empty()) {
      count = schema.families.size();
      ts = any_ts(schema);
    } else {
      count = o.columns.families.size();
      for (const auto& fc : o.columns.families) ts = ts || is_ts(schema, fc.family);
    }
  }
};

status check_ts_read(const table_schema& schema, const read_options& o) {
  const read_families fams(schema, o);
  if (!fams.ts) return status::ok();
  if (fams.count > 1) return ts_unsupported("a read of several families");
  if (o.max_per_family >= 0) return ts_unsupported("max results per column family");
  if (o.offset_per_family > 0) return ts_unsupported("row offset per column family");
  if (o.filter) return ts_unsupported("a filter");
  return status::ok();
}

status check_ts(const table_schema& schema, const batch_op& op) {
  // Every refusal below names a time-series family: a table without one has none to give.
  if (!any_ts(schema)) return status::ok();
  return std::visit(
      [&](const auto& o) -> status {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, get>) {
          if (auto s = check_ts_read(schema, o.options); !s) return s;
          if (o.exists_only_ && read_families(schema, o.options).ts) return ts_unsupported("an existence check");
          return status::ok();
        } else if constexpr (std::is_same_v<T, put>) {
          bool ts = false;
          for (const auto& e : o.entries) ts = ts || is_ts(schema, e.family);
          if (!ts) return status::ok();
          for (const auto& e : o.entries)
            if (e.family != o.entries.front().family) return ts_unsupported("a put to several families");
          if (o.ttl_ms_) return ts_unsupported("a cell TTL");
          return status::ok();
        } else if constexpr (std::is_same_v<T, deletion>) {
          if (o.entries.empty()) {
            if (any_ts(schema) && schema.families.size() > 1) return ts_unsupported("a delete of several families");
            return status::ok();
          }
          bool ts = false;
          for (const auto& e : o.entries) ts = ts || is_ts(schema, e.family);
          if (!ts) return status::ok();
          for (const auto& e : o.entries)
            if (e.family != o.entries.front().family) return ts_unsupported("a delete of several families");
          return status::ok();
        } else if constexpr (std::is_same_v<T, increment> || std::is_same_v<T, append>) {
          for (const auto& e : o.entries)
            if (is_ts(schema, e.family)) return ts_unsupported(std::is_same_v<T, increment> ? "increment" : "append");
          return status::ok();
        } else if constexpr (std::is_same_v<T, check_and_mutate>) {
          if (is_ts(schema, o.family)) return ts_unsupported("checkAndMutate");
          if (o.filter && any_ts(schema))  // the check reads every family of the row
            return ts_unsupported("a filter");
          return check_ts(schema, batch_op(o.mutation));
        } else {  // row_mutations
          for (const auto& mu : o.mutations) {
            auto s = std::visit([&](const auto& x) { return check_ts(schema, batch_op(x)); }, mu);
            if (!s) return s;
            const bool ts = std::visit(
                [&](const auto& x) {
                  using M = std::decay_t<decltype(x)>;
                  if constexpr (std::is_same_v<M, put>) {
                    for (const auto& e : x.entries)
                      if (is_ts(schema, e.family)) return true;
                  } else {
                    for (const auto& e : x.entries)
                      if (is_ts(schema, e.family)) return true;
                  }
                  return false;
                },
                mu);
            if (ts) return ts_unsupported("row mutations");
          }
          return status::ok();
        }
      },
      op);
}

}  // namespace

status validate(const table_schema& schema, const batch_op& op) {
  if (auto s = std::visit([&](const auto& o) { return check(schema, o); }, op); !s) return s;
  return check_ts(schema, op);
}

status validate(const table_schema& schema, const scan& s) {
  if (s.start.size() > max_row_key_bytes || s.stop.size() > max_row_key_bytes)
    return {code::too_large, "scan bound exceeds the row key limit of 1024 bytes"};
  if (s.caching_ <= 0) return {code::invalid_argument, "caching must be at least 1 row"};
  if (s.batch_ == 0 || s.batch_ < -1) return {code::invalid_argument, "batch must be at least 1 cell"};
  if (s.limit_ < -1) return {code::invalid_argument, "limit must be >= 0"};
  CELLAR_TRY(check_read(schema, s.options));
  if (read_families(schema, s.options).ts) {
    CELLAR_TRY(check_ts_read(schema, s.options));
    if (s.reversed_) return ts_unsupported("a reversed scan");
    if (s.limit_ >= 0) return ts_unsupported("a scan limit");
    if (s.batch_ > 0) return ts_unsupported("a scan batch");
    if (s.max_result_size_ > 0) return ts_unsupported("a max result size");
    if (s.allow_partial_) return ts_unsupported("partial results");
  }
  return status::ok();
}

}  // namespace cellar::detail
