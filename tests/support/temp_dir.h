// tests/support/temp_dir.h: a fresh directory for a test, removed afterwards.
//
// Needs only the standard library, so that tests which run the programs without linking
// cellar can use it too.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace testsupport {

// A directory path under the system's temp directory, `<prefix>-<pid>-<n>`: nothing is
// there at first (a leftover of an earlier run is removed), and the path and
// `<path>-crash` (where tests copy what a crash would leave) are removed with the object.
struct temp_dir {
  std::string path;
  explicit temp_dir(const std::string& prefix = "cellar-test") {
    static std::atomic<int> n{0};
    path = (std::filesystem::temp_directory_path() /
            (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++)))
               .string();
    std::filesystem::remove_all(path);
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
    std::filesystem::remove_all(path + "-crash", ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

// A temp_dir that exists, empty, from the start.
struct made_dir : temp_dir {
  explicit made_dir(const std::string& prefix = "cellar-test") : temp_dir(prefix) {
    std::filesystem::create_directories(path);
  }
};

}  // namespace testsupport
