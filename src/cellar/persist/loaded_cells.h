// persist/loaded_cells.h: a partition's share of a bulk load, a restore or a clone: the
// records of one cell file (docs/backup.md, "Snapshot files"), in key order, with the
// table's family id for each id its keys carry.
//
// The records are not copied on their way to the partition: they stay in the file's
// mapping (or in the one string that holds them) until the partition has taken them into
// its own maps. Thread safety: immutable once built; share it by pointer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/coding.h"

namespace cellar::detail {

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

  // `records` stays valid while `owner` lives (a file mapping, say).
  loaded_cells(std::shared_ptr<const void> owner, std::string_view records, id_map ids, std::uint64_t cells)
      : owner_(std::move(owner)), records_(records), ids_(std::move(ids)), cells_(cells) {}
  // Holds its records itself.
  loaded_cells(std::string records, id_map ids, std::uint64_t cells)
      : own_(std::move(records)), records_(own_), ids_(std::move(ids)), cells_(cells) {}
  loaded_cells(const loaded_cells&) = delete;
  loaded_cells& operator=(const loaded_cells&) = delete;

  std::string_view records() const { return records_; }
  const id_map& ids() const { return ids_; }
  std::uint64_t cells() const { return cells_; }
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
  id_map ids_;
  std::uint64_t cells_ = 0;
};

}  // namespace cellar::detail
