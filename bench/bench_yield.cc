// bench_yield: how a busy SCHED_IDLE thread delays a serving thread, and how often such a
// thread must yield (the evidence behind persist/yield.h).
//
// A memory-only store with --cells cells; one thread does synchronous puts for --seconds
// while a background thread at SCHED_IDLE does one of:
//   none       nothing (the baseline)
//   spin       spins without a break
//   yieldN     spins and calls sched_yield() every N microseconds
// and prints put latency p50/p99/p99.9 for each, in rounds that alternate the modes.
//
// Usage: bench_yield [--cells N] [--seconds S] [--rounds R] [modes...]
//        (default modes: none spin yield10 yield50 yield200)
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cellar/store.h"

using namespace cellar;
using clk = std::chrono::steady_clock;

namespace {

std::string key(long i) {
  char b[32];
  std::snprintf(b, sizeof b, "user%012ld", i);
  return b;
}

double micros(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

void background(const std::string& mode, const std::atomic<bool>& stop) {
  sched_param p{};
  ::sched_setscheduler(0, SCHED_IDLE, &p);
  if (mode == "none") return;
  const long every = mode == "spin" ? -1 : std::atol(mode.c_str() + 5);
  volatile long x = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    const auto a = clk::now();
    while ((every < 0 || micros(a, clk::now()) < every) && !stop.load(std::memory_order_relaxed)) x = x + 1;
    ::sched_yield();
  }
}

}  // namespace

int main(int argc, char** argv) {
  long cells = 1'000'000;
  double seconds = 3;
  int rounds = 2;
  std::vector<std::string> modes;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cells" && i + 1 < argc)
      cells = std::atol(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (a == "none" || a == "spin" || a.rfind("yield", 0) == 0)
      modes.push_back(a);
    else {
      std::fprintf(stderr, "usage: bench_yield [--cells N] [--seconds S] [--rounds R] [none|spin|yieldN ...]\n");
      return 2;
    }
  }
  if (modes.empty()) modes = {"none", "spin", "yield10", "yield50", "yield200"};
  auto s = store::open({}).value();
  if (!s->create_table({"t", partition_spec::hash(4), {{"f", 1}}}, schema_origin::oceanbase_ddl)) return 1;
  auto t = s->open_table("t").value();
  const std::string v(100, 'v');
  std::vector<cellar::put> batch;
  for (long i = 0; i < cells; ++i) {
    batch.push_back(put(key(i)).add("f", "q", v));
    if (batch.size() == 1000 || i + 1 == cells) {
      if (!t.put(batch)) return 1;
      batch.clear();
    }
  }
  std::printf("mode       puts      p50     p99   p99.9  (us)\n");
  for (int r = 0; r < rounds; ++r)
    for (const auto& mode : modes) {
      std::atomic<bool> stop{false};
      std::thread bg([&] { background(mode, stop); });
      std::vector<double> lat;
      const auto t0 = clk::now();
      for (long i = 0; micros(t0, clk::now()) < seconds * 1e6; ++i) {
        const auto a = clk::now();
        if (!t.put(put(key((i * 7919) % cells)).add("f", "q", v))) return 1;
        lat.push_back(micros(a, clk::now()));
      }
      stop = true;
      bg.join();
      std::sort(lat.begin(), lat.end());
      std::printf("%-9s %6zu  %6.1f  %6.1f  %6.1f\n", mode.c_str(), lat.size(), lat[lat.size() / 2],
                  lat[lat.size() * 99 / 100], lat[lat.size() * 999 / 1000]);
    }
  return 0;
}
