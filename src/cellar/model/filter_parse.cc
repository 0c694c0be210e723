// model/filter_parse.cc: HBase's filter language (cellar/filter.h, parse_filter).
//
// The scan follows HBase's ParseFilter byte by byte: at the top level a '(' opens a group,
// spaces and tabs separate, AND / OR / SKIP / WHILE are keywords only where ParseFilter
// sees them (AND and OR after a space or ')', SKIP and WHILE at the start or after a
// space or a parenthesis, each followed by a space or '('), and anything else starts a
// simple filter expression that runs to the first ')' outside quotes. Operators go on a
// stack with HBase's precedence (SKIP = WHILE > AND > OR; a run of the same operator
// makes one list). Inside an expression, arguments are split as ParseFilter splits them:
// quoted strings ('' is a quote), or bare words up to a space, a comma or ')'.
//
// Where cellar differs: OBKV's extras (see the header); a group holding several
// operators, e.g. "(A OR B AND C)", parses by precedence (ParseFilter's ')' handling drops
// an operator there and reports mismatched parentheses); an unclosed '(' is an error
// (ParseFilter accepts it); only spaces may stand between a filter's name and its '('.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

#include "ascii.h"
#include "cellar/filter.h"
#include "model/filter_text.h"

namespace cellar {

namespace {

status err(std::size_t pos, const std::string& msg) {
  return {code::invalid_argument, "filter string at position " + std::to_string(pos) + ": " + msg};
}

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// ---- arguments of one simple expression ---------------------------------------------------

struct argument {
  std::string text;  // unescaped, without the quotes
  bool quoted = false;
  std::size_t pos = 0;  // 1-based
};

struct call {
  std::string name;  // canonical
  std::size_t pos = 0;
  std::vector<argument> args;
  bool text_any_op = false;  // regexstring and substring with every operator (parse_printed_filter)

  status wrong_arity(const char* expected) const {
    return err(pos, name + " expects " + expected + ", got " + std::to_string(args.size()) + " argument" +
                        (args.size() == 1 ? "" : "s"));
  }
  std::string nth(std::size_t i) const { return "argument " + std::to_string(i + 1) + " of " + name; }

