// The filter language (cellar/filter.h parse_filter) and its canonical text.
// The first cases are HBase's TestParseFilter, as data; then docs/semantics.md R44-R47 and
// OBKV's extras; then every parse error, one by one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../printable.h"
#include "cellar/filter.h"
#include "every_filter.h"
#include "model/filter_text.h"

namespace {

using namespace cellar;

filter parse_ok(const std::string& s) {
  auto r = parse_filter(s);
  INFO(s << " -> " << r.error().to_string());
  REQUIRE(r.is_ok());
  // The canonical text parses back to the same filter.
  auto again = parse_filter(to_string(r.value()));
  INFO("canonical: " << to_string(r.value()));
  REQUIRE(again.is_ok());
  CHECK(to_string(again.value()) == to_string(r.value()));
  CHECK(again.value() == r.value());
  return r.value();
}

// The error message of a string that must not parse.
std::string parse_error(const std::string& s) {
  auto r = parse_filter(s);
  INFO(s);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.code() == code::invalid_argument);
  return r.error().message();
}

template <class T>
const T& as(const filter& f) {
  const T* p = f.get_if<T>();
  INFO("filter is " << f.name());
  REQUIRE(p != nullptr);
  return *p;
}

}  // namespace

TEST_CASE("TestParseFilter: simple filters", "[filter][parse]") {
  as<key_only_filter>(parse_ok("KeyOnlyFilter()"));
  parse_error("KeyOnlyFilter ('') ");
  as<first_key_only_filter>(parse_ok(" FirstKeyOnlyFilter( ) "));
  parse_error(" FirstKeyOnlyFilter ('') ");

  CHECK(as<prefix_filter>(parse_ok(" PrefixFilter('row' ) ")).prefix == "row");
  parse_error(" PrefixFilter(row)");
  CHECK(as<column_prefix_filter>(parse_ok(" ColumnPrefixFilter('qualifier' ) ")).prefix == "qualifier");
  CHECK(as<multiple_column_prefix_filter>(parse_ok(" MultipleColumnPrefixFilter('qualifier1', 'qualifier2' ) "))
            .prefixes == std::vector<std::string>{"qualifier1", "qualifier2"});

  CHECK(as<column_count_get_filter>(parse_ok(" ColumnCountGetFilter(4)")).limit == 4);
  parse_error(" ColumnCountGetFilter('abc')");
  parse_error(" ColumnCountGetFilter(2147483648)");

  CHECK(as<page_filter>(parse_ok(" PageFilter(4)")).page_size == 4);
  parse_error(" PageFilter('123')");

  auto cp = as<column_pagination_filter>(parse_ok("ColumnPaginationFilter(4, 6)"));
  CHECK(cp.limit == 4);
  CHECK(cp.offset == 6);
  parse_error(" ColumnPaginationFilter('124')");
  parse_error(" ColumnPaginationFilter('4' , '123a')");
  parse_error(" ColumnPaginationFilter('4' , '-123')");

  CHECK(as<inclusive_stop_filter>(parse_ok("InclusiveStopFilter ('row 3')")).stop_row == "row 3");

  auto ts = as<timestamps_filter>(parse_ok("TimestampsFilter(9223372036854775806, 6)"));
  CHECK(ts.timestamps == std::vector<std::int64_t>{9223372036854775806LL, 6});
  CHECK(as<timestamps_filter>(parse_ok("TimestampsFilter()")).timestamps.empty());
  parse_error("TimestampsFilter(9223372036854775808, 6)");
  parse_error("TimestampsFilter(-45, 6)");
}

