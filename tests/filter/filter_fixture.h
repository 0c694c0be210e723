// Shared helpers of the filter tests: a store with a fixed clock, tables, and results
// written as strings ("row/family:qualifier@ts=value").
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../printable.h"
#include "cellar/filter.h"
#include "cellar/store.h"

namespace filter_test {

inline constexpr std::int64_t kT0 = 1'700'000'000'000;

inline std::unique_ptr<cellar::store> open_store() {
  cellar::store_options o;
  o.worker_threads = 2;
  o.clock = [] { return kT0; };
  auto s = cellar::store::open(std::move(o));
  INFO(s.error().to_string());
  REQUIRE(s);
  return std::move(s.value());
}

// A table with these families, keeping every version.
inline cellar::table make_table(cellar::store& s, const std::string& name, std::vector<std::string> families,
                                cellar::partition_spec p = cellar::partition_spec::single()) {
  cellar::table_descriptor d;
  d.name = name;
  d.partitioning = std::move(p);
  for (auto& f : families) {
    cellar::family_descriptor fd;
    fd.name = std::move(f);
    d.families.push_back(std::move(fd));
  }
  auto st = s.create_table(d, cellar::schema_origin::oceanbase_ddl);
  INFO(st.to_string());
  REQUIRE(st);
  auto t = s.open_table(name);
  REQUIRE(t);
  return std::move(t.value());
}

using test_util::printable;

inline std::string kv(const cellar::cell& c, bool with_ts = false) {
  std::string s = printable(c.row) + "/" + c.family + ":" + printable(c.qualifier);
  if (with_ts) s += "@" + std::to_string(c.timestamp);
  return s + "=" + printable(c.value);
}

struct scan_result {
  std::vector<std::string> kvs;            // every cell in order
  std::vector<std::size_t> cells_per_row;  // one per result row
  std::vector<std::string> rows;
  std::size_t cells() const { return kvs.size(); }
};

inline scan_result run_scan(cellar::table& t, const cellar::scan& s, bool with_ts = false) {
  auto sc = t.scan(s);
  INFO(sc.error().to_string());
  REQUIRE(sc);
  auto all = sc->all();
  INFO(all.error().to_string());
  REQUIRE(all);
  scan_result out;
  for (const auto& r : all.value()) {
    out.rows.push_back(r.row);
    out.cells_per_row.push_back(r.cells.size());
    for (const auto& c : r.cells) out.kvs.push_back(kv(c, with_ts));
  }
  return out;
}

inline std::vector<std::string> get_kvs(cellar::table& t, const cellar::get& g, bool with_ts = false) {
  auto r = t.get(g);
  INFO(r.error().to_string());
  REQUIRE(r);
  std::vector<std::string> out;
  for (const auto& c : r->cells) out.push_back(kv(c, with_ts));
  return out;
}

// HBase's verifyScan: `rows` results of `keys` cells each.
inline void verify_scan(cellar::table& t, const cellar::scan& s, std::size_t rows, std::size_t keys) {
  auto r = run_scan(t, s);
  INFO("filter: " << (s.options.filter ? cellar::to_string(*s.options.filter) : "none"));
  CHECK(r.cells_per_row.size() == rows);
  for (auto n : r.cells_per_row) CHECK(n == keys);
}

inline cellar::filter parsed(const std::string& text) {
  auto f = cellar::parse_filter(text);
  INFO(text << ": " << f.error().to_string());
  REQUIRE(f);
  return f.value();
}

}  // namespace filter_test
