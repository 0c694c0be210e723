// The helpers of the semantics conformance tests (test_semantics.cc: R1-R20;
// test_semantics_rmw.cc: R22-R34 and R48-R50): a store on a fake clock, tables, and
// cells printed as "f:q@ts=v".
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cellar/store.h"
#include "printable.h"
#include "status_checks.h"

namespace semantics_test {

using cellar::code;
using cellar::compare_op;
using cellar::family_descriptor;
using cellar::row_result;
using cellar::schema_origin;
using test_util::be64;

constexpr std::int64_t kT0 = 1'700'000'000'000;  // fake "now" in ms

inline std::int64_t from_be64(const std::string& s) {
  REQUIRE(s.size() == 8);
  std::uint64_t u = 0;
  for (unsigned char c : s) u = (u << 8) | c;
  return static_cast<std::int64_t>(u);
}

using test_util::printable;

// "f:q@ts=v" for each cell, in returned order.
inline std::vector<std::string> cells_of(const row_result& r) {
  std::vector<std::string> out;
  for (const auto& c : r.cells)
    out.push_back(c.family + ":" + printable(c.qualifier) + "@" + std::to_string(c.timestamp) + "=" +
                  printable(c.value));
  return out;
}

inline std::vector<std::string> rows_of(const std::vector<row_result>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) out.push_back(printable(r.row));
  return out;
}

inline std::string cs(const std::string& fq, std::int64_t ts, const std::string& v) {
  return fq + "@" + std::to_string(ts) + "=" + printable(v);
}

inline family_descriptor fam(std::string name, std::uint32_t max_versions = 0, std::int64_t ttl_s = 0) {
  family_descriptor f;
  f.name = std::move(name);
  f.max_versions = max_versions;
  f.ttl_seconds = ttl_s;
  return f;
}

struct fixture {
  std::shared_ptr<std::atomic<std::int64_t>> now = std::make_shared<std::atomic<std::int64_t>>(kT0);
  std::unique_ptr<cellar::store> store;

  fixture() {
    cellar::store_options o;
    o.worker_threads = 2;
    o.maintenance_interval = std::chrono::milliseconds(0);  // reclaim only on compact()
    auto n = now;
    o.clock = [n] { return n->load(); };
    auto s = cellar::store::open(std::move(o));
    REQUIRE_OK(s);
    store = std::move(s.value());
  }

  void advance(std::int64_t ms) { now->fetch_add(ms); }
  std::int64_t t() const { return now->load(); }

  cellar::table make(const std::string& name, std::vector<family_descriptor> fams,
                     schema_origin origin = schema_origin::oceanbase_ddl,
                     cellar::partition_spec p = cellar::partition_spec::single()) {
    cellar::table_descriptor d;
    d.name = name;
    d.partitioning = std::move(p);
    d.families = std::move(fams);
    REQUIRE_OK(store->create_table(d, origin));
    auto t = store->open_table(name);
    REQUIRE_OK(t);
    return t.value();
  }

  std::uint64_t cells(const std::string& table) {
    auto st = store->stats(table);
    REQUIRE_OK(st);
    return st->cells;
  }
};

inline row_result get_ok(cellar::table& t, const cellar::get& g) {
  auto r = t.get(g);
  REQUIRE_OK(r);
  return r.value();
}

inline std::vector<std::string> get_cells(cellar::table& t, const cellar::get& g) { return cells_of(get_ok(t, g)); }

inline std::vector<row_result> scan_all(cellar::table& t, const cellar::scan& s) {
  auto sc = t.scan(s);
  REQUIRE_OK(sc);
  auto all = sc->all();
  REQUIRE_OK(all);
  return all.value();
}

inline void put_ok(cellar::table& t, const cellar::put& p) { REQUIRE_OK(t.put(p)); }

}  // namespace semantics_test

using namespace semantics_test;  // NOLINT: the test files use these names bare
