// cellar-admin (src/tools/cellar_admin.cc) and its library (admin/transfer.h): export and
// import round trips, snapshot files, and bulk loads, embedded and through a server.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <thread>
#include <tuple>

#include "../shell/process.h"
#include "../support/eventually.h"
#include "admin/row_files.h"
#include "admin/transfer.h"
#include "backup_fixture.h"
#include "cellar/client.h"
#include "cellar/filter.h"

using namespace cellar;
using namespace backup_test;

namespace {

testproc::output run_admin(const std::vector<std::string>& args) {
  std::vector<std::string> argv{CELLAR_ADMIN};
  for (const auto& a : args) argv.push_back(a);
  return testproc::run(argv, "", true);
}

void make_table(const std::string& dir, const std::string& table, std::uint32_t partitions = 4,
                std::uint32_t versions = 3) {
  auto s = open_store(dir);
  REQUIRE(s->create_table({table, partition_spec::hash(partitions), {{"f", versions}, {"g", 1}}},
                          schema_origin::hbase_shell)
              .is_ok());
}

// Binary rows, qualifiers and values (every byte value), several versions.
void fill_binary(const std::string& dir, const std::string& table) {
  auto s = open_store(dir);
  auto t = s->open_table(table).value();
  for (int i = 0; i < 300; ++i) {
    std::string v;
    for (int b = 0; b < 256; b += 7) v.push_back(static_cast<char>((b + i) & 0xff));
    v += "\t\n\\";
    put p(binary_row(i));
    for (std::int64_t ts = 10; ts <= 12; ++ts) p.add("f", std::string("q\0\t", 3), ts, v + std::to_string(ts));
    p.add("g", "", 5, "");
    REQUIRE(t.put(p).is_ok());
  }
}

std::string write_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr std::int64_t ten_days_ms = 864000000;

bool cell_order(const cell& a, const cell& b) {
  return std::tie(a.row, a.family, a.qualifier, b.timestamp) < std::tie(b.row, b.family, b.qualifier, a.timestamp);
}

// Every cell of `table` that `s` gives through `c`, every version, in scan order.
std::vector<cell> ttl_cells(connection& c, const std::string& table,
                            const scan& s = scan().all_versions().with_cell_ttls()) {
  std::vector<cell> out;
  auto st = c.scan(table, s);
  INFO(st.error().to_string());
  REQUIRE(st.is_ok());
  for (;;) {
    auto rows = (*st)->next(100);
    INFO(rows.error().to_string());
    REQUIRE(rows.is_ok());
    if (rows->empty()) return out;
    for (auto& r : *rows)
      for (auto& cl : r.cells) out.push_back(std::move(cl));
  }
}

// Cells with and without TTLs of their own, at or before `t0`: "short" lives 2 s from t0;
// "long" has an old version with a TTL counted from five seconds before t0 and a newer one
// without; "none" has none; a binary row has a TTL of its own.
void put_ttl_cells(connection& c, const std::string& table, std::int64_t t0) {
  std::vector<batch_op> ops{
      put("short").add("f", "q", t0, "2s").ttl(2000),
      put("long").add("f", "q", t0 - 5000, "old").ttl(ten_days_ms),
      put("long").add("f", "q", t0 - 4000, "new"),
      put("none").add("f", "q", t0, "kept"),
      put(binary_row(7)).add("f", std::string("\0\t", 2), t0 - 1, "bin").ttl(ten_days_ms + 1),
  };
  for (const auto& r : c.batch(table, std::move(ops))) REQUIRE(r.st.is_ok());
}

std::vector<cell> expected_ttl_cells(std::int64_t t0) {
  return {
      {"long", "f", "q", t0 - 4000, "new", 0},
      {"long", "f", "q", t0 - 5000, "old", ten_days_ms},
      {"none", "f", "q", t0, "kept", 0},
      {binary_row(7), "f", std::string("\0\t", 2), t0 - 1, "bin", ten_days_ms + 1},
      {"short", "f", "q", t0, "2s", 2000},
  };
}

// "short" of each table is readable until 2 s after t0 and gone after; the others stay.
void expect_short_cell_expires(connection& c, const std::vector<std::string>& tables, std::int64_t t0) {
  auto has = [&](const std::string& table, const std::string& row) {
    auto cells = ttl_cells(c, table);
    return std::any_of(cells.begin(), cells.end(), [&](const cell& x) { return x.row == row; });
  };
  // Only while the clock says the cell is alive is it checked to be there.
  bool checked = false;
  for (const auto& t : tables) {
    const bool alive = has(t, "short");
    if (now_ms() < t0 + 2000) {
      CHECK(alive);
      checked = true;
    }
  }
  auto gone = [&] {
    for (const auto& t : tables)
      if (has(t, "short")) return false;
    return true;
  };
  if (!checked) WARN("the clock passed the short cell's end before it was looked at");
  REQUIRE(testsupport::eventually(gone));
  CHECK(now_ms() > t0 + 2000);  // not before its time
  for (const auto& t : tables) {
    INFO(t);
    CHECK(has(t, "none"));
    CHECK(has(t, "long"));
  }
}

}  // namespace

