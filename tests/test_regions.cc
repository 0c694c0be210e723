// Splits and merges of RANGE partitions (store::split_region, split_table, split_partition,
// merge_regions) while a writer and a reader keep going: the model check is that no
// acknowledged write is lost or applied twice, and that every scan returns each row once,
// in order, across the new bounds. Also: the new partitions after a restart, the middle
// rows splits without a key choose, and what is refused.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cellar/store.h"
#include "status_checks.h"
#include "support/store_fixture.h"

namespace {

using cellar::code;
using cellar::partition_spec;

std::string row(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "r%05d", i);
  return b;
}

std::unique_ptr<cellar::store> open_store(const std::string& dir) {
  auto o = testsupport::store_options_for(dir, dir.empty() ? cellar::durability::snapshot : cellar::durability::log);
  o.split_check_interval = std::chrono::milliseconds(0);  // splits by size only at compact()
  return testsupport::open_ok(o);
}

void create(cellar::store& s, const std::string& name, partition_spec p,
            std::map<std::string, std::string> attributes = {}) {
  cellar::table_descriptor d;
  d.name = name;
  d.attributes = std::move(attributes);
  d.partitioning = std::move(p);
  cellar::family_descriptor f;
  f.name = "f";
  d.families = {f};
  REQUIRE_OK(s.create_table(d, cellar::schema_origin::hbase_shell));
}

std::vector<std::string> all_rows(cellar::table& t, bool reversed = false) {
  cellar::scan sc;
  sc.reversed(reversed);
  auto s = t.scan(sc);
  REQUIRE_OK(s);
  auto rows = s->all();
  REQUIRE_OK(rows);
  std::vector<std::string> out;
  for (const auto& r : rows.value()) out.push_back(r.row);
  return out;
}

using testsupport::temp_dir;

// Writes rows 0, 1, 2, ... and increments a counter once per row, until told to stop;
// `acked` is the number of rows whose put and increment both returned OK.
void write_until(cellar::table t, std::atomic<bool>& stop, std::atomic<int>& acked, std::atomic<int>& failures) {
  for (int i = 0; !stop.load(); ++i) {
    bool ok = t.put(cellar::put(row(i)).add("f", "q", std::to_string(i))).is_ok();
    ok = ok && t.increment_column_value("zz-counter", "f", "n", 1).is_ok();
    if (!ok) {
      ++failures;
      return;
    }
    acked.store(i + 1);
  }
}

// Scans the rows again and again: each scan in order, each row once, and every row acked
// before the scan began present in it.
void read_until(cellar::table t, std::atomic<bool>& stop, std::atomic<int>& acked, std::atomic<int>& bad,
                std::atomic<int>& scans) {
  while (!stop.load()) {
    const int before = acked.load();
    const bool reversed = scans.load() % 2 == 1;
    cellar::scan sc;
    sc.reversed(reversed);
    sc.stop_row("zz");
    if (reversed) {
      sc.start_row("r99999");
      sc.stop_row("");
    }
    auto s = t.scan(sc);
    if (!s) {
      ++bad;
      return;
    }
    auto rows = s->all();
    if (!rows) {
      ++bad;
      return;
    }
    std::vector<std::string> got;
    for (const auto& r : rows.value()) got.push_back(r.row);
    if (reversed) std::reverse(got.begin(), got.end());
    bool fine = std::adjacent_find(got.begin(), got.end(),
                                   [](const std::string& a, const std::string& b) { return !(a < b); }) == got.end();
    for (int i = 0; fine && i < before; ++i) fine = std::binary_search(got.begin(), got.end(), row(i));
    if (!fine) ++bad;
    ++scans;
  }
}

}  // namespace

