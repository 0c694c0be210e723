// store_options::worker_nap_polls: an idle CAF worker either naps 50 us at a time (each
// nap a timer wake-up) or blocks until a message or its idle timeout wakes it.
#include <dirent.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "cellar/store.h"
#include "store/scheduler_tuning.h"

namespace {

// Voluntary context switches of every thread of this process so far.
long voluntary_switches() {
  long total = 0;
  DIR* d = opendir("/proc/self/task");
  REQUIRE(d != nullptr);
  while (auto* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/status");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) total += std::stol(line.substr(24));
  }
  closedir(d);
  return total;
}

// Wake-ups of the whole process in the `window` after one write, the store otherwise idle.
long wakeups_after_a_write(std::size_t nap_polls, std::chrono::milliseconds idle_sleep = std::chrono::milliseconds(10),
                           std::chrono::milliseconds window = std::chrono::milliseconds(25)) {
  cellar::store_options o;
  o.worker_threads = 1;
  o.maintenance_interval = std::chrono::milliseconds(0);
  cellar::detail::scheduler_tuning tune;
  tune.spin_polls = 0;
  tune.nap_polls = nap_polls;
  tune.idle_sleep = idle_sleep;
  auto s = cellar::detail::open_store(o, tune).value();
  REQUIRE(
      s->create_table({"t", cellar::partition_spec::single(), {{"f"}}}, cellar::schema_origin::oceanbase_ddl).is_ok());
  auto t = s->open_table("t").value();
  REQUIRE(t.put(cellar::put("r").add("f", "q", "v")).is_ok());
  const long before = voluntary_switches();
  std::this_thread::sleep_for(window);
  return voluntary_switches() - before;
}

// Whether `holds` is true in one of a few tries. A busy machine only makes a napping worker
// wake less often (each nap then lasts longer than asked), never a blocked one more, so a
// try that holds shows the behaviour and one that does not may be the machine's load.
template <typename Try>
bool holds_in_one_of_a_few(Try&& holds) {
  for (int i = 0; i < 5; ++i)
    if (holds()) return true;
  return false;
}

}  // namespace

TEST_CASE("an idle worker blocks instead of napping when worker_nap_polls is 0", "[worker]") {
  CHECK(holds_in_one_of_a_few([] {
    const long napping = wakeups_after_a_write(500);  // CAF's default: 500 naps of 50 us
    const long blocking = wakeups_after_a_write(0);   // blocks; its idle timeout is 10 ms
    UNSCOPED_INFO("napping: " << napping << " wake-ups, blocking: " << blocking);
    return blocking * 4 < napping;
  }));
}

// cellar-server --worker-idle-sleep-ms: a blocked worker still wakes every idle_sleep to
// look for work to steal; each wake-up costs the core (docs/operations.md).
TEST_CASE("a blocked worker wakes every idle_sleep, no more", "[worker]") {
  using std::chrono::milliseconds;
  CHECK(holds_in_one_of_a_few([] {
    const long every_ms = wakeups_after_a_write(0, milliseconds(1), milliseconds(100));
    const long every_100ms = wakeups_after_a_write(0, milliseconds(100), milliseconds(100));
    UNSCOPED_INFO("idle_sleep 1 ms: " << every_ms << " wake-ups in 100 ms, 100 ms: " << every_100ms);
    // one a millisecond: about 100, fewer when the machine is busy
    return every_ms > 20 && every_100ms * 4 < every_ms;
  }));
}
