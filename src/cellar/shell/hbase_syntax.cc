// shell/hbase_syntax.cc: a recursive-descent reader of HBase shell (JRuby) command lines
// (see hbase_syntax.h), plus Bytes.toStringBinary.
#include "shell/hbase_syntax.h"

#include <limits>

namespace cellar {

const shell_value* shell_value::find(std::string_view key) const {
  if (!is_hash()) return nullptr;
  for (const auto& [k, val] : as_hash())
    if (k == key) return &val;
  return nullptr;
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class line_parser {
 public:
  explicit line_parser(std::string_view in) : in_(in) {}

  result<shell_command> command() {
    shell_command cmd;
    skip_blanks();
    if (at_end()) return cmd;
    if (!is_ident_start(in_[i_])) return fail(i_, "a command name (create, put, get, scan, ...) expected");
    while (i_ < in_.size() && is_ident_char(in_[i_])) cmd.name += in_[i_++];
    if (i_ < in_.size() && (in_[i_] == '?' || in_[i_] == '!')) cmd.name += in_[i_++];
    bool parens = false;
    if (i_ < in_.size() && in_[i_] == '(') {  // get('t', 'r'): a call with parentheses
      parens = true;
      ++i_;
    }
    skip_blanks();
    if (parens && peek() == ')') {
      ++i_;
    } else if (!at_end()) {
      if (auto s = arguments(cmd.args, parens); !s) return s;
    } else if (parens) {
      return fail(i_, "')' expected to close the argument list");
    }
    skip_blanks();
    if (!at_end()) return fail(i_, "unexpected " + describe_char() + " after the arguments");
    return cmd;
  }

 private:
  static constexpr int max_depth = 64;

  bool at_end() const { return i_ >= in_.size() || in_[i_] == '#'; }
  char peek() const { return i_ < in_.size() ? in_[i_] : '\0'; }
  void skip_blanks() {
    while (i_ < in_.size() && (in_[i_] == ' ' || in_[i_] == '\t' || in_[i_] == '\r' || in_[i_] == '\n')) ++i_;
  }
  static status fail(std::size_t at, const std::string& msg) {
    return {code::invalid_argument, "column " + std::to_string(at + 1) + ": " + msg};
  }
  bool at_arrow() const { return in_.substr(i_, 2) == "=>"; }
  // The character at i_, for messages.
  std::string describe_char() const {
    if (in_.substr(i_, 2) == "\xC2\xA0") return "non-breaking space (U+00A0, often pasted from a web page)";
    const auto c = static_cast<unsigned char>(in_[i_]);
    if (c < 0x20 || c >= 0x7F) return "byte " + to_string_binary(in_.substr(i_, 1));
    return "'" + std::string(1, in_[i_]) + "'";
  }

  // The command's arguments: values separated by commas; trailing KEY => value pairs
  // form one hash.
  status arguments(std::vector<shell_value>& args, bool parens) {
    shell_hash trailing;
    bool in_pairs = false;
    for (;;) {
      skip_blanks();
      const std::size_t start = i_;
      auto v = value(0);
      if (!v) return v.error();
      skip_blanks();
      if (at_arrow()) {
        i_ += 2;
        auto key = hash_key(*v, start);
        if (!key) return key.error();
        auto val = value(0);
        if (!val) return val.error();
        trailing.emplace_back(std::move(*key), std::move(*val));
        in_pairs = true;
      } else if (in_pairs) {
        return fail(start, "a plain argument cannot follow KEY => value pairs; put the pairs last or in { }");
      } else {
        args.push_back(std::move(*v));
      }
      skip_blanks();
      if (peek() == ',') {
        ++i_;
        skip_blanks();
        if (at_end()) return fail(i_, "an argument expected after ','");
        continue;
      }
      if (parens) {
        if (peek() != ')') return fail(i_, "',' or ')' expected");
        ++i_;
      }
      break;
    }
    if (in_pairs) args.emplace_back(std::move(trailing));
    return status::ok();
  }

  result<std::string> hash_key(const shell_value& k, std::size_t at) {
    if (k.is_string()) return k.as_string();
    if (k.is_constant()) return k.as_constant();
    return fail(at, "a hash key must be a string or a constant such as NAME");
  }

  result<shell_value> value(int depth) {
    if (depth > max_depth) return fail(i_, "nested too deeply");
    skip_blanks();
    if (i_ >= in_.size() || in_[i_] == '#') return fail(i_, "a value expected");
    const char c = in_[i_];
    if (c == '\'') return single_quoted();
    if (c == '"') return double_quoted();
    if (c == '[') return array(depth);
    if (c == '{') return hash(depth);
    if (is_digit(c) || ((c == '-' || c == '+') && i_ + 1 < in_.size() && is_digit(in_[i_ + 1]))) return integer();
    if (is_ident_start(c)) {
      std::string word;
      while (i_ < in_.size() && is_ident_char(in_[i_])) word += in_[i_++];
      if (peek() == ':' && in_.substr(i_, 2) != "::")
        return fail(i_, "KEY: value is not supported; write KEY => value");
      if (peek() == '.' || peek() == '(' || peek() == ':')
        return fail(i_, "Ruby expressions are not supported here; use literals");
      if (word == "true") return shell_value(true);
      if (word == "false") return shell_value(false);
      if (word == "nil") return shell_value(shell_nil{});
      return shell_value(shell_constant{std::move(word)});
    }
    return fail(i_, "unexpected " + describe_char());
  }

  result<shell_value> single_quoted() {
    const std::size_t start = i_++;
    std::string out;
    for (;;) {
      if (i_ >= in_.size()) return fail(start, "unterminated string");
      const char c = in_[i_++];
      if (c == '\'') return shell_value(std::move(out));
      if (c == '\\' && i_ < in_.size() && (in_[i_] == '\\' || in_[i_] == '\'')) {
        out += in_[i_++];
        continue;
      }
      out += c;
    }
  }

  result<shell_value> double_quoted() {
    const std::size_t start = i_++;
    std::string out;
    for (;;) {
      if (i_ >= in_.size()) return fail(start, "unterminated string");
      const std::size_t at = i_;
      const char c = in_[i_++];
      if (c == '"') return shell_value(std::move(out));
      if (c == '#' && i_ < in_.size() && (in_[i_] == '{' || in_[i_] == '@' || in_[i_] == '$'))
        return fail(at, "string interpolation (#{...}) is not supported; write \\# for a literal '#'");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= in_.size()) return fail(start, "unterminated string");
      const char e = in_[i_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 's': out += ' '; break;
        case 'e': out += '\x1B'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case 'x': {
          int v = 0, n = 0;
          while (n < 2 && i_ < in_.size() && hex_value(in_[i_]) >= 0) v = v * 16 + hex_value(in_[i_++]), ++n;
          if (n == 0) return fail(at, "invalid hex escape: \\x needs one or two hex digits");
          out += static_cast<char>(v);
          break;
        }
        case 'u': {
          std::uint32_t cp = 0;
          int n = 0;
          while (n < 4 && i_ < in_.size() && hex_value(in_[i_]) >= 0) cp = cp * 16 + hex_value(in_[i_++]), ++n;
          if (n != 4) return fail(at, "invalid Unicode escape: \\u needs four hex digits");
          append_utf8(out, cp);
          break;
        }
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7': {
          int v = e - '0', n = 1;
          while (n < 3 && i_ < in_.size() && in_[i_] >= '0' && in_[i_] <= '7') v = v * 8 + (in_[i_++] - '0'), ++n;
          out += static_cast<char>(v & 0xFF);
          break;
        }
        case '\n': break;          // line continuation
        default: out += e; break;  // \" \\ \# and any other character stand for themselves
      }
    }
  }

