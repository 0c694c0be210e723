#include "persist/codec.h"

#include <wiredtiger.h>

#include <array>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace cellar::detail {

namespace {

void put_escaped(std::string& out, std::string_view b) {
  // Whole stretches between zero bytes at a time: most rows and qualifiers have none.
  for (;;) {
    const void* z = std::memchr(b.data(), 0, b.size());
    if (z == nullptr) break;
    const std::size_t n = static_cast<const char*>(z) - b.data();
    out.append(b.data(), n);
    out.append("\0\xff", 2);
    b.remove_prefix(n + 1);
  }
  out.append(b);
  out.append("\0\x01", 2);
}

// The escaped field at the front of `in`: its unescaped bytes in `field` (a view into `in`
// when it holds no escaped zero, else into `scratch`); `in` left after its terminator.
bool take_escaped(std::string_view& in, std::string_view& field, std::string& scratch) {
  const void* z = std::memchr(in.data(), 0, in.size());
  if (z == nullptr) return false;
  std::size_t i = static_cast<const char*>(z) - in.data();
  if (i + 1 >= in.size()) return false;
  if (in[i + 1] == '\x01') {
    field = in.substr(0, i);
    in.remove_prefix(i + 2);
    return true;
  }
  scratch.clear();
  std::size_t from = 0;
  for (;;) {
    if (i + 1 >= in.size()) return false;
    if (in[i + 1] == '\x01') {
      scratch.append(in.data() + from, i - from);
      field = scratch;
      in.remove_prefix(i + 2);
      return true;
    }
    if (in[i + 1] != '\xff') return false;
    scratch.append(in.data() + from, i - from);
    scratch.push_back('\0');
    from = i + 2;
    z = std::memchr(in.data() + from, 0, in.size() - from);
    if (z == nullptr) return false;
    i = static_cast<const char*>(z) - in.data();
  }
}

bool get_escaped(std::string_view& in, std::string& out) {
  std::string scratch;
  std::string_view field;
  if (!take_escaped(in, field, scratch)) return false;
  out.append(field);
  return true;
}

}  // namespace

void put_bytes(std::string& out, std::string_view b) {
  put_u32(out, static_cast<std::uint32_t>(b.size()));
  out.append(b);
}

void put_string_map(std::string& out, const std::map<std::string, std::string>& m) {
  put_u32(out, static_cast<std::uint32_t>(m.size()));
  for (const auto& [k, v] : m) {
    put_bytes(out, k);
    put_bytes(out, v);
  }
}

bool reader::string_map(std::map<std::string, std::string>& m) {
  std::uint32_t n = 0;
  if (!u32(n)) return false;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string k, v;
    if (!bytes(k) || !bytes(v) || !m.emplace(std::move(k), std::move(v)).second) return false;
  }
  return true;
}

void encode_cell_key_row(std::string& out, std::uint32_t family, std::string_view row) {
  put_u32(out, family);
  put_escaped(out, row);
}

void encode_cell_key_qualifier(std::string& out, std::string_view qualifier) { put_escaped(out, qualifier); }

void encode_cell_key_ts(std::string& out, std::int64_t ts) {
  put_u64(out, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() - ts));
}

void encode_cell_key(std::string& out, std::uint32_t family, std::string_view row, std::string_view qualifier,
                     std::int64_t ts) {
  encode_cell_key_row(out, family, row);
  encode_cell_key_qualifier(out, qualifier);
  encode_cell_key_ts(out, ts);
}

std::string encode_cell_key(std::uint32_t family, std::string_view row, std::string_view qualifier, std::int64_t ts) {
  std::string out;
  out.reserve(4 + row.size() + qualifier.size() + 14);
  encode_cell_key(out, family, row, qualifier, ts);
  return out;
}

std::optional<decoded_key> decode_cell_key(std::string_view in) {
  decoded_key k;
  reader r(in);
  if (!r.u32(k.family)) return std::nullopt;
  in = r.rest();
  if (!get_escaped(in, k.row) || !get_escaped(in, k.qualifier)) return std::nullopt;
  reader t(in);
  std::uint64_t inv;
  if (!t.u64(inv) || !t.done()) return std::nullopt;
  if (inv > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  k.ts = std::numeric_limits<std::int64_t>::max() - static_cast<std::int64_t>(inv);
  return k;
}

bool decode_cell_key(std::string_view in, key_parts& out, std::string& row_scratch, std::string& qualifier_scratch) {
  if (!get_u32(in, out.family)) return false;
  if (!take_escaped(in, out.row, row_scratch) || !take_escaped(in, out.qualifier, qualifier_scratch)) return false;
  if (in.size() != 8) return false;
  std::uint64_t inv = 0;
  if (!get_u64(in, inv)) return false;
  if (inv > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
  out.ts = std::numeric_limits<std::int64_t>::max() - static_cast<std::int64_t>(inv);
  return true;
}

std::string family_prefix(std::uint32_t family) {
  std::string out;
  put_u32(out, family);
  return out;
}

bool reader::u8(std::uint8_t& v) {
  if (in_.empty()) return false;
  v = static_cast<std::uint8_t>(in_[0]);
  in_.remove_prefix(1);
  return true;
}

bool reader::u32(std::uint32_t& v) { return get_u32(in_, v); }

bool reader::u64(std::uint64_t& v) { return get_u64(in_, v); }

bool reader::i64(std::int64_t& v) {
  std::uint64_t u;
  if (!u64(u)) return false;
  v = static_cast<std::int64_t>(u);
  return true;
}

bool reader::bytes_view(std::string_view& v) {
  std::uint32_t n;
  if (!u32(n) || in_.size() < n) return false;
  v = in_.substr(0, n);
  in_.remove_prefix(n);
  return true;
}

bool reader::bytes(std::string& v) {
  std::string_view s;
  if (!bytes_view(s)) return false;
  v.assign(s);
  return true;
}

std::uint32_t crc32c(std::string_view data) {
  // Resolved once: WiredTiger picks the SSE4.2 / ARMv8 CRC instruction when the CPU has
  // it, else its own software table (the same function its page checksums use).
  static const auto fn = wiredtiger_crc32c_func();
  return fn(data.data(), data.size());
}

namespace {

// Reflected CRC-32C, one byte at a time from a table: where the CPU has no CRC instruction.
std::uint32_t crc32c_table(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  while (n-- > 0) crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  std::uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; --n) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}
#endif

}  // namespace

std::uint32_t crc32c_extend(std::uint32_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  crc = ~crc;
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return ~crc32c_sse42(crc, p, data.size());
#endif
  return ~crc32c_table(crc, p, data.size());
}

}  // namespace cellar::detail