TEST_CASE("TestParseFilter: compare filters and comparators", "[filter][parse]") {
  auto rf = as<row_filter>(parse_ok("RowFilter ( =,   'binary:regionse')"));
  CHECK(rf.op == compare_op::equal);
  CHECK(rf.cmp == comparator::binary("regionse"));

  auto ff = as<family_filter>(parse_ok("FamilyFilter(>=, 'binaryprefix:pre')"));
  CHECK(ff.op == compare_op::greater_or_equal);
  CHECK(ff.cmp == comparator::binary_prefix("pre"));

  auto qf = as<qualifier_filter>(parse_ok("QualifierFilter(=, 'regexstring:pre*')"));
  CHECK(qf.cmp.type() == comparator::kind::regex);
  CHECK(qf.cmp.value() == "pre*");

  auto vf = as<value_filter>(parse_ok("ValueFilter(!=, 'substring:pre')"));
  CHECK(vf.op == compare_op::not_equal);
  CHECK(vf.cmp == comparator::substring("pre"));

  auto cr = as<column_range_filter>(parse_ok("ColumnRangeFilter('abc', true, 'xyz', false)"));
  CHECK(cr == column_range_filter{"abc", true, "xyz", false});

  auto dc =
      as<dependent_column_filter>(parse_ok("DependentColumnFilter('family', 'qualifier', true, =, 'binary:abc')"));
  CHECK(dc.family == "family");
  CHECK(dc.qualifier == "qualifier");
  CHECK(dc.drop_dependent_column);
  CHECK(dc.op == compare_op::equal);
  CHECK(dc.cmp == comparator::binary("abc"));

  auto scvf = as<single_column_value_filter>(
      parse_ok("SingleColumnValueFilter ('family', 'qualifier', >=, 'binary:a', true, false)"));
  CHECK(scvf.op == compare_op::greater_or_equal);
  CHECK(scvf.cmp == comparator::binary("a"));
  CHECK(scvf.filter_if_missing);
  CHECK_FALSE(scvf.latest_version_only);
  scvf =
      as<single_column_value_filter>(parse_ok("SingleColumnValueFilter ('family', 'qualifier', >, 'binaryprefix:a')"));
  CHECK(scvf.op == compare_op::greater);
  CHECK(scvf.cmp == comparator::binary_prefix("a"));
  CHECK_FALSE(scvf.filter_if_missing);
  CHECK(scvf.latest_version_only);

  auto scvef = as<single_column_value_exclude_filter>(
      parse_ok("SingleColumnValueExcludeFilter ('family', 'qualifier', <, 'binaryprefix:a')"));
  CHECK(scvef.op == compare_op::less);
  CHECK_FALSE(scvef.filter_if_missing);
  scvef = as<single_column_value_exclude_filter>(
      parse_ok("SingleColumnValueExcludeFilter ('family', 'qualifier', <=, 'binaryprefix:a', true, false)"));
  CHECK(scvef.op == compare_op::less_or_equal);
  CHECK(scvef.filter_if_missing);
  CHECK_FALSE(scvef.latest_version_only);

  auto cvf = as<column_value_filter>(parse_ok("ColumnValueFilter ('family', 'qualifier', <, 'binaryprefix:value')"));
  CHECK(cvf.family == "family");
  CHECK(cvf.op == compare_op::less);
  CHECK(cvf.cmp == comparator::binary_prefix("value"));

  // testIncorrectCompareOperator, testIncorrectComparatorType
  parse_error("RowFilter ('>>' , 'binary:region')");
  parse_error("RowFilter ('>=' , 'binaryoperator:region')");
  parse_error("RowFilter ('>=' 'regexstring:pre*')");
  parse_error("SingleColumnValueFilter ('family', 'qualifier', '>=', 'substring:a', 'true', 'false')')");
}

