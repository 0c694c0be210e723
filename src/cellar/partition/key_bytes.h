// partition/key_bytes.h: the bytes of a row key or qualifier inside a memtable slot.
//
// The same size as std::string (32 bytes) but holding up to 28 bytes in place where
// libstdc++'s std::string holds 15. Row keys of 16-28 bytes (YCSB's "user" + a 64-bit
// hash, most composite keys) then live inside the B-tree node next to the rest of the
// cell key, so comparing two keys touches no other cache line. A scan or a row read
// compares the row of every cell it passes; with the row on the heap each comparison
// was a cache miss (perf: memcmp was the largest single cost of scans).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace cellar::detail {

class key_bytes {
 public:
  static constexpr std::size_t inline_capacity = 28;

  key_bytes() noexcept : size_(0) {}
  key_bytes(std::string_view s) { assign(s); }  // NOLINT: implicit, like std::string
  key_bytes(const std::string& s) : key_bytes(std::string_view(s)) {}
  key_bytes(const char* s) : key_bytes(std::string_view(s)) {}
  key_bytes(const key_bytes& o) { assign(o.view()); }
  key_bytes(key_bytes&& o) noexcept : size_(o.size_) {
    std::memcpy(&u_, &o.u_, sizeof u_);
    o.size_ = 0;
  }
  key_bytes& operator=(const key_bytes& o) {
    if (this != &o) {
      key_bytes tmp(o);
      swap(tmp);
    }
    return *this;
  }
  key_bytes& operator=(key_bytes&& o) noexcept {
    if (this != &o) {
      release();
      size_ = o.size_;
      std::memcpy(&u_, &o.u_, sizeof u_);
      o.size_ = 0;
    }
    return *this;
  }
  ~key_bytes() { release(); }

  void swap(key_bytes& o) noexcept {
    std::swap(size_, o.size_);
    decltype(u_) t;
    std::memcpy(&t, &u_, sizeof u_);
    std::memcpy(&u_, &o.u_, sizeof u_);
    std::memcpy(&o.u_, &t, sizeof u_);
  }

  const char* data() const noexcept { return size_ <= inline_capacity ? u_.in : u_.out; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::string_view view() const noexcept { return {data(), size_}; }
  operator std::string_view() const noexcept { return view(); }  // NOLINT
  explicit operator std::string() const { return std::string(view()); }

  int compare(std::string_view o) const noexcept { return view().compare(o); }
  int compare(const key_bytes& o) const noexcept { return view().compare(o.view()); }

  friend bool operator==(const key_bytes& a, const key_bytes& b) noexcept { return a.view() == b.view(); }
  friend bool operator==(const key_bytes& a, std::string_view b) noexcept { return a.view() == b; }
  friend bool operator!=(const key_bytes& a, const key_bytes& b) noexcept { return a.view() != b.view(); }
  friend bool operator!=(const key_bytes& a, std::string_view b) noexcept { return a.view() != b; }
  friend bool operator==(const key_bytes& a, const std::string& b) noexcept { return a.view() == std::string_view(b); }
  friend bool operator!=(const key_bytes& a, const std::string& b) noexcept { return a.view() != std::string_view(b); }
  friend bool operator<(const key_bytes& a, std::string_view b) noexcept { return a.view() < b; }

 private:
  void assign(std::string_view s) {
    size_ = static_cast<std::uint32_t>(s.size());
    if (s.size() <= inline_capacity) {
      if (!s.empty()) std::memcpy(u_.in, s.data(), s.size());
    } else {
      u_.out = static_cast<char*>(std::malloc(s.size()));
      if (u_.out == nullptr) throw std::bad_alloc();
      std::memcpy(u_.out, s.data(), s.size());
    }
  }
  void release() noexcept {
    if (size_ > inline_capacity) std::free(u_.out);
    size_ = 0;
  }

  std::uint32_t size_;
  union {
    char in[inline_capacity];
    char* out;
  } u_;
};

}  // namespace cellar::detail