TEST_CASE("split and merge under a writer and a reader: nothing lost, nothing twice, scans in order", "[regions]") {
  for (bool persistent : {false, true}) {
    temp_dir dir;
    auto s = open_store(persistent ? dir.path : "");
    create(*s, "rg", partition_spec::range_bounds({"r02000"}));
    auto t = s->open_table("rg");
    REQUIRE_OK(t);
    std::atomic<bool> stop{false};
    std::atomic<int> acked{0}, failures{0}, bad{0}, scans{0};
    std::thread writer(write_until, t.value(), std::ref(stop), std::ref(acked), std::ref(failures));
    std::thread reader(read_until, t.value(), std::ref(stop), std::ref(acked), std::ref(bad), std::ref(scans));
    auto wait_rows = [&](int n) {
      while (acked.load() < n && failures.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    wait_rows(300);
    REQUIRE_OK(s->split_region("rg", "r00100"));
    wait_rows(600);
    REQUIRE_OK(s->split_region("rg", "r00500"));
    REQUIRE_OK(s->merge_regions("rg", 0));
    wait_rows(900);
    REQUIRE_OK(s->split_region("rg", "r00050"));
    REQUIRE_OK(s->merge_regions("rg", 1));
    const int scans_before = scans.load();
    while (scans.load() < scans_before + 3 && bad.load() == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stop = true;
    writer.join();
    reader.join();
    CHECK(failures.load() == 0);
    CHECK(bad.load() == 0);
    const int n = acked.load();
    auto rows = all_rows(t.value());
    REQUIRE(rows.size() == static_cast<std::size_t>(n) + 1);
    for (int i = 0; i < n; ++i) CHECK(rows[static_cast<std::size_t>(i)] == row(i));
    auto counter = t->get(cellar::get("zz-counter"));
    REQUIRE_OK(counter);
    REQUIRE(counter->cells.size() == 1);
    // Each increment applied exactly once (an increment both sides of the split saw twice
    // would count more; a lost one less).
    CHECK(test_util::be64(n) == counter->cells[0].value);
    auto regions = s->list_regions("rg");
    REQUIRE_OK(regions);
    REQUIRE(regions->size() == 3);
    CHECK(regions.value()[0].end_key == "r00050");
    CHECK(regions.value()[1].start_key == "r00050");
    CHECK(regions.value()[1].end_key == "r02000");
    std::uint64_t cells = 0;
    for (const auto& r : regions.value()) cells += r.cells;
    CHECK(cells == static_cast<std::uint64_t>(n) + 1);
    if (persistent) {
      REQUIRE_OK(s->close());
      s = open_store(dir.path);
      auto again = s->open_table("rg");
      REQUIRE_OK(again);
      CHECK(all_rows(again.value()).size() == static_cast<std::size_t>(n) + 1);
      auto d = s->describe("rg");
      REQUIRE_OK(d);
      CHECK(d->partitioning.bounds == std::vector<std::string>{"r00050", "r02000"});
    }
  }
}

TEST_CASE("a one-partition table splits into RANGE partitions; KEY partitions do not split", "[regions]") {
  auto s = open_store("");
  create(*s, "one", partition_spec::single());
  auto t = s->open_table("one");
  REQUIRE_OK(t);
  for (int i = 0; i < 10; ++i) REQUIRE_OK(t->put(cellar::put(row(i)).add("f", "q", "v")));
  REQUIRE_OK(s->split_region("one", row(5)));
  auto r = s->list_regions("one");
  REQUIRE_OK(r);
  REQUIRE(r->size() == 2);
  CHECK(r.value()[0].cells == 5);
  CHECK(r.value()[1].cells == 5);
  CHECK(all_rows(t.value(), true).front() == row(9));

  create(*s, "hashed", partition_spec::hash(4));
  REQUIRE_CODE(s->split_region("hashed", "k"), code::unsupported);
  REQUIRE_CODE(s->merge_regions("hashed", 0), code::unsupported);
  REQUIRE_CODE(s->split_region("nope", "k"), code::table_not_found);
  REQUIRE_CODE(s->merge_regions("one", 1), code::invalid_argument);
  REQUIRE_CODE(s->split_region("one", ""), code::invalid_argument);
  REQUIRE_CODE(s->split_region("one", row(5)), code::invalid_argument);
}

TEST_CASE("namespaces through the embedded API: ns:table names, default:t is t", "[namespace]") {
  auto s = open_store("");
  REQUIRE_CODE(s->create_namespace({"bad:name", {}}), code::invalid_argument);
  REQUIRE_OK(s->create_namespace({"app", {{"hbase.namespace.quota.maxregions", "3"}}}));
  create(*s, "app:a", partition_spec::range_bounds({"m"}));
  REQUIRE_CODE(s->split_region("app:a", "t"), code::ok);
  REQUIRE_CODE(s->split_region("app:a", "x"), code::invalid_argument);  // the maxregions quota
  create(*s, "default:plain", partition_spec::single());
  CHECK(s->list_tables() == std::vector<std::string>{"app:a", "plain"});
  REQUIRE_OK(s->open_table("default:plain"));
  auto tables = s->list_namespace_tables("app");
  REQUIRE_OK(tables);
  CHECK(tables.value() == std::vector<std::string>{"app:a"});
  REQUIRE_CODE(s->drop_namespace("app"), code::invalid_argument);
  REQUIRE_OK(s->drop_table("app:a"));
  REQUIRE_OK(s->drop_namespace("app"));
  REQUIRE_CODE(s->describe_namespace("app"), code::not_found);
}

TEST_CASE("MAX_FILESIZE: a partition grown past it splits at its middle row", "[regions]") {
  auto s = open_store("");
  create(*s, "big", partition_spec::single(), {{"MAX_FILESIZE", "2097152"}});
  create(*s, "nolimit", partition_spec::single());
  create(*s, "off", partition_spec::single(), {{"MAX_FILESIZE", "2097152"}, {"SPLIT_ENABLED", "false"}});
  const std::string value(8192, 'v');
  for (const char* name : {"big", "nolimit", "off"}) {
    auto t = s->open_table(name);
    REQUIRE_OK(t);
    for (int i = 0; i < 400; ++i) REQUIRE_OK(t->put(cellar::put(row(i)).add("f", "q", value)));
    REQUIRE_OK(s->compact(name));
  }
  auto big = s->list_regions("big");
  REQUIRE_OK(big);
  REQUIRE(big->size() == 2);  // about 3.2 MiB: one split leaves two halves under 2 MiB
  CHECK(big.value()[0].end_key == row(200));
  CHECK(big.value()[0].cells == 200);
  CHECK(big.value()[1].cells == 200);
  auto t = s->open_table("big");
  REQUIRE_OK(t);
  CHECK(all_rows(t.value()).size() == 400);
  for (const char* name : {"nolimit", "off"}) {
    auto r = s->list_regions(name);
    REQUIRE_OK(r);
    CHECK(r->size() == 1);
  }
}

TEST_CASE("split_table and split_partition at middle rows under a writer and a reader: nothing lost, nothing twice",
          "[regions]") {
  auto s = open_store("");
  // The upper bound is far above the rows written, so only the counter's row lies past it.
  create(*s, "mid", partition_spec::range_bounds({"r90000"}));
  auto t = s->open_table("mid");
  REQUIRE_OK(t);
  std::atomic<bool> stop{false};
  std::atomic<int> acked{0}, failures{0}, bad{0}, scans{0};
  std::thread writer(write_until, t.value(), std::ref(stop), std::ref(acked), std::ref(failures));
  std::thread reader(read_until, t.value(), std::ref(stop), std::ref(acked), std::ref(bad), std::ref(scans));
  auto wait_rows = [&](int n) {
    while (acked.load() < n && failures.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  wait_rows(300);
  // Partition 0 holds the rows written so far, partition 1 the counter's row alone.
  auto first = s->split_table("mid");
  REQUIRE_OK(first);
  CHECK(first.value() == 1);
  wait_rows(600);
  // Both halves of partition 0 hold two rows or more now (the second took the new ones).
  auto second = s->split_table("mid");
  REQUIRE_OK(second);
  CHECK(second.value() == 2);
  wait_rows(900);
  REQUIRE_OK(s->split_partition("mid", 3));  // the highest rows, written since
  const int scans_before = scans.load();
  while (scans.load() < scans_before + 3 && bad.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  stop = true;
  writer.join();
  reader.join();
  CHECK(failures.load() == 0);
  CHECK(bad.load() == 0);
  const int n = acked.load();
  auto rows = all_rows(t.value());
  REQUIRE(rows.size() == static_cast<std::size_t>(n) + 1);
  for (int i = 0; i < n; ++i) CHECK(rows[static_cast<std::size_t>(i)] == row(i));
  auto counter = t->get(cellar::get("zz-counter"));
  REQUIRE_OK(counter);
  REQUIRE(counter->cells.size() == 1);
  CHECK(test_util::be64(n) == counter->cells[0].value);
  auto regions = s->list_regions("mid");
  REQUIRE_OK(regions);
  REQUIRE(regions->size() == 6);
  CHECK(regions->back().start_key == "r90000");
  CHECK(regions->back().cells == 1);
  std::uint64_t cells = 0;
  for (const auto& r : regions.value()) {
    CHECK(r.cells > 0);  // each split was at a middle row, so no side is empty
    cells += r.cells;
  }
  CHECK(cells == static_cast<std::uint64_t>(n) + 1);
}

TEST_CASE("split_table and split_partition: middle rows, a key within the region's bounds, what is refused",
          "[regions]") {
  auto s = open_store("");
  create(*s, "m2", partition_spec::range_bounds({row(10)}));
  auto t = s->open_table("m2");
  REQUIRE_OK(t);
  for (int i = 0; i < 13; ++i) REQUIRE_OK(t->put(cellar::put(row(i)).add("f", "q", "v")));
  // Ten rows below row(10) split at the sixth, three above it at the second.
  auto n = s->split_table("m2");
  REQUIRE_OK(n);
  CHECK(n.value() == 2);
  auto d = s->describe("m2");
  REQUIRE_OK(d);
  CHECK(d->partitioning.bounds == std::vector<std::string>{row(5), row(10), row(11)});
  // Region 3 holds row(11) and row(12): its middle row is row(12).
  REQUIRE_OK(s->split_partition("m2", 3));
  // Region 0 ([start, row(5))) at a key within it.
  REQUIRE_OK(s->split_partition("m2", 0, row(2)));
  d = s->describe("m2");
  REQUIRE_OK(d);
  CHECK(d->partitioning.bounds == std::vector<std::string>{row(2), row(5), row(10), row(11), row(12)});
  auto outside = s->split_partition("m2", 1, row(7));
  REQUIRE_CODE(outside, code::invalid_argument);
  CHECK(outside.message().find("from '" + row(2) + "' up to '" + row(5) + "'") != std::string::npos);
  REQUIRE_CODE(s->split_partition("m2", 5, row(1)), code::invalid_argument);  // below the last region
  REQUIRE_CODE(s->split_partition("m2", 1, row(2)), code::invalid_argument);  // its start already
  REQUIRE_CODE(s->split_partition("m2", 9), code::invalid_argument);          // no region 9
  REQUIRE_CODE(s->split_partition("m2", 5), code::invalid_argument);          // one row: no middle
  REQUIRE_CODE(s->split_partition("nope", 0), code::table_not_found);
  REQUIRE_CODE(s->split_table("nope"), code::table_not_found);
  d = s->describe("m2");
  REQUIRE_OK(d);
  CHECK(d->partitioning.bounds.size() == 5);  // nothing refused changed anything
  CHECK(all_rows(t.value()).size() == 13);

  create(*s, "hashed", partition_spec::hash(4));
  REQUIRE_CODE(s->split_table("hashed"), code::unsupported);
  REQUIRE_CODE(s->split_partition("hashed", 0), code::unsupported);
  create(*s, "empty", partition_spec::range_bounds({"m"}));
  auto none = s->split_table("empty");
  REQUIRE_OK(none);
  CHECK(none.value() == 0);

  // The namespace's region quota holds for the whole table's split at once.
  REQUIRE_OK(s->create_namespace({"app", {{"hbase.namespace.quota.maxregions", "3"}}}));
  create(*s, "app:q", partition_spec::range_bounds({"m"}));
  auto q = s->open_table("app:q");
  REQUIRE_OK(q);
  for (const char* r : {"a", "b", "n", "o"}) REQUIRE_OK(q->put(cellar::put(r).add("f", "q", "v")));
  REQUIRE_CODE(s->split_table("app:q"), code::invalid_argument);
  auto regions = s->list_regions("app:q");
  REQUIRE_OK(regions);
  CHECK(regions->size() == 2);
  REQUIRE_OK(s->split_partition("app:q", 1));
  regions = s->list_regions("app:q");
  REQUIRE_OK(regions);
  CHECK(regions->size() == 3);
}

TEST_CASE("split_table's splits survive a restart", "[regions]") {
  temp_dir dir;
  std::vector<std::string> bounds;
  {
    auto s = open_store(dir.path);
    create(*s, "kept", partition_spec::range_bounds({row(4)}));
    auto t = s->open_table("kept");
    REQUIRE_OK(t);
    for (int i = 0; i < 8; ++i) REQUIRE_OK(t->put(cellar::put(row(i)).add("f", "q", "v")));
    auto n = s->split_table("kept");
    REQUIRE_OK(n);
    CHECK(n.value() == 2);
    auto d = s->describe("kept");
    REQUIRE_OK(d);
    bounds = d->partitioning.bounds;
    CHECK(bounds == std::vector<std::string>{row(2), row(4), row(6)});
    REQUIRE_OK(s->close());
  }
  auto s = open_store(dir.path);
  auto d = s->describe("kept");
  REQUIRE_OK(d);
  CHECK(d->partitioning.bounds == bounds);
  auto t = s->open_table("kept");
  REQUIRE_OK(t);
  CHECK(all_rows(t.value()).size() == 8);
  auto regions = s->list_regions("kept");
  REQUIRE_OK(regions);
  REQUIRE(regions->size() == 4);
  for (const auto& r : regions.value()) CHECK(r.cells == 2);
}
