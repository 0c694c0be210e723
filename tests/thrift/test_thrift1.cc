// thrift1 (Hbase, happybase's service) through the gateway, driven by the C++ client
// generated from schemas/thrift/thrift1/Hbase.thrift.
#include "cellar/ops.h"
#include "thrift_fixture.h"

namespace {

t1::Mutation put_of(const std::string& column, const std::string& value) {
  t1::Mutation m;
  m.column = column;
  m.value = value;
  return m;
}

t1::Mutation delete_of(const std::string& column) {
  t1::Mutation m;
  m.isDelete = true;
  m.column = column;
  return m;
}

void create(client1& c, const std::string& table) {
  t1::ColumnDescriptor a, b;
  a.name = "cf1:";
  b.name = "cf2:";
  b.maxVersions = 1;
  c->createTable(table, {a, b});
}

template <class F>
std::string io_error1(F&& f) {
  try {
    f();
  } catch (const t1::IOError& e) {
    return e.message;
  }
  FAIL("no IOError");
  return {};
}

}  // namespace

TEST_CASE("thrift1: tables and column descriptors") {
  served_gateway g(thrift1_options());
  client1 c(g);
  create(c, "t");
  std::vector<std::string> names;
  c->getTableNames(names);
  CHECK(names == std::vector<std::string>{"t"});
  std::map<std::string, t1::ColumnDescriptor> cds;
  c->getColumnDescriptors(cds, "t");
  REQUIRE(cds.size() == 2);
  CHECK(cds["cf1:"].maxVersions == 3);  // ColumnDescriptor's default, as HBase takes it
  CHECK(cds["cf2:"].maxVersions == 1);
  CHECK_THROWS_AS(create(c, "t"), t1::AlreadyExists);
  CHECK(c->isTableEnabled("t"));
  c->disableTable("t");
  CHECK_FALSE(c->isTableEnabled("t"));
  std::vector<t1::TRowResult> rows;
  CHECK(io_error1([&] { c->getRow(rows, "t", "r", {}); }).rfind("TABLE_DISABLED", 0) == 0);
  c->enableTable("t");
  std::vector<t1::TRegionInfo> regions;
  c->getTableRegions(regions, "t");
  CHECK(regions.size() == g.options.default_partitions);
  CHECK(regions[0].port == g.gateway->port());
  t1::TRegionInfo one;
  c->getRegionInfo(one, "t,somerow,99999999999999");
  CHECK(one.name.rfind("t,", 0) == 0);
  c->disableTable("t");
  c->deleteTable("t");
  c->getTableNames(names = {});
  CHECK(names.empty());
  CHECK(c->getThriftServerType() == t1::TThriftServerType::ONE);
}

TEST_CASE("thrift1: mutations, rows, cells and versions") {
  served_gateway g(thrift1_options());
  client1 c(g);
  create(c, "t");
  c->mutateRowTs("t", "r1", {put_of("cf1:a", "v1"), put_of("cf2:b", "x")}, 10, {});
  c->mutateRowTs("t", "r1", {put_of("cf1:a", "v2")}, 20, {});
  t1::BatchMutation b;
  b.row = "r2";
  b.mutations = {put_of("cf1:a", "w")};
  c->mutateRows("t", {b}, {});

  std::vector<t1::TRowResult> rows;
  c->getRow(rows, "t", "r1", {});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].row == "r1");
  CHECK(rows[0].columns.size() == 2);
  CHECK(rows[0].columns["cf1:a"].value == "v2");
  CHECK(rows[0].columns["cf1:a"].timestamp == 20);
  CHECK(rows[0].columns["cf2:b"].value == "x");

  c->getRowWithColumns(rows = {}, "t", "r1", {"cf2"}, {});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].columns.size() == 1);
  c->getRowTs(rows = {}, "t", "r1", 20, {});  // versions before 20
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].columns["cf1:a"].value == "v1");
  c->getRows(rows = {}, "t", {"r2", "missing", "r1"}, {});
  REQUIRE(rows.size() == 2);  // the missing row is left out, as HBase does
  CHECK(rows[0].row == "r2");
  CHECK(rows[1].row == "r1");

  std::vector<t1::TCell> cells;
  c->getVer(cells, "t", "r1", "cf1:a", 5, {});
  REQUIRE(cells.size() == 2);
  CHECK(cells[0].value == "v2");
  CHECK(cells[1].value == "v1");
  c->get(cells = {}, "t", "r1", "cf1:a", {});
  REQUIRE(cells.size() == 1);
  CHECK(cells[0].value == "v2");

  // A delete of a column takes every version; a put then writes one.
  c->mutateRow("t", "r1", {delete_of("cf1:a"), put_of("cf1:c", "new")}, {});
  c->getVer(cells = {}, "t", "r1", "cf1:a", 5, {});
  CHECK(cells.empty());
  c->get(cells = {}, "t", "r1", "cf1:c", {});
  REQUIRE(cells.size() == 1);

  // A put without a qualifier is refused, and nothing of the row mutation is applied.
  CHECK_THROWS_AS(c->mutateRow("t", "r1", {put_of("cf1:z", "1"), put_of("cf1", "bad")}, {}), t1::IllegalArgument);
  c->get(cells = {}, "t", "r1", "cf1:z", {});
  CHECK(cells.empty());

  c->deleteAll("t", "r1", "cf2:b", {});
  c->getRow(rows = {}, "t", "r1", {});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].columns.size() == 1);
  c->deleteAllRow("t", "r1", {});
  c->getRow(rows = {}, "t", "r1", {});
  CHECK(rows.empty());

  CHECK(io_error1([&] { c->getRow(rows, "nope", "r", {}); }).rfind("TABLE_NOT_FOUND", 0) == 0);
  CHECK(io_error1([&] { c->mutateRow("t", "r", {put_of("nofam:q", "v")}, {}); }).rfind("FAMILY_NOT_FOUND", 0) == 0);
}