  result<shell_value> integer() {
    const std::size_t start = i_;
    bool negative = false;
    if (in_[i_] == '-' || in_[i_] == '+') negative = in_[i_++] == '-';
    int base = 10;
    if (in_[i_] == '0' && i_ + 1 < in_.size()) {
      const char p = in_[i_ + 1];
      if (p == 'x' || p == 'X')
        base = 16, i_ += 2;
      else if (p == 'b' || p == 'B')
        base = 2, i_ += 2;
      else if (p == 'o' || p == 'O')
        base = 8, i_ += 2;
      else if (p == 'd' || p == 'D')
        base = 10, i_ += 2;
      else if (is_digit(p) || p == '_')
        base = 8, i_ += 1;  // Ruby: a leading 0 means octal
    }
    std::uint64_t magnitude = 0;
    bool any = false, last_underscore = false;
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    for (; i_ < in_.size(); ++i_) {
      const char c = in_[i_];
      if (c == '_') {
        if (!any || last_underscore) return fail(i_, "misplaced '_' in a number");
        last_underscore = true;
        continue;
      }
      const int d = hex_value(c);
      if (d < 0 || d >= base) {
        if (is_ident_char(c)) return fail(i_, "invalid digit '" + std::string(1, c) + "' in a number");
        break;
      }
      if (magnitude > (limit - static_cast<std::uint64_t>(d)) / static_cast<std::uint64_t>(base))
        return fail(start, "integer out of range (64-bit signed)");
      magnitude = magnitude * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(d);
      any = true;
      last_underscore = false;
    }
    if (!any) return fail(start, "digits expected in the number");
    if (last_underscore) return fail(i_ - 1, "trailing '_' in a number");
    if (i_ < in_.size() && in_[i_] == '.' && i_ + 1 < in_.size() && is_digit(in_[i_ + 1]))
      return fail(start, "floating-point numbers are not supported");
    std::int64_t v = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
    return shell_value(v);
  }

