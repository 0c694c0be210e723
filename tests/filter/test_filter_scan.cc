// Every filter kind through the embedded API: HBase's TestFilter, TestSingleColumnValueFilter,
// TestColumnPaginationFilter, TestDependentColumnFilter, TestMultiRowRangeFilter and
// TestFuzzyRowFilter expectations (as data, on the same data sets), docs/semantics.md R35-R43
// and R8, checkAndMutate with a filter, and time-series refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <random>

#include "filter_fixture.h"

using namespace cellar;
using namespace filter_test;

namespace {

// ---- HBase's TestFilter data set ---------------------------------------------------------
//
// Rows testRowOne-0..3 (values testValueOne, qualifiers testQualifierOne-0..3) and
// testRowTwo-0..3 (testValueTwo, testQualifierTwo-0..3) in families testFamilyOne and
// testFamilyTwo; then qualifier -1 and row -1 of each group deleted: 6 rows of 6 cells.
const char* F0 = "testFamilyOne";
const char* F1 = "testFamilyTwo";
std::string row1(int i) { return "testRowOne-" + std::to_string(i); }
std::string row2(int i) { return "testRowTwo-" + std::to_string(i); }
std::string q1(int i) { return "testQualifierOne-" + std::to_string(i); }
std::string q2(int i) { return "testQualifierTwo-" + std::to_string(i); }
const char* V0 = "testValueOne";
const char* V1 = "testValueTwo";

struct hbase_test_filter {
  std::unique_ptr<store> s = open_store();
  table t =
      make_table(*s, "TestFilter", {"testFamilyOne", "testFamilyTwo", "testFamilyThree", "testFamilyFour", "f1", "f2"});
  std::int64_t ts = 1000;
  std::size_t num_rows = 8, cols_per_row = 8;

  hbase_test_filter() {
    for (int i = 0; i < 4; ++i) {
      put p(row1(i), ts);
      for (int q = 0; q < 4; ++q) p.add(F0, q1(q), V0);
      REQUIRE(t.put(p));
      put p2(row2(i), ts);
      for (int q = 0; q < 4; ++q) p2.add(F1, q2(q), V1);
      REQUIRE(t.put(p2));
    }
    ++ts;
    for (int i = 0; i < 4; ++i) {  // the other family
      put p(row1(i), ts);
      for (int q = 0; q < 4; ++q) p.add(F1, q1(q), V0);
      REQUIRE(t.put(p));
      put p2(row2(i), ts);
      for (int q = 0; q < 4; ++q) p2.add(F0, q2(q), V1);
      REQUIRE(t.put(p2));
    }
    for (int i = 0; i < 4; ++i) {  // the second qualifier of every row
      REQUIRE(t.remove(deletion(row1(i)).columns(F0, q1(1)).columns(F1, q1(1))));
      REQUIRE(t.remove(deletion(row2(i)).columns(F0, q2(1)).columns(F1, q2(1))));
    }
    cols_per_row -= 2;
    for (int q = 0; q < 4; ++q) {  // the second row of both groups
      REQUIRE(t.remove(deletion(row1(1)).columns(F0, q1(q)).columns(F1, q1(q))));
      REQUIRE(t.remove(deletion(row2(1)).columns(F0, q2(q)).columns(F1, q2(q))));
    }
    num_rows -= 2;
  }
  std::string k1(int r, const char* f, int q) { return row1(r) + "/" + f + ":" + q1(q) + "=" + V0; }
  std::string k2(int r, const char* f, int q) { return row2(r) + "/" + f + ":" + q2(q) + "=" + V1; }
  // Every cell, in order, of the rows and qualifiers given.
  std::vector<std::string> all(std::vector<int> r1, std::vector<int> r2, std::vector<const char*> fams,
                               std::vector<int> quals) {
    std::vector<std::string> out;
    for (int r : r1)
      for (auto f : fams)
        for (int q : quals) out.push_back(k1(r, f, q));
    for (int r : r2)
      for (auto f : fams)
        for (int q : quals) out.push_back(k2(r, f, q));
    return out;
  }
};

}  // namespace

TEST_CASE("TestFilter: no filter, PrefixFilter, PageFilter", "[filter][TestFilter]") {
  hbase_test_filter h;
  verify_scan(h.t, scan(), h.num_rows, h.cols_per_row);
  verify_scan(h.t, scan().family(F0), h.num_rows, h.cols_per_row / 2);
  verify_scan(h.t, scan().filter(prefix_filter{"testRowOne"}), h.num_rows / 2, h.cols_per_row);

  auto expected = h.all({0, 2, 3}, {0, 2, 3}, {F0, F1}, {0, 2, 3});
  for (std::size_t rows : {6, 4, 2, 1}) {
    INFO("PageFilter(" << rows << ")");
    auto s = scan().filter(page_filter{static_cast<std::int64_t>(rows)});
    verify_scan(h.t, s, rows, h.cols_per_row);
    CHECK(run_scan(h.t, s).kvs == std::vector<std::string>(expected.begin(), expected.begin() + rows * 6));
  }
}

TEST_CASE("TestFilter: WhileMatchFilter with filterRow, filterRowKey and filterCell", "[filter][TestFilter][R39]") {
  hbase_test_filter h;
  // HBASE-2258: WHILE PageFilter(4) gives 4 rows.
  CHECK(run_scan(h.t, scan().filter(while_match_filter{page_filter{4}})).rows.size() == 4);
  // WHILE PrefixFilter: the scan ends at the first row without the prefix.
  auto r = run_scan(h.t, scan().filter(while_match_filter{prefix_filter{"testRowOne"}}));
  CHECK(r.rows == std::vector<std::string>{row1(0), row1(2), row1(3)});
  // WHILE SingleColumnValueFilter that fails at the first row: nothing at all.
  r = run_scan(h.t, scan().filter(while_match_filter{
                        single_column_value_filter{F0, q1(0), compare_op::equal, comparator::binary("foo")}}));
  CHECK(r.rows.empty());
}

TEST_CASE("TestFilter: InclusiveStopFilter", "[filter][TestFilter][R42]") {
  hbase_test_filter h;
  verify_scan(h.t, scan().start_row(row1(0)).stop_row(row1(3)), h.num_rows / 2 - 1, h.cols_per_row);
  verify_scan(h.t, scan().start_row(row1(0)).filter(inclusive_stop_filter{row1(3)}), h.num_rows / 2, h.cols_per_row);
  verify_scan(h.t, scan().start_row(row2(0)).stop_row(row2(3)), h.num_rows / 2 - 1, h.cols_per_row);
  verify_scan(h.t, scan().start_row(row2(0)).filter(inclusive_stop_filter{row2(3)}), h.num_rows / 2, h.cols_per_row);
}

