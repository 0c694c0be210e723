// The catalog's stored form of a schema (catalog/catalog.h, docs/storage.md): format 2
// carries the disabled flag; format 1 entries, written before it, read as enabled. Format
// 3 adds the table's and the families' HBase attributes and MIN_VERSIONS; format 2
// entries read without them.
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

// `sample` as format 3 writes it with attributes and MIN_VERSIONS.
table_schema with_attributes() {
  table_schema t = sample(true);
  t.attributes = {{"READONLY", "true"}, {"owner-note", "ops"}};
  t.families[0].desc.min_versions = 2;
  t.families[0].desc.attributes = {{"BLOOMFILTER", "ROW"}};
  return t;
}

// Format 3 written for `sample` (no attributes, no MIN_VERSIONS) as format 2: the same
// bytes without the trailer (u32 0 for the table, u32 0 + u32 0 per family).
std::string as_format2(const std::string& v3) {
  return std::string("\0\0\0\2", 4) + v3.substr(4, v3.size() - 4 - 4 - 2 * 8);
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

TEST_CASE("catalog entries round-trip with HBase attributes and MIN_VERSIONS", "[catalog]") {
  const auto t = with_attributes();
  auto back = decode_schema(encode_schema(t));
  INFO(back.error().to_string());
  REQUIRE(back.is_ok());
  CHECK(back->descriptor() == t.descriptor());
  CHECK(back->attributes == t.attributes);
  CHECK(back->families[0].desc.min_versions == 2);
  CHECK(back->families[0].desc.attributes.at("BLOOMFILTER") == "ROW");
  CHECK(back->families[1].desc.attributes.empty());
  // A truncated trailer is corruption, not an entry without attributes.
  const std::string full = encode_schema(t);
  CHECK(decode_schema(full.substr(0, full.size() - 1)).code() == code::corruption);
}

TEST_CASE("a format 1 catalog entry reads as an enabled table; bad flags are corruption", "[catalog]") {
  const std::string v3 = encode_schema(sample(false));
  REQUIRE(v3.substr(0, 4) == std::string("\0\0\0\3", 4));
  std::string v2 = as_format2(v3);
  {
    auto back = decode_schema(v2);
    INFO(back.error().to_string());
    REQUIRE(back.is_ok());
    CHECK(back->descriptor() == sample(false).descriptor());
    CHECK(back->attributes.empty());
  }
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
  CHECK(decode_schema(std::string("\0\0\0\4", 4) + v3.substr(4)).code() == code::corruption);
}
