// store_options::idle_background_threads: with it, WiredTiger's own threads (and only
// they, of the threads running while the store opens) run at idle CPU priority, and the
// thread that opened the store keeps its name and priority; without it, no thread of the
// store is moved to idle priority.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/temp_dir.h"
#include "cellar/store.h"

namespace {

struct thread_seen {
  pid_t tid;
  std::string name;
  int policy;
};

std::vector<thread_seen> threads() {
  std::vector<thread_seen> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    const pid_t tid = static_cast<pid_t>(std::stoi(e.path().filename().string()));
    std::ifstream comm(e.path() / "comm");
    std::string name;
    std::getline(comm, name);
    out.push_back({tid, name, ::sched_getscheduler(tid)});
  }
  return out;
}

}  // namespace

TEST_CASE("idle_background_threads idles WiredTiger's threads and no other", "[persist][threads]") {
  const bool idle = GENERATE(true, false);
  INFO("idle_background_threads " << idle);
  testsupport::temp_dir tmp("cellar-thread-policy");
  const std::string& dir = tmp.path;
  // A thread of the program that starts while the store opens: never idled.
  std::atomic<bool> stop{false};
  std::atomic<pid_t> bystander{0};
  std::thread other([&] {
    bystander = ::gettid();
    while (!stop) std::this_thread::yield();
  });
  cellar::store_options o;
  o.directory = dir;
  o.idle_background_threads = idle;
  char before[16] = {};
  ::pthread_getname_np(::pthread_self(), before, sizeof before);
  auto s = cellar::store::open(o);
  REQUIRE(s);
  char after[16] = {};
  ::pthread_getname_np(::pthread_self(), after, sizeof after);
  CHECK(std::string(after) == before);
  std::size_t wt_threads = 0;
  for (const auto& t : threads()) {
    INFO("thread " << t.tid << " '" << t.name << "'");
    if (t.name == "cellar-wt") {
      ++wt_threads;
      CHECK(t.policy == SCHED_IDLE);
    } else {
      CHECK(t.policy != SCHED_IDLE);
    }
    if (t.tid == bystander.load()) CHECK(t.policy == SCHED_OTHER);
  }
  if (idle)
    CHECK(wt_threads > 0);  // WiredTiger runs its eviction server at least
  else
    CHECK(wt_threads == 0);
  stop = true;
  other.join();
  REQUIRE(s.value()->close());
}