TEST_CASE("row file escaping round-trips every byte", "[backup][admin]") {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  CHECK(admin::unescape(admin::escape(all)) == all);
  CHECK(admin::escape(all).find_first_of("\t\n\r") == std::string::npos);
  CHECK(admin::unbase64(admin::base64(all)) == all);
  for (std::size_t n = 0; n < 5; ++n) CHECK(admin::unbase64(admin::base64(all.substr(0, n))) == all.substr(0, n));
  CHECK(admin::escape("a\\b\x01") == "a\\\\b\\x01");
  CHECK_FALSE(admin::unescape("bad\\q").has_value());
  CHECK_FALSE(admin::unbase64("abc").has_value());
}

TEST_CASE("export then import round-trips binary rows, values and versions (tsv and jsonl)", "[backup][admin]") {
  temp_dir dir;
  make_table(dir.path, "src");
  make_table(dir.path, "dst_tsv");
  make_table(dir.path, "dst_jsonl");
  fill_binary(dir.path, "src");
  const std::string tsv = dir.path + "-out.tsv", jsonl = dir.path + "-out.jsonl";
  for (const auto& [file, format] : {std::pair{tsv, "tsv"}, std::pair{jsonl, "jsonl"}}) {
    auto e = run_admin(
        {"--embedded", dir.path, "--json", "export", "src", "--to", file, "--format", format, "--versions", "0"});
    INFO(e.out);
    REQUIRE(e.exit_code == 0);
    CHECK(e.out.find(R"("cells":1200)") != std::string::npos);
  }
  auto i1 = run_admin({"--embedded", dir.path, "import", "dst_tsv", tsv});
  INFO(i1.out);
  REQUIRE(i1.exit_code == 0);
  auto i2 = run_admin({"--embedded", dir.path, "import", "dst_jsonl", jsonl});
  INFO(i2.out);
  REQUIRE(i2.exit_code == 0);
  {
    auto s = open_store(dir.path);
    const auto want = all_cells(*s, "src");
    REQUIRE(want.size() == 1200);
    CHECK(all_cells(*s, "dst_tsv") == want);
    CHECK(all_cells(*s, "dst_jsonl") == want);
  }
  // A range and one version: only those cells.
  auto e = run_admin({"--embedded", dir.path, "--json", "export", "src", "--to", tsv, "--start",
                      admin::escape(binary_row(10)), "--stop", admin::escape(binary_row(20)), "--time-range", "11,12"});
  REQUIRE(e.exit_code == 0);
  std::ifstream in(tsv);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    auto c = admin::parse_cell(line, admin::row_format::tsv);
    REQUIRE(c.is_ok());
    CHECK(c->timestamp == 11);
    CHECK(c->row >= binary_row(10));
    CHECK(c->row < binary_row(20));
    ++n;
  }
  CHECK(n > 0);
  std::remove(tsv.c_str());
  std::remove(jsonl.c_str());
}

