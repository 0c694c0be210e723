// Snapshot compression: every setting reads back every cell, a directory written under one
// setting opens under another, a log replayed over a compressed snapshot is exact, and the
// compressors do shrink what they write.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/store_fixture.h"
#include "cellar/store.h"
#include "damage.h"

namespace fs = std::filesystem;
using namespace cellar;

namespace {

using testsupport::all_cells;
using testsupport::open_ok;
using testsupport::temp_dir;

store_options opts(const std::string& dir, compression c, durability d = durability::snapshot) {
  store_options o = testsupport::store_options_for(dir, d);
  o.compression = c;
  return o;
}

// Rows `from` to `to`: binary qualifiers and values of sizes from empty to several pages,
// two versions each, one family with a TTL.
void write_rows(store& s, int from, int to) {
  auto t = s.open_table("t").value();
  for (int i = from; i < to; ++i) {
    std::string row = "row" + std::to_string(100000 + i);
    std::string big(static_cast<std::size_t>((i * 37) % 9000), static_cast<char>('a' + i % 26));
    std::string bin = std::string("\0\xff", 2) + std::to_string(i);
    REQUIRE(t.put(put(row)
                      .add("a", bin, 10, big)
                      .add("a", bin, 20, bin)
                      .add("a", "", 5, "")
                      .add("b", "q", std::to_string(i)))
                .is_ok());
  }
}

void create(store& s) {
  REQUIRE(s.create_table({"t", partition_spec::range_bounds({"row100500"}), {{"a", 3}, {"b", 0, 3600}}},
                         schema_origin::hbase_shell)
              .is_ok());
}

std::uintmax_t dir_bytes(const std::string& dir) {
  std::uintmax_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

}  // namespace

TEST_CASE("every compression setting reads back every cell after a restart", "[persist][compression]") {
  for (auto c : {compression::none, compression::snappy, compression::zlib}) {
    CAPTURE(static_cast<int>(c));
    temp_dir dir;
    std::vector<cell> before;
    {
      auto s = open_ok(opts(dir.path, c));
      create(*s);
      write_rows(*s, 0, 1000);
      REQUIRE(s->snapshot().is_ok());
      write_rows(*s, 1000, 1200);  // a change run on top of the base
      REQUIRE(s->snapshot().is_ok());
      before = all_cells(*s, "t");
    }
    REQUIRE(before.size() == 1200 * 4);
    auto s = open_ok(opts(dir.path, c));
    REQUIRE(all_cells(*s, "t") == before);
    REQUIRE(s->recovery().cells_loaded > 0);
  }
}

TEST_CASE("a directory written with one compression opens under another", "[persist][compression]") {
  temp_dir dir;
  std::vector<cell> before;
  {
    auto s = open_ok(opts(dir.path, compression::snappy));
    create(*s);
    write_rows(*s, 0, 600);
    REQUIRE(s->snapshot().is_ok());
  }
  {
    // Old tables stay snappy; what this store writes is zlib.
    auto s = open_ok(opts(dir.path, compression::zlib));
    write_rows(*s, 600, 900);
    REQUIRE(s->snapshot().is_ok());
    before = all_cells(*s, "t");
  }
  for (auto c : {compression::none, compression::snappy, compression::zlib}) {
    auto s = open_ok(opts(dir.path, c));
    REQUIRE(all_cells(*s, "t") == before);
  }
}

TEST_CASE("a log replayed over a compressed snapshot is exact", "[persist][compression]") {
  temp_dir dir;
  // A child writes, snapshots, writes more and dies without closing: the second batch
  // exists only in its log.
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto s = store::open(opts(dir.path, compression::snappy, durability::log));
    if (!s.is_ok()) _exit(3);
    if (!s.value()
             ->create_table({"t", partition_spec::range_bounds({"row100500"}), {{"a", 3}, {"b", 0, 3600}}},
                            schema_origin::hbase_shell)
             .is_ok())
      _exit(4);
    auto t = s.value()->open_table("t").value();
    for (int i = 0; i < 800; ++i)
      if (!t.put(put("row" + std::to_string(100000 + i)).add("a", "q", 1, std::string(300, 'x'))).is_ok()) _exit(5);
    if (!s.value()->snapshot().is_ok()) _exit(6);
    for (int i = 0; i < 800; i += 2)
      if (!t.put(put("row" + std::to_string(100000 + i)).add("a", "q", 2, "second")).is_ok()) _exit(7);
    if (!t.remove(deletion("row100001")).is_ok()) _exit(8);
    _exit(0);
  }
  int wstatus = 0;
  REQUIRE(waitpid(pid, &wstatus, 0) == pid);
  REQUIRE(WIFEXITED(wstatus));
  REQUIRE(WEXITSTATUS(wstatus) == 0);

  auto s = open_ok(opts(dir.path, compression::snappy, durability::log));
  REQUIRE(s->recovery().log_records > 0);
  auto cells = all_cells(*s, "t");
  REQUIRE(cells.size() == 800 - 1 + 400);
  std::size_t seconds = 0;
  for (auto& c : cells) {
    REQUIRE(c.row != "row100001");
    if (c.timestamp == 2) {
      REQUIRE(c.value == "second");
      ++seconds;
    } else {
      REQUIRE(c.value == std::string(300, 'x'));
    }
  }
  REQUIRE(seconds == 400);
}

