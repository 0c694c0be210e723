// persist/yield.h: snapshot threads give their core back every 10 microseconds.
//
// Snapshot threads run at SCHED_IDLE, yet on the VMs this was measured on (Linux 6.18 under
// Firecracker, 2 vCPUs) a serving thread woken onto a core that runs one often waits for
// that thread to leave the CPU. build/bench/bench_yield, put p99 next to a SCHED_IDLE
// thread (two rounds): idle 39-61 us; spinning 101-115 us; yielding every 10 us 42-62 us,
// every 50 us 54-68 us, every 200 us 91-103 us. So the loops of snapshot work call this
// between items. In a real snapshot the gain is smaller (p99 during a full-store snapshot
// 96-113 us with the yields, 114-118 us without, alternating runs): most of what is left
// comes from work that cannot yield, inside WiredTiger and the kernel (docs/benchmarks.md).
#pragma once

#include <sched.h>

#include <chrono>

namespace cellar::detail {

// Loops whose items take well under a microsecond pass `calls_per_check` > 1: reading the
// clock costs ~21 ns here, a third of what the bulk load spends per cell.
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
