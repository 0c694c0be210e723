// partition/cell_map.h: the cells of one column family in one partition, grouped by row.
//
// Order is R1's: row ascending, then qualifier ascending, then timestamp descending; bytes
// compare unsigned. A row is one node holding its cells, in (qualifier, timestamp) order,
// either packed into one block of bytes (packed_row.h; a small row, the common case) or in
// a small B-tree (a wide row, or one whose cells outgrew the block: cell_map::packing); the
// nodes form a doubly linked list in row order; a hash index finds a row's node by its key
// and an ordered index finds the first row at or after any key. So:
//   - a point operation (get, put, delete of one row: every YCSB operation but scans)
//     finds its row by hash, then works inside the row's node;
//   - a scan finds its first row in the ordered index, then follows the list.
// Why not one B-tree of cells: a point read would descend several levels of a tree of every
// cell of the partition, with a binary search in each node, a few dozen dependent cache
// misses per read, where the hash index and the row's node take a few. The row key is also
// stored once per row instead of once per cell.
//
// Iterators walk every cell in order across rows. Like a B-tree's, they are invalidated
// by any insertion or erasure in the map (erase returns the next one), and a change of a
// cell's value (assign, replace) invalidates the others into its row. Values are read as
// views (cell_ref), valid until the map changes.
//
// The map counts the bytes it takes (bytes()): what the memory limit charges
// (partition/memtable.h), so that a cell costs what its layout costs.
// Thread safety: none; the memtable that owns it belongs to one partition.
#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>
#include <absl/strings/string_view.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "cellar/ops.h"
#include "partition/key_bytes.h"
#include "partition/packed_row.h"
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

// A cell's value as the map holds it: views of its bytes, valid until the map changes.
struct cell_ref {
  std::string_view value;
  std::int64_t expires_at;
  cell_value owned() const { return {short_bytes(value), expires_at}; }
};

// Which rows are packed (packed_row.h): a row is made packed, and stays so while its
// block holds at most `max_cells` cells in at most `max_bytes` bytes; a change that
// would pass either limit first moves the row's cells to a B-tree (cell_map::row_cells), where
// they stay. A packed cell costs its bytes and about four more, against a 48-byte slot
// (and a heap block per value over 12 bytes); the limits keep the bytes a change moves
// within a few cache lines and a search within a row (linear in a packed row) short.
struct row_packing {
  std::uint32_t max_bytes = 2048;
  std::uint32_t max_cells = 64;
  static row_packing none() { return {0, 0}; }  // every row a B-tree
};

class cell_map {
 public:
  // Inside a row: cells by (qualifier asc, timestamp desc).
  struct column_key {
    short_bytes qualifier;
    // Mutable only for replace(), which changes it where the order stays the same.
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
  // A wide row's cells. A slot is 48 bytes (qualifier and value 16 each, 12 bytes of
  // either in place, the timestamp and the expiry); a 512-byte node, a jemalloc size
  // class, holds 10, and the row stays logarithmic however many cells it gets (time
  // series, many qualifiers). Same container as absl::btree_map, only the node size
  // differs (util/sized_btree.h).
  using row_cells = sized_btree_map<column_key, cell_value, column_less, 512>;
  static_assert(sizeof(row_cells::value_type) == 48);

  using packing = row_packing;

 private:
  struct row_node {
    row_node(std::string_view r, bool pack, std::int64_t base) : row(r), packed(pack) {
      if (pack) {
        new (&pk) packed::block();
        pk.base = base;
      } else {
        new (&cells) row_cells();
      }
    }
    ~row_node() {
      if (packed)
        pk.release();
      else
        cells.~row_cells();
    }
    row_node(const row_node&) = delete;
    row_node& operator=(const row_node&) = delete;

    key_bytes row;
    row_node* prev = nullptr;
    row_node* next = nullptr;
    bool packed;
    union {  // never empty while the node is in the map
      row_cells cells;
      packed::block pk;
    };
  };