TEST_CASE("export and import keep each cell's own TTL, counted from its timestamp (tsv and jsonl)", "[backup][admin]") {
  auto s = open_store();
  for (const char* t : {"src", "dst_tsv", "dst_jsonl"})
    REQUIRE(s->create_table({t, partition_spec::hash(2), {{"f", 3}}}, schema_origin::hbase_shell).is_ok());
  auto conn = connect_embedded(*s);
  const std::int64_t t0 = now_ms();
  put_ttl_cells(*conn, "src", t0);
  const auto want = ttl_cells(*conn, "src");
  REQUIRE(want.size() == 5);
  CHECK(want == expected_ttl_cells(t0));
  // Without with_cell_ttls no cell carries one; a reversed and a filtered scan fill them too.
  for (const auto& c : ttl_cells(*conn, "src", scan().all_versions())) CHECK(c.ttl_ms == 0);
  auto reversed = ttl_cells(*conn, "src", scan().all_versions().with_cell_ttls().reversed());
  std::sort(reversed.begin(), reversed.end(), cell_order);
  CHECK(reversed == want);
  CHECK(ttl_cells(*conn, "src",
                  scan().all_versions().with_cell_ttls().filter(
                      parse_filter("ValueFilter(!=, 'binary:none')").value())) == want);
  // A get has no cell TTLs to give: asking is refused.
  get g("short");
  g.options.cell_ttls = true;
  CHECK(conn->batch("src", {g}).at(0).st.code() == code::invalid_argument);

  temp_dir dir;
  std::filesystem::create_directories(dir.path);
  for (auto [format, table] :
       {std::pair{admin::row_format::tsv, "dst_tsv"}, std::pair{admin::row_format::jsonl, "dst_jsonl"}}) {
    INFO(table);
    const std::string file = dir.path + (format == admin::row_format::tsv ? "/out.tsv" : "/out.jsonl");
    admin::export_options eo;
    eo.format = format;
    eo.versions = 0;
    REQUIRE(admin::export_table(*conn, "src", file, eo, nullptr).is_ok());
    const std::string text = read_file(file);
    CHECK(text.find(format == admin::row_format::tsv ? "\t2s\t2000\n" : R"("ttl":2000})") != std::string::npos);
    REQUIRE(admin::import_table(*conn, table, file, std::nullopt, nullptr).is_ok());
    CHECK(ttl_cells(*conn, table) == want);
  }
  expect_short_cell_expires(*conn, {"src", "dst_tsv", "dst_jsonl"}, t0);
}