TEST_CASE("TestParseFilter: SKIP, WHILE, compound filters and precedence", "[filter][parse]") {
  auto skip = as<skip_filter>(parse_ok("SKIP ValueFilter( =,  'binary:0')"));
  CHECK(as<value_filter>(skip.inner).cmp == comparator::binary("0"));
  auto wh = as<while_match_filter>(parse_ok(" WHILE   RowFilter ( !=, 'binary:row1')"));
  CHECK(as<row_filter>(wh.inner).op == compare_op::not_equal);

  // testCompoundFilter1
  auto l = as<filter_list>(parse_ok(" (PrefixFilter ('realtime')AND  FirstKeyOnlyFilter())"));
  CHECK(l.operation == filter_list::op::must_pass_all);
  REQUIRE(l.filters.size() == 2);
  CHECK(as<prefix_filter>(l.filters[0]).prefix == "realtime");
  as<first_key_only_filter>(l.filters[1]);

  // testCompoundFilter2
  l =
      as<filter_list>(parse_ok("(PrefixFilter('realtime') AND QualifierFilter (>=, 'binary:e'))"
                               "OR FamilyFilter (=, 'binary:qualifier') "));
  CHECK(l.operation == filter_list::op::must_pass_one);
  REQUIRE(l.filters.size() == 2);
  auto inner = as<filter_list>(l.filters[0]);
  CHECK(inner.operation == filter_list::op::must_pass_all);
  as<prefix_filter>(inner.filters[0]);
  CHECK(as<qualifier_filter>(inner.filters[1]).cmp == comparator::binary("e"));
  CHECK(as<family_filter>(l.filters[1]).cmp == comparator::binary("qualifier"));

  // testCompoundFilter3
  l = as<filter_list>(
      parse_ok(" ColumnPrefixFilter ('realtime')AND  FirstKeyOnlyFilter() OR SKIP FamilyFilter(=, 'substring:hihi')"));
  CHECK(l.operation == filter_list::op::must_pass_one);
  inner = as<filter_list>(l.filters[0]);
  as<column_prefix_filter>(inner.filters[0]);
  as<first_key_only_filter>(inner.filters[1]);
  CHECK(as<family_filter>(as<skip_filter>(l.filters[1]).inner).cmp == comparator::substring("hihi"));

  // testCompoundFilter4: a run of ORs makes one list of three
  l = as<filter_list>(
      parse_ok(" ColumnPrefixFilter ('realtime') OR FirstKeyOnlyFilter() OR SKIP FamilyFilter(=, 'substring:hihi')"));
  REQUIRE(l.filters.size() == 3);
  as<column_prefix_filter>(l.filters[0]);
  as<first_key_only_filter>(l.filters[1]);
  as<skip_filter>(l.filters[2]);

  // testCompoundFilter5
  CHECK(as<value_filter>(parse_ok("(ValueFilter(!=, 'substring:pre'))")).cmp.type() == comparator::kind::substring);
  l = as<filter_list>(
      parse_ok("(ValueFilter(>=,'binary:x') AND (ValueFilter(<=,'binary:y'))) OR ValueFilter(=,'binary:ab')"));
  REQUIRE(l.filters.size() == 2);
  as<filter_list>(l.filters[0]);
  as<value_filter>(l.filters[1]);

  // testPrecedence1
  l = as<filter_list>(parse_ok(" (PrefixFilter ('realtime')AND  FirstKeyOnlyFilter() OR KeyOnlyFilter())"));
  CHECK(l.operation == filter_list::op::must_pass_one);
  inner = as<filter_list>(l.filters[0]);
  as<prefix_filter>(inner.filters[0]);
  as<first_key_only_filter>(inner.filters[1]);
  as<key_only_filter>(l.filters[1]);

  // testPrecedence2
  l = as<filter_list>(parse_ok(" PrefixFilter ('realtime')AND  SKIP FirstKeyOnlyFilter()OR KeyOnlyFilter()"));
  inner = as<filter_list>(l.filters[0]);
  as<prefix_filter>(inner.filters[0]);
  as<first_key_only_filter>(as<skip_filter>(inner.filters[1]).inner);
  as<key_only_filter>(l.filters[1]);

  // testUnescapedQuote1-3
  CHECK(as<inclusive_stop_filter>(parse_ok("InclusiveStopFilter ('row''3')")).stop_row == "row'3");
  CHECK(as<inclusive_stop_filter>(parse_ok("InclusiveStopFilter ('row''3''')")).stop_row == "row'3'");
  CHECK(as<inclusive_stop_filter>(parse_ok(" InclusiveStopFilter ('''')")).stop_row == "'");

  // testIncorrectFilterString, testCorrectFilterString
  parse_error("()");
  as<first_key_only_filter>(parse_ok("(FirstKeyOnlyFilter())"));
}

