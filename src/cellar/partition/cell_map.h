// partition/cell_map.h: the cells of one column family in one partition, grouped by row.
//
// Order is R1's: row ascending, then qualifier ascending, then timestamp descending; bytes
// compare unsigned. A row is one node holding its cells in a small B-tree keyed by
// (qualifier, timestamp); the nodes form a doubly linked list in row order; a hash index
// finds a row's node by its key and an ordered index finds the first row at or after any
// key. So:
//   - a point operation (get, put, delete of one row: every YCSB operation but scans)
//     finds its row by hash, then works inside the row's node;
//   - a scan finds its first row in the ordered index, then follows the list.
// Why not one B-tree of cells: a point read would descend several levels of a tree of every
// cell of the partition, with a binary search in each node, a few dozen dependent cache
// misses per read, where the hash index and the row's node take a few. The row key is also
// stored once per row instead of once per cell.
//
// Iterators walk every cell in order across rows. Like a B-tree's, they are invalidated
// by any insertion or erasure in the map (erase returns the next one).
// Thread safety: none; the memtable that owns it belongs to one partition.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>
#include <absl/strings/string_view.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "cellar/ops.h"
#include "partition/key_bytes.h"
#include "util/sized_btree.h"

namespace cellar::detail {

// A cell's key, owned (undo records, reclaim's resume point, recovery).
struct cell_key {
  key_bytes row;
  key_bytes qualifier;
  std::int64_t ts;
};

// Looks up by (row, qualifier, ts) without building strings.
struct key_view {
  std::string_view row;
  std::string_view qualifier;
  std::int64_t ts;
};

// Sorts before every cell of `row` (after = false) or after every cell of it (after = true).
struct row_probe {
  std::string_view row;
  bool after;
};

struct cell_value {
  short_bytes value;                           // 12 bytes or less in place
  std::int64_t expires_at = latest_timestamp;  // from a cell TTL: timestamp + ttl
};

class cell_map {
 public:
  // Inside a row: cells by (qualifier asc, timestamp desc).
  struct column_key {
    short_bytes qualifier;
    // Mutable only for retime(), which changes it where the order stays the same.
    mutable std::int64_t ts;
  };
  struct column_view {
    std::string_view qualifier;
    std::int64_t ts;
  };
  struct column_less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const noexcept {
      if (int c = std::string_view(a.qualifier).compare(std::string_view(b.qualifier)); c != 0) return c < 0;
      return a.ts > b.ts;
    }
  };
  // A slot is 48 bytes (qualifier and value 16 each, 12 bytes of either in place, the
  // timestamp and the expiry); a 512-byte node, a jemalloc size class, holds 10. A row's
  // first node grows as cells arrive (absl sizes a root leaf to its content: 1, 2, 4, 8,
  // 10 slots), so a row of up to 10 cells is one node, and a wide row (time series, many
  // qualifiers) stays logarithmic. Same container as absl::btree_map, only the node size
  // differs (util/sized_btree.h). With 80-byte slots (std::string values, 28-byte
  // qualifiers) in 1 KB nodes a 10-cell row took a 1 KB block; now 512 bytes.
  using row_cells = sized_btree_map<column_key, cell_value, column_less, 512>;
  static_assert(sizeof(row_cells::value_type) == 48);

 private:
  struct row_node {
    explicit row_node(std::string_view r) : row(r) {}
    key_bytes row;
    row_node* prev = nullptr;
    row_node* next = nullptr;
    row_cells cells;  // never empty while the node is in the map
  };

 public:
  class iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = cell_value;
    using difference_type = std::ptrdiff_t;
    using pointer = cell_value*;
    using reference = cell_value&;

    iterator() = default;

