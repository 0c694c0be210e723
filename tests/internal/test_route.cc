#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "route/murmur.h"
#include "route/router.h"

using namespace cellar;
using namespace cellar::detail;

TEST_CASE("MurmurHash64A seed 0 matches an independent implementation", "[route]") {
  // Vectors from a separate Python transcription of Appleby's MurmurHash64A. Stored rows
  // depend on this function, so it must never change.
  CHECK(murmur_hash64a("") == 0x0ULL);
  CHECK(murmur_hash64a("a") == 0x071717d2d36b6b11ULL);
  CHECK(murmur_hash64a("hello") == 0x1e68d17c457bf117ULL);
  CHECK(murmur_hash64a("user1234567890") == 0xc81f740b68691336ULL);
  CHECK(murmur_hash64a(std::string_view("\x00\xff\x80"
                                        "abcdefgh",
                                        11)) == 0xb623d4339efb6512ULL);
}

TEST_CASE("KEY partitioning spreads rows and is hash % n", "[route]") {
  auto spec = partition_spec::hash(7);
  std::map<std::uint32_t, int> count;
  for (int i = 0; i < 7000; ++i) {
    std::string row = "row" + std::to_string(i);
    auto p = partition_of(spec, row);
    CHECK(p == murmur_hash64a(row) % 7);
    ++count[p];
  }
  REQUIRE(count.size() == 7);
  for (auto& [p, n] : count) CHECK(n > 700);  // 1000 expected each
}

TEST_CASE("KEY prefix partitioning keeps a prefix in one partition", "[route]") {
  auto spec = partition_spec::hash_prefix(97, 4);
  std::set<std::uint32_t> parts;
  for (int i = 0; i < 100; ++i) parts.insert(partition_of(spec, "user" + std::to_string(i)));
  CHECK(parts.size() == 1);
  CHECK(partition_of(spec, "ab") == murmur_hash64a("ab") % 97);  // shorter than the prefix
  // A scan whose bounds share the prefix visits one partition only.
  auto one = partitions_for_range(spec, "user1", "user9");
  REQUIRE(one.size() == 1);
  CHECK(one[0] == partition_of(spec, "user5"));
  CHECK(partitions_for_range(spec, "usea", "user").size() == 97);
}

TEST_CASE("RANGE COLUMNS bounds are exclusive upper bounds", "[route]") {
  auto spec = partition_spec::range_bounds({"a", "w"});
  CHECK(spec.count() == 3);
  CHECK(partition_of(spec, "\x01") == 0);
  CHECK(partition_of(spec, "Z") == 0);
  CHECK(partition_of(spec, "a") == 1);  // equal to a bound: the next partition
  CHECK(partition_of(spec, "v\xff") == 1);
  CHECK(partition_of(spec, "w") == 2);
  CHECK(partition_of(spec, "\xff\xff") == 2);
  CHECK(partitions_for_range(spec, "b", "c") == std::vector<std::uint32_t>{1});
  CHECK(partitions_for_range(spec, "", "b") == std::vector<std::uint32_t>{0, 1});
  CHECK(partitions_for_range(spec, "x", "") == std::vector<std::uint32_t>{2});
}
