// shell/hbase_syntax.h: the HBase shell's command-line syntax, parsed into values.
//
// The HBase shell is JRuby: a command is a method call such as
//
//   put 'blogtable', '1', 'info:title', 'this is doc title'
//   scan 'blogtable' ,{COLUMNS => ['text:','info:title'] }
//   alter 't1', NAME => 'f1', VERSIONS => 5          # trailing KEY => value pairs
//
// This parser reads the literals users type: 'single-quoted' strings (only \\ and \'
// escapes), "double-quoted" strings (\xNN, \n, \t, \r, \0, \e, \s, octal \NNN, \uXXXX,
// \", \\), integers (sign, 1_000 underscores, 0x / 0b / 0o and Ruby's leading-0 octal),
// true / false / nil, [arrays], {hashes with => }, bare constants (NAME, VERSIONS,
// COLUMNS, STARTROW, ...), commas between arguments and a trailing `# comment`. Trailing
// `KEY => value` pairs without braces become one hash argument, as Ruby does. It does not
// evaluate Ruby: variables, method chains, `#{}` interpolation and floats are refused.
//
// Errors are INVALID_ARGUMENT with the 1-based (byte) column, e.g. "column 12: unterminated
// string".
//
// Thread safety: plain functions and values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cellar/status.h"

namespace cellar {

struct shell_value;

struct shell_nil {
  friend bool operator==(const shell_nil&, const shell_nil&) = default;
};

// A bare identifier such as NAME or VERSIONS. HBase defines these constants as the string
// of their own name, so as hash keys they are stored as that string.
struct shell_constant {
  std::string name;
  friend bool operator==(const shell_constant&, const shell_constant&) = default;
};

using shell_array = std::vector<shell_value>;
// Ordered as written; keys are strings (a constant key NAME is the string "NAME").
using shell_hash = std::vector<std::pair<std::string, shell_value>>;

struct shell_value {
  enum class type : std::uint8_t { string, integer, boolean, nil, array, hash, constant };
  // The index of each alternative is its `type`.
  std::variant<std::string, std::int64_t, bool, shell_nil, shell_array, shell_hash, shell_constant> v;

  shell_value() : v(shell_nil{}) {}
  shell_value(std::string s) : v(std::move(s)) {}          // NOLINT: implicit by design
  shell_value(const char* s) : v(std::string(s)) {}        // NOLINT
  shell_value(std::int64_t i) : v(i) {}                    // NOLINT
  shell_value(int i) : v(static_cast<std::int64_t>(i)) {}  // NOLINT
  shell_value(bool b) : v(b) {}                            // NOLINT
  shell_value(shell_nil n) : v(n) {}                       // NOLINT
  shell_value(shell_array a) : v(std::move(a)) {}          // NOLINT
  shell_value(shell_hash h) : v(std::move(h)) {}           // NOLINT
  shell_value(shell_constant c) : v(std::move(c)) {}       // NOLINT

  type kind() const { return static_cast<type>(v.index()); }
  bool is_string() const { return kind() == type::string; }
  bool is_integer() const { return kind() == type::integer; }
  bool is_boolean() const { return kind() == type::boolean; }
  bool is_nil() const { return kind() == type::nil; }
  bool is_array() const { return kind() == type::array; }
  bool is_hash() const { return kind() == type::hash; }
  bool is_constant() const { return kind() == type::constant; }

  // Precondition: the matching is_...() holds.
  const std::string& as_string() const { return std::get<std::string>(v); }
  std::int64_t as_integer() const { return std::get<std::int64_t>(v); }
  bool as_boolean() const { return std::get<bool>(v); }
  const shell_array& as_array() const { return std::get<shell_array>(v); }
  const shell_hash& as_hash() const { return std::get<shell_hash>(v); }
  const std::string& as_constant() const { return std::get<shell_constant>(v).name; }

  // For a hash: the value of the first entry with this key, or nullptr.
  const shell_value* find(std::string_view key) const;

  friend bool operator==(const shell_value&, const shell_value&) = default;
};

struct shell_command {
  std::string name;  // empty for a blank or comment-only line
  std::vector<shell_value> args;

  friend bool operator==(const shell_command&, const shell_command&) = default;
};

// Parses one shell line. A blank or comment-only line gives an empty command.
result<shell_command> parse_shell_line(std::string_view line);

// Writes a value back in shell syntax: strings double-quoted with the escapes above (so
// any bytes round-trip through parse_shell_line), e.g. {NAME => "f1", VERSIONS => 3}.
std::string format_shell_value(const shell_value& v);

// HBase's Bytes.toStringBinary: bytes 0x20..0x7E as themselves except the backslash, every
// other byte (and '\') as \xNN with upper-case hex digits, e.g. "a\x00\x5C".
std::string to_string_binary(std::string_view bytes);

}  // namespace cellar
