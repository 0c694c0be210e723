// cell_map against a model: one std::map of (row, qualifier, ts) in R1 order, driven by
// random inserts, erasures and lookups over keys chosen to meet the edge cases (shared
// prefixes, bytes 0x00 and 0xff, keys longer than key_bytes holds in place, empty
// qualifiers, rows emptied and refilled). Each runs with packed rows (the default), with
// B-tree rows only, and with limits so small that rows keep moving from one to the other.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "partition/cell_map.h"

using cellar::detail::cell_map;
using cellar::detail::cell_value;
using cellar::detail::key_view;
using cellar::detail::row_probe;
using cellar::detail::short_bytes;

namespace {

// The layouts every model test runs under.
cell_map::packing layout(int i) {
  switch (i) {
    case 0: return {};
    case 1: return cell_map::packing::none();
    default: return {48, 3};
  }
}
void set_value(cell_map& m, cell_map::iterator& it, const std::string& v, std::int64_t expires_at = INT64_MAX) {
  m.assign(it, cell_value{short_bytes(v), expires_at});
}

struct model_less {
  bool operator()(const std::tuple<std::string, std::string, std::int64_t>& a,
                  const std::tuple<std::string, std::string, std::int64_t>& b) const {
    if (int c = std::get<0>(a).compare(std::get<0>(b)); c != 0) return c < 0;
    if (int c = std::get<1>(a).compare(std::get<1>(b)); c != 0) return c < 0;
    return std::get<2>(a) > std::get<2>(b);
  }
};
using model_key = std::tuple<std::string, std::string, std::int64_t>;
using model = std::map<model_key, std::string, model_less>;

std::vector<std::string> rows_pool() {
  std::vector<std::string> r = {"",
                                "a",
                                "ab",
                                "abc",
                                "b",
                                std::string(1, '\0'),
                                std::string(2, '\xff'),
                                "\xff",
                                "a\xff",
                                std::string(28, 'r'),
                                std::string(29, 'r'),
                                std::string(40, 'r') + "x",
                                "user1",
                                "user10",
                                "user2"};
  return r;
}

std::string at_of(const cell_map::iterator& it) {
  return std::string(it.row()) + "|" + std::string(it.qualifier()) + "|" + std::to_string(it.ts());
}
std::string at_of(model::const_iterator it) {
  return std::get<0>(it->first) + "|" + std::get<1>(it->first) + "|" + std::to_string(std::get<2>(it->first));
}

void check_same(const cell_map& m, const model& mo) {
  REQUIRE(m.size() == mo.size());
  REQUIRE(m.empty() == mo.empty());
  std::size_t rows = 0;
  std::string last_row;
  auto it = m.begin();
  for (auto mi = mo.begin(); mi != mo.end(); ++mi, ++it) {
    REQUIRE(it != m.end());
    REQUIRE(at_of(it) == at_of(mi));
    REQUIRE(it.value().value == mi->second);
    if (rows == 0 || std::get<0>(mi->first) != last_row) ++rows;
    last_row = std::get<0>(mi->first);
  }
  REQUIRE(it == m.end());
  REQUIRE(m.rows() == rows);
  // Backwards from end() visits the same cells in reverse.
  auto back = m.end();
  for (auto mi = mo.rbegin(); mi != mo.rend(); ++mi) {
    --back;
    REQUIRE(std::string(back.row()) == std::get<0>(mi->first));
    REQUIRE(back.ts() == std::get<2>(mi->first));
  }
  REQUIRE(back == m.begin());
}

}  // namespace