TEST_CASE("import: rows files without TTLs still read; a TTL that has run out hides the cell; bad TTLs are refused",
          "[backup][admin]") {
  auto s = open_store();
  REQUIRE(s->create_table({"t", partition_spec::hash(2), {{"f", 3}}}, schema_origin::hbase_shell).is_ok());
  auto conn = connect_embedded(*s);
  temp_dir dir;
  std::filesystem::create_directories(dir.path);
  const std::string now = std::to_string(now_ms());
  // Four fields: no TTL. A TTL counted from a timestamp long past has run out on import.
  const std::string file = write_file(dir.path + "/old.tsv", "c\tf:q\t" + now + "\tv\n" + "d\tf:q\t" +
                                                                 std::to_string(now_ms() - 100000) + "\tv\t1000\n");
  REQUIRE(admin::import_table(*conn, "t", file, std::nullopt, nullptr).is_ok());
  auto t = s->open_table("t").value();
  CHECK(t.get(get("c")).value().exists);
  CHECK_FALSE(t.get(get("d")).value().exists);
  // A TTL that is not a non-zero integer is a bad line; nothing is written.
  for (const std::string& bad :
       {"e\tf:q\t" + now + "\tv\t0\n", "e\tf:q\t" + now + "\tv\t2s\n", "e\tf:q\t" + now + "\tv\t1000\textra\n"}) {
    INFO(bad);
    auto r = admin::import_table(*conn, "t", write_file(dir.path + "/bad.tsv", "x\tf:q\t1\tv\n" + bad), std::nullopt,
                                 nullptr);
    CHECK(r.code() == code::invalid_argument);
    CHECK(r.error().message().rfind("line 2: ", 0) == 0);
  }
  for (const std::string bad : {R"({"row":"ZQ==","family":"f","qualifier":"","timestamp":1,"value":"","ttl":0})",
                                R"({"row":"ZQ==","family":"f","qualifier":"","timestamp":1,"value":"","ttl":"9"})"}) {
    INFO(bad);
    auto r = admin::import_table(*conn, "t", write_file(dir.path + "/bad.jsonl", bad + "\n"), std::nullopt, nullptr);
    CHECK(r.code() == code::invalid_argument);
  }
  CHECK_FALSE(t.get(get("x")).value().exists);
  CHECK_FALSE(t.get(get("e")).value().exists);
  // A time-series family has no cell TTLs: the import is refused before anything is written.
  REQUIRE(s->create_table(
               {"ts", partition_spec::single(), {family_descriptor{"s", 0, 0, 1 << 20, family_kind::time_series}}},
               schema_origin::oceanbase_ddl)
              .is_ok());
  auto r = admin::import_table(*conn, "ts", write_file(dir.path + "/ts.tsv", "a\ts:\t5\t{}\nb\ts:\t5\t{}\t1000\n"),
                               std::nullopt, nullptr);
  CHECK(r.code() == code::unsupported);
  CHECK(r.error().message().rfind("line 2: ", 0) == 0);
}

TEST_CASE("import refuses a bad line whole, naming it, with exit code 3", "[backup][admin]") {
  temp_dir dir;
  make_table(dir.path, "t");
  const std::string file = write_file(dir.path + "-bad.tsv", "r1\tf:a\t1\tv1\nr2\tf:a\tnot-a-number\tv2\n");
  auto r = run_admin({"--embedded", dir.path, "import", "t", file});
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("line 2") != std::string::npos);
  write_file(file, "r1\tf:a\t1\tv1\nr2\tnope:a\t1\tv2\n");
  r = run_admin({"--embedded", dir.path, "import", "t", file});
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("FAMILY_NOT_FOUND") != std::string::npos);
  auto s = open_store(dir.path);
  CHECK(all_cells(*s, "t").empty());
  std::remove(file.c_str());
}

