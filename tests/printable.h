// tests/printable.h: bytes as readable text in test expectations and messages.
#pragma once

#include <string>

namespace test_util {

// Printable ASCII as is, every other byte as \xHH (lower-case hex).
inline std::string printable(const std::string& s) {
  std::string out;
  static const char* hex = "0123456789abcdef";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace test_util