TEST_CASE("TestFilter: QualifierFilter", "[filter][TestFilter]") {
  hbase_test_filter h;
  auto qf = [&](compare_op op, comparator c) { return filter(qualifier_filter{op, std::move(c)}); };
  verify_scan(h.t, scan().filter(qf(compare_op::equal, comparator::binary(q1(2)))), h.num_rows / 2, 2);
  verify_scan(h.t, scan().filter(qf(compare_op::less, comparator::binary(q1(2)))), h.num_rows / 2, 2);
  verify_scan(h.t, scan().filter(qf(compare_op::less_or_equal, comparator::binary(q1(2)))), h.num_rows / 2, 4);
  const std::string stop = "testRowTwo";
  verify_scan(h.t, scan().stop_row(stop).filter(qf(compare_op::not_equal, comparator::binary(q1(2)))), h.num_rows / 2,
              4);
  verify_scan(h.t, scan().stop_row(stop).filter(qf(compare_op::greater_or_equal, comparator::binary(q1(2)))),
              h.num_rows / 2, 4);
  verify_scan(h.t, scan().stop_row(stop).filter(qf(compare_op::greater, comparator::binary(q1(2)))), h.num_rows / 2, 2);
  auto expected = h.all({0, 2, 3}, {}, {F0, F1}, {0, 3});
  auto two = h.all({}, {0, 2, 3}, {F0, F1}, {0, 2, 3});
  expected.insert(expected.end(), two.begin(), two.end());
  CHECK(run_scan(h.t, scan().filter(qf(compare_op::not_equal, comparator::binary(q1(2))))).kvs == expected);
  expected = h.all({0, 2, 3}, {}, {F0, F1}, {0, 3});
  two = h.all({}, {0, 2, 3}, {F0, F1}, {0, 3});
  expected.insert(expected.end(), two.begin(), two.end());
  CHECK(run_scan(h.t, scan().filter(qf(compare_op::not_equal, comparator::regex("test.+-2")))).kvs == expected);
}

TEST_CASE("TestFilter: FamilyFilter", "[filter][TestFilter]") {
  hbase_test_filter h;
  auto ff = [&](compare_op op, std::string v) { return filter(family_filter{op, comparator::binary(std::move(v))}); };
  verify_scan(h.t, scan().filter(ff(compare_op::equal, F0)), h.num_rows, h.cols_per_row / 2);
  verify_scan(h.t, scan().filter(ff(compare_op::less, "testFamily")), 0, 0);
  verify_scan(h.t, scan().filter(ff(compare_op::less_or_equal, F0)), h.num_rows, h.cols_per_row / 2);
  const std::string stop = "testRowTwo";
  verify_scan(h.t, scan().stop_row(stop).filter(ff(compare_op::not_equal, F0)), h.num_rows / 2, h.cols_per_row / 2);
  verify_scan(h.t, scan().stop_row(stop).filter(ff(compare_op::greater_or_equal, F0)), h.num_rows / 2, h.cols_per_row);
  verify_scan(h.t, scan().stop_row(stop).filter(ff(compare_op::greater, F0)), h.num_rows / 2, h.cols_per_row / 2);
  CHECK(run_scan(h.t, scan().filter(ff(compare_op::not_equal, F1))).kvs ==
        h.all({0, 2, 3}, {0, 2, 3}, {F0}, {0, 2, 3}));
  CHECK(run_scan(h.t, scan().filter(family_filter{compare_op::not_equal, comparator::regex("test.*One")})).kvs ==
        h.all({0, 2, 3}, {0, 2, 3}, {F1}, {0, 2, 3}));
}

TEST_CASE("TestFilter: RowFilter", "[filter][TestFilter]") {
  hbase_test_filter h;
  auto rf = [&](compare_op op, comparator c) { return filter(row_filter{op, std::move(c)}); };
  verify_scan(h.t, scan().filter(rf(compare_op::equal, comparator::binary(row1(2)))), 1, h.cols_per_row);
  verify_scan(h.t, scan().filter(rf(compare_op::equal, comparator::regex("testRow.+-2"))), 2, h.cols_per_row);
  verify_scan(h.t, scan().filter(rf(compare_op::less, comparator::binary(row1(2)))), 1, h.cols_per_row);
  verify_scan(h.t, scan().filter(rf(compare_op::less_or_equal, comparator::binary(row1(2)))), 2, h.cols_per_row);
  verify_scan(h.t, scan().filter(rf(compare_op::not_equal, comparator::binary(row1(2)))), h.num_rows - 1,
              h.cols_per_row);
  verify_scan(h.t, scan().filter(rf(compare_op::greater_or_equal, comparator::binary(row1(2)))), h.num_rows - 1,
              h.cols_per_row);
  verify_scan(h.t, scan().filter(rf(compare_op::greater, comparator::binary(row1(2)))), h.num_rows - 2, h.cols_per_row);
  CHECK(run_scan(h.t, scan().filter(rf(compare_op::not_equal, comparator::binary(row1(2))))).kvs == [&] {
    auto a = h.all({0, 3}, {0, 2, 3}, {F0, F1}, {0, 2, 3});
    return a;
  }());
  CHECK(run_scan(h.t, scan().filter(rf(compare_op::equal, comparator::regex(".+-2")))).kvs ==
        h.all({2}, {2}, {F0, F1}, {0, 2, 3}));
}

TEST_CASE("TestFilter: ValueFilter", "[filter][TestFilter]") {
  hbase_test_filter h;
  auto vf = [&](compare_op op, comparator c) { return filter(value_filter{op, std::move(c)}); };
  const std::size_t half = h.num_rows / 2, all = h.num_rows, keys = h.cols_per_row;
  verify_scan(h.t, scan().filter(vf(compare_op::equal, comparator::binary(V0))), half, keys);
  verify_scan(h.t, scan().filter(vf(compare_op::equal, comparator::binary(V1))), half, keys);
  verify_scan(h.t, scan().filter(vf(compare_op::equal, comparator::regex("testValue((One)|(Two))"))), all, keys);
  verify_scan(h.t, scan().filter(vf(compare_op::less, comparator::binary(V1))), half, keys);
  verify_scan(h.t, scan().filter(vf(compare_op::less_or_equal, comparator::binary(V1))), all, keys);
  verify_scan(h.t, scan().filter(vf(compare_op::less_or_equal, comparator::binary(V0))), half, keys);
  verify_scan(h.t, scan().filter(vf(compare_op::not_equal, comparator::binary(V0))), half, keys);
  verify_scan(h.t, scan().filter(vf(compare_op::greater_or_equal, comparator::binary(V0))), all, keys);
  verify_scan(h.t, scan().filter(vf(compare_op::greater, comparator::binary(V0))), half, keys);
  CHECK(run_scan(h.t, scan().filter(vf(compare_op::not_equal, comparator::binary(V0)))).kvs ==
        h.all({}, {0, 2, 3}, {F0, F1}, {0, 2, 3}));
}

