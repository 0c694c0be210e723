#include <stdexcept>

#include "engine.h"

namespace loadgen {

partition_choice parse_partitioning(const std::string& s) {
  partition_choice pc;
  const auto colon = s.find(':');
  pc.method = s.substr(0, colon);
  if (pc.method == "none") return pc;
  if ((pc.method != "hash" && pc.method != "range") || colon == std::string::npos)
    throw std::invalid_argument("partitioning must be none, hash:N or range:N, not '" + s + "'");
  pc.n = std::stoi(s.substr(colon + 1));
  if (pc.n < 1 || pc.n > 8192) throw std::invalid_argument("partitions must be 1..8192");
  return pc;
}

std::vector<std::string> ycsb_range_bounds(int n) {
  // Hashed keys are "user" + decimal of a value in [0, 2^63): nine in ten have 19 digits and
  // start with 1..9, the rest sort among them by their leading digits. Even bounds over
  // [1e18, 2^63) therefore split the key space about evenly.
  std::vector<std::string> b;
  const long double lo = 1e18L, hi = 9223372036854775807.0L;
  for (int i = 1; i < n; ++i) b.push_back("user" + std::to_string(static_cast<std::uint64_t>(lo + (hi - lo) * i / n)));
  return b;
}

cellar::table_descriptor ycsb_table(const target_options& o) {
  cellar::table_descriptor d;
  d.name = o.table;
  const auto pc = parse_partitioning(o.partitioning);
  if (pc.method == "hash") d.partitioning = cellar::partition_spec::hash(static_cast<std::uint32_t>(pc.n));
  if (pc.method == "range") d.partitioning = cellar::partition_spec::range_bounds(ycsb_range_bounds(pc.n));
  cellar::family_descriptor f;
  f.name = o.family;
  // One version, as HBase's YCSB usertable (VERSIONS defaults to 1) and as Redis keeps
  // it: an update replaces the field. (A family from the OceanBase DDL without
  // MaxVersions keeps every version, R7.)
  f.max_versions = 1;
  d.families.push_back(f);
  return d;
}

value_pool::value_pool(std::uint64_t seed, int length, std::size_t n) {
  rng r(seed ^ 0x9E3779B97F4A7C15ULL);
  values_.resize(n);
  for (auto& v : values_) fill_value(r, v, length);
}

}  // namespace loadgen
