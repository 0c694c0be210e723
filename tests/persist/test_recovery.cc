// Parallel recovery (store_options::recovery_threads): several threads reading the
// partitions at open find exactly what one thread finds, bases, change runs and the log
// replayed on top, and a damaged partition read by any of them stops the open.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../shell/process.h"
#include "cellar/store.h"
#include "crash_copy.h"

namespace fs = std::filesystem;
using namespace cellar;

namespace {

struct temp_dir : testproc::temp_dir {
  temp_dir() : testproc::temp_dir("cellar-recovery") {}
};

store_options opts(const std::string& dir, std::size_t threads, durability d = durability::log) {
  store_options o;
  o.directory = dir;
  o.durability = d;
  o.recovery_threads = threads;
  o.snapshot_interval = std::chrono::milliseconds(0);
  return o;
}

std::unique_ptr<store> open_ok(const store_options& o) {
  auto s = store::open(o);
  INFO(s.error().to_string());
  REQUIRE(s.is_ok());
  return std::move(s.value());
}

std::vector<cell> all_cells(store& s, const std::string& table) {
  auto t = s.open_table(table).value();
  std::vector<cell> out;
  for (auto& r : t.scan(scan().all_versions()).value().all().value())
    for (auto& c : r.cells) out.push_back(c);
  return out;
}

std::string row(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "r%05d", i);
  return b;
}

// What write_store leaves: the directory a crash would leave, and every cell the store
// served just before it.
struct written {
  std::string crashed;
  std::vector<cell> h, r;
};

// Two tables, eleven partitions: bases, two rounds of change runs (puts, overwrites,
// erasures) and, after the last snapshot, writes only in the log.
written write_store(const std::string& dir) {
  std::mt19937 rng(20261205);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto s = open_ok(opts(dir, 0));
  REQUIRE(s->create_table({"h", partition_spec::hash(8), {{"a", 3}, {"b", 1}}}, schema_origin::oceanbase_ddl).is_ok());
  REQUIRE(s->create_table({"r", partition_spec::range_bounds({row(2000), row(4000)}), {{"f", 2}}},
                          schema_origin::oceanbase_ddl)
              .is_ok());
  auto h = s->open_table("h").value();
  auto r = s->open_table("r").value();
  for (int i = 0; i < 6000; ++i) {
    REQUIRE(h.put(put(row(i)).add("a", "q", 1, std::string(static_cast<std::size_t>(i % 300), 'x')).add("b", "", "b"))
                .is_ok());
    REQUIRE(r.put(put(row(i)).add("f", std::string("\0\xff", 2), std::to_string(i))).is_ok());
  }
  REQUIRE(s->snapshot().is_ok());
  for (int round = 0; round < 3; ++round) {
    for (int n = 0; n < 500; ++n) {
      const int i = pick(7000);
      switch (pick(4)) {
        case 0: REQUIRE(h.remove(deletion(row(i))).is_ok()); break;
        case 1: REQUIRE(r.remove(deletion(row(i))).is_ok()); break;
        case 2: REQUIRE(r.put(put(row(i)).add("f", "q", std::to_string(round))).is_ok()); break;
        default: REQUIRE(h.put(put(row(i)).add("a", "q", 2 + round, "round " + std::to_string(round))).is_ok());
      }
    }
    if (round < 2) REQUIRE(s->snapshot().is_ok());  // the last round is only in the log
  }
  written w;
  w.h = all_cells(*s, "h");
  w.r = all_cells(*s, "r");
  w.crashed = persisttest::crash_copy(dir, dir + "-crash");
  return w;
}

}  // namespace

TEST_CASE("recovery by several threads reads what one thread reads", "[persist][recovery]") {
  temp_dir dir;
  const written w = write_store(dir.path);
  const std::string& crashed = w.crashed;
  std::vector<cell> h1, r1;
  recovery_stats one;
  {
    auto s = open_ok(opts(persisttest::crash_copy(crashed, crashed + "-1"), 1));
    one = s->recovery();
    h1 = all_cells(*s, "h");
    r1 = all_cells(*s, "r");
  }
  CHECK(one.threads == 1);
  CHECK(one.partitions == 11);
  CHECK(one.change_cells > 0);
  CHECK(one.log_records > 0);
  // Every partition read: the cells the store served before the crash, no more, no fewer.
  REQUIRE(w.h.size() > 6000);
  REQUIRE(w.r.size() > 4000);
  CHECK(h1 == w.h);
  CHECK(r1 == w.r);
  for (std::size_t threads : {2, 4, 16}) {
    CAPTURE(threads);
    auto s = open_ok(opts(persisttest::crash_copy(crashed, crashed + "-n"), threads));
    CHECK(s->recovery().threads == std::min<std::size_t>(threads, 11));
    CHECK(s->recovery().partitions == 11);
    CHECK(s->recovery().cells_loaded == one.cells_loaded);
    CHECK(s->recovery().change_cells == one.change_cells);
    CHECK(s->recovery().log_records == one.log_records);
    CHECK(all_cells(*s, "h") == h1);
    CHECK(all_cells(*s, "r") == r1);
  }
  // The default reads with a thread per core it may run on.
  auto s = open_ok(opts(persisttest::crash_copy(crashed, crashed + "-n"), 0));
  CHECK(s->recovery().threads >= 1);
  CHECK(all_cells(*s, "h") == h1);
  CHECK(all_cells(*s, "r") == r1);
  s.reset();
  for (const char* suffix : {"-crash", "-crash-1", "-crash-n"}) fs::remove_all(dir.path + suffix);
}

TEST_CASE("a damaged partition stops a parallel recovery with CORRUPTION naming it", "[persist][recovery]") {
  temp_dir dir;
  const std::string crashed = write_store(dir.path).crashed;
  // The largest partition file of table "h".
  std::string victim;
  std::uintmax_t size = 0;
  for (auto& e : fs::directory_iterator(crashed)) {
    const auto name = e.path().filename().string();
    if (name.rfind("d1p", 0) == 0 && e.path().extension() == ".wt" && fs::file_size(e.path()) > size) {
      victim = e.path().string();
      size = fs::file_size(e.path());
    }
  }
  REQUIRE(!victim.empty());
  REQUIRE(size > 16 * 1024);
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    for (int i = 0; i < 4096; ++i) f.put('\x5a');
  }
  auto s = store::open(opts(crashed, 4));
  REQUIRE_FALSE(s.is_ok());
  INFO(s.error().message());
  CHECK(s.code() == code::corruption);
  CHECK(s.error().message().find(victim) != std::string::npos);
  fs::remove_all(crashed);
}

TEST_CASE("more recovery threads than WiredTiger has sessions still open the store", "[persist][recovery]") {
  temp_dir dir;
  std::vector<cell> before;
  {
    auto s = open_ok(opts(dir.path, 0, durability::snapshot));
    REQUIRE(s->create_table({"many", partition_spec::hash(300), {{"f", 1}}}, schema_origin::oceanbase_ddl).is_ok());
    auto t = s->open_table("many").value();
    for (int i = 0; i < 3000; ++i) REQUIRE(t.put(put(row(i)).add("f", "q", std::to_string(i))).is_ok());
    REQUIRE(s->snapshot().is_ok());
    before = all_cells(*s, "many");
  }
  REQUIRE(before.size() == 3000);
  auto s = open_ok(opts(dir.path, 1000, durability::snapshot));
  CHECK(s->recovery().partitions == 300);
  CHECK(s->recovery().threads == 64);
  CHECK(all_cells(*s, "many") == before);
}
