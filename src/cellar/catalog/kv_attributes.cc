// catalog/kv_attributes.cc: the kv_attributes option (kv_attributes.h), read with
// nlohmann-json.
#include "catalog/kv_attributes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ascii.h"

namespace cellar {
namespace {

using json = nlohmann::json;

// The value as an error message shows it: strings quoted, objects by name, the rest as
// JSON writes them.
std::string shown(const json& v) {
  if (v.is_string()) return "\"" + v.get<std::string>() + "\"";
  if (v.is_object()) return "an object";
  return v.dump();
}

}  // namespace

// Reads '{"HBase": {"TimeToLive": n, "MaxVersions": n}}' into the family.
status apply_kv_attributes(std::string_view text, family_descriptor& f) {
  const status shape{code::invalid_argument,
                     "kv_attributes must be of the form '{\"HBase\": {\"TimeToLive\": <seconds>, "
                     "\"MaxVersions\": <n>}}' (either setting may be left out)"};
  // nlohmann-json keeps the last of two equal keys; a key given twice is an error here,
  // so the parse callback watches the keys of each object (names compare as given; the
  // same name in another case is caught below).
  std::vector<std::vector<std::string>> keys;        // per open object
  std::optional<std::pair<int, std::string>> twice;  // depth, key
  json doc;
  try {
    doc = json::parse(text, [&](int depth, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::object_start) keys.emplace_back();
      if (event == json::parse_event_t::object_end) keys.pop_back();
      if (event == json::parse_event_t::key && !keys.empty()) {
        auto k = parsed.get<std::string>();
        if (!twice && std::find(keys.back().begin(), keys.back().end(), k) != keys.back().end())
          twice.emplace(depth, k);
        keys.back().push_back(std::move(k));
      }
      return true;
    });
  } catch (const json::parse_error& e) {
    // e.what(): "[json.exception.parse_error.101] parse error at line 1, column 6: <why>".
    std::string why = e.what();
    if (auto colon = why.find(": "); colon != std::string::npos) why = why.substr(colon + 2);
    return {code::invalid_argument,
            "kv_attributes is not valid JSON at offset " + std::to_string(e.byte > 0 ? e.byte - 1 : 0) + ": " + why};
  } catch (const json::exception& e) {
    // Not a syntax error: a number out of range (out_of_range.406, as 1e999) and the like.
    std::string why = e.what();
    if (auto bracket = why.find("] "); bracket != std::string::npos) why = why.substr(bracket + 2);
    return {code::invalid_argument, "kv_attributes holds a value JSON cannot represent: " + why};
  }
  if (twice && twice->first <= 1) return shape;  // {"HBase": ..., "HBase": ...}
  if (!doc.is_object() || doc.size() != 1 || !ascii_iequal(doc.begin().key(), "HBase")) return shape;
  const json& hbase = doc.begin().value();
  if (!hbase.is_object()) return shape;
  if (twice) return {code::invalid_argument, "kv_attributes: \"" + twice->second + "\" is given twice"};
  bool seen_ttl = false, seen_versions = false;
  for (const auto& [key, v] : hbase.items()) {
    const bool is_ttl = ascii_iequal(key, "TimeToLive");
    const bool is_versions = ascii_iequal(key, "MaxVersions");
    if (!is_ttl && !is_versions)
      return {code::invalid_argument,
              "kv_attributes: unknown HBase setting \"" + key + "\"; only TimeToLive and MaxVersions are supported"};
    bool& seen = is_ttl ? seen_ttl : seen_versions;
    if (seen) return {code::invalid_argument, "kv_attributes: \"" + key + "\" is given twice"};
    seen = true;
    const char* name = is_ttl ? "TimeToLive" : "MaxVersions";
    // Integers JSON writes without a fraction or exponent; nlohmann-json reads those above
    // 2^64 - 1 as floating point.
    const bool positive =
        (v.is_number_unsigned() && v.get<std::uint64_t>() > 0 &&
         v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    if (!positive)
      return {code::invalid_argument,
              std::string("kv_attributes: ") + name + " must be a positive integer, not " + shown(v)};
    const auto n = static_cast<std::int64_t>(v.get<std::uint64_t>());
    if (is_ttl) {
      f.ttl_seconds = n;
    } else {
      if (n > std::numeric_limits<std::uint32_t>::max())
        return {code::invalid_argument, "kv_attributes: MaxVersions " + std::to_string(n) + " is too large"};
      f.max_versions = static_cast<std::uint32_t>(n);
    }
  }
  return status::ok();
}

}  // namespace cellar