TEST_CASE("cell_map keeps R1 order and agrees with a model under random changes", "[cell_map]") {
  const auto rows = rows_pool();
  const std::vector<std::string> quals = {"", "a", "b", std::string(30, 'q'), "\xff"};
  std::mt19937_64 rng(20261130);
  const int l = GENERATE(0, 1, 2);
  CAPTURE(l);
  cell_map m(layout(l));
  model mo;
  auto pick_key = [&] {
    return model_key{rows[rng() % rows.size()], quals[rng() % quals.size()], static_cast<std::int64_t>(rng() % 5) - 1};
  };
  for (int step = 0; step < 20000; ++step) {
    const auto op = rng() % 10;
    const model_key k = pick_key();
    const key_view kv{std::get<0>(k), std::get<1>(k), std::get<2>(k)};
    if (op < 4) {  // insert or overwrite
      const std::string v = "v" + std::to_string(step);
      auto [it, inserted] = m.try_emplace(kv);
      auto [mi, minserted] = mo.insert_or_assign(k, v);
      REQUIRE(inserted == minserted);
      REQUIRE(at_of(it) == at_of(mi));
      set_value(m, it, v);
    } else if (op < 7) {  // erase the cell at or after k, check the returned successor
      auto it = m.lower_bound(kv);
      auto mi = mo.lower_bound(k);
      REQUIRE((it == m.end()) == (mi == mo.end()));
      if (mi == mo.end()) continue;
      REQUIRE(at_of(it) == at_of(mi));
      it = m.erase(it);
      mi = mo.erase(mi);
      REQUIRE((it == m.end()) == (mi == mo.end()));
      if (mi != mo.end()) REQUIRE(at_of(it) == at_of(mi));
    } else if (op < 8) {  // exact find
      auto it = m.find(kv);
      auto mi = mo.find(k);
      REQUIRE((it == m.end()) == (mi == mo.end()));
      if (mi != mo.end()) REQUIRE(it.value().value == mi->second);
    } else {  // row probes: first cell of the row or later, and first cell after the row
      const bool after = op == 9;
      auto it = m.lower_bound(row_probe{std::get<0>(k), after});
      auto mi = after ? mo.lower_bound(model_key{std::get<0>(k) + std::string(1, '\0'), "", INT64_MAX})
                      : mo.lower_bound(model_key{std::get<0>(k), "", INT64_MAX});
      REQUIRE((it == m.end()) == (mi == mo.end()));
      if (mi != mo.end()) REQUIRE(at_of(it) == at_of(mi));
    }
    // The bytes kept up to date by each change are those of the map as it is.
    REQUIRE(m.bytes() == m.bytes_recounted());
    if (step % 500 == 0) check_same(m, mo);
  }
  check_same(m, mo);
  // Empty every row through erase: no row node may survive its last cell.
  for (auto it = m.begin(); it != m.end();) it = m.erase(it);
  CHECK(m.bytes() == 0);
  CHECK(m.empty());
  CHECK(m.rows() == 0);
  CHECK(m.size() == 0);
  CHECK(m.begin() == m.end());
}

TEST_CASE("cell_map: inserts through a row hint, in order and not, agree with the model", "[cell_map]") {
  const auto rows = rows_pool();
  const std::vector<std::string> quals = {"", "a", "b", std::string(30, 'q')};
  std::mt19937_64 rng(20261206);
  const int l = GENERATE(0, 1, 2);
  CAPTURE(l);
  cell_map m(layout(l));
  model mo;
  cell_map::row_hint hint;
  // Runs of cells of one row (as a bulk load brings them), the rows in and out of order, and
  // rows that already hold cells.
  for (int run = 0; run < 3000; ++run) {
    const std::string& row = rows[run < 1500 ? run % rows.size() : rng() % rows.size()];
    for (std::uint64_t n = 1 + rng() % 4; n > 0; --n) {
      const model_key k{row, quals[rng() % quals.size()], static_cast<std::int64_t>(rng() % 3)};
      const std::string v = "v" + std::to_string(run);
      auto [it, inserted] = m.try_emplace(key_view{std::get<0>(k), std::get<1>(k), std::get<2>(k)}, hint);
      auto [mi, minserted] = mo.insert_or_assign(k, v);
      REQUIRE(inserted == minserted);
      REQUIRE(at_of(it) == at_of(mi));
      set_value(m, it, v);
    }
  }
  check_same(m, mo);
}

