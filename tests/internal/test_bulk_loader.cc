// memtable::bulk_loader (recovery's load of a snapshot) against memtable::load, the plain
// path: the same cells, versions, expiries and order, the same cell count and bytes,
// whatever order the cells come in and whether they replace cells already there; and
// memtable::copy_records against copy_cells.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "partition/memtable.h"
#include "persist/codec.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

struct test_cell {
  std::uint32_t family;
  std::string row, qualifier;
  std::int64_t ts;
  std::string value;
  std::int64_t expires_at;
  std::string key() const { return encode_cell_key(family, row, qualifier, ts); }
};

// Every cell of `m` in its maps' order (family id, then R1 order), one at a time: each
// copy_cells call takes the cell after the last one taken.
std::vector<std::tuple<std::string, std::int64_t, std::string>> listing(const memtable& m) {
  std::vector<std::tuple<std::string, std::int64_t, std::string>> out;
  std::string last;
  for (;;) {
    delta_map one;
    std::string got = last;
    const bool done = m.copy_cells(last, 1, one, got);
    if (one.size() == 0) break;
    REQUIRE(one.size() == 1);
    REQUIRE(got > last);  // ascending: encoded keys sort as the maps do
    out.emplace_back(got, one.begin()->second.expires_at, std::string(one.begin()->second.value()));
    last = got;
    if (done) break;
  }
  return out;
}

void require_same(const memtable& bulk, const memtable& plain) {
  REQUIRE(bulk.stats().cells == plain.stats().cells);
  // Each charged what its maps take (a block grown cell by cell may differ in size from
  // one appended to).
  REQUIRE(static_cast<std::int64_t>(bulk.stats().bytes) == bulk.bytes_recounted());
  REQUIRE(static_cast<std::int64_t>(plain.stats().bytes) == plain.bytes_recounted());
  const auto a = listing(bulk), b = listing(plain);
  REQUIRE(a.size() == plain.stats().cells);
  REQUIRE(a == b);
}

// Cells over the edges: binary rows and qualifiers (zero bytes, 0xff, longer than a key
// holds in place), empty qualifiers, several versions of a column down to timestamp 0 and
// up to the latest, values empty, in place (12 bytes) and on the heap, expiries from none
// (latest_timestamp) to 0 and negative, in three families.
std::vector<test_cell> edge_cells(std::mt19937_64& rng) {
  const std::vector<std::string> rows = {"",
                                         std::string(1, '\0'),
                                         std::string("a\0b", 3),
                                         "a",
                                         "a\xff",
                                         std::string(28, 'r'),
                                         std::string(29, 'r'),
                                         std::string(40, '\xff'),
                                         "user1",
                                         "user10",
                                         "user2"};
  const std::vector<std::string> quals = {"", std::string(1, '\0'), "q", std::string("q\0", 2), std::string(13, 'q')};
  const std::vector<std::int64_t> times = {latest_timestamp, latest_timestamp - 1, 1000, 1, 0};
  const std::vector<std::int64_t> expiries = {latest_timestamp, 0, -5, 1, 2000};
  const std::vector<std::size_t> sizes = {0, 1, 12, 13, 100};
  std::vector<test_cell> cells;
  for (std::uint32_t f : {1u, 2u, 300u})
    for (const auto& r : rows)
      for (const auto& q : quals)
        for (auto t : times) {
          if (rng() % 4 == 0) continue;
          std::string v(sizes[rng() % sizes.size()], '\0');
          for (auto& c : v) c = static_cast<char>(rng());
          cells.push_back({f, r, q, t, v, expiries[rng() % expiries.size()]});
        }
  return cells;
}

void sort_by_key(std::vector<test_cell>& cells) {
  std::sort(cells.begin(), cells.end(), [](const test_cell& a, const test_cell& b) { return a.key() < b.key(); });
}

void load_plain(memtable& m, const test_cell& c) {
  m.load(c.family, cell_key{c.row, c.qualifier, c.ts}, cell_value{short_bytes(c.value), c.expires_at});
}

}  // namespace

