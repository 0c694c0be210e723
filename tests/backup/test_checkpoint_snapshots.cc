// Named snapshots of a store with a directory, kept as WiredTiger checkpoints of the table's
// own tables (store/checkpoint_snapshots.h, docs/backup.md): no cell copied, exact after
// any later change to the table, and outliving the table they were taken of.
#include <fstream>
#include <regex>
#include <set>

#include "backup_fixture.h"

using namespace cellar;
using namespace backup_test;

namespace {

// The partition table files (d<uid>p<i>.wt, c<uid>p<i>.wt) of the store in `dir`.
std::set<std::string> partition_files(const std::string& dir) {
  static const std::regex name("[dc][0-9]+p[0-9]+\\.wt");
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (std::regex_match(e.path().filename().string(), name)) out.insert(e.path().filename().string());
  return out;
}

std::uint64_t bytes_under(const std::string& dir) {
  std::uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

// 400 rows of four 1 KB values, two versions of one column.
void fill(store& s, const std::string& table, const std::string& tag) {
  auto t = s.open_table(table).value();
  for (int i = 0; i < 400; ++i) {
    put p(binary_row(i));
    for (int c = 0; c < 4; ++c) p.add("f", "c" + std::to_string(c), 1, std::string(1024, 'a' + c) + tag);
    p.add("f", "v", 2, tag + std::to_string(i));
    REQUIRE(t.put(p).is_ok());
  }
}

// Rows split by the byte after binary_row's zero byte.
std::string bound(char c) { return std::string("r\0", 2) + c; }

table_descriptor ranged(const std::string& name) {
  return {name, partition_spec::range_bounds({bound('\x40'), bound('\xa0')}), {{"f", 3}}};
}

}  // namespace

TEST_CASE("a snapshot copies no cell: its files are a manifest and a schema, and it stays exact", "[backup]") {
  temp_dir dir;
  auto s = open_store(dir.path);
  REQUIRE(s->create_table(ranged("t"), schema_origin::hbase_shell).is_ok());
  fill(*s, "t", "one");
  REQUIRE(s->snapshot().is_ok());
  {
    // A few changes written as change runs over the base, so the snapshot holds both.
    auto t = s->open_table("t").value();
    for (int i = 0; i < 400; i += 40) REQUIRE(t.put(put(binary_row(i)).add("f", "v", 3, "changed")).is_ok());
    for (int i = 7; i < 400; i += 80) REQUIRE(t.remove(deletion(binary_row(i))).is_ok());
    REQUIRE(t.put(put("added").add("f", "v", "new")).is_ok());
  }
  REQUIRE(s->snapshot().is_ok());
  const auto before = all_cells(*s, "t");
  const std::uint64_t data = bytes_under(dir.path);

  REQUIRE(s->snapshot("t", "s").is_ok());
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir.path + "/snapshots/s")) files.insert(e.path().filename().string());
  CHECK(files == std::set<std::string>{"manifest", "schema"});
  {
    // Bases and change runs both checkpointed.
    std::ifstream in(dir.path + "/snapshots/s/manifest");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find("checkpointed table:d") != std::string::npos);
    CHECK(text.find("checkpointed table:c") != std::string::npos);
  }
  // Under 1% of the table: nothing of its cells.
  CHECK(bytes_under(dir.path + "/snapshots") * 100 < data);
  auto info = s->list_snapshots().value();
  REQUIRE(info.size() == 1);
  CHECK(info[0].cells == before.size());
  CHECK(info[0].bytes < 1024);

  // Every cell rewritten, some erased, and written to disk: the snapshot still reads as it was.
  fill(*s, "t", "two");
  REQUIRE(s->open_table("t")->remove(deletion(binary_row(5))).is_ok());
  REQUIRE(s->snapshot().is_ok());
  REQUIRE(s->snapshot().is_ok());
  CHECK(all_cells(*s, "t") != before);
  REQUIRE(s->clone_snapshot("s", "c").is_ok());
  CHECK(all_cells(*s, "c") == before);
  REQUIRE(s->disable_table("t").is_ok());
  REQUIRE(s->restore_snapshot("s").is_ok());
  REQUIRE(s->enable_table("t").is_ok());
  CHECK(all_cells(*s, "t") == before);
  // The clone is a table of its own.
  REQUIRE(s->open_table("c")->put(put("only-in-clone").add("f", "v", "x")).is_ok());
  CHECK(all_cells(*s, "t") == before);

  // Exported, it is a snapshot of files like any other, which another store imports.
  temp_dir out, other;
  REQUIRE(s->export_snapshot("s", out.path).is_ok());
  CHECK(fs::exists(out.path + "/part-00002.cells"));
  auto s2 = open_store(other.path);
  REQUIRE(s2->import_snapshot(out.path).is_ok());
  REQUIRE(s2->clone_snapshot("s", "t").is_ok());
  CHECK(all_cells(*s2, "t") == before);
  // A snapshot kept inside a store is not files to import.
  fs::copy(dir.path + "/snapshots/s", out.path + "/inside");
  CHECK(s2->import_snapshot(out.path + "/inside").code() == code::invalid_argument);
}