TEST_CASE("cell_map: append places cells in order at the end and refuses any other", "[cell_map]") {
  const auto rows = rows_pool();
  const std::vector<std::string> quals = {"", std::string(1, '\0'), "a", "a\xff", "b", std::string(30, 'q')};
  const std::vector<std::int64_t> times = {cellar::latest_timestamp, 7, 1, 0};
  // Every key of the pools, in R1 order.
  model all;
  for (const auto& r : rows)
    for (const auto& q : quals)
      for (auto t : times) all.emplace(model_key{r, q, t}, r + "/" + q + "/" + std::to_string(t));
  std::mt19937_64 rng(42);
  const int l = GENERATE(0, 1, 2);
  CAPTURE(l);
  cell_map m(layout(l));
  model mo;
  for (const auto& [k, v] : all) {
    if (rng() % 3 == 0) continue;  // rows and columns with gaps, rows with one cell
    // A key at or before the last cell is refused, leaving the map and the value as they
    // were: the last cell itself, earlier rows, earlier columns of the last row, newer
    // versions of its last column.
    if (!mo.empty()) {
      const auto& last = std::prev(mo.end())->first;
      const auto& [lr, lq, lt] = last;
      std::vector<model_key> before = {last, {std::get<0>(mo.begin()->first), lq, lt}, {lr, "", lt}};
      if (lt != cellar::latest_timestamp) before.push_back({lr, lq, cellar::latest_timestamp});
      for (const auto& b : before) {
        if (!model_less{}(b, last) && b != last) continue;
        cellar::detail::cell_value refused{cellar::detail::short_bytes(std::string(20, 'x')), 5};
        REQUIRE_FALSE(m.append(key_view{std::get<0>(b), std::get<1>(b), std::get<2>(b)}, refused));
        REQUIRE(refused.value == std::string(20, 'x'));
      }
    }
    cellar::detail::cell_value cv{cellar::detail::short_bytes(v), 1};
    REQUIRE(m.append(key_view{std::get<0>(k), std::get<1>(k), std::get<2>(k)}, cv));
    mo.emplace(k, v);
    // The appended cell is where a search finds it.
    auto it = m.find(key_view{std::get<0>(k), std::get<1>(k), std::get<2>(k)});
    REQUIRE(it != m.end());
    REQUIRE(it.value().value == v);
  }
  check_same(m, mo);
  // The rows are in the hash index and the ordered index: found by key, and by a probe.
  for (const auto& r : rows) {
    const bool has = mo.lower_bound(model_key{r, "", cellar::latest_timestamp}) != mo.end() &&
                     std::get<0>(mo.lower_bound(model_key{r, "", cellar::latest_timestamp})->first) == r;
    REQUIRE(static_cast<bool>(m.cells_of(r)) == has);
    auto lb = m.lower_bound(row_probe{r, false});
    auto mlb = mo.lower_bound(model_key{r, "", cellar::latest_timestamp});
    REQUIRE((lb == m.end()) == (mlb == mo.end()));
    if (lb != m.end()) REQUIRE(at_of(lb) == at_of(mlb));
  }
}

TEST_CASE("cell_map: a row's cells are found by hash after rows come and go around it", "[cell_map]") {
  const int l = GENERATE(0, 1, 2);
  CAPTURE(l);
  cell_map m(layout(l));
  for (int i = 0; i < 1000; ++i) {
    const std::string row = "user" + std::to_string(i);
    for (int q = 0; q < 10; ++q) {
      auto it = m.try_emplace(key_view{row, "field" + std::to_string(q), 1}).first;
      set_value(m, it, row);
    }
  }
  // Remove every other row completely, then the neighbours must still link up.
  for (int i = 0; i < 1000; i += 2) {
    const std::string row = "user" + std::to_string(i);
    auto it = m.lower_bound(row_probe{row, false});
    while (it != m.end() && it.row() == row) it = m.erase(it);
  }
  CHECK(m.rows() == 500);
  CHECK(m.size() == 5000);
  std::string prev;
  std::size_t n = 0;
  for (auto it = m.begin(); it != m.end(); ++it, ++n) {
    CHECK(std::string(it.row()) >= prev);
    CHECK(it.value().value == it.row());
    prev = std::string(it.row());
  }
  CHECK(n == 5000);
  CHECK(m.find(key_view{"user3", "field9", 1}) != m.end());
  CHECK(m.find(key_view{"user4", "field9", 1}) == m.end());
  // A probe for an erased row lands on the next row that exists.
  auto it = m.lower_bound(key_view{"user4", "", INT64_MAX});
  REQUIRE(it != m.end());
  CHECK(it.row() == "user401");  // user40 and user400 are gone
  // Moving the map keeps every row reachable.
  cell_map moved(std::move(m));
  CHECK(m.empty());
  CHECK(moved.size() == 5000);
  CHECK(moved.find(key_view{"user999", "field0", 1}) != moved.end());
}

