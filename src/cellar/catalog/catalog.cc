#include "catalog/catalog.h"

#include <algorithm>
#include <cstring>

#include "cellar/names.h"
#include "persist/codec.h"

namespace cellar::detail {

const family_schema* table_schema::find(std::string_view family) const {
  // Most tables have a few families: a scan that compares lengths first costs one memcmp
  // (every put and delete names its families, and is checked then applied by name).
  if (families.size() <= 8) {
    for (const auto& f : families)
      if (f.desc.name.size() == family.size() && std::memcmp(f.desc.name.data(), family.data(), family.size()) == 0)
        return &f;
    return nullptr;
  }
  auto it = std::lower_bound(families.begin(), families.end(), family,
                             [](const family_schema& f, std::string_view n) { return f.desc.name < n; });
  if (it == families.end() || it->desc.name != family) return nullptr;
  return &*it;
}

table_descriptor table_schema::descriptor() const {
  table_descriptor d;
  d.name = name;
  d.partitioning = partitioning;
  d.attributes = attributes;
  for (const auto& f : families) d.families.push_back(f.desc);
  return d;
}

status check_name(std::string_view what, std::string_view name) {
  if (name.empty() || name.size() > 128)
    return {code::invalid_argument, std::string(what) + " name must be 1 to 128 bytes"};
  for (unsigned char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok)
      return {code::invalid_argument,
              std::string(what) + " name '" + std::string(name) + "' may only hold letters, digits, '_', '-' and '.'"};
  }
  return status::ok();
}

status check_table_name(std::string_view name) { return parse_table_name(name).error(); }

status check_family(const family_descriptor& f) {
  if (auto s = check_name("family", f.name); !s) return s;
  if (f.ttl_seconds < 0) return {code::invalid_argument, "TimeToLive must be a positive number of seconds"};
  if (f.max_value_bytes == 0 || f.max_value_bytes > longblob_value_bytes)
    return {code::invalid_argument, "value size must be 1 byte to 512 MiB"};
  // HBase's TableDescriptorChecker, with its words.
  if (f.max_versions != 0 && f.min_versions > f.max_versions)
    return {code::invalid_argument,
            "Min versions for column family " + f.name + " must be less than the Max versions."};
  if (f.min_versions > 0 && f.kind == family_kind::time_series)
    return {code::unsupported,
            "MIN_VERSIONS is not supported for the time-series family " + f.name + " (OBKV refuses it, TS5)"};
  return status::ok();
}

status check_family_drop(const table_schema& t, std::string_view family, schema_origin origin) {
  if (origin == schema_origin::hbase_shell && t.families.size() == 1 && t.families[0].desc.name == family)
    return {code::invalid_argument,
            "Family '" + std::string(family) + "' is the only column family in the table, so it cannot be deleted"};
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
      if (p.partitions > max_partitions) return {code::invalid_argument, "too many range partitions"};
      for (std::size_t i = 0; i < p.bounds.size(); ++i) {
        if (p.bounds[i].empty()) return {code::invalid_argument, "a range bound must not be empty"};
        if (i > 0 && !(p.bounds[i - 1] < p.bounds[i]))
          return {code::invalid_argument, "range bounds must be strictly increasing"};
      }
      return status::ok();
  }
  return {code::invalid_argument, "unknown partitioning method"};
}

namespace {
// 1: as 2 without the trailing flags byte (read as enabled). 2: adds `u8 flags`.
// 3: adds, after the flags, the table's attributes, then per family (in the order of the
// families) `u32 min_versions` and its attributes; attributes are `u32 n` then n pairs of
// bytes (name, value) in name order.
constexpr std::uint32_t schema_format = 3;
constexpr std::uint8_t flag_disabled = 1;

}  // namespace

