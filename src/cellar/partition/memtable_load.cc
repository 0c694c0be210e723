// partition/memtable_load.cc: a bulk load's cells into a memtable (memtable.h: load_cells).
#include "partition/memtable.h"
#include "persist/codec.h"

namespace cellar::detail {

void memtable::load_cells(const loaded_cells& cells) {
  // Loaded cells are in the snapshot delta, not the redo: the store takes a snapshot next.
  const bool saved_redo = track_redo_;
  track_redo_ = false;
  cell_record_reader in(cells.records());
  std::string_view key, value;
  std::int64_t expires = 0;
  key_parts k;
  std::string row_scratch, qualifier_scratch, encoded;
  std::uint32_t last_file_id = 0, fid = 0;
  family_map* m = nullptr;
  while (in.next(key, expires, value)) {
    if (!decode_cell_key(key, k, row_scratch, qualifier_scratch)) continue;
    if (k.family != last_file_id || m == nullptr) {
      last_file_id = k.family;
      fid = cells.table_id(k.family);
      m = fid == 0 || dropped(fid) ? nullptr : &ensure(fid);
      if (m == nullptr) continue;
    }
    // The key as the delta records it: the file's, with the table's family id.
    std::string_view as_recorded = key;
    if (fid != k.family) {
      encoded.clear();
      put_u32(encoded, fid);
      encoded.append(key.substr(4));
      as_recorded = encoded;
    }
    write_cell(fid, *m, key_view{k.row, k.qualifier, k.ts}, cell_value{short_bytes(value), expires}, as_recorded);
  }
  track_redo_ = saved_redo;
}

}  // namespace cellar::detail
