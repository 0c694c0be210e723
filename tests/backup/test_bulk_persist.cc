// What a bulk load leaves on disk (docs/backup.md, "Bulk load"): a partition takes its file
// without copying it into its snapshot delta, and the snapshot writes it from the file.
// Checked after a restart: over cells written before it and not yet snapshotted, into a
// base that is not empty, after a failed snapshot, and a file out of key order refused.
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "../persist/crash_copy.h"
#include "../persist/fault_env.h"
#include "admin/transfer.h"
#include "backup_fixture.h"
#include "persist/codec.h"
#include "persist/loaded_cells.h"
#include "route/router.h"
#include "store/snapshot_files.h"

using namespace cellar;
using namespace backup_test;

namespace {

store_options opts(const std::string& dir, std::shared_ptr<env> e = nullptr) {
  store_options o = testsupport::store_options_for(dir, durability::snapshot);
  o.env = std::move(e);
  return o;
}

// Bulk-loads `lines` (row, timestamp, value of f:q) into table t; the staged files stay in
// `staging` when it is given.
result<admin::transfer_stats> bulk_load(store& s, const std::string& file, const std::string& lines,
                                        const std::string& staging = "") {
  std::ofstream(file, std::ios::binary) << lines;
  auto conn = connect_embedded(s);
  admin::bulk_options o;
  o.columns = "HBASE_ROW_KEY,HBASE_TS_KEY,f:q";
  o.staging = staging;
  return admin::bulk_load_tsv(*conn, "t", file, o, nullptr);
}

// Row -> value of f:q at timestamp 100 (the only version kept), of the rows in `rows`.
std::map<std::string, std::string> values(store& s, const std::vector<std::string>& rows) {
  auto t = s.open_table("t").value();
  std::map<std::string, std::string> out;
  for (const auto& r : rows) {
    auto got = t.get(get(r)).value();
    if (!got.cells.empty()) out[r] = got.cells.front().value;
  }
  return out;
}

std::vector<std::string> names(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

// What a crash copy taken after a failed load may hold: each partition as it was before
// the load or with all of the load's rows, never a part of them. A partition table that
// was empty becomes durable when its bulk load closes, before the checkpoint that would
// have ended the snapshot (docs/storage.md), so which partitions come back loaded depends
// on when WiredTiger flushed its log.
void check_each_partition_before_or_loaded(const partition_spec& spec, const std::map<std::string, std::string>& got,
                                           const std::map<std::string, std::string>& before,
                                           const std::map<std::string, std::string>& loaded,
                                           const std::vector<std::string>& rows) {
  const auto at = [](const std::map<std::string, std::string>& m, const std::string& row) {
    auto it = m.find(row);
    return it == m.end() ? std::optional<std::string>() : std::optional<std::string>(it->second);
  };
  for (std::uint32_t p = 0; p < spec.count(); ++p) {
    std::size_t as_before = 0, as_loaded = 0, of_partition = 0;
    for (const auto& row : rows) {
      if (detail::partition_of(spec, row) != p) continue;
      ++of_partition;
      as_before += at(got, row) == at(before, row);
      as_loaded += at(got, row) == at(loaded, row);
    }
    INFO("partition " << p << ": " << of_partition << " rows, " << as_before << " as before, " << as_loaded
                      << " as loaded");
    CHECK((as_before == of_partition || as_loaded == of_partition));
  }
}

}  // namespace

TEST_CASE(
    "a bulk load over unsnapshotted writes and into a non-empty base: after a restart, the load wins where it "
    "overlaps and the rest stays",
    "[backup][bulk]") {
  temp_dir dir;
  const std::string file = dir.path + "-in.tsv";
  std::map<std::string, std::string> want;
  {
    auto s = open_store(dir.path);
    REQUIRE(s->create_table({"t", partition_spec::hash(4), {{"f", 1}}}, schema_origin::hbase_shell).is_ok());
    auto t = s->open_table("t").value();
    for (const auto& r : names("a", 40)) REQUIRE(t.put(put(r).add("f", "q", 100, "base")).is_ok());
    REQUIRE(s->snapshot().is_ok());  // the partitions' bases are not empty now
    // Not snapshotted before the load: a cell it replaces, one it leaves, an erasure of a
    // cell in the base that it puts back, an erasure it leaves.
    REQUIRE(t.put(put("a0").add("f", "q", 100, "before")).is_ok());
    REQUIRE(t.put(put("b0").add("f", "q", 100, "before")).is_ok());
    REQUIRE(t.remove(deletion("a1")).is_ok());
    REQUIRE(t.remove(deletion("a2")).is_ok());
    auto r = bulk_load(*s, file, "a0\t100\tloaded\na1\t100\tloaded\nc0\t100\tloaded\n");
    INFO(r.error().to_string());
    REQUIRE(r.is_ok());
    // After the load, snapshotted by the next snapshot.
    REQUIRE(t.put(put("c1").add("f", "q", 100, "after")).is_ok());
    REQUIRE(t.put(put("a0").add("f", "q", 100, "after")).is_ok());
    REQUIRE(s->snapshot().is_ok());
    for (const auto& row : names("a", 40)) want[row] = "base";
    want["a0"] = "after";
    want["a1"] = "loaded";
    want.erase("a2");
    want["b0"] = "before";
    want["c0"] = "loaded";
    want["c1"] = "after";
  }
  std::vector<std::string> rows = names("a", 40);
  for (const auto* r : {"b0", "c0", "c1"}) rows.push_back(r);
  auto s = open_store(dir.path);
  CHECK(values(*s, rows) == want);
  std::filesystem::remove(file);
}

TEST_CASE("a bulk load whose snapshot fails stays readable, and the next snapshot makes it durable", "[backup][bulk]") {
  // The first table's partition files are d1p0.wt, ...
  fault::rule rule{fault::op::sync, "/d1p", EIO, 0, 1};
  auto spec = partition_spec::hash(4);
  bool base = false;
  SECTION("into empty bases: a sync of a partition file fails") {}
  SECTION("into a base with cells: a write of the checkpoint fails, WiredTiger reopens at the last snapshot") {
    rule = {fault::op::write, "/d1p", EIO, 0, 1};
    spec = partition_spec::single();
    base = true;
  }
  temp_dir dir;
  const std::string file = dir.path + "-in.tsv";
  auto faults = std::make_shared<fault::fault_env>();
  auto s = testsupport::open_ok(opts(dir.path, faults));
  REQUIRE(s->create_table({"t", spec, {{"f", 1}}}, schema_origin::hbase_shell).is_ok());
  std::map<std::string, std::string> want;
  if (base) {
    REQUIRE(s->open_table("t").value().put(put("a").add("f", "q", 100, "base")).is_ok());
    REQUIRE(s->snapshot().is_ok());
    want["a"] = "base";
  }
  const auto before = want;
  std::string lines;
  for (const auto& r : names("r", 200)) {
    lines += r + "\t100\tv" + r + "\n";
    want[r] = "v" + r;
  }
  auto rows = names("r", 200);
  rows.push_back("a");
  faults->add(rule);
  auto r = bulk_load(*s, file, lines);
  CHECK(r.code() == code::io_error);
  CHECK(faults->injected() == 1);
  CHECK(values(*s, rows) == want);
  {
    auto copy = testsupport::open_ok(opts(persisttest::crash_copy(dir.path, dir.path + "-crash")));
    // A table with cells took no bulk load: its failed checkpoint left it as before.
    if (base)
      CHECK(values(*copy, rows) == before);
    else
      check_each_partition_before_or_loaded(spec, values(*copy, rows), before, want, rows);
  }
  auto snap = s->snapshot();
  INFO(snap.error().to_string());
  REQUIRE(snap.is_ok());
  {
    auto copy = testsupport::open_ok(opts(persisttest::crash_copy(dir.path, dir.path + "-crash")));
    CHECK(values(*copy, rows) == want);
  }
  std::filesystem::remove(file);
  std::filesystem::remove_all(dir.path + "-crash");
}

TEST_CASE("a bulk load file whose cells are out of key order is refused, changing nothing", "[backup][bulk]") {
  temp_dir dir;
  auto s = open_store();
  REQUIRE(s->create_table({"t", partition_spec::single(), {{"f", 1}}}, schema_origin::hbase_shell).is_ok());
  const std::string staging = dir.path + "-staged";
  REQUIRE(bulk_load(*s, dir.path + "-in.tsv", "a\t100\tx\nb\t100\ty\n", staging).is_ok());
  REQUIRE(s->truncate_table("t").is_ok());
  // The file's two cells swapped, its manifest made to match again.
  using namespace cellar::detail;
  auto m = read_manifest_dir(staging);
  REQUIRE(m.is_ok());
  const std::string name = part_file_name(0);
  std::ifstream in(staging + "/" + name, std::ios::binary);
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto records = cell_records(data);
  REQUIRE(records.is_ok());
  std::vector<std::string> cells;
  REQUIRE(for_each_cell(data, [&](std::string_view key, std::int64_t expires, std::string_view value) {
            std::string one;
            append_cell_record(one, key, expires, value);
            cells.push_back(one);
            return status::ok();
          }).is_ok());
  REQUIRE(cells.size() == 2);
  data = cell_file_header() + cells[1] + cells[0];
  m->files[name] = {data.size(), 2, crc32c(data)};
  std::ofstream(staging + "/" + name, std::ios::binary | std::ios::trunc) << data;
  REQUIRE(write_snapshot_manifest(staging, *m, false).is_ok());

  auto r = s->bulk_load("t", staging);
  CHECK(r.code() == code::corruption);
  CHECK(r.error().message().find("out of key order") != std::string::npos);
  CHECK(all_cells(*s, "t").empty());
  std::filesystem::remove_all(staging);
  std::filesystem::remove(dir.path + "-in.tsv");
}