    std::string_view row() const noexcept { return node_->row.view(); }
    std::string_view qualifier() const noexcept { return in_->first.qualifier.view(); }
    std::int64_t ts() const noexcept { return in_->first.ts; }
    key_view key() const noexcept { return {row(), qualifier(), ts()}; }
    cell_value& value() const noexcept { return in_->second; }
    // The cells of this cell's row, and the first cell of the next row: a reader that
    // takes a row at a time works inside the row without comparing row keys.
    const row_cells& row_cells_here() const noexcept { return node_->cells; }
    iterator next_row() const { return map_->first_of(node_->next); }

    iterator& operator++() {
      if (++in_ == node_->cells.end()) {
        node_ = node_->next;
        in_ = node_ ? node_->cells.begin() : row_cells::iterator{};
      }
      return *this;
    }
    iterator& operator--() {
      if (node_ == nullptr) {
        node_ = map_->tail_;
        in_ = std::prev(node_->cells.end());
      } else if (in_ == node_->cells.begin()) {
        node_ = node_->prev;
        in_ = std::prev(node_->cells.end());
      } else {
        --in_;
      }
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    iterator operator--(int) {
      iterator t = *this;
      --*this;
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.node_ == b.node_ && (a.node_ == nullptr || a.in_ == b.in_);
    }
    friend bool operator!=(const iterator& a, const iterator& b) noexcept { return !(a == b); }

   private:
    friend class cell_map;
    iterator(const cell_map* map, row_node* node, row_cells::iterator in) : map_(map), node_(node), in_(in) {}
    const cell_map* map_ = nullptr;
    row_node* node_ = nullptr;  // nullptr: end()
    row_cells::iterator in_{};
  };
  // The cells are the memtable's to change through either kind.
  using const_iterator = iterator;

  cell_map() = default;
  ~cell_map() { clear(); }
  cell_map(const cell_map&) = delete;
  cell_map& operator=(const cell_map&) = delete;
  cell_map(cell_map&& o) noexcept
      : order_(std::move(o.order_)), index_(std::move(o.index_)), head_(o.head_), tail_(o.tail_), cells_(o.cells_) {
    o.order_.clear();
    o.index_.clear();
    o.head_ = o.tail_ = nullptr;
    o.cells_ = 0;
  }
  cell_map& operator=(cell_map&&) = delete;