 public:
  // A position among the cells of one row. Compares equal only to positions in the same row.
  class row_iterator {
   public:
    row_iterator() = default;
    std::string_view qualifier() const noexcept { return packed_ ? cur_.q : bt_->first.qualifier.view(); }
    std::int64_t ts() const noexcept { return packed_ ? cur_.ts : bt_->first.ts; }
    column_view column() const noexcept { return {qualifier(), ts()}; }
    cell_ref value() const noexcept {
      return packed_ ? cell_ref{cur_.v, cur_.expires_at} : cell_ref{bt_->second.value.view(), bt_->second.expires_at};
    }
    row_iterator& operator++() noexcept {
      if (packed_) {
        off_ += cur_.size;
        if (off_ < n_->pk.bytes) cur_ = packed::decode(n_->pk.data + off_, n_->pk.base);
      } else {
        ++bt_;
      }
      return *this;
    }
    // Not before the row's first cell. In a packed row, reads the row from its start.
    row_iterator& operator--() noexcept {
      if (!packed_) {
        --bt_;
        return *this;
      }
      std::uint32_t at = 0;
      for (;;) {
        packed::cell c = packed::decode(n_->pk.data + at, n_->pk.base);
        if (at + c.size >= off_) {
          off_ = at;
          cur_ = c;
          return *this;
        }
        at += c.size;
      }
    }
    friend bool operator==(const row_iterator& a, const row_iterator& b) noexcept {
      return a.packed_ ? a.off_ == b.off_ : a.bt_ == b.bt_;
    }
    friend bool operator!=(const row_iterator& a, const row_iterator& b) noexcept { return !(a == b); }

   private:
    friend class cell_map;
    row_node* n_ = nullptr;
    bool packed_ = false;
    std::uint32_t off_ = 0;  // packed: the cell's offset in the block; its size at the end
    row_cells::iterator bt_{};
    packed::cell cur_{};  // packed, not at the end: the cell at off_
  };

  // The cells of one row, or none (false).
  class row_ref {
   public:
    row_ref() = default;
    explicit operator bool() const noexcept { return n_ != nullptr; }
    row_iterator begin() const noexcept { return row_begin(n_); }
    row_iterator end() const noexcept { return row_end(n_); }
    // The first cell at or after (qualifier, ts).
    row_iterator lower_bound(const column_view& c) const { return row_lower_bound(n_, c); }
    // The row's B-tree, or nullptr when its cells are packed.
    const row_cells* tree() const noexcept { return n_->packed ? nullptr : &n_->cells; }
    // The first cell after (qualifier, ts).
    row_iterator upper_bound(const column_view& c) const {
      row_iterator r = row_lower_bound(n_, c);
      if (!at_row_end(r) && !column_less{}(c, r.column())) ++r;
      return r;
    }

   private:
    friend class cell_map;
    explicit row_ref(row_node* n) : n_(n) {}
    row_node* n_ = nullptr;
  };

  class iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = cell_ref;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = cell_ref;

    iterator() = default;

    std::string_view row() const noexcept { return node_->row.view(); }
    std::string_view qualifier() const noexcept { return in_.qualifier(); }
    std::int64_t ts() const noexcept { return in_.ts(); }
    key_view key() const noexcept { return {row(), qualifier(), ts()}; }
    cell_ref value() const noexcept { return in_.value(); }
    // The cells of this cell's row, and the first cell of the next row: a reader that
    // takes a row at a time works inside the row without comparing row keys.
    row_ref row_cells_here() const noexcept { return row_ref(node_); }
    iterator next_row() const { return map_->first_of(node_->next); }