TEST_CASE("TestFilter: SkipFilter, FilterList, FirstKeyOnlyFilter", "[filter][TestFilter][R42]") {
  hbase_test_filter h;
  CHECK(run_scan(h.t, scan().filter(skip_filter{qualifier_filter{compare_op::not_equal, comparator::binary(q1(2))}}))
            .kvs == h.all({}, {0, 2, 3}, {F0, F1}, {0, 2, 3}));
  auto all_of = filter_list::all({row_filter{compare_op::equal, comparator::regex(".+-2")},
                                  qualifier_filter{compare_op::equal, comparator::regex(".+-2")},
                                  value_filter{compare_op::equal, comparator::substring("One")}});
  CHECK(run_scan(h.t, scan().family(F0).filter(all_of)).kvs == std::vector<std::string>{h.k1(2, F0, 2)});
  auto one_of = filter_list::one({row_filter{compare_op::equal, comparator::regex(".+Two.+")},
                                  qualifier_filter{compare_op::equal, comparator::regex(".+-2")},
                                  value_filter{compare_op::equal, comparator::substring("One")}});
  verify_scan(h.t, scan().filter(one_of), h.num_rows, h.cols_per_row);
  CHECK(run_scan(h.t, scan().filter(first_key_only_filter{})).kvs ==
        std::vector<std::string>{h.k1(0, F0, 0), h.k1(2, F0, 0), h.k1(3, F0, 0), h.k2(0, F0, 0), h.k2(2, F0, 0),
                                 h.k2(3, F0, 0)});
}

TEST_CASE("TestFilter: SingleColumnValueFilter in lists", "[filter][TestFilter][TestSingleColumnValueFilter]") {
  hbase_test_filter h;
  single_column_value_filter f1{F0, q1(0), compare_op::equal, comparator::binary(V0), true, true};
  single_column_value_filter f2{F0, q2(0), compare_op::equal, comparator::binary(V1), true, true};
  auto kvs1 = h.all({0, 2, 3}, {}, {F0}, {0, 2, 3});
  auto kvs2 = h.all({}, {0, 2, 3}, {F0}, {0, 2, 3});
  verify_scan(h.t, scan().family(F0).filter(f1), 3, 3);
  CHECK(run_scan(h.t, scan().family(F0).filter(f1)).kvs == kvs1);
  verify_scan(h.t, scan().family(F0).filter(f2), 3, 3);
  CHECK(run_scan(h.t, scan().family(F0).filter(f2)).kvs == kvs2);
  auto both = kvs1;
  both.insert(both.end(), kvs2.begin(), kvs2.end());
  verify_scan(h.t, scan().family(F0).filter(filter_list::one({f1, f2})), 6, 3);
  CHECK(run_scan(h.t, scan().family(F0).filter(filter_list::one({f1, f2}))).kvs == both);

  // HBASE-1821: two conditions in one list.
  REQUIRE(h.t.put(put(row1(2), h.ts + 5).add(F0, q1(2), V1)));
  auto two = filter_list::all({single_column_value_filter{F0, q1(0), compare_op::equal, comparator::binary(V0)},
                               single_column_value_filter{F0, q1(2), compare_op::equal, comparator::binary(V1)}});
  std::vector<std::string> expect{h.k1(2, F0, 0), row1(2) + "/" + F0 + ":" + q1(2) + "=" + V1, h.k1(2, F0, 3)};
  auto s = scan().start_row(row1(0)).stop_row(row2(0)).family(F0).filter(two);
  verify_scan(h.t, s, 1, 3);
  CHECK(run_scan(h.t, s).kvs == expect);
  auto skipped =
      filter_list::all({skip_filter{single_column_value_filter{F0, q1(0), compare_op::equal, comparator::binary(V0)}},
                        skip_filter{single_column_value_filter{F0, q1(2), compare_op::equal, comparator::binary(V1)}}});
  s = scan().start_row(row1(0)).stop_row(row2(0)).family(F0).filter(skipped);
  CHECK(run_scan(h.t, s).kvs == expect);

  // filterIfMissing
  const std::string r3[] = {"rowThree-0", "rowThree-1", "rowThree-2", "rowThree-3"};
  REQUIRE(h.t.put(put(r3[0]).add(F0, q1(0), V0)));
  REQUIRE(h.t.put(put(r3[1]).add(F0, q1(0), V1)));
  REQUIRE(h.t.put(put(r3[2]).add(F0, q1(1), V0)));
  REQUIRE(h.t.put(put(r3[3]).add(F0, q1(1), V1)));
  auto in3 = [&](filter f) {
    return run_scan(h.t, scan().start_row(r3[0]).stop_row("rowThree-4").family(F0).filter(f)).rows;
  };
  single_column_value_filter scvf{F0, q1(0), compare_op::equal, comparator::binary(V0)};
  CHECK(in3(scvf) == std::vector<std::string>{r3[0], r3[2], r3[3]});
  scvf.filter_if_missing = true;
  CHECK(in3(scvf) == std::vector<std::string>{r3[0]});
  single_column_value_filter scvf1{F0, q1(1), compare_op::equal, comparator::binary(V1), true, true};
  CHECK(in3(scvf1) == std::vector<std::string>{r3[3]});
  REQUIRE(h.t.put(put(r3[0]).add(F0, q1(1), V0)));
  CHECK(in3(scvf1) == std::vector<std::string>{r3[3]});
}

