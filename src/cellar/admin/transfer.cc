// admin/transfer.cc: cellar-admin's export, import and bulk load.
#include "admin/transfer.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "persist/codec.h"

namespace cellar::admin {

namespace fs = std::filesystem;

namespace {

// Cells per batch an import sends.
constexpr std::size_t import_batch = 1000;

status at_line(std::uint64_t line, const status& st) {
  return {st.code(), "line " + std::to_string(line) + ": " + st.message()};
}

std::uint64_t file_size(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

// Calls `each(line_number, line)` for every line of `path` (without its line break);
// stops at the first error.
status for_each_line(const std::string& path, const std::function<status(std::uint64_t, std::string_view)>& each,
                     std::uint64_t* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {code::io_error, "cannot open '" + path + "'"};
  std::string line;
  std::uint64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (bytes) *bytes += line.size() + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (auto st = each(n, line); !st) return st;
  }
  if (in.bad()) return {code::io_error, "cannot read '" + path + "'"};
  return status::ok();
}

}  // namespace

result<transfer_stats> export_table(connection& c, const std::string& table, const std::string& path,
                                    const export_options& o, const progress_fn& on_progress) {
  scan s;
  if (!o.start.empty()) s.start_row(o.start);
  if (!o.stop.empty()) s.stop_row(o.stop);
  if (o.versions == 0)
    s.all_versions();
  else
    s.max_versions(o.versions);
  if (o.time_range) s.range(o.time_range->first, o.time_range->second);
  s.with_cell_ttls();
  std::uint64_t total = 0;
  if (auto st = c.stats(table); st) total = st->cells;
  auto stream = c.scan(table, s);
  if (!stream) return stream.error();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return status{code::io_error, "cannot create '" + path + "'"};
  transfer_stats stats;
  std::string line;
  for (;;) {
    auto rows = (*stream)->next(1000);
    if (!rows) return rows.error();
    if (rows->empty()) break;
    for (const auto& r : *rows) {
      ++stats.rows;
      for (const auto& cell : r.cells) {
        line = format_cell(cell, o.format);
        line.push_back('\n');
        out.write(line.data(), static_cast<std::streamsize>(line.size()));
        stats.bytes += line.size();
        ++stats.cells;
      }
    }
    if (on_progress) on_progress(stats.cells, std::max(total, stats.cells));
  }
  out.flush();
  if (!out) return status{code::io_error, "cannot write '" + path + "'"};
  return stats;
}

result<transfer_stats> import_table(connection& c, const std::string& table, const std::string& path,
                                    std::optional<row_format> format, const progress_fn& on_progress) {
  const row_format f = format ? *format : (path.ends_with(".jsonl") ? row_format::jsonl : row_format::tsv);
  auto desc = c.describe(table);
  if (!desc) return desc.error();
  std::map<std::string, std::size_t> max_value;
  std::set<std::string> time_series;  // families that refuse a cell TTL
  for (const auto& fam : desc->families) {
    max_value[fam.name] = fam.max_value_bytes;
    if (fam.kind == family_kind::time_series) time_series.insert(fam.name);
  }
  // First pass: every line checked, nothing written.
  auto check = [&](std::uint64_t n, std::string_view line) -> status {
    auto cell = parse_cell(line, f);
    if (!cell) return at_line(n, cell.error());
    auto it = max_value.find(cell->family);
    if (it == max_value.end())
      return at_line(n, {code::family_not_found, "table '" + table + "' has no family '" + cell->family + "'"});
    if (cell->row.size() > max_row_key_bytes) return at_line(n, {code::too_large, "the row key is over its limit"});
    if (cell->value.size() > it->second) return at_line(n, {code::too_large, "the value is over its family's limit"});
    if (cell->ttl_ms != 0 && time_series.contains(cell->family))
      return at_line(n, {code::unsupported,
                         "a cell TTL is not supported on the time-series family '" + cell->family + "'"});
    return status::ok();
  };
  if (auto st = for_each_line(path, check, nullptr); !st) return st;

  const std::uint64_t total = file_size(path);
  transfer_stats stats;
  std::vector<batch_op> ops;
  std::string last_row;
  auto flush = [&]() -> status {
    if (ops.empty()) return status::ok();
    auto results = c.batch(table, std::move(ops));
    ops.clear();
    for (const auto& r : results)
      if (!r.st) return r.st;
    return status::ok();
  };
  auto load = [&](std::uint64_t n, std::string_view line) -> status {
    auto cell = parse_cell(line, f);
    if (!cell) return at_line(n, cell.error());
    if (cell->row != last_row) {
      ++stats.rows;
      last_row = cell->row;
    }
    put p(cell->row);
    p.add(cell->family, cell->qualifier, cell->timestamp, cell->value);
    if (cell->ttl_ms != 0) p.ttl(cell->ttl_ms);
    ops.push_back(std::move(p));
    ++stats.cells;
    stats.bytes += line.size() + 1;
    if (ops.size() < import_batch) return status::ok();
    if (on_progress) on_progress(stats.bytes, total);
    return flush();
  };
  if (auto st = for_each_line(path, load, nullptr); !st) return st;
  if (auto st = flush(); !st) return st;
  if (on_progress) on_progress(total, total);
  return stats;
}

}  // namespace cellar::admin
