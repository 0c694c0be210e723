// util/coding.h: the one coding of integers and sized byte strings in cellar's byte formats.
//
// Two integer layouts, as LevelDB's util/coding.h has them:
//   fixed    u32 / u64 big-endian, so that the byte order of an encoded key is the order
//            of its numbers (cell keys, catalog entries, log record heads);
//   varint   unsigned LEB128: seven bits a byte, least significant group first, the high
//            bit set on every byte but the last (a u64 takes 1 to 10 bytes).
// A sized byte string is a varint length, then the bytes.
//
// Every get_ reads from the front of `in` and advances it past what it read; it returns
// false, leaving `in` unspecified, when the bytes end early or a varint runs past ten
// bytes. Nothing here allocates but the string appended to.
//
// Thread safety: plain functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cellar::detail {

inline void put_u32(std::string& out, std::uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  out.append(b, 4);
}

inline void put_u64(std::string& out, std::uint64_t v) {
  put_u32(out, static_cast<std::uint32_t>(v >> 32));
  put_u32(out, static_cast<std::uint32_t>(v));
}

// The big-endian number in the 4 (8) bytes at p.
inline std::uint32_t load_u32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<std::uint8_t>(p[i]);
  return v;
}

inline std::uint64_t load_u64(const char* p) { return (std::uint64_t{load_u32(p)} << 32) | load_u32(p + 4); }

inline bool get_u32(std::string_view& in, std::uint32_t& v) {
  if (in.size() < 4) return false;
  v = load_u32(in.data());
  in.remove_prefix(4);
  return true;
}

inline bool get_u64(std::string_view& in, std::uint64_t& v) {
  if (in.size() < 8) return false;
  v = load_u64(in.data());
  in.remove_prefix(8);
  return true;
}

inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

inline bool get_varint(std::string_view& in, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto b = static_cast<std::uint8_t>(in.front());
    in.remove_prefix(1);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

inline void put_sized(std::string& out, std::string_view b) {
  put_varint(out, b.size());
  out.append(b);
}

// `b` views the bytes inside the input.
inline bool get_sized(std::string_view& in, std::string_view& b) {
  std::uint64_t n = 0;
  if (!get_varint(in, n) || n > in.size()) return false;
  b = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

}  // namespace cellar::detail
