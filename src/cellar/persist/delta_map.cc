#include "persist/delta_map.h"

#include <bit>
#include <cstring>
#include <utility>

#include "util/coding.h"

namespace cellar::detail {

namespace {

// The first n (at most 8) bytes at p as a big-endian number, zero-padded on the right.
std::uint64_t load_be(const char* p, std::size_t n) {
  if (n >= 8) return load_u64(p);
  char b[8] = {};
  if (n > 0) std::memcpy(b, p, n);  // an empty view may have no data pointer
  return load_u64(b);
}

}  // namespace

delta_key::delta_key(std::string_view b) : bytes(b) {
  if (b.size() >= 16) {
    head[0] = load_be(b.data(), 8);
    head[1] = load_be(b.data() + 8, 8);
  } else if (b.size() > 8) {
    head[0] = load_be(b.data(), 8);
    head[1] = load_be(b.data() + 8, b.size() - 8);
  } else {
    head[0] = load_be(b.data(), b.size());
  }
}

delta_map::delta_map(delta_map&& o) noexcept
    : map_(std::move(o.map_)),
      blocks_(std::move(o.blocks_)),
      cur_(std::exchange(o.cur_, nullptr)),
      left_(std::exchange(o.left_, 0)),
      arena_bytes_(std::exchange(o.arena_bytes_, 0)) {
  o.has_last_ = false;
  o.map_.clear();
  o.blocks_.clear();
}

delta_map& delta_map::operator=(delta_map&& o) noexcept {
  if (this != &o) {
    clear();
    map_ = std::move(o.map_);
    blocks_ = std::move(o.blocks_);
    cur_ = std::exchange(o.cur_, nullptr);
    left_ = std::exchange(o.left_, 0);
    arena_bytes_ = std::exchange(o.arena_bytes_, 0);
    has_last_ = false;  // an iterator into the map moved in is not worth keeping
    o.has_last_ = false;
    o.map_.clear();
    o.blocks_.clear();
  }
  return *this;
}

char* delta_map::allocate(std::size_t n) {
  if (n == 0) return nullptr;
  if (n > block_bytes / 4) {
    // A large value gets a block of its own; the current block keeps serving small ones.
    blocks_.push_back(std::unique_ptr<char[]>(new char[n]));  // not zeroed: every byte is written before read
    arena_bytes_ += n;
    return blocks_.back().get();
  }
  if (n > left_) {
    blocks_.push_back(std::unique_ptr<char[]>(new char[block_bytes]));
    arena_bytes_ += block_bytes;
    cur_ = blocks_.back().get();
    left_ = block_bytes;
  }
  char* p = cur_;
  cur_ += n;
  left_ -= n;
  return p;
}

std::string_view delta_map::copy(std::string_view s) {
  char* p = allocate(s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

delta_map::map_type::iterator delta_map::slot(std::string_view key, bool* added) {
  const delta_key probe(key);
  const delta_key_less less;
  map_type::iterator it;
  if (has_last_ && less(last_->first, probe) && (it = std::next(last_), it == map_.end() || !less(it->first, probe))) {
    // Right after the last entry: `it` is the key's entry or its place.
  } else {
    it = map_.lower_bound(probe);
  }
  *added = it == map_.end() || less(probe, it->first);
  if (*added) {
    delta_key stored = probe;
    stored.bytes = copy(key);
    it = map_.emplace_hint(it, stored, change{});
  }
  last_ = it;
  has_last_ = true;
  return it;
}

void delta_map::set_value(change& c, std::string_view value) {
  if (value.size() > c.capacity) {
    // First value of the key: exactly its size. A later, larger one: twice that, so a
    // growing value moves O(log) times and what it leaves behind stays below what it holds.
    const std::size_t cap = c.capacity == 0 ? value.size() : std::bit_ceil(value.size());
    c.data = allocate(cap);
    c.capacity = static_cast<std::uint32_t>(cap);
  }
  if (!value.empty()) std::memcpy(c.data, value.data(), value.size());
  c.size = static_cast<std::uint32_t>(value.size());
}

void delta_map::put(std::string_view key, std::int64_t expires_at, std::string_view value, bool absent_before) {
  bool added = false;
  change& c = slot(key, &added)->second;
  if (added) c.fresh = absent_before;
  set_value(c, value);
  c.expires_at = expires_at;
  c.present = true;
}

void delta_map::erase(std::string_view key) {
  bool added = false;
  auto it = slot(key, &added);
  if (it->second.fresh) {  // created since the cut and gone again: nothing to write
    map_.erase(it);
    has_last_ = false;
    return;
  }
  change& c = it->second;
  c.size = 0;
  c.expires_at = 0;
  c.present = false;
}

void delta_map::merge_older(const delta_map& older) {
  has_last_ = false;
  for (const auto& [key, old] : older) {
    auto it = map_.lower_bound(key);
    if (it != map_.end() && it->first.bytes == key.bytes) {
      it->second.fresh = false;
      continue;
    }
    change c;
    set_value(c, old.value());
    c.expires_at = old.expires_at;
    c.present = old.present;
    c.fresh = false;
    delta_key stored = key;
    stored.bytes = copy(key.bytes);
    map_.emplace_hint(it, stored, c);
  }
}

void delta_map::apply_newer(const delta_map& newer) {
  for (const auto& [key, c] : newer) {
    if (c.present)
      put(key.bytes, c.expires_at, c.value(), c.fresh);
    else
      erase(key.bytes);
  }
}

void delta_map::forget(std::string_view from, std::string_view to) {
  has_last_ = false;
  map_.erase(map_.lower_bound(delta_key(from)), map_.lower_bound(delta_key(to)));
}

void delta_map::clear() {
  has_last_ = false;
  map_.clear();
  blocks_.clear();
  cur_ = nullptr;
  left_ = 0;
  arena_bytes_ = 0;
}

}  // namespace cellar::detail
