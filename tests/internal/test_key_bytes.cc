// key_bytes: the in-place/heap boundary, copies and moves, and byte order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "partition/key_bytes.h"
#include "partition/memtable.h"

using cellar::detail::cell_map;
using cellar::detail::key_bytes;
using cellar::detail::key_view;

TEMPLATE_TEST_CASE("key_bytes holds any length, in place up to its capacity", "[key_bytes]", key_bytes,
                   cellar::detail::short_bytes) {
  const std::size_t cap = TestType::inline_capacity;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, cap - 1, cap, cap + 1, std::size_t{64}, std::size_t{5000}}) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(i * 37 + 1));
    TestType k(s);
    CHECK(k.size() == n);
    CHECK(std::string(k) == s);
    // In place up to the capacity: the bytes are inside the object.
    const auto* self = reinterpret_cast<const char*>(&k);
    CHECK((k.data() >= self && k.data() < self + sizeof k) == (n <= cap));
    TestType copy(k);
    CHECK(copy == k);
    CHECK(copy.data() != k.data());  // a copy owns its bytes
    TestType moved(std::move(copy));
    CHECK(std::string(moved) == s);
    CHECK(copy.empty());  // NOLINT: moved-from is empty by contract
    TestType assigned("x");
    assigned = k;
    CHECK(assigned == s);
    assigned = TestType("short");
    CHECK(assigned == std::string("short"));
    assigned.swap(moved);
    CHECK(assigned == s);
    CHECK(moved == std::string("short"));
  }
}

TEMPLATE_TEST_CASE("take keeps a heap block of the same size where it is", "[key_bytes]", key_bytes,
                   cellar::detail::short_bytes) {
  const std::size_t cap = TestType::inline_capacity;
  const std::string a(cap + 20, 'a'), b(cap + 20, 'b'), longer(cap + 21, 'c'), small(cap, 'd');
  TestType k(a);
  const char* block = k.data();
  TestType same(b);
  k.take(std::move(same));
  CHECK(k == b);
  CHECK(k.data() == block);  // copied into the block it had
  CHECK(same.empty());       // NOLINT: left empty by contract
  TestType other(longer);
  const char* other_block = other.data();
  k.take(std::move(other));  // another size: the bytes move with their block
  CHECK(k == longer);
  CHECK(k.data() == other_block);
  CHECK(other.empty());  // NOLINT
  TestType in_place(small);
  k.take(std::move(in_place));
  CHECK(k == small);
  TestType twin(small);
  k.take(std::move(twin));  // in place both: as a move
  CHECK(k == small);
  CHECK(twin.empty());  // NOLINT
}

TEST_CASE("a cell's qualifier and value of any length read back through the map", "[key_bytes]") {
  cell_map m;
  std::vector<std::string> lengths;
  for (std::size_t n : {0u, 11u, 12u, 13u, 100u, 70000u}) {
    const std::string q(n, 'q'), v(n, 'v');
    auto [it, inserted] = m.try_emplace(key_view{"row", q, 1});
    REQUIRE(inserted);
    m.assign(it, cellar::detail::cell_value{cellar::detail::short_bytes(v), static_cast<std::int64_t>(n)});
  }
  for (std::size_t n : {0u, 11u, 12u, 13u, 100u, 70000u}) {
    auto it = m.find(key_view{"row", std::string(n, 'q'), 1});
    REQUIRE(it != m.end());
    CHECK(it.qualifier() == std::string(n, 'q'));
    CHECK(it.value().value == std::string(n, 'v'));
    CHECK(it.value().expires_at == static_cast<std::int64_t>(n));
  }
}

TEST_CASE("cell keys order bytes unsigned across the in-place/heap boundary", "[key_bytes]") {
  std::vector<std::string> rows = {std::string(28, 'a'),
                                   std::string(29, 'a'),
                                   std::string(27, 'a') + "\xff",
                                   std::string(28, 'a') + std::string(1, '\0'),
                                   "b",
                                   std::string("\x01", 1),
                                   std::string("\xff\xff", 2),
                                   ""};
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
