// util/resend.h: sending again the actions of a batch answered RESHAPING.
//
// A partition frozen by a split or merge of its table (or replaced by one) refuses writes
// RESHAPING without applying them; once the split commits, or is undone, the same actions
// succeed (routed to the new partitions). cellar's clients send them again themselves, as
// HBase's client does after a NotServingRegionException, so a writer sees the split only
// as a pause.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "cellar/ops.h"
#include "cellar/status.h"

namespace cellar::detail {

// How long a client sends an action again while it is answered RESHAPING: longer than a
// split's freeze (the copy's last delta, the build of the new partitions and one DDL).
inline constexpr std::chrono::milliseconds reshape_resend_wait{30'000};

// Sends `ops` with `send(const std::vector<batch_op>&, int attempt)` (answering one
// op_result each; attempt 0 first) and sends again, after a pause that grows from 5 ms to 200 ms, the
// actions answered RESHAPING, until none is or `wait` has passed; then the last answer of
// each action stands. Only RESHAPING actions go again: nothing of them was applied, and
// the actions of other partitions keep their answers.
template <class Send>
std::vector<op_result> resend_while_reshaping(std::vector<batch_op> ops, Send&& send,
                                              std::chrono::milliseconds wait = reshape_resend_wait) {
  auto out = send(ops, 0);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::milliseconds(5);
  for (int attempt = 1;; ++attempt) {
    std::vector<std::uint32_t> again;
    for (std::uint32_t i = 0; i < out.size() && i < ops.size(); ++i)
      if (out[i].st.code() == code::reshaping) again.push_back(i);
    if (again.empty() || std::chrono::steady_clock::now() >= deadline) return out;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
    std::vector<batch_op> part;
    part.reserve(again.size());
    for (auto i : again) part.push_back(ops[i]);
    auto r = send(part, attempt);
    for (std::size_t k = 0; k < again.size() && k < r.size(); ++k) out[again[k]] = std::move(r[k]);
  }
}

}  // namespace cellar::detail
