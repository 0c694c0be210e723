// tests/loadgen: drives an engine as the load generator's driver does, for the engine tests.
#pragma once

#include <liburing.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "engine.h"

namespace loadgen::testing {

// Whether this kernel sets up an io_uring at all (asked without uring_io, so a ring that
// the engines fail to open shows as a failure where the kernel has io_uring).
inline bool kernel_has_io_uring() {
  io_uring r;
  if (io_uring_queue_init(8, &r, 0) != 0) return false;
  io_uring_queue_exit(&r);
  return true;
}

// Runs `ops` on `e`, `per_slot` operations per slot, up to `slots` slots (over
// `connections` connections, round robin) in flight at once; returns the slots, answered.
inline std::vector<slot> run_slots(engine& e, const std::vector<operation>& ops, std::size_t per_slot,
                                   std::size_t slots, int connections = 2) {
  std::vector<slot> all;
  for (std::size_t i = 0; i < ops.size(); i += per_slot) {
    slot s;
    s.conn = static_cast<int>(all.size() % static_cast<std::size_t>(connections));
    // One by one: GCC 12 takes vector::assign's memmove here for one with a null target
    // (-Wnonnull, a false positive of its inlining).
    for (std::size_t j = i; j < std::min(ops.size(), i + per_slot); ++j) s.ops.push_back(ops[j]);
    all.push_back(std::move(s));
  }
  std::size_t next = 0, answered = 0;
  std::vector<slot*> done;
  while (answered < all.size()) {
    while (next < all.size() && next - answered < slots) e.start(all[next++]);
    done.clear();
    e.wait(done, now_ns() + 5'000'000'000);
    REQUIRE(!done.empty());
    answered += done.size();
  }
  return all;
}

}  // namespace loadgen::testing