TEST_CASE("bulkload of 100k rows reads back equal to its input; a bad line loads nothing", "[backup][admin]") {
  temp_dir dir;
  make_table(dir.path, "t", 8, 1);
  const std::string file = dir.path + "-in.tsv";
  std::map<std::string, std::pair<std::string, std::string>> want;
  {
    std::ofstream out(file);
    for (int i = 0; i < 100000; ++i) {
      const std::string row = "user" + std::to_string(i * 7919 % 1000003);
      const std::string a = "a" + std::to_string(i), b = std::string(i % 5, 'b');
      out << row << "\t" << a << "\t" << b << "\n";
      want[row] = {a, b};
    }
  }
  auto bad = write_file(dir.path + "-bad.tsv", "x1\tA\tB\nx2\tonly-two-fields\n");
  auto r = run_admin({"--embedded", dir.path, "bulkload", "t", "--tsv", bad, "--columns", "HBASE_ROW_KEY,f:a,g:b"});
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("line 2: expected 3 fields, found 2") != std::string::npos);
  r = run_admin({"--embedded", dir.path, "bulkload", "t", "--tsv", file, "--columns", "HBASE_ROW_KEY,f:a,nope:b"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("FAMILY_NOT_FOUND") != std::string::npos);

  r = run_admin(
      {"--embedded", dir.path, "--json", "bulkload", "t", "--tsv", file, "--columns", "HBASE_ROW_KEY,f:a,g:b"});
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(R"("rows":100000)") != std::string::npos);
  CHECK(r.out.find(R"("partitions":8)") != std::string::npos);
  auto s = open_store(dir.path);  // after a restart: the load is durable
  auto t = s->open_table("t").value();
  auto rows = t.scan(scan()).value().all().value();
  REQUIRE(rows.size() == want.size());
  for (const auto& row : rows) {
    auto it = want.find(row.row);
    REQUIRE(it != want.end());
    REQUIRE(row.cells.size() == 2);
    CHECK(row.cells[0].family == "f");
    CHECK(row.cells[0].value == it->second.first);
    CHECK(row.cells[1].family == "g");
    CHECK(row.cells[1].value == it->second.second);
  }
  CHECK_FALSE(t.get(get("x1")).value().exists);
  std::remove(file.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("bulk load: versions in timestamp order, the later line and column win, binary rows", "[backup][admin]") {
  auto s = open_store();
  REQUIRE(s->create_table({"t", partition_spec::hash(4), {{"f", 3}, {"g", 1}}}, schema_origin::hbase_shell).is_ok());
  temp_dir dir;
  std::filesystem::create_directories(dir.path);
  const std::string k("k\0x", 3);
  // f:a is named twice: of the two, the later column wins; line 3 repeats line 1's key and
  // timestamp, so it wins over line 1.
  const std::string file = write_file(dir.path + "/in.csv", k + ",10,B1,A1,G1,A1b\n" + k + ",20,B2,A2,G2,A2b\n" + k +
                                                                ",10,B3,A3,G3,A3b\nm,5,B4,A4,G4,A4b\n");
  auto conn = connect_embedded(*s);
  admin::bulk_options o;
  o.columns = "HBASE_ROW_KEY,HBASE_TS_KEY,f:b,f:a,g,f:a";
  o.separator = ',';
  auto r = admin::bulk_load_tsv(*conn, "t", file, o, nullptr);
  INFO(r.error().to_string());
  REQUIRE(r.is_ok());
  std::vector<std::string> got;
  for (const auto& c : all_cells(*s, "t"))
    got.push_back(c.row + "/" + c.family + ":" + c.qualifier + "@" + std::to_string(c.timestamp) + "=" + c.value);
  std::sort(got.begin(), got.end());
  std::vector<std::string> want{k + "/f:a@10=A3b", k + "/f:a@20=A2b", k + "/f:b@10=B3", k + "/f:b@20=B2",
                                k + "/g:@20=G2",   "m/f:a@5=A4b",     "m/f:b@5=B4",     "m/g:@5=G4"};
  std::sort(want.begin(), want.end());
  CHECK(got == want);
}

TEST_CASE("bulk load: several columns of one family, qualifiers out of order and with a zero byte", "[backup][admin]") {
  auto s = open_store();
  REQUIRE(s->create_table({"t", partition_spec::hash(4), {{"f", 1}, {"g", 1}}}, schema_origin::hbase_shell).is_ok());
  temp_dir dir;
  std::filesystem::create_directories(dir.path);
  const std::string file = write_file(dir.path + "/in.tsv", "r1\t1\tB1\tA1\tZ1\tG1\nr2\t2\tB2\tA2\tZ2\tG2\n");
  auto conn = connect_embedded(*s);
  admin::bulk_options o;
  o.columns = std::string("HBASE_ROW_KEY,HBASE_TS_KEY,f:b,f:a,f:z\0z,g:x", 44);
  auto r = admin::bulk_load_tsv(*conn, "t", file, o, nullptr);
  INFO(r.error().to_string());
  REQUIRE(r.is_ok());
  CHECK(r->cells == 8);
  std::vector<std::string> got;
  for (const auto& c : all_cells(*s, "t"))
    got.push_back(c.row + "/" + c.family + ":" + c.qualifier + "@" + std::to_string(c.timestamp) + "=" + c.value);
  std::sort(got.begin(), got.end());
  const std::string z("z\0z", 3);
  std::vector<std::string> want{"r1/f:a@1=A1", "r1/f:b@1=B1", "r1/f:" + z + "@1=Z1", "r1/g:x@1=G1",
                                "r2/f:a@2=A2", "r2/f:b@2=B2", "r2/f:" + z + "@2=Z2", "r2/g:x@2=G2"};
  std::sort(want.begin(), want.end());
  CHECK(got == want);
}

TEST_CASE("a bulk load's partition appears to readers whole or not at all", "[backup][admin]") {
  auto s = open_store();
  REQUIRE(s->create_table({"t", partition_spec::single(), {{"f"}}}, schema_origin::hbase_shell).is_ok());
  temp_dir dir;
  std::filesystem::create_directories(dir.path);
  const std::string file = dir.path + "/in.tsv";
  constexpr int rows = 30000;
  {
    std::ofstream out(file);
    for (int i = 0; i < rows; ++i) out << "r" << i << "\tv" << i << "\n";
  }
  auto conn = connect_embedded(*s);
  std::atomic<bool> done{false};
  std::vector<std::size_t> seen;
  std::thread reader([&] {
    auto t = s->open_table("t").value();
    while (!done.load()) {
      // One page: the partition answers it between two of its requests.
      auto sc = t.scan(scan().caching(rows * 2)).value();
      auto page = sc.next(rows * 2).value();
      seen.push_back(page.size());
    }
  });
  admin::bulk_options o;
  o.columns = "HBASE_ROW_KEY,f:v";
  auto r = admin::bulk_load_tsv(*conn, "t", file, o, nullptr);
  done = true;
  reader.join();
  INFO(r.error().to_string());
  REQUIRE(r.is_ok());
  CHECK(r->cells == rows);
  for (auto n : seen) CHECK((n == 0 || n == rows));
  CHECK(all_cells(*s, "t").size() == rows);
}

TEST_CASE("cellar-admin over a server: snapshot files out and in, bulk load, export", "[backup][admin][server]") {
  temp_dir data, work;
  std::filesystem::create_directories(work.path);
  testproc::server srv(CELLAR_SERVER, data.path);
  auto c = rpc::connect(srv.address()).value();
  REQUIRE(c->create_table({"t", partition_spec::hash(3), {{"f", 2}}}, schema_origin::hbase_shell).is_ok());
  const std::string tsv = write_file(work.path + "/in.tsv", "r1,1,2\nr2,3,4\nr3,5,6\n");
  auto r = run_admin({"--connect", srv.address(), "bulkload", "t", "--tsv", tsv, "--columns", "HBASE_ROW_KEY,f:a,f:b",
                      "--separator", ","});
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  REQUIRE(c->snapshot_table("t", "s").is_ok());
  r = run_admin({"--connect", srv.address(), "export-snapshot", "s", "--to", work.path + "/snap"});
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(std::filesystem::exists(work.path + "/snap/manifest"));
  REQUIRE(c->delete_snapshot("s").is_ok());
  r = run_admin({"--connect", srv.address(), "--json", "import-snapshot", work.path + "/snap", "--as", "t2"});
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(R"("table":"t2")") != std::string::npos);
  auto row = c->get("t2", get("r2"));
  REQUIRE(row.is_ok());
  REQUIRE(row->cells.size() == 2);
  CHECK(row->cells[0].value == "3");
  CHECK(row->cells[1].value == "4");
  r = run_admin({"--connect", srv.address(), "export", "t2", "--to", work.path + "/t2.tsv"});
  REQUIRE(r.exit_code == 0);
  std::ifstream in(work.path + "/t2.tsv");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(std::count(all.begin(), all.end(), '\n') == 6);
  // Bad usage and an unreachable store: exit code 2.
  CHECK(run_admin({"export", "t"}).exit_code == 2);
  CHECK(run_admin({"--connect", "127.0.0.1:1", "export", "t", "--to", "x"}).exit_code == 2);
}

