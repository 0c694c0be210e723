// wait_until_idle (dispatch/dispatch.h), the gate of the snapshot's helper threads: it opens
// after quiet windows in a row, stays shut while a batch is in flight, and gives up when
// asked.
#include <catch2/catch.hpp>

#include <chrono>

#include "dispatch/dispatch.h"

using namespace std::chrono_literals;

TEST_CASE("the idle gate opens on a quiet store and stays shut while a batch is in flight", "[idle]") {
  cellar::detail::dispatch_stats stats;
  const auto never = [] { return false; };
  auto t0 = std::chrono::steady_clock::now();
  CHECK(wait_until_idle(stats, 3, 1ms, never));
  CHECK(std::chrono::steady_clock::now() - t0 >= 3ms);

  // A batch in flight: the gate stays shut until the caller gives up.
  stats.in_flight = 1;
  t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(wait_until_idle(stats, 3, 1ms, [&] { return std::chrono::steady_clock::now() - t0 > 50ms; }));
  // It ends: the gate opens.
  stats.in_flight = 0;
  CHECK(wait_until_idle(stats, 3, 1ms, never));
}
