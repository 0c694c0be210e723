// model/filter_compare.cc: the pieces of filter evaluation that are plain functions
// (model/filter_eval.h): comparators, compare operators, seek-hint order, MultiRowRange
// merging, FuzzyRowFilter's next row, the row limit a filter implies.
#include <algorithm>

#include "model/filter_eval.h"
#include "util/coding.h"

namespace cellar::detail {

namespace {

struct position {
  std::string_view row;
  bool row_start = false;  // before every cell of the row
  std::string_view family;
  std::string_view qualifier;
  int version_kind = 1;  // 0: before every version, 1: at ts, 2: after every version
  std::int64_t ts = 0;
};

position of(const cell_hint& h) {
  position p{h.row, h.where == cell_hint::at::first_on_row, h.family, h.qualifier, 1, h.ts};
  if (h.where == cell_hint::at::first_on_column) p.version_kind = 0;
  if (h.where == cell_hint::at::last_on_column) p.version_kind = 2;
  return p;
}

int compare_positions(const position& a, const position& b, bool reversed) {
  if (int c = a.row.compare(b.row); c != 0) return reversed ? (c < 0 ? 1 : -1) : (c < 0 ? -1 : 1);
  if (a.row_start || b.row_start) return a.row_start == b.row_start ? 0 : (a.row_start ? -1 : 1);
  if (int c = a.family.compare(b.family); c != 0) return c < 0 ? -1 : 1;
  if (int c = a.qualifier.compare(b.qualifier); c != 0) return c < 0 ? -1 : 1;
  if (a.version_kind != b.version_kind) return a.version_kind < b.version_kind ? -1 : 1;
  if (a.version_kind != 1 || a.ts == b.ts) return 0;
  return a.ts > b.ts ? -1 : 1;  // newer first
}

}  // namespace

std::vector<row_range> merge_row_ranges(std::vector<row_range> in) {
  // Starts ascending (an empty start first, an inclusive start before an exclusive one).
  std::sort(in.begin(), in.end(), [](const row_range& a, const row_range& b) {
    if (a.start != b.start) return a.start < b.start;
    return a.start_inclusive && !b.start_inclusive;
  });
  std::vector<row_range> out;
  for (auto& r : in) {
    if (!out.empty()) {
      row_range& last = out.back();
      const bool joins = last.stop.empty() || r.start < last.stop ||
                         (r.start == last.stop && (last.stop_inclusive || r.start_inclusive));
      if (joins) {
        if (last.stop.empty()) continue;
        if (r.stop.empty() || r.stop > last.stop) {
          last.stop = r.stop;
          last.stop_inclusive = r.stop_inclusive;
        } else if (r.stop == last.stop) {
          last.stop_inclusive = last.stop_inclusive || r.stop_inclusive;
        }
        continue;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<std::string> fuzzy_next_row(std::string_view row, const fuzzy_key& k) {
  // HBase's getNextForFuzzyRule (forward): set the fixed bytes; if that did not make the
  // key larger than the row, raise the last free byte that can be raised and clear the
  // free bytes after it; drop trailing free bytes. A row shorter than the result counts
  // as smaller from where it ends.
  const std::size_t len = std::max(row.size(), k.key.size());
  auto fixed = [&](std::size_t i) { return i < k.mask.size() && k.mask[i] == 0; };
  std::string result(len, '\0');
  for (std::size_t i = 0; i < k.key.size(); ++i)
    if (fixed(i)) result[i] = k.key[i];
  std::ptrdiff_t to_inc = -1;
  bool increased = false;
  for (std::size_t i = 0; i < len; ++i) {
    if (i >= row.size()) {
      increased = true;
      break;
    }
    const auto r = static_cast<unsigned char>(row[i]);
    if (!fixed(i)) {
      result[i] = row[i];
      if (r != 0xFF) to_inc = static_cast<std::ptrdiff_t>(i);
      continue;
    }
    const auto want = static_cast<unsigned char>(k.key[i]);
    if (r < want) {
      increased = true;
      break;
    }
    if (r > want) break;
  }
  if (!increased) {
    if (to_inc < 0) return std::nullopt;
    result[to_inc] = static_cast<char>(static_cast<unsigned char>(result[to_inc]) + 1);
    for (std::size_t i = to_inc + 1; i < len; ++i)
      if (!fixed(i)) result[i] = '\0';
  }
  // Keep through the last fixed byte (within the mask) and the raised one.
  std::ptrdiff_t off = static_cast<std::ptrdiff_t>(std::min(k.mask.size(), result.size())) - 1;
  while (off >= 0 && !fixed(static_cast<std::size_t>(off))) --off;
  off = std::max(off, to_inc);
  result.resize(static_cast<std::size_t>(off + 1));
  return result;
}

int compare_to_hint(const cell_view& c, const cell_hint& h, bool reversed) {
  return compare_positions(position{c.row, false, c.family, c.qualifier, 1, c.ts}, of(h), reversed);
}

int compare_hints(const cell_hint& a, const cell_hint& b, bool reversed) {
  return compare_positions(of(a), of(b), reversed);
}

bool filtered_out(compare_op op, std::optional<int> r) {
  if (op == compare_op::no_op || !r) return true;
  switch (op) {
    case compare_op::less: return *r <= 0;
    case compare_op::less_or_equal: return *r < 0;
    case compare_op::equal: return *r != 0;
    case compare_op::not_equal: return *r == 0;
    case compare_op::greater_or_equal: return *r > 0;
    case compare_op::greater: return *r >= 0;
    case compare_op::no_op: return true;
  }
  return true;
}

std::optional<int> compare_with(const comparator& c, std::string_view v) {
  using k = comparator::kind;
  const std::string& mine = c.value();
  switch (c.type()) {
    case k::binary: return std::string_view(mine).compare(v);
    case k::binary_prefix: return std::string_view(mine).compare(v.substr(0, std::min(mine.size(), v.size())));
    case k::substring:
    case k::regex: return c.matches(v) ? 0 : 1;
    case k::null: return 1;
    case k::bit_and:
    case k::bit_or:
    case k::bit_xor: {
      if (v.size() != mine.size()) return 1;
      for (std::size_t i = v.size(); i-- > 0;) {
        const auto a = static_cast<unsigned char>(mine[i]), b = static_cast<unsigned char>(v[i]);
        const unsigned x = c.type() == k::bit_and ? (a & b) : c.type() == k::bit_or ? (a | b) : (a ^ b);
        if (x != 0) return 0;
      }
      return 1;
    }
    case k::long_value: {
      if (v.size() != 8) return std::nullopt;
      const auto that = static_cast<std::int64_t>(load_u64(v.data())), me = c.as_long();
      return me < that ? -1 : me > that ? 1 : 0;
    }
  }
  return 1;
}

std::optional<std::int64_t> filter_row_limit(const filter& f) {
  if (const auto* p = f.get_if<page_filter>()) return p->page_size;
  if (const auto* l = f.get_if<filter_list>(); l && l->operation == filter_list::op::must_pass_all) {
    std::optional<std::int64_t> best;
    for (const auto& c : l->filters)
      if (const auto* p = c.get_if<page_filter>(); p && (!best || p->page_size < *best)) best = p->page_size;
    return best;
  }
  return std::nullopt;
}

}  // namespace cellar::detail
