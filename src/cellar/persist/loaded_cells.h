// persist/loaded_cells.h: a partition's share of a bulk load, a restore or a clone: the
// records of one cell file (docs/backup.md, "Snapshot files"), in key order, with the
// table's family id for each id its keys carry.
//
// The records are not copied on their way to the partition: they stay in the file's
// mapping (or in the one string that holds them) while the partition takes them into its
// own maps, and until a snapshot has written them from there (loaded_layer).
// Thread safety: immutable once built; share it by pointer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "persist/delta_map.h"
#include "util/coding.h"

namespace cellar::detail {

// Appends one record of a cell file: u32 key length, key, i64 expires_at, u32 value length,
// value (all big-endian).
inline void append_cell_record(std::string& out, std::string_view key, std::int64_t expires_at,
                               std::string_view value) {
  put_u32(out, static_cast<std::uint32_t>(key.size()));
  out.append(key);
  put_u64(out, static_cast<std::uint64_t>(expires_at));
  put_u32(out, static_cast<std::uint32_t>(value.size()));
  out.append(value);
}

// Reads the records of a cell file: u32 key length, key, i64 expires_at, u32 value
// length, value (all big-endian).
class cell_record_reader {
 public:
  explicit cell_record_reader(std::string_view records) : in_(records) {}
  // The next record; false at the end or at a malformed record (then failed() is true).
  bool next(std::string_view& key, std::int64_t& expires_at, std::string_view& value) {
    if (in_.empty()) return false;
    std::uint32_t n = 0;
    std::uint64_t e = 0;
    if (!get_u32(in_, n) || in_.size() < n) return fail();
    key = in_.substr(0, n);
    in_.remove_prefix(n);
    if (!get_u64(in_, e) || !get_u32(in_, n) || in_.size() < n) return fail();
    expires_at = static_cast<std::int64_t>(e);
    value = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  bool failed() const { return failed_; }

 private:
  bool fail() {
    failed_ = true;
    return false;
  }
  std::string_view in_;
  bool failed_ = false;
};

class loaded_cells {
 public:
  // (the file's family id, the table's) pairs.
  using id_map = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  // The records of one family of the file: a file is in key order, so they are one stretch.
  struct family_records {
    std::uint32_t file_id;
    std::uint32_t table_id;  // 0: the file's manifest does not name the family
    std::string_view records;
  };

  // `records` stays valid while `owner` lives (a file mapping, say).
  loaded_cells(std::shared_ptr<const void> owner, std::string_view records, id_map ids, std::uint64_t cells)
      : owner_(std::move(owner)), records_(records), ids_(std::move(ids)), cells_(cells) {
    split_families();
  }
  // Holds its records itself.
  loaded_cells(std::string records, id_map ids, std::uint64_t cells)
      : own_(std::move(records)), records_(own_), ids_(std::move(ids)), cells_(cells) {
    split_families();
  }
  loaded_cells(const loaded_cells&) = delete;
  loaded_cells& operator=(const loaded_cells&) = delete;

  std::string_view records() const { return records_; }
  const id_map& ids() const { return ids_; }
  std::uint64_t cells() const { return cells_; }
  // The families of the records, in the order of their table ids (the table's key order);
  // a stretch of malformed records is left out.
  const std::vector<family_records>& families() const { return families_; }
  // The table's id for the file's family id `id`; 0 if the file's manifest did not name it.
  std::uint32_t table_id(std::uint32_t id) const {
    for (const auto& [from, to] : ids_)
      if (from == id) return to;
    return 0;
  }

 private:
  std::string own_;
  std::shared_ptr<const void> owner_;
  std::string_view records_;
  void split_families();

  id_map ids_;
  std::uint64_t cells_ = 0;
  std::vector<family_records> families_;
};

// Calls visit(key, expires_at, value) for every cell of `cells` of a family `keep(table id)`
// accepts, in the table's key order, the key carrying the table's family id; returns the
// first nonzero value `visit` returns (then stops), else 0.
template <class Keep, class Visit>
int visit_cells(const loaded_cells& cells, Keep&& keep, Visit&& visit) {
  std::string key;
  for (const auto& f : cells.families()) {
    if (f.table_id == 0 || !keep(f.table_id)) continue;
    cell_record_reader in(f.records);
    std::string_view k, value;
    std::int64_t expires = 0;
    while (in.next(k, expires, value)) {
      if (f.table_id != f.file_id) {
        key.clear();
        put_u32(key, f.table_id);
        key.append(k.substr(4));
        k = key;
      }
      if (int r = visit(k, expires, value); r != 0) return r;
    }
  }
  return 0;
}

// A bulk load's cells that a memtable took without recording them in its snapshot delta
// (partition/memtable.h: load_cells): a snapshot writes them from their records. The
// changes recorded before the load, which are older than it, come with it.
struct loaded_layer {
  std::shared_ptr<delta_map> before = std::make_shared<delta_map>();
  std::shared_ptr<const loaded_cells> cells;
};

// The changes of `layers` (oldest first) and then of `after`, as one delta: a change wins
// over every older one of its key. Loaded cells count as not fresh (delta_map::change).
delta_map materialize(const std::vector<loaded_layer>& layers, const delta_map& after);

}  // namespace cellar::detail
