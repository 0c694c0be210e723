// partition/key_bytes.h: the bytes of a row key, qualifier or value inside a memtable slot.
//
// basic_key_bytes<N> holds up to N bytes in place and longer ones on the heap (a pointer
// kept in the same bytes), in N + 4 bytes with 4-byte alignment:
//   - key_bytes (N = 28): the size of std::string (32 bytes) but holding up to 28 bytes in
//     place where libstdc++'s std::string holds 15. Row keys of 16-28 bytes (YCSB's "user"
//     + a 64-bit hash, most composite keys) then live next to the rest of the cell key, so
//     comparing two keys touches no other cache line. A scan or a row read compares the
//     row of every cell it passes; with the row on the heap each comparison would be a
//     cache miss.
//   - short_bytes (N = 12): 16 bytes, for a cell's qualifier and value in a row's B-tree
//     slot (cell_map::row_cells). Qualifiers are mostly short, and a value of 12 bytes or
//     less needs no allocation of its own; a longer one costs its heap block, as a
//     std::string's does, with 16 bytes in the slot instead of 32, which keeps a row's
//     cells small.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace cellar::detail {

template <std::size_t N>
class basic_key_bytes {
  static_assert(N >= sizeof(char*), "the in-place bytes hold the heap pointer of a longer key");

 public:
  static constexpr std::size_t inline_capacity = N;

  basic_key_bytes() noexcept : size_(0) {}
  basic_key_bytes(std::string_view s) { assign(s); }  // NOLINT: implicit, like std::string
  basic_key_bytes(const std::string& s) : basic_key_bytes(std::string_view(s)) {}
  basic_key_bytes(const char* s) : basic_key_bytes(std::string_view(s)) {}
  basic_key_bytes(const basic_key_bytes& o) { assign(o.view()); }
  basic_key_bytes(basic_key_bytes&& o) noexcept : size_(o.size_) {
    std::memcpy(buf_, o.buf_, N);
    o.size_ = 0;
  }
  basic_key_bytes& operator=(const basic_key_bytes& o) {
    if (this != &o) {
      basic_key_bytes tmp(o);
      swap(tmp);
    }
    return *this;
  }
  basic_key_bytes& operator=(basic_key_bytes&& o) noexcept {
    if (this != &o) {
      release();
      size_ = o.size_;
      std::memcpy(buf_, o.buf_, N);
      o.size_ = 0;
    }
    return *this;
  }
  ~basic_key_bytes() { release(); }

  // Takes o's bytes, as a move assignment does, except that when both hold the same number
  // of bytes on the heap, o's are copied into this one's block, which stays where it is:
  // a cell overwritten with a value of its own size keeps its place in memory (the values
  // of a row loaded together stay together; a read of the row does not chase new blocks).
  // o is left empty either way.
  void take(basic_key_bytes&& o) noexcept {
    if (size_ == o.size_ && size_ > N && this != &o) {
      std::memcpy(out(), o.out(), size_);
      o.release();
      return;
    }
    *this = std::move(o);
  }

  void swap(basic_key_bytes& o) noexcept {
    std::swap(size_, o.size_);
    char t[N];
    std::memcpy(t, buf_, N);
    std::memcpy(buf_, o.buf_, N);
    std::memcpy(o.buf_, t, N);
  }

  const char* data() const noexcept { return size_ <= N ? buf_ : out(); }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::string_view view() const noexcept { return {data(), size_}; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT
  explicit operator std::string() const { return std::string(view()); }

  int compare(std::string_view o) const noexcept { return view().compare(o); }
  int compare(const basic_key_bytes& o) const noexcept { return view().compare(o.view()); }

  friend bool operator==(const basic_key_bytes& a, const basic_key_bytes& b) noexcept { return a.view() == b.view(); }
  friend bool operator==(const basic_key_bytes& a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator!=(const basic_key_bytes& a, const basic_key_bytes& b) noexcept { return a.view() != b.view(); }
  friend bool operator!=(const basic_key_bytes& a, std::string_view b) noexcept { return a.view() != b; }
  friend bool operator==(const basic_key_bytes& a, const std::string& b) noexcept {
    return a.view() == std::string_view(b);
  }
  friend bool operator!=(const basic_key_bytes& a, const std::string& b) noexcept {
    return a.view() != std::string_view(b);
  }
  friend bool operator<(const basic_key_bytes& a, std::string_view b) noexcept { return a.view() < b; }

 private:
  char* out() const noexcept {
    char* p;
    std::memcpy(&p, buf_, sizeof p);
    return p;
  }
  void assign(std::string_view s) {
    if (s.size() <= N) {
      if (!s.empty()) std::memcpy(buf_, s.data(), s.size());
    } else {
      char* p = static_cast<char*>(std::malloc(s.size()));
      if (p == nullptr) throw std::bad_alloc();
      std::memcpy(p, s.data(), s.size());
      std::memcpy(buf_, &p, sizeof p);
    }
    size_ = static_cast<std::uint32_t>(s.size());
  }
  void release() noexcept {
    if (size_ > N) std::free(out());
    size_ = 0;
  }

  std::uint32_t size_;
  char buf_[N];  // the bytes, or (size_ > N) a pointer to them
};

using key_bytes = basic_key_bytes<28>;
using short_bytes = basic_key_bytes<12>;
static_assert(sizeof(key_bytes) == 32);
static_assert(sizeof(short_bytes) == 16);

}  // namespace cellar::detail
