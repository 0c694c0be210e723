#include "catalog/catalog.h"

#include <algorithm>

namespace cellar::detail {

const family_schema* table_schema::find(std::string_view family) const {
  auto it = std::lower_bound(families.begin(), families.end(), family,
                             [](const family_schema& f, std::string_view n) { return f.desc.name < n; });
  if (it == families.end() || it->desc.name != family) return nullptr;
  return &*it;
}

table_descriptor table_schema::descriptor() const {
  table_descriptor d;
  d.name = name;
  d.partitioning = partitioning;
  for (const auto& f : families) d.families.push_back(f.desc);
  return d;
}

status check_name(std::string_view what, std::string_view name) {
  if (name.empty() || name.size() > 128)
    return {code::invalid_argument, std::string(what) + " name must be 1 to 128 bytes"};
  for (unsigned char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok)
      return {code::invalid_argument, std::string(what) + " name '" + std::string(name) +
                                          "' may only hold letters, digits, '_', '-' and '.'"};
  }
  return status::ok();
}

status check_family(const family_descriptor& f) {
  if (auto s = check_name("family", f.name); !s) return s;
  if (f.ttl_seconds < 0) return {code::invalid_argument, "TimeToLive must be a positive number of seconds"};
  if (f.max_value_bytes == 0 || f.max_value_bytes > longblob_value_bytes)
    return {code::invalid_argument, "value size must be 1 byte to 512 MiB"};
  return status::ok();
}

status check_partitioning(const partition_spec& p) {
  using m = partition_spec::method;
  switch (p.how) {
    case m::none:
      if (p.partitions != 1) return {code::invalid_argument, "an unpartitioned table has one partition"};
      return status::ok();
    case m::key_prefix:
      if (p.prefix_bytes == 0 || p.prefix_bytes > max_row_key_bytes)
        return {code::invalid_argument, "the key prefix length must be 1 to 1024 bytes"};
      [[fallthrough]];
    case m::key:
      if (p.partitions == 0 || p.partitions > max_partitions)
        return {code::invalid_argument, "PARTITIONS must be 1 to " + std::to_string(max_partitions)};
      return status::ok();
    case m::range:
      if (p.partitions != p.bounds.size() + 1)
        return {code::invalid_argument, "a range rule has one partition more than bounds"};
      if (p.partitions > max_partitions)
        return {code::invalid_argument, "too many range partitions"};
      for (std::size_t i = 0; i < p.bounds.size(); ++i) {
        if (p.bounds[i].empty()) return {code::invalid_argument, "a range bound must not be empty"};
        if (i > 0 && !(p.bounds[i - 1] < p.bounds[i]))
          return {code::invalid_argument, "range bounds must be strictly increasing"};
      }
      return status::ok();
  }
  return {code::invalid_argument, "unknown partitioning method"};
}

}  // namespace cellar::detail
