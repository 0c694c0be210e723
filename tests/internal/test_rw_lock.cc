// partition/rw_lock.h: readers in place share a partition; its actor is never kept
// waiting by readers that keep arriving.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "partition/rw_lock.h"

using cellar::detail::rw_lock;
using namespace std::chrono_literals;

TEST_CASE("rw_lock: readers share it, a writer excludes them", "[rw_lock]") {
  rw_lock mu;
  {
    std::shared_lock a(mu, std::try_to_lock);
    REQUIRE(a.owns_lock());
    // A second reader on another thread gets it too: two RPC loops read one partition.
    bool second = false;
    std::thread([&] {
      std::shared_lock b(mu, std::try_to_lock);
      second = b.owns_lock();
    }).join();
    CHECK(second);
    CHECK_FALSE(mu.try_lock());
  }
  std::unique_lock w(mu);
  bool reader = true;
  std::thread([&] {
    std::shared_lock b(mu, std::try_to_lock);
    reader = b.owns_lock();
  }).join();
  CHECK_FALSE(reader);
}

TEST_CASE("rw_lock: a waiting writer turns new readers away", "[rw_lock]") {
  rw_lock mu;
  std::shared_lock held(mu);  // a reader is in the partition
  std::atomic<bool> written{false};
  std::thread writer([&] {
    std::unique_lock w(mu);  // the actor: waits for the reader
    written = true;
  });
  // Once the writer waits, try_lock_shared fails (a reader-preferring lock would keep
  // letting readers in, and this loop would run until the deadline).
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  bool turned_away = false;
  while (!turned_away && std::chrono::steady_clock::now() < deadline) {
    std::shared_lock r(mu, std::try_to_lock);
    turned_away = !r.owns_lock();
    if (!turned_away) std::this_thread::sleep_for(100us);
  }
  CHECK(turned_away);
  CHECK_FALSE(written);
  held.unlock();
  writer.join();
  CHECK(written);
  std::shared_lock again(mu, std::try_to_lock);
  CHECK(again.owns_lock());
}