    iterator& operator++() noexcept {
      ++in_;
      if (at_row_end(in_)) {
        node_ = node_->next;
        in_ = node_ ? row_begin(node_) : row_iterator{};
      }
      return *this;
    }
    iterator& operator--() noexcept {
      if (node_ == nullptr) {
        node_ = map_->tail_;
        in_ = row_end(node_);
      } else if (in_ == row_begin(node_)) {
        node_ = node_->prev;
        in_ = row_end(node_);
      }
      --in_;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator t = *this;
      ++*this;
      return t;
    }
    iterator operator--(int) noexcept {
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
    iterator(const cell_map* map, row_node* node, row_iterator in) : map_(map), node_(node), in_(in) {}
    const cell_map* map_ = nullptr;
    row_node* node_ = nullptr;  // nullptr: end()
    row_iterator in_{};
  };
  // The cells are the memtable's to change through either kind.
  using const_iterator = iterator;

  explicit cell_map(packing p = {}) : packing_(p) {
    if (packing_.max_cells > 0xffff) packing_.max_cells = 0xffff;
    if (packing_.max_bytes > packed::block::max_capacity) packing_.max_bytes = packed::block::max_capacity;
  }
  ~cell_map() { clear(); }
  cell_map(const cell_map&) = delete;
  cell_map& operator=(const cell_map&) = delete;
  cell_map(cell_map&& o) noexcept
      : order_(std::move(o.order_)),
        index_(std::move(o.index_)),
        head_(o.head_),
        tail_(o.tail_),
        cells_(o.cells_),
        packing_(o.packing_),
        bytes_(o.bytes_),
        reported_(o.reported_) {
    o.order_.clear();
    o.index_.clear();
    o.head_ = o.tail_ = nullptr;
    o.cells_ = 0;
    o.append_at_ = nullptr;
    o.bytes_ = o.reported_ = 0;
  }
  cell_map& operator=(cell_map&&) = delete;

  iterator begin() const { return first_of(head_); }
  iterator end() const { return {this, nullptr, {}}; }
  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return cells_; }
  std::size_t rows() const noexcept { return index_.size(); }
  // How many rows are packed, and how many bytes their cells take (inspection and tests).
  std::pair<std::size_t, std::size_t> packed_rows() const noexcept {
    std::size_t n = 0, bytes = 0;
    for (row_node* r = head_; r != nullptr; r = r->next)
      if (r->packed) {
        ++n;
        bytes += r->pk.bytes;
      }
    return {n, bytes};
  }

  // The bytes the map takes from the allocator, as jemalloc's size classes round them: each
  // row's node (and its key, when longer than the node holds) and its slots in the two
  // indexes (index_slot_bytes), a packed row's block, a B-tree row's slots
  // (tree_slot_bytes each) and the heap blocks of their qualifiers and values. Exact but
  // for the slack of the B-trees' nodes and of the hash table, which are estimates; 0 when
  // the map is empty.
  std::int64_t bytes() const noexcept { return bytes_; }
  // The change of bytes() since the last call (the first call: since the map was made).
  std::int64_t take_bytes_change() noexcept {
    const std::int64_t now = bytes();
    const std::int64_t d = now - reported_;
    reported_ = now;
    return d;
  }
  // bytes() counted anew, row by row (tests: it walks the whole map).
  std::int64_t bytes_recounted() const noexcept {
    std::int64_t b = 0;
    for (const row_node* n = head_; n != nullptr; n = n->next) {
      b += node_bytes(n);
      if (n->packed) {
        b += n->pk.capacity();
      } else {
        for (const auto& [k, v] : n->cells) b += tree_cell_bytes(k.qualifier.size(), v.value.size());
      }
    }
    return b;
  }
  // A B-tree row's cell: its 48-byte slot in nodes about three quarters full.
  static constexpr std::int64_t tree_slot_bytes = 64;
  // A row's slots in the indexes: 8 bytes in the ordered index's nodes, about two thirds
  // full, and 9 (pointer and control byte) in the hash table, about two thirds full.
  static constexpr std::int64_t index_slot_bytes = 12 + 14;
  // What a cell with these sizes takes in a B-tree row: at least what it takes packed, so a
  // write is checked against the limit with it before its row's layout is known.
  static std::int64_t tree_cell_bytes(std::size_t qualifier, std::size_t value) noexcept {
    return tree_slot_bytes + heap_bytes<short_bytes>(qualifier) + heap_bytes<short_bytes>(value);
  }