TEST_CASE("TestFilter: ColumnPaginationFilter", "[filter][TestFilter][TestColumnPaginationFilter]") {
  hbase_test_filter h;
  REQUIRE(h.t.put(put(row1(0), h.ts + 5).add(F0, q1(0), V0)));  // a second version: still one column
  auto s = scan().filter(column_pagination_filter{1, 0, std::nullopt});
  verify_scan(h.t, s, h.num_rows, 1);
  CHECK(run_scan(h.t, s).kvs == std::vector<std::string>{h.k1(0, F0, 0), h.k1(2, F0, 0), h.k1(3, F0, 0), h.k2(0, F0, 0),
                                                         h.k2(2, F0, 0), h.k2(3, F0, 0)});
  s = scan().filter(column_pagination_filter{1, 2, std::nullopt});
  verify_scan(h.t, s, h.num_rows, 1);
  CHECK(run_scan(h.t, s).kvs == std::vector<std::string>{h.k1(0, F0, 3), h.k1(2, F0, 3), h.k1(3, F0, 3), h.k2(0, F0, 3),
                                                         h.k2(2, F0, 3), h.k2(3, F0, 3)});
  s = scan().filter(column_pagination_filter{2, 2, std::nullopt});
  verify_scan(h.t, s, h.num_rows, 2);
  std::vector<std::string> e3;
  for (int r : {0, 2, 3}) {
    e3.push_back(h.k1(r, F0, 3));
    e3.push_back(h.k1(r, F1, 0));
  }
  for (int r : {0, 2, 3}) {
    e3.push_back(h.k2(r, F0, 3));
    e3.push_back(h.k2(r, F1, 0));
  }
  CHECK(run_scan(h.t, s).kvs == e3);
  verify_scan(h.t, scan().filter(column_pagination_filter{20, 140, std::nullopt}), 0, 0);
}

TEST_CASE("TestFilter: KeyOnlyFilter", "[filter][TestFilter][R41]") {
  hbase_test_filter h;
  auto r = run_scan(h.t, scan().filter(key_only_filter{false}));
  REQUIRE(r.cells() == 36);
  for (const auto& k : r.kvs) CHECK(k.back() == '=');
  auto sc = h.t.scan(scan().filter(key_only_filter{true}));
  REQUIRE(sc);
  auto all = sc->all();
  REQUIRE(all);
  for (const auto& row : all.value())
    for (const auto& c : row.cells) CHECK(c.value == std::string("\0\0\0\x0c", 4));  // 12 bytes: testValueOne
}

// ---- docs/semantics.md R35-R43 ([T-BASE testFilter]) ---------------------------------------

namespace {

struct t_base {
  std::unique_ptr<store> s = open_store();
  table t = make_table(*s, "tbase", {"f"});
  t_base() {
    // getKey1: abc v1@t3 v2@t2 v1@t1; def v2@t7 v1@t6 v2@t5 v1@t4
    put p("getKey1");
    p.add("f", "abc", 3, "value1").add("f", "abc", 2, "value2").add("f", "abc", 1, "value1");
    p.add("f", "def", 7, "value2")
        .add("f", "def", 6, "value1")
        .add("f", "def", 5, "value2")
        .add("f", "def", 4, "value1");
    REQUIRE(t.put(p));
  }
  std::size_t count(filter f, const char* row = "getKey1") {
    auto r = t.get(get(row).max_versions(10).filter(std::move(f)));
    INFO(r.error().to_string());
    REQUIRE(r);
    return r->cells.size();
  }
};

}  // namespace

TEST_CASE("R35: SingleColumnValueFilter and its Exclude variant", "[filter][R35]") {
  t_base b;
  CHECK(b.count(single_column_value_filter{"f", "abc", compare_op::equal, comparator::binary("value1")}) == 7);
  CHECK(b.count(single_column_value_exclude_filter{"f", "abc", compare_op::equal, comparator::binary("value1")}) == 4);
  CHECK(b.count(single_column_value_filter{"f", "abc", compare_op::equal, comparator::binary("value2")}) == 0);
  // latestVersionOnly = false: any version matches.
  CHECK(b.count(single_column_value_filter{"f", "abc", compare_op::equal, comparator::binary("value2"), false,
                                           false}) == 7);
  // A missing column: the row unless filterIfMissing.
  CHECK(b.count(single_column_value_filter{"f", "xyz", compare_op::equal, comparator::binary("v")}) == 7);
  CHECK(b.count(single_column_value_filter{"f", "xyz", compare_op::equal, comparator::binary("v"), true, true}) == 0);
}

TEST_CASE("R36: ColumnPrefixFilter and lists of them", "[filter][R36]") {
  t_base b;
  CHECK(b.count(column_prefix_filter{"a"}) == 3);
  CHECK(b.count(column_prefix_filter{"d"}) == 4);
  CHECK(b.count(column_prefix_filter{"b"}) == 0);
  CHECK(b.count(filter_list::one({column_prefix_filter{"a"}, column_prefix_filter{"d"}})) == 7);
  CHECK(b.count(filter_list::all({column_prefix_filter{"a"}, column_prefix_filter{"d"}})) == 0);
  CHECK(b.count(filter_list::all({column_prefix_filter{"d"}, column_prefix_filter{"de"}})) == 4);
  CHECK(b.count(multiple_column_prefix_filter{{"d", "a"}}) == 7);
  CHECK(b.count(multiple_column_prefix_filter{{"b", "e"}}) == 0);
}

TEST_CASE("R37: ColumnPaginationFilter with offsets and column offsets", "[filter][R37]") {
  t_base b;
  auto cp = [](std::int32_t limit, std::int32_t off) {
    return filter(column_pagination_filter{limit, off, std::nullopt});
  };
  auto cpo = [](std::int32_t limit, std::string off) {
    return filter(column_pagination_filter{limit, 0, std::move(off)});
  };
  CHECK(b.count(cp(8, 0)) == 2);
  REQUIRE(b.t.put(put("getKey1").add("f", "ggg", 8, "value1")));
  CHECK(b.count(cp(8, 0)) == 3);
  CHECK(b.count(cpo(8, "abc")) == 3);
  CHECK(b.count(cpo(8, "bc")) == 2);
  CHECK(b.count(cpo(8, "ef")) == 1);
  CHECK(b.count(cpo(8, "h")) == 0);
  CHECK(b.count(cp(1, 1)) == 1);
  REQUIRE(b.t.put(put("getKey2").add("f", "abc", 9, "x")));
  REQUIRE(b.t.put(put("getKey3").add("f", "def", 9, "x")));
  auto r = run_scan(b.t, scan().start_row("getKey1").stop_row("getKey4").all_versions().filter(cpo(2, "d")));
  CHECK(r.cells() == 3);
}

