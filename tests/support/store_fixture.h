// tests/support/store_fixture.h: opening a store in a test, and reading every cell back.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cellar/store.h"
#include "temp_dir.h"

namespace testsupport {

// Options for a test's store in `dir` ("" for memory only): two worker threads, and no
// periodic snapshots, so that a test decides when one happens.
inline cellar::store_options store_options_for(const std::string& dir,
                                               cellar::durability d = cellar::durability::snapshot) {
  cellar::store_options o;
  o.directory = dir;
  o.durability = d;
  o.worker_threads = 2;
  o.snapshot_interval = std::chrono::milliseconds(0);
  return o;
}

// The store `o` opens; the test fails, with the store's error, when it does not open.
inline std::unique_ptr<cellar::store> open_ok(const cellar::store_options& o) {
  auto s = cellar::store::open(o);
  INFO(s.error().to_string());
  REQUIRE(s.is_ok());
  return std::move(s.value());
}

// open_ok(store_options_for(dir, d)).
inline std::unique_ptr<cellar::store> open_store(const std::string& dir = "",
                                                 cellar::durability d = cellar::durability::snapshot) {
  return open_ok(store_options_for(dir, d));
}

// Every cell of `table`, every version, in scan order.
inline std::vector<cellar::cell> all_cells(cellar::store& s, const std::string& table) {
  auto t = s.open_table(table);
  INFO(t.error().to_string());
  REQUIRE(t.is_ok());
  auto sc = t->scan(cellar::scan().all_versions());
  REQUIRE(sc.is_ok());
  auto rows = sc->all();
  REQUIRE(rows.is_ok());
  std::vector<cellar::cell> out;
  for (auto& r : *rows)
    for (auto& c : r.cells) out.push_back(c);
  return out;
}

}  // namespace testsupport
