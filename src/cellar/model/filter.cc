// model/filter.cc: comparators, filter validation, the canonical text of a filter and its
// binary form (cellar/filter.h).
#include "cellar/filter.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "model/regex_program.h"
#include "util/coding.h"

namespace cellar {

namespace detail {

namespace {

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

}  // namespace

std::shared_ptr<const regex_program> compile_regex(std::string_view pattern) {
  auto p = std::make_shared<regex_program>();
  std::string latin1, why;
  if (!utf8_to_latin1(pattern, latin1, why)) {
    p->error = {code::invalid_argument, "regexstring: " + why};
    return p;
  }
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingLatin1);
  o.set_dot_nl(true);  // Java's Pattern.DOTALL, HBase's default flag
  o.set_log_errors(false);
  o.set_max_mem(max_regex_program_bytes);
  auto re = std::make_unique<RE2>(latin1, o);
  if (!re->ok()) {
    if (re->error_code() == RE2::ErrorPatternTooLarge)
      p->error = {code::invalid_argument, "regexstring: the pattern is too large (its program exceeds " +
                                              std::to_string(max_regex_program_bytes) + " bytes)"};
    else
      p->error = {code::invalid_argument, "regexstring: RE2 cannot run this pattern (" + re->error() + ")"};
    return p;
  }
  p->re = std::move(re);
  return p;
}

std::shared_ptr<const regex_program> compile_substring(std::string_view text) {
  auto p = std::make_shared<regex_program>();
  p->folded.reserve(text.size());
  for (char c : text) p->folded.push_back(ascii_lower(c));
  if (!is_ascii(text)) {
    RE2::Options o;
    o.set_case_sensitive(false);
    o.set_literal(true);
    o.set_log_errors(false);
    o.set_max_mem(max_regex_program_bytes);
    auto re = std::make_unique<RE2>(std::string(text), o);
    if (!re->ok()) {
      p->error = {code::invalid_argument, "substring: the text cannot be searched (" + re->error() + ")"};
      return p;
    }
    p->re = std::move(re);
  }
  return p;
}

bool contains_folded(const regex_program& p, std::string_view value) {
  if (p.re) return RE2::PartialMatch(value, *p.re);
  const std::string& needle = p.folded;
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

}  // namespace detail

// ---- comparator ---------------------------------------------------------------------------

comparator::comparator(kind k, std::string v) : kind_(k), value_(std::move(v)) {}

comparator comparator::binary(std::string value) { return {kind::binary, std::move(value)}; }
comparator comparator::binary_prefix(std::string prefix) { return {kind::binary_prefix, std::move(prefix)}; }
comparator comparator::substring(std::string text) {
  comparator c(kind::substring, std::move(text));
  c.program_ = detail::compile_substring(c.value_);
  return c;
}
comparator comparator::regex(std::string pattern) {
  comparator c(kind::regex, std::move(pattern));
  c.program_ = detail::compile_regex(c.value_);
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
  if ((kind_ == kind::regex || kind_ == kind::substring) && program_ && !program_->error) return program_->error;
  if ((kind_ == kind::regex || kind_ == kind::substring) && !program_)
    return {code::invalid_argument, "comparator has no compiled pattern"};
  if (kind_ == kind::long_value && value_.size() != 8)
    return {code::invalid_argument, "a long comparator holds 8 bytes"};
  return status::ok();
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

// ---- binary form ---------------------------------------------------------------------------
//
//   u8 version (1), then the tree in prefix order. A node is u8 tag (the index of its kind in
//   filter_body, or 255 for filter::invalid) and its fields: strings as varint length and
//   bytes, integers as zigzag varints, booleans as one byte (0 or 1), a comparator as u8 kind
//   and string, a float as its 4 IEEE bytes (little endian).

namespace {

constexpr unsigned char format_version = 1;
constexpr unsigned char invalid_tag = 255;

struct writer {
  std::string& out;
  void u8(unsigned v) { out.push_back(static_cast<char>(v)); }
  void varint(std::uint64_t v) { detail::put_varint(out, v); }
  void sint(std::int64_t v) { varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63)); }
  void bytes(std::string_view s) {
    varint(s.size());
    out.append(s);
  }
  void cmp(const comparator& c) {
    u8(static_cast<unsigned>(c.type()));
    bytes(c.value());
  }
};

void write_node(writer& w, const filter& f) {
  if (const status& why = f.invalid_reason(); !why) {  // a placeholder from filter::invalid
    w.u8(invalid_tag);
    w.u8(static_cast<unsigned>(why.code()) & 0xFF);
    w.u8(static_cast<unsigned>(why.code()) >> 8);
    w.bytes(why.message());
    return;
  }
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        w.u8(static_cast<unsigned>(f.body().index()));
        if constexpr (std::is_same_v<T, row_filter> || std::is_same_v<T, family_filter> ||
                      std::is_same_v<T, qualifier_filter> || std::is_same_v<T, value_filter>) {
          w.u8(static_cast<unsigned>(x.op));
          w.cmp(x.cmp);
        } else if constexpr (std::is_same_v<T, prefix_filter> || std::is_same_v<T, column_prefix_filter>) {
          w.bytes(x.prefix);
        } else if constexpr (std::is_same_v<T, multiple_column_prefix_filter>) {
          w.varint(x.prefixes.size());
          for (const auto& p : x.prefixes) w.bytes(p);
        } else if constexpr (std::is_same_v<T, column_range_filter>) {
          w.bytes(x.min);
          w.u8(x.min_inclusive);
          w.bytes(x.max);
          w.u8(x.max_inclusive);
        } else if constexpr (std::is_same_v<T, column_count_get_filter>) {
          w.sint(x.limit);
        } else if constexpr (std::is_same_v<T, column_pagination_filter>) {
          w.sint(x.limit);
          w.sint(x.offset);
          w.u8(x.column_offset.has_value());
          if (x.column_offset) w.bytes(*x.column_offset);
        } else if constexpr (std::is_same_v<T, page_filter>) {
          w.sint(x.page_size);
        } else if constexpr (std::is_same_v<T, single_column_value_filter> ||
                             std::is_same_v<T, single_column_value_exclude_filter>) {
          w.bytes(x.family);
          w.bytes(x.qualifier);
          w.u8(static_cast<unsigned>(x.op));
          w.cmp(x.cmp);
          w.u8(x.filter_if_missing);
          w.u8(x.latest_version_only);
        } else if constexpr (std::is_same_v<T, column_value_filter>) {
          w.bytes(x.family);
          w.bytes(x.qualifier);
          w.u8(static_cast<unsigned>(x.op));
          w.cmp(x.cmp);
        } else if constexpr (std::is_same_v<T, dependent_column_filter>) {
          w.bytes(x.family);
          w.bytes(x.qualifier);
          w.u8(x.drop_dependent_column);
          w.u8(static_cast<unsigned>(x.op));
          w.u8(x.cmp.has_value());
          if (x.cmp) w.cmp(*x.cmp);
        } else if constexpr (std::is_same_v<T, key_only_filter>) {
          w.u8(x.len_as_val);
        } else if constexpr (std::is_same_v<T, inclusive_stop_filter>) {
          w.bytes(x.stop_row);
        } else if constexpr (std::is_same_v<T, timestamps_filter>) {
          w.varint(x.timestamps.size());
          for (auto ts : x.timestamps) w.sint(ts);
          w.u8(x.can_hint);
        } else if constexpr (std::is_same_v<T, random_row_filter>) {
          std::uint32_t bits;
          std::memcpy(&bits, &x.chance, sizeof bits);
          for (int i = 0; i < 4; ++i) w.u8((bits >> (8 * i)) & 0xFF);
        } else if constexpr (std::is_same_v<T, skip_filter> || std::is_same_v<T, while_match_filter>) {
          write_node(w, x.inner);
        } else if constexpr (std::is_same_v<T, filter_list>) {
          w.u8(static_cast<unsigned>(x.operation));
          w.varint(x.filters.size());
          for (const auto& c : x.filters) write_node(w, c);
        } else if constexpr (std::is_same_v<T, multi_row_range_filter>) {
          w.varint(x.ranges.size());
          for (const auto& r : x.ranges) {
            w.bytes(r.start);
            w.u8(r.start_inclusive);
            w.bytes(r.stop);
            w.u8(r.stop_inclusive);
          }
        } else if constexpr (std::is_same_v<T, fuzzy_row_filter>) {
          w.varint(x.keys.size());
          for (const auto& k : x.keys) {
            w.bytes(k.key);
            w.bytes(k.mask);
          }
        }
      },
      f.body());
}

