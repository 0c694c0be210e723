// key_bytes: the in-place/heap boundary, copies and moves, and byte order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "partition/key_bytes.h"
#include "partition/memtable.h"

using cellar::detail::cell_map;
using cellar::detail::key_view;
using cellar::detail::key_bytes;

TEST_CASE("key_bytes holds any length, in place up to its capacity", "[key_bytes]") {
  for (std::size_t n : {0u, 1u, 15u, 16u, 27u, 28u, 29u, 64u, 5000u}) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(i * 37 + 1));
    key_bytes k(s);
    CHECK(k.size() == n);
    CHECK(std::string(k) == s);
    key_bytes copy(k);
    CHECK(copy == k);
    CHECK(copy.data() != k.data());  // a copy owns its bytes
    key_bytes moved(std::move(copy));
    CHECK(std::string(moved) == s);
    CHECK(copy.empty());  // NOLINT: moved-from is empty by contract
    key_bytes assigned("x");
    assigned = k;
    CHECK(assigned == s);
    assigned = key_bytes("short");
    CHECK(assigned == std::string("short"));
    assigned.swap(moved);
    CHECK(assigned == s);
    CHECK(moved == std::string("short"));
  }
}

TEST_CASE("cell keys order bytes unsigned across the in-place/heap boundary", "[key_bytes]") {
  std::vector<std::string> rows = {std::string(28, 'a'), std::string(29, 'a'), std::string(27, 'a') + "\xff",
                                   std::string(28, 'a') + std::string(1, '\0'), "b", std::string("\x01", 1),
                                   std::string("\xff\xff", 2), ""};
  // The order a memtable keeps them in (cell_map: rows ordered, then cells within a row).
  cell_map m;
  for (auto& r : rows) m.try_emplace(key_view{r, "q", 1});
  std::sort(rows.begin(), rows.end());  // std::string compares as unsigned char
  std::size_t i = 0;
  for (auto it = m.begin(); it != m.end(); ++it, ++i) {
    REQUIRE(i < rows.size());
    CHECK(std::string(it.row()) == rows[i]);
  }
  CHECK(i == rows.size());
}
