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

#include <kj/async.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace cellar::rpc {

// Runs blocking store calls off the event loop.
class worker_pool {
 public:
  explicit worker_pool(std::size_t n) {
    for (std::size_t i = 0; i < std::max<std::size_t>(1, n); ++i) threads_.emplace_back([this] { run(); });
  }
  ~worker_pool() {
    {
      std::lock_guard l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void post(std::function<void()> f) {
    {
      std::lock_guard l(mu_);
      q_.push_back(std::move(f));
    }
    cv_.notify_one();
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> f;
      {
        std::unique_lock l(mu_);
        cv_.wait(l, [&] { return stop_ || !q_.empty(); });
        if (q_.empty()) return;
        f = std::move(q_.front());
        q_.pop_front();
      }
      f();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
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
