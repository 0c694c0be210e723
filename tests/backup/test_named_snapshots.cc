// Named snapshots (cellar/backup.h): snapshot, list, delete, restore, clone, export and
// import, on a memory-only store and on one with a directory (surviving a restart).
#include <fstream>
#include <thread>

#include "backup_fixture.h"

using namespace cellar;
using namespace backup_test;

namespace {

table_descriptor versioned(const std::string& name, std::uint32_t partitions = 4) {
  table_descriptor d{name, partition_spec::hash(partitions), {{"f", 3}, {"g", 1}}};
  d.attributes["OWNER"] = "alice";
  return d;
}

// Rows with binary keys and values, three versions in f, a cell TTL in g.
void fill(store& s, const std::string& table, int rows) {
  auto t = s.open_table(table).value();
  for (int i = 0; i < rows; ++i) {
    std::string v("v\0\xff", 3);
    v += std::to_string(i);
    put p(binary_row(i));
    for (std::int64_t ts = 1; ts <= 3; ++ts) p.add("f", "q", ts, v + "@" + std::to_string(ts));
    REQUIRE(t.put(p).is_ok());
    REQUIRE(t.put(put(binary_row(i)).add("g", "c", 5, "ttl").ttl(1000LL * 3600 * 24 * 365 * 100)).is_ok());
  }
}

}  // namespace

TEST_CASE("a snapshot, writes after it, then restore: exactly the snapshot's cells", "[backup]") {
  auto s = open_store();
  REQUIRE(s->create_table(versioned("t"), schema_origin::hbase_shell).is_ok());
  fill(*s, "t", 200);
  const auto before = all_cells(*s, "t");
  REQUIRE(before.size() == 200 * 4);
  REQUIRE(s->snapshot("t", "s1").is_ok());

  auto t = s->open_table("t").value();
  REQUIRE(t.put(put("new").add("f", "q", "x")).is_ok());
  REQUIRE(t.remove(deletion(binary_row(7))).is_ok());
  REQUIRE(t.put(put(binary_row(8)).add("f", "q", 9, "changed")).is_ok());
  REQUIRE(s->alter_family("t", {"h"}).is_ok());  // a family added after the snapshot
  REQUIRE(s->alter_table("t", {{"OWNER", "bob"}}, {}).is_ok());
  CHECK(all_cells(*s, "t") != before);

  // Enabled: refused, nothing changes.
  auto refused = s->restore_snapshot("s1");
  CHECK(refused.code() == code::table_not_disabled);
  CHECK(refused.message().find("disable") != std::string::npos);
  CHECK(all_cells(*s, "t").size() == before.size() + 1 - 4);  // row 8: a version pushed out, one in

  REQUIRE(s->disable_table("t").is_ok());
  auto st = s->restore_snapshot("s1");
  INFO(st.to_string());
  REQUIRE(st.is_ok());
  CHECK_FALSE(s->is_table_enabled("t").value());  // stays disabled, as in HBase
  REQUIRE(s->enable_table("t").is_ok());
  CHECK(all_cells(*s, "t") == before);
  auto d = s->describe("t").value();
  CHECK(d.families.size() == 2);  // h is gone
  CHECK(d.attributes.at("OWNER") == "alice");
  // The table takes writes again.
  CHECK(s->open_table("t")->put(put("after").add("f", "q", "y")).is_ok());
}

TEST_CASE("clone is a new table independent of its source", "[backup]") {
  auto s = open_store();
  REQUIRE(s->create_table(versioned("src"), schema_origin::hbase_shell).is_ok());
  fill(*s, "src", 50);
  REQUIRE(s->snapshot("src", "snap").is_ok());
  REQUIRE(s->clone_snapshot("snap", "copy").is_ok());
  CHECK(all_cells(*s, "copy") == all_cells(*s, "src"));
  CHECK(s->clone_snapshot("snap", "copy").code() == code::already_exists);
  CHECK(s->clone_snapshot("nope", "copy2").code() == code::not_found);

  auto copy = s->open_table("copy").value();
  REQUIRE(copy.put(put("only-in-copy").add("f", "q", "x")).is_ok());
  REQUIRE(s->open_table("src")->remove(deletion(binary_row(1))).is_ok());
  CHECK(s->open_table("src")->get(get("only-in-copy")).value().cells.empty());
  CHECK(copy.get(get(binary_row(1))).value().cells.size() == 2);
  REQUIRE(s->truncate_table("src").is_ok());
  CHECK(all_cells(*s, "copy").size() == 50 * 4 + 1);
  // The source's schema changes do not reach the clone.
  REQUIRE(s->alter_family("src", {"extra"}).is_ok());
  CHECK(s->describe("copy")->families.size() == 2);
}