struct reader {
  std::string_view in;
  bool ok = true;

  bool need(std::size_t n) {
    if (in.size() < n) ok = false;
    return ok;
  }
  unsigned u8() {
    if (!need(1)) return 0;
    const auto v = static_cast<unsigned char>(in[0]);
    in.remove_prefix(1);
    return v;
  }
  bool flag() {
    const unsigned v = u8();
    if (v > 1) ok = false;
    return v == 1;
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    if (ok && !detail::get_varint(in, v)) ok = false;
    return ok ? v : 0;
  }
  std::int64_t sint() {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  std::int32_t sint32() {
    const std::int64_t v = sint();
    if (v < INT32_MIN || v > INT32_MAX) ok = false;
    return static_cast<std::int32_t>(v);
  }
  std::string bytes() {
    const std::uint64_t n = varint();
    if (!ok || !need(n)) return {};
    std::string s(in.substr(0, n));
    in.remove_prefix(n);
    return s;
  }
  // A count of elements that each take at least one byte.
  std::size_t count() {
    const std::uint64_t n = varint();
    if (n > in.size()) ok = false;
    return ok ? static_cast<std::size_t>(n) : 0;
  }
  compare_op op() {
    const unsigned v = u8();
    if (v > static_cast<unsigned>(compare_op::no_op)) ok = false;
    return static_cast<compare_op>(ok ? v : 0);
  }
  comparator cmp() {
    const unsigned k = u8();
    std::string v = bytes();
    if (!ok) return {};
    using kind = comparator::kind;
    switch (static_cast<kind>(k)) {
      case kind::binary: return comparator::binary(std::move(v));
      case kind::binary_prefix: return comparator::binary_prefix(std::move(v));
      case kind::substring: return comparator::substring(std::move(v));
      case kind::regex: return comparator::regex(std::move(v));
      case kind::null: return comparator::null();
      case kind::bit_and: return comparator::bit_and(std::move(v));
      case kind::bit_or: return comparator::bit_or(std::move(v));
      case kind::bit_xor: return comparator::bit_xor(std::move(v));
      case kind::long_value: {
        if (v.size() != 8) break;
        std::uint64_t x = 0;
        for (char c : v) x = (x << 8) | static_cast<unsigned char>(c);
        return comparator::long_value(static_cast<std::int64_t>(x));
      }
    }
    ok = false;
    return {};
  }
};

// The invalid filter's status (invalid_tag): its code, then its message.
std::optional<filter> read_invalid(reader& r) {
  const unsigned lo = r.u8(), hi = r.u8();
  std::string msg = r.bytes();
  const auto c = static_cast<code>(lo | (hi << 8));
  if (!r.ok || c == code::ok || c > code::unavailable) {
    r.ok = false;
    return std::nullopt;
  }
  return filter::invalid(status{c, std::move(msg)});
}

filter read_multi_row_range(reader& r) {
  multi_row_range_filter m;
  const std::size_t n = r.count();
  for (std::size_t i = 0; i < n && r.ok; ++i) {
    row_range rr;
    rr.start = r.bytes();
    rr.start_inclusive = r.flag();
    rr.stop = r.bytes();
    rr.stop_inclusive = r.flag();
    m.ranges.push_back(std::move(rr));
  }
  return filter(std::move(m));
}

filter read_fuzzy_row(reader& r) {
  fuzzy_row_filter fz;
  const std::size_t n = r.count();
  for (std::size_t i = 0; i < n && r.ok; ++i) {
    fuzzy_key k;
    k.key = r.bytes();
    k.mask = r.bytes();
    fz.keys.push_back(std::move(k));
  }
  return filter(std::move(fz));
}

std::optional<filter> read_node(reader& r, int depth) {
  if (depth > max_filter_depth) {
    r.ok = false;
    return std::nullopt;
  }
  const unsigned tag = r.u8();
  if (!r.ok) return std::nullopt;
  if (tag == invalid_tag) return read_invalid(r);
  auto compare = [&](auto spec) -> std::optional<filter> {
    spec.op = r.op();
    spec.cmp = r.cmp();
    if (!r.ok) return std::nullopt;
    return filter(std::move(spec));
  };
  auto column_check = [&](auto spec) -> std::optional<filter> {
    spec.family = r.bytes();
    spec.qualifier = r.bytes();
    spec.op = r.op();
    spec.cmp = r.cmp();
    if constexpr (!std::is_same_v<decltype(spec), column_value_filter>) {
      spec.filter_if_missing = r.flag();
      spec.latest_version_only = r.flag();
    }
    if (!r.ok) return std::nullopt;
    return filter(std::move(spec));
  };
  std::optional<filter> out;
  switch (tag) {
    case 0: return compare(row_filter{});
    case 1: return compare(family_filter{});
    case 2: return compare(qualifier_filter{});
    case 3: return compare(value_filter{});
    case 4: out = filter(prefix_filter{r.bytes()}); break;
    case 5: out = filter(column_prefix_filter{r.bytes()}); break;
    case 6: {
      multiple_column_prefix_filter m;
      const std::size_t n = r.count();
      for (std::size_t i = 0; i < n && r.ok; ++i) m.prefixes.push_back(r.bytes());
      out = filter(std::move(m));
      break;
    }
    case 7: {
      column_range_filter c;
      c.min = r.bytes();
      c.min_inclusive = r.flag();
      c.max = r.bytes();
      c.max_inclusive = r.flag();
      out = filter(std::move(c));
      break;
    }
    case 8: out = filter(column_count_get_filter{r.sint32()}); break;
    case 9: {
      column_pagination_filter p;
      p.limit = r.sint32();
      p.offset = r.sint32();
      if (r.flag()) p.column_offset = r.bytes();
      out = filter(std::move(p));
      break;
    }
    case 10: out = filter(page_filter{r.sint()}); break;
    case 11: return column_check(single_column_value_filter{});
    case 12: return column_check(single_column_value_exclude_filter{});
    case 13: return column_check(column_value_filter{});
    case 14: {
      dependent_column_filter d;
      d.family = r.bytes();
      d.qualifier = r.bytes();
      d.drop_dependent_column = r.flag();
      d.op = r.op();
      if (r.flag()) d.cmp = r.cmp();
      out = filter(std::move(d));
      break;
    }
    case 15: out = filter(first_key_only_filter{}); break;
    case 16: out = filter(key_only_filter{r.flag()}); break;
    case 17: out = filter(inclusive_stop_filter{r.bytes()}); break;
    case 18: {
      timestamps_filter t;
      const std::size_t n = r.count();
      for (std::size_t i = 0; i < n && r.ok; ++i) t.timestamps.push_back(r.sint());
      t.can_hint = r.flag();
      out = filter(std::move(t));
      break;
    }
    case 19: {
      std::uint32_t bits = 0;
      for (int i = 0; i < 4; ++i) bits |= r.u8() << (8 * i);
      random_row_filter rr;
      std::memcpy(&rr.chance, &bits, sizeof bits);
      out = filter(rr);
      break;
    }
    case 20:
    case 21: {
      auto inner = read_node(r, depth + 1);
      if (!inner) return std::nullopt;
      if (tag == 20)
        out = filter(skip_filter{std::move(*inner)});
      else
        out = filter(while_match_filter{std::move(*inner)});
      break;
    }
    case 22: {
      const unsigned op = r.u8();
      if (op > 1) r.ok = false;
      const std::size_t n = r.count();
      filter_list l;
      l.operation = static_cast<filter_list::op>(op & 1);
      for (std::size_t i = 0; i < n && r.ok; ++i) {
        auto c = read_node(r, depth + 1);
        if (!c) return std::nullopt;
        l.filters.push_back(std::move(*c));
      }
      out = filter(std::move(l));
      break;
    }
    case 23: out = read_multi_row_range(r); break;
    case 24: out = read_fuzzy_row(r); break;
    default: r.ok = false; return std::nullopt;
  }
  if (!r.ok) return std::nullopt;
  return out;
}

}  // namespace

std::string encode_filter(const filter& f) {
  std::string out;
  out.push_back(static_cast<char>(format_version));
  writer w{out};
  write_node(w, f);
  return out;
}

result<filter> decode_filter(std::string_view bytes) {
  if (bytes.empty() || static_cast<unsigned char>(bytes[0]) != format_version)
    return status{code::invalid_argument, "not an encoded filter (unknown format version)"};
  reader r{bytes.substr(1)};
  auto f = read_node(r, 1);
  if (!r.ok || !f) return status{code::invalid_argument, "malformed encoded filter"};
  if (!r.in.empty()) return status{code::invalid_argument, "malformed encoded filter (trailing bytes)"};
  return std::move(*f);
}

}  // namespace cellar
