// tests/persist/damage.h: damaging a store's files on purpose, as a failing disk would.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <string>

namespace testdamage {

// Overwrites `len` bytes of `path` at `offset` with 0x5a.
inline void damage(const std::string& path, std::uintmax_t offset, std::size_t len) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(f.good());
  f.seekp(static_cast<std::streamoff>(offset));
  for (std::size_t i = 0; i < len; ++i) f.put('\x5a');
}

}  // namespace testdamage
