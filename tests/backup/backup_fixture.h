// Shared helpers of the backup tests: stores in temporary directories, and a table's
// every cell (all versions) for comparing one table or snapshot with another.
#pragma once

#include <catch2/catch.hpp>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "cellar/store.h"

namespace backup_test {

namespace fs = std::filesystem;

struct temp_dir {
  std::string path;
  temp_dir() {
    static std::atomic<int> n{0};
    path = (fs::temp_directory_path() / ("cellar-backup-" + std::to_string(::getpid()) + "-" + std::to_string(n++)))
               .string();
    fs::remove_all(path);
  }
  ~temp_dir() { fs::remove_all(path); }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

inline std::unique_ptr<cellar::store> open_store(const std::string& dir = "",
                                                 cellar::durability d = cellar::durability::snapshot) {
  cellar::store_options o;
  o.directory = dir;
  o.durability = d;
  o.worker_threads = 2;
  o.snapshot_interval = std::chrono::milliseconds(0);
  auto s = cellar::store::open(o);
  INFO(s.error().to_string());
  REQUIRE(s.is_ok());
  return std::move(s.value());
}

// Every cell of `table`, every version, in scan order.
inline std::vector<cellar::cell> all_cells(cellar::store& s, const std::string& table) {
  auto t = s.open_table(table);
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

// A binary row key: bytes 0x00..0xff and back.
inline std::string binary_row(int i) {
  std::string r = "r";
  r.push_back('\0');
  r.push_back(static_cast<char>(i & 0xff));
  r.push_back(static_cast<char>(0xff));
  r += std::to_string(i);
  return r;
}

}  // namespace backup_test