TEST_CASE("bulk_loader: a base in key order, then change runs, as load() sets them", "[memtable][bulk_loader]") {
  std::mt19937_64 rng(7);
  auto base = edge_cells(rng);
  sort_by_key(base);
  memtable bulk(nullptr), plain(nullptr);
  {
    memtable::bulk_loader loader(bulk);
    for (const auto& c : base) loader.load(c.family, key_view{c.row, c.qualifier, c.ts}, c.value, c.expires_at);
  }
  // The plain path in another order: the result must not depend on it.
  auto shuffled = base;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (const auto& c : shuffled) load_plain(plain, c);
  require_same(bulk, plain);

  // Change runs: each in key order, over cells of the base (new values, new expiries) and
  // new ones (before, between and after the base's), with erasures between them.
  for (int run = 0; run < 3; ++run) {
    auto changes = edge_cells(rng);
    changes.resize(changes.size() / 3);
    for (auto& c : changes) c.value += "changed";
    sort_by_key(changes);
    {
      memtable::bulk_loader loader(bulk);
      for (const auto& c : changes) loader.load(c.family, key_view{c.row, c.qualifier, c.ts}, c.value, c.expires_at);
    }
    for (const auto& c : changes) load_plain(plain, c);
    for (std::size_t i = 0; i < base.size(); i += 7 + run) {
      const auto& c = base[i];
      bulk.unload(c.family, cell_key{c.row, c.qualifier, c.ts});
      plain.unload(c.family, cell_key{c.row, c.qualifier, c.ts});
    }
    require_same(bulk, plain);
  }
}

TEST_CASE("bulk_loader: cells out of order and repeated keys, as load() sets them", "[memtable][bulk_loader]") {
  std::mt19937_64 rng(11);
  auto cells = edge_cells(rng);
  sort_by_key(cells);
  // Mostly in order, with stretches reversed and some keys twice (the later value wins).
  for (std::size_t i = 0; i + 8 < cells.size(); i += 29) std::reverse(cells.begin() + i, cells.begin() + i + 8);
  for (std::size_t i = 0; i < cells.size(); i += 13) {
    test_cell again = cells[i];
    again.value = "again" + std::to_string(i);
    cells.insert(cells.begin() + static_cast<std::ptrdiff_t>(std::min(cells.size(), i + 3)), again);
  }
  memtable bulk(nullptr), plain(nullptr);
  {
    memtable::bulk_loader loader(bulk);
    for (const auto& c : cells) loader.load(c.family, key_view{c.row, c.qualifier, c.ts}, c.value, c.expires_at);
    loader.flush();
    REQUIRE(bulk.stats().cells == listing(bulk).size());  // counted at the flush
  }
  for (const auto& c : cells) load_plain(plain, c);
  require_same(bulk, plain);
}

TEST_CASE("bulk_loader: the memory pool is charged what the cells take, as on the plain path",
          "[memtable][bulk_loader]") {
  std::mt19937_64 rng(3);
  auto cells = edge_cells(rng);
  sort_by_key(cells);
  memory_pool pa(0), pb(0);
  {
    memtable bulk(&pa), plain(&pb);
    {
      memtable::bulk_loader loader(bulk);
      for (const auto& c : cells) loader.load(c.family, key_view{c.row, c.qualifier, c.ts}, c.value, c.expires_at);
    }
    for (const auto& c : cells) load_plain(plain, c);
    // Each what its maps take, the same cells (blocks appended to and blocks grown cell by
    // cell may differ in size).
    REQUIRE(pa.used() == bulk.bytes_recounted());
    REQUIRE(pb.used() == plain.bytes_recounted());
    REQUIRE(pa.used() > 0);
  }
  REQUIRE(pa.used() == 0);
}

TEST_CASE("copy_records copies, in chunks as records, the cells copy_cells copies", "[memtable][copy]") {
  std::mt19937_64 rng(13);
  auto cells = edge_cells(rng);
  memtable m(nullptr);
  for (const auto& c : cells) load_plain(m, c);
  const auto want = listing(m);
  for (std::size_t max_bytes : {std::size_t{1}, std::size_t{200}, std::size_t{1} << 20}) {
    INFO("max_bytes " << max_bytes);
    std::vector<std::tuple<std::string, std::int64_t, std::string>> got;
    std::string last;
    int chunks = 0;
    for (bool done = false; !done;) {
      std::string records, after = last;
      done = m.copy_records(after, max_bytes, records, last);
      ++chunks;
      cell_record_reader r(records);
      std::string_view key, value;
      std::int64_t expires = 0;
      while (r.next(key, expires, value)) got.emplace_back(std::string(key), expires, std::string(value));
      REQUIRE_FALSE(r.failed());
      if (!done) REQUIRE(last > after);  // each chunk takes up after the one before
    }
    CHECK(got == want);
    if (max_bytes == 1) CHECK(chunks >= static_cast<int>(want.size()));
  }
}
