// kv_attributes (read with nlohmann-json in catalog/ddl.cc): what is accepted, and that
// each kind of bad input gets INVALID_ARGUMENT with a message naming what was wrong.
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "catalog/ddl.h"

namespace {

using namespace cellar;

std::string create_with(std::string_view kv) {
  return "CREATE TABLE g$f (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1024), "
         "PRIMARY KEY(K, Q, T)) kv_attributes = '" +
         std::string(kv) + "';";
}

// The error of parsing a CREATE TABLE with `kv`; it must be INVALID_ARGUMENT.
std::string refusal(std::string_view kv) {
  auto p = parse_ddl(create_with(kv));
  INFO(std::string(kv));
  REQUIRE(!p.is_ok());
  CHECK(p.error().code() == code::invalid_argument);
  return p.error().message();
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("kv_attributes: both settings, any case, JSON whitespace and escapes", "[ddl][kv_attributes]") {
  auto p = parse_ddl(create_with(R"({ "HBase" : {"TimeToLive": 86400, "maxversions" : 3} })"));
  INFO(p.error().to_string());
  REQUIRE(p.is_ok());
  CHECK((*p)[0].descriptor.ttl_seconds == 86400);
  CHECK((*p)[0].descriptor.max_versions == 3);
  // \u00e9 is two UTF-8 bytes: an unknown setting named with it is reported, decoded.
  CHECK(contains(refusal(R"({"HBase": {"caf\\u00e9": 1}})"), "unknown HBase setting \"caf\xc3\xa9\""));
}

TEST_CASE("kv_attributes: malformed JSON names the offset and the fault", "[ddl][kv_attributes]") {
  auto m = refusal(R"({"HBase": {"MaxVersions": 3,}})");
  CHECK(contains(m, "kv_attributes is not valid JSON at offset 28: "));
  const auto n = refusal("not json");
  INFO(n);
  CHECK(contains(n, "kv_attributes is not valid JSON at offset 1: "));
  CHECK(contains(refusal(R"({"HBase": {}} x)"), "not valid JSON"));
  CHECK(contains(refusal(""), "not valid JSON"));
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": 01}})"), "not valid JSON"));
  // A number JSON cannot hold (the parser throws out_of_range, not parse_error: found by
  // the ddl fuzzer, tests/fuzz/ddl/regress-0c2001f6b8383c74).
  const auto big = refusal(R"({"HBase": {"TimeToLive": 1e999}})");
  INFO(big);
  CHECK(contains(big, "kv_attributes holds a value JSON cannot represent: "));
  CHECK(contains(big, "1e999"));
}

TEST_CASE("kv_attributes: a key given twice is refused, in any case", "[ddl][kv_attributes]") {
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": 3, "MaxVersions": 4}})"), "\"MaxVersions\" is given twice"));
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": 3, "maxVersions": 4}})"), "\"maxVersions\" is given twice"));
  CHECK(contains(refusal(R"({"HBase": {}, "HBase": {"MaxVersions": 4}})"), "must be of the form"));
}

TEST_CASE("kv_attributes: values must be positive integers that fit", "[ddl][kv_attributes]") {
  CHECK(contains(refusal(R"({"HBase": {"TimeToLive": 0}})"), "TimeToLive must be a positive integer, not 0"));
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": -1}})"), "MaxVersions must be a positive integer, not -1"));
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": 1.5}})"), "must be a positive integer, not 1.5"));
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": "3"}})"), "must be a positive integer, not \"3\""));
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": null}})"), "must be a positive integer, not null"));
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": {}}})"), "must be a positive integer, not an object"));
  CHECK(contains(refusal(R"({"HBase": {"MaxVersions": 99999999999}})"), "MaxVersions 99999999999 is too large"));
  CHECK(contains(refusal(R"({"HBase": {"TimeToLive": 9223372036854775808}})"), "must be a positive integer"));
  CHECK(contains(refusal(R"({"HBase": {"TimeToLive": 99999999999999999999}})"), "must be a positive integer"));
}

TEST_CASE("kv_attributes: anything but one HBase object is the wrong shape", "[ddl][kv_attributes]") {
  for (std::string_view kv :
       {R"([])", R"({"Redis": {}})", R"({"HBase": 3})", R"({"HBase": []})", R"({"HBase": {}, "Redis": {}})"})
    CHECK(contains(refusal(kv), "kv_attributes must be of the form"));
}
