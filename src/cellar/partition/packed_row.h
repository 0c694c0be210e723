// partition/packed_row.h: the cells of a small row packed into one block of bytes, as
// Redis's listpack packs a small hash.
//
// A row of small cells (YCSB's ten 10-byte fields, most OBKV rows) kept in a B-tree costs a
// 48-byte slot per cell, more than the cell's own bytes. Packed, a cell costs its bytes and
// three or four bytes of lengths: in key order (qualifier ascending, timestamp descending),
// each cell is
//   varint qualifier length | qualifier | varint zigzag(ts - base) |
//   varint (value length << 1 | has expiry) | [varint zigzag(expires_at - ts)] | value
// where `base` is the timestamp of the cell that made the block, so the cells of one write
// (one timestamp) spend a byte each on it. Differences wrap modulo 2^64, so every int64
// timestamp and expiry round-trips. A packed row is read and changed in place: a change
// moves the bytes after the cell (a row is small by construction: cell_map::packing).
//
// Thread safety: none; a block belongs to its row.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

#include "cellar/ops.h"

namespace cellar::detail::packed {

inline std::uint32_t varint_size(std::uint64_t v) noexcept {
  std::uint32_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}
inline char* put_varint(char* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}
inline const char* get_varint(const char* p, std::uint64_t* v) noexcept {
  std::uint64_t r = static_cast<unsigned char>(*p++);
  if (r < 0x80) {
    *v = r;
    return p;
  }
  r &= 0x7f;
  for (int shift = 7;; shift += 7) {
    const std::uint64_t b = static_cast<unsigned char>(*p++);
    r |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  *v = r;
  return p;
}
// `a - base` modulo 2^64, zigzagged so that small differences of either sign are small.
inline std::uint64_t delta(std::int64_t a, std::int64_t base) noexcept {
  const auto d = static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(base));
  return (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63);
}
inline std::int64_t undelta(std::uint64_t z, std::int64_t base) noexcept {
  const std::uint64_t d = (z >> 1) ^ (0 - (z & 1));
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(base) + d);
}

// One cell, decoded: views into its block.
struct cell {
  std::string_view q;
  std::int64_t ts = 0;
  std::string_view v;
  std::int64_t expires_at = latest_timestamp;
  std::uint32_t size = 0;  // encoded bytes
};

inline cell decode(const char* p, std::int64_t base) noexcept {
  const char* const start = p;
  cell c;
  std::uint64_t n;
  p = get_varint(p, &n);
  c.q = {p, static_cast<std::size_t>(n)};
  p = get_varint(p + n, &n);
  c.ts = undelta(n, base);
  p = get_varint(p, &n);
  if (n & 1) {
    std::uint64_t e;
    p = get_varint(p, &e);
    c.expires_at = undelta(e, c.ts);
  }
  c.v = {p, static_cast<std::size_t>(n >> 1)};
  c.size = static_cast<std::uint32_t>(p + (n >> 1) - start);
  return c;
}

inline std::uint32_t encoded_size(std::string_view q, std::int64_t ts, std::string_view v, std::int64_t expires_at,
                                  std::int64_t base) noexcept {
  const bool exp = expires_at != latest_timestamp;
  return static_cast<std::uint32_t>(varint_size(q.size()) + q.size() + varint_size(delta(ts, base)) +
                                    varint_size((static_cast<std::uint64_t>(v.size()) << 1) | exp) +
                                    (exp ? varint_size(delta(expires_at, ts)) : 0) + v.size());
}

inline char* encode(char* p, std::string_view q, std::int64_t ts, std::string_view v, std::int64_t expires_at,
                    std::int64_t base) noexcept {
  const bool exp = expires_at != latest_timestamp;
  p = put_varint(p, q.size());
  if (!q.empty()) std::memcpy(p, q.data(), q.size());
  p = put_varint(p + q.size(), delta(ts, base));
  p = put_varint(p, (static_cast<std::uint64_t>(v.size()) << 1) | exp);
  if (exp) p = put_varint(p, delta(expires_at, ts));
  if (!v.empty()) std::memcpy(p, v.data(), v.size());
  return p + v.size();
}

// The block of a packed row: its cells, encoded one after the other in key order, in an
// allocation of `capacity()` bytes, a size jemalloc allocates without waste.
struct block {
  char* data = nullptr;
  std::int64_t base = 0;  // the timestamp the cells' are stored against
  std::uint32_t bytes = 0;
  std::uint16_t count = 0;
  std::uint16_t cap16 = 0;  // capacity / 16

  static constexpr std::uint32_t max_capacity = 0xffff * 16;
  std::uint32_t capacity() const noexcept { return std::uint32_t{cap16} * 16; }
  // The allocation that holds `n` bytes (n <= max_capacity): a multiple of 16 up to 128
  // bytes, then four sizes per doubling, as jemalloc's small size classes.
  static std::uint32_t size_class(std::uint32_t n) noexcept {
    if (n <= 128) return (n + 15) & ~15u;
    std::uint32_t step = 32;
    while (step * 8 < n) step *= 2;
    return (n + step - 1) & ~(step - 1);
  }

  // Makes the allocation hold at least `n` bytes (n <= max_capacity). Throws
  // std::bad_alloc with the block unchanged.
  void reserve(std::uint32_t n) {
    if (n <= capacity()) return;
    const std::uint32_t c = size_class(n);
    auto* p = static_cast<char*>(std::realloc(data, c));
    if (p == nullptr) throw std::bad_alloc();
    data = p;
    cap16 = static_cast<std::uint16_t>(c / 16);
  }
  // Makes bytes [off, off + old_len) `new_len` bytes long, moving what follows; returns
  // where the new bytes go (the caller writes them). The count is the caller's to keep.
  // The block must hold the new size (reserve); a block left at most half full shrinks.
  char* resize_range(std::uint32_t off, std::uint32_t old_len, std::uint32_t new_len) noexcept {
    const std::uint32_t tail = bytes - off - old_len;
    const std::uint32_t size = bytes - old_len + new_len;
    if (new_len != old_len) std::memmove(data + off + new_len, data + off + old_len, tail);
    bytes = size;
    if (size == 0) {
      release();
    } else if (size <= capacity() / 2) {
      const std::uint32_t c = size_class(size);
      if (auto* p = static_cast<char*>(std::realloc(data, c))) {  // should it fail, the larger block serves
        data = p;
        cap16 = static_cast<std::uint16_t>(c / 16);
      }
    }
    return data + off;
  }
  void release() noexcept {
    std::free(data);
    data = nullptr;
    bytes = count = cap16 = 0;
  }
};

}  // namespace cellar::detail::packed