TEST_CASE("R38 and TestDependentColumnFilter", "[filter][R38][TestDependentColumnFilter]") {
  t_base b;
  CHECK(b.count(dependent_column_filter{"f", "abc", false, compare_op::no_op, std::nullopt}) == 3);
  CHECK(b.count(dependent_column_filter{"f", "abc", true, compare_op::no_op, std::nullopt}) == 0);
  REQUIRE(b.t.put(put("getKey2").add("f", "def", 10, "value2").add("f", "def", 11, "value1").add("f", "abc", 12, "x")));
  CHECK(b.count(dependent_column_filter{"f", "def", false, compare_op::equal, comparator::binary("value2")},
                "getKey2") == 1);

  // TestDependentColumnFilter's data set: two families, three stamps.
  auto s = open_store();
  auto t = make_table(*s, "dep", {"familyOne", "familyTwo"});
  const std::int64_t st[] = {100, 200, 300};
  put p("test1");
  p.add("familyOne", "qualifier", st[0], "bad1").add("familyOne", "qualifier", st[1], "bad2");
  p.add("familyOne", "qualifier", st[2], "match");
  p.add("familyTwo", "qualifier", st[0], "bad1").add("familyTwo", "qualifier", st[2], "bad3");
  REQUIRE(t.put(p));
  put p2("test2");
  p2.add("familyOne", "qualifier", st[0], "bad1").add("familyOne", "qualifier", st[2], "match");
  p2.add("familyTwo", "qualifier", st[0], "match").add("familyTwo", "qualifier", st[1], "bad3");
  REQUIRE(t.put(p2));
  auto check = [&](filter f, std::size_t rows, std::size_t cells) {
    auto r = run_scan(t, scan().all_versions().filter(std::move(f)));
    CHECK(r.rows.size() == rows);
    CHECK(r.cells() == cells);
  };
  check(dependent_column_filter{"familyOne", "qualifier", false, compare_op::no_op, std::nullopt}, 2, 8);
  check(dependent_column_filter{"familyOne", "qualifier", true, compare_op::no_op, std::nullopt}, 2, 3);
  check(dependent_column_filter{"familyOne", "qualifier", false, compare_op::equal, comparator::binary("match")}, 2, 3);
  check(dependent_column_filter{"familyOne", "qualifier", true, compare_op::equal, comparator::binary("match")}, 1, 1);
}

TEST_CASE("R39: SkipFilter and WhileMatchFilter", "[filter][R39]") {
  auto s = open_store();
  auto t = make_table(*s, "r39", {"f"});
  REQUIRE(t.put(put("a").add("f", "q1", 1, "v2").add("f", "q2", 1, "v2")));
  REQUIRE(t.put(put("b").add("f", "q1", 1, "v2").add("f", "q2", 1, "v1")));
  auto skip = skip_filter{value_filter{compare_op::equal, comparator::binary("v2")}};
  CHECK(get_kvs(t, get("a").filter(skip)).size() == 2);
  CHECK(get_kvs(t, get("b").filter(skip)).empty());
  // WHILE stops at the first failing cell: the cells before it come back, nothing after.
  REQUIRE(t.put(put("c").add("f", "q1", 1, "v1").add("f", "q2", 1, "v2").add("f", "q3", 1, "v1")));
  REQUIRE(t.put(put("d").add("f", "q1", 1, "v1")));
  auto r = run_scan(t, scan().start_row("c").filter(
                           while_match_filter{value_filter{compare_op::not_equal, comparator::binary("v2")}}));
  CHECK(r.kvs == std::vector<std::string>{"c/f:q1=v1"});
  CHECK(r.rows == std::vector<std::string>{"c"});
}

TEST_CASE("R40-R42: RandomRowFilter, KeyOnlyFilter, FirstKeyOnly, Timestamps, InclusiveStop, Page",
          "[filter][R40][R41][R42]") {
  auto s = open_store();
  auto t = make_table(*s, "r40", {"f"});
  for (int i = 0; i < 50; ++i)
    REQUIRE(t.put(put("r" + std::to_string(100 + i)).add("f", "q", 5, "value").add("f", "z", 6, "v")));
  CHECK(run_scan(t, scan().filter(random_row_filter{-1})).rows.empty());
  CHECK(run_scan(t, scan().filter(random_row_filter{2})).rows.size() == 50);
  auto half = run_scan(t, scan().filter(random_row_filter{0.5f})).rows.size();
  CHECK(half > 5);
  CHECK(half < 45);
  auto ko = get_kvs(t, get("r100").filter(key_only_filter{}));
  CHECK(ko == std::vector<std::string>{"r100/f:q=", "r100/f:z="});
  ko = get_kvs(t, get("r100").filter(key_only_filter{true}));
  CHECK(ko == std::vector<std::string>{"r100/f:q=\\x00\\x00\\x00\\x05", "r100/f:z=\\x00\\x00\\x00\\x01"});
  CHECK(get_kvs(t, get("r100").filter(first_key_only_filter{})) == std::vector<std::string>{"r100/f:q=value"});
  CHECK(get_kvs(t, get("r100").filter(timestamps_filter{{6, 7}, false})) == std::vector<std::string>{"r100/f:z=v"});
  CHECK(get_kvs(t, get("r100").filter(timestamps_filter{{5}, true})) == std::vector<std::string>{"r100/f:q=value"});
  CHECK(run_scan(t, scan().filter(inclusive_stop_filter{"r104"})).rows.size() == 5);
  CHECK(run_scan(t, scan().filter(page_filter{7})).rows.size() == 7);
  CHECK(run_scan(t, scan().filter(page_filter{0})).rows.empty());
}

