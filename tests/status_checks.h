// tests/status_checks.h: what the embedded-API tests share to check a call's outcome:
// REQUIRE_OK and REQUIRE_CODE (with the status's text when they fail), cellar::code printed by name in
// Catch's messages, and be64, the tests' own 8-byte big-endian encoding (an oracle
// independent of the library's long_bytes).
#pragma once
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "cellar/status.h"

namespace Catch {
template <>
struct StringMaker<cellar::code> {
  static std::string convert(cellar::code c) { return std::string(cellar::code_name(c)); }
};
}  // namespace Catch

namespace test_util {

inline std::string describe_status(const cellar::status& s) { return s.to_string(); }
template <class T>
inline std::string describe_status(const cellar::result<T>& r) {
  return r.error().to_string();
}

inline std::string be64(std::int64_t v) {
  std::string s(8, '\0');
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 7; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return s;
}

}  // namespace test_util

#define REQUIRE_OK(expr)                           \
  do {                                             \
    const auto& req_ok_v_ = (expr);                \
    INFO(::test_util::describe_status(req_ok_v_)); \
    REQUIRE(req_ok_v_.is_ok());                    \
  } while (0)

#define REQUIRE_CODE(expr, c)                        \
  do {                                               \
    const auto& req_code_v_ = (expr);                \
    INFO(::test_util::describe_status(req_code_v_)); \
    REQUIRE(req_code_v_.code() == (c));              \
  } while (0)
