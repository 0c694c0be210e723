// persist/yield.h: snapshot threads give their core back every 10 microseconds.
//
// Snapshot threads run at SCHED_IDLE, yet under some hypervisors a serving thread woken
// onto a core that runs one waits for that thread to leave the CPU, so the loops of
// snapshot work call this between items to bound that wait (build/bench/bench_yield
// measures it; docs/benchmarks.md has the figures).
#pragma once

#include <sched.h>

#include <chrono>

namespace cellar::detail {

// Loops whose items take well under a microsecond pass `calls_per_check` > 1: reading the
// clock would otherwise cost a noticeable share of each item.
inline void background_yield(unsigned calls_per_check = 1) {
  using clock = std::chrono::steady_clock;
  thread_local clock::time_point last = clock::now();
  thread_local unsigned calls = 0;
  if (++calls < calls_per_check) return;
  calls = 0;
  const auto now = clock::now();
  if (now - last < std::chrono::microseconds(10)) return;
  ::sched_yield();
  last = clock::now();
}

}  // namespace cellar::detail
