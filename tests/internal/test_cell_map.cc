// cell_map against a model: one std::map of (row, qualifier, ts) in R1 order, driven by
// random inserts, erasures and lookups over keys chosen to meet the edge cases (shared
// prefixes, bytes 0x00 and 0xff, keys longer than key_bytes holds in place, empty
// qualifiers, rows emptied and refilled).
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "partition/cell_map.h"

using cellar::detail::cell_map;
using cellar::detail::key_view;
using cellar::detail::row_probe;

namespace {

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
  cell_map m;
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
      it.value().value = v;
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
    if (step % 500 == 0) check_same(m, mo);
  }
  check_same(m, mo);
  // Empty every row through erase: no row node may survive its last cell.
  for (auto it = m.begin(); it != m.end();) it = m.erase(it);
  CHECK(m.empty());
  CHECK(m.rows() == 0);
  CHECK(m.size() == 0);
  CHECK(m.begin() == m.end());
}

TEST_CASE("cell_map: inserts through a row hint, in order and not, agree with the model", "[cell_map]") {
  const auto rows = rows_pool();
  const std::vector<std::string> quals = {"", "a", "b", std::string(30, 'q')};
  std::mt19937_64 rng(20261206);
  cell_map m;
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
      it.value().value = v;
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
  cell_map m;
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
    REQUIRE((m.cells_of(r) != nullptr) == has);
    auto lb = m.lower_bound(row_probe{r, false});
    auto mlb = mo.lower_bound(model_key{r, "", cellar::latest_timestamp});
    REQUIRE((lb == m.end()) == (mlb == mo.end()));
    if (lb != m.end()) REQUIRE(at_of(lb) == at_of(mlb));
  }
}

TEST_CASE("cell_map: a row's cells are found by hash after rows come and go around it", "[cell_map]") {
  cell_map m;
  for (int i = 0; i < 1000; ++i) {
    const std::string row = "user" + std::to_string(i);
    for (int q = 0; q < 10; ++q) m.try_emplace(key_view{row, "field" + std::to_string(q), 1}).first.value().value = row;
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
  cell_map m;
  for (auto s : {step::probe, step::node, step::cells}) m.prefetch_row("absent", s);
  CHECK(m.empty());
  for (int i = 0; i < 100; ++i) {
    const std::string row = "user" + std::to_string(i);
    for (int q = 0; q < 10; ++q) m.try_emplace(key_view{row, "field" + std::to_string(q), 1}).first.value().value = row;
  }
  for (int i = 0; i < 120; ++i)
    for (auto s : {step::probe, step::node, step::cells}) m.prefetch_row("user" + std::to_string(i), s);
  CHECK(m.rows() == 100);
  CHECK(m.size() == 1000);
  CHECK(m.find(key_view{"user7", "field3", 1}).value().value.view() == "user7");

  auto inside = [](const void* node, const void* p) {
    const auto* n = static_cast<const char*>(node);
    const auto* c = static_cast<const char*>(p);
    return c >= n && c < n + 512;
  };
  const auto* small = m.cells_of("user7");
  REQUIRE(small != nullptr);
  const void* root = cellar::detail::root_node_address(*small);
  CHECK(inside(root, &*small->begin()));
  CHECK(inside(root, &*std::prev(small->end())));

  for (int q = 0; q < 2000; ++q) m.try_emplace(key_view{"wide", "q" + std::to_string(10000 + q), 1});
  const auto* wide = m.cells_of("wide");
  REQUIRE(wide != nullptr);
  const void* wide_root = cellar::detail::root_node_address(*wide);
  REQUIRE(wide_root != nullptr);
  CHECK_FALSE(inside(wide_root, &*wide->begin()));
  CHECK_FALSE(inside(wide_root, &*std::prev(wide->end())));
}
