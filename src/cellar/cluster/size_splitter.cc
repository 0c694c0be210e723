// cluster/size_splitter.cc: size-driven splits of the partitions a node is responsible for
// (size_splitter.h).
#include "cluster/size_splitter.h"

#include <spdlog/spdlog.h>

#include <absl/time/time.h>

#include <future>
#include <set>

#include "partition/ask.h"
#include "store/reshape.h"

namespace cellar::cluster {

size_splitter::size_splitter(caf::actor_system& sys, size_splitter_options options)
    : sys_(sys), opts_(std::move(options)) {
  thread_ = std::thread([this] { run(); });
}

size_splitter::~size_splitter() {
  stop();
  thread_.join();
}

void size_splitter::stop() {
  absl::MutexLock lock(&mu_);
  stop_ = true;
}

bool size_splitter::stopping() const {
  absl::MutexLock lock(&mu_);
  return stop_;
}

void size_splitter::run() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      const auto stopped = [this] {
        mu_.AssertHeld();
        return stop_;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopped), absl::FromChrono(opts_.interval))) return;
    }
    round();
  }
}

void size_splitter::round() {
  std::set<std::string> split;  // tables a split was tried on this round
  for (const auto& c : opts_.candidates()) {
    if (stopping()) return;
    if (split.count(c.table)) continue;
    std::promise<result<detail::stats_reply>> got;
    auto answer = got.get_future();
    detail::ask<detail::stats_reply>(sys_, c.actor, detail::stats_request{},
                                     [&got](result<detail::stats_reply> r) { got.set_value(std::move(r)); });
    auto stats = answer.get();
    if (!stats || stats->stats.bytes <= c.limit) continue;
    // Read here, from the partition (a replicated one: only if this replica leads).
    auto mid = detail::middle_row_of(sys_, c.actor, c.replicated);
    if (!mid) {
      if (mid.code() != code::not_leader)
        spdlog::warn(
            "cellar: node '{}' could not find the middle row of partition {} of '{}' to split it by its "
            "MAX_FILESIZE: {}",
            opts_.self, c.index, c.table, mid.error().to_string());
      continue;
    }
    if (!mid->has_value()) continue;  // one row, however large, is not split
    if (stopping()) return;
    detail::reshape_call call{detail::reshape_call::kind::split_region, c.table, c.index, **mid};
    call.uid = c.uid;
    split.insert(c.table);
    auto st = opts_.split(call);
    if (st) {
      spdlog::info("cellar: node '{}' split partition {} of '{}' at '{}': it held {} bytes, over its MAX_FILESIZE {}",
                   opts_.self, c.index, c.table, **mid, stats->stats.bytes, c.limit);
    } else if (st.code() == code::conflict || stopping()) {
      spdlog::debug("cellar: node '{}' splits partition {} of '{}' by its MAX_FILESIZE later: {}", opts_.self, c.index,
                    c.table, st.to_string());
    } else {
      spdlog::warn("cellar: node '{}' splitting partition {} of '{}' by its MAX_FILESIZE: {}", opts_.self, c.index,
                   c.table, st.to_string());
    }
  }
}

}  // namespace cellar::cluster