TEST_CASE("list, list_table_snapshots, delete, and bad names", "[backup]") {
  auto s = open_store();
  REQUIRE(s->create_table(versioned("a"), schema_origin::hbase_shell).is_ok());
  REQUIRE(s->create_table(versioned("b"), schema_origin::hbase_shell).is_ok());
  REQUIRE(s->snapshot("a", "a-1").is_ok());
  REQUIRE(s->snapshot("a", "a-2").is_ok());
  REQUIRE(s->snapshot("b", "b-1").is_ok());
  CHECK(s->snapshot("a", "a-1").code() == code::already_exists);
  CHECK(s->snapshot("missing", "m").code() == code::table_not_found);
  CHECK(s->snapshot("a", "bad name").code() == code::invalid_argument);
  CHECK(s->snapshot("a", ".hidden").code() == code::invalid_argument);

  auto lr = s->list_snapshots();
  INFO(lr.error().to_string());
  REQUIRE(lr.is_ok());
  auto all = lr.value();
  REQUIRE(all.size() == 3);
  CHECK(all[0].name == "a-1");
  CHECK(all[0].table == "a");
  CHECK(all[0].partitions == 4);
  CHECK(s->list_snapshots("a-.*")->size() == 2);
  CHECK(s->list_snapshots("a")->empty());  // the whole name must match
  CHECK(s->list_snapshots("(").code() == code::invalid_argument);
  CHECK(s->list_table_snapshots("b")->size() == 1);
  CHECK(s->list_table_snapshots("a", ".*2")->size() == 1);

  REQUIRE(s->delete_snapshot("a-1").is_ok());
  CHECK(s->delete_snapshot("a-1").code() == code::not_found);
  CHECK(s->list_snapshots()->size() == 2);
}

TEST_CASE("a snapshot taken while batches run holds each partition's batches whole", "[backup]") {
  // Copied in chunks (memory only), and a checkpoint of the store's own tables (a directory).
  temp_dir dir;
  const bool on_disk = GENERATE(false, true);
  INFO((on_disk ? "a store with a directory" : "a memory-only store"));
  auto s = open_store(on_disk ? dir.path : "");
  // One partition: every batch is one atomic unit. Enough cells for many chunks.
  REQUIRE(s->create_table({"w", partition_spec::single(), {{"f"}}}, schema_origin::hbase_shell).is_ok());
  auto t = s->open_table("w").value();
  const std::string pad(2000, 'p');
  constexpr int rows = 40;
  {
    std::vector<put> first;
    for (int r = 0; r < 2000; ++r) first.push_back(put("pad" + std::to_string(r)).add("f", "q", pad));
    REQUIRE(t.put(first).is_ok());
  }
  // The batch's rows lie among the others, from first to last, so a batch spans every chunk
  // of the copy: one that lands while the copy runs must come whole from the changes.
  auto row_name = [](int r) { return "pad" + std::to_string(r * 50) + "n"; };
  std::atomic<bool> stop{false}, write_failed{false};
  std::atomic<int> rounds{0};
  // Catch's assertions are for the test's own thread: the writer only records a failure.
  std::thread writer([&] {
    for (int round = 1; !stop.load(); ++round) {
      std::vector<put> batch;
      for (int r = 0; r < rows; ++r) batch.push_back(put(row_name(r)).add("f", "n", std::to_string(round)));
      if (!t.put(batch).is_ok()) {
        write_failed = true;
        return;
      }
      rounds = round;
    }
  });
  while (rounds.load() < 5 && !write_failed.load()) std::this_thread::yield();
  status snapped;
  for (int k = 0; k < 3 && snapped; ++k) snapped = s->snapshot("w", "w" + std::to_string(k));
  stop = true;
  writer.join();
  REQUIRE_FALSE(write_failed.load());
  REQUIRE(snapped.is_ok());
  for (int k = 0; k < 3; ++k) {
    const std::string clone = "c" + std::to_string(k);
    REQUIRE(s->clone_snapshot("w" + std::to_string(k), clone).is_ok());
    auto c = s->open_table(clone).value();
    std::string seen;
    for (int r = 0; r < rows; ++r) {
      auto row = c.get(get(row_name(r)));
      REQUIRE(row.is_ok());
      REQUIRE(row->cells.size() == 1);
      if (r == 0) seen = row->cells[0].value;
      CHECK(row->cells[0].value == seen);  // one batch's value in every row
    }
    CHECK(all_cells(*s, clone).size() == 2000 + rows);
  }
}