// prefetch_row is a hint: every step, on rows present and absent and on an empty map,
// leaves the map as it was. root_node_address (util/sized_btree.h) reads abseil's
// layout; it must name the root: the one node of a small row, and for a row of three
// levels' worth of cells a node that holds neither its first nor its last cell (those
// are in the leftmost and rightmost leaves).
TEST_CASE("cell_map: prefetching a row's lines changes nothing, and finds the row's root node", "[cell_map]") {
  using step = cell_map::prefetch_step;
  const int l = GENERATE(0, 1);
  CAPTURE(l);
  cell_map m(layout(l));
  for (auto s : {step::probe, step::node, step::cells}) m.prefetch_row("absent", s);
  CHECK(m.empty());
  for (int i = 0; i < 100; ++i) {
    const std::string row = "user" + std::to_string(i);
    for (int q = 0; q < 10; ++q) {
      auto it = m.try_emplace(key_view{row, "field" + std::to_string(q), 1}).first;
      set_value(m, it, row);
    }
  }
  for (int i = 0; i < 120; ++i)
    for (auto s : {step::probe, step::node, step::cells}) m.prefetch_row("user" + std::to_string(i), s);
  CHECK(m.rows() == 100);
  CHECK(m.size() == 1000);
  CHECK(m.find(key_view{"user7", "field3", 1}).value().value == "user7");
  if (l == 0) {  // packed rows: the row's block is what the cells step loads
    CHECK(m.cells_of("user7").tree() == nullptr);
    return;
  }

  auto inside = [](const void* node, const void* p) {
    const auto* n = static_cast<const char*>(node);
    const auto* c = static_cast<const char*>(p);
    return c >= n && c < n + 512;
  };
  const auto* small = m.cells_of("user7").tree();
  REQUIRE(small != nullptr);
  const void* root = cellar::detail::root_node_address(*small);
  CHECK(inside(root, &*small->begin()));
  CHECK(inside(root, &*std::prev(small->end())));

  for (int q = 0; q < 2000; ++q) m.try_emplace(key_view{"wide", "q" + std::to_string(10000 + q), 1});
  const auto* wide = m.cells_of("wide").tree();
  REQUIRE(wide != nullptr);
  const void* wide_root = cellar::detail::root_node_address(*wide);
  REQUIRE(wide_root != nullptr);
  CHECK_FALSE(inside(wide_root, &*wide->begin()));
  CHECK_FALSE(inside(wide_root, &*std::prev(wide->end())));
}