  // The cells of `row`, or none.
  row_ref cells_of(std::string_view row) const { return row_ref(find_row(row)); }

  // A point operation on a row reads four cache lines one after the other: the row
  // index's control bytes, its slot, the row's node, the row's cells (a packed block or
  // the root of its B-tree). A caller that knows the rows of its next operations starts
  // those loads early, one step per operation, each step using what the previous one
  // loaded (memtable.h: prefetch_row):
  enum class prefetch_step {
    probe,  // the index's control bytes and slot for the row
    node,   // the node of the first slot whose hash tag matches (reads the loaded probe)
    cells,  // the row's cells (finds the row: reads the loaded probe and node)
  };
  // Starts step `step` for `row` without waiting for its loads: a hint, with no effect on
  // the map or on any result.
  void prefetch_row(std::string_view row, prefetch_step step) const {
    switch (step) {
      case prefetch_step::probe: index_.prefetch(row); return;
      case prefetch_step::node: {
        auto it = index_.find(any_row{}, index_.hash_function()(row));
        if (it != index_.end()) prefetch_bytes(*it, sizeof(row_node));
        return;
      }
      case prefetch_step::cells:
        if (const row_node* n = find_row(row)) {
          if (n->packed)
            prefetch_bytes(n->pk.data, n->pk.bytes < 512 ? n->pk.bytes : 512);
          else
            prefetch_bytes(root_node_address(n->cells), 512);
        }
        return;
    }
  }

  // The cell with this key, or end().
  iterator find(const key_view& k) const {
    row_node* n = find_row(k.row);
    if (n == nullptr) return end();
    const column_view c{k.qualifier, k.ts};
    row_iterator in = row_lower_bound(n, c);
    if (at_row_end(in) || column_less{}(c, in.column())) return end();
    return {this, n, in};
  }
  // The first cell at or after `k`.
  iterator lower_bound(const key_view& k) const {
    if (row_node* n = find_row(k.row)) {
      row_iterator in = row_lower_bound(n, column_view{k.qualifier, k.ts});
      return !at_row_end(in) ? iterator{this, n, in} : first_of(n->next);
    }
    return first_of(first_row_from(k.row));
  }
  iterator lower_bound(const cell_key& k) const { return lower_bound(key_view{k.row, k.qualifier, k.ts}); }
  // The first cell of `p.row` or of a later row (after = false), or of a later row only.
  iterator lower_bound(const row_probe& p) const {
    if (row_node* n = find_row(p.row)) return first_of(p.after ? n->next : n);
    return first_of(first_row_from(p.row));
  }

