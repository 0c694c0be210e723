#include "model/validate.h"

namespace cellar::detail {

namespace {

status check_row(const std::string& row) {
  if (row.empty()) return {code::invalid_argument, "row key must not be empty"};
  if (row.size() > max_row_key_bytes)
    return {code::too_large, "row key of " + std::to_string(row.size()) + " bytes exceeds " +
                                 std::to_string(max_row_key_bytes)};
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
    return {code::too_large, "qualifier of " + std::to_string(q.size()) + " bytes exceeds " +
                                 std::to_string(max_qualifier_bytes)};
  return status::ok();
}

status check_ts(std::int64_t ts) {
  if (ts < 0) return {code::invalid_argument, "timestamp must not be negative"};
  return status::ok();
}

status check_value(const family_schema& f, std::size_t n) {
  if (n > f.desc.max_value_bytes)
    return {code::too_large, "value of " + std::to_string(n) + " bytes exceeds family '" + f.desc.name +
                                 "' limit of " + std::to_string(f.desc.max_value_bytes)};
  return status::ok();
}

#define CELLAR_TRY(expr)          \
  do {                            \
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
    if (r != m.row)
      return {code::invalid_argument, "mutation row '" + r + "' is not equal to the row '" + m.row + "'"};
    CELLAR_TRY(std::visit([&](const auto& x) { return check(schema, x); }, mu));
  }
  return status::ok();
}

status check(const table_schema& schema, const check_and_mutate& c) {
  CELLAR_TRY(check_row(c.row));
  CELLAR_TRY(check_family(schema, c.family));
  CELLAR_TRY(check_qualifier(c.qualifier));
  if (c.range.min < 0 || c.range.max < c.range.min)
    return {code::invalid_argument, "time range must satisfy 0 <= min <= max"};
  if (c.mutation.row != c.row)
    return {code::invalid_argument, "mutation row is not equal to the check row"};
  CELLAR_TRY(check(schema, c.mutation));
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

}  // namespace

status validate(const table_schema& schema, const batch_op& op) {
  return std::visit([&](const auto& o) { return check(schema, o); }, op);
}

status validate(const table_schema& schema, const scan& s) {
  if (s.start.size() > max_row_key_bytes || s.stop.size() > max_row_key_bytes)
    return {code::too_large, "scan bound exceeds the row key limit of 1024 bytes"};
  if (s.caching_ <= 0) return {code::invalid_argument, "caching must be at least 1 row"};
  if (s.batch_ == 0 || s.batch_ < -1) return {code::invalid_argument, "batch must be at least 1 cell"};
  if (s.limit_ < -1) return {code::invalid_argument, "limit must be >= 0"};
  return check_read(schema, s.options);
}

}  // namespace cellar::detail
