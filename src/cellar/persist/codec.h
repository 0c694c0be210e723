// persist/codec.h: byte layouts shared by the WiredTiger tables and the redo log.
//
// Cell key (order-preserving: byte order of encoded keys == cellar's cell order within a
// family, so WiredTiger stores each partition in the memtable's order):
//   family id   u32 big-endian
//   row         bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01
//   qualifier   same escaping and terminator
//   timestamp   u64 big-endian of (INT64_MAX - ts), so newer versions sort first
// Cell value: expires_at i64 big-endian (INT64_MAX = no cell TTL), then the value bytes.
//
// The full format, with the catalog and log layouts, is written down in docs/storage.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "util/coding.h"

namespace cellar::detail {

struct decoded_key {
  std::uint32_t family;
  std::string row;
  std::string qualifier;
  std::int64_t ts;
};

void encode_cell_key(std::string& out, std::uint32_t family, std::string_view row, std::string_view qualifier,
                     std::int64_t ts);
std::string encode_cell_key(std::uint32_t family, std::string_view row, std::string_view qualifier, std::int64_t ts);
// encode_cell_key in three parts, for many keys of one row: the family and the row, the
// escaped qualifier (which a caller may keep and append as it is), the timestamp.
void encode_cell_key_row(std::string& out, std::uint32_t family, std::string_view row);
void encode_cell_key_qualifier(std::string& out, std::string_view qualifier);
void encode_cell_key_ts(std::string& out, std::int64_t ts);
// nullopt if the bytes are not a well-formed key.
std::optional<decoded_key> decode_cell_key(std::string_view in);
// A key's parts as views: into `in`, or into a scratch string for a row or qualifier that
// holds an escaped zero byte (valid until that scratch changes). false if malformed.
struct key_parts {
  std::uint32_t family = 0;
  std::string_view row;
  std::string_view qualifier;
  std::int64_t ts = 0;
};
bool decode_cell_key(std::string_view in, key_parts& out, std::string& row_scratch, std::string& qualifier_scratch);
// First key of a family / first key past it (for range deletes).
std::string family_prefix(std::uint32_t family);

void put_bytes(std::string& out, std::string_view b);  // u32 length + bytes
// u32 count, then each (name, value) as put_bytes, in name order.
void put_string_map(std::string& out, const std::map<std::string, std::string>& m);

// Reads fixed-width big-endian integers and length-prefixed bytes; every read reports
// failure instead of running past the end.
class reader {
 public:
  explicit reader(std::string_view in) : in_(in) {}
  bool u8(std::uint8_t& v);
  bool u32(std::uint32_t& v);
  bool u64(std::uint64_t& v);
  bool i64(std::int64_t& v);
  bool bytes(std::string& v);
  bool bytes_view(std::string_view& v);
  // What put_string_map wrote, added to `m`; false also when a name repeats.
  bool string_map(std::map<std::string, std::string>& m);
  bool done() const { return in_.empty(); }
  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

// CRC-32C (Castagnoli; the iSCSI / ext4 / LevelDB checksum: reflected polynomial
// 0x82F63B78, initial value and final XOR 0xFFFFFFFF), computed by WiredTiger's
// wiredtiger_crc32c_func(), hardware-accelerated where the CPU can. The redo log's
// record checksums are this function (docs/storage.md).
std::uint32_t crc32c(std::string_view data);
// The CRC-32C of the bytes whose CRC-32C is `crc` followed by `data`: crc32c(a + b) ==
// crc32c_extend(crc32c(a), b), and crc32c_extend(0, b) == crc32c(b). For a checksum over
// pieces that are not contiguous in memory, without copying them together.
std::uint32_t crc32c_extend(std::uint32_t crc, std::string_view data);

}  // namespace cellar::detail
