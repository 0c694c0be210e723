// cellar/filter.h: HBase filters, as values, and HBase's filter language.
//
// A `filter` describes which cells a get, a scan or a checkAndMutate keeps. It is a tree
// of HBase's filter kinds, each a plain struct named after its HBase class:
//
//   cellar::filter f = cellar::filter_list::all({
//       cellar::prefix_filter{"row"},
//       cellar::value_filter{cellar::compare_op::equal, cellar::comparator::binary("x")}});
//   table.scan(cellar::scan().filter(f));
//
// or the same in HBase's filter language (ParseFilter, docs/semantics.md R44-R47):
//
//   auto f = cellar::parse_filter("PrefixFilter('row') AND ValueFilter(=, 'binary:x')");
//
// Filters run inside the partitions with HBase 2.x semantics (filterRowKey, filterCell and
// its return codes, transformCell, filterRowCells, filterRow, filterAllRemaining, seek
// hints); docs/semantics.md §5 lists where cellar chose between HBase and OBKV. A filter
// never changes data. Building a filter never fails: `filter::check()` (which every
// operation runs first) reports what is wrong with it as INVALID_ARGUMENT.
//
// Regular expressions (`comparator::regex`, `regexstring:`) run on RE2, in linear time.
// Patterns RE2 cannot run (backreferences, lookahead and lookbehind, possessive
// quantifiers, atomic groups, \Z and other Java-only syntax) are refused with
// INVALID_ARGUMENT, as are patterns whose compiled program exceeds 1 MiB. As in HBase's
// RegexStringComparator, the pattern is UTF-8 text matched anywhere in the value (find,
// not a full match) with `.` matching newlines (DOTALL), and the value is read as ISO-8859-1
// (one character per byte); a pattern character above U+00FF can never match and is refused.
//
// Thread safety: filters and comparators are immutable values; copies share their state
// and may be used from any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cellar/status.h"

namespace cellar {

// HBase's CompareOperator. A filter keeps a cell when `cell OP comparator-value` holds
// (e.g. ValueFilter(<, binary:m) keeps values below "m"); NO_OP keeps nothing.
// checkAndMutate reads it the other way round (R22) and refuses NO_OP.
enum class compare_op : std::uint8_t { less, less_or_equal, equal, not_equal, greater_or_equal, greater, no_op };

// HBase's ByteArrayComparable: what a compare filter compares a row, family, qualifier or
// value with.
class comparator {
 public:
  enum class kind : std::uint8_t {
    binary,         // BinaryComparator: unsigned bytewise order
    binary_prefix,  // BinaryPrefixComparator: the value's first bytes against the prefix
    substring,      // SubstringComparator: contains the text, ignoring case (=, != only)
    regex,          // RegexStringComparator: the pattern is found in the value (=, != only)
    null,           // NullComparator: "equal" only to a missing value, so != keeps every cell
    bit_and,        // BitComparator AND: equal when value & mask has a bit set (same length)
    bit_or,         // BitComparator OR
    bit_xor,        // BitComparator XOR
    long_value,     // LongComparator: the value as an 8-byte big-endian signed long
  };

  comparator() = default;  // binary("")
  static comparator binary(std::string value);
  static comparator binary_prefix(std::string prefix);
  static comparator substring(std::string text);
  static comparator regex(std::string pattern);
  static comparator null();
  static comparator bit_and(std::string mask);
  static comparator bit_or(std::string mask);
  static comparator bit_xor(std::string mask);
  static comparator long_value(std::int64_t v);

  kind type() const noexcept { return kind_; }
  // The bytes compared with (the pattern for regex; 8 bytes big-endian for long_value).
  const std::string& value() const noexcept { return value_; }
  // For long_value: the number.
  std::int64_t as_long() const noexcept;
  // OK, or INVALID_ARGUMENT saying why this comparator cannot be used (a regex RE2 cannot run).
  status check() const;
  // regex: whether the pattern is found in `value`; substring: whether `value` contains the
  // text, ignoring case. False for the other kinds and for a comparator check() refuses.
  bool matches(std::string_view value) const;

  friend bool operator==(const comparator& a, const comparator& b) noexcept {
    return a.kind_ == b.kind_ && a.value_ == b.value_;
  }

