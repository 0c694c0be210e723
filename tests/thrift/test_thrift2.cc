// thrift2 (THBaseService) through the gateway: tables, gets, puts, deletes, scanners and
// errors, driven by the C++ client generated from schemas/thrift/thrift2/hbase.thrift.
#include <algorithm>

#include "thrift_fixture.h"

namespace {

std::string row_name(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "row%03d", i);
  return b;
}

std::vector<std::string> rows_of(const std::vector<t2::TResult>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) out.push_back(r.row);
  return out;
}

}  // namespace

TEST_CASE("thrift2: create, exists and drop a table") {
  served_gateway g;
  client2 c(g);
  CHECK_FALSE(c->tableExists(tname("t")));
  create_table2(c, "t", {"f", "g"}, {"m"});
  CHECK(c->tableExists(tname("t")));
  CHECK(g.store->table_exists("t"));
  auto d = g.store->describe("t");
  REQUIRE(d);
  CHECK(d->families.size() == 2);
  CHECK(d->families[0].max_versions == 3);
  CHECK(d->partitioning.how == cellar::partition_spec::method::range);
  CHECK(d->partitioning.bounds == std::vector<std::string>{"m"});

  // A second create of the same table fails with cellar's code and leaves the first.
  CHECK(io_error_of([&] { create_table2(c, "t", {"x"}); }).rfind("ALREADY_EXISTS", 0) == 0);
  CHECK(g.store->describe("t")->families.size() == 2);

  c->disableTable(tname("t"));
  c->deleteTable(tname("t"));
  CHECK_FALSE(c->tableExists(tname("t")));
  CHECK(io_error_of([&] { c->deleteTable(tname("t")); }).rfind("TABLE_NOT_FOUND", 0) == 0);
}

TEST_CASE("thrift2: put, get, exists, versions and time ranges") {
  served_gateway g;
  client2 c(g);
  create_table2(c, "t", {"f", "g"});
  c->put("t", tput("r1", {column_value("f", "a", "one", 10), column_value("g", "b", "x", 10)}));
  c->put("t", tput("r1", {column_value("f", "a", "two", 20)}));

  t2::TResult r;
  c->get(r, "t", tget("r1"));
  CHECK(r.row == "r1");
  REQUIRE(r.columnValues.size() == 2);  // the newest of each column, family order
  CHECK(r.columnValues[0].family == "f");
  CHECK(r.columnValues[0].value == "two");
  CHECK(r.columnValues[0].timestamp == 20);
  CHECK(r.columnValues[1].family == "g");
  CHECK(r.columnValues[1].value == "x");

  auto versions = tget("r1");
  versions.__set_maxVersions(3);
  t2::TColumn fa;
  fa.family = "f";
  fa.__set_qualifier("a");
  versions.__set_columns({fa});
  c->get(r, "t", versions);
  REQUIRE(r.columnValues.size() == 2);
  CHECK(r.columnValues[0].value == "two");
  CHECK(r.columnValues[1].value == "one");

  auto at10 = tget("r1");
  at10.__set_timestamp(10);
  c->get(r, "t", at10);
  REQUIRE(r.columnValues.size() == 2);
  CHECK(r.columnValues[0].value == "one");

  auto range = tget("r1");
  t2::TTimeRange tr;
  tr.minStamp = 15;
  tr.maxStamp = 100;
  range.__set_timeRange(tr);
  c->get(r, "t", range);
  REQUIRE(r.columnValues.size() == 1);
  CHECK(r.columnValues[0].value == "two");

  t2::TResult none;
  c->get(none, "t", tget("missing"));
  CHECK_FALSE(none.__isset.row);
  CHECK(none.columnValues.empty());

  CHECK(c->exists("t", tget("r1")));
  CHECK_FALSE(c->exists("t", tget("missing")));
}

TEST_CASE("thrift2: deletes") {
  served_gateway g;
  client2 c(g);
  create_table2(c, "t", {"f", "g"});
  c->put("t", tput("r", {column_value("f", "a", "1", 10), column_value("g", "b", "x", 10)}));
  c->put("t", tput("r", {column_value("f", "a", "2", 20)}));
  auto all = tget("r");
  all.__set_maxVersions(3);

  SECTION("DELETE_COLUMN removes the newest version only") {
    t2::TDelete d;
    d.row = "r";
    t2::TColumn col;
    col.family = "f";
    col.__set_qualifier("a");
    d.__set_columns({col});
    d.__set_deleteType(t2::TDeleteType::DELETE_COLUMN);
    c->deleteSingle("t", d);
    t2::TResult r;
    c->get(r, "t", all);
    REQUIRE(r.columnValues.size() == 2);
    CHECK(r.columnValues[0].value == "1");
  }
  SECTION("the default, DELETE_COLUMNS, removes every version") {
    t2::TDelete d;
    d.row = "r";
    t2::TColumn col;
    col.family = "f";
    col.__set_qualifier("a");
    d.__set_columns({col});
    c->deleteSingle("t", d);
    t2::TResult r;
    c->get(r, "t", all);
    REQUIRE(r.columnValues.size() == 1);
    CHECK(r.columnValues[0].family == "g");
  }
  SECTION("no columns: the whole row") {
    t2::TDelete d;
    d.row = "r";
    c->deleteSingle("t", d);
    CHECK_FALSE(c->exists("t", all));
  }
  SECTION("a family") {
    t2::TDelete d;
    d.row = "r";
    t2::TColumn col;
    col.family = "g";
    d.__set_columns({col});
    c->deleteSingle("t", d);
    t2::TResult r;
    c->get(r, "t", all);
    REQUIRE(r.columnValues.size() == 2);
    CHECK(r.columnValues[0].family == "f");
    CHECK(r.columnValues[1].family == "f");
  }
}

