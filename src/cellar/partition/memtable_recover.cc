// partition/memtable_recover.cc: a snapshot's cells loaded in bulk at recovery (memtable.h:
// bulk_loader).
#include "partition/memtable.h"

namespace cellar::detail {

void memtable::bulk_loader::load(std::uint32_t fid, const key_view& key, std::string_view value,
                                 std::int64_t expires_at) {
  if (map_ == nullptr || fid != fid_) {
    if (map_ != nullptr) charge_ += map_->take_bytes_change();
    map_ = &m_.ensure(fid);
    fid_ = fid;
  }
  cell_value v{short_bytes(value), expires_at};
  if (map_->append(key, v)) {
    ++cells_;
    return;
  }
  // As memtable::load: the cell is set, replacing any cell of the same key.
  auto [it, inserted] = map_->try_emplace(key);
  if (inserted) ++cells_;
  map_->assign(it, std::move(v));
}

void memtable::bulk_loader::flush() {
  if (map_ != nullptr) charge_ += map_->take_bytes_change();
  if (charge_ != 0) m_.account(charge_);
  m_.cells_ += cells_;
  charge_ = 0;
  cells_ = 0;
}

}  // namespace cellar::detail