TEST_CASE("R43: comparators", "[filter][R43]") {
  auto s = open_store();
  auto t = make_table(*s, "r43", {"f"});
  REQUIRE(t.put(put(std::string("\x7f", 1)).add("f", "q", 1, "x")));
  REQUIRE(t.put(put(std::string("\x80", 1)).add("f", "q", 1, "xxabcxx")));
  REQUIRE(t.put(put("m").add("f", "q", 1, "abcdef")));
  REQUIRE(t.put(put("n").add("f", "q", 1, long_bytes(42))));
  REQUIRE(t.put(put("o").add("f", "q", 1, std::string("\x0f\xf0", 2))));
  auto rows = [&](filter f) { return run_scan(t, scan().filter(std::move(f))).rows; };
  // binary: unsigned bytes (0x80 sorts after 0x7F)
  CHECK(rows(row_filter{compare_op::greater, comparator::binary(std::string("\x7f", 1))}) ==
        std::vector<std::string>{std::string("\x80", 1)});
  CHECK(rows(row_filter{compare_op::less, comparator::binary(std::string("\x80", 1))}) ==
        std::vector<std::string>{"m", "n", "o", std::string("\x7f", 1)});
  CHECK(rows(value_filter{compare_op::equal, comparator::binary_prefix("abc")}) == std::vector<std::string>{"m"});
  CHECK(rows(value_filter{compare_op::equal, comparator::substring("ABC")}) ==
        std::vector<std::string>{"m", std::string("\x80", 1)});
  CHECK(rows(value_filter{compare_op::not_equal, comparator::substring("ABC")}).size() == 3);
  CHECK(rows(value_filter{compare_op::equal, comparator::regex("^a.c")}) == std::vector<std::string>{"m"});
  CHECK(rows(value_filter{compare_op::equal, comparator::regex("(?i)XA")}) ==
        std::vector<std::string>{std::string("\x80", 1)});
  CHECK(rows(value_filter{compare_op::equal, comparator::long_value(42)}) == std::vector<std::string>{"n"});
  CHECK(rows(value_filter{compare_op::less, comparator::long_value(43)}) == std::vector<std::string>{"n"});
  CHECK(rows(value_filter{compare_op::not_equal, comparator::long_value(43)}) == std::vector<std::string>{"n"});
  CHECK(rows(value_filter{compare_op::equal, comparator::bit_and(std::string("\x01\x00", 2))}) ==
        std::vector<std::string>{"o"});
  CHECK(rows(value_filter{compare_op::equal, comparator::bit_and(std::string("\xf0\x0f", 2))}).empty());
  CHECK(rows(value_filter{compare_op::equal, comparator::bit_xor(std::string("\x0f\xf0", 2))}).empty());
  CHECK(rows(value_filter{compare_op::equal, comparator::bit_or(std::string("\x00\x00", 2))}) ==
        std::vector<std::string>{"o"});
  CHECK(rows(value_filter{compare_op::equal, comparator::null()}).empty());
  CHECK(rows(value_filter{compare_op::not_equal, comparator::null()}).size() == 5);
  CHECK(rows(value_filter{compare_op::no_op, comparator::binary("x")}).empty());
}

TEST_CASE("R8: versions are counted before the filter; time ranges apply first", "[filter][R8]") {
  auto s = open_store();
  auto t = make_table(*s, "r8", {"f"});
  REQUIRE(t.put(put("r").add("f", "q", 3, "a").add("f", "q", 2, "b").add("f", "q", 1, "c")));
  value_filter vb{compare_op::equal, comparator::binary("b")};
  CHECK(get_kvs(t, get("r").max_versions(1).filter(vb)).empty());
  CHECK(get_kvs(t, get("r").max_versions(3).filter(vb), true) == std::vector<std::string>{"r/f:q@2=b"});
  CHECK(get_kvs(t, get("r").range(0, 3).filter(vb), true) == std::vector<std::string>{"r/f:q@2=b"});
  CHECK(get_kvs(t, get("r").range(0, 2).filter(vb)).empty());
  // TimestampsFilter sees only the versions the read counts.
  CHECK(get_kvs(t, get("r").filter(timestamps_filter{{2}, false})).empty());
  CHECK(get_kvs(t, get("r").all_versions().filter(timestamps_filter{{2, 1}, true}), true) ==
        std::vector<std::string>{"r/f:q@2=b", "r/f:q@1=c"});
  // The per-family limit and offset count what the filter lets through.
  REQUIRE(t.put(put("r").add("f", "p", 3, "b").add("f", "s", 3, "b").add("f", "t", 3, "b")));
  CHECK(get_kvs(t, get("r").max_versions(3).max_per_family(2).offset_per_family(1).filter(vb)) ==
        std::vector<std::string>{"r/f:q=b", "r/f:s=b"});
}

TEST_CASE("TestMultiRowRangeFilter: scans over ranges", "[filter][TestMultiRowRangeFilter]") {
  auto s = open_store();
  auto t = make_table(*s, "mrr", {"f"});
  auto key = [](int i) {
    std::string k(4, '\0');
    for (int b = 0; b < 4; ++b)
      k[static_cast<std::size_t>(b)] = static_cast<char>(static_cast<unsigned>(i) >> (24 - 8 * b));
    return k;
  };
  for (int i = 0; i < 100; ++i) REQUIRE(t.put(put(key(i)).add("f", "q", 1, "v")));
  auto count = [&](std::vector<row_range> ranges) {
    return run_scan(t, scan().filter(multi_row_range_filter{std::move(ranges)})).rows.size();
  };
  auto between = [&](int a, int b) {  // rows in [a, b), b < 0: unbounded
    return run_scan(t, scan().start_row(key(a)).stop_row(b < 0 ? std::string() : key(b))).rows.size();
  };
  CHECK(count({{key(10), true, key(20), false},
               {key(15), true, key(40), false},
               {key(65), true, key(75), false},
               {key(60), true, "", false},
               {key(60), true, key(80), false}}) == between(10, 40) + between(60, -1));
  CHECK(count({{key(30), true, key(40), false}, {key(10), true, key(20), false}, {key(60), true, key(70), false}}) ==
        between(10, 20) + between(30, 40) + between(60, 70));
  CHECK(count({{"", true, key(10), false}, {key(30), true, key(40), false}}) == 10 + between(30, 40));
  CHECK(count({{key(10), true, "", false}, {key(30), true, key(40), false}}) == between(10, -1));
  CHECK(count({{key(10), true, key(20), false},
               {key(20), true, key(40), false},
               {key(65), true, key(75), false},
               {key(60), true, "", false},
               {key(60), true, key(80), false}}) == between(10, 40) + between(60, -1));
  CHECK(count({{key(10), true, key(20), false}, {key(20), false, key(40), false}, {key(65), true, key(75), false}}) ==
        between(10, 40) - 1 + between(65, 75));
  // With a list (AND of two range sets: their intersection; OR: their union).
  std::vector<row_range> a{{key(10), true, key(20), false}, {key(30), true, key(40), false}};
  std::vector<row_range> b{{key(15), true, key(35), false}, {key(90), true, key(95), false}};
  CHECK(run_scan(t, scan().filter(filter_list::all({multi_row_range_filter{a}, multi_row_range_filter{b}})))
            .rows.size() == 10);
  CHECK(run_scan(t, scan().filter(filter_list::one({multi_row_range_filter{a}, multi_row_range_filter{b}})))
            .rows.size() == 35);
  // Reversed: the same rows, backwards.
  auto fwd = run_scan(t, scan().filter(multi_row_range_filter{a})).rows;
  auto rev = run_scan(t, scan().reversed().filter(multi_row_range_filter{a})).rows;
  std::reverse(rev.begin(), rev.end());
  CHECK(rev == fwd);
}

