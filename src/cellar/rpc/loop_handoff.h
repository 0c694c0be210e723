// rpc/loop_handoff.h: how work leaves a kj event loop and how its answer comes back.
//
// worker_pool: threads for calls that block (DDL, admin), so the loop never waits;
// from_any_thread / off_loop: a promise on the loop fulfilled from another thread;
// handoff: a value another thread delivers, kept until the loop asks for it, so a call
// answered before the loop waits needs no cross-thread promise at all.
//
// Thread safety: worker_pool::post, the delivering callbacks and handoff's deliverer may be
// called from any thread; the promises belong to the loop that made them.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <kj/async.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace cellar::rpc {

// Runs blocking store calls off the event loop, on up to `n` threads started as the calls
// come: a thread starts when a call is posted and every thread started is busy. A server
// that is never asked a blocking call (most serve reads and writes only) has no thread
// here, nor its stack.
class worker_pool {
 public:
  explicit worker_pool(std::size_t n) : most_(std::max<std::size_t>(1, n)) {}
  ~worker_pool() {
    std::vector<std::thread> threads;
    {
      absl::MutexLock l(&mu_);
      stop_ = true;
      threads.swap(threads_);  // no thread starts once stopping
    }
    for (auto& t : threads) t.join();
  }
  void post(std::function<void()> f) {
    absl::MutexLock l(&mu_);
    q_.push_back(std::move(f));
    // A waiting thread takes the call (the mutex's release wakes it); else a new one does.
    if (idle_ < q_.size() && threads_.size() < most_) threads_.emplace_back([this] { run(); });
  }
  // Threads started so far (tests).
  std::size_t threads() const {
    absl::MutexLock l(&mu_);
    return threads_.size();
  }

 private:
  void run() {
    absl::MutexLock l(&mu_);
    for (;;) {
      ++idle_;
      mu_.Await(absl::Condition(this, &worker_pool::has_work_or_stops));
      --idle_;
      if (q_.empty()) return;
      std::function<void()> f = std::move(q_.front());
      q_.pop_front();
      mu_.Unlock();
      f();
      f = nullptr;  // what the call captured goes before the next wait
      mu_.Lock();
    }
  }
  bool has_work_or_stops() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !q_.empty(); }

  const std::size_t most_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> q_ ABSL_GUARDED_BY(mu_);
  std::size_t idle_ ABSL_GUARDED_BY(mu_) = 0;  // threads waiting for a call
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

// A promise on the calling event loop, and the callback that fulfills it from any thread
// (the store's workers, the pool). The callback is called once.
template <class T>
std::pair<kj::Promise<T>, std::function<void(T)>> from_any_thread() {
  auto paf = kj::newPromiseAndCrossThreadFulfiller<T>();
  auto f = std::make_shared<kj::Own<kj::CrossThreadPromiseFulfiller<T>>>(kj::mv(paf.fulfiller));
  return {kj::mv(paf.promise), [f](T v) { (*f)->fulfill(kj::mv(v)); }};
}

// Runs `f` on the pool; the promise resolves on the event loop with its result.
template <class T>
kj::Promise<T> off_loop(worker_pool& pool, std::function<T()> f) {
  auto [promise, deliver] = from_any_thread<T>();
  pool.post([deliver = std::move(deliver), f = std::move(f)]() mutable { deliver(f()); });
  return kj::mv(promise);
}

// A value another thread delivers to this loop. Until the loop waits for it (`promise`),
// it is kept here, so a call answered before the loop waits needs no cross-thread
// promise at all.
template <class T>
class handoff : public std::enable_shared_from_this<handoff<T>> {
 public:
  // The callback for the other thread; called once.
  std::function<void(T)> deliverer() {
    return [self = this->shared_from_this()](T v) {
      std::lock_guard l(self->mu_);
      if (self->fulfiller_)
        self->fulfiller_->fulfill(kj::mv(v));
      else
        self->value_.emplace(std::move(v));
    };
  }
  // On the loop: resolves with the delivered value.
  kj::Promise<T> promise() {
    std::lock_guard l(mu_);
    if (value_) return kj::Promise<T>(std::move(*value_));
    auto paf = kj::newPromiseAndCrossThreadFulfiller<T>();
    fulfiller_ = kj::mv(paf.fulfiller);
    return kj::mv(paf.promise);
  }

 private:
  std::mutex mu_;
  std::optional<T> value_;
  kj::Own<kj::CrossThreadPromiseFulfiller<T>> fulfiller_;
};

}  // namespace cellar::rpc
