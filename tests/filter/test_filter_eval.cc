// The evaluator (model/filter_eval.h) call by call, as HBase's TestFilterList,
// TestSingleColumnValueFilter, TestColumnPaginationFilter, TestFuzzyRowFilter and
// TestMultiRowRangeFilter drive Filter objects; and the partition's filtered reads
// (partition/memtable_filter.cc): seeking, state across pages, the end of a scan.
#include <catch2/catch.hpp>

#include "model/filter_eval.h"
#include "partition/memtable.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

filter_rc cell_rc(filter_node& f, std::string_view row, std::string_view q = "q", std::string_view v = "v",
                  std::string_view fam = "f", std::int64_t ts = 1) {
  return f.filter_cell(cell_view{row, fam, q, ts, v});
}

// TestFilterList's cells: new KeyValue(row, row, qualifier, value), the family is the row.
filter_rc list_rc(filter_node& f, std::string_view row, std::string_view q) {
  return f.filter_cell(cell_view{row, row, q, 1, q});
}

}  // namespace

TEST_CASE("TestFilterList: MUST_PASS_ONE of PageFilter and WHILE PrefixFilter", "[filter][TestFilterList]") {
  constexpr int max_pages = 2;
  auto c = compile_filter(filter_list::one({page_filter{max_pages}, while_match_filter{prefix_filter{"yyy"}}}), false);
  filter_node& f = *c.root;
  f.reset();
  CHECK_FALSE(f.filter_all_remaining());
  for (int i = 0; i < max_pages - 1; ++i) {  // both pass
    CHECK_FALSE(f.filter_row_key("yyyyyyyyy"));
    CHECK(list_rc(f, "yyyyyyyyy", std::to_string(i)) == filter_rc::include);
    CHECK_FALSE(f.filter_row());
  }
  CHECK_FALSE(f.filter_row_key("z"));  // only the PageFilter passes
  CHECK(list_rc(f, "z", "0") == filter_rc::include);
  CHECK_FALSE(f.filter_row());
  CHECK(f.filter_row_key("yyy"));  // MAX_PAGES reached: any row is filtered
  CHECK(list_rc(f, "yyy", "0") != filter_rc::include);
  CHECK_FALSE(f.filter_row());
  CHECK(f.filter_row_key("z"));
  CHECK(f.filter_all_remaining());
}

TEST_CASE("TestFilterList: MUST_PASS_ALL of PageFilter and WHILE PrefixFilter", "[filter][TestFilterList]") {
  constexpr int max_pages = 2;
  auto c = compile_filter(filter_list::all({page_filter{max_pages}, while_match_filter{prefix_filter{"yyy"}}}), false);
  filter_node& f = *c.root;
  f.reset();
  CHECK_FALSE(f.filter_all_remaining());
  for (int i = 0; i < max_pages - 1; ++i) {
    CHECK_FALSE(f.filter_row_key("yyyyyyyyy"));
    CHECK(list_rc(f, "yyyyyyyyy", std::to_string(i)) == filter_rc::include);
  }
  f.reset();
  CHECK(f.filter_row_key("z"));
  CHECK(list_rc(f, "z", "z") == filter_rc::next_row);
}

TEST_CASE("TestFilterList: ordering (a PageFilter at its limit does not stop an OR)", "[filter][TestFilterList]") {
  constexpr int max_pages = 2;
  auto c = compile_filter(filter_list::one({prefix_filter{"yyy"}, page_filter{max_pages}}), false);
  filter_node& f = *c.root;
  for (const char* row : {"yyyyyyyy", "xxxxxxx", "yyy"})
    for (int i = 0; i < max_pages; ++i) {
      INFO(row << " " << i);
      CHECK_FALSE(f.filter_row_key(row));
      CHECK(list_rc(f, row, std::to_string(i)) == filter_rc::include);
      CHECK_FALSE(f.filter_row());
    }
}

