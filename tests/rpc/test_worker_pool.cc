// rpc::worker_pool starts its threads as blocking calls come, up to its limit.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "rpc/loop_handoff.h"

using cellar::rpc::worker_pool;

namespace {

// Calls that block until released, and say when they have started.
struct gate {
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  bool open = false;
  void call() {
    std::unique_lock l(mu);
    ++started;
    cv.notify_all();
    cv.wait(l, [&] { return open; });
  }
  void wait_started(int n) {
    std::unique_lock l(mu);
    cv.wait(l, [&] { return started >= n; });
  }
  void release() {
    std::lock_guard l(mu);
    open = true;
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("worker_pool: no thread until a call, one per call in progress, at most its limit", "[rpc][worker_pool]") {
  gate g;
  std::atomic<int> done{0};
  {
    auto call = [&] {
      g.call();
      ++done;
    };
    worker_pool pool(3);
    CHECK(pool.threads() == 0);
    for (int i = 0; i < 2; ++i) pool.post(call);
    g.wait_started(2);  // two calls in progress at once: two threads
    CHECK(pool.threads() == 2);
    for (int i = 0; i < 4; ++i) pool.post(call);
    g.wait_started(3);
    CHECK(pool.threads() == 3);  // the limit; the other calls wait their turn
    g.release();
  }  // the destructor runs what is queued, then joins
  CHECK(done == 6);
}