 private:
  // The compiled regex or substring search, built once and shared by copies.
  struct pattern;
  comparator(kind k, std::string v);
  kind kind_ = kind::binary;
  std::string value_;
  std::shared_ptr<const pattern> pattern_;
};

class filter;

// ---- the filter kinds (HBase class names in the comments) -------------------------------

// RowFilter: keeps rows whose key compares true.
struct row_filter {
  compare_op op = compare_op::equal;
  comparator cmp;
  friend bool operator==(const row_filter&, const row_filter&) = default;
};
// FamilyFilter: keeps cells whose family compares true.
struct family_filter {
  compare_op op = compare_op::equal;
  comparator cmp;
  friend bool operator==(const family_filter&, const family_filter&) = default;
};
// QualifierFilter: keeps cells whose qualifier compares true.
struct qualifier_filter {
  compare_op op = compare_op::equal;
  comparator cmp;
  friend bool operator==(const qualifier_filter&, const qualifier_filter&) = default;
};
// ValueFilter: keeps cells whose value compares true.
struct value_filter {
  compare_op op = compare_op::equal;
  comparator cmp;
  friend bool operator==(const value_filter&, const value_filter&) = default;
};
// PrefixFilter: keeps rows whose key starts with `prefix`.
struct prefix_filter {
  std::string prefix;
  friend bool operator==(const prefix_filter&, const prefix_filter&) = default;
};
// ColumnPrefixFilter: keeps cells whose qualifier starts with `prefix`.
struct column_prefix_filter {
  std::string prefix;
  friend bool operator==(const column_prefix_filter&, const column_prefix_filter&) = default;
};
// MultipleColumnPrefixFilter: qualifier starts with any of `prefixes` (distinct; none: all).
struct multiple_column_prefix_filter {
  std::vector<std::string> prefixes;
  friend bool operator==(const multiple_column_prefix_filter&, const multiple_column_prefix_filter&) = default;
};
// ColumnRangeFilter: qualifiers between min and max; an empty bound is unbounded.
struct column_range_filter {
  std::string min;
  bool min_inclusive = true;
  std::string max;
  bool max_inclusive = false;
  friend bool operator==(const column_range_filter&, const column_range_filter&) = default;
};
// ColumnCountGetFilter: the first `limit` columns of the row (then ends the scan, as in HBase).
struct column_count_get_filter {
  std::int32_t limit = 0;
  friend bool operator==(const column_count_get_filter&, const column_count_get_filter&) = default;
};
// ColumnPaginationFilter: `limit` columns per row (newest version each), from the
// `offset`-th column, or from the first qualifier >= `column_offset` when that is set.
struct column_pagination_filter {
  std::int32_t limit = 0;
  std::int32_t offset = 0;
  std::optional<std::string> column_offset;
  friend bool operator==(const column_pagination_filter&, const column_pagination_filter&) = default;
};
// PageFilter: at most `page_size` rows; in cellar the limit holds for the whole scan.
struct page_filter {
  std::int64_t page_size = 0;
  friend bool operator==(const page_filter&, const page_filter&) = default;
};
// SingleColumnValueFilter: keeps whole rows whose family:qualifier value compares true.
struct single_column_value_filter {
  std::string family;
  std::string qualifier;
  compare_op op = compare_op::equal;
  comparator cmp;
  bool filter_if_missing = false;   // drop rows without the column
  bool latest_version_only = true;  // test only the newest version
  friend bool operator==(const single_column_value_filter&, const single_column_value_filter&) = default;
};
// SingleColumnValueExcludeFilter: as above, without the tested column in the result.
struct single_column_value_exclude_filter {
  std::string family;
  std::string qualifier;
  compare_op op = compare_op::equal;
  comparator cmp;
  bool filter_if_missing = false;
  bool latest_version_only = true;
  friend bool operator==(const single_column_value_exclude_filter&,
                         const single_column_value_exclude_filter&) = default;
};
// ColumnValueFilter (HBase 2.x): only the cells of family:qualifier whose value compares true.
struct column_value_filter {
  std::string family;
  std::string qualifier;
  compare_op op = compare_op::equal;
  comparator cmp;
  friend bool operator==(const column_value_filter&, const column_value_filter&) = default;
};
// DependentColumnFilter: cells whose timestamp is that of some cell of family:qualifier
// (which passes `op`/`cmp` when a comparator is given); the column itself is dropped when
// `drop_dependent_column`.
struct dependent_column_filter {
  std::string family;
  std::string qualifier;
  bool drop_dependent_column = false;
  compare_op op = compare_op::no_op;
  std::optional<comparator> cmp;
  friend bool operator==(const dependent_column_filter&, const dependent_column_filter&) = default;
};
// FirstKeyOnlyFilter: the first cell of each row.
struct first_key_only_filter {
  friend bool operator==(const first_key_only_filter&, const first_key_only_filter&) = default;
};
// KeyOnlyFilter: values replaced by nothing, or by their length (4 bytes big-endian).
struct key_only_filter {
  bool len_as_val = false;
  friend bool operator==(const key_only_filter&, const key_only_filter&) = default;
};
// InclusiveStopFilter: stops the scan after `stop_row` (inclusive).
struct inclusive_stop_filter {
  std::string stop_row;
  friend bool operator==(const inclusive_stop_filter&, const inclusive_stop_filter&) = default;
};
// TimestampsFilter: only these timestamps (>= 0).
struct timestamps_filter {
  std::vector<std::int64_t> timestamps;
  bool can_hint = false;
  friend bool operator==(const timestamps_filter&, const timestamps_filter&) = default;
};
// RandomRowFilter: each row with probability `chance` (< 0: none, > 1: all).
struct random_row_filter {
  float chance = 0;
  friend bool operator==(const random_row_filter&, const random_row_filter&) = default;
};
// MultiRowRangeFilter: rows in any of the ranges (merged where they overlap).
struct row_range {
  std::string start;  // empty: from the first row
  bool start_inclusive = true;
  std::string stop;  // empty: to the last row
  bool stop_inclusive = false;
  friend bool operator==(const row_range&, const row_range&) = default;
};
struct multi_row_range_filter {
  std::vector<row_range> ranges;
  friend bool operator==(const multi_row_range_filter&, const multi_row_range_filter&) = default;
};
// FuzzyRowFilter: rows matching any key, where mask byte 0 means "this byte must equal the
// key's" and 1 means "any byte" (key and mask of equal length).
struct fuzzy_key {
  std::string key;
  std::string mask;
  friend bool operator==(const fuzzy_key&, const fuzzy_key&) = default;
};
struct fuzzy_row_filter {
  std::vector<fuzzy_key> keys;
  friend bool operator==(const fuzzy_row_filter&, const fuzzy_row_filter&) = default;
};

struct skip_filter;
struct while_match_filter;
struct filter_list;

using filter_body =
    std::variant<row_filter, family_filter, qualifier_filter, value_filter, prefix_filter, column_prefix_filter,
                 multiple_column_prefix_filter, column_range_filter, column_count_get_filter, column_pagination_filter,
                 page_filter, single_column_value_filter, single_column_value_exclude_filter, column_value_filter,
                 dependent_column_filter, first_key_only_filter, key_only_filter, inclusive_stop_filter,
                 timestamps_filter, random_row_filter, skip_filter, while_match_filter, filter_list,
                 multi_row_range_filter, fuzzy_row_filter>;

// Filters nest at most this deep (lists, SKIP and WHILE each add a level).
inline constexpr int max_filter_depth = 100;

// One filter: any of the kinds above (converts implicitly from each of them).
class filter {
  // Whether `Spec` is one of the kinds in filter_body.
  template <class Spec, class... Kinds>
  static constexpr bool is_kind(const std::variant<Kinds...>*) {
    return (std::is_same_v<Spec, Kinds> || ...);
  }

