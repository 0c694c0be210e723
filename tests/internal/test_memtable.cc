#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "partition/memtable.h"
#include "persist/redo_log.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

table_schema schema_with(std::uint32_t max_versions = 0, std::int64_t ttl = 0) {
  table_schema s;
  s.name = "t";
  s.partitioned = true;
  family_descriptor a{"a", max_versions, ttl};
  family_descriptor b{"b", max_versions, ttl};
  s.families = {{a, 1}, {b, 2}};
  return s;
}

}  // namespace

TEST_CASE("a unit that fails is undone to the byte", "[memtable]") {
  memory_pool pool;
  memtable m(&pool);
  auto s = schema_with();
  REQUIRE(m.apply(s, put("r1").add("a", "q", 1, "one").add("b", "q", 1, "x"), 100).is_ok());
  const auto before = m.stats();
  const auto global_before = pool.used();

  m.begin();
  REQUIRE(m.apply(s, put("r1").add("a", "q", 1, "overwritten").add("a", "q", 2, "new"), 100).is_ok());
  REQUIRE(m.apply(s, deletion("r1").family("b"), 100).is_ok());
  REQUIRE(m.apply(s, put("r2").add("a", "q", "fresh"), 100).is_ok());
  m.rollback();

  CHECK(m.stats().cells == before.cells);
  CHECK(m.stats().bytes == before.bytes);
  CHECK(pool.used() == global_before);
  read_options all;
  all.max_versions = 10;
  auto r = m.read_row(s, "r1", all, false, 100);
  REQUIRE(r.cells.size() == 2);
  CHECK(r.cells[0].family == "a");
  CHECK(r.cells[0].value == "one");
  CHECK(r.cells[1].family == "b");
  CHECK(m.read_row(s, "r2", all, false, 100).cells.empty());
}

