// dispatch/call_order.h: the ordering rule, in one place.
//
// A caller is whoever issues calls and expects them to take effect in the order it issued
// them: one RPC or frames connection, or the embedded API of a store (all its threads
// together). The rule (docs/concurrency.md):
//
//   Calls of one caller to one partition take effect in the order the caller issued them.
//
// A partition's actor runs what reaches its mailbox in order, so calls that go through the
// actor keep their order by themselves. A call that runs in place (local_partition) skips the
// mailbox, so it may do so only if it cannot overtake an earlier call of the same caller
// still waiting at that partition:
//   - a read may run in place unless a write of the caller waits at the partition;
//   - a write may run in place only if nothing of the caller waits there;
//   - nothing runs in place while the caller has a barrier up (a DDL or admin call in
//     flight on an RPC connection: its effect on every partition must come first).
// Partitions are independent of each other (consistency is per partition, as in OBKV), so
// what waits at one partition never holds back calls to another.
//
// The dispatcher (dispatch/dispatch.h) asks `may_run_now` before it runs a part in place, and
// brackets every part it sends to an actor with `enter` / `leave`; scan pages likewise.
//
// Thread safety: every member may be called from any thread. `may_run_now` takes no lock
// while the caller has nothing waiting anywhere (the common case).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace cellar::detail {

// A partition, by table group uid and partition number: unique for the life of a store.
struct partition_id {
  std::uint64_t table_uid = 0;
  std::uint32_t index = 0;
  friend bool operator==(const partition_id&, const partition_id&) = default;
};

class call_order {
 public:
  call_order() = default;
  call_order(const call_order&) = delete;
  call_order& operator=(const call_order&) = delete;

  // Whether a call (`writes`: it changes something) may run in place at `p` now.
  bool may_run_now(const partition_id& p, bool writes) const {
    if (busy_.load(std::memory_order_acquire) == 0) return true;
    std::lock_guard l(mu_);
    if (barriers_ > 0) return false;
    for (const auto& w : at_)
      if (w.p == p) return w.writes == 0 && (!writes || w.reads == 0);
    return true;
  }

  // A call of this caller now waits at `p` (sent to its actor) ...
  void enter(const partition_id& p, bool writes) {
    std::lock_guard l(mu_);
    busy_.fetch_add(1, std::memory_order_acq_rel);
    auto it = std::find_if(at_.begin(), at_.end(), [&](const waiting& w) { return w.p == p; });
    if (it == at_.end()) it = at_.insert(at_.end(), waiting{p, 0, 0});
    ++(writes ? it->writes : it->reads);
  }
  // ... and has been run there.
  void leave(const partition_id& p, bool writes) {
    std::lock_guard l(mu_);
    auto it = std::find_if(at_.begin(), at_.end(), [&](const waiting& w) { return w.p == p; });
    if (it == at_.end()) return;
    --(writes ? it->writes : it->reads);
    if (it->reads == 0 && it->writes == 0) {
      *it = at_.back();
      at_.pop_back();
    }
    busy_.fetch_sub(1, std::memory_order_acq_rel);
  }

  // A call whose effect every later call of the caller must see (DDL, admin) is in flight.
  void raise_barrier() {
    std::lock_guard l(mu_);
    ++barriers_;
    busy_.fetch_add(1, std::memory_order_acq_rel);
  }
  void lower_barrier() {
    std::lock_guard l(mu_);
    if (barriers_ == 0) return;
    --barriers_;
    busy_.fetch_sub(1, std::memory_order_acq_rel);
  }

  // Calls of this caller waiting at partitions, and barriers up.
  std::size_t pending() const { return busy_.load(std::memory_order_acquire); }

 private:
  struct waiting {
    partition_id p;
    std::uint32_t reads, writes;
  };
  mutable std::mutex mu_;
  std::atomic<std::uint32_t> busy_{0};  // entries of at_ (counted per call) plus barriers
  std::vector<waiting> at_;             // a handful at most: calls in flight are few
  std::uint32_t barriers_ = 0;
};

}  // namespace cellar::detail
