// The changes of one partition since its last snapshot cut: encoded cell key
// (persist/codec.h) -> the cell's state now (its value and expiry, or erased). A snapshot
// writes exactly these to WiredTiger, in key order.
//
// Keys and values are copied into an arena of large blocks owned by the map, not into a
// heap block each. A snapshot reads every byte of a cut delta once and then frees it; with
// a heap block per key and per value, on a 1M-cell store that was, per 250k-cell partition,
// ~26 ms of touching scattered blocks while encoding runs and ~26 ms of free() (of ~108 ms
// in all; docs/benchmarks.md, fourth session). Freeing the arena is a few dozen free()s.
//
// An overwrite whose value fits in the bytes the key already holds reuses them (YCSB's
// updates, same-size counters); a larger one takes a new slice of twice the size needed, so
// the bytes a key leaves behind never exceed what it holds now. They are reclaimed when the
// delta is cut and freed.
#pragma once

#include <absl/container/btree_map.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace cellar::detail {

class delta_map {
 public:
  // The state of one changed cell. present == false: erased.
  struct change {
    char* data = nullptr;  // the value's bytes, in the arena
    std::uint32_t size = 0;
    std::uint32_t capacity = 0;  // bytes at data this key may reuse
    std::int64_t expires_at = 0;
    bool present = false;
    std::string_view value() const { return {data, size}; }
  };

  // absl::btree_map with 2 KB nodes (as family_map): a slot is 56 bytes, so absl's default
  // 256-byte node would hold 4.
  using map_type = absl::container_internal::btree_map_container<
      absl::container_internal::btree<absl::container_internal::map_params<
          std::string_view, change, std::less<>, std::allocator<std::pair<const std::string_view, change>>, 2048,
          /*IsMulti=*/false>>>;
  using const_iterator = map_type::const_iterator;

  delta_map() = default;
  // A moved-from map is empty and allocates its own blocks again.
  delta_map(delta_map&& o) noexcept;
  delta_map& operator=(delta_map&& o) noexcept;
  delta_map(const delta_map&) = delete;
  delta_map& operator=(const delta_map&) = delete;

  // The cell at `key` now holds `value` (expiring at `expires_at`).
  void put(std::string_view key, std::int64_t expires_at, std::string_view value);
  // The cell at `key` is now gone.
  void erase(std::string_view key);
  // Adds the changes of `older` (an earlier cut handed back) for keys this map has none for:
  // a change recorded here is newer.
  void merge_older(const delta_map& older);
  // Drops the changes of the keys in [from, to).
  void forget(std::string_view from, std::string_view to);
  void clear();

  bool empty() const { return map_.empty(); }
  std::size_t size() const { return map_.size(); }
  const_iterator begin() const { return map_.begin(); }
  const_iterator end() const { return map_.end(); }
  const_iterator lower_bound(std::string_view key) const { return map_.lower_bound(key); }
  // Bytes of arena blocks held (keys, values and what overwrites left behind).
  std::size_t arena_bytes() const { return arena_bytes_; }

 private:
  static constexpr std::size_t block_bytes = 64 * 1024;

  char* allocate(std::size_t n);
  std::string_view copy(std::string_view s);
  change& slot(std::string_view key);
  void set_value(change& c, std::string_view value);

  map_type map_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cur_ = nullptr;  // free bytes of the current block
  std::size_t left_ = 0;
  std::size_t arena_bytes_ = 0;
};

}  // namespace cellar::detail