TEST_CASE("reclaim erases expired cells and versions beyond MaxVersions in slices", "[memtable]") {
  memory_pool pool;
  memtable m(&pool);
  // Written under a schema that keeps everything, then reclaimed under one altered to
  // 2 versions and a 10 s TTL (a write trims its own column at once; see below).
  const auto wide = schema_with();
  auto s = schema_with(2, 10);
  const std::int64_t now = 1'000'000;
  for (int row = 0; row < 50; ++row)
    for (std::int64_t ts = 1; ts <= 5; ++ts)
      REQUIRE(m.apply(wide, put("r" + std::to_string(row)).add("a", "q", now - ts, "v"), now).is_ok());
  REQUIRE(m.apply(wide, put("old").add("b", "q", now - 20'000, "expired"), now).is_ok());
  CHECK(m.stats().cells == 251);
  std::size_t erased = 0;
  int slices = 0;
  while (true) {
    auto n = m.reclaim(s, now, 16);
    erased += n;
    ++slices;
    if (m.stats().cells == 100) break;
    REQUIRE(slices < 100);
  }
  CHECK(erased == 151);
  CHECK(slices > 1);  // the work was spread over several slices
  read_options o;
  o.max_versions = 10;
  auto r = m.read_row(s, "r7", o, false, now);
  REQUIRE(r.cells.size() == 2);
  CHECK(r.cells[0].timestamp == now - 1);
  CHECK(r.cells[1].timestamp == now - 2);
  CHECK(pool.used() == static_cast<std::int64_t>(m.stats().bytes));
}

TEST_CASE("a write removes the versions of its column that no read can return any more", "[memtable]") {
  memory_pool pool;
  memtable m(&pool);
  auto s = schema_with(2);
  read_options o;
  o.max_versions = 10;
  for (std::int64_t ts = 1; ts <= 5; ++ts)
    REQUIRE(m.apply(s, put("r").add("a", "q", ts, "v" + std::to_string(ts)), 100).is_ok());
  CHECK(m.stats().cells == 2);
  auto r = m.read_row(s, "r", o, false, 100);
  REQUIRE(r.cells.size() == 2);
  CHECK(r.cells[0].timestamp == 5);
  CHECK(r.cells[1].timestamp == 4);
  // An older version than the two kept is invisible at once, and gone.
  REQUIRE(m.apply(s, put("r").add("a", "q", 1, "late"), 100).is_ok());
  CHECK(m.stats().cells == 2);
  // Other columns and families are untouched.
  REQUIRE(m.apply(s, put("r").add("a", "p", 1, "x").add("b", "q", 1, "y"), 100).is_ok());
  CHECK(m.stats().cells == 4);
  // Undone with the unit that made it.
  const auto before = m.stats();
  m.begin();
  REQUIRE(m.apply(s, put("r").add("a", "q", 6, "v6").add("a", "q", 7, "v7"), 100).is_ok());
  CHECK(m.read_row(s, "r", o, false, 100).cells[1].timestamp == 7);  // [0] is a:p
  m.rollback();
  CHECK(m.stats().cells == before.cells);
  CHECK(m.stats().bytes == before.bytes);
  CHECK(pool.used() == static_cast<std::int64_t>(before.bytes));
  r = m.read_row(s, "r", o, false, 100);
  REQUIRE(r.cells.size() == 4);
  CHECK(r.cells[0].timestamp == 1);  // a:p
  CHECK(r.cells[1].timestamp == 5);  // a:q
  CHECK(r.cells[2].timestamp == 4);
}

namespace {

// Every stored cell of `row` (all versions), as (family, qualifier, timestamp, value).
std::vector<std::tuple<std::string, std::string, std::int64_t, std::string>> stored(const memtable& m,
                                                                                    const table_schema& s,
                                                                                    const std::string& row) {
  read_options all;
  all.max_versions = 1000;
  std::vector<std::tuple<std::string, std::string, std::int64_t, std::string>> out;
  for (auto& c : m.read_row(s, row, all, false, 100).cells)
    out.emplace_back(c.family, c.qualifier, c.timestamp, c.value);
  return out;
}

}  // namespace

TEST_CASE("a family of one version: a newer put takes its column's place, as a write and a trim would", "[memtable]") {
  // The model: per column, the cell with the highest timestamp; at an equal timestamp the
  // last put's value (R4); an older put than the cell kept is dropped at once.
  memory_pool pool;
  memtable m(&pool);
  memtable replica(&pool);      // fed the snapshot delta
  memtable from_redo(nullptr);  // fed the redo
  m.track(true, true);
  auto s = schema_with(1);
  using column = std::tuple<std::string, std::string, std::string>;  // row, family, qualifier
  std::map<column, std::pair<std::int64_t, std::string>> model;
  std::mt19937 rng(19);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int step = 0; step < 4000; ++step) {
    const std::string row = "r" + std::to_string(pick(12));
    const std::string fam = pick(2) ? "a" : "b";
    const std::string q = "q" + std::to_string(pick(4));
    const bool in_unit = pick(8) == 0;
    const bool undo = in_unit && pick(2) == 0;
    auto before = model;
    if (in_unit) m.begin();
    if (pick(10) == 0) {
      REQUIRE(m.apply(s, deletion(row).columns(fam, q), 100).is_ok());
      model.erase({row, fam, q});
    } else {
      const std::int64_t ts = 1 + pick(40);
      const std::string v(static_cast<std::size_t>(pick(30)), static_cast<char>('a' + pick(26)));
      REQUIRE(m.apply(s, put(row).add(fam, q, ts, v), 100).is_ok());
      auto [it, added] = model.try_emplace({row, fam, q}, ts, v);
      if (!added && ts >= it->second.first) it->second = {ts, v};
    }
    if (in_unit) {
      if (undo) {
        m.rollback();
        model = std::move(before);
      } else {
        m.commit();
      }
    }
    // The copies follow the change records.
    replica.apply_cells(m.take_delta());
    REQUIRE(for_each_log_entry(m.redo(), [&](log_entry& e) {
              std::optional<cell_value> v;
              if (e.present) v = cell_value{short_bytes(e.value), e.expires_at};
              from_redo.replay(e.key.family, cell_key{e.key.row, e.key.qualifier, e.key.ts}, std::move(v));
            }).is_ok());
    m.clear_redo();
    REQUIRE(m.stats().cells == model.size());
    if (step % 50 != 49) continue;
    for (int r = 0; r < 12; ++r) {
      const std::string row_key = "r" + std::to_string(r);
      std::vector<std::tuple<std::string, std::string, std::int64_t, std::string>> want;
      for (auto& [k, c] : model)
        if (std::get<0>(k) == row_key) want.emplace_back(std::get<1>(k), std::get<2>(k), c.first, c.second);
      const auto got = stored(m, s, row_key);
      REQUIRE(got == want);
      REQUIRE(stored(replica, s, row_key) == want);
      REQUIRE(stored(from_redo, s, row_key) == want);
    }
    REQUIRE(replica.stats().cells == model.size());
    REQUIRE(from_redo.stats().cells == model.size());
    // The same cells, each memtable charged what its maps take (blocks grown by another
    // history may differ in size).
    REQUIRE(m.stats().bytes == m.bytes_recounted());
    REQUIRE(from_redo.stats().bytes == from_redo.bytes_recounted());
  }
  CHECK(pool.used() == static_cast<std::int64_t>(m.stats().bytes + replica.stats().bytes));
}

TEST_CASE("a family of one version: a put in place of a value of the same size keeps its block", "[memtable]") {
  memory_pool pool;
  memtable m(&pool);
  auto s = schema_with(1);
  const std::string v1(100, 'x'), v2(100, 'y'), v3(101, 'z');
  REQUIRE(m.apply(s, put("r").add("a", "q", 5, v1).add("a", "p", 5, v1), 100).is_ok());
  auto value_of = [&](std::string_view q) {
    std::vector<read_cell_view> cells;
    REQUIRE(m.read_row_views(s, "r", read_options{}, 100, cells));
    for (const auto& c : cells)
      if (c.qualifier == q) return c.value;
    FAIL("no cell " << q);
    return std::string_view{};
  };
  const char* block = value_of("q").data();
  const auto bytes = m.stats().bytes;
  REQUIRE(m.apply(s, put("r").add("a", "q", 9, v2), 100).is_ok());
  CHECK(value_of("q") == v2);
  CHECK(value_of("q").data() == block);  // overwritten where it was
  CHECK(m.stats().bytes == bytes);
  CHECK(value_of("p") == v1);
  REQUIRE(m.apply(s, put("r").add("a", "q", 10, v3), 100).is_ok());  // another size: a new block
  CHECK(value_of("q") == v3);
  CHECK(m.stats().bytes >= bytes);
  CHECK(m.stats().bytes == m.bytes_recounted());
}

TEST_CASE("a family of one version: a put in place is undone with its unit", "[memtable]") {
  memory_pool pool;
  memtable m(&pool);
  m.track(true, false);
  auto s = schema_with(1);
  REQUIRE(m.apply(s, put("r").add("a", "p", 3, "other").add("a", "q", 5, "old value"), 100).is_ok());
  memtable replica(nullptr);
  replica.apply_cells(m.take_delta());
  const auto before = m.stats();
  const auto used = pool.used();

  m.begin();
  REQUIRE(m.apply(s, put("r").add("a", "q", 9, "new"), 100).is_ok());
  REQUIRE(stored(m, s, "r")[1] ==
          std::make_tuple(std::string("a"), std::string("q"), std::int64_t{9}, std::string("new")));
  CHECK(m.stats().cells == before.cells);
  m.rollback();

  CHECK(m.stats().cells == before.cells);
  CHECK(m.stats().bytes == before.bytes);
  CHECK(pool.used() == used);
  const auto want = stored(replica, s, "r");
  REQUIRE(want.size() == 2);
  CHECK(std::get<2>(want[1]) == 5);
  CHECK(stored(m, s, "r") == want);
  // The delta holds the restored cell and not the undone one.
  replica.apply_cells(m.take_delta());
  CHECK(stored(replica, s, "r") == want);
  // A cell TTL that has already run out is not written in place: the column keeps its cell.
  REQUIRE(m.apply(s, put("r").add("a", "q", 20, "gone").ttl(1), 100).is_ok());
  CHECK(stored(m, s, "r") == want);
}

TEST_CASE("a time-series family is trimmed on write by the same rule its reads apply", "[memtable]") {
  memory_pool pool;
  memtable m(&pool);
  auto s = schema_with(2);
  s.families[0].desc.kind = family_kind::time_series;
  read_options o;
  o.max_versions = 1;  // ignored by time-series reads (TS3); the family's 2 still caps
  for (std::int64_t ts = 1; ts <= 4; ++ts) REQUIRE(m.apply(s, put("k").add("a", "s", ts, "{}"), 100).is_ok());
  CHECK(m.stats().cells == 2);
  auto r = m.read_row(s, "k", o, false, 100);
  REQUIRE(r.cells.size() == 2);
  CHECK(r.cells[0].timestamp == 4);
  CHECK(r.cells[1].timestamp == 3);
}

TEST_CASE("the memory limit refuses a write before any change", "[memtable]") {
  memory_pool pool(1000);
  memtable m(&pool);
  auto s = schema_with();
  REQUIRE(m.apply(s, put("r").add("a", "q", 1, std::string(500, 'x')), 1).is_ok());
  auto st = m.apply(s, put("r").add("a", "q2", 1, std::string(300, 'y')).add("a", "q3", 1, std::string(300, 'z')), 1);
  CHECK(st.code() == code::memory_limit);
  CHECK(m.stats().cells == 1);
  CHECK(m.apply(s, deletion("r"), 1).is_ok());
  CHECK(pool.used() == 0);
}

TEST_CASE("scan pages continue after the last examined row, both directions", "[memtable]") {
  memory_pool pool;
  memtable m(&pool);
  auto s = schema_with();
  for (char c = 'a'; c <= 'j'; ++c) REQUIRE(m.apply(s, put(std::string(1, c)).add("b", "q", 1, "v"), 1).is_ok());
  scan_page_request rq;
  rq.max_rows = 3;
  std::string seen;
  for (;;) {
    auto page = m.scan(s, rq, 1);
    for (auto& r : page.rows) seen += r.row;
    if (page.exhausted) break;
    rq.from = page.last_row;
    rq.from_inclusive = false;
  }
  CHECK(seen == "abcdefghij");
  rq = {};
  rq.reversed = true;
  rq.from = "h";
  rq.stop = "c";
  rq.max_rows = 4;
  auto page = m.scan(s, rq, 1);
  std::string rev;
  for (auto& r : page.rows) rev += r.row;
  CHECK(rev == "hgfe");
  CHECK_FALSE(page.exhausted);
}

TEST_CASE("reclaim rests once a whole pass found nothing, until a cell or a family's rules change", "[memtable]") {
  memory_pool pool;
  memtable m(&pool);
  auto s = schema_with(2);
  const std::int64_t now = 1'000'000;
  for (int row = 0; row < 20; ++row)
    REQUIRE(m.apply(s, put("r" + std::to_string(row)).add("a", "q", now - 1, "v").add("b", "q", now - 1, "w"), now)
                .is_ok());
  // Passes over all 40 cells in slices of 16 until one finds nothing to do.
  auto pass = [&] {
    std::size_t erased = 0;
    for (int i = 0; i < 3; ++i) erased += m.reclaim(s, now, 16);
    return erased;
  };
  CHECK(pass() == 0);
  CHECK(pass() == 0);
  const auto examined = m.reclaim_examined();
  CHECK(examined >= 40);
  CHECK(m.reclaim(s, now, 16) == 0);
  CHECK(m.reclaim_examined() == examined);  // settled: nothing examined

  // A write wakes it: the versions an unchanged write left are still reclaimed under
  // a narrower rule, and a narrower rule alone wakes it too.
  REQUIRE(m.apply(s, put("r3").add("a", "q", now - 2, "older"), now).is_ok());
  CHECK(m.stats().cells == 41);
  auto one = schema_with(1);
  std::size_t erased = 0;
  for (int i = 0; i < 6; ++i) erased += m.reclaim(one, now, 16);
  CHECK(erased == 1);
  CHECK(m.stats().cells == 40);
  for (int i = 0; i < 6; ++i) m.reclaim(one, now, 16);
  const auto settled = m.reclaim_examined();
  CHECK(m.reclaim(one, now, 16) == 0);
  CHECK(m.reclaim_examined() == settled);

  // A cell TTL keeps it awake: the cell expires with time, not with a change.
  REQUIRE(m.apply(one, put("r4").add("a", "t", now, "soon").ttl(10), now).is_ok());
  for (int i = 0; i < 12; ++i) m.reclaim(one, now, 16);
  CHECK(m.stats().cells == 41);
  CHECK(m.reclaim(one, now + 100, 64) + m.reclaim(one, now + 100, 64) == 1);
  CHECK(m.stats().cells == 40);

  // So does a family TTL.
  auto ttl_family = schema_with(1, 3600);
  for (int i = 0; i < 12; ++i) m.reclaim(ttl_family, now, 16);
  const auto before = m.reclaim_examined();
  m.reclaim(ttl_family, now, 16);
  CHECK(m.reclaim_examined() > before);
}

TEST_CASE("the memory pool is charged what the cells take in their layout, through every change",
          "[memtable][memory]") {
  memory_pool pool;
  std::mt19937_64 rng(42);
  {
    memtable m(&pool);
    auto s = schema_with(3);
    const std::vector<std::size_t> sizes = {0, 5, 10, 12, 13, 100, 3000};
    auto value = [&] { return std::string(sizes[rng() % sizes.size()], 'v'); };
    auto same = [&] {
      REQUIRE(static_cast<std::int64_t>(m.stats().bytes) == m.bytes_recounted());
      REQUIRE(pool.used() == static_cast<std::int64_t>(m.stats().bytes));
    };
    for (int step = 0; step < 3000; ++step) {
      const std::string row = "row" + std::to_string(rng() % 40);
      const char* fam = rng() % 2 ? "a" : "b";
      const std::string q = "q" + std::to_string(rng() % 12);
      const auto ts = static_cast<std::int64_t>(rng() % 4);
      switch (rng() % 6) {
        case 0:
        case 1:
          REQUIRE(m.apply(s, put(row).add(fam, q, ts, value()).add(fam, q + "x", ts, value()), 10).is_ok());
          break;
        case 2: REQUIRE(m.apply(s, deletion(row).column(fam, q), 10).is_ok()); break;
        case 3: REQUIRE(m.apply(s, deletion(row), 10).is_ok()); break;
        case 4: {  // a unit undone
          m.begin();
          REQUIRE(m.apply(s, put(row).add(fam, q, ts, value()), 10).is_ok());
          REQUIRE(m.apply(s, deletion(row).family(fam), 10).is_ok());
          m.rollback();
          break;
        }
        default: REQUIRE(m.apply(s, put(row).add(fam, q, ts + 10, value()), 10).is_ok());
      }
      same();
    }
    REQUIRE(m.stats().cells > 0);
    m.drop_family(1);
    same();
  }
  REQUIRE(pool.used() == 0);
}

TEST_CASE("the memory limit admits small packed cells by what they take, not a fixed overhead", "[memtable][memory]") {
  // YCSB's rows: a 23-byte key, ten 6-byte qualifiers with 10-byte values. Packed, a cell
  // takes about 20 bytes and its row's node and index slots about 11 more.
  const std::int64_t limit = 256 * 1024;
  memory_pool pool(static_cast<std::uint64_t>(limit));
  memtable m(&pool);
  auto s = schema_with();
  std::uint64_t rows = 0;
  for (;; ++rows) {
    put p("user" + std::to_string(1000000000000000000ll + static_cast<std::int64_t>(rows)));
    for (int q = 0; q < 10; ++q) p.add("a", "field" + std::to_string(q), 1, std::string(10, 'v'));
    auto st = m.apply(s, p, 1);
    if (!st.is_ok()) {
      REQUIRE(st.code() == code::memory_limit);
      break;
    }
  }
  const auto cells = static_cast<std::int64_t>(m.stats().cells);
  CHECK(cells == static_cast<std::int64_t>(rows) * 10);
  CHECK(pool.used() <= limit);
  // More than a B-tree slot per cell allows, with the limit nearly used.
  CHECK(cells > limit / cell_map::tree_slot_bytes);
  CHECK(pool.used() > limit - 10 * cell_map::tree_slot_bytes - 512);
}
