// dispatch/dispatch_inl.h: templates of dispatch/dispatch.h.
#pragma once

#include <latch>
#include <mutex>

#include "partition/ask.h"

namespace cellar::detail {

template <class Reply, class Make>
std::vector<result<Reply>> ask_all(caf::actor_system& sys, const table_runtime& rt, Make make) {
  const auto n = rt.partitions.size();
  std::vector<std::optional<result<Reply>>> got(n);
  std::latch left(static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 0; i < n; ++i)
    ask<Reply>(sys, rt.partitions[i].actor, make(static_cast<std::uint32_t>(i)), [&got, &left, i](result<Reply> r) {
      got[i].emplace(std::move(r));
      left.count_down();
    });
  left.wait();
  std::vector<result<Reply>> out;
  out.reserve(n);
  for (auto& g : got) out.push_back(std::move(*g));
  return out;
}

}  // namespace cellar::detail
