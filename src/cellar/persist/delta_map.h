// The changes of one partition since its last snapshot cut: encoded cell key
// (persist/codec.h) -> the cell's state now (its value and expiry, or erased). A snapshot
// writes exactly these to WiredTiger, in key order.
//
// Keys and values are copied into an arena of large blocks owned by the map, not into a
// heap block each. A snapshot reads every byte of a cut delta once and then frees it; with
// a heap block per key and per value, that would be a scattered block touched per change
// while encoding runs and a free() per change afterwards, a large share of a snapshot's
// time. Freeing the arena is a few dozen free()s.
//
// An overwrite whose value fits in the bytes the key already holds reuses them (YCSB's
// updates, same-size counters); a larger one takes a new slice of twice the size needed, so
// the bytes a key leaves behind never exceed what it holds now. They are reclaimed when the
// delta is cut and freed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "util/sized_btree.h"

namespace cellar::detail {

// A key of the map: its bytes (in the arena) and its first 16 bytes as two big-endian
// words, zero-padded. Comparing the words first settles most comparisons of a lookup
// without touching the arena: with the bytes alone every comparison would be a memcmp on a
// cache line of its own, the dominant cost of a lookup in a large delta.
struct delta_key {
  std::uint64_t head[2] = {0, 0};
  std::string_view bytes;

  delta_key() = default;
  explicit delta_key(std::string_view b);
  operator std::string_view() const { return bytes; }  // NOLINT: a key reads as its bytes
  friend bool operator==(const delta_key& a, std::string_view b) { return a.bytes == b; }
};

// The bytes' lexicographic order, as std::string_view's.
struct delta_key_less {
  bool operator()(const delta_key& a, const delta_key& b) const {
    if (a.head[0] != b.head[0]) return a.head[0] < b.head[0];
    if (a.head[1] != b.head[1]) return a.head[1] < b.head[1];
    // The first 16 bytes agree (a shorter key reads as zero-padded): the rest decides,
    // then the length (of two keys equal but for padding, the shorter comes first).
    const std::string_view ra = a.bytes.size() > 16 ? a.bytes.substr(16) : std::string_view{};
    const std::string_view rb = b.bytes.size() > 16 ? b.bytes.substr(16) : std::string_view{};
    if (const int c = ra.compare(rb); c != 0) return c < 0;
    return a.bytes.size() < b.bytes.size();
  }
};

class delta_map {
 public:
  // The state of one changed cell. present == false: erased.
  struct change {
    char* data = nullptr;  // the value's bytes, in the arena
    std::uint32_t size = 0;
    std::uint32_t capacity = 0;  // bytes at data this key may reuse
    std::int64_t expires_at = 0;
    bool present = false;
    // Added by a put of a cell the memtable did not hold: the key was absent at the last
    // cut, so the store's files do not have it, and erasing it again leaves nothing to
    // record (the entry goes; no tombstone). A key whose files' state is not known for
    // sure is never fresh (rollbacks, older cuts merged back).
    bool fresh = false;
    std::string_view value() const { return {data, size}; }
  };

  // absl::btree_map with 2 KB nodes (util/sized_btree.h): a slot is 64 bytes, so
  // absl's default 256-byte node would hold 3.
  using map_type = sized_btree_map<delta_key, change, delta_key_less, 2048>;
  using const_iterator = map_type::const_iterator;

  delta_map() = default;
  // A moved-from map is empty and allocates its own blocks again.
  delta_map(delta_map&& o) noexcept;
  delta_map& operator=(delta_map&& o) noexcept;
  delta_map(const delta_map&) = delete;
  delta_map& operator=(const delta_map&) = delete;

  // The cell at `key` now holds `value` (expiring at `expires_at`).
  // `absent_before`: the memtable did not hold the cell (see change::fresh).
  void put(std::string_view key, std::int64_t expires_at, std::string_view value, bool absent_before = false);
  // The cell at `key` is now gone: a tombstone, or no entry if the key was fresh.
  void erase(std::string_view key);
  // Adds the changes of `older` (an earlier cut handed back) for keys this map has none for:
  // a change recorded here is newer. Keys of both are no longer fresh here (the files may
  // hold what `older` did not get to write).
  void merge_older(const delta_map& older);
  // Applies the changes of `newer` (recorded after this map's) on top, in order: a put
  // replaces, an erase erases (delta_map::erase). A key new here keeps newer's freshness.
  void apply_newer(const delta_map& newer);
  // Drops the changes of the keys in [from, to).
  void forget(std::string_view from, std::string_view to);
  void clear();

  bool empty() const { return map_.empty(); }
  std::size_t size() const { return map_.size(); }
  const_iterator begin() const { return map_.begin(); }
  const_iterator end() const { return map_.end(); }
  const_iterator lower_bound(std::string_view key) const { return map_.lower_bound(delta_key(key)); }
  // Bytes of arena blocks held (keys, values and what overwrites left behind).
  std::size_t arena_bytes() const { return arena_bytes_; }

 private:
  static constexpr std::size_t block_bytes = 64 * 1024;

  char* allocate(std::size_t n);
  std::string_view copy(std::string_view s);
  // The key's entry, added (empty) if it has none; *added says which.
  map_type::iterator slot(std::string_view key, bool* added);
  void set_value(change& c, std::string_view value);

  map_type map_;
  // The entry slot() returned last, valid while has_last_ (any other change of map_ clears
  // it): a key that goes right after it is placed without a descent from the root. An
  // update writes a column's new version, then erases the old one, which sorts right
  // after it (timestamps descend).
  map_type::iterator last_;
  bool has_last_ = false;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cur_ = nullptr;  // free bytes of the current block
  std::size_t left_ = 0;
  std::size_t arena_bytes_ = 0;
};

}  // namespace cellar::detail
