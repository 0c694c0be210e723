// One filter of every kind and every comparator, with strings that are hard to print: every
// byte value, quotes, parentheses, commas and keywords inside strings. Each passes check().
#pragma once

#include <string>
#include <vector>

#include "cellar/filter.h"

namespace filter_test {

// Every byte value once, 0 to 255.
inline std::string every_byte() {
  std::string s;
  for (int b = 0; b < 256; ++b) s.push_back(static_cast<char>(b));
  return s;
}

// Strings the text form must quote exactly.
inline std::vector<std::string> awkward_strings() {
  return {"",
          "'",
          "''",
          "')",
          ")'",
          "a'b''c'''",
          "x) AND PrefixFilter('y",
          " OR ",
          "SKIP ",
          "(,)",
          std::string("\0", 1),
          std::string("n\0l\n\r\t", 6),
          "\x7f\x80\xfe\xff",
          "binary:nested:colon",
          every_byte()};
}

// One filter of each kind, each comparator kind under each compare operator the filter
// language accepts for it, and the compound forms.
inline std::vector<cellar::filter> every_filter() {
  using namespace cellar;
  std::vector<filter> all;
  const compare_op every_op[] = {compare_op::less,      compare_op::less_or_equal,    compare_op::equal,
                                 compare_op::not_equal, compare_op::greater_or_equal, compare_op::greater,
                                 compare_op::no_op};
  for (const auto& s : awkward_strings()) {
    for (compare_op op : every_op) {
      all.push_back(value_filter{op, comparator::binary(s)});
      all.push_back(row_filter{op, comparator::binary_prefix(s)});
      all.push_back(family_filter{op, comparator::bit_and(s)});
      all.push_back(qualifier_filter{op, comparator::bit_or(s)});
      all.push_back(value_filter{op, comparator::bit_xor(s)});
    }
    all.push_back(prefix_filter{s});
    all.push_back(column_prefix_filter{s});
    all.push_back(inclusive_stop_filter{s});
    all.push_back(column_range_filter{s, false, s + "z", true});
    all.push_back(column_pagination_filter{2, 0, s});
    all.push_back(single_column_value_filter{s, s, compare_op::equal, comparator::binary(s), true, false});
    all.push_back(single_column_value_exclude_filter{s, s, compare_op::less, comparator::binary(s), false, true});
    all.push_back(column_value_filter{s, s, compare_op::greater, comparator::binary_prefix(s)});
    all.push_back(dependent_column_filter{s, s, true, compare_op::not_equal, comparator::bit_xor(s)});
    all.push_back(multi_row_range_filter{{{s, true, s + "\xff", false}}});
    all.push_back(fuzzy_row_filter{{{s, std::string(s.size(), '\1')}}});
    all.push_back(filter_list::one({prefix_filter{s}, value_filter{compare_op::equal, comparator::binary(s)}}));
  }
  for (compare_op op : {compare_op::equal, compare_op::not_equal}) {
    all.push_back(value_filter{op, comparator::substring("MiXed ')")});
    all.push_back(value_filter{op, comparator::substring("\xc3\x89t\xc3\xa9")});  // not ASCII
    all.push_back(row_filter{op, comparator::regex("r0[13]'.*\\)")});
    all.push_back(value_filter{op, comparator::regex("\xc3\xa9+")});  // U+00E9
  }
  for (compare_op op : every_op) {
    all.push_back(value_filter{op, comparator::null()});
    all.push_back(value_filter{op, comparator::long_value(-7)});
    all.push_back(value_filter{op, comparator::long_value(INT64_MIN)});
    all.push_back(value_filter{op, comparator::long_value(INT64_MAX)});
  }
  all.insert(all.end(),
             {
                 multiple_column_prefix_filter{},
                 multiple_column_prefix_filter{{"a", "b'", std::string("\0", 1)}},
                 column_range_filter{"", true, "", false},
                 column_count_get_filter{0},
                 column_count_get_filter{INT32_MAX},
                 column_pagination_filter{2, 1, std::nullopt},
                 column_pagination_filter{INT32_MAX, INT32_MAX, std::nullopt},
                 page_filter{0},
                 page_filter{INT64_MAX},
                 single_column_value_filter{"f", "q", compare_op::equal, comparator::binary("v"), false, true},
                 dependent_column_filter{"f", "q", false, compare_op::no_op, std::nullopt},
                 dependent_column_filter{"f", "q", true, compare_op::no_op, std::nullopt},
                 dependent_column_filter{"f", "q", false, compare_op::equal, comparator::binary("v")},
                 first_key_only_filter{},
                 key_only_filter{false},
                 key_only_filter{true},
                 timestamps_filter{},
                 timestamps_filter{{}, true},
                 timestamps_filter{{3, 1, 0, INT64_MAX}, false},
                 timestamps_filter{{5}, true},
                 random_row_filter{0.25f},
                 random_row_filter{-1.0f},
                 random_row_filter{2.0f},
                 random_row_filter{0.0f},
                 skip_filter{value_filter{compare_op::equal, comparator::binary("x")}},
                 while_match_filter{prefix_filter{"w"}},
                 skip_filter{while_match_filter{skip_filter{prefix_filter{"s"}}}},
                 while_match_filter{filter_list::all({prefix_filter{"a"}, key_only_filter{}})},
                 filter_list::one({prefix_filter{"a"}, filter_list::all({prefix_filter{"b"}, key_only_filter{}})}),
                 filter_list::all({filter_list::all({prefix_filter{"a"}, prefix_filter{"b"}}), prefix_filter{"c"}}),
                 filter_list::one(
                     {skip_filter{prefix_filter{"a"}}, filter_list::one({prefix_filter{"b"}, prefix_filter{"c"}})}),
                 multi_row_range_filter{{{"a", true, "b", false}, {"", true, "", false}, {"c", false, "c", true}}},
                 fuzzy_row_filter{{{"ab", std::string("\0\1", 2)}, {"", ""}}},
             });
  // As deep as a filter may nest.
  filter deep = prefix_filter{"d"};
  for (int i = 1; i < max_filter_depth; ++i)
    deep = i % 3 == 0   ? filter(filter_list::all({deep, key_only_filter{}}))
           : i % 3 == 1 ? filter(skip_filter{deep})
                        : filter(while_match_filter{deep});
  all.push_back(deep);
  return all;
}

}  // namespace filter_test
