#include "partition/log_stream.h"

#include "persist/codec.h"

namespace cellar::detail {

std::string log_stream::record(memtable& mem, std::uint64_t table_uid, std::uint32_t partition) {
  std::string rec;
  rec.reserve(12 + mem.redo().size());
  put_u64(rec, table_uid);
  put_u32(rec, partition);
  rec += mem.redo();
  mem.clear_redo();
  return rec;
}

}  // namespace cellar::detail