TEST_CASE("a snapshot outlives a drop, a split and a restart; deleting the last one drops the old tables", "[backup]") {
  temp_dir dir;
  std::vector<cell> before;
  std::set<std::string> own;
  {
    auto s = open_store(dir.path);
    REQUIRE(s->create_table(ranged("t"), schema_origin::hbase_shell).is_ok());
    fill(*s, "t", "one");
    REQUIRE(s->snapshot().is_ok());
    own = partition_files(dir.path);
    REQUIRE(own.size() >= 3);
    before = all_cells(*s, "t");
    REQUIRE(s->snapshot("t", "s1").is_ok());
    REQUIRE(s->snapshot("t", "s2").is_ok());
    // A split gives the table new tables; the old ones stay for the snapshots.
    REQUIRE(s->split_region("t", bound('\x70')).is_ok());
    fill(*s, "t", "two");
    REQUIRE(s->snapshot().is_ok());
    for (const auto& f : own) CHECK(fs::exists(dir.path + "/" + f));
    REQUIRE(s->clone_snapshot("s1", "c").is_ok());
    CHECK(all_cells(*s, "c") == before);
    REQUIRE(s->drop_table("t").is_ok());
  }
  auto s = open_store(dir.path);
  CHECK(s->list_snapshots()->size() == 2);
  REQUIRE(s->restore_snapshot("s2").is_ok());  // creates the dropped table, disabled
  REQUIRE(s->enable_table("t").is_ok());
  CHECK(all_cells(*s, "t") == before);
  // The old tables go with the last snapshot holding them, not before.
  REQUIRE(s->delete_snapshot("s1").is_ok());
  for (const auto& f : own) CHECK(fs::exists(dir.path + "/" + f));
  REQUIRE(s->delete_snapshot("s2").is_ok());
  for (const auto& f : own) CHECK_FALSE(fs::exists(dir.path + "/" + f));
  CHECK(s->list_snapshots()->empty());
  CHECK(all_cells(*s, "t") == before);
  CHECK(all_cells(*s, "c") == before);
}