// The packed layout against the B-tree one: the same random changes on two maps, with
// values of every size class at the boundaries (a varint length's byte, short_bytes' in-place
// limit, a block's limit), expiries and timestamps at the ends of int64 (their differences
// wrap), versions of one column, retimes and erasures; both must hold the same cells, in
// the same order, read forwards and backwards.
TEST_CASE("cell_map: packed rows hold exactly what B-tree rows hold", "[cell_map]") {
  const std::vector<std::size_t> sizes = {0, 1, 11, 12, 13, 63, 64, 127, 128, 129, 300, 1000, 2047, 2048, 2049, 5000};
  const std::vector<std::int64_t> times = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, 1700000000000, INT64_MAX - 1, INT64_MAX};
  const std::vector<std::string> quals = {
      "", std::string(1, '\0'), "f", "field0", "field9", std::string(127, 'q'), std::string(128, 'q'), "\xff"};
  const std::vector<std::string> rows = {"r", "user1", std::string(40, 'k'), std::string(1, '\0')};
  std::mt19937_64 rng(7);
  const cell_map::packing small = GENERATE(cell_map::packing{}, cell_map::packing{200, 8});
  cell_map packed(small), plain(cell_map::packing::none());
  auto pick = [&](const auto& v) { return v[rng() % v.size()]; };
  auto value_of = [&] {
    const std::size_t n = rng() % 4 != 0 ? sizes[rng() % 7] : pick(sizes);  // mostly small
    std::string v(n, '\0');
    for (auto& c : v) c = static_cast<char>(rng());
    return v;
  };
  auto expiry_of = [&] { return rng() % 3 == 0 ? pick(times) : INT64_MAX; };
  std::size_t most_packed = 0;
  auto same = [&] {
    REQUIRE(packed.size() == plain.size());
    REQUIRE(packed.rows() == plain.rows());
    auto a = packed.begin();
    for (auto b = plain.begin(); b != plain.end(); ++a, ++b) {
      REQUIRE(a != packed.end());
      REQUIRE(a.row() == b.row());
      REQUIRE(a.qualifier() == b.qualifier());
      REQUIRE(a.ts() == b.ts());
      REQUIRE(a.value().value == b.value().value);
      REQUIRE(a.value().expires_at == b.value().expires_at);
    }
    REQUIRE(a == packed.end());
    REQUIRE(packed.bytes() == packed.bytes_recounted());
    REQUIRE(plain.bytes() == plain.bytes_recounted());
    auto x = packed.end();
    for (auto y = plain.end(); y != plain.begin();) {
      --x;
      --y;
      REQUIRE(x.qualifier() == y.qualifier());
      REQUIRE(x.ts() == y.ts());
      REQUIRE(x.value().value == y.value().value);
    }
  };
  for (int step = 0; step < 6000; ++step) {
    const std::string row = pick(rows), q = pick(quals);
    const std::int64_t ts = pick(times);
    const key_view k{row, q, ts};
    const auto op = rng() % 10;
    if (op < 5) {
      const std::string v = value_of();
      const std::int64_t e = expiry_of();
      auto [a, ai] = packed.try_emplace(k);
      auto [b, bi] = plain.try_emplace(k);
      REQUIRE(ai == bi);
      REQUIRE(a.value().value == b.value().value);
      packed.assign(a, cell_value{short_bytes(v), e});
      plain.assign(b, cell_value{short_bytes(v), e});
      REQUIRE(a.qualifier() == q);  // the iterator follows its cell, packed or moved to a B-tree
      REQUIRE(a.ts() == ts);
      REQUIRE(a.value().value == v);
      REQUIRE(a.value().expires_at == e);
    } else if (op < 7) {
      auto a = packed.lower_bound(k);
      auto b = plain.lower_bound(k);
      REQUIRE((a == packed.end()) == (b == plain.end()));
      if (b == plain.end()) continue;
      a = packed.erase(a);
      b = plain.erase(b);
      REQUIRE((a == packed.end()) == (b == plain.end()));
      if (b != plain.end()) REQUIRE(at_of(a) == at_of(b));
    } else if (op < 9) {  // a column's only version takes a newer timestamp and a new value
      auto a = packed.newest_of(row, q);
      auto b = plain.newest_of(row, q);
      REQUIRE((a == packed.end()) == (b == plain.end()));
      if (b == plain.end() || b.ts() == INT64_MAX) continue;
      // The column's cells, counted in the B-tree map: the newest is its only one exactly
      // when no cell of it follows.
      std::size_t versions = 0;
      for (auto c = b; c != plain.end() && c.row() == row && c.qualifier() == q; ++c) ++versions;
      REQUIRE(cell_map::last_of_column(a) == (versions == 1));
      REQUIRE(cell_map::last_of_column(b) == (versions == 1));
      if (versions != 1) continue;
      const std::int64_t newer =
          b.ts() < INT64_MAX - 1000 ? b.ts() + 1 + static_cast<std::int64_t>(rng() % 1000) : INT64_MAX;
      const std::string v = value_of();
      const std::int64_t e = expiry_of();
      cell_value va{short_bytes(v), e}, vb{short_bytes(v), e};
      packed.reserve(a, newer, va);
      packed.replace(a, newer, std::move(va));
      plain.reserve(b, newer, vb);
      plain.replace(b, newer, std::move(vb));
      REQUIRE(a.ts() == newer);
      REQUIRE(a.value().value == v);
    } else {
      auto a = packed.find(k);
      auto b = plain.find(k);
      REQUIRE((a == packed.end()) == (b == plain.end()));
      if (b != plain.end()) REQUIRE(a.value().value == b.value().value);
    }
    most_packed = std::max(most_packed, packed.packed_rows().first);
    if (step % 50 == 0) same();
  }
  same();
  // Rows were packed while small (each row here grows past the limits in the end).
  CHECK(most_packed > 0);
  CHECK(plain.packed_rows().first == 0);
}