 public:
  template <class Spec, class = std::enable_if_t<is_kind<std::decay_t<Spec>>(static_cast<const filter_body*>(nullptr))>>
  filter(Spec&& s);  // NOLINT: implicit by design

  // A filter that every operation refuses with `why` (a converter uses it to hand a parse
  // error of a request to the store's validation).
  static filter invalid(status why);
  // For a filter made by invalid(): its error; OK for every other filter.
  const status& invalid_reason() const noexcept;

  const filter_body& body() const noexcept;
  // The top node as `Spec`, or null when it is another kind.
  template <class Spec>
  const Spec* get_if() const noexcept;
  // HBase's class name of the top node, e.g. "PrefixFilter".
  std::string_view name() const noexcept;
  // OK, or INVALID_ARGUMENT naming what is wrong (bad arguments, a regex RE2 cannot run,
  // nesting deeper than max_filter_depth, ...).
  status check() const;

  friend bool operator==(const filter& a, const filter& b);

 private:
  struct node;
  explicit filter(std::shared_ptr<const node> n) : node_(std::move(n)) {}
  std::shared_ptr<const node> node_;
};

// SkipFilter: drops a whole row when `inner` drops any of its cells.
struct skip_filter {
  filter inner;
  friend bool operator==(const skip_filter&, const skip_filter&) = default;
};
// WhileMatchFilter: ends the scan at the first row or cell `inner` drops.
struct while_match_filter {
  filter inner;
  friend bool operator==(const while_match_filter&, const while_match_filter&) = default;
};
// FilterList: MUST_PASS_ALL (AND) or MUST_PASS_ONE (OR) of one or more filters.
struct filter_list {
  enum class op : std::uint8_t { must_pass_all, must_pass_one };
  op operation = op::must_pass_all;
  std::vector<filter> filters;

