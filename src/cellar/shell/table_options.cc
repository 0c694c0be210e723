// shell/table_options.cc: `create` and `alter` options into descriptors, and back as
// `describe` shows them (table_options.h).
#include "shell/table_options.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "catalog/hbase_options.h"
#include "util/coding.h"

namespace cellar::shell {

namespace {

constexpr std::int64_t hbase_forever = 2147483647;  // HConstants.FOREVER: TTL => FOREVER

// A setting's value as text: strings and constants as written, numbers in decimal,
// booleans as true/false (the store then checks its kind).
result<std::string> setting_text(const shell_value& v, const std::string& key) {
  if (v.is_boolean()) return std::string(v.as_boolean() ? "true" : "false");
  if (v.is_string() || v.is_constant() || v.is_integer()) return as_text(v, key);
  return status{code::invalid_argument, key + " takes a single value"};
}

// METADATA => {'k' => 'v', ...}: each pair is an attribute of its own name.
status metadata_into(const shell_value& v, std::map<std::string, std::string>& out) {
  if (!v.is_hash()) return {code::invalid_argument, "METADATA must be a Hash type"};
  for (const auto& [k, val] : v.as_hash()) {
    if (val.is_nil()) return {code::invalid_argument, "METADATA '" + k + "' needs a value"};
    auto t = setting_text(val, "METADATA '" + k + "'");
    if (!t) return t.error();
    out[k] = t.value();
  }
  return status::ok();
}

status configuration_refused() {
  return {code::unsupported, "CONFIGURATION is not supported: cellar reads no HBase configuration keys"};
}

// A table attribute or group of them (METADATA, CONFIGURATION) of `create` or `alter`.
// False when `key` is neither.
result<bool> table_attribute_into(const std::string& k, const shell_value& val,
                                  std::map<std::string, std::string>& out) {
  const std::string key = upper(k);
  if (key == "METADATA") {
    if (auto s = metadata_into(val, out); !s) return s;
    return true;
  }
  if (key == "CONFIGURATION") return configuration_refused();
  // The store refuses coprocessors by name (catalog/hbase_options.h).
  if (is_table_setting(key) || lower(k).find("coprocessor") != std::string::npos) {
    auto t = setting_text(val, key);
    if (!t) return t.error();
    out[is_table_setting(key) ? key : k] = t.value();
    return true;
  }
  return false;
}

// HBase's RegionSplitter algorithms: the n - 1 bounds that split their key space into n
// equal parts (the last part takes the remainder).
result<std::vector<std::string>> split_points(const std::string& algo, std::int64_t n) {
  std::string simple = algo;
  if (auto dollar = simple.rfind('$'); dollar != std::string::npos) simple = simple.substr(dollar + 1);
  if (auto dot = simple.rfind('.'); dot != std::string::npos) simple = simple.substr(dot + 1);
  std::vector<std::string> out;
  char buf[32];
  if (simple == "HexStringSplit" || simple == "DecimalStringSplit") {
    // Rows "00000000" to "FFFFFFFF" (hex, written lower case as Java's BigInteger does) or
    // "00000000" to "99999999", left-padded to 8 characters.
    const bool hex = simple == "HexStringSplit";
    const std::uint64_t range = hex ? (std::uint64_t{1} << 32) : 100000000;
    const std::uint64_t size = range / static_cast<std::uint64_t>(n);
    for (std::int64_t i = 1; i < n; ++i) {
      std::snprintf(buf, sizeof buf, hex ? "%08llx" : "%08llu", static_cast<unsigned long long>(size * i));
      out.emplace_back(buf);
    }
    return out;
  }
  if (simple == "UniformSplit") {
    // Raw 8-byte rows 00.. to FF..: the bounds are i * 2^64 / n, big-endian.
    const unsigned __int128 size = (static_cast<unsigned __int128>(1) << 64) / static_cast<unsigned>(n);
    for (std::int64_t i = 1; i < n; ++i) {
      const auto v = static_cast<std::uint64_t>(size * static_cast<unsigned>(i));
      std::string b;
      detail::put_u64(b, v);
      out.push_back(std::move(b));
    }
    return out;
  }
  return status{code::unsupported, "SPLITALGO '" + algo +
                                       "' is not supported: cellar knows HBase's HexStringSplit, "
                                       "DecimalStringSplit and UniformSplit"};
}

status bounds_from(const shell_value& v, std::vector<std::string>& bounds) {
  if (!v.is_array()) return {code::invalid_argument, "SPLITS must be an array of row keys"};
  for (const auto& b : v.as_array()) {
    auto s = as_text(b, "a split");
    if (!s) return s.error();
    bounds.push_back(s.value());
  }
  return status::ok();
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Settings in name order, then METADATA => {...} for the other names.
std::string attributes_text(const std::map<std::string, std::string>& a, bool (*is_setting)(std::string_view)) {
  std::string out, meta;
  for (const auto& [k, v] : a) {
    if (is_setting(k)) {
      out += ", " + k + " => " + quoted(v);
    } else {
      meta += (meta.empty() ? "" : ", ") + quoted(k) + " => " + quoted(v);
    }
  }
  if (!meta.empty()) out += ", METADATA => {" + meta + "}";
  return out;
}

}  // namespace

result<family_descriptor> family_from(const shell_value& v, const family_descriptor* old) {
  family_descriptor f;
  if (old != nullptr) f = *old;
  if (v.is_string() || v.is_constant()) {
    f.name = as_text(v, "family").value();
    return f;
  }
  if (!v.is_hash()) return status{code::invalid_argument, "a column family is a name or {NAME => ...}"};
  const shell_value* name = v.find("NAME");
  if (!name) return status{code::invalid_argument, "a column family needs NAME => 'family'"};
  auto n = as_text(*name, "NAME");
  if (!n) return n.error();
  f.name = n.value();
  for (const auto& [k, val] : v.as_hash()) {
    const std::string key = upper(k);
    if (key == "NAME" || key == "METHOD") continue;
    if (key == "VERSIONS" || key == "MAX_VERSIONS") {
      auto x = as_int(val, "VERSIONS");
      if (!x) return x.error();
      if (x.value() < 1) return status{code::invalid_argument, "VERSIONS must be at least 1"};
      f.max_versions = static_cast<std::uint32_t>(std::min<std::int64_t>(x.value(), UINT32_MAX));
    } else if (key == "MIN_VERSIONS") {
      auto x = as_int(val, "MIN_VERSIONS");
      if (!x) return x.error();
      if (x.value() < 0)
        return status{code::invalid_argument, "Min versions for column family " + f.name + " must be positive."};
      f.min_versions = static_cast<std::uint32_t>(std::min<std::int64_t>(x.value(), UINT32_MAX));
    } else if (key == "TTL") {
      if ((val.is_string() || val.is_constant()) && upper(as_text(val, "TTL").value()) == "FOREVER") {
        f.ttl_seconds = 0;
        continue;
      }
      auto x = as_int(val, "TTL");
      if (!x) return x.error();
      if (x.value() < 1) return status{code::invalid_argument, "TTL must be a positive number of seconds"};
      f.ttl_seconds = x.value() == hbase_forever ? 0 : x.value();
    } else if (key == "METADATA") {
      if (auto s = metadata_into(val, f.attributes); !s) return s;
    } else if (key == "CONFIGURATION") {
      return configuration_refused();
    } else if (is_family_setting(key)) {
      auto t = setting_text(val, key);
      if (!t) return t.error();
      f.attributes[key] = t.value();
    } else {
      return status{code::invalid_argument, "unknown column family option " + k + " (for family " + f.name + ")"};
    }
  }
  return f;
}

status create_options_from(const shell_hash& h, table_descriptor& d) {
  const shell_value* regions = nullptr;
  const shell_value* algo = nullptr;
  for (const auto& [k, val] : h) {
    const std::string key = upper(k);
    if (key == "SPLITS") {
      std::vector<std::string> bounds;
      if (auto s = bounds_from(val, bounds); !s) return s;
      std::sort(bounds.begin(), bounds.end());
      d.partitioning = partition_spec::range_bounds(std::move(bounds));
    } else if (key == "SPLITS_FILE") {
      auto path = as_text(val, "SPLITS_FILE");
      if (!path) return path.error();
      std::ifstream in(path.value());
      if (!in) return {code::invalid_argument, "Splits file " + path.value() + " doesn't exist"};
      std::vector<std::string> bounds;
      for (std::string line; std::getline(in, line);) bounds.push_back(line);  // each line chomped, as HBase
      std::sort(bounds.begin(), bounds.end());
      d.partitioning = partition_spec::range_bounds(std::move(bounds));
    } else if (key == "NUMREGIONS") {
      regions = &val;
    } else if (key == "SPLITALGO") {
      algo = &val;
    } else if (key == "METHOD") {
      auto m = as_text(val, "METHOD");
      if (!m || m.value() != "table_att")
        return {code::invalid_argument, "table_att is currently the only supported method"};
    } else {
      auto taken = table_attribute_into(k, val, d.attributes);
      if (!taken) return taken.error();
      if (!taken.value()) return {code::invalid_argument, "unknown table option " + k};
    }
  }
  if (algo != nullptr && regions == nullptr) return {code::invalid_argument, "Number of regions must be specified"};
  if (regions != nullptr) {
    auto n = as_int(*regions, "NUMREGIONS");
    if (!n) return n.error();
    if (algo == nullptr) {
      // cellar's own reading of NUMREGIONS alone (HBase asks for SPLITALGO): n hash partitions.
      if (n.value() < 1) return {code::invalid_argument, "NUMREGIONS must be at least 1"};
      d.partitioning = partition_spec::hash(static_cast<std::uint32_t>(std::min<std::int64_t>(n.value(), UINT32_MAX)));
      return status::ok();
    }
    if (n.value() <= 1) return {code::invalid_argument, "Number of regions must be greater than 1"};
    if (n.value() > static_cast<std::int64_t>(max_partitions))
      return {code::invalid_argument, "NUMREGIONS must be at most " + std::to_string(max_partitions)};
    auto a = as_text(*algo, "SPLITALGO");
    if (!a) return a.error();
    auto bounds = split_points(a.value(), n.value());
    if (!bounds) return bounds.error();
    d.partitioning = partition_spec::range_bounds(std::move(bounds.value()));
  }
  return status::ok();
}

result<std::map<std::string, std::string>> alter_options_from(const shell_hash& h) {
  std::map<std::string, std::string> out;
  for (const auto& [k, val] : h) {
    const std::string key = upper(k);
    if (key == "NAME") continue;  // with METHOD => 'table_att', as HBase: not a family
    if (key == "METHOD") {
      auto m = as_text(val, "METHOD");
      if (!m) return m.error();
      if (m.value() != "table_att") return status{code::invalid_argument, "Unknown method: " + m.value()};
      continue;
    }
    if (key == "SPLITS" || key == "SPLITS_FILE" || key == "NUMREGIONS" || key == "SPLITALGO")
      return status{code::invalid_argument, key +
                                                " is taken by create only: a table's partitioning is part of its "
                                                "schema"};
    auto taken = table_attribute_into(k, val, out);
    if (!taken) return taken.error();
    if (!taken.value()) return status{code::invalid_argument, "unknown table attribute " + k};
  }
  return out;
}

std::string describe_family(const family_descriptor& f) {
  std::string out = "{NAME => '" + f.name + "', VERSIONS => '" +
                    (f.max_versions == 0 ? std::string("ALL") : std::to_string(f.max_versions)) +
                    "', MIN_VERSIONS => '" + std::to_string(f.min_versions) + "', TTL => '" +
                    (f.ttl_seconds == 0 ? std::string("FOREVER") : std::to_string(f.ttl_seconds) + " SECONDS") +
                    "', MAX_VALUE_BYTES => '" + std::to_string(f.max_value_bytes) + "'";
  if (f.kind == family_kind::time_series) out += ", TIME_SERIES => 'true'";
  return out + attributes_text(f.attributes, is_family_setting) + "}";
}

std::string describe_table_attributes(const std::map<std::string, std::string>& a) {
  if (a.empty()) return {};
  return "{TABLE_ATTRIBUTES => {" + attributes_text(a, is_table_setting).substr(2) + "}}";
}

}  // namespace cellar::shell
