// tests/fuzz/fuzz_target.h: what a fuzz target is, here.
//
// Each target is one file defining libFuzzer's entry point, LLVMFuzzerTestOneInput, which
// feeds one input to a part of cellar and aborts when a property breaks. Built two ways:
//  - by scripts/fuzz.sh with clang and -fsanitize=fuzzer,address,undefined (meson option
//    `fuzzing`): libFuzzer's own main generates inputs;
//  - by the normal build, with replay_main.cc: `meson test` runs every file of the target's
//    corpus, tests/fuzz/<target>/ (seeds, and every crash a fuzzer found), through it.
// Release builds define NDEBUG, so properties are checked with fuzz_check, never assert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Aborts (a crash libFuzzer reports, and a failed replay) when `ok` is false.
#define fuzz_check(ok, what)                                                              \
  do {                                                                                    \
    if (!(ok)) {                                                                          \
      std::fprintf(stderr, "fuzz_check failed at %s:%d: %s\n", __FILE__, __LINE__, what); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)