TEST_CASE("TestFuzzyRowFilter: end to end", "[filter][TestFuzzyRowFilter]") {
  auto s = open_store();
  auto t = make_table(*s, "fz", {"f"});
  // user(4)_action(2)_year(4)_month(2)
  for (int u = 0; u < 20; ++u)
    for (int a : {7, 99})
      for (int m : {1, 2}) {
        char k[32];
        std::snprintf(k, sizeof k, "%04d_%02d_2020_%02d", u, a, m);
        REQUIRE(t.put(put(k).add("f", "q", 1, "v")));
      }
  fuzzy_key fk{"????_99_????_01", std::string("\1\1\1\1\0\0\0\0\1\1\1\1\0\0\0", 15)};
  auto r = run_scan(t, scan().filter(fuzzy_row_filter{{fk}}));
  REQUIRE(r.rows.size() == 20);
  for (const auto& row : r.rows) CHECK(row.substr(4) == "_99_2020_01");
  // Two keys; the language's digit masks; reversed scans walk but agree.
  fuzzy_key fk2{"0003_07_????_02", std::string("\0\0\0\0\0\0\0\0\1\1\1\1\0\0\0", 15)};
  CHECK(run_scan(t, scan().filter(fuzzy_row_filter{{fk, fk2}})).rows.size() == 21);
  CHECK(run_scan(t, scan().filter(parsed("FuzzyRowFilter('????_99_????_01', '111100001111000')"))).rows.size() == 20);
  auto rev = run_scan(t, scan().reversed().filter(fuzzy_row_filter{{fk, fk2}})).rows;
  CHECK(rev.size() == 21);
  CHECK(std::is_sorted(rev.rbegin(), rev.rend()));
}

TEST_CASE("filters in reversed scans", "[filter][reversed]") {
  auto s = open_store();
  auto t = make_table(*s, "rev", {"f"});
  for (const char* r : {"a1", "a2", "b1", "b2", "b3", "c1"}) REQUIRE(t.put(put(r).add("f", "q", 1, r)));
  auto rows = [&](scan sc) { return run_scan(t, sc).rows; };
  CHECK(rows(scan().reversed().filter(prefix_filter{"b"})) == std::vector<std::string>{"b3", "b2", "b1"});
  CHECK(rows(scan().reversed().filter(inclusive_stop_filter{"b2"})) == std::vector<std::string>{"c1", "b3", "b2"});
  CHECK(rows(scan().reversed().filter(row_filter{compare_op::less, comparator::binary("b2")})) ==
        std::vector<std::string>{"b1", "a2", "a1"});
  CHECK(rows(scan().reversed().filter(row_filter{compare_op::equal, comparator::binary_prefix("a")})) ==
        std::vector<std::string>{"a2", "a1"});
  CHECK(rows(scan().reversed().filter(page_filter{2})) == std::vector<std::string>{"c1", "b3"});
  CHECK(rows(scan().reversed().start_row("b2").filter(while_match_filter{prefix_filter{"b"}})) ==
        std::vector<std::string>{"b2", "b1"});
}

TEST_CASE("checkAndMutate with a filter (HBase 2.4 ifMatches)", "[filter][checkAndMutate]") {
  auto s = open_store();
  auto t = make_table(*s, "cam", {"f", "g"});
  REQUIRE(t.put(put("r").add("f", "a", 1, "one").add("g", "b", 1, "two")));
  // Passes: a cell of the row matches; the mutation may touch another family.
  auto ok = t.check_and_mutate(
      check_and_mutate("r")
          .if_matches(single_column_value_filter{"f", "a", compare_op::equal, comparator::binary("one"), true, true})
          .then(put("r").add("g", "c", 2, "new")));
  INFO(ok.error().to_string());
  REQUIRE(ok);
  CHECK(ok.value());
  CHECK(get_kvs(t, get("r").column("g", "c")) == std::vector<std::string>{"r/g:c=new"});
  // Fails: nothing matches; nothing is written.
  auto no = t.check_and_mutate(check_and_mutate("r")
                                   .if_matches(value_filter{compare_op::equal, comparator::binary("nope")})
                                   .then(put("r").add("f", "x", 2, "bad")));
  REQUIRE(no);
  CHECK_FALSE(no.value());
  CHECK(get_kvs(t, get("r").column("f", "x")).empty());
  // A time range narrows what the filter sees.
  auto tr = t.check_and_mutate(check_and_mutate("r")
                                   .if_matches(value_filter{compare_op::equal, comparator::binary("one")})
                                   .time_range(2, 10)
                                   .then(put("r").add("f", "x", 2, "bad")));
  REQUIRE(tr);
  CHECK_FALSE(tr.value());
  // A bad filter is refused before anything happens.
  auto bad = t.check_and_mutate(check_and_mutate("r")
                                    .if_matches(value_filter{compare_op::equal, comparator::regex("(a)\\1")})
                                    .then(put("r").add("f", "x", 2, "bad")));
  CHECK(bad.code() == code::invalid_argument);
  // Without a filter, NO_OP is refused.
  auto noop = t.check_and_mutate(
      check_and_mutate("r", "f", "a").if_matches(compare_op::no_op, "one").then(put("r").add("f", "x", 2, "bad")));
  CHECK(noop.code() == code::invalid_argument);
}

TEST_CASE("TS5: time-series families refuse every filter", "[filter][TS5]") {
  auto s = open_store();
  table_descriptor d;
  d.name = "ts";
  family_descriptor f;
  f.name = "f";
  f.kind = family_kind::time_series;
  d.families = {f};
  REQUIRE(s->create_table(d, schema_origin::oceanbase_ddl));
  auto t = s->open_table("ts");
  REQUIRE(t);
  REQUIRE(t->put(put("r").add("f", "q", 1, "v")));
  CHECK(t->get(get("r").filter(first_key_only_filter{})).code() == code::unsupported);
  CHECK(t->scan(scan().filter(prefix_filter{"r"})).code() == code::unsupported);
  CHECK(t->check_and_mutate(check_and_mutate("r").if_matches(key_only_filter{}).then(put("r").add("f", "q", 2, "w")))
            .code() == code::unsupported);
  CHECK(t->get(get("r")).is_ok());
}