  result<shell_value> array(int depth) {
    ++i_;  // [
    shell_array out;
    for (;;) {
      skip_blanks();
      if (peek() == ']') {
        ++i_;
        return shell_value(std::move(out));
      }
      auto v = value(depth + 1);
      if (!v) return v;
      out.push_back(std::move(*v));
      skip_blanks();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() == ']') continue;
      if (at_arrow()) return fail(i_, "'=>' inside [ ]: write a hash as { KEY => value }");
      return fail(i_, "',' or ']' expected in an array");
    }
  }

  result<shell_value> hash(int depth) {
    ++i_;  // {
    shell_hash out;
    for (;;) {
      skip_blanks();
      if (peek() == '}') {
        ++i_;
        return shell_value(std::move(out));
      }
      const std::size_t key_at = i_;
      auto k = value(depth + 1);
      if (!k) return k;
      auto key = hash_key(*k, key_at);
      if (!key) return key.error();
      skip_blanks();
      if (!at_arrow()) return fail(i_, "'=>' expected after the hash key");
      i_ += 2;
      auto v = value(depth + 1);
      if (!v) return v;
      out.emplace_back(std::move(*key), std::move(*v));
      skip_blanks();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() == '}') continue;
      return fail(i_, "',' or '}' expected in a hash");
    }
  }

  std::string_view in_;
  std::size_t i_ = 0;
};

constexpr char hex_upper[] = "0123456789ABCDEF";

bool is_constant_name(const std::string& s) {
  if (s.empty() || !is_ident_start(s[0]) || s[0] < 'A' || s[0] > 'Z') return false;
  for (char c : s)
    if (!is_ident_char(c)) return false;
  return true;
}

void format_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\' || c == '#') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c <= 0x7E) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex_upper[c >> 4];
      out += hex_upper[c & 0xF];
    }
  }
  out += '"';
}

void format(std::string& out, const shell_value& v) {
  switch (v.kind()) {
    case shell_value::type::string: format_string(out, v.as_string()); return;
    case shell_value::type::integer: out += std::to_string(v.as_integer()); return;
    case shell_value::type::boolean: out += v.as_boolean() ? "true" : "false"; return;
    case shell_value::type::nil: out += "nil"; return;
    case shell_value::type::constant: out += v.as_constant(); return;
    case shell_value::type::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v.as_array()) {
        if (!first) out += ", ";
        first = false;
        format(out, e);
      }
      out += ']';
      return;
    }
    case shell_value::type::hash: {
      out += '{';
      bool first = true;
      for (const auto& [k, e] : v.as_hash()) {
        if (!first) out += ", ";
        first = false;
        if (is_constant_name(k) && k != "true" && k != "false" && k != "nil")
          out += k;
        else
          format_string(out, k);
        out += " => ";
        format(out, e);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

result<shell_command> parse_shell_line(std::string_view line) { return line_parser(line).command(); }

std::string format_shell_value(const shell_value& v) {
  std::string out;
  format(out, v);
  return out;
}

std::string to_string_binary(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c <= 0x7E && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex_upper[c >> 4];
      out += hex_upper[c & 0xF];
    }
  }
  return out;
}

}  // namespace cellar