TEST_CASE("R44-R46: syntax and precedence", "[filter][parse][R44][R45][R46]") {
  // R45: "A AND B OR C" is "(A AND B) OR C"; "A AND SKIP B OR C" is "(A AND (SKIP B)) OR C".
  auto l = as<filter_list>(parse_ok("PrefixFilter('a') AND PrefixFilter('b') OR PrefixFilter('c')"));
  CHECK(l.operation == filter_list::op::must_pass_one);
  CHECK(as<filter_list>(l.filters[0]).operation == filter_list::op::must_pass_all);
  CHECK(as<prefix_filter>(l.filters[1]).prefix == "c");
  l = as<filter_list>(parse_ok("PrefixFilter('a') AND SKIP PrefixFilter('b') OR PrefixFilter('c')"));
  auto a = as<filter_list>(l.filters[0]);
  as<skip_filter>(a.filters[1]);
  // OR binds loosest on either side.
  l = as<filter_list>(parse_ok("PrefixFilter('a') OR PrefixFilter('b') AND PrefixFilter('c')"));
  CHECK(l.operation == filter_list::op::must_pass_one);
  CHECK(as<filter_list>(l.filters[1]).operation == filter_list::op::must_pass_all);
  // Inside a group too (HBase's ParseFilter reports mismatched parentheses here).
  l = as<filter_list>(parse_ok("(PrefixFilter('a') OR PrefixFilter('b') AND PrefixFilter('c'))"));
  CHECK(as<filter_list>(l.filters[1]).filters.size() == 2);
  // R46
  l = as<filter_list>(parse_ok("PrefixFilter('row') AND ValueFilter(=,'binary:x')"));
  CHECK(as<value_filter>(l.filters[1]).cmp == comparator::binary("x"));
  l =
      as<filter_list>(parse_ok("(RowFilter(=,'binary:Row 1') AND TimestampsFilter(74689, 89734)) OR "
                               "ColumnRangeFilter('abc', true, 'xyz', false)"));
  CHECK(as<timestamps_filter>(as<filter_list>(l.filters[0]).filters[1]).timestamps ==
        std::vector<std::int64_t>{74689, 89734});
  // The comparator value is every byte after the first ':'.
  CHECK(as<value_filter>(parse_ok("ValueFilter(=, 'binary:a:b''c')")).cmp.value() == "a:b'c");
  // Booleans in any case; a bare word where a string belongs is an error.
  CHECK(as<key_only_filter>(parse_ok("KeyOnlyFilter(TRUE)")).len_as_val);
  CHECK_FALSE(as<key_only_filter>(parse_ok("KeyOnlyFilter(fAlSe)")).len_as_val);
  // Bytes go through as they are.
  CHECK(as<prefix_filter>(parse_ok(std::string("PrefixFilter('a\0\xff')", 19))).prefix == std::string("a\0\xff", 3));
}

