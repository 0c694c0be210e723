// persist/loaded_cells.cc: a bulk load's records split by family, and loaded layers made
// into one delta (persist/loaded_cells.h).
#include "persist/loaded_cells.h"

#include <algorithm>

namespace cellar::detail {

void loaded_cells::split_families() {
  cell_record_reader in(records_);
  std::string_view key, value;
  std::int64_t expires = 0;
  const char* begin = records_.data();
  const char* end = begin;  // past the last record read
  std::uint32_t id = 0;
  bool open = false;
  auto close = [&] {
    if (open) families_.push_back({id, table_id(id), std::string_view(begin, static_cast<std::size_t>(end - begin))});
  };
  while (in.next(key, expires, value)) {
    // A key of fewer than 4 bytes has no family: a stretch of its own, under no table id.
    const std::uint32_t k = key.size() >= 4 ? load_u32(key.data()) : 0;
    if (!open || k != id) {
      close();
      // A record starts with its u32 key length, 4 bytes before the key.
      begin = key.data() - 4;
      id = k;
      open = true;
    }
    end = value.data() + value.size();
  }
  close();
  std::stable_sort(families_.begin(), families_.end(),
                   [](const family_records& a, const family_records& b) { return a.table_id < b.table_id; });
}

delta_map materialize(const std::vector<loaded_layer>& layers, const delta_map& after) {
  delta_map out;
  for (const auto& layer : layers) {
    if (layer.before) out.apply_newer(*layer.before);
    if (layer.cells)
      visit_cells(
          *layer.cells, [](std::uint32_t) { return true; },
          [&out](std::string_view key, std::int64_t expires_at, std::string_view value) {
            out.put(key, expires_at, value);
            return 0;
          });
  }
  out.apply_newer(after);
  return out;
}

}  // namespace cellar::detail
