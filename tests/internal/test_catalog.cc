// The catalog's stored form of a schema (catalog/catalog.h, docs/storage.md): format 2
// carries the disabled flag; format 1 entries, written before it, read as enabled.
#include <catch2/catch.hpp>

#include "catalog/catalog.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

table_schema sample(bool disabled) {
  table_schema t;
  t.name = "t";
  t.uid = 7;
  t.partitioned = true;
  t.partitioning = partition_spec::range_bounds({"b", "d"});
  t.families.push_back({{"f", 3, 60, 1024, family_kind::normal}, 1});
  t.families.push_back({{"g", 0, 0, default_value_bytes, family_kind::time_series}, 2});
  t.disabled = disabled;
  return t;
}

}  // namespace

TEST_CASE("catalog entries round-trip, with the disabled flag", "[catalog]") {
  for (bool disabled : {false, true}) {
    auto back = decode_schema(encode_schema(sample(disabled)));
    INFO(back.error().to_string());
    REQUIRE(back.is_ok());
    CHECK(back->disabled == disabled);
    CHECK(back->descriptor() == sample(disabled).descriptor());
    CHECK(back->uid == 7);
  }
}

TEST_CASE("a format 1 catalog entry reads as an enabled table; bad flags are corruption", "[catalog]") {
  std::string v2 = encode_schema(sample(false));
  REQUIRE(v2.substr(0, 4) == std::string("\0\0\0\2", 4));
  std::string v1 = std::string("\0\0\0\1", 4) + v2.substr(4, v2.size() - 5);  // no flags byte
  auto back = decode_schema(v1);
  INFO(back.error().to_string());
  REQUIRE(back.is_ok());
  CHECK_FALSE(back->disabled);
  CHECK(back->descriptor() == sample(false).descriptor());

  std::string bad_flags = v2;
  bad_flags.back() = '\x02';
  CHECK(decode_schema(bad_flags).code() == code::corruption);
  CHECK(decode_schema(v1 + std::string(1, '\0')).code() == code::corruption);  // format 1 with a flags byte
  CHECK(decode_schema(std::string("\0\0\0\3", 4) + v2.substr(4)).code() == code::corruption);
}