TEST_CASE("the compressors shrink compressible snapshots", "[persist][compression]") {
  std::uintmax_t size[3] = {};
  const compression settings[3] = {compression::none, compression::snappy, compression::zlib};
  for (int k = 0; k < 3; ++k) {
    temp_dir dir;
    {
      auto s = open_ok(opts(dir.path, settings[k]));
      create(*s);
      write_rows(*s, 0, 2000);
      REQUIRE(s->snapshot().is_ok());
    }
    size[k] = dir_bytes(dir.path);
  }
  CAPTURE(size[0], size[1], size[2]);
  REQUIRE(size[1] * 2 < size[0]);
  REQUIRE(size[2] * 2 < size[0]);
}

// Change runs are merged into the base once they reach half of it, weighed before
// compression: a setting that shrinks the base's file must not make every snapshot a
// merge. The same work snapshots the same way under every setting, across a restart.
TEST_CASE("the merge of change runs into the base does not depend on compression", "[persist][compression]") {
  auto row = [](int i) {
    char b[16];
    std::snprintf(b, sizeof b, "r%05d", i);
    return std::string(b);
  };
  std::vector<int> before_merge;
  for (auto c : {compression::none, compression::snappy, compression::zlib}) {
    CAPTURE(static_cast<int>(c));
    temp_dir dir;
    auto s = open_ok(opts(dir.path, c));
    REQUIRE(s->create_table({"t", partition_spec::single(), {{"f"}}}, schema_origin::oceanbase_ddl).is_ok());
    {
      auto t = s->open_table("t").value();
      for (int i = 0; i < 5000; ++i) REQUIRE(t.put(put(row(i)).add("f", "q", std::string(100, 'v'))).is_ok());
    }
    REQUIRE(s->snapshot().is_ok());
    int snapshots = 0;
    for (int round = 1;; ++round) {
      REQUIRE(round < 60);
      if (round == 2) {  // the sizes are read back at recovery
        s.reset();
        s = open_ok(opts(dir.path, c));
      }
      auto t = s->open_table("t").value();
      for (int i = 0; i < 300; ++i)
        REQUIRE(
            t.put(
                 put(row((i * 7919 + round * 131) % 5000)).add("f", "q", std::to_string(round) + std::string(100, 'w')))
                .is_ok());
      auto snap = s->snapshot();
      REQUIRE(snap.is_ok());
      if (snap->merged_partitions == 1) break;
      ++snapshots;
    }
    before_merge.push_back(snapshots);
  }
  CAPTURE(before_merge);
  REQUIRE(before_merge[0] > 1);  // runs came first
  REQUIRE(before_merge[1] == before_merge[0]);
  REQUIRE(before_merge[2] == before_merge[0]);
}

using testdamage::damage;

// A damaged compressed page fails its block checksum before it reaches the decompressor:
// the open answers CORRUPTION naming the table and its file (never a crash, never garbage
// served), salvage drops the damaged pages and keeps the rest, and the salvaged store's
// snapshot makes the directory whole again. Small and page-sized damage, at several places.
TEST_CASE("a damaged compressed page is CORRUPTION at open, and salvage keeps the rest", "[persist][compression]") {
  for (auto c : {compression::snappy, compression::zlib}) {
    for (std::size_t len : {std::size_t{4}, std::size_t{4096}}) {
      for (int where = 1; where <= 3; ++where) {
        CAPTURE(static_cast<int>(c), len, where);
        temp_dir dir;
        constexpr int rows = 20000;
        {
          auto s = open_ok(opts(dir.path, c));
          REQUIRE(s->create_table({"t", partition_spec::single(), {{"f"}}}, schema_origin::oceanbase_ddl).is_ok());
          auto t = s->open_table("t").value();
          for (int i = 0; i < rows; ++i) {
            std::string v;
            while (v.size() < 100) v += std::to_string(i * 7919 + v.size());
            REQUIRE(t.put(put("row" + std::to_string(i)).add("f", "q", v)).is_ok());
          }
        }
        std::string data;
        for (auto& e : fs::directory_iterator(dir.path))
          if (e.path().filename().string().rfind("d", 0) == 0) data = e.path().string();
        REQUIRE(!data.empty());
        const auto size = fs::file_size(data);
        REQUIRE(size > 64 * 1024);
        damage(data, size * static_cast<std::uintmax_t>(where) / 4, len);

        auto s = store::open(opts(dir.path, c));
        REQUIRE_FALSE(s.is_ok());
        INFO(s.error().message());
        CHECK(s.code() == code::corruption);
        CHECK(s.error().message().find(data) != std::string::npos);
        CHECK(s.error().message().find("salvage") != std::string::npos);

        auto o = opts(dir.path, c);
        o.salvage = true;
        std::size_t kept = 0;
        {
          auto salvaged = open_ok(o);
          const auto cells = all_cells(*salvaged, "t");
          kept = cells.size();
          CHECK(kept > 0);
          CHECK(kept < rows);
          std::size_t wrong = 0;  // what is kept is what was written
          for (auto& cell : cells) {
            const int i = std::stoi(cell.row.substr(3));
            std::string v;
            while (v.size() < 100) v += std::to_string(i * 7919 + v.size());
            wrong += cell.value != v;
          }
          CHECK(wrong == 0);
        }
        auto again = open_ok(opts(dir.path, c));
        CHECK(all_cells(*again, "t").size() == kept);
      }
    }
  }
}

TEST_CASE("an unknown compression is refused", "[persist][compression]") {
  temp_dir dir;
  auto o = opts(dir.path, static_cast<compression>(7));
  auto s = store::open(o);
  REQUIRE_FALSE(s.is_ok());
  REQUIRE(s.error().code() == code::invalid_argument);
}