TEST_CASE("TestFilterList: MUST_PASS_ONE with one PrefixFilter, and hints", "[filter][TestFilterList]") {
  auto c = compile_filter(filter_list::one({prefix_filter{"Row1"}}), false);
  filter_node& f = *c.root;
  f.filter_row_key("Row1");
  CHECK(cell_rc(f, "Row1") == filter_rc::include);
  CHECK(cell_rc(f, "Row11") == filter_rc::include);
  f.reset();
  f.filter_row_key("Row2");
  CHECK(cell_rc(f, "Row2") == filter_rc::skip);  // NEXT_ROW merged as the minimal step

  // MUST_PASS_ALL takes the largest hint, MUST_PASS_ONE the smallest (testHintPassThru).
  auto all =
      compile_filter(filter_list::all({column_prefix_filter{"d"}, column_range_filter{"b", true, "", false}}), false);
  CHECK(cell_rc(*all.root, "r", "a") == filter_rc::seek_next_using_hint);
  auto h = all.root->next_cell_hint(cell_view{"r", "f", "a", 1, "v"});
  REQUIRE(h);
  CHECK(h->qualifier == "d");
  auto one =
      compile_filter(filter_list::one({column_prefix_filter{"d"}, column_range_filter{"b", true, "", false}}), false);
  CHECK(cell_rc(*one.root, "r", "a") == filter_rc::seek_next_using_hint);
  h = one.root->next_cell_hint(cell_view{"r", "f", "a", 1, "v"});
  REQUIRE(h);
  CHECK(h->qualifier == "b");
  // MUST_PASS_ONE: no hint when one filter has none.
  auto mixed = compile_filter(filter_list::one({column_prefix_filter{"d"},
                                                value_filter{compare_op::equal, comparator::binary("x")}}),
                              false);
  CHECK(cell_rc(*mixed.root, "r", "a") == filter_rc::skip);
  CHECK_FALSE(mixed.root->next_cell_hint(cell_view{"r", "f", "a", 1, "v"}));
}

TEST_CASE("TestFilterList: a filter that asked for the next column is not asked again in it",
          "[filter][TestFilterList]") {
  // HBASE-17678: OR of ColumnCountGetFilter(1) and a ValueFilter; the count filter says
  // NEXT_COL for the second version, so the OR is SKIP, and the count filter is not asked
  // about the third version (its count stays).
  auto c = compile_filter(filter_list::one({column_pagination_filter{1, 0, std::nullopt},
                                            value_filter{compare_op::equal, comparator::binary("nope")}}),
                          false);
  filter_node& f = *c.root;
  CHECK(cell_rc(f, "r", "a", "v", "f", 3) == filter_rc::include);  // INCLUDE_AND_NEXT_COL + SKIP -> INCLUDE
  CHECK(cell_rc(f, "r", "a", "v", "f", 2) == filter_rc::skip);
  CHECK(cell_rc(f, "r", "b", "v", "f", 3) == filter_rc::skip);  // the pagination filter is past its limit
}

