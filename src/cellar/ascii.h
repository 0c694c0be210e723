// ascii.h: the case-insensitive comparison the text parsers share (the DDL, its
// kv_attributes JSON, HBase filter strings).
#pragma once

#include <cstddef>
#include <string_view>

namespace cellar {

// Whether a and b are equal when ASCII letters are compared without case; other bytes
// compare exactly. (absl::EqualsIgnoreCase would do, but Debian's abseil has its own
// string_view, not std::string_view.)
inline bool ascii_iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

inline char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }
inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace cellar
