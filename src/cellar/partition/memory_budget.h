// partition/memory_budget.h: a node's memory limit and each partition's account in it.
//
// A `memory_pool` is the limit of one node (store_options::memory_limit_bytes) and the
// bytes of cell data charged against it. Each partition holds a `memory_account` in its
// node's pool: the bytes its cells take. A write that would take the pool past its limit is
// refused (MEMORY_LIMIT) before anything changes; deletes and overwrites with smaller
// values always go through. A partition that moves to another node charges that node's
// pool from then on; its account is returned to the old pool when it goes.
//
// Thread safety: the pool is shared by every partition of the node (atomics); an account
// belongs to its partition's owner.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "cellar/status.h"

namespace cellar::detail {

class memory_pool {
 public:
  // `limit` 0: unlimited.
  explicit memory_pool(std::uint64_t limit = 0) : limit_(limit) {}
  memory_pool(const memory_pool&) = delete;
  memory_pool& operator=(const memory_pool&) = delete;

  std::uint64_t limit() const { return limit_; }
  std::int64_t used() const { return used_.load(std::memory_order_relaxed); }

  // Whether `bytes` more fit under the limit now.
  status reserve(std::int64_t bytes) const {
    if (limit_ == 0 || bytes <= 0) return status::ok();
    const auto in_use = used();
    if (in_use + bytes > static_cast<std::int64_t>(limit_))
      return {code::memory_limit, "memory limit of " + std::to_string(limit_) + " bytes reached (" +
                                      std::to_string(in_use) + " in use); nothing was written"};
    return status::ok();
  }
  void charge(std::int64_t delta) { used_.fetch_add(delta, std::memory_order_relaxed); }

 private:
  const std::uint64_t limit_;
  std::atomic<std::int64_t> used_{0};
};

class memory_account {
 public:
  // `pool` may be null: no limit, nothing shared.
  explicit memory_account(memory_pool* pool) : pool_(pool) {}
  ~memory_account() {
    if (pool_) pool_->charge(-held_);
  }
  memory_account(const memory_account&) = delete;
  memory_account& operator=(const memory_account&) = delete;

  status reserve(std::int64_t bytes) const { return pool_ ? pool_->reserve(bytes) : status::ok(); }
  void charge(std::int64_t delta) {
    held_ += delta;
    if (pool_) pool_->charge(delta);
  }
  std::int64_t held() const { return held_; }

 private:
  memory_pool* pool_;
  std::int64_t held_ = 0;
};

}  // namespace cellar::detail