TEST_CASE("TestSingleColumnValueFilter: return codes and filterRow", "[filter][TestSingleColumnValueFilter]") {
  auto make = [](compare_op op, comparator c, bool missing = false, bool latest = true) {
    return compile_filter(single_column_value_filter{"myFamily", "myColumn", op, std::move(c), missing, latest}, false);
  };
  // basicFilterTests: GREATER_OR_EQUAL 'ab': a value below is dropped (NEXT_ROW, filterRow).
  auto c = make(compare_op::greater_or_equal, comparator::binary("ab"));
  CHECK(cell_rc(*c.root, "r", "myColumn", "aa", "myFamily") == filter_rc::next_row);
  CHECK(c.root->filter_row());
  c.root->reset();
  CHECK(cell_rc(*c.root, "r", "myColumn", "ab", "myFamily") == filter_rc::include);
  CHECK_FALSE(c.root->filter_row());
  c.root->reset();
  CHECK(cell_rc(*c.root, "r", "myColumn", "abc", "myFamily") == filter_rc::include);
  CHECK_FALSE(c.root->filter_row());
  // Other columns pass until the tested column decides.
  c.root->reset();
  CHECK(cell_rc(*c.root, "r", "other", "zz", "myFamily") == filter_rc::include);
  CHECK_FALSE(c.root->filter_row());  // missing: kept unless filterIfMissing
  auto m = make(compare_op::greater_or_equal, comparator::binary("ab"), true);
  CHECK(cell_rc(*m.root, "r", "other", "zz", "myFamily") == filter_rc::include);
  CHECK(m.root->filter_row());
  // latestVersionOnly = false: a failing newest version does not end the row.
  auto any = make(compare_op::equal, comparator::binary("old"), false, false);
  CHECK(cell_rc(*any.root, "r", "myColumn", "new", "myFamily", 2) == filter_rc::include);
  CHECK(cell_rc(*any.root, "r", "myColumn", "old", "myFamily", 1) == filter_rc::include);
  CHECK_FALSE(any.root->filter_row());
  // substring and regex comparators (testSubstringFilter, testRegexFilter)
  auto sub = make(compare_op::equal, comparator::substring("BC"));
  CHECK(cell_rc(*sub.root, "r", "myColumn", "abcd", "myFamily") == filter_rc::include);
  auto re = make(compare_op::equal, comparator::regex("a.c"));
  CHECK(cell_rc(*re.root, "r", "myColumn", "xxabcd", "myFamily") == filter_rc::include);
  re.root->reset();
  CHECK(cell_rc(*re.root, "r", "myColumn", "xxacbd", "myFamily") == filter_rc::next_row);
  // A regex is found anywhere, '.' matches a newline (DOTALL), values are bytes.
  auto dot = make(compare_op::equal, comparator::regex("a.b"));
  CHECK(cell_rc(*dot.root, "r", "myColumn", "a\nb", "myFamily") == filter_rc::include);
  auto latin = make(compare_op::equal, comparator::regex("\xC3\xA9"));  // U+00E9 in the pattern's UTF-8
  CHECK(cell_rc(*latin.root, "r", "myColumn", "caf\xE9", "myFamily") == filter_rc::include);
}

TEST_CASE("TestColumnPaginationFilter: limit/offset and column offset", "[filter][TestColumnPaginationFilter]") {
  auto c = compile_filter(column_pagination_filter{1, 0, std::nullopt}, false);
  CHECK(cell_rc(*c.root, "r", "a") == filter_rc::include_and_next_col);
  CHECK(cell_rc(*c.root, "r", "b") == filter_rc::next_row);
  auto o = compile_filter(column_pagination_filter{1, 0, std::string("b")}, false);
  CHECK(cell_rc(*o.root, "r", "a") == filter_rc::seek_next_using_hint);
  auto h = o.root->next_cell_hint(cell_view{"r", "f", "a", 1, "v"});
  REQUIRE(h);
  CHECK(h->where == cell_hint::at::first_on_column);
  CHECK(h->qualifier == "b");
  CHECK(cell_rc(*o.root, "r", "b") == filter_rc::include_and_next_col);
  CHECK(cell_rc(*o.root, "r", "c") == filter_rc::next_row);
}

