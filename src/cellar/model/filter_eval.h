// model/filter_eval.h: evaluating a filter (cellar/filter.h) over the cells of a partition.
//
// `compile_filter` turns a filter into a tree of `filter_node`s holding the filter's state
// for one request (a get, or one page of a scan). The reader (partition/memtable_filter.cc)
// drives it the way HBase 2.x's RegionScanner and UserScanQueryMatcher drive a Filter:
//
//   per row:   filter_all_remaining()  -> the scan is over
//              filter_row_key(row)     -> true: skip the row
//              per visible cell, in R1 order (versions and the time range applied first, R8):
//                filter_all_remaining() -> true: this family is done for the rest of the scan
//                filter_cell(cell)      -> a return code (include, skip, next column, next
//                                          row of this family, seek to next_cell_hint())
//                transform_cell(cell)   on each included cell
//              filter_row_cells(cells), filter_row() -> drop the row
//              reset()
//
// Beyond HBase, `seek(row)` lets the reader jump over rows the filter cannot match
// (PrefixFilter, RowFilter with a binary comparator, InclusiveStopFilter,
// MultiRowRangeFilter, FuzzyRowFilter, and lists of them) instead of visiting each: it is
// used only when visiting the skipped rows could not change the outcome (no
// WhileMatchFilter in the tree, whose end depends on every row it sees).
//
// Thread safety: a filter_node tree belongs to the one request evaluating it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/filter.h"
#include "cellar/ops.h"

namespace cellar::detail {

// HBase's Filter.ReturnCode.
enum class filter_rc : std::uint8_t {
  include,
  include_and_next_col,
  include_and_seek_next_row,
  skip,
  next_col,
  next_row,  // the rest of this row in this family
  seek_next_using_hint,
};

struct cell_view {
  std::string_view row;
  std::string_view family;
  std::string_view qualifier;
  std::int64_t ts;
  std::string_view value;
};

// Where a SEEK_NEXT_USING_HINT sends the reader (HBase's createFirstOnRow,
// createFirstOnRowCol, createFirstOnRowColTS, createLastOnRowCol).
struct cell_hint {
  enum class at : std::uint8_t { first_on_row, first_on_column, column_version, last_on_column };
  at where = at::first_on_row;
  std::string row;
  std::string family;
  std::string qualifier;
  std::int64_t ts = 0;
};

// Orders a cell position against a hint, in scan order (rows reversed for a reversed scan).
int compare_to_hint(const cell_view& c, const cell_hint& h, bool reversed);
int compare_hints(const cell_hint& a, const cell_hint& b, bool reversed);

// What a filter knows about a row before reading it.
struct row_seek {
  enum class what : std::uint8_t {
    here,     // the row may match: read it
    skip_to,  // no row before `row` (inclusive or not) in scan direction can match
    end,      // no row from here on can match
  };
  what w = what::here;
  std::string row;
  bool inclusive = true;
};

class filter_node {
 public:
  virtual ~filter_node() = default;
  virtual void reset() {}
  virtual bool filter_all_remaining() { return false; }
  virtual bool filter_row_key(std::string_view /*row*/) { return false; }
  virtual filter_rc filter_cell(const cell_view& c) = 0;
  virtual void transform_cell(cell& /*c*/) {}
  virtual void filter_row_cells(std::vector<cell>& /*cells*/) {}
  virtual bool has_filter_row() const { return false; }
  virtual bool filter_row() { return false; }
  virtual std::optional<cell_hint> next_cell_hint(const cell_view& /*c*/) { return std::nullopt; }
  // See above; `here` unless the filter can tell.
  virtual row_seek seek(std::string_view /*row*/) const { return {}; }
  // State that outlives a row (PageFilter's count, WhileMatchFilter's end, ...), carried
  // from one page of a scan to the next.
  virtual void save(std::string& /*out*/) const {}
  virtual bool load(std::string_view& /*in*/) { return true; }
};

// A compiled filter for one request. `seeks`: seek() may say more than `here` and may be
// used (see above).
struct compiled_filter {
  std::unique_ptr<filter_node> root;
  bool seeks = false;
};

// Precondition: f.check() is OK.
compiled_filter compile_filter(const filter& f, bool reversed);

// HBase's CompareFilter.compare: whether a cell is filtered out, given `op` and the
// comparator's compareTo result (nullopt: the value cannot be compared).
bool filtered_out(compare_op op, std::optional<int> compare_result);
// HBase's ByteArrayComparable.compareTo(value): < 0, 0 or > 0; nullopt for a long
// comparator on a value that is not 8 bytes (cellar: such a value never matches).
std::optional<int> compare_with(const comparator& c, std::string_view value);

// MultiRowRangeFilter's ranges sorted by start and merged where they overlap or touch
// (HBase's sortAndMerge). Precondition: each range is valid.
std::vector<row_range> merge_row_ranges(std::vector<row_range> ranges);

// FuzzyRowFilter's next candidate row after `row` for one key (mask byte 0: fixed), as
// HBase's getNextForFuzzyRule computes it for a forward scan; nullopt when no row after
// `row` can match the key.
std::optional<std::string> fuzzy_next_row(std::string_view row, const fuzzy_key& k);

// The number of rows a filter lets through the whole scan: the smallest PageFilter at the
// top of the filter or directly inside a top-level MUST_PASS_ALL list; nullopt when none.
// The scanner enforces it across partitions as it enforces scan::limit.
std::optional<std::int64_t> filter_row_limit(const filter& f);

}  // namespace cellar::detail