TEST_CASE("cellar-admin over a server: export and import keep each cell's own TTL (tsv and jsonl)",
          "[backup][admin][server]") {
  temp_dir data, work;
  std::filesystem::create_directories(work.path);
  testproc::server srv(CELLAR_SERVER, data.path);
  auto c = rpc::connect(srv.address()).value();
  for (const char* t : {"src", "dst_tsv", "dst_jsonl"})
    REQUIRE(c->create_table({t, partition_spec::hash(3), {{"f", 3}}}, schema_origin::hbase_shell).is_ok());
  const std::int64_t t0 = now_ms();
  put_ttl_cells(*c, "src", t0);
  // Through the RPC scan: with_cell_ttls crosses to the server, the TTLs come back.
  const auto want = ttl_cells(*c, "src");
  CHECK(want == expected_ttl_cells(t0));
  for (const auto& x : ttl_cells(*c, "src", scan().all_versions())) CHECK(x.ttl_ms == 0);
  auto reversed = ttl_cells(*c, "src", scan().all_versions().with_cell_ttls().reversed());
  std::sort(reversed.begin(), reversed.end(), cell_order);
  CHECK(reversed == want);
  for (const auto& [format, table] : {std::pair{"tsv", "dst_tsv"}, std::pair{"jsonl", "dst_jsonl"}}) {
    INFO(format);
    const std::string file = work.path + "/out." + format;
    auto r =
        run_admin({"--connect", srv.address(), "export", "src", "--to", file, "--format", format, "--versions", "0"});
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    r = run_admin({"--connect", srv.address(), "import", table, file});
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    CHECK(ttl_cells(*c, table) == want);
  }
  expect_short_cell_expires(*c, {"src", "dst_tsv", "dst_jsonl"}, t0);
}