std::string encode_schema(const table_schema& t) {
  std::string out;
  put_u32(out, schema_format);
  put_bytes(out, t.name);
  put_u64(out, t.uid);
  out.push_back(t.partitioned ? '\1' : '\0');
  out.push_back(static_cast<char>(t.partitioning.how));
  put_u32(out, t.partitioning.partitions);
  put_u32(out, t.partitioning.prefix_bytes);
  put_u32(out, static_cast<std::uint32_t>(t.partitioning.bounds.size()));
  for (const auto& b : t.partitioning.bounds) put_bytes(out, b);
  put_u32(out, static_cast<std::uint32_t>(t.families.size()));
  for (const auto& f : t.families) {
    put_bytes(out, f.desc.name);
    put_u32(out, f.id);
    put_u32(out, f.desc.max_versions);
    put_u64(out, static_cast<std::uint64_t>(f.desc.ttl_seconds));
    put_u64(out, f.desc.max_value_bytes);
    out.push_back(static_cast<char>(f.desc.kind));
  }
  out.push_back(static_cast<char>(t.disabled ? flag_disabled : 0));
  put_string_map(out, t.attributes);
  for (const auto& f : t.families) {
    put_u32(out, f.desc.min_versions);
    put_string_map(out, f.desc.attributes);
  }
  return out;
}

result<table_schema> decode_schema(std::string_view bytes) {
  reader r(bytes);
  table_schema t;
  std::uint32_t format = 0, nbounds = 0, nfam = 0;
  std::uint8_t partitioned = 0, how = 0;
  const status bad{code::corruption, "malformed catalog entry"};
  if (!r.u32(format) || format < 1 || format > schema_format) return bad;
  if (!r.bytes(t.name) || !r.u64(t.uid) || !r.u8(partitioned) || !r.u8(how)) return bad;
  if (how > static_cast<std::uint8_t>(partition_spec::method::range)) return bad;
  t.partitioned = partitioned != 0;
  t.partitioning.how = static_cast<partition_spec::method>(how);
  if (!r.u32(t.partitioning.partitions) || !r.u32(t.partitioning.prefix_bytes) || !r.u32(nbounds)) return bad;
  for (std::uint32_t i = 0; i < nbounds; ++i) {
    std::string b;
    if (!r.bytes(b)) return bad;
    t.partitioning.bounds.push_back(std::move(b));
  }
  if (!r.u32(nfam)) return bad;
  for (std::uint32_t i = 0; i < nfam; ++i) {
    family_schema f;
    std::uint64_t ttl = 0, maxv = 0;
    std::uint8_t kind = 0;
    if (!r.bytes(f.desc.name) || !r.u32(f.id) || !r.u32(f.desc.max_versions) || !r.u64(ttl) || !r.u64(maxv) ||
        !r.u8(kind) || kind > 1)
      return bad;
    f.desc.ttl_seconds = static_cast<std::int64_t>(ttl);
    f.desc.max_value_bytes = maxv;
    f.desc.kind = static_cast<family_kind>(kind);
    t.families.push_back(std::move(f));
  }
  if (format >= 2) {
    std::uint8_t flags = 0;
    if (!r.u8(flags) || (flags & ~flag_disabled) != 0) return bad;
    t.disabled = (flags & flag_disabled) != 0;
  }
  if (format >= 3) {
    if (!r.string_map(t.attributes)) return bad;
    for (auto& f : t.families)
      if (!r.u32(f.desc.min_versions) || !r.string_map(f.desc.attributes)) return bad;
  }
  if (!r.done()) return bad;
  if (t.partitioned && !check_partitioning(t.partitioning)) return bad;
  // What DDL would never have written: a bad name, a family find() cannot see (families
  // are kept sorted by name, each name once), a family check_family refuses.
  if (!check_table_name(t.name)) return bad;
  for (std::size_t i = 0; i < t.families.size(); ++i) {
    if (!check_family(t.families[i].desc)) return bad;
    if (i > 0 && !(t.families[i - 1].desc.name < t.families[i].desc.name)) return bad;
  }
  return t;
}

}  // namespace cellar::detail
