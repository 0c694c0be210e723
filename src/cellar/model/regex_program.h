// model/regex_program.h: what a comparator compiles once and every copy shares.
//
// A regex comparator holds its RE2 program (ISO-8859-1 mode: one character per byte of
// the value, as HBase's RegexStringComparator reads values); a substring comparator holds
// its text folded to lower case, and, when the text is not ASCII, an RE2 program that
// finds it ignoring case (Unicode simple case folding, UTF-8). Built by comparator's
// factories (cellar/filter.h); `error` says why a pattern cannot be used.
//
// Thread safety: immutable after construction; RE2 matching is thread-safe.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>

#include "cellar/status.h"

namespace cellar::detail {

struct regex_program {
  std::unique_ptr<RE2> re;  // null for an ASCII substring, or when `error` is set
  std::string folded;       // substring: the text in ASCII lower case
  status error;
};

// The largest compiled program a pattern may have (RE2's max_mem).
inline constexpr std::int64_t max_regex_program_bytes = 1 << 20;

// Compiles an HBase regexstring pattern (UTF-8 text; see cellar/filter.h).
std::shared_ptr<const regex_program> compile_regex(std::string_view pattern);
// Prepares a case-insensitive substring search for `text`.
std::shared_ptr<const regex_program> compile_substring(std::string_view text);

// Whether `value` contains the prepared substring, ignoring case.
bool contains_folded(const regex_program& p, std::string_view value);

}  // namespace cellar::detail