TEST_CASE("a filter never changes data, and bad filters are refused whole", "[filter][validation]") {
  auto s = open_store();
  auto t = make_table(*s, "v", {"f"}, partition_spec::hash(3));
  for (int i = 0; i < 30; ++i) REQUIRE(t.put(put("r" + std::to_string(i)).add("f", "q", 1, "v" + std::to_string(i))));
  auto before = run_scan(t, scan(), true).kvs;
  for (const char* text : {"KeyOnlyFilter(true)", "SKIP ValueFilter(=, 'binary:v1')", "WHILE PageFilter(3)",
                           "ColumnCountGetFilter(0)", "DependentColumnFilter('f', 'q', true)"}) {
    (void)run_scan(t, scan().filter(parsed(text)));
    for (int i = 0; i < 30; ++i) (void)t.get(get("r" + std::to_string(i)).filter(parsed(text)));
  }
  CHECK(run_scan(t, scan(), true).kvs == before);
  // Invalid filters: INVALID_ARGUMENT, in gets, scans, batches.
  filter bad = value_filter{compare_op::equal, comparator::regex("a++")};
  CHECK(t.get(get("r1").filter(bad)).code() == code::invalid_argument);
  CHECK(t.scan(scan().filter(bad)).code() == code::invalid_argument);
  CHECK(t.scan(scan().filter(filter_list::all({}))).code() == code::invalid_argument);
  CHECK(t.scan(scan().filter(filter::invalid({code::invalid_argument, "why"}))).error().message() == "why");
  CHECK(t.get(get("r1").filter(fuzzy_row_filter{{{"ab", "a"}}})).code() == code::invalid_argument);
  CHECK(t.get(get("r1").filter(multi_row_range_filter{{{"b", true, "a", true}}})).code() == code::invalid_argument);
  CHECK(t.get(get("r1").filter(page_filter{-1})).code() == code::invalid_argument);
}

TEST_CASE("filters over several partitions: per partition as HBase per region", "[filter][partitions]") {
  auto s = open_store();
  auto t = make_table(*s, "p", {"f"}, partition_spec::hash(4));
  for (int i = 0; i < 200; ++i) {
    char k[16];
    std::snprintf(k, sizeof k, "k%03d", i);
    REQUIRE(t.put(put(k).add("f", "q", 1, i % 10 == 0 ? "hit" : "miss")));
  }
  auto r = run_scan(t, scan().filter(value_filter{compare_op::equal, comparator::binary("hit")}));
  CHECK(r.rows.size() == 20);
  CHECK(std::is_sorted(r.rows.begin(), r.rows.end()));
  CHECK(run_scan(t, scan().filter(prefix_filter{"k15"})).rows.size() == 10);
  CHECK(
      run_scan(t, scan().filter(parsed("RowFilter(>=, 'binary:k190') AND RowFilter(<, 'binary:k195')"))).rows.size() ==
      5);
  // A get with a filter runs in its row's partition.
  CHECK(get_kvs(t, get("k010").filter(value_filter{compare_op::equal, comparator::binary("hit")})).size() == 1);
  CHECK(get_kvs(t, get("k011").filter(value_filter{compare_op::equal, comparator::binary("hit")})).empty());
}

TEST_CASE("random filter trees never crash or hang, and never change data", "[filter][fuzz]") {
  auto s = open_store();
  auto t = make_table(*s, "fuzz", {"f", "g"}, partition_spec::hash(2));
  for (int i = 0; i < 40; ++i) {
    put p("r" + std::to_string(i % 7) + std::to_string(i));
    for (std::int64_t ts = 1; ts <= 3; ++ts) {
      p.add("f", std::string(1, static_cast<char>('a' + (i + ts) % 5)), ts, "v" + std::to_string((i * ts) % 4));
      p.add("g", std::string(1, static_cast<char>('b' + i % 3)), ts + 2, std::string(i % 9, 'x'));
    }
    REQUIRE(t.put(p));
  }
  const auto before = run_scan(t, scan().all_versions(), true).kvs;
  const char* atoms[] = {"RowFilter(<, 'binary:r4')",
                         "RowFilter(=, 'binaryprefix:r2')",
                         "FamilyFilter(!=, 'binary:f')",
                         "QualifierFilter(>=, 'binary:c')",
                         "ValueFilter(=, 'regexstring:v[12]')",
                         "ValueFilter(!=, 'substring:X')",
                         "PrefixFilter('r3')",
                         "ColumnPrefixFilter('b')",
                         "MultipleColumnPrefixFilter('a', 'd')",
                         "ColumnRangeFilter('b', false, 'd', true)",
                         "ColumnCountGetFilter(2)",
                         "ColumnPaginationFilter(2, 1)",
                         "ColumnPaginationFilter(1, 'c')",
                         "PageFilter(3)",
                         "SingleColumnValueFilter('f', 'a', =, 'binary:v1')",
                         "SingleColumnValueExcludeFilter('g', 'b', !=, 'binary:x', true, false)",
                         "ColumnValueFilter('f', 'c', >, 'binary:v0')",
                         "DependentColumnFilter('f', 'b', true)",
                         "DependentColumnFilter('g', 'c', false, =, 'binary:xx')",
                         "FirstKeyOnlyFilter()",
                         "KeyOnlyFilter(true)",
                         "InclusiveStopFilter('r5')",
                         "TimestampsFilter(1, 3, true)",
                         "TimestampsFilter(2)",
                         "RandomRowFilter(1056964608)",
                         "MultiRowRangeFilter('r1', true, 'r3', false)",
                         "FuzzyRowFilter('r?1', '010')",
                         "ValueFilter(<, 'long:3')",
                         "ValueFilter(=, 'bitor:\x01')"};
  std::mt19937 rng(7);
  std::function<std::string(int)> gen = [&](int depth) -> std::string {
    const unsigned pick = rng() % (depth > 3 ? 1 : 5);
    if (pick == 0) return atoms[rng() % std::size(atoms)];
    if (pick == 1) return "SKIP " + gen(depth + 1);
    if (pick == 2) return "WHILE " + gen(depth + 1);
    return "(" + gen(depth + 1) + (pick == 3 ? " AND " : " OR ") + gen(depth + 1) + ")";
  };
  for (int i = 0; i < 300; ++i) {
    const std::string text = gen(0);
    INFO(text);
    auto f = parsed(text);
    for (bool reversed : {false, true}) {
      auto r = run_scan(t, scan().reversed(reversed).all_versions().caching(3).filter(f));
      CHECK(r.cells() <= before.size());
    }
    for (int k = 0; k < 7; ++k) (void)get_kvs(t, get("r" + std::to_string(k) + std::to_string(k)).filter(f));
  }
  CHECK(run_scan(t, scan().all_versions(), true).kvs == before);
}
