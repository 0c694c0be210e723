// model/filter.cc: comparators, filter validation and the canonical text of a filter
// (cellar/filter.h).
#include "cellar/filter.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "util/coding.h"

namespace cellar {

// A regex comparator holds its RE2 program (ISO-8859-1 mode: one character per byte of the
// value, as HBase's RegexStringComparator reads values); a substring comparator holds its
// text folded to lower case and, when the text is not ASCII, an RE2 program that finds it
// ignoring case. Immutable once built; RE2 matching is thread-safe.
struct comparator::pattern {
  std::unique_ptr<RE2> re;  // null for an ASCII substring, or when `error` is set
  std::string folded;       // substring: the text in ASCII lower case
  status error;
};

namespace {

// The largest compiled program a pattern may have (RE2's max_mem).
constexpr std::int64_t max_pattern_program_bytes = 1 << 20;

// UTF-8 to ISO-8859-1; false when the text is not UTF-8 or holds a character above U+00FF.
bool utf8_to_latin1(std::string_view in, std::string& out, std::string& why) {
  out.clear();
  for (std::size_t i = 0; i < in.size();) {
    const auto b = static_cast<unsigned char>(in[i]);
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    std::size_t len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0;
    if (len == 0 || i + len > in.size()) {
      why = "the pattern is not UTF-8 text";
      return false;
    }
    std::uint32_t cp = b & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(in[i + k]);
      if ((c & 0xC0) != 0x80) {
        why = "the pattern is not UTF-8 text";
        return false;
      }
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp > 0xFF) {
      why = "the pattern has a character above U+00FF, which can never match a value read one byte per character";
      return false;
    }
    out.push_back(static_cast<char>(cp));
    i += len;
  }
  return true;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Compiles an HBase regexstring pattern (UTF-8 text; see cellar/filter.h) into `out`.
status compile_regex(std::string_view pattern, std::unique_ptr<RE2>& out) {
  std::string latin1, why;
  if (!utf8_to_latin1(pattern, latin1, why)) return {code::invalid_argument, "regexstring: " + why};
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingLatin1);
  o.set_dot_nl(true);  // Java's Pattern.DOTALL, HBase's default flag
  o.set_log_errors(false);
  o.set_max_mem(max_pattern_program_bytes);
  auto re = std::make_unique<RE2>(latin1, o);
  if (!re->ok()) {
    if (re->error_code() == RE2::ErrorPatternTooLarge)
      return {code::invalid_argument, "regexstring: the pattern is too large (its program exceeds " +
                                          std::to_string(max_pattern_program_bytes) + " bytes)"};
    return {code::invalid_argument, "regexstring: RE2 cannot run this pattern (" + re->error() + ")"};
  }
  out = std::move(re);
  return status::ok();
}

// A case-insensitive search for non-ASCII `text` (Unicode simple case folding, UTF-8).
status compile_folded_search(std::string_view text, std::unique_ptr<RE2>& out) {
  RE2::Options o;
  o.set_case_sensitive(false);
  o.set_literal(true);
  o.set_log_errors(false);
  o.set_max_mem(max_pattern_program_bytes);
  auto re = std::make_unique<RE2>(std::string(text), o);
  if (!re->ok()) return {code::invalid_argument, "substring: the text cannot be searched (" + re->error() + ")"};
  out = std::move(re);
  return status::ok();
}

// Whether `value` contains `needle` (already lower case), ignoring ASCII case.
bool contains_folded(std::string_view needle, std::string_view value) {
  if (needle.empty()) return true;
  if (value.size() < needle.size()) return false;
  const char first = needle[0];
  for (std::size_t i = 0; i + needle.size() <= value.size(); ++i) {
    if (ascii_lower(value[i]) != first) continue;
    std::size_t k = 1;
    while (k < needle.size() && ascii_lower(value[i + k]) == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

}  // namespace

// ---- comparator ---------------------------------------------------------------------------

comparator::comparator(kind k, std::string v) : kind_(k), value_(std::move(v)) {}

comparator comparator::binary(std::string value) { return {kind::binary, std::move(value)}; }
comparator comparator::binary_prefix(std::string prefix) { return {kind::binary_prefix, std::move(prefix)}; }
comparator comparator::substring(std::string text) {
  comparator c(kind::substring, std::move(text));
  auto p = std::make_shared<pattern>();
  p->folded.reserve(c.value_.size());
  for (char ch : c.value_) p->folded.push_back(ascii_lower(ch));
  if (!is_ascii(c.value_)) p->error = compile_folded_search(c.value_, p->re);
  c.pattern_ = std::move(p);
  return c;
}
comparator comparator::regex(std::string pattern_text) {
  comparator c(kind::regex, std::move(pattern_text));
  auto p = std::make_shared<pattern>();
  p->error = compile_regex(c.value_, p->re);
  c.pattern_ = std::move(p);
  return c;
}
comparator comparator::null() { return {kind::null, {}}; }
comparator comparator::bit_and(std::string mask) { return {kind::bit_and, std::move(mask)}; }
comparator comparator::bit_or(std::string mask) { return {kind::bit_or, std::move(mask)}; }
comparator comparator::bit_xor(std::string mask) { return {kind::bit_xor, std::move(mask)}; }
comparator comparator::long_value(std::int64_t v) {
  std::string b;
  detail::put_u64(b, static_cast<std::uint64_t>(v));
  return {kind::long_value, std::move(b)};
}

std::int64_t comparator::as_long() const noexcept {
  if (value_.size() != 8) return 0;
  return static_cast<std::int64_t>(detail::load_u64(value_.data()));
}

status comparator::check() const {
  if ((kind_ == kind::regex || kind_ == kind::substring) && pattern_ && !pattern_->error) return pattern_->error;
  if ((kind_ == kind::regex || kind_ == kind::substring) && !pattern_)
    return {code::invalid_argument, "comparator has no compiled pattern"};
  if (kind_ == kind::long_value && value_.size() != 8)
    return {code::invalid_argument, "a long comparator holds 8 bytes"};
  return status::ok();
}

bool comparator::matches(std::string_view value) const {
  if (!pattern_ || !pattern_->error) return false;
  if (kind_ == kind::regex) return pattern_->re && RE2::PartialMatch(value, *pattern_->re);
  if (kind_ == kind::substring)
    return pattern_->re ? RE2::PartialMatch(value, *pattern_->re) : contains_folded(pattern_->folded, value);
  return false;
}

// ---- filter -------------------------------------------------------------------------------

filter filter::invalid(status why) {
  if (why.is_ok()) why = {code::invalid_argument, "invalid filter"};
  return filter(std::make_shared<const node>(node{first_key_only_filter{}, std::move(why)}));
}

namespace {

constexpr std::string_view filter_names[] = {
    "RowFilter",
    "FamilyFilter",
    "QualifierFilter",
    "ValueFilter",
    "PrefixFilter",
    "ColumnPrefixFilter",
    "MultipleColumnPrefixFilter",
    "ColumnRangeFilter",
    "ColumnCountGetFilter",
    "ColumnPaginationFilter",
    "PageFilter",
    "SingleColumnValueFilter",
    "SingleColumnValueExcludeFilter",
    "ColumnValueFilter",
    "DependentColumnFilter",
    "FirstKeyOnlyFilter",
    "KeyOnlyFilter",
    "InclusiveStopFilter",
    "TimestampsFilter",
    "RandomRowFilter",
    "SkipFilter",
    "WhileMatchFilter",
    "FilterList",
    "MultiRowRangeFilter",
    "FuzzyRowFilter",
};
static_assert(std::size(filter_names) == std::variant_size_v<filter_body>);

status bad(std::string_view name, const std::string& why) {
  return {code::invalid_argument, std::string(name) + ": " + why};
}

bool range_valid(const row_range& r) {
  return r.start.empty() || r.stop.empty() || r.start < r.stop || (r.start == r.stop && r.stop_inclusive);
}

status check_node(const filter& f, int depth) {
  if (!f.invalid_reason()) return f.invalid_reason();
  if (depth > max_filter_depth)
    return {code::invalid_argument, "filter nests deeper than " + std::to_string(max_filter_depth) + " levels"};
  const std::string_view name = f.name();
  return std::visit(
      [&](const auto& x) -> status {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, row_filter> || std::is_same_v<T, family_filter> ||
                      std::is_same_v<T, qualifier_filter> || std::is_same_v<T, value_filter> ||
                      std::is_same_v<T, single_column_value_filter> ||
                      std::is_same_v<T, single_column_value_exclude_filter> || std::is_same_v<T, column_value_filter>) {
          if (auto s = x.cmp.check(); !s) return bad(name, s.message());
          return status::ok();
        } else if constexpr (std::is_same_v<T, multiple_column_prefix_filter>) {
          std::set<std::string_view> seen;
          for (const auto& p : x.prefixes)
            if (!seen.insert(p).second) return bad(name, "prefixes must be distinct");
          return status::ok();
        } else if constexpr (std::is_same_v<T, column_count_get_filter>) {
          if (x.limit < 0) return bad(name, "limit must be >= 0");
          return status::ok();
        } else if constexpr (std::is_same_v<T, column_pagination_filter>) {
          if (x.limit < 0) return bad(name, "limit must be >= 0");
          if (!x.column_offset && x.offset < 0) return bad(name, "offset must be >= 0");
          return status::ok();
        } else if constexpr (std::is_same_v<T, page_filter>) {
          if (x.page_size < 0) return bad(name, "page size must be >= 0");
          return status::ok();
        } else if constexpr (std::is_same_v<T, dependent_column_filter>) {
          if (x.cmp)
            if (auto s = x.cmp->check(); !s) return bad(name, s.message());
          return status::ok();
        } else if constexpr (std::is_same_v<T, timestamps_filter>) {
          for (auto ts : x.timestamps)
            if (ts < 0) return bad(name, "timestamps must be >= 0");
          return status::ok();
        } else if constexpr (std::is_same_v<T, skip_filter> || std::is_same_v<T, while_match_filter>) {
          return check_node(x.inner, depth + 1);
        } else if constexpr (std::is_same_v<T, filter_list>) {
          if (x.filters.empty()) return bad(name, "a filter list needs at least one filter");
          for (const auto& c : x.filters)
            if (auto s = check_node(c, depth + 1); !s) return s;
          return status::ok();
        } else if constexpr (std::is_same_v<T, multi_row_range_filter>) {
          if (x.ranges.empty()) return bad(name, "no ranges given");
          for (const auto& r : x.ranges)
            if (!range_valid(r)) return bad(name, "invalid range: its start is after its stop");
          return status::ok();
        } else if constexpr (std::is_same_v<T, fuzzy_row_filter>) {
          if (x.keys.empty()) return bad(name, "no fuzzy keys given");
          for (const auto& k : x.keys) {
            if (k.key.size() != k.mask.size()) return bad(name, "a fuzzy key and its mask must have the same length");
            for (char m : k.mask)
              if (m != 0 && m != 1) return bad(name, "mask bytes must be 0 (fixed) or 1 (any byte)");
          }
          return status::ok();
        } else {
          return status::ok();
        }
      },
      f.body());
}

}  // namespace

std::string_view filter::name() const noexcept { return filter_names[node_->body.index()]; }

status filter::check() const { return check_node(*this, 1); }

// ---- text -------------------------------------------------------------------------------

namespace {

void quoted(std::string& out, std::string_view s) {
  out.push_back('\'');
  for (char c : s) {
    if (c == '\'') out.push_back('\'');
    out.push_back(c);
  }
  out.push_back('\'');
}

std::string_view op_text(compare_op op) {
  switch (op) {
    case compare_op::less: return "<";
    case compare_op::less_or_equal: return "<=";
    case compare_op::equal: return "=";
    case compare_op::not_equal: return "!=";
    case compare_op::greater_or_equal: return ">=";
    case compare_op::greater: return ">";
    case compare_op::no_op: return "NO_OP";
  }
  return "?";
}

std::string comparator_text(const comparator& c) {
  using k = comparator::kind;
  switch (c.type()) {
    case k::binary: return "binary:" + c.value();
    case k::binary_prefix: return "binaryprefix:" + c.value();
    case k::substring: return "substring:" + c.value();
    case k::regex: return "regexstring:" + c.value();
    case k::null: return "null:";
    case k::bit_and: return "bitand:" + c.value();
    case k::bit_or: return "bitor:" + c.value();
    case k::bit_xor: return "bitxor:" + c.value();
    case k::long_value: return "long:" + std::to_string(c.as_long());
  }
  return {};
}

void op_and_comparator(std::string& out, compare_op op, const comparator& c) {
  out += op_text(op);
  out += ", ";
  quoted(out, comparator_text(c));
}

const char* boolean(bool b) { return b ? "true" : "false"; }

void write_text(std::string& out, const filter& f) {
  const std::string_view name = f.name();
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, skip_filter>) {
          out += "SKIP ";
          write_text(out, x.inner);
          return;
        } else if constexpr (std::is_same_v<T, while_match_filter>) {
          out += "WHILE ";
          write_text(out, x.inner);
          return;
        } else if constexpr (std::is_same_v<T, filter_list>) {
          out.push_back('(');
          for (std::size_t i = 0; i < x.filters.size(); ++i) {
            if (i) out += x.operation == filter_list::op::must_pass_all ? " AND " : " OR ";
            write_text(out, x.filters[i]);
          }
          out.push_back(')');
          return;
        } else {
          out += name;
          out.push_back('(');
          if constexpr (std::is_same_v<T, row_filter> || std::is_same_v<T, family_filter> ||
                        std::is_same_v<T, qualifier_filter> || std::is_same_v<T, value_filter>) {
            op_and_comparator(out, x.op, x.cmp);
          } else if constexpr (std::is_same_v<T, prefix_filter> || std::is_same_v<T, column_prefix_filter>) {
            quoted(out, x.prefix);
          } else if constexpr (std::is_same_v<T, multiple_column_prefix_filter>) {
            for (std::size_t i = 0; i < x.prefixes.size(); ++i) {
              if (i) out += ", ";
              quoted(out, x.prefixes[i]);
            }
          } else if constexpr (std::is_same_v<T, column_range_filter>) {
            quoted(out, x.min);
            out += std::string(", ") + boolean(x.min_inclusive) + ", ";
            quoted(out, x.max);
            out += std::string(", ") + boolean(x.max_inclusive);
          } else if constexpr (std::is_same_v<T, column_count_get_filter>) {
            out += std::to_string(x.limit);
          } else if constexpr (std::is_same_v<T, column_pagination_filter>) {
            out += std::to_string(x.limit) + ", ";
            if (x.column_offset)
              quoted(out, *x.column_offset);
            else
              out += std::to_string(x.offset);
          } else if constexpr (std::is_same_v<T, page_filter>) {
            out += std::to_string(x.page_size);
          } else if constexpr (std::is_same_v<T, single_column_value_filter> ||
                               std::is_same_v<T, single_column_value_exclude_filter>) {
            quoted(out, x.family);
            out += ", ";
            quoted(out, x.qualifier);
            out += ", ";
            op_and_comparator(out, x.op, x.cmp);
            if (x.filter_if_missing || !x.latest_version_only)
              out += std::string(", ") + boolean(x.filter_if_missing) + ", " + boolean(x.latest_version_only);
          } else if constexpr (std::is_same_v<T, column_value_filter>) {
            quoted(out, x.family);
            out += ", ";
            quoted(out, x.qualifier);
            out += ", ";
            op_and_comparator(out, x.op, x.cmp);
          } else if constexpr (std::is_same_v<T, dependent_column_filter>) {
            quoted(out, x.family);
            out += ", ";
            quoted(out, x.qualifier);
            if (x.cmp) {
              out += std::string(", ") + boolean(x.drop_dependent_column) + ", ";
              op_and_comparator(out, x.op, *x.cmp);
            } else if (x.drop_dependent_column) {
              out += ", true";
            }
          } else if constexpr (std::is_same_v<T, key_only_filter>) {
            if (x.len_as_val) out += "true";
          } else if constexpr (std::is_same_v<T, inclusive_stop_filter>) {
            quoted(out, x.stop_row);
          } else if constexpr (std::is_same_v<T, timestamps_filter>) {
            for (std::size_t i = 0; i < x.timestamps.size(); ++i) {
              if (i) out += ", ";
              out += std::to_string(x.timestamps[i]);
            }
            if (x.can_hint) out += x.timestamps.empty() ? "true" : ", true";
          } else if constexpr (std::is_same_v<T, random_row_filter>) {
            std::int32_t bits;
            std::memcpy(&bits, &x.chance, sizeof bits);
            out += std::to_string(bits);
          } else if constexpr (std::is_same_v<T, multi_row_range_filter>) {
            for (std::size_t i = 0; i < x.ranges.size(); ++i) {
              if (i) out += ", ";
              quoted(out, x.ranges[i].start);
              out += std::string(", ") + boolean(x.ranges[i].start_inclusive) + ", ";
              quoted(out, x.ranges[i].stop);
              out += std::string(", ") + boolean(x.ranges[i].stop_inclusive);
            }
          } else if constexpr (std::is_same_v<T, fuzzy_row_filter>) {
            for (std::size_t i = 0; i < x.keys.size(); ++i) {
              if (i) out += ", ";
              quoted(out, x.keys[i].key);
              out += ", ";
              quoted(out, x.keys[i].mask);
            }
          }
          out.push_back(')');
        }
      },
      f.body());
}

}  // namespace

std::string to_string(const filter& f) {
  std::string out;
  write_text(out, f);
  return out;
}

}  // namespace cellar