TEST_CASE("named snapshots survive a restart; export and import move one to another store", "[backup]") {
  temp_dir dir, other, out;
  std::vector<cell> before;
  {
    auto s = open_store(dir.path, durability::log_sync);
    REQUIRE(s->create_table(versioned("t"), schema_origin::hbase_shell).is_ok());
    fill(*s, "t", 100);
    before = all_cells(*s, "t");
    REQUIRE(s->snapshot("t", "kept").is_ok());
    REQUIRE(s->open_table("t")->put(put("later").add("f", "q", "x")).is_ok());
  }
  {
    auto s = open_store(dir.path, durability::log_sync);
    auto l = s->list_snapshots().value();
    REQUIRE(l.size() == 1);
    CHECK(l[0].cells == before.size());
    REQUIRE(s->clone_snapshot("kept", "t2").is_ok());
    CHECK(all_cells(*s, "t2") == before);
    REQUIRE(s->disable_table("t").is_ok());
    REQUIRE(s->restore_snapshot("kept").is_ok());
    REQUIRE(s->enable_table("t").is_ok());
    CHECK(all_cells(*s, "t") == before);
    REQUIRE(s->export_snapshot("kept", out.path).is_ok());
    CHECK(s->export_snapshot("kept", out.path).code() == code::already_exists);
  }
  {
    // Restored and cloned tables are durable.
    auto s = open_store(dir.path, durability::log_sync);
    CHECK(all_cells(*s, "t") == before);
    CHECK(all_cells(*s, "t2") == before);
  }
  auto s2 = open_store(other.path);
  auto info = s2->import_snapshot(out.path);
  INFO(info.error().to_string());
  REQUIRE(info.is_ok());
  CHECK(info->name == "kept");
  CHECK(s2->import_snapshot(out.path).code() == code::already_exists);
  REQUIRE(s2->clone_snapshot("kept", "t").is_ok());
  CHECK(all_cells(*s2, "t") == before);
  // A restore of a table that no longer exists creates it, disabled.
  REQUIRE(s2->drop_table("t").is_ok());
  REQUIRE(s2->restore_snapshot("kept").is_ok());
  CHECK_FALSE(s2->is_table_enabled("t").value());
}

TEST_CASE("a damaged snapshot file is refused before anything changes", "[backup]") {
  temp_dir dir, out;
  auto s = open_store(dir.path);
  REQUIRE(s->create_table(versioned("t"), schema_origin::hbase_shell).is_ok());
  fill(*s, "t", 30);
  REQUIRE(s->snapshot("t", "s").is_ok());
  REQUIRE(s->export_snapshot("s", out.path).is_ok());
  {
    // One byte of a cell file flipped.
    std::fstream f(out.path + "/part-00001.cells", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(12);
    f.put('!');
  }
  REQUIRE(s->delete_snapshot("s").is_ok());
  auto r = s->import_snapshot(out.path);
  CHECK(r.code() == code::corruption);
  CHECK(s->list_snapshots()->empty());
  // The same damage in a store's own snapshot of files (a memory-only store keeps none on
  // disk, so the exported files come back as one): restore refuses and the table keeps its
  // cells. test_checkpoint_snapshots.cc damages the snapshots a store takes itself.
  temp_dir files;
  REQUIRE(s->snapshot("t", "s").is_ok());
  REQUIRE(s->export_snapshot("s", files.path).is_ok());
  REQUIRE(s->delete_snapshot("s").is_ok());
  REQUIRE(s->import_snapshot(files.path).is_ok());
  {
    std::fstream f(dir.path + "/snapshots/s/part-00002.cells", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(12);
    f.put('!');
  }
  const auto cells = all_cells(*s, "t");
  REQUIRE(s->disable_table("t").is_ok());
  CHECK(s->restore_snapshot("s").code() == code::corruption);
  REQUIRE(s->enable_table("t").is_ok());
  CHECK(all_cells(*s, "t") == cells);
  CHECK(s->clone_snapshot("s", "c").code() == code::corruption);
  CHECK_FALSE(s->table_exists("c"));
}
