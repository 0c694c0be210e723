// partition/memtable_load.cc: a bulk load's cells into a memtable (memtable.h: load_cells).
#include <optional>

#include "partition/memtable.h"
#include "persist/codec.h"

namespace cellar::detail {

void memtable::load_cells(std::shared_ptr<const loaded_cells> cells) {
  if (!cells) return;
  // Loaded cells are in no redo: the store takes a snapshot next. Nor are they copied into
  // the snapshot delta: the layer recorded here stands for them, before a cell is written.
  const bool saved_redo = track_redo_, saved_delta = track_delta_;
  if (saved_delta) {
    loaded_.push_back({std::make_shared<delta_map>(std::move(delta_)), cells});
    delta_ = delta_map();
  }
  track_redo_ = false;
  track_delta_ = false;
  struct restore {
    memtable* m;
    bool redo, delta;
    ~restore() {
      m->track_redo_ = redo;
      m->track_delta_ = delta;
    }
  } restore_tracking{this, saved_redo, saved_delta};
  cell_record_reader in(cells->records());
  std::string_view key, value;
  std::int64_t expires = 0;
  key_parts k;
  std::string row_scratch, qualifier_scratch, encoded;
  std::uint32_t last_file_id = 0, fid = 0;
  family_map* m = nullptr;
  family_map::row_hint hint;  // the cells of a row come one after the other
  // With no move to record the cells and no unit to undo them, each is set as recovery
  // sets a snapshot's: appended without a search while it sorts after its family's last
  // cell (a load into an empty partition), charged to the account once at the end.
  std::optional<bulk_loader> loader;
  if (move_delta_ == nullptr && !in_unit_) loader.emplace(*this);
  while (in.next(key, expires, value)) {
    if (!decode_cell_key(key, k, row_scratch, qualifier_scratch)) continue;
    if (k.family != last_file_id || m == nullptr) {
      last_file_id = k.family;
      fid = cells->table_id(k.family);
      m = fid == 0 || dropped(fid) ? nullptr : &ensure(fid);
      hint = {};
      if (m == nullptr) continue;
    }
    if (loader) {
      loader->load(fid, key_view{k.row, k.qualifier, k.ts}, value, expires);
      continue;
    }
    // The key as a move delta records it: the file's, with the table's family id.
    std::string_view as_recorded = key;
    if (fid != k.family && move_delta_) {
      encoded.clear();
      put_u32(encoded, fid);
      encoded.append(key.substr(4));
      as_recorded = encoded;
    }
    write_cell(fid, *m, key_view{k.row, k.qualifier, k.ts}, cell_value{short_bytes(value), expires}, as_recorded,
               &hint);
  }
}

}  // namespace cellar::detail
