// tests/persist/crash_copy.h: what a restart would find if the process died now: a copy of
// a store's directory taken while the store is still open.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <system_error>

namespace persisttest {

// Copies directory `from` (an open store's) to `to`, replacing `to`, and returns `to`. A
// file WiredTiger removes while the copy runs (a temporary one, after a reopen) is left
// out, as a crash at that instant would leave it; any other copy error fails the test.
inline std::string crash_copy(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  fs::remove_all(to);
  fs::create_directories(to);
  for (const auto& e : fs::recursive_directory_iterator(from, fs::directory_options::skip_permission_denied)) {
    const auto target = fs::path(to) / fs::relative(e.path(), from);
    std::error_code ec;
    if (e.is_directory(ec)) {
      fs::create_directories(target);
      continue;
    }
    fs::copy_file(e.path(), target, ec);
    if (ec && fs::exists(e.path())) FAIL("crash copy of " << e.path() << ": " << ec.message());
  }
  return to;
}

}  // namespace persisttest