TEST_CASE("cell_map: a row of ten small cells is one packed block of their bytes", "[cell_map]") {
  cell_map m;
  for (int q = 0; q < 10; ++q) {
    auto it = m.try_emplace(key_view{"user1", "field" + std::to_string(q), 1700000000000}).first;
    m.assign(it, cell_value{short_bytes(std::string(10, 'v')), INT64_MAX});
  }
  // Per cell: 1 + 6 bytes of qualifier, 1 of timestamp, 1 + 10 of value.
  CHECK(m.packed_rows() == std::pair<std::size_t, std::size_t>{1, 190});
  // A value that would pass the block's limit moves the row to a B-tree, cells intact.
  auto it = m.find(key_view{"user1", "field4", 1700000000000});
  m.assign(it, cell_value{short_bytes(std::string(5000, 'w')), INT64_MAX});
  CHECK(m.packed_rows().first == 0);
  CHECK(it.value().value == std::string(5000, 'w'));
  std::size_t n = 0;
  for (auto c = m.begin(); c != m.end(); ++c, ++n)
    CHECK(c.value().value == (c.qualifier() == "field4" ? std::string(5000, 'w') : std::string(10, 'v')));
  CHECK(n == 10);
}

TEST_CASE("cell_map: bytes() is what each layout takes, and take_bytes_change() reports each change once",
          "[cell_map][memory]") {
  // YCSB's rows: a 23-byte key, ten 6-byte qualifiers with 10-byte values.
  cell_map packed, plain(cell_map::packing::none());
  const int rows = 100;
  std::int64_t taken = 0;
  for (int r = 0; r < rows; ++r) {
    const std::string row = "user" + std::to_string(1000000000000000000ll + r);
    for (int q = 0; q < 10; ++q) {
      const std::string qualifier = "field" + std::to_string(q);
      const key_view k{row, qualifier, 1700000000000};
      for (cell_map* m : {&packed, &plain}) {
        auto it = m->try_emplace(k).first;
        m->assign(it, cell_value{short_bytes(std::string(10, 'v')), INT64_MAX});
      }
    }
    taken += packed.take_bytes_change();
  }
  const std::int64_t cells = rows * 10;
  CHECK(taken == packed.bytes());
  CHECK(packed.take_bytes_change() == 0);
  REQUIRE(packed.packed_rows().first == rows);
  // Packed: the cells' bytes (packed_rows) in blocks of jemalloc's sizes, and per row its
  // node and index slots, less than a B-tree slot per cell.
  const auto block_bytes = static_cast<std::int64_t>(packed.packed_rows().second);
  CHECK(packed.bytes() >= block_bytes + rows * cell_map::index_slot_bytes);
  CHECK(packed.bytes() < cells * cell_map::tree_slot_bytes);
  CHECK(packed.bytes() <= block_bytes * 5 / 4 + rows * (128 + cell_map::index_slot_bytes));
  // B-tree rows: a slot per cell (the 10-byte values held in place).
  CHECK(plain.bytes() >= cells * cell_map::tree_slot_bytes);
  CHECK(plain.bytes() == plain.bytes_recounted());
  // A row moved from packed to a B-tree costs a B-tree row's bytes from then on.
  {
    const std::string row = "user" + std::to_string(1000000000000000000ll);
    auto it = packed.find(key_view{row, "field4", 1700000000000});
    const std::int64_t before = packed.bytes();
    packed.assign(it, cell_value{short_bytes(std::string(5000, 'w')), INT64_MAX});
    const auto on_heap = static_cast<std::int64_t>(cellar::detail::packed::block::size_class(5000));
    CHECK(packed.packed_rows().first == rows - 1);
    CHECK(packed.bytes() - before >= 9 * cell_map::tree_slot_bytes + on_heap - 200);
    CHECK(packed.take_bytes_change() == packed.bytes() - before);
  }
  const std::int64_t reported = packed.bytes();
  packed.clear();
  CHECK(packed.bytes() == 0);
  CHECK(packed.take_bytes_change() == -reported);
}
