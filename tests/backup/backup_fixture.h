// Shared helpers of the backup tests: the store fixture (tests/support/store_fixture.h) and
// binary row keys.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "../support/store_fixture.h"
#include "cellar/store.h"

namespace backup_test {

namespace fs = std::filesystem;

using testsupport::all_cells;
using testsupport::open_store;
using testsupport::temp_dir;

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