TEST_CASE("R47: OBKV's dialect", "[filter][parse][R47]") {
  // Case-insensitive names and keywords, && and ||.
  auto l = as<filter_list>(parse_ok("prefixfilter('a') and KEYONLYFILTER() or PrefixFilter('b')"));
  CHECK(l.operation == filter_list::op::must_pass_one);
  l = as<filter_list>(parse_ok("PrefixFilter('a') && PrefixFilter('b') || PrefixFilter('c')"));
  CHECK(as<filter_list>(l.filters[0]).operation == filter_list::op::must_pass_all);
  as<skip_filter>(parse_ok("skip PrefixFilter('a')"));
  as<while_match_filter>(parse_ok("While PrefixFilter('a')"));
  // NO_OP, TimestampsFilter's canHint, FuzzyRowFilter, MultiRowRangeFilter, RandomRowFilter,
  // ColumnPaginationFilter with a column offset.
  CHECK(as<row_filter>(parse_ok("RowFilter(NO_OP, 'binary:a')")).op == compare_op::no_op);
  auto ts = as<timestamps_filter>(parse_ok("TimestampsFilter(5, 6, true)"));
  CHECK(ts.can_hint);
  CHECK(ts.timestamps.size() == 2);
  auto fz = as<fuzzy_row_filter>(parse_ok(std::string("FuzzyRowFilter('a?c', '010', 'xy', '\x01") + '\0' + "')"));
  REQUIRE(fz.keys.size() == 2);
  CHECK(fz.keys[0].mask == std::string("\0\1\0", 3));
  CHECK(fz.keys[1].mask == std::string("\1\0", 2));
  auto mr = as<multi_row_range_filter>(parse_ok("MultiRowRangeFilter('a', true, 'c', false, 'x', false, '', true)"));
  REQUIRE(mr.ranges.size() == 2);
  CHECK(mr.ranges[1] == row_range{"x", false, "", true});
  auto rr = as<random_row_filter>(parse_ok("RandomRowFilter(1056964608)"));  // IEEE bits of 0.5f
  CHECK(rr.chance == 0.5f);
  auto cpo = as<column_pagination_filter>(parse_ok("ColumnPaginationFilter(8, 'abc')"));
  REQUIRE(cpo.column_offset);
  CHECK(*cpo.column_offset == "abc");
  // cellar's comparators.
  CHECK(as<value_filter>(parse_ok("ValueFilter(=, 'null:')")).cmp.type() == comparator::kind::null);
  CHECK(as<value_filter>(parse_ok("ValueFilter(>, 'long:-42')")).cmp.as_long() == -42);
  CHECK(as<value_filter>(parse_ok("ValueFilter(=, 'bitand:\x0f')")).cmp == comparator::bit_and("\x0f"));
  CHECK(as<value_filter>(parse_ok("ValueFilter(=, 'bitor:a')")).cmp == comparator::bit_or("a"));
  CHECK(as<value_filter>(parse_ok("ValueFilter(=, 'bitxor:a')")).cmp == comparator::bit_xor("a"));
}