  iterator begin() const { return first_of(head_); }
  iterator end() const { return {this, nullptr, {}}; }
  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return cells_; }
  std::size_t rows() const noexcept { return index_.size(); }

  // The cells of `row`, or nullptr if it has none.
  const row_cells* cells_of(std::string_view row) const {
    row_node* n = find_row(row);
    return n ? &n->cells : nullptr;
  }

  // A point operation on a row reads four cache lines one after the other: the row
  // index's control bytes, its slot, the row's node, the root of the row's cells. A caller
  // that knows the rows of its next operations starts those loads early, one step per
  // operation, each step using what the previous one loaded (memtable.h: prefetch_row):
  enum class prefetch_step {
    probe,  // the index's control bytes and slot for the row
    node,   // the node of the first slot whose hash tag matches (reads the loaded probe)
    cells,  // the root of the row's cells (finds the row: reads the loaded probe and node)
  };
  // Starts step `step` for `row` without waiting for its loads: a hint, with no effect on
  // the map or on any result.
  void prefetch_row(std::string_view row, prefetch_step step) const {
    switch (step) {
      case prefetch_step::probe: index_.prefetch(row); return;
      case prefetch_step::node: {
        auto it = index_.find(any_row{}, index_.hash_function()(row));
        if (it != index_.end()) prefetch_bytes(it->second, sizeof(row_node));
        return;
      }
      case prefetch_step::cells:
        if (const row_node* n = find_row(row)) prefetch_bytes(root_node_address(n->cells), 512);
        return;
    }
  }

  // The cell with this key, or end().
  iterator find(const key_view& k) const {
    row_node* n = find_row(k.row);
    if (n == nullptr) return end();
    auto in = n->cells.find(column_view{k.qualifier, k.ts});
    return in == n->cells.end() ? end() : iterator{this, n, in};
  }
  // The first cell at or after `k`.
  iterator lower_bound(const key_view& k) const {
    if (row_node* n = find_row(k.row)) {
      auto in = n->cells.lower_bound(column_view{k.qualifier, k.ts});
      return in != n->cells.end() ? iterator{this, n, in} : first_of(n->next);
    }
    return first_of(first_row_from(k.row));
  }
  iterator lower_bound(const cell_key& k) const { return lower_bound(key_view{k.row, k.qualifier, k.ts}); }
  // The first cell of `p.row` or of a later row (after = false), or of a later row only.
  iterator lower_bound(const row_probe& p) const {
    if (row_node* n = find_row(p.row)) return first_of(p.after ? n->next : n);
    return first_of(first_row_from(p.row));
  }

  // The cell `k`, inserted with a default value if absent; true if inserted.
  std::pair<iterator, bool> try_emplace(const key_view& k) {
    row_node* n = find_row(k.row);
    return emplace_in(n ? n : add_row(k.row), k);
  }
  // The row of the last try_emplace(k, hint) that was given it: the next cell of the same
  // row (a bulk load's cells come row by row) is placed without the hash index. It stays
  // valid while no row is removed from the map.
  class row_hint {
   private:
    friend class cell_map;
    row_node* node_ = nullptr;
  };
  std::pair<iterator, bool> try_emplace(const key_view& k, row_hint& hint) {
    row_node* n = hint.node_;
    if (n == nullptr || n->row.view() != k.row) {
      n = find_row(k.row);
      if (n == nullptr) n = add_row(k.row);
      hint.node_ = n;
    }
    return emplace_in(n, k);
  }
  // Inserts the cell `k` with value `v` if it sorts after every cell of the map: at the end,
  // with no search and no hash lookup but one per new row (a snapshot's base arrives in key
  // order). Returns false, having changed nothing and left `v` as it was, otherwise.
  bool append(const key_view& k, cell_value& v) {
    row_node* n = tail_;
    if (n != nullptr) {
      const int c = n->row.view().compare(k.row);
      if (c > 0) return false;
      if (c == 0) {
        if (!column_less{}(std::prev(n->cells.end())->first, column_view{k.qualifier, k.ts})) return false;
        n->cells.emplace_hint(n->cells.end(), column_key{short_bytes(k.qualifier), k.ts}, std::move(v));
        ++cells_;
        return true;
      }
    }
    n = add_row(k.row);  // after the last row: placed at the end without a descent
    try {
      n->cells.emplace_hint(n->cells.end(), column_key{short_bytes(k.qualifier), k.ts}, std::move(v));
    } catch (...) {
      remove_row(n);
      throw;
    }
    ++cells_;
    return true;
  }

 private:
  std::pair<iterator, bool> emplace_in(row_node* n, const key_view& k) {
    auto in = n->cells.lower_bound(column_view{k.qualifier, k.ts});
    if (in != n->cells.end() && !column_less{}(column_view{k.qualifier, k.ts}, in->first))
      return {iterator{this, n, in}, false};
    try {
      in = n->cells.emplace_hint(in, column_key{short_bytes(k.qualifier), k.ts}, cell_value{});
    } catch (...) {
      if (n->cells.empty()) remove_row(n);
      throw;
    }
    ++cells_;
    return {iterator{this, n, in}, true};
  }

 public:
  // The newest cell of column (row, q), or end() when the row has no cell of it.
  iterator newest_of(std::string_view row, std::string_view q) const {
    row_node* n = find_row(row);
    if (n == nullptr) return end();
    auto in = n->cells.lower_bound(column_view{q, latest_timestamp});
    if (in == n->cells.end() || in->first.qualifier.view() != q) return end();
    return {this, n, in};
  }
  // Whether the cell at `it` is the only cell of its column.
  static bool sole_of_column(const iterator& it) {
    const auto& cells = it.node_->cells;
    const std::string_view q = it.in_->first.qualifier.view();
    if (it.in_ != cells.begin() && std::prev(it.in_)->first.qualifier.view() == q) return false;
    auto next = std::next(it.in_);
    return next == cells.end() || next->first.qualifier.view() != q;
  }
  // Gives the cell at `it`, the only cell of its column (sole_of_column), timestamp `ts`:
  // its place in the order does not change, so nothing moves.
  static void retime(const iterator& it, std::int64_t ts) { it.in_->first.ts = ts; }

  // Erases the cell at `it`; returns the cell after it.
  iterator erase(iterator it) {
    row_node* n = it.node_;
    auto in = n->cells.erase(it.in_);
    --cells_;
    if (in != n->cells.end()) return {this, n, in};
    row_node* next = n->next;
    if (n->cells.empty()) remove_row(n);
    return first_of(next);
  }

  void clear() noexcept {
    for (row_node* n = head_; n != nullptr;) {
      row_node* next = n->next;
      delete n;
      n = next;
    }
    head_ = tail_ = nullptr;
    order_.clear();
    index_.clear();
    cells_ = 0;
  }

 private:
  iterator first_of(row_node* n) const { return n ? iterator{this, n, n->cells.begin()} : end(); }
  row_node* find_row(std::string_view row) const {
    auto it = index_.find(row);
    return it == index_.end() ? nullptr : it->second;
  }
  // The first row at or after `row`.
  row_node* first_row_from(std::string_view row) const {
    auto it = order_.lower_bound(row);
    return it == order_.end() ? nullptr : it->second;
  }
  // A new, empty row node, linked in order; the caller gives it a cell.
  row_node* add_row(std::string_view row) {
    auto owned = std::make_unique<row_node>(row);
    const std::string_view key = owned->row.view();  // in the node: stable
    // Past the last row (rows arriving in order): the end, without a descent.
    auto pos = tail_ != nullptr && tail_->row.view() < key ? order_.end() : order_.lower_bound(key);
    row_node* next = pos == order_.end() ? nullptr : pos->second;
    order_.emplace_hint(pos, key, owned.get());
    try {
      index_.emplace(key, owned.get());
    } catch (...) {
      order_.erase(key);
      throw;
    }
    row_node* n = owned.release();
    n->next = next;
    n->prev = next ? next->prev : tail_;
    (n->prev ? n->prev->next : head_) = n;
    (next ? next->prev : tail_) = n;
    return n;
  }
  void remove_row(row_node* n) noexcept {
    (n->prev ? n->prev->next : head_) = n->next;
    (n->next ? n->next->prev : tail_) = n->prev;
    order_.erase(n->row.view());
    index_.erase(n->row.view());
    delete n;
  }

  // 24-byte slots in 1 KB nodes.
  using row_order = sized_btree_map<std::string_view, row_node*, std::less<std::string_view>, 1024>;
  row_order order_;
  // Debian's abseil has its own string_view type (ABSL_OPTION_USE_STD_STRING_VIEW 0), so
  // its default hash of a std::string_view falls back to std::hash (libstdc++'s
  // _Hash_bytes, a byte-at-a-time loop); absl's own string hash is much cheaper.
  //
  // `any_row` equals every key: index_.find(any_row{}, hash) is the first slot of the probe
  // for `hash` whose hash tag matches (almost always the row's), found without reading the
  // key, which is in the row's node (prefetch_step::node).
  struct any_row {};
  struct row_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size()));
    }
    std::size_t operator()(any_row) const noexcept { return 0; }  // never hashed: find is given the hash
  };
  struct row_eq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
    bool operator()(std::string_view, any_row) const noexcept { return true; }
    bool operator()(any_row, std::string_view) const noexcept { return true; }
  };
  static void prefetch_bytes(const void* p, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; i += 64) __builtin_prefetch(static_cast<const char*>(p) + i);
  }
  absl::flat_hash_map<std::string_view, row_node*, row_hash, row_eq> index_;
  row_node* head_ = nullptr;
  row_node* tail_ = nullptr;
  std::size_t cells_ = 0;
};

}  // namespace cellar::detail