TEST_CASE("a named snapshot survives kill -9 of a log-sync server", "[backup][server]") {
  temp_dir data;
  std::vector<cell> want;
  {
    testproc::server srv(CELLAR_SERVER, data.path, {"--durability", "log-sync"});
    auto c = rpc::connect(srv.address()).value();
    REQUIRE(c->create_table({"t", partition_spec::hash(4), {{"f", 2}}}, schema_origin::hbase_shell).is_ok());
    for (int i = 0; i < 500; ++i)
      REQUIRE(
          c->put("t", put(binary_row(i)).add("f", "q", 1, "old").add("f", "q", 2, "v" + std::to_string(i))).is_ok());
    auto stream = c->scan("t", scan().all_versions()).value();
    for (;;) {
      auto rows = stream->next(1000).value();
      if (rows.empty()) break;
      for (auto& r : rows)
        for (auto& x : r.cells) want.push_back(x);
    }
    REQUIRE(want.size() == 1000);
    REQUIRE(c->snapshot_table("t", "s").is_ok());
    for (int i = 0; i < 100; ++i) REQUIRE(c->put("t", put(binary_row(i)).add("f", "q", 3, "after")).is_ok());
    ::kill(srv.pid(), SIGKILL);
    srv.stop();
  }
  auto s = open_store(data.path, durability::log_sync);
  auto l = s->list_snapshots().value();
  REQUIRE(l.size() == 1);
  CHECK(l[0].cells == 1000);
  REQUIRE(s->clone_snapshot("s", "t2").is_ok());
  CHECK(all_cells(*s, "t2") == want);
  CHECK(all_cells(*s, "t") != want);  // the writes after the snapshot were kept by the log
}