  result<std::string> str(std::size_t i) const {
    if (!args[i].quoted) return err(args[i].pos, nth(i) + " must be a quoted string ('...'), got " + args[i].text);
    return args[i].text;
  }
  result<std::int64_t> long_arg(std::size_t i) const {
    const auto& a = args[i];
    if (a.quoted || a.text.empty() || a.text == "-")
      return err(a.pos, nth(i) + " must be an integer, got " + (a.quoted ? "'" + a.text + "'" : a.text));
    const bool neg = a.text[0] == '-';
    // The magnitude's limit: one more for a negative number, so that INT64_MIN parses.
    const std::uint64_t limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (neg ? 1 : 0);
    std::uint64_t v = 0;
    for (std::size_t k = neg ? 1 : 0; k < a.text.size(); ++k) {
      const char c = a.text[k];
      if (c < '0' || c > '9') return err(a.pos, nth(i) + " must be an integer, got " + a.text);
      if (v > (limit - static_cast<std::uint64_t>(c - '0')) / 10)
        return err(a.pos, nth(i) + " is out of range for a long: " + a.text);
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  }
  result<std::int32_t> int_arg(std::size_t i) const {
    auto v = long_arg(i);
    if (!v) return v.error();
    if (v.value() > std::numeric_limits<std::int32_t>::max() || v.value() < std::numeric_limits<std::int32_t>::min())
      return err(args[i].pos, nth(i) + " is out of range for an int: " + args[i].text);
    return static_cast<std::int32_t>(v.value());
  }
  bool is_bool(std::size_t i) const {
    return !args[i].quoted && (ascii_iequal(args[i].text, "true") || ascii_iequal(args[i].text, "false"));
  }
  result<bool> bool_arg(std::size_t i) const {
    if (!is_bool(i)) return err(args[i].pos, nth(i) + " must be true or false, got " + args[i].text);
    return ascii_iequal(args[i].text, "true");
  }
  result<compare_op> op_arg(std::size_t i) const {
    const auto& a = args[i];
    if (!a.quoted) {
      if (a.text == "<") return compare_op::less;
      if (a.text == "<=") return compare_op::less_or_equal;
      if (a.text == "=") return compare_op::equal;
      if (a.text == "!=") return compare_op::not_equal;
      if (a.text == ">=") return compare_op::greater_or_equal;
      if (a.text == ">") return compare_op::greater;
      if (ascii_iequal(a.text, "NO_OP")) return compare_op::no_op;
    }
    return err(a.pos, nth(i) + " must be a compare operator (<, <=, =, !=, >=, >), got " + a.text);
  }
  // A comparator 'type:value'; regexstring and substring only with = and !=, as HBase.
  result<comparator> cmp_arg(std::size_t i, compare_op op) const {
    auto s = str(i);
    if (!s) return s.error();
    const std::string& t = s.value();
    const auto colon = t.find(':');
    const std::size_t pos = args[i].pos;
    if (colon == std::string::npos)
      return err(pos, nth(i) +
                          " must be a comparator 'type:value' (type binary, binaryprefix, regexstring, "
                          "substring, null, long, bitand, bitor or bitxor), got '" +
                          t + "'");
    const std::string_view type(t.data(), colon);
    std::string value = t.substr(colon + 1);
    auto text_only = [&]() -> status {
      if (!text_any_op && op != compare_op::equal && op != compare_op::not_equal)
        return err(pos, "a regexstring comparator and substring comparator can only be used with EQUAL and NOT_EQUAL");
      return status::ok();
    };
    if (type == "binary") return comparator::binary(std::move(value));
    if (type == "binaryprefix") return comparator::binary_prefix(std::move(value));
    if (type == "substring") {
      if (auto st = text_only(); !st) return st;
      return comparator::substring(std::move(value));
    }
    if (type == "regexstring") {
      if (auto st = text_only(); !st) return st;
      auto c = comparator::regex(std::move(value));
      if (auto st = c.check(); !st) return err(pos, st.message());
      return c;
    }
    if (type == "null") return comparator::null();
    if (type == "bitand") return comparator::bit_and(std::move(value));
    if (type == "bitor") return comparator::bit_or(std::move(value));
    if (type == "bitxor") return comparator::bit_xor(std::move(value));
    if (type == "long") {
      argument a{value, false, pos};
      call c{name, pos, {a}, text_any_op};
      auto v = c.long_arg(0);
      if (!v) return err(pos, "long comparator value must be an integer in range, got '" + value + "'");
      return comparator::long_value(v.value());
    }
    return err(pos,
               "unknown comparator type '" + std::string(type) +
                   "' (expected binary, binaryprefix, regexstring, substring, null, long, bitand, bitor or bitxor)");
  }
};

#define TRY_ASSIGN(var, expr)           \
  auto var##_r = (expr);                \
  if (!var##_r) return var##_r.error(); \
  auto var = std::move(var##_r.value())

template <class Spec>
result<filter> compare_filter(const call& c) {
  if (c.args.size() != 2) return c.wrong_arity("2 arguments (compare operator, comparator)");
  TRY_ASSIGN(op, c.op_arg(0));
  TRY_ASSIGN(cmp, c.cmp_arg(1, op));
  return filter(Spec{op, std::move(cmp)});
}

template <class Spec>
result<filter> column_value_check(const call& c, bool flags_allowed) {
  if (c.args.size() != 4 && !(flags_allowed && c.args.size() == 6))
    return c.wrong_arity(flags_allowed ? "4 or 6 arguments (family, qualifier, compare operator, comparator"
                                         "[, filterIfMissing, latestVersionOnly])"
                                       : "4 arguments (family, qualifier, compare operator, comparator)");
  Spec s;
  TRY_ASSIGN(fam, c.str(0));
  TRY_ASSIGN(qual, c.str(1));
  TRY_ASSIGN(op, c.op_arg(2));
  TRY_ASSIGN(cmp, c.cmp_arg(3, op));
  s.family = std::move(fam);
  s.qualifier = std::move(qual);
  s.op = op;
  s.cmp = std::move(cmp);
  if constexpr (!std::is_same_v<Spec, column_value_filter>) {
    if (c.args.size() == 6) {
      TRY_ASSIGN(missing, c.bool_arg(4));
      TRY_ASSIGN(latest, c.bool_arg(5));
      s.filter_if_missing = missing;
      s.latest_version_only = latest;
    }
  }
  return filter(std::move(s));
}

// ---- one builder per filter ---------------------------------------------------------------

// PrefixFilter, ColumnPrefixFilter, InclusiveStopFilter: one quoted string.
template <class F>
result<filter> one_string(const call& c) {
  if (c.args.size() != 1) return c.wrong_arity("1 argument (a quoted string)");
  TRY_ASSIGN(s, c.str(0));
  return filter(F{std::move(s)});
}

result<filter> multiple_column_prefix(const call& c) {
  multiple_column_prefix_filter m;
  for (std::size_t i = 0; i < c.args.size(); ++i) {
    TRY_ASSIGN(s, c.str(i));
    if (std::find(m.prefixes.begin(), m.prefixes.end(), s) != m.prefixes.end())
      return err(c.args[i].pos, "prefixes of MultipleColumnPrefixFilter must be distinct");
    m.prefixes.push_back(std::move(s));
  }
  return filter(std::move(m));
}

result<filter> column_range(const call& c) {
  if (c.args.size() != 4) return c.wrong_arity("4 arguments (minColumn, minInclusive, maxColumn, maxInclusive)");
  TRY_ASSIGN(lo, c.str(0));
  TRY_ASSIGN(lo_in, c.bool_arg(1));
  TRY_ASSIGN(hi, c.str(2));
  TRY_ASSIGN(hi_in, c.bool_arg(3));
  return filter(column_range_filter{std::move(lo), lo_in, std::move(hi), hi_in});
}

result<filter> column_count_get(const call& c) {
  if (c.args.size() != 1) return c.wrong_arity("1 argument (an int)");
  TRY_ASSIGN(v, c.int_arg(0));
  if (v < 0) return err(c.args[0].pos, "limit of ColumnCountGetFilter must be >= 0");
  return filter(column_count_get_filter{v});
}

result<filter> column_pagination(const call& c) {
  if (c.args.size() != 2) return c.wrong_arity("2 arguments (limit, offset or 'columnOffset')");
  TRY_ASSIGN(limit, c.int_arg(0));
  if (limit < 0) return err(c.args[0].pos, "limit of ColumnPaginationFilter must be >= 0");
  column_pagination_filter p;
  p.limit = limit;
  if (c.args[1].quoted) {
    p.column_offset = c.args[1].text;
  } else {
    TRY_ASSIGN(off, c.int_arg(1));
    if (off < 0) return err(c.args[1].pos, "offset of ColumnPaginationFilter must be >= 0");
    p.offset = off;
  }
  return filter(std::move(p));
}

result<filter> page(const call& c) {
  if (c.args.size() != 1) return c.wrong_arity("1 argument (a long)");
  TRY_ASSIGN(v, c.long_arg(0));
  if (v < 0) return err(c.args[0].pos, "page size of PageFilter must be >= 0");
  return filter(page_filter{v});
}

result<filter> dependent_column(const call& c) {
  const std::size_t argc = c.args.size();
  if (argc != 2 && argc != 3 && argc != 5)
    return c.wrong_arity(
        "2, 3 or 5 arguments (family, qualifier[, dropDependentColumn[, compare operator, "
        "comparator]])");
  dependent_column_filter d;
  TRY_ASSIGN(fam, c.str(0));
  TRY_ASSIGN(qual, c.str(1));
  d.family = std::move(fam);
  d.qualifier = std::move(qual);
  if (argc >= 3) {
    TRY_ASSIGN(drop, c.bool_arg(2));
    d.drop_dependent_column = drop;
  }
  if (argc == 5) {
    TRY_ASSIGN(op, c.op_arg(3));
    TRY_ASSIGN(cmp, c.cmp_arg(4, op));
    d.op = op;
    d.cmp = std::move(cmp);
  }
  return filter(std::move(d));
}

result<filter> first_key_only(const call& c) {
  if (!c.args.empty()) return c.wrong_arity("no arguments");
  return filter(first_key_only_filter{});
}

result<filter> key_only(const call& c) {
  if (c.args.size() > 1) return c.wrong_arity("0 or 1 argument (lenAsVal)");
  key_only_filter k;
  if (c.args.size() == 1) {
    TRY_ASSIGN(b, c.bool_arg(0));
    k.len_as_val = b;
  }
  return filter(k);
}

result<filter> timestamps(const call& c) {
  const std::size_t argc = c.args.size();
  timestamps_filter t;
  std::size_t count = argc;
  if (argc > 0 && c.is_bool(argc - 1)) {  // OBKV: a trailing canHint
    t.can_hint = ascii_iequal(c.args[argc - 1].text, "true");
    --count;
  }
  for (std::size_t i = 0; i < count; ++i) {
    TRY_ASSIGN(ts, c.long_arg(i));
    if (ts < 0) return err(c.args[i].pos, "timestamps of TimestampsFilter must be >= 0");
    t.timestamps.push_back(ts);
  }
  return filter(std::move(t));
}

result<filter> random_row(const call& c) {  // OBKV: the int holds the IEEE bits of the float chance
  if (c.args.size() != 1) return c.wrong_arity("1 argument (the chance's float bits, an int)");
  TRY_ASSIGN(v, c.long_arg(0));
  if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::uint32_t>::max())
    return err(c.args[0].pos, "argument 1 of RandomRowFilter must fit in 32 bits");
  const auto bits = static_cast<std::uint32_t>(static_cast<std::uint64_t>(v));
  random_row_filter r;
  std::memcpy(&r.chance, &bits, sizeof bits);
  return filter(r);
}

result<filter> multi_row_range(const call& c) {
  const std::size_t argc = c.args.size();
  if (argc == 0 || argc % 4 != 0)
    return c.wrong_arity("4 arguments per range (startRow, startInclusive, stopRow, stopInclusive)");
  multi_row_range_filter m;
  for (std::size_t i = 0; i < argc; i += 4) {
    TRY_ASSIGN(a, c.str(i));
    TRY_ASSIGN(ai, c.bool_arg(i + 1));
    TRY_ASSIGN(b, c.str(i + 2));
    TRY_ASSIGN(bi, c.bool_arg(i + 3));
    row_range r{std::move(a), ai, std::move(b), bi};
    if (!(r.start.empty() || r.stop.empty() || r.start < r.stop || (r.start == r.stop && r.stop_inclusive)))
      return err(c.args[i].pos, "invalid range of MultiRowRangeFilter: its start is after its stop");
    m.ranges.push_back(std::move(r));
  }
  return filter(std::move(m));
}

result<filter> fuzzy_row(const call& c) {
  const std::size_t argc = c.args.size();
  if (argc == 0 || argc % 2 != 0) return c.wrong_arity("pairs of arguments (key, mask)");
  fuzzy_row_filter f;
  for (std::size_t i = 0; i < argc; i += 2) {
    TRY_ASSIGN(key, c.str(i));
    TRY_ASSIGN(mask, c.str(i + 1));
    if (key.size() != mask.size()) return err(c.args[i + 1].pos, "a fuzzy key and its mask must have the same length");
    for (char& m : mask) {  // bytes 0/1, or the digits '0'/'1'
      if (m == '0' || m == 0)
        m = 0;
      else if (m == '1' || m == 1)
        m = 1;
      else
        return err(c.args[i + 1].pos, "mask bytes must be 0 (fixed) or 1 (any byte)");
    }
    f.keys.push_back({std::move(key), std::move(mask)});
  }
  return filter(std::move(f));
}

// Every filter the language knows (its name as HBase spells it; a query may use any case),
// and its builder from a parsed call. In the order an unknown name's error lists them.
struct filter_kind {
  const char* name;
  result<filter> (*make)(const call&);
};
constexpr filter_kind filter_kinds[] = {
    {"RowFilter", compare_filter<row_filter>},
    {"FamilyFilter", compare_filter<family_filter>},
    {"QualifierFilter", compare_filter<qualifier_filter>},
    {"ValueFilter", compare_filter<value_filter>},
    {"PrefixFilter", one_string<prefix_filter>},
    {"ColumnPrefixFilter", one_string<column_prefix_filter>},
    {"MultipleColumnPrefixFilter", multiple_column_prefix},
    {"ColumnRangeFilter", column_range},
    {"ColumnCountGetFilter", column_count_get},
    {"ColumnPaginationFilter", column_pagination},
    {"PageFilter", page},
    {"SingleColumnValueFilter", [](const call& c) { return column_value_check<single_column_value_filter>(c, true); }},
    {"SingleColumnValueExcludeFilter",
     [](const call& c) { return column_value_check<single_column_value_exclude_filter>(c, true); }},
    {"ColumnValueFilter", [](const call& c) { return column_value_check<column_value_filter>(c, false); }},
    {"DependentColumnFilter", dependent_column},
    {"FirstKeyOnlyFilter", first_key_only},
    {"KeyOnlyFilter", key_only},
    {"InclusiveStopFilter", one_string<inclusive_stop_filter>},
    {"TimestampsFilter", timestamps},
    {"RandomRowFilter", random_row},
    {"MultiRowRangeFilter", multi_row_range},
    {"FuzzyRowFilter", fuzzy_row},
};

// The filter of `raw`'s name in any case; null for a name the language does not know.
const filter_kind* find_kind(std::string_view raw) {
  for (const auto& k : filter_kinds)
    if (ascii_iequal(raw, k.name)) return &k;
  return nullptr;
}

// "RowFilter, FamilyFilter, ...": the names of filter_kinds.
std::string known_names() {
  std::string out;
  for (const auto& k : filter_kinds) out += std::string(out.empty() ? "" : ", ") + k.name;
  return out;
}

// ---- the expression stack ------------------------------------------------------------------

enum class op_kind : std::uint8_t { lparen, skip, while_match, and_op, or_op };

int precedence(op_kind k) {
  switch (k) {
    case op_kind::skip:
    case op_kind::while_match: return 1;
    case op_kind::and_op: return 2;
    case op_kind::or_op: return 3;
    case op_kind::lparen: return 4;
  }
  return 4;
}

const char* op_name(op_kind k) {
  switch (k) {
    case op_kind::skip: return "SKIP";
    case op_kind::while_match: return "WHILE";
    case op_kind::and_op: return "AND";
    case op_kind::or_op: return "OR";
    case op_kind::lparen: return "(";
  }
  return "?";
}

struct pending_op {
  op_kind kind;
  std::size_t pos;
};

struct pending_filter {
  filter f;
  std::size_t pos;
  int depth;  // levels of the filter tree
};

class parser {
 public:
  parser(std::string_view t, bool text_any_op) : t_(t), text_any_op_(text_any_op) {}

  result<filter> run() {
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const char c = t_[i];
      std::size_t len = 0;
      if (c == '(') {
        if (++open_ > max_filter_depth)
          return err(i + 1, "nesting deeper than " + std::to_string(max_filter_depth) + " levels");
        ops_.push_back({op_kind::lparen, i + 1});
      } else if (space(c)) {
        continue;
      } else if ((len = keyword(i, "OR", false)) != 0 || (len = symbol(i, "||")) != 0) {
        if (auto s = operator_found(op_kind::or_op, i); !s) return s;
        i += len - 1;
      } else if ((len = keyword(i, "AND", false)) != 0 || (len = symbol(i, "&&")) != 0) {
        if (auto s = operator_found(op_kind::and_op, i); !s) return s;
        i += len - 1;
      } else if ((len = keyword(i, "SKIP", true)) != 0) {
        if (auto s = operator_found(op_kind::skip, i); !s) return s;
        i += len - 1;
      } else if ((len = keyword(i, "WHILE", true)) != 0) {
        if (auto s = operator_found(op_kind::while_match, i); !s) return s;
        i += len - 1;
      } else if (c == ')') {
        if (auto s = close_group(i); !s) return s;
      } else {
        auto end = expression_end(i);
        if (!end) return end.error();
        auto f = simple_expression(i, end.value());
        if (!f) return f.error();
        filters_.push_back({std::move(f.value()), i + 1, 1});
        i = end.value();
      }
    }
    while (!ops_.empty()) {
      if (ops_.back().kind == op_kind::lparen)
        return err(ops_.back().pos, "unbalanced parentheses: this '(' is never closed");
      if (auto s = pop_operator(); !s) return s;
    }
    if (filters_.empty()) return err(1, "the filter string is empty (or only spaces): expected a filter");
    if (filters_.size() > 1) return err(filters_[1].pos, "expected AND or OR before this filter");
    return std::move(filters_.back().f);
  }

 private:
  // ParseFilter's keyword test (case-insensitive, as OBKV). AND/OR need a space or ')'
  // before them; SKIP/WHILE may also start the string or follow '('. All need a space or
  // '(' after them.
  std::size_t keyword(std::size_t i, std::string_view word, bool unary) const {
    if (i + word.size() >= t_.size() || !ascii_iequal(t_.substr(i, word.size()), word)) return 0;
    if (i == 0) {
      if (!unary) return 0;
    } else {
      const char b = t_[i - 1];
      if (!(space(b) || b == ')' || (unary && b == '('))) return 0;
    }
    const char a = t_[i + word.size()];
    return space(a) || a == '(' ? word.size() : 0;
  }
  std::size_t symbol(std::size_t i, std::string_view s) const { return t_.substr(i, s.size()) == s ? s.size() : 0; }

  status operator_found(op_kind k, std::size_t i) {
    while (!ops_.empty() && ops_.back().kind != op_kind::lparen && precedence(ops_.back().kind) < precedence(k))
      if (auto s = pop_operator(); !s) return s;
    ops_.push_back({k, i + 1});
    return status::ok();
  }

  status close_group(std::size_t i) {
    for (;;) {
      if (ops_.empty()) return err(i + 1, "unbalanced parentheses: this ')' has no '('");
      if (ops_.back().kind == op_kind::lparen) break;
      if (auto s = pop_operator(); !s) return s;
    }
    ops_.pop_back();
    --open_;
    return status::ok();
  }

  // Applies the operator on top of the stack (a run of equal AND or OR makes one list).
  status pop_operator() {
    const pending_op op = ops_.back();
    if (op.kind == op_kind::skip || op.kind == op_kind::while_match) {
      ops_.pop_back();
      if (filters_.empty() || filters_.back().pos < op.pos)
        return err(op.pos, std::string(op_name(op.kind)) + " must be followed by a filter");
      pending_filter inner = std::move(filters_.back());
      filters_.pop_back();
      if (inner.depth + 1 > max_filter_depth)
        return err(op.pos, "nesting deeper than " + std::to_string(max_filter_depth) + " levels");
      filter f = op.kind == op_kind::skip ? filter(skip_filter{std::move(inner.f)})
                                          : filter(while_match_filter{std::move(inner.f)});
      filters_.push_back({std::move(f), op.pos, inner.depth + 1});
      return status::ok();
    }
    std::vector<pending_filter> parts;
    while (!ops_.empty() && ops_.back().kind == op.kind) {
      if (filters_.empty() || filters_.back().pos < ops_.back().pos)
        return err(ops_.back().pos, std::string(op_name(op.kind)) + " must be followed by a filter");
      parts.push_back(std::move(filters_.back()));
      filters_.pop_back();
      const std::size_t at = ops_.back().pos;
      ops_.pop_back();
      if (filters_.empty() || filters_.back().pos > at)
        return err(at, std::string(op_name(op.kind)) + " needs a filter before it");
    }
    parts.push_back(std::move(filters_.back()));
    filters_.pop_back();
    std::reverse(parts.begin(), parts.end());
    filter_list l;
    l.operation = op.kind == op_kind::and_op ? filter_list::op::must_pass_all : filter_list::op::must_pass_one;
    int depth = 0;
    for (auto& p : parts) {
      depth = std::max(depth, p.depth);
      l.filters.push_back(std::move(p.f));
    }
    if (depth + 1 > max_filter_depth)
      return err(op.pos, "nesting deeper than " + std::to_string(max_filter_depth) + " levels");
    filters_.push_back({filter(std::move(l)), parts.front().pos, depth + 1});
    return status::ok();
  }

  // ParseFilter's extractFilterSimpleExpression: the index of the first ')' outside quotes
  // (a doubled quote is an escaped one).
  result<std::size_t> expression_end(std::size_t start) const {
    std::size_t quotes = 0, open_quote = 0;
    for (std::size_t i = start; i < t_.size(); ++i) {
      if (t_[i] == '\'') {
        if (i + 1 == t_.size() || t_[i + 1] != '\'') {
          if (quotes++ % 2 == 0) open_quote = i;
        } else {
          ++i;
          continue;
        }
      }
      if (t_[i] == ')' && quotes % 2 == 0) return i;
    }
    if (quotes % 2 != 0) return err(open_quote + 1, "unterminated quoted string");
    return err(start + 1, "expected a filter such as PrefixFilter('abc'), ending with ')'");
  }

  result<filter> simple_expression(std::size_t start, std::size_t end) const {
    std::size_t i = start;
    while (i < end && t_[i] != '(' && !space(t_[i])) ++i;
    const std::string_view raw = t_.substr(start, i - start);
    while (i < end && space(t_[i])) ++i;
    if (i >= end || t_[i] != '(') {
      if (raw.empty() || raw[0] == '\'')
        return err(start + 1, "expected a filter name, got " + std::string(t_.substr(start, end - start + 1)));
      return err(i + 1, "expected '(' after the filter name " + std::string(raw));
    }
    call c;
    c.pos = start + 1;
    c.text_any_op = text_any_op_;
    const filter_kind* kind = find_kind(raw);
    if (kind == nullptr)
      return err(start + 1, "unknown filter " + std::string(raw) + " (filters: " + known_names() + ")");
    c.name = kind->name;
    // ParseFilter's getFilterArguments.
    for (std::size_t k = i + 1; k < end; ++k) {
      const char ch = t_[k];
      if (space(ch) || ch == ',') continue;
      argument a;
      a.pos = k + 1;
      if (ch == '\'') {
        a.quoted = true;
        std::size_t j = k + 1;
        for (; j < end; ++j) {
          if (t_[j] != '\'') {
            a.text.push_back(t_[j]);
          } else if (j + 1 < t_.size() && t_[j + 1] == '\'') {
            a.text.push_back('\'');
            ++j;
          } else {
            break;
          }
        }
        if (j >= end) return err(a.pos, "unterminated quoted string");
        k = j;
      } else {
        std::size_t j = k;
        while (j < end && !space(t_[j]) && t_[j] != ',') ++j;
        a.text.assign(t_.substr(k, j - k));
        k = j - 1;
      }
      c.args.push_back(std::move(a));
    }
    return kind->make(c);
  }

  std::string_view t_;
  bool text_any_op_;
  std::vector<pending_op> ops_;
  std::vector<pending_filter> filters_;
  int open_ = 0;
};

}  // namespace

result<filter> parse_filter(std::string_view text) { return parser(text, false).run(); }

result<filter> detail::parse_printed_filter(std::string_view text) { return parser(text, true).run(); }

}  // namespace cellar
