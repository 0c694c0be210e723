// A bulk load taken by a memtable whose snapshot delta is tracked (partition/memtable.h:
// load_cells): a loaded layer over the changes before it, handed over by the cut, put back
// by a failed snapshot, and made into one delta (persist/loaded_cells.h: materialize).
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "partition/memtable.h"
#include "persist/codec.h"
#include "persist/loaded_cells.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

table_schema schema_ab() {
  table_schema s;
  s.name = "t";
  s.partitioned = true;
  s.families = {{family_descriptor{"a", 3, 0}, 1}, {family_descriptor{"b", 3, 0}, 2}};
  return s;
}

// A cell file's records (docs/backup.md, "Snapshot files"): (key, value) in key order.
std::shared_ptr<const loaded_cells> records(const std::vector<std::pair<std::string, std::string>>& cells,
                                            loaded_cells::id_map ids) {
  std::string out;
  for (const auto& [key, value] : cells) {
    put_bytes(out, key);
    put_u64(out, static_cast<std::uint64_t>(latest_timestamp));
    put_bytes(out, value);
  }
  return std::make_shared<const loaded_cells>(std::move(out), std::move(ids), cells.size());
}

// A delta as key -> value ("-" for an erasure).
std::map<std::string, std::string> entries(const delta_map& d) {
  std::map<std::string, std::string> out;
  for (const auto& [key, c] : d) out[std::string(key.bytes)] = c.present ? std::string(c.value()) : "-";
  return out;
}

std::string value_of(const memtable& m, const table_schema& s, const std::string& row) {
  auto r = m.read_row(s, row, read_options{}, false, 100);
  return r.cells.empty() ? "" : r.cells.front().value;
}

std::string key(std::uint32_t family, const std::string& row) { return encode_cell_key(family, row, "q", 5); }

}  // namespace

TEST_CASE("a tracked bulk load is a layer over the changes before it; cut, merge back and materialize keep the order",
          "[memtable][bulk]") {
  memory_pool pool;
  memtable m(&pool);
  m.track(true, false);
  const auto s = schema_ab();
  // Before the load: a cell the load replaces, one it leaves, one erased that it puts back.
  REQUIRE(m.apply(s, put("r4").add("a", "q", 5, "gone"), 100).is_ok());
  (void)m.take_delta();  // r4 is in the files now
  REQUIRE(m.apply(s, put("r1").add("a", "q", 5, "before"), 100).is_ok());
  REQUIRE(m.apply(s, put("r2").add("a", "q", 5, "kept"), 100).is_ok());
  REQUIRE(m.apply(s, deletion("r4").columns("a", "q"), 100).is_ok());
  // The file's family 7 is the table's 1 ("a"), its 9 the table's 2 ("b").
  m.load_cells(
      records({{key(7, "r1"), "loaded"}, {key(7, "r3"), "loaded"}, {key(7, "r4"), "back"}, {key(9, "r1"), "b-loaded"}},
              {{7, 1}, {9, 2}}));
  CHECK(m.delta_size() == 0);  // the load is not copied into the delta
  REQUIRE(m.apply(s, put("r3").add("a", "q", 5, "after"), 100).is_ok());
  CHECK(value_of(m, s, "r1") == "loaded");
  CHECK(value_of(m, s, "r3") == "after");
  CHECK(value_of(m, s, "r4") == "back");

  auto tail = m.take_delta();
  auto layers = m.take_loaded();
  REQUIRE(layers.size() == 1);
  CHECK(layers[0].before->size() == 3);  // r1, r2, and r4's erasure
  CHECK(m.take_loaded().empty());
  const std::map<std::string, std::string> want{{key(1, "r1"), "loaded"},
                                                {key(1, "r2"), "kept"},
                                                {key(1, "r3"), "after"},
                                                {key(1, "r4"), "back"},
                                                {key(2, "r1"), "b-loaded"}};
  CHECK(entries(materialize(layers, tail)) == want);

  // A failed snapshot hands the cut back; a change made since is newer than all of it.
  REQUIRE(m.apply(s, put("r2").add("a", "q", 5, "newer"), 100).is_ok());
  m.merge_delta(std::move(tail), std::move(layers));
  auto tail2 = m.take_delta();
  auto layers2 = m.take_loaded();
  REQUIRE(layers2.size() == 1);
  auto want2 = want;
  want2[key(1, "r2")] = "newer";
  CHECK(entries(materialize(layers2, tail2)) == want2);
}

TEST_CASE("two loads between cuts stay in order, and an older cut handed back goes under both", "[memtable][bulk]") {
  memory_pool pool;
  memtable m(&pool);
  m.track(true, false);
  const auto s = schema_ab();
  REQUIRE(m.apply(s, put("r1").add("a", "q", 5, "old"), 100).is_ok());
  auto older = m.take_delta();
  m.load_cells(records({{key(1, "r1"), "one"}, {key(1, "r2"), "one"}}, {{1, 1}}));
  REQUIRE(m.apply(s, put("r2").add("a", "q", 5, "between"), 100).is_ok());
  m.load_cells(records({{key(1, "r2"), "two"}}, {{1, 1}}));
  m.merge_delta(std::move(older));
  auto tail = m.take_delta();
  auto layers = m.take_loaded();
  REQUIRE(layers.size() == 2);
  CHECK(entries(materialize(layers, tail)) ==
        std::map<std::string, std::string>{{key(1, "r1"), "one"}, {key(1, "r2"), "two"}});
  CHECK(value_of(m, s, "r2") == "two");
}

TEST_CASE("without a tracked snapshot delta a load leaves no layer", "[memtable][bulk]") {
  memory_pool pool;
  memtable m(&pool);
  const auto s = schema_ab();
  m.load_cells(records({{key(1, "r1"), "v"}}, {{1, 1}}));
  CHECK(value_of(m, s, "r1") == "v");
  CHECK(m.take_loaded().empty());
}

TEST_CASE("a loaded file's families come in the order of the table's ids", "[bulk]") {
  // The file's ids 1 and 2 are the table's 5 and 3: the table's key order puts 2 first.
  auto cells = records({{key(1, "a"), "x"}, {key(1, "b"), "y"}, {key(2, "a"), "z"}}, {{1, 5}, {2, 3}});
  REQUIRE(cells->families().size() == 2);
  CHECK(cells->families()[0].table_id == 3);
  CHECK(cells->families()[1].table_id == 5);
  std::vector<std::string> keys;
  visit_cells(
      *cells, [](std::uint32_t id) { return id != 0; },
      [&](std::string_view k, std::int64_t, std::string_view v) {
        keys.push_back(std::string(k) + "=" + std::string(v));
        return 0;
      });
  CHECK(keys == std::vector<std::string>{key(3, "a") + "=z", key(5, "a") + "=x", key(5, "b") + "=y"});
}