TEST_CASE("TestFuzzyRowFilter: satisfies and the next row (forward)", "[filter][TestFuzzyRowFilter]") {
  auto b = [](std::initializer_list<int> v) {
    std::string s;
    for (int x : v) s.push_back(static_cast<char>(x));
    return s;
  };
  // HBase's masks use -1 (0xff) for fixed and 0 for free; cellar's API 0 and 1.
  auto key = [&](std::initializer_list<int> k, std::initializer_list<int> mask) {
    fuzzy_key f{b(k), {}};
    for (int m : mask) f.mask.push_back(m == 0 ? 1 : 0);
    return f;
  };
  auto satisfies = [&](std::string row, fuzzy_key k) {
    auto c = compile_filter(fuzzy_row_filter{{k}}, false);
    return c.root->filter_cell(cell_view{row, "f", "q", 1, "v"}) == filter_rc::include;
  };
  CHECK(satisfies(b({1, 128, 1, 0, 1}), key({1, 0, 1}, {-1, 0, -1})));
  CHECK_FALSE(satisfies(b({1, 128, 2, 0, 1}), key({1, 0, 1}, {-1, 0, -1})));
  CHECK(satisfies(b({1, 2, 1, 3, 3}), key({1, 2, 0, 3}, {-1, -1, 0, -1})));
  CHECK_FALSE(satisfies(b({1, 1, 1, 3, 0}), key({1, 2, 0, 3}, {-1, -1, 0, -1})));
  CHECK_FALSE(satisfies(b({1, 1, 1, 3, 0}), key({1, 245, 0, 3}, {-1, -1, 0, -1})));
  CHECK_FALSE(satisfies(b({1, 2, 1, 0, 1}), key({0, 1, 2}, {0, -1, -1})));

  struct next_case {
    std::initializer_list<int> fuzzy, mask, current, expected;
  };
  const next_case cases[] = {
      {{0, 1, 2}, {0, -1, -1}, {1, 2, 1, 0, 1}, {2, 1, 2}},
      {{0, 1, 2}, {0, -1, -1}, {1, 1, 2, 0, 1}, {1, 1, 2, 0, 2}},
      {{0, 1, 0, 2, 0}, {0, -1, 0, -1, 0}, {1, 0, 2, 0, 1}, {1, 1, 0, 2}},
      {{1, 0, 1}, {-1, 0, -1}, {1, 128, 2, 0, 1}, {1, 129, 1}},
      {{0, 1, 0, 1}, {0, -1, 0, -1}, {5, 1, 0, 1}, {5, 1, 1, 1}},
      {{0, 1, 0, 1}, {0, -1, 0, -1}, {5, 1, 0, 1, 1}, {5, 1, 0, 1, 2}},
      {{0, 1, 0, 0}, {0, -1, 0, 0}, {5, 1, 255, 1}, {5, 1, 255, 2}},
      {{0, 1, 0, 1}, {0, -1, 0, -1}, {5, 1, 255, 1}, {6, 1, 0, 1}},
      {{0, 1, 0, 1}, {0, -1, 0, -1}, {5, 1, 255, 0}, {5, 1, 255, 1}},
      {{5, 1, 1, 0}, {-1, -1, 0, 0}, {5, 1, 255, 1}, {5, 1, 255, 2}},
      {{1, 1, 1, 1}, {-1, -1, 0, 0}, {1, 1, 2, 2}, {1, 1, 2, 3}},
      {{1, 1, 1, 1}, {-1, -1, 0, 0}, {1, 1, 3, 2}, {1, 1, 3, 3}},
      {{1, 1, 1, 1}, {0, 0, 0, 0}, {1, 1, 2, 3}, {1, 1, 2, 4}},
      {{1, 1, 1, 1}, {0, 0, 0, 0}, {1, 1, 3, 2}, {1, 1, 3, 3}},
      {{1, 1, 0, 0}, {-1, -1, 0, 0}, {0, 1, 3, 2}, {1, 1}},
  };
  for (const auto& c : cases) {
    auto next = fuzzy_next_row(b(c.current), key(c.fuzzy, c.mask));
    REQUIRE(next);
    CHECK(*next == b(c.expected));
  }
  CHECK_FALSE(fuzzy_next_row(b({2, 3, 1, 1, 1}), key({1, 0, 1}, {-1, 0, -1})));
  CHECK_FALSE(fuzzy_next_row(b({1, 245, 1, 3, 0}), key({1, 1, 0, 3}, {-1, -1, 0, -1})));
  CHECK_FALSE(fuzzy_next_row(b({1, 3, 1, 3, 0}), key({1, 2, 0, 3}, {-1, -1, 0, -1})));
  CHECK_FALSE(fuzzy_next_row(b({2, 1, 1, 1, 0}), key({1, 2, 0, 3}, {-1, -1, 0, -1})));
}