TEST_CASE("a snapshot whose checkpoint or schema is lost is refused before anything changes", "[backup]") {
  temp_dir dir;
  auto s = open_store(dir.path);
  REQUIRE(s->create_table(ranged("t"), schema_origin::hbase_shell).is_ok());
  fill(*s, "t", "one");
  REQUIRE(s->snapshot("t", "lost").is_ok());
  REQUIRE(s->snapshot("t", "damaged").is_ok());
  fill(*s, "t", "two");
  const auto cells = all_cells(*s, "t");
  {
    // The manifest names a checkpoint the tables do not have.
    const std::string path = dir.path + "/snapshots/lost/manifest";
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find("checkpoint cellar_");
    REQUIRE(at != std::string::npos);
    text[at + 18] = text[at + 18] == '0' ? '1' : '0';
    std::ofstream(path, std::ios::trunc) << text;
  }
  {
    std::fstream f(dir.path + "/snapshots/damaged/schema", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(6);
    f.put('!');
  }
  REQUIRE(s->disable_table("t").is_ok());
  for (const char* name : {"lost", "damaged"}) {
    INFO(name);
    CHECK(s->restore_snapshot(name).code() == code::corruption);
    CHECK(s->clone_snapshot(name, "c").code() == code::corruption);
    CHECK_FALSE(s->table_exists("c"));
    temp_dir out;
    CHECK(s->export_snapshot(name, out.path + "/x").code() == code::corruption);
  }
  REQUIRE(s->enable_table("t").is_ok());
  CHECK(all_cells(*s, "t") == cells);
  // Both can still be deleted.
  CHECK(s->delete_snapshot("lost").is_ok());
  CHECK(s->delete_snapshot("damaged").is_ok());
  CHECK(s->list_snapshots()->empty());
}

TEST_CASE("a restore loads into new tables, and the table's old ones go unless a snapshot holds them", "[backup]") {
  temp_dir dir, out;
  auto s = open_store(dir.path);
  REQUIRE(s->create_table(ranged("t"), schema_origin::hbase_shell).is_ok());
  fill(*s, "t", "one");
  REQUIRE(s->snapshot().is_ok());
  const auto before = all_cells(*s, "t");
  const auto old = partition_files(dir.path);
  REQUIRE_FALSE(old.empty());
  // A snapshot of files: no checkpoint holds the table's tables.
  REQUIRE(s->snapshot("t", "s").is_ok());
  REQUIRE(s->export_snapshot("s", out.path).is_ok());
  REQUIRE(s->delete_snapshot("s").is_ok());
  REQUIRE(s->import_snapshot(out.path).is_ok());
  fill(*s, "t", "two");
  REQUIRE(s->disable_table("t").is_ok());
  REQUIRE(s->restore_snapshot("s").is_ok());
  REQUIRE(s->enable_table("t").is_ok());
  CHECK(all_cells(*s, "t") == before);
  const auto now = partition_files(dir.path);
  CHECK_FALSE(now.empty());
  for (const auto& f : old) CHECK_FALSE(now.count(f));
}

TEST_CASE("the files a crash leaves of a dropped table go at the next open; live tables' stay", "[backup]") {
  temp_dir dir;
  std::set<std::string> kept, dropped;
  std::vector<cell> live;
  {
    auto s = open_store(dir.path);
    REQUIRE(s->create_table(ranged("live"), schema_origin::hbase_shell).is_ok());
    fill(*s, "live", "one");
    REQUIRE(s->snapshot().is_ok());
    kept = partition_files(dir.path);
    live = all_cells(*s, "live");
    REQUIRE(s->create_table(ranged("t"), schema_origin::hbase_shell).is_ok());
    fill(*s, "t", "one");
    REQUIRE(s->snapshot().is_ok());
    for (const auto& f : partition_files(dir.path))
      if (!kept.count(f)) dropped.insert(f);
    REQUIRE_FALSE(dropped.empty());
    REQUIRE(s->snapshot("t", "s").is_ok());
    REQUIRE(s->drop_table("t").is_ok());
    for (const auto& f : dropped) REQUIRE(fs::exists(dir.path + "/" + f));
  }
  // As a crash after the snapshot's files went and before its table's did leaves them.
  fs::remove_all(dir.path + "/snapshots/s");
  auto s = open_store(dir.path);
  for (const auto& f : dropped) CHECK_FALSE(fs::exists(dir.path + "/" + f));
  for (const auto& f : kept) CHECK(fs::exists(dir.path + "/" + f));
  CHECK(all_cells(*s, "live") == live);
}