TEST_CASE("parse errors name the position and what was expected", "[filter][parse][errors]") {
  struct bad {
    const char* text;
    const char* expect;  // a part of the message
  };
  const bad cases[] = {
      {"", "empty"},
      {"   ", "empty"},
      {"NoSuchFilter('a')", "position 1: unknown filter NoSuchFilter"},
      {"PrefixFilter('a') AND Bogus()", "position 23: unknown filter Bogus"},
      {"PrefixFilter()", "PrefixFilter expects 1 argument"},
      {"PrefixFilter('a', 'b')", "got 2 arguments"},
      {"ColumnRangeFilter('a', true, 'b')", "ColumnRangeFilter expects 4 arguments"},
      {"SingleColumnValueFilter('f', 'q', =, 'binary:a', true)", "4 or 6 arguments"},
      {"DependentColumnFilter('f', 'q', true, =)", "2, 3 or 5 arguments"},
      {"FirstKeyOnlyFilter(1)", "expects no arguments"},
      {"MultiRowRangeFilter('a', true, 'b')", "4 arguments per range"},
      {"FuzzyRowFilter('a')", "pairs of arguments"},
      {"PrefixFilter(abc)", "position 14: argument 1 of PrefixFilter must be a quoted string"},
      {"PageFilter(abc)", "position 12: argument 1 of PageFilter must be an integer"},
      {"PageFilter(12x)", "must be an integer"},
      {"PageFilter(9223372036854775808)", "out of range for a long"},
      {"PageFilter(-9223372036854775808)", "page size of PageFilter must be >= 0"},
      {"PageFilter(-9223372036854775809)", "out of range for a long"},
      {"ColumnCountGetFilter(2147483648)", "out of range for an int"},
      {"ColumnCountGetFilter(-2147483649)", "out of range for an int"},
      {"ColumnCountGetFilter(-1)", ">= 0"},
      {"PageFilter(-1)", ">= 0"},
      {"KeyOnlyFilter(yes)", "must be true or false"},
      {"RowFilter(=>, 'binary:a')", "must be a compare operator"},
      {"RowFilter(=, 'a')", "must be a comparator 'type:value'"},
      {"RowFilter(=, 'Binary:a')", "unknown comparator type 'Binary'"},
      {"RowFilter(<, 'regexstring:a')", "can only be used with EQUAL and NOT_EQUAL"},
      {"ValueFilter(>=, 'substring:a')", "can only be used with EQUAL and NOT_EQUAL"},
      {"RowFilter(=, 'regexstring:(a)\\1')", "RE2 cannot run this pattern"},
      {"RowFilter(=, 'regexstring:(?=a)')", "RE2 cannot run this pattern"},
      {"RowFilter(=, 'regexstring:a{1000}{1000}')", "regexstring"},
      {"RowFilter(=, 'long:12a')", "long comparator value"},
      {"PrefixFilter('abc)", "position 14: unterminated quoted string"},
      {"PrefixFilter('abc'", "expected a filter"},
      {"PrefixFilter('a'))", "position 18: unbalanced parentheses: this ')' has no '('"},
      {"(PrefixFilter('a')", "position 1: unbalanced parentheses: this '(' is never closed"},
      {"PrefixFilter('a') PrefixFilter('b')", "position 19: expected AND or OR before this filter"},
      {"PrefixFilter('a') AND", "expected a filter"},
      {"PrefixFilter('a') AND ", "AND must be followed by a filter"},
      {"SKIP ", "SKIP must be followed by a filter"},
      {"PrefixFilter('a') OR OR PrefixFilter('b')", "OR"},
      {"PrefixFilter ('a')x", "expected"},
      {"Prefix Filter('a')", "expected '(' after the filter name Prefix"},
      {"MultipleColumnPrefixFilter('a', 'a')", "must be distinct"},
      {"MultiRowRangeFilter('b', true, 'a', true)", "invalid range"},
      {"FuzzyRowFilter('ab', '0')", "same length"},
      {"FuzzyRowFilter('ab', '02')", "mask bytes must be 0"},
      {"RandomRowFilter(4294967296)", "fit in 32 bits"},
      {"TimestampsFilter(1, true, 2)", "must be an integer"},
  };
  for (const auto& c : cases) {
    const std::string msg = parse_error(c.text);
    INFO(c.text << " -> " << msg);
    CHECK(msg.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("an unknown filter's error lists every filter, each known in any case", "[filter][parse][errors]") {
  const std::string msg = parse_error("NoSuchFilter('a')");
  const auto open = msg.find("(filters: ");
  REQUIRE(open != std::string::npos);
  const auto close = msg.find(')', open);
  REQUIRE(close != std::string::npos);
  std::vector<std::string> names;
  for (std::size_t at = open + 10; at < close;) {
    const auto comma = std::min(msg.find(", ", at), close);
    names.push_back(msg.substr(at, comma - at));
    at = comma + 2;
  }
  CHECK(names.size() == 22);  // every filter of semantics.md R44-R47 (SKIP, WHILE and lists aside)
  for (const auto& n : names) {
    std::string lower = n;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    auto r = parse_filter(lower + "('x')");
    INFO(lower << ": " << (r.is_ok() ? "parsed" : r.error().message()));
    // Parsed, or refused for its arguments under its own name; never unknown.
    if (!r.is_ok()) {
      CHECK(r.error().message().find("unknown filter") == std::string::npos);
      CHECK(r.error().message().find(n) != std::string::npos);
    }
  }
}

TEST_CASE("nesting deeper than 100 levels is refused", "[filter][parse][errors]") {
  std::string ok = "PrefixFilter('a')", deep = ok;
  for (int i = 0; i < 99; ++i) ok = "SKIP " + ok;
  parse_ok(ok);  // 100 levels
  for (int i = 0; i < 100; ++i) deep = "SKIP " + deep;
  CHECK(parse_error(deep).find("nesting deeper than 100") != std::string::npos);
  std::string parens = std::string(101, '(') + "PrefixFilter('a')" + std::string(101, ')');
  CHECK(parse_error(parens).find("position 101: nesting deeper than 100") != std::string::npos);
  parse_ok(std::string(100, '(') + "PrefixFilter('a')" + std::string(100, ')'));
  std::string lists = "PrefixFilter('a')";
  for (int i = 0; i < 100; ++i) lists = "(" + lists + " AND PrefixFilter('b'))";
  CHECK(parse_error(lists).find("nesting deeper than 100") != std::string::npos);
  // The same through the API: check() refuses it.
  filter f = prefix_filter{"a"};
  for (int i = 0; i < 100; ++i) f = skip_filter{f};
  CHECK(f.check().code() == code::invalid_argument);
  CHECK(f.check().message().find("deeper than 100") != std::string::npos);
}

TEST_CASE("regular expressions run on RE2", "[filter][regex]") {
  CHECK(comparator::regex("a.c").check().is_ok());
  CHECK(comparator::regex("(a+)+$").check().is_ok());  // linear time, no catastrophic backtracking
  CHECK(comparator::regex("(a)\\1").check().code() == code::invalid_argument);
  CHECK(comparator::regex("a(?!b)").check().code() == code::invalid_argument);
  CHECK(comparator::regex("a*+").check().code() == code::invalid_argument);
  CHECK(comparator::regex("\xE2\x82\xAC").check().message().find("above U+00FF") != std::string::npos);
  CHECK(comparator::regex("\xff").check().message().find("not UTF-8") != std::string::npos);
  std::string huge = "(";
  for (int i = 0; i < 2000; ++i) huge += "abcdefghij|";
  huge += "z){50}";
  CHECK(comparator::regex(huge).check().message().find("too large") != std::string::npos);
  CHECK(parse_error("ValueFilter(=, 'regexstring:" + huge + "')").find("too large") != std::string::npos);
}

TEST_CASE("every filter prints as text that parses back to it", "[filter][text]") {
  for (const auto& f : filter_test::every_filter()) {
    const std::string text = to_string(f);
    INFO(test_util::printable(text));
    REQUIRE(f.check().is_ok());
    auto p = parse_filter(text);
    INFO(p.error().to_string());
    REQUIRE(p.is_ok());
    CHECK(p.value() == f);
    CHECK(to_string(p.value()) == text);
    auto q = detail::parse_printed_filter(text);
    REQUIRE(q.is_ok());
    CHECK(q.value() == f);
  }
}

TEST_CASE("random bytes in every string survive the text form", "[filter][text]") {
  std::mt19937 rng(7);
  auto random_bytes = [&] {
    std::string s(rng() % 12, '\0');
    for (auto& c : s) c = static_cast<char>(rng() % 4 == 0 ? "'(), "[rng() % 5] : rng());
    return s;
  };
  for (int i = 0; i < 3000; ++i) {
    const std::string a = random_bytes(), b = random_bytes();
    const auto op = static_cast<compare_op>(rng() % 7);
    filter f = filter_list::one(
        {single_column_value_filter{a, b, op, comparator::binary(b), (rng() & 1) != 0, (rng() & 1) != 0},
         skip_filter{value_filter{op, comparator::binary_prefix(a)}},
         column_range_filter{a, (rng() & 1) != 0, a + b + "x", (rng() & 1) != 0}, column_pagination_filter{1, 0, b},
         fuzzy_row_filter{{{a, std::string(a.size(), '\1')}}},
         dependent_column_filter{a, b, true, op, comparator::bit_or(a)}});
    auto p = parse_filter(to_string(f));
    INFO(test_util::printable(to_string(f)));
    REQUIRE(p.is_ok());
    CHECK(p.value() == f);
  }
}

TEST_CASE("the printed form of what the language cannot say", "[filter][text]") {
  // regexstring and substring with an ordering operator: the API builds them and
  // parse_printed_filter reads them back; parse_filter refuses them as HBase's ParseFilter.
  for (auto op : {compare_op::less, compare_op::less_or_equal, compare_op::greater_or_equal, compare_op::greater,
                  compare_op::no_op}) {
    for (const auto& cmp : {comparator::regex("a.*"), comparator::substring("AbC")}) {
      filter f = value_filter{op, cmp};
      REQUIRE(f.check().is_ok());
      CHECK(parse_filter(to_string(f)).code() == code::invalid_argument);
      auto p = detail::parse_printed_filter(to_string(f));
      REQUIRE(p.is_ok());
      CHECK(p.value() == f);
    }
  }
  // A list of one comes back as its filter; fields a filter ignores come back at their
  // defaults.
  CHECK(parse_filter(to_string(filter_list::all({prefix_filter{"a"}}))).value() == filter(prefix_filter{"a"}));
  CHECK(parse_filter(to_string(column_pagination_filter{3, 9, std::string("q")})).value() ==
        filter(column_pagination_filter{3, 0, std::string("q")}));
  CHECK(parse_filter(to_string(dependent_column_filter{"f", "q", true, compare_op::less, std::nullopt})).value() ==
        filter(dependent_column_filter{"f", "q", true, compare_op::no_op, std::nullopt}));
  // The extremes of a long comparator.
  CHECK(parse_ok("ValueFilter(=, 'long:-9223372036854775808')") ==
        filter(value_filter{compare_op::equal, comparator::long_value(INT64_MIN)}));
  parse_error("ValueFilter(=, 'long:-9223372036854775809')");
  parse_error("PageFilter(-9223372036854775809)");
}

TEST_CASE("random filter strings never crash the parser", "[filter][parse][fuzz]") {
  std::mt19937 rng(11);
  const std::string alphabet = "()' ,=<>!&|PrefixFilterRowANDORSKIPWHILEbinary:0123456789-truefalse\t\x01\xff";
  const char* seeds[] = {"PrefixFilter('a') AND ValueFilter(=, 'binary:x')",
                         "SKIP (A OR B)",
                         "MultiRowRangeFilter('a', true, 'b', false)",
                         "FuzzyRowFilter('a', '0')",
                         "TimestampsFilter(1, 2, true)",
                         "RowFilter(=, 'regexstring:a.*')"};
  for (int i = 0; i < 50000; ++i) {
    std::string s;
    if (i % 2 == 0) {
      s = seeds[rng() % std::size(seeds)];
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < edits && !s.empty(); ++k) {
        const std::size_t at = rng() % s.size();
        switch (rng() % 3) {
          case 0: s.erase(at, 1); break;
          case 1: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
          default: s[at] = alphabet[rng() % alphabet.size()];
        }
      }
    } else {
      s.resize(rng() % 40);
      for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    }
    auto r = parse_filter(s);
    if (r) {
      CHECK(r->check().is_ok());
      CHECK(parse_filter(to_string(r.value())).is_ok());
    } else {
      CHECK(r.code() == code::invalid_argument);
    }
  }
}