TEST_CASE("thrift2: scanners page to the end") {
  served_gateway g;
  client2 c(g);
  create_table2(c, "t", {"f"});
  std::vector<t2::TPut> puts;
  for (int i = 0; i < 30; ++i) puts.push_back(tput(row_name(i), {column_value("f", "q", "v" + std::to_string(i))}));
  c->putMultiple("t", puts);

  t2::TScan s;
  s.__set_caching(4);
  const auto id = c->openScanner("t", s);
  std::vector<std::string> seen;
  for (;;) {
    std::vector<t2::TResult> page;
    c->getScannerRows(page, id, 7);
    if (page.empty()) break;
    CHECK(page.size() <= 7);
    for (const auto& r : page) {
      REQUIRE(r.columnValues.size() == 1);
      CHECK(r.columnValues[0].value == "v" + std::to_string(seen.size()));
      seen.push_back(r.row);
    }
  }
  REQUIRE(seen.size() == 30);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  c->closeScanner(id);
  std::vector<t2::TResult> page;
  CHECK_THROWS_AS(c->getScannerRows(page, id, 1), t2::TIllegalArgument);
  CHECK_THROWS_AS(c->closeScanner(id), t2::TIllegalArgument);

  SECTION("start and stop rows, reversed, limit") {
    t2::TScan r;
    r.__set_startRow(row_name(20));
    r.__set_stopRow(row_name(10));
    r.__set_reversed(true);
    std::vector<t2::TResult> got;
    c->getScannerResults(got, "t", r, 100);
    REQUIRE(got.size() == 10);
    CHECK(got.front().row == row_name(20));
    CHECK(got.back().row == row_name(11));
    t2::TScan l;
    l.__set_limit(3);
    c->getScannerResults(got = {}, "t", l, 100);
    CHECK(rows_of(got) == std::vector<std::string>{row_name(0), row_name(1), row_name(2)});
  }
  SECTION("filter strings") {
    t2::TScan f;
    f.__set_filterString("PrefixFilter('row01') AND ValueFilter(!=, 'binary:v12')");
    std::vector<t2::TResult> got;
    c->getScannerResults(got, "t", f, 100);
    CHECK(rows_of(got) == std::vector<std::string>{row_name(10), row_name(11), row_name(13), row_name(14), row_name(15),
                                                   row_name(16), row_name(17), row_name(18), row_name(19)});
    auto gf = tget(row_name(5));
    gf.__set_filterString("ValueFilter(=, 'binary:nope')");
    CHECK_FALSE(c->exists("t", gf));
    t2::TScan bad;
    bad.__set_filterString("NoSuchFilter(");
    CHECK(io_error_of([&] { c->openScanner("t", bad); }).rfind("INVALID_ARGUMENT", 0) == 0);
  }
}

TEST_CASE("thrift2: errors carry cellar's status and leave the store as it was") {
  served_gateway g;
  client2 c(g);
  create_table2(c, "t", {"f"});
  t2::TResult r;
  CHECK(io_error_of([&] { c->get(r, "nope", tget("r")); }).rfind("TABLE_NOT_FOUND", 0) == 0);
  CHECK(io_error_of([&] { c->put("t", tput("r", {column_value("nofam", "q", "v")})); }).rfind("FAMILY_NOT_FOUND", 0) ==
        0);
  // A put with a good and a bad column writes neither.
  CHECK(io_error_of([&] {
          c->put("t", tput("r", {column_value("f", "q", "v"), column_value("x", "q", "v")}));
        }).rfind("FAMILY_NOT_FOUND", 0) == 0);
  CHECK_FALSE(c->exists("t", tget("r")));
  CHECK(io_error_of([&] { c->put("t", tput("", {column_value("f", "q", "v")})); }).rfind("INVALID_ARGUMENT", 0) == 0);
  auto fb = tget("r");
  fb.__set_filterBytes("x");
  CHECK(io_error_of([&] { c->get(r, "t", fb); }).rfind("UNSUPPORTED", 0) == 0);
  c->disableTable(tname("t"));
  CHECK(io_error_of([&] { c->get(r, "t", tget("r")); }).rfind("TABLE_DISABLED", 0) == 0);
  c->enableTable(tname("t"));
  // The connection that saw every error still serves.
  c->put("t", tput("r", {column_value("f", "q", "v")}));
  CHECK(c->exists("t", tget("r")));
}