TEST_CASE("TestMultiRowRangeFilter: sort and merge", "[filter][TestMultiRowRangeFilter]") {
  auto k = [](int i) {
    std::string s(4, '\0');
    for (int b = 0; b < 4; ++b)
      s[static_cast<std::size_t>(b)] = static_cast<char>(static_cast<unsigned>(i) >> (24 - 8 * b));
    return s;
  };
  using v = std::vector<row_range>;
  CHECK(merge_row_ranges(v{{"", true, k(20), false}, {k(15), true, k(40), false}}) == v{{"", true, k(40), false}});
  CHECK(merge_row_ranges(v{{k(10), true, k(20), false}, {k(15), true, "", false}, {k(30), true, k(70), false}}) ==
        v{{k(10), true, "", false}});
  CHECK(merge_row_ranges(v{{k(10), true, k(20), false}, {"", true, "", false}, {k(30), true, k(70), false}}) ==
        v{{"", true, "", false}});
  CHECK(merge_row_ranges(v{{k(10), true, k(20), false}, {k(30), true, k(40), false}, {k(60), true, k(70), false}}) ==
        v{{k(10), true, k(20), false}, {k(30), true, k(40), false}, {k(60), true, k(70), false}});
  CHECK(merge_row_ranges(v{{k(10), true, k(20), false},
                           {k(15), true, k(40), false},
                           {k(20), true, k(30), false},
                           {k(30), true, k(50), false},
                           {k(30), true, k(70), false},
                           {k(90), true, k(100), false},
                           {k(95), true, k(100), false}}) ==
        v{{k(10), true, k(70), false}, {k(90), true, k(100), false}});
  CHECK(merge_row_ranges(v{{k(10), true, k(20), false}, {k(20), true, "", false}}) == v{{k(10), true, "", false}});
  CHECK(merge_row_ranges(v{{k(10), true, k(20), false}, {k(20), false, "", false}}) ==
        v{{k(10), true, k(20), false}, {k(20), false, "", false}});
  CHECK(merge_row_ranges(v{{k(10), true, k(20), true}, {k(20), false, "", false}}) == v{{k(10), true, "", false}});
  // testRanges / testOutOfOrderScannerNextException
  auto c =
      compile_filter(multi_row_range_filter{{{"\xfd", true, "\xfe", false}, {"\x05", true, "\x06", false}}}, false);
  CHECK(c.root->filter_row_key("\xf6"));
  auto bc = compile_filter(multi_row_range_filter{{{"b", true, "c", true}, {"d", true, "e", true}}}, false);
  CHECK(bc.root->filter_row_key("a"));
  for (const char* r : {"b", "c", "d", "e"}) {
    CHECK_FALSE(bc.root->filter_row_key(r));
    CHECK(cell_rc(*bc.root, r) == filter_rc::include);
  }
}

TEST_CASE("seeks: what a filter knows about rows before reading them", "[filter][seek]") {
  auto sk = [](filter f, std::string_view row, bool reversed = false) {
    auto c = compile_filter(f, reversed);
    CHECK(c.seeks);
    return c.root->seek(row);
  };
  auto is = [](const row_seek& s, row_seek::what w, std::string row = "", bool incl = true) {
    INFO(static_cast<int>(s.w) << " " << s.row << " " << s.inclusive);
    CHECK(s.w == w);
    if (w == row_seek::what::skip_to) {
      CHECK(s.row == row);
      CHECK(s.inclusive == incl);
    }
  };
  is(sk(prefix_filter{"b"}, "a"), row_seek::what::skip_to, "b");
  is(sk(prefix_filter{"b"}, "b1"), row_seek::what::here);
  is(sk(prefix_filter{"b"}, "c"), row_seek::what::end);
  is(sk(prefix_filter{"b"}, "c", true), row_seek::what::skip_to, "c", false);
  is(sk(prefix_filter{"b"}, "a", true), row_seek::what::end);
  is(sk(row_filter{compare_op::equal, comparator::binary("m")}, "a"), row_seek::what::skip_to, "m");
  is(sk(row_filter{compare_op::equal, comparator::binary("m")}, "n"), row_seek::what::end);
  is(sk(row_filter{compare_op::greater, comparator::binary("m")}, "a"), row_seek::what::skip_to, "m", false);
  is(sk(row_filter{compare_op::equal, comparator::binary_prefix("m")}, "a"), row_seek::what::skip_to, "m");
  is(sk(inclusive_stop_filter{"m"}, "n"), row_seek::what::end);
  is(sk(multi_row_range_filter{{{"c", false, "d", true}, {"x", true, "y", false}}}, "a"), row_seek::what::skip_to, "c",
     false);
  is(sk(multi_row_range_filter{{{"c", false, "d", true}, {"x", true, "y", false}}}, "e"), row_seek::what::skip_to, "x");
  is(sk(multi_row_range_filter{{{"c", false, "d", true}, {"x", true, "y", false}}}, "y"), row_seek::what::end);
  is(sk(multi_row_range_filter{{{"c", false, "d", true}, {"x", true, "y", false}}}, "e", true), row_seek::what::skip_to,
     "d", true);
  // Lists: AND jumps to the furthest, OR to the nearest; a WhileMatchFilter anywhere stops seeking.
  is(sk(filter_list::all({prefix_filter{"b"}, row_filter{compare_op::greater_or_equal, comparator::binary("b5")}}),
        "a"),
     row_seek::what::skip_to, "b5");
  is(sk(filter_list::one({prefix_filter{"b"}, prefix_filter{"d"}}), "c"), row_seek::what::skip_to, "d");
  is(sk(filter_list::one({prefix_filter{"b"}, prefix_filter{"d"}}), "e"), row_seek::what::end);
  CHECK_FALSE(compile_filter(while_match_filter{prefix_filter{"b"}}, false).seeks);
  CHECK_FALSE(compile_filter(filter_list::all({prefix_filter{"b"}, while_match_filter{page_filter{1}}}), false).seeks);
  CHECK_FALSE(compile_filter(filter_list::one({prefix_filter{"b"}, page_filter{1}}), false).seeks);
  CHECK_FALSE(compile_filter(value_filter{compare_op::equal, comparator::binary("x")}, false).seeks);
}

