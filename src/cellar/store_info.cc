// store_info.cc: store::info, the store-wide figures a status page or metrics endpoint shows.
#include <algorithm>

#include "store_impl.h"

namespace cellar {

store_info store::info() const {
  const auto& s = *impl_;
  store_info out;
  out.directory = s.options.directory;
  out.durability = s.options.durability;
  out.memory_used_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, s.memory.used()));
  out.memory_limit_bytes = s.options.memory_limit_bytes;
  {
    std::lock_guard l(s.info_mutex);
    out.snapshots = s.snapshots_taken;
    out.last_snapshot = s.last_snapshot;
    out.last_snapshot_unix_ms = s.last_snapshot_unix_ms;
  }
  if (s.log) {
    out.log_generation = s.log->generation();
    out.log_records = s.log->records();
    out.log_bytes = s.log->bytes();
    out.log_syncs = s.log->syncs();
  }
  out.recovery = s.recovered;
  if (auto c = s.cluster.load()) out.cluster = c->report();
  return out;
}

}  // namespace cellar