  static filter_list all(std::vector<filter> fs) { return {op::must_pass_all, std::move(fs)}; }
  static filter_list one(std::vector<filter> fs) { return {op::must_pass_one, std::move(fs)}; }
  friend bool operator==(const filter_list&, const filter_list&) = default;
};

struct filter::node {
  filter_body body;
  status error;
};

template <class Spec, class>
filter::filter(Spec&& s)
    : node_(std::make_shared<const node>(
          node{filter_body(std::in_place_type<std::decay_t<Spec>>, std::forward<Spec>(s)), status::ok()})) {}

template <class Spec>
const Spec* filter::get_if() const noexcept {
  return std::get_if<Spec>(&node_->body);
}

inline const status& filter::invalid_reason() const noexcept { return node_->error; }
inline const filter_body& filter::body() const noexcept { return node_->body; }

inline bool operator==(const filter& a, const filter& b) {
  return a.node_ == b.node_ || (a.node_->body == b.node_->body && a.node_->error == b.node_->error);
}

// ---- the filter language --------------------------------------------------------------

// Parses HBase's filter language (ParseFilter), e.g.
//   "(RowFilter(=, 'binary:Row 1') AND TimestampsFilter(74689, 89734)) OR
//    ColumnRangeFilter('abc', true, 'xyz', false)"
// Filters are Name(arg, ...); strings are in single quotes ('' is a quote); integers
// (range-checked), true/false (any case) and compare ops (< <= = != >= >) are bare;
// comparators are 'type:value' with type binary, binaryprefix, regexstring or substring
// (regexstring and substring only with = and !=). AND, OR, SKIP and WHILE combine them:
// parentheses bind tightest, then SKIP and WHILE, then AND, then OR.
// Beyond HBase, as OBKV: names and keywords in any case, && and ||, NO_OP,
// TimestampsFilter(ts, ..., canHint), FuzzyRowFilter('key', 'mask', ...),
// MultiRowRangeFilter('start', incl, 'stop', incl, ...), RandomRowFilter(bits) (the int
// holds the float's IEEE bits), ColumnPaginationFilter(limit, 'columnOffset'); and cellar's
// comparators null:, long:<decimal>, bitand:, bitor:, bitxor:<bytes>.
// Errors: INVALID_ARGUMENT "filter string at position N: ..." (N counts bytes from 1) for
// an unknown filter, a wrong number or type of arguments, an out-of-range number,
// unbalanced parentheses, an unquoted string, nesting deeper than max_filter_depth, or a
// regex RE2 cannot run.
result<filter> parse_filter(std::string_view text);

// The filter in the language above, its canonical text: parse_filter gives back an equal
// filter for every filter it built. A filter built in code comes back the same except that
// a list of one filter comes back as that filter, and fields the filter ignores (the offset
// of a ColumnPaginationFilter with a column offset, the operator of a DependentColumnFilter
// without a comparator) come back at their defaults; each behaves the same. A regexstring or
// substring comparator with an operator other than = or != prints as text that parse_filter
// refuses, as HBase's ParseFilter does.
std::string to_string(const filter& f);

}  // namespace cellar