TEST_CASE("thrift1: counters are 8-byte big-endian longs") {
  served_gateway g(thrift1_options());
  client1 c(g);
  create(c, "t");
  CHECK(c->atomicIncrement("t", "r", "cf1:n", 5) == 5);
  CHECK(c->atomicIncrement("t", "r", "cf1:n", -7) == -2);
  std::vector<t1::TCell> cells;
  c->get(cells, "t", "r", "cf1:n", {});
  REQUIRE(cells.size() == 1);
  CHECK(cells[0].value == cellar::long_bytes(-2));
  c->mutateRow("t", "r", {put_of("cf1:s", "abc")}, {});
  CHECK_THROWS_AS(c->atomicIncrement("t", "r", "cf1:s", 1), t1::IllegalArgument);
}

TEST_CASE("thrift1: scanners") {
  served_gateway g(thrift1_options());
  client1 c(g);
  create(c, "t");
  std::vector<t1::BatchMutation> batch;
  for (int i = 0; i < 25; ++i) {
    t1::BatchMutation b;
    char row[8];
    std::snprintf(row, sizeof row, "r%02d", i);
    b.row = row;
    b.mutations = {put_of("cf1:a", std::to_string(i)), put_of("cf2:b", "x")};
    batch.push_back(b);
  }
  c->mutateRows("t", batch, {});

  auto drain = [&](t1::ScannerID id, int page) {
    std::vector<t1::TRowResult> all;
    for (;;) {
      std::vector<t1::TRowResult> got;
      c->scannerGetList(got, id, page);
      if (got.empty()) break;
      all.insert(all.end(), got.begin(), got.end());
    }
    c->scannerClose(id);
    return all;
  };
  auto all = drain(c->scannerOpen("t", "", {}, {}), 10);
  REQUIRE(all.size() == 25);
  CHECK(all[0].row == "r00");
  CHECK(all[24].row == "r24");
  CHECK(all[3].columns.size() == 2);

  auto stop = drain(c->scannerOpenWithStop("t", "r05", "r08", {"cf1:a"}, {}), 2);
  REQUIRE(stop.size() == 3);
  CHECK(stop[0].columns.size() == 1);

  auto prefix = drain(c->scannerOpenWithPrefix("t", "r1", {}, {}), 4);
  REQUIRE(prefix.size() == 10);
  CHECK(prefix.front().row == "r10");
  CHECK(prefix.back().row == "r19");

  t1::TScan s;
  s.__set_startRow("r20");
  s.__set_filterString("SingleColumnValueFilter('cf1', 'a', >=, 'binary:22')");
  s.__set_sortColumns(true);
  s.__set_columns({"cf1"});
  auto filtered = drain(c->scannerOpenWithScan("t", s, {}), 100);
  REQUIRE(filtered.size() == 3);
  CHECK(filtered[0].row == "r22");
  REQUIRE(filtered[0].sortedColumns.size() == 1);
  CHECK(filtered[0].sortedColumns[0].columnName == "cf1:a");

  std::vector<t1::TRowResult> got;
  CHECK_THROWS_AS(c->scannerGetList(got, 12345, 1), t1::IllegalArgument);
  CHECK_THROWS_AS(c->scannerClose(12345), t1::IllegalArgument);
}
