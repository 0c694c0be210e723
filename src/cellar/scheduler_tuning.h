// scheduler_tuning.h: how idle CAF workers wait for work. Internal: set by cellar-server's
// flags, the benchmarks and tests; not part of the public store_options.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "cellar/store.h"

namespace cellar::detail {

struct scheduler_tuning {
  // Queue polls an idle worker spins through before it sleeps (a few ms of spinning
  // after the last request): a hand-off to a spinning worker is far cheaper than waking a
  // sleeping one; 0 makes workers sleep at once and saves idle CPU.
  std::size_t spin_polls = 30000;
  // Then polls with a 50 us nap between them (CAF's "moderate" phase) before it blocks
  // until a message wakes it. Each nap is a timer wake-up, which costs far more than the
  // poll on a virtual machine; 0 makes an idle worker block at once.
  std::size_t nap_polls = 500;
  // Longest sleep of an idle worker between polls: the worst extra latency of the first
  // request after a quiet spell.
  std::chrono::microseconds idle_sleep{1000};
};

// store::open with the workers tuned as given (store::open uses the defaults above).
result<std::unique_ptr<store>> open_store(store_options options, const scheduler_tuning& tuning);

}  // namespace cellar::detail
