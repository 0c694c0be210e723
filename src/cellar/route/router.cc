#include "route/router.h"

#include <algorithm>

#include "route/murmur.h"

namespace cellar::detail {

std::uint32_t partition_of(const partition_spec& spec, std::string_view row) noexcept {
  using m = partition_spec::method;
  switch (spec.how) {
    case m::none: return 0;
    case m::key: return static_cast<std::uint32_t>(murmur_hash64a(row) % spec.partitions);
    case m::key_prefix:
      return static_cast<std::uint32_t>(murmur_hash64a(row.substr(0, spec.prefix_bytes)) % spec.partitions);
    case m::range: {
      // Partition i holds bounds[i-1] <= row < bounds[i].
      auto it = std::upper_bound(spec.bounds.begin(), spec.bounds.end(), row,
                                 [](std::string_view r, const std::string& b) { return r < b; });
      return static_cast<std::uint32_t>(it - spec.bounds.begin());
    }
  }
  return 0;
}

std::vector<std::uint32_t> partitions_for_range(const partition_spec& spec, std::string_view start,
                                                std::string_view stop) {
  std::vector<std::uint32_t> out;
  using m = partition_spec::method;
  if (spec.how == m::range) {
    std::uint32_t lo = start.empty() ? 0 : partition_of(spec, start);
    std::uint32_t hi = stop.empty() ? spec.count() - 1 : partition_of(spec, stop);
    for (auto p = lo; p <= hi; ++p) out.push_back(p);
    return out;
  }
  if (spec.how == m::key_prefix && start.size() >= spec.prefix_bytes && stop.size() >= spec.prefix_bytes &&
      start.substr(0, spec.prefix_bytes) == stop.substr(0, spec.prefix_bytes)) {
    out.push_back(partition_of(spec, start));
    return out;
  }
  for (std::uint32_t p = 0; p < spec.count(); ++p) out.push_back(p);
  return out;
}

}  // namespace cellar::detail