TEST_CASE("filter_row_limit: the rows a PageFilter allows the whole scan", "[filter][limit]") {
  CHECK(filter_row_limit(page_filter{5}) == 5);
  CHECK(filter_row_limit(filter_list::all({prefix_filter{"a"}, page_filter{5}, page_filter{3}})) == 3);
  CHECK_FALSE(filter_row_limit(filter_list::one({prefix_filter{"a"}, page_filter{5}})));
  CHECK_FALSE(filter_row_limit(skip_filter{page_filter{5}}));
  CHECK_FALSE(filter_row_limit(prefix_filter{"a"}));
}

// ---- the partition's filtered reads ------------------------------------------------------

namespace {

table_schema one_family() {
  table_schema s;
  s.name = "t";
  s.partitioned = true;
  s.families = {{family_descriptor{"f", 0, 0}, 1}, {family_descriptor{"g", 0, 0}, 2}};
  return s;
}

std::string key(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "row%05d", i);
  return b;
}

struct filled {
  memory_pool pool;
  memtable m{&pool};
  table_schema s = one_family();
  explicit filled(int rows) {
    for (int i = 0; i < rows; ++i)
      REQUIRE(m.apply(s, put(key(i)).add("f", "q", 1, i % 100 == 0 ? "hit" : "miss"), 10).is_ok());
  }
  scan_page page(filter f, std::size_t max_rows = 256, std::string state = {}, std::optional<std::string> from = {},
                 bool reversed = false) {
    scan_page_request rq;
    rq.from = std::move(from);
    rq.from_inclusive = false;
    rq.reversed = reversed;
    rq.max_rows = max_rows;
    rq.options.filter = std::move(f);
    rq.filter_state = std::move(state);
    return m.scan(s, rq, 10);
  }
};

}  // namespace

