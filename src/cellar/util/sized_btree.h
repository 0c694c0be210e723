// util/sized_btree.h: abseil's B-tree map and set with a node size of our choosing.
//
// absl::btree_map is absl's btree_map_container over btree<map_params<..., 256, ...>>: its
// nodes are about 256 bytes, and that size is not a parameter of the public type. With
// cellar's slots (48 bytes per cell in cell_map::row_cells, 64 in delta_map) a 256-byte
// node holds 3 to 5 slots: ten cells of a row then span several nodes and an index node,
// which costs memory and a cache miss per node when the row is built or read, and walking
// a large delta in order (what a snapshot does) visits many more nodes. Larger nodes hold
// ten cells in one block and a delta in far fewer; bench/bench_btree_nodes compares the
// sizes.
//
// So the maps below are the very containers absl::btree_map and btree_set are, with the node size as a
// parameter. This header is the one place in cellar that names absl::container_internal:
// if abseil ever changes that template, only this alias changes (or falls back to
// absl::btree_map at a cost in memory and speed, above).
#pragma once

#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>

#include <cstring>
#include <functional>
#include <memory>
#include <utility>

namespace cellar::detail {

// absl::btree_map<Key, Value, Compare> whose nodes are about NodeBytes bytes.
template <class Key, class Value, class Compare, int NodeBytes>
using sized_btree_map =
    absl::container_internal::btree_map_container<absl::container_internal::btree<absl::container_internal::map_params<
        Key, Value, Compare, std::allocator<std::pair<const Key, Value>>, NodeBytes, /*IsMulti=*/false>>>;

// absl::btree_set<Key, Compare> whose nodes are about NodeBytes bytes.
template <class Key, class Compare, int NodeBytes>
using sized_btree_set = absl::container_internal::btree_set_container<absl::container_internal::btree<
    absl::container_internal::set_params<Key, Compare, std::allocator<Key>, NodeBytes, /*IsMulti=*/false>>>;

// Where the root node of `m` is, for a prefetch only: abseil's btree keeps its root pointer
// as its first member (btree.h: `root_`, then the rightmost node and the size), and the
// container holds nothing but the tree. An address got wrong by a later abseil would cost
// a useless prefetch, never a wrong result: nothing reads through it.
template <class Map>
const void* root_node_address(const Map& m) noexcept {
  static_assert(sizeof(Map) == 3 * sizeof(void*), "abseil's btree layout changed: check root_node_address");
  const void* root;
  std::memcpy(&root, static_cast<const void*>(&m), sizeof root);
  return root;
}

}  // namespace cellar::detail