  // The cell `k`, inserted with an empty value if absent (assign() gives it one); true if
  // inserted.
  std::pair<iterator, bool> try_emplace(const key_view& k) {
    row_node* n = find_row(k.row);
    return emplace_in(n ? n : add_row(k.row, k.ts), k);
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
      if (n == nullptr) n = add_row(k.row, k.ts);
      hint.node_ = n;
    }
    return emplace_in(n, k);
  }

  // Gives the cell at `it` the value `v` (left empty). `it` stays at the cell; every other
  // iterator into its row is invalidated. A value of the old one's size on the heap keeps
  // its block (short_bytes::take). Throws std::bad_alloc with the cell unchanged; not
  // after reserve(it, it.ts(), v).
  void assign(iterator& it, cell_value&& v) {
    reserve(it, it.ts(), v);
    replace(it, it.ts(), std::move(v));
  }
  // After reserve(it, ts, v): gives the cell at `it` timestamp `ts` and value `v`, where
  // its place in the order does not change (its own timestamp, or any newer one when it
  // is the only cell of its column: newest_of and last_of_column). Iterators as assign();
  // cannot fail.
  void replace(iterator& it, std::int64_t ts, cell_value&& v) noexcept {
    row_node* n = it.node_;
    append_at_ = nullptr;
    if (n->packed) {
      const packed::cell old = it.in_.cur_;
      const std::uint32_t head = packed::varint_size(old.q.size()) + static_cast<std::uint32_t>(old.q.size());
      const std::uint32_t len = packed::encoded_size(old.q, ts, v.value.view(), v.expires_at, n->pk.base);
      // The qualifier stays where it is; what follows it is written again.
      const std::uint32_t off = it.in_.off_;
      const std::uint32_t cap = n->pk.capacity();
      char* p = n->pk.resize_range(off + head, old.size - head, len - head);
      bytes_ += std::int64_t{n->pk.capacity()} - cap;
      encode_after_qualifier(p, ts, v.value.view(), v.expires_at, n->pk.base);
      it.in_ = packed_at(n, off);
      v.value = short_bytes();
      return;
    }
    auto& slot = *it.in_.bt_;
    bytes_ += heap_bytes<short_bytes>(v.value.size()) - heap_bytes<short_bytes>(slot.second.value.size());
    slot.second.value.take(std::move(v.value));
    slot.second.expires_at = v.expires_at;
    slot.first.ts = ts;
  }
  // Makes room for the cell at `it` to take timestamp `ts` and value `v`, so that the
  // replace() that gives them cannot fail: a caller that must record a change
  // before making it reserves, records, then changes. The cell and the order stay as they
  // are; the row may move to a B-tree (`it` follows it). Throws std::bad_alloc with the
  // map unchanged.
  void reserve(iterator& it, std::int64_t ts, const cell_value& v) {
    row_node* n = it.node_;
    if (!n->packed) return;
    const packed::cell& old = it.in_.cur_;
    const std::uint32_t len = packed::encoded_size(old.q, ts, v.value.view(), v.expires_at, n->pk.base);
    const std::uint64_t size = std::uint64_t{n->pk.bytes} - old.size + len;
    if (fits(n, 0, size)) {
      const char* was = n->pk.data;
      const std::uint32_t cap = n->pk.capacity();
      n->pk.reserve(static_cast<std::uint32_t>(size));
      bytes_ += std::int64_t{n->pk.capacity()} - cap;
      if (n->pk.data != was) it.in_ = packed_at(n, it.in_.off_);  // the block moved
      return;
    }
    const std::string q(old.q);
    const std::int64_t old_ts = old.ts;
    unpack(n);
    it.in_ = row_at(n, n->cells.find(column_view{q, old_ts}));
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
        if (!column_less{}(last_column(n), column_view{k.qualifier, k.ts})) return false;
        append_cell(n, k, v);
        ++cells_;
        return true;
      }
    }
    n = add_row(k.row, k.ts);  // after the last row: placed at the end without a descent
    try {
      append_cell(n, k, v);
    } catch (...) {
      remove_row(n);
      throw;
    }
    ++cells_;
    return true;
  }

  // The newest cell of column (row, q), or end() when the row has no cell of it.
  iterator newest_of(std::string_view row, std::string_view q) const {
    row_node* n = find_row(row);
    if (n == nullptr) return end();
    row_iterator in = row_lower_bound(n, column_view{q, latest_timestamp});
    if (at_row_end(in) || in.qualifier() != q) return end();
    return {this, n, in};
  }
  // Whether no cell of its column follows the cell at `it`: for the newest cell of a
  // column (newest_of), whether it is the column's only one, without reading back.
  static bool last_of_column(const iterator& it) {
    row_iterator next = it.in_;
    ++next;
    return at_row_end(next) || next.qualifier() != it.in_.qualifier();
  }

  // Erases the cell at `it`; returns the cell after it.
  iterator erase(iterator it) {
    row_node* n = it.node_;
    append_at_ = nullptr;
    --cells_;
    if (!n->packed) {
      bytes_ -= tree_cell_bytes(it.in_.bt_->first.qualifier.size(), it.in_.bt_->second.value.size());
      auto in = n->cells.erase(it.in_.bt_);
      if (in != n->cells.end()) return {this, n, row_at(n, in)};
    } else {
      const std::uint32_t off = it.in_.off_;
      --n->pk.count;
      const std::uint32_t cap = n->pk.capacity();
      n->pk.resize_range(off, it.in_.cur_.size, 0);
      bytes_ += std::int64_t{n->pk.capacity()} - cap;
      if (off < n->pk.bytes) return {this, n, packed_at(n, off)};
    }
    row_node* next = n->next;
    if (row_empty(n)) remove_row(n);
    return first_of(next);
  }

  void clear() noexcept {
    for (row_node* n = head_; n != nullptr;) {
      row_node* next = n->next;
      delete n;
      n = next;
    }
    head_ = tail_ = nullptr;
    append_at_ = nullptr;
    order_.clear();
    index_.clear();
    cells_ = 0;
    bytes_ = 0;
  }

 private:
  // The heap block of a key_bytes or short_bytes of `size` bytes: none when held in place.
  template <class Bytes>
  static std::int64_t heap_bytes(std::size_t size) noexcept {
    return size > Bytes::inline_capacity ? packed::block::size_class(static_cast<std::uint32_t>(size)) : 0;
  }
  // A row's node and its key.
  static std::int64_t node_bytes(const row_node* n) noexcept {
    return packed::block::size_class(sizeof(row_node)) + heap_bytes<key_bytes>(n->row.size()) + index_slot_bytes;
  }

  static bool row_empty(const row_node* n) noexcept { return n->packed ? n->pk.count == 0 : n->cells.empty(); }
  static row_iterator row_at(row_node* n, row_cells::iterator in) noexcept {
    row_iterator r;
    r.n_ = n;
    r.bt_ = in;
    return r;
  }
  static row_iterator packed_at(row_node* n, std::uint32_t off) noexcept {
    row_iterator r;
    r.n_ = n;
    r.packed_ = true;
    r.off_ = off;
    if (off < n->pk.bytes) r.cur_ = packed::decode(n->pk.data + off, n->pk.base);
    return r;
  }
  static row_iterator row_begin(row_node* n) noexcept {
    return n->packed ? packed_at(n, 0) : row_at(n, n->cells.begin());
  }
  static row_iterator row_end(row_node* n) noexcept {
    if (!n->packed) return row_at(n, n->cells.end());
    row_iterator r;
    r.n_ = n;
    r.packed_ = true;
    r.off_ = n->pk.bytes;
    return r;
  }
  static bool at_row_end(const row_iterator& in) noexcept {
    return in.packed_ ? in.off_ >= in.n_->pk.bytes : in.bt_ == in.n_->cells.end();
  }
  // A packed row is searched from its start: it holds few cells, next to each other.
  static row_iterator row_lower_bound(row_node* n, const column_view& c) {
    if (!n->packed) return row_at(n, n->cells.lower_bound(c));
    row_iterator r = packed_at(n, 0);
    while (!at_row_end(r) && column_less{}(r.column(), c)) ++r;
    return r;
  }
  column_view last_column(row_node* n) const {
    if (!n->packed)
      return column_view{std::prev(n->cells.end())->first.qualifier.view(), std::prev(n->cells.end())->first.ts};
    std::uint32_t at = append_at_ == n ? append_off_ : 0;
    for (;;) {
      packed::cell c = packed::decode(n->pk.data + at, n->pk.base);
      if (at + c.size == n->pk.bytes) return {c.q, c.ts};
      at += c.size;
    }
  }

  bool fits(const row_node* n, std::uint32_t extra_cells, std::uint64_t bytes) const noexcept {
    return n->pk.count + extra_cells <= packing_.max_cells && bytes <= packing_.max_bytes;
  }
  // Moves a packed row's cells to a B-tree. Throws with the row unchanged.
  void unpack(row_node* n) {
    row_cells t;
    std::int64_t tree = 0;
    for (row_iterator r = packed_at(n, 0); !at_row_end(r); ++r) {
      t.emplace_hint(t.end(), column_key{short_bytes(r.cur_.q), r.cur_.ts},
                     cell_value{short_bytes(r.cur_.v), r.cur_.expires_at});
      tree += tree_cell_bytes(r.cur_.q.size(), r.cur_.v.size());
    }
    bytes_ += tree - n->pk.capacity();
    n->pk.release();
    n->packed = false;
    new (&n->cells) row_cells(std::move(t));
    if (append_at_ == n) append_at_ = nullptr;
  }

  std::pair<iterator, bool> emplace_in(row_node* n, const key_view& k) {
    const column_view c{k.qualifier, k.ts};
    append_at_ = nullptr;
    try {
      if (n->packed) {
        row_iterator in = row_lower_bound(n, c);
        if (!at_row_end(in) && !column_less{}(c, in.column())) return {iterator{this, n, in}, false};
        const std::uint32_t len = packed::encoded_size(k.qualifier, k.ts, {}, latest_timestamp, n->pk.base);
        if (fits(n, 1, std::uint64_t{n->pk.bytes} + len)) {
          const std::uint32_t cap = n->pk.capacity();
          n->pk.reserve(n->pk.bytes + len);
          char* p = n->pk.resize_range(in.off_, 0, len);
          bytes_ += std::int64_t{n->pk.capacity()} - cap;
          packed::encode(p, k.qualifier, k.ts, {}, latest_timestamp, n->pk.base);
          ++n->pk.count;
          ++cells_;
          return {iterator{this, n, packed_at(n, in.off_)}, true};
        }
        unpack(n);
      }
      auto in = n->cells.lower_bound(c);
      if (in != n->cells.end() && !column_less{}(c, in->first)) return {iterator{this, n, row_at(n, in)}, false};
      in = n->cells.emplace_hint(in, column_key{short_bytes(k.qualifier), k.ts}, cell_value{});
      bytes_ += tree_cell_bytes(k.qualifier.size(), 0);
      ++cells_;
      return {iterator{this, n, row_at(n, in)}, true};
    } catch (...) {
      if (row_empty(n)) remove_row(n);
      throw;
    }
  }

  static void encode_after_qualifier(char* p, std::int64_t ts, std::string_view v, std::int64_t expires_at,
                                     std::int64_t base) noexcept {
    const bool exp = expires_at != latest_timestamp;
    p = packed::put_varint(p, packed::delta(ts, base));
    p = packed::put_varint(p, (static_cast<std::uint64_t>(v.size()) << 1) | exp);
    if (exp) p = packed::put_varint(p, packed::delta(expires_at, ts));
    if (!v.empty()) std::memcpy(p, v.data(), v.size());
  }

  // Adds cell `k` after every cell of row `n`. Throws with the row unchanged.
  void append_cell(row_node* n, const key_view& k, cell_value& v) {
    if (n->packed) {
      const std::uint32_t len = packed::encoded_size(k.qualifier, k.ts, v.value.view(), v.expires_at, n->pk.base);
      if (fits(n, 1, std::uint64_t{n->pk.bytes} + len)) {
        const std::uint32_t off = n->pk.bytes;
        const std::uint32_t cap = n->pk.capacity();
        n->pk.reserve(off + len);
        char* p = n->pk.resize_range(off, 0, len);
        bytes_ += std::int64_t{n->pk.capacity()} - cap;
        packed::encode(p, k.qualifier, k.ts, v.value.view(), v.expires_at, n->pk.base);
        ++n->pk.count;
        append_at_ = n;
        append_off_ = off;
        v.value = short_bytes();
        return;
      }
      unpack(n);
    }
    const std::int64_t b = tree_cell_bytes(k.qualifier.size(), v.value.size());
    n->cells.emplace_hint(n->cells.end(), column_key{short_bytes(k.qualifier), k.ts}, std::move(v));
    bytes_ += b;
  }

  iterator first_of(row_node* n) const { return n ? iterator{this, n, row_begin(n)} : end(); }
  row_node* find_row(std::string_view row) const {
    auto it = index_.find(row);
    return it == index_.end() ? nullptr : *it;
  }
  // The first row at or after `row`.
  row_node* first_row_from(std::string_view row) const {
    auto it = order_.lower_bound(row);
    return it == order_.end() ? nullptr : *it;
  }
  // A new, empty row node, linked in order; the caller gives it a cell (whose timestamp,
  // `ts`, a packed row stores the others' against).
  row_node* add_row(std::string_view row, std::int64_t ts) {
    auto owned = std::make_unique<row_node>(row, packing_.max_cells > 0, ts);
    const std::string_view key = owned->row.view();  // in the node: stable
    // Past the last row (rows arriving in order): the end, without a descent.
    auto pos = tail_ != nullptr && tail_->row.view() < key ? order_.end() : order_.lower_bound(key);
    row_node* next = pos == order_.end() ? nullptr : *pos;
    order_.insert(pos, owned.get());
    try {
      index_.insert(owned.get());
    } catch (...) {
      order_.erase(key);
      throw;
    }
    row_node* n = owned.release();
    bytes_ += node_bytes(n);
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
    if (append_at_ == n) append_at_ = nullptr;
    bytes_ -= node_bytes(n) + (n->packed ? n->pk.capacity() : 0);
    delete n;
  }

  // Both indexes hold the row nodes alone and read a row's key in its node: a lookup
  // compares the key it meets there anyway (a view of the key in the index would point
  // into the node too), and a row costs 8 bytes per slot instead of 24.
  static std::string_view key_of(const row_node* n) noexcept { return n->row.view(); }
  static std::string_view key_of(std::string_view s) noexcept { return s; }
  struct row_less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const noexcept {
      return key_of(a) < key_of(b);
    }
  };
  // 8-byte slots in 1 KB nodes.
  using row_order = sized_btree_set<row_node*, row_less, 1024>;
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
    std::size_t operator()(const row_node* n) const noexcept { return (*this)(key_of(n)); }
    std::size_t operator()(any_row) const noexcept { return 0; }  // never hashed: find is given the hash
  };
  struct row_eq {
    using is_transparent = void;
    bool operator()(const row_node* a, const row_node* b) const noexcept { return key_of(a) == key_of(b); }
    bool operator()(const row_node* a, std::string_view b) const noexcept { return key_of(a) == b; }
    bool operator()(std::string_view a, const row_node* b) const noexcept { return a == key_of(b); }
    bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
    bool operator()(const row_node*, any_row) const noexcept { return true; }
    bool operator()(any_row, const row_node*) const noexcept { return true; }
  };
  static void prefetch_bytes(const void* p, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; i += 64) __builtin_prefetch(static_cast<const char*>(p) + i);
  }
  absl::flat_hash_set<row_node*, row_hash, row_eq> index_;
  row_node* head_ = nullptr;
  row_node* tail_ = nullptr;
  std::size_t cells_ = 0;
  packing packing_;
  // The last cell append() placed in a packed row, while no other change touched the map:
  // the next append to that row compares with it without reading the row from its start.
  row_node* append_at_ = nullptr;
  std::uint32_t append_off_ = 0;
  std::int64_t bytes_ = 0;     // bytes(), kept up to date by every change
  std::int64_t reported_ = 0;  // bytes() at the last take_bytes_change()
};

}  // namespace cellar::detail
