// Entry point of the io_uring tests (test_io_ring.cc). Where the kernel refuses io_uring (an
// old kernel, a seccomp profile, io_uring_disabled) they have nothing to check: the program
// then exits 77, which meson reports as SKIP, rather than passing without checking.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "rpc/io_ring.h"

int main(int argc, char* argv[]) {
  if (cellar::rpc::io_ring::open().get() == nullptr) {
    std::puts("this kernel refuses io_uring: the io_uring tests are skipped");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