TEST_CASE("a PrefixFilter seeks: one page finds rows at the end of 20000", "[filter][seek][memtable]") {
  filled t(20000);
  // A walk examines at most 4096 rows per page; a seek goes straight to the prefix.
  auto p = t.page(prefix_filter{"row1899"});
  CHECK(p.rows.size() == 10);
  CHECK(p.exhausted);
  CHECK(p.filter_done);
  CHECK(p.last_row == "row19000");       // the first row past the prefix ends the scan
  p = t.page(prefix_filter{"row1999"});  // the last rows: the map ends first
  CHECK(p.rows.size() == 10);
  CHECK(p.exhausted);
  CHECK_FALSE(p.filter_done);
  // The same for a binary RowFilter, a MultiRowRangeFilter and a FuzzyRowFilter.
  p = t.page(row_filter{compare_op::equal, comparator::binary(key(19990))});
  CHECK(p.rows.size() == 1);
  p = t.page(multi_row_range_filter{{{key(15000), true, key(15003), false}, {key(19998), true, "", false}}});
  CHECK(p.rows.size() == 5);
  CHECK(p.exhausted);
  p = t.page(fuzzy_row_filter{{{"row1?999", std::string("\0\0\0\0\1\0\0\0", 8)}}});
  CHECK(p.rows.size() == 10);  // row1X999
  // Reversed
  p = t.page(prefix_filter{"row0000"}, 256, {}, std::nullopt, true);
  CHECK(p.rows.size() == 10);
  CHECK(p.rows.front().row == "row00009");
  // A filter that cannot seek walks, a page at a time.
  p = t.page(value_filter{compare_op::equal, comparator::binary("nothing")});
  CHECK(p.rows.empty());
  CHECK_FALSE(p.exhausted);
  CHECK(p.examined_any);
}

TEST_CASE("filter state carries across pages; the page says where the filter ended the scan",
          "[filter][memtable][pages]") {
  filled t(1000);
  // PageFilter(300) over pages of 100 rows: 300 rows in all, then filter_done.
  std::string state;
  std::optional<std::string> from;
  std::size_t rows = 0;
  scan_page p;
  for (int i = 0; i < 10; ++i) {
    p = t.page(page_filter{300}, 100, state, from);
    rows += p.rows.size();
    state = p.filter_state;
    from = p.last_row;
    if (p.exhausted) break;
  }
  CHECK(rows == 300);
  CHECK(p.filter_done);
  CHECK(p.last_row == key(299));
  // Without the state each page would start counting again.
  auto fresh = t.page(page_filter{300}, 100, {}, key(299));
  CHECK(fresh.rows.size() == 100);
  // WHILE: the page that ends the scan says so; its last row is the one that failed.
  p = t.page(while_match_filter{row_filter{compare_op::less, comparator::binary(key(42))}});
  CHECK(p.rows.size() == 42);
  CHECK(p.filter_done);
  CHECK(p.last_row == key(42));
  // WHILE over a cell: the row where it fails comes back with the cells before the failure.
  auto s = one_family();
  REQUIRE(t.m.apply(s, put(key(5)).add("g", "a", 1, "miss"), 10).is_ok());
  p = t.page(while_match_filter{value_filter{compare_op::equal, comparator::binary("miss")}});
  CHECK(p.filter_done);
  CHECK(p.last_row == key(0));
  CHECK(p.rows.empty());
  // InclusiveStopFilter ends at the first row after its stop row.
  p = t.page(inclusive_stop_filter{key(3)});
  CHECK(p.rows.size() == 4);
  CHECK(p.filter_done);
  CHECK(p.last_row == key(4));
  // A filter that admits nothing at all from the start: done, nothing examined.
  p = t.page(page_filter{0});
  CHECK(p.filter_done);
  CHECK_FALSE(p.examined_any);
}

TEST_CASE("ColumnCountGetFilter ends its family for the rest of the scan, as HBase's DONE_SCAN", "[filter][memtable]") {
  filled t(5);
  auto s = one_family();
  REQUIRE(t.m.apply(s, put(key(1)).add("f", "a", 1, "x").add("f", "b", 1, "x"), 10).is_ok());
  REQUIRE(t.m.apply(s, put(key(3)).add("g", "a", 1, "x"), 10).is_ok());
  auto p = t.page(column_count_get_filter{1});
  // row0: 1 column; row1: columns a (kept), b (past the limit: family f closes);
  // later rows only through g.
  REQUIRE(p.rows.size() == 3);
  CHECK(p.rows[0].row == key(0));
  CHECK(p.rows[1].row == key(1));
  CHECK(p.rows[1].cells.size() == 1);
  CHECK(p.rows[2].row == key(3));
  CHECK(p.rows[2].cells.at(0).family == "g");
  CHECK(p.exhausted);
}
