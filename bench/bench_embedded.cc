// bench/bench_embedded.cc: cellar's embedded API against a bare ordered map.
//
// One process, one run. The same data (N rows, 16-byte keys, one 100-byte value per row in
// one family) is loaded into a cellar table (KEY-hash partitioned, one partition actor per
// partition) and into a bare absl::btree_map<std::string, std::string> keyed by row (and a
// std::map, unless --no-std-map). Then the same operations run on each side for --seconds
// per phase:
//
//   put            one random row overwritten (same size value)
//   get            one random row read
//   multi-get B    B random rows read in one call (table::get(std::vector<get>)), B = --batch
//   scan 100       100 rows from a random start (table::scan, limit 100)
//   async get B    table::batch_async of B gets, K batches in flight (--inflight K)
//   async put B    table::batch_async of B puts, K batches in flight
//
// The bare map does the same work in its most direct form: find / lower_bound and a copy
// of the value (and key, for scans) out, as cellar's results are copies.
//
// Threads: the cellar side runs --threads client threads (sync forms) or one issuing
// thread (async forms), plus the store's CAF workers (--workers, 0 = one per core). The
// bare maps run on ONE thread, no locks: they are the floor an in-process store cannot
// beat, not a concurrent competitor. Every figure is the median of --reps repetitions; the
// phases of one repetition alternate between the sides so drift hits both alike. CPU
// columns: process CPU time per op for cellar (client threads + CAF workers, spinning
// included), thread CPU time per op for the bare map.
//
// Puts carry a fixed timestamp by default (the load's), so an overwrite replaces the one
// version and the data set keeps its size; --server-ts lets the store stamp them instead.
//
// Output: one markdown table; ratio = bare btree ops/s / cellar ops/s (lower is better
// for cellar; the goal for batched gets is <= 2.0). Run with --help for every option.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <semaphore>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <absl/container/btree_map.h>
#include <absl/strings/string_view.h>

#include "cellar/store.h"
#include "store/scheduler_tuning.h"

namespace {

using clock_type = std::chrono::steady_clock;

struct bench_options {
  std::uint64_t rows = 1'000'000;
  std::uint32_t partitions = 4;
  int threads = 2;
  double seconds = 2.0;
  int inflight = 8;
  std::size_t batch = 16;
  int reps = 3;
  std::size_t workers = 0;
  bool std_map = true;
  bool async = true;
  bool server_ts = false;
  bool bare = true;
  long spin_polls = -1;     // -1: the library's default
  long idle_sleep_us = -1;  // -1: the library's default
  std::string only;         // comma-separated phase names; empty = all
};

constexpr std::size_t key_bytes = 16;
constexpr std::size_t value_bytes = 100;
// Rows per multi-get and per async batch (--batch B, default 16).
std::size_t multi_get_rows = 16;
constexpr std::size_t scan_rows = 100;
std::size_t& batch_rows = multi_get_rows;
constexpr std::int64_t load_timestamp = 1'700'000'000'000;
const std::string family = "f";
const std::string qualifier = "q";

void usage() {
  std::fprintf(stderr,
               "usage: bench_embedded [--rows N] [--partitions P] [--threads T] [--seconds S]\n"
               "                      [--inflight K] [--batch B] [--reps R] [--workers W] [--no-std-map]\n"
               "                      [--no-async] [--server-ts] [--no-bare] [--only LIST]\n"
               "  --rows N        rows loaded (default 1000000; 16-byte keys, 100-byte values)\n"
               "  --partitions P  KEY-hash partitions of the cellar table (default 4)\n"
               "  --threads T     client threads for cellar's sync calls (default 2)\n"
               "  --seconds S     seconds per phase and repetition (default 2)\n"
               "  --inflight K    batch_async batches in flight (default 8)\n"
               "  --batch B       rows per multi-get and per async batch (default 16)\n"
               "  --reps R        repetitions per figure, the median is shown (default 3)\n"
               "  --workers W     CAF worker threads (default 0: one per core)\n"
               "  --no-std-map    skip the std::map column\n"
               "  --no-async      skip the batch_async phases\n"
               "  --server-ts     puts take the store's clock instead of a fixed timestamp\n"
               "  --spin-polls N  scheduler_tuning::spin_polls (default: the library's)\n"
               "  --idle-sleep-us N  scheduler_tuning::idle_sleep (default: the library's)\n"
               "  --no-bare       skip the bare maps (for profiling cellar alone)\n"
               "  --only LIST     run only these phases, comma-separated, from:\n"
               "                  put,get,multi-get,scan,async-get,async-put\n");
}

bool parse(int argc, char** argv, bench_options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto next = [&](double& out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      out = std::strtod(argv[++i], &end);
      return end && *end == '\0' && out >= 0;
    };
    double v = 0;
    if (a == "--rows") {
      if (!next(v) || v < scan_rows) return false;
      o.rows = static_cast<std::uint64_t>(v);
    } else if (a == "--partitions") {
      if (!next(v) || v < 1) return false;
      o.partitions = static_cast<std::uint32_t>(v);
    } else if (a == "--threads") {
      if (!next(v) || v < 1) return false;
      o.threads = static_cast<int>(v);
    } else if (a == "--seconds") {
      if (!next(v) || v <= 0) return false;
      o.seconds = v;
    } else if (a == "--inflight") {
      if (!next(v) || v < 1 || v > 1024) return false;
      o.inflight = static_cast<int>(v);
    } else if (a == "--batch") {
      if (!next(v) || v < 1 || v > 100000) return false;
      o.batch = static_cast<std::size_t>(v);
    } else if (a == "--reps") {
      if (!next(v) || v < 1) return false;
      o.reps = static_cast<int>(v);
    } else if (a == "--workers") {
      if (!next(v)) return false;
      o.workers = static_cast<std::size_t>(v);
    } else if (a == "--no-std-map") {
      o.std_map = false;
    } else if (a == "--no-async") {
      o.async = false;
    } else if (a == "--server-ts") {
      o.server_ts = true;
    } else if (a == "--spin-polls") {
      if (!next(v)) return false;
      o.spin_polls = static_cast<long>(v);
    } else if (a == "--idle-sleep-us") {
      if (!next(v)) return false;
      o.idle_sleep_us = static_cast<long>(v);
    } else if (a == "--no-bare") {
      o.bare = false;
      o.std_map = false;
    } else if (a == "--only") {
      if (i + 1 >= argc) return false;
      o.only = argv[++i];
    } else {
      return false;
    }
  }
  return true;
}

// splitmix64: a tiny, good-enough PRNG, one per thread.
struct rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
};

// Row i is "r" followed by i as 15 zero-padded digits: 16 bytes, sorted like i.
struct key_buf {
  char b[key_bytes];
  std::string_view view() const { return {b, key_bytes}; }
  std::string str() const { return std::string(b, key_bytes); }
};

key_buf make_key(std::uint64_t i) {
  key_buf k;
  k.b[0] = 'r';
  for (std::size_t p = key_bytes - 1; p >= 1; --p) {
    k.b[p] = static_cast<char>('0' + i % 10);
    i /= 10;
  }
  return k;
}

std::string make_value(std::uint64_t i, std::uint64_t salt) {
  std::string v(value_bytes, 'v');
  std::uint64_t x = i * 0x9e3779b97f4a7c15ULL + salt;
  for (std::size_t p = 0; p < value_bytes; ++p) {
    v[p] = static_cast<char>('a' + (x >> (p % 56)) % 26);
  }
  return v;
}

// The first three fields of /proc/loadavg: other work on the machine skews every figure.
std::string loadavg() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "?";
  char buf[128] = {0};
  if (!std::fgets(buf, sizeof buf, f)) buf[0] = 0;
  std::fclose(f);
  std::string s(buf);
  std::size_t cut = 0;
  for (int fields = 0; cut < s.size() && fields < 3; ++cut) {
    if (s[cut] == ' ' && ++fields == 3) break;
  }
  return s.substr(0, cut);
}

double cpu_seconds(clockid_t which) {
  timespec ts{};
  clock_gettime(which, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

[[noreturn]] void die(const std::string& what, const cellar::status& st) {
  std::fprintf(stderr, "bench_embedded: %s: %s\n", what.c_str(), st.to_string().c_str());
  std::exit(1);
}

// What one phase of one side measured.
struct sample {
  double ops_per_s = 0;
  double cpu_us_per_op = 0;  // CPU time of the process (cellar) or the thread (bare map)
  double p50_us = 0;
  double p99_us = 0;
  std::uint64_t errors = 0;
};

// The first failure seen, kept for the report.
struct error_log {
  std::mutex m;
  std::string first;
  std::atomic<std::uint64_t> count{0};
  void add(const std::string& what) {
    if (count.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> g(m);
      first = what;
    }
  }
};

error_log errors;

double percentile_us(std::vector<std::uint32_t>& ns, double q) {
  if (ns.empty()) return 0;
  std::size_t idx = static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1));
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(idx), ns.end());
  return ns[idx] / 1000.0;
}

std::uint32_t elapsed_ns(clock_type::time_point t0, clock_type::time_point t1) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  return ns > 0xffffffffLL ? 0xffffffffu : static_cast<std::uint32_t>(ns);
}

// Runs `op(rng&)` on `threads` threads for `seconds`, timing every call.
// `op` returns false on a failed call.
sample run_sync(int threads, double seconds, std::uint64_t seed, const std::function<bool(rng&)>& op) {
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::vector<std::vector<std::uint32_t>> lat(threads);
  std::vector<std::uint64_t> fails(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      rng r{seed * 7919 + static_cast<std::uint64_t>(t) * 104729 + 1};
      auto& mine = lat[t];
      mine.reserve(1 << 20);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      while (!stop.load(std::memory_order_relaxed)) {
        auto t0 = clock_type::now();
        bool ok = op(r);
        auto t1 = clock_type::now();
        mine.push_back(elapsed_ns(t0, t1));
        if (!ok) ++fails[t];
      }
    });
  }
  auto start = clock_type::now();
  double cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
  go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& th : pool) th.join();
  double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
  double cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;

  std::vector<std::uint32_t> all;
  std::uint64_t n = 0;
  for (auto& v : lat) n += v.size();
  all.reserve(n);
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  sample s;
  s.ops_per_s = static_cast<double>(n) / elapsed;
  s.cpu_us_per_op = n ? cpu * 1e6 / static_cast<double>(n) : 0;
  s.p50_us = percentile_us(all, 0.50);
  s.p99_us = percentile_us(all, 0.99);
  for (auto f : fails) s.errors += f;
  return s;
}

// One thread keeps `inflight` batch_async calls going for `seconds`. `make` builds one
// batch; `check` validates its answer (called on a CAF worker, must not block).
sample run_async(cellar::table& t, int inflight, double seconds, std::uint64_t seed,
                 const std::function<std::vector<cellar::batch_op>(rng&)>& make,
                 const std::function<bool(const std::vector<cellar::op_result>&)>& check) {
  std::counting_semaphore<1024> slots(inflight);
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint64_t> fails{0};
  // Latencies, written by CAF workers without locks: one slot per finished batch.
  std::size_t cap = static_cast<std::size_t>(seconds * 4'000'000) + 1024;
  std::vector<std::uint32_t> lat(cap);
  std::atomic<std::size_t> lat_n{0};

  rng r{seed * 31337 + 17};
  auto start = clock_type::now();
  double cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
  auto deadline = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds));
  while (clock_type::now() < deadline) {
    slots.acquire();
    auto ops = make(r);
    auto t0 = clock_type::now();
    t.batch_async(std::move(ops), [&, t0](std::vector<cellar::op_result> res) {
      auto t1 = clock_type::now();
      if (!check(res)) fails.fetch_add(1, std::memory_order_relaxed);
      std::size_t i = lat_n.fetch_add(1, std::memory_order_relaxed);
      if (i < cap) lat[i] = elapsed_ns(t0, t1);
      done.fetch_add(1, std::memory_order_release);
      slots.release();
    });
  }
  for (int i = 0; i < inflight; ++i) slots.acquire();  // drain
  double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
  double cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  lat.resize(std::min(cap, lat_n.load()));
  sample s;
  auto n_done = done.load(std::memory_order_acquire);
  s.ops_per_s = static_cast<double>(n_done) / elapsed;
  s.cpu_us_per_op = n_done ? cpu * 1e6 / static_cast<double>(n_done) : 0;
  s.p50_us = percentile_us(lat, 0.50);
  s.p99_us = percentile_us(lat, 0.99);
  s.errors = fails.load();
  return s;
}

// Single-threaded loop over `op` for `seconds`; the clock is read every 64 calls only, so
// the bare map is not slowed by timing.
sample run_bare(double seconds, std::uint64_t seed, const std::function<void(rng&)>& op) {
  rng r{seed * 7919 + 1};
  auto start = clock_type::now();
  double cpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  auto deadline = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds));
  std::uint64_t n = 0;
  for (;;) {
    for (int i = 0; i < 64; ++i) op(r);
    n += 64;
    if (clock_type::now() >= deadline) break;
  }
  double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
  double cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  sample s;
  s.ops_per_s = static_cast<double>(n) / elapsed;
  s.cpu_us_per_op = cpu * 1e6 / static_cast<double>(n);
  return s;
}

// The bare-map side: the same operations, in the most direct form. Reads copy the value
// (and the key for scans) out, as cellar's results do.
// View is the heterogeneous-lookup key type of the map: Debian's abseil has its own
// absl::string_view (not std::string_view), so btree_map lookups take that one.
template <class Map, class View>
struct bare_side {
  Map m;
  std::uint64_t sink = 0;  // keeps the copies observable

  void load(std::uint64_t rows) {
    for (std::uint64_t i = 0; i < rows; ++i) m.emplace(make_key(i).str(), make_value(i, 0));
  }
  void put(std::uint64_t rows, rng& r, std::uint64_t salt) {
    std::uint64_t i = r.below(rows);
    auto k = make_key(i);
    std::string v = make_value(i, salt);
    auto it = m.find(View(k.b, key_bytes));
    if (it != m.end()) {
      it->second = std::move(v);
    } else {
      m.emplace(k.str(), std::move(v));
    }
  }
  void get(std::uint64_t rows, rng& r) {
    auto k = make_key(r.below(rows));
    auto it = m.find(View(k.b, key_bytes));
    if (it != m.end()) {
      std::string v = it->second;
      sink += v.size();
    }
  }
  void multi_get(std::uint64_t rows, rng& r) {
    std::vector<std::string> out;
    out.reserve(multi_get_rows);
    for (std::size_t j = 0; j < multi_get_rows; ++j) {
      auto k = make_key(r.below(rows));
      auto it = m.find(View(k.b, key_bytes));
      out.push_back(it != m.end() ? it->second : std::string());
    }
    sink += out.back().size();
  }
  void scan(std::uint64_t rows, rng& r) {
    auto k = make_key(r.below(rows - scan_rows + 1));
    std::vector<std::pair<std::string, std::string>> out;
    out.reserve(scan_rows);
    for (auto it = m.lower_bound(View(k.b, key_bytes)); it != m.end() && out.size() < scan_rows; ++it) {
      out.emplace_back(it->first, it->second);
    }
    sink += out.size();
  }
  void put_batch(std::uint64_t rows, rng& r, std::uint64_t salt) {
    for (std::size_t j = 0; j < batch_rows; ++j) put(rows, r, salt);
  }
};

using btree_side = bare_side<absl::btree_map<std::string, std::string>, absl::string_view>;
using stdmap_side = bare_side<std::map<std::string, std::string, std::less<>>, std::string_view>;

bool good_row(const cellar::row_result& r) {
  return r.exists && r.cells.size() == 1 && r.cells[0].value.size() == value_bytes;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct figure_row {
  std::string phase;  // name for --only
  std::string name;
  std::size_t rows_per_op;
  bool has_latency;
  std::vector<sample> cellar, btree, stdmap;
};

std::string fmt_rate(double v) {
  char buf[32];
  if (v <= 0) return "-";
  if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f M", v / 1e6);
  } else if (v >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1f k", v / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  }
  return buf;
}

// The cellar side's operations on `table` (rows 0..N-1), each checking its answer: a
// failure goes to `errors` and makes it return false.
struct cellar_ops {
  cellar::table& table;
  std::uint64_t N;
  std::int64_t put_ts;
  std::atomic<std::uint64_t>& salt;

  bool put(rng& r) {
    std::uint64_t i = r.below(N);
    cellar::put p(make_key(i).str(), put_ts);
    p.add(family, qualifier, make_value(i, salt.fetch_add(1, std::memory_order_relaxed)));
    auto st = table.put(p);
    if (!st) errors.add("put: " + st.to_string());
    return st.is_ok();
  }
  bool get(rng& r) {
    auto res = table.get(cellar::get(make_key(r.below(N)).str()));
    if (!res) {
      errors.add("get: " + res.error().to_string());
      return false;
    }
    if (!good_row(*res)) {
      errors.add("get: wrong row (exists=" + std::to_string(res->exists) +
                 ", cells=" + std::to_string(res->cells.size()) + ")");
      return false;
    }
    return true;
  }
  bool multi_get(rng& r) {
    std::vector<cellar::get> gets;
    gets.reserve(multi_get_rows);
    for (std::size_t j = 0; j < multi_get_rows; ++j) gets.emplace_back(make_key(r.below(N)).str());
    auto res = table.get(gets);
    if (!res) {
      errors.add("multi-get: " + res.error().to_string());
      return false;
    }
    if (res->size() != multi_get_rows) {
      errors.add("multi-get: " + std::to_string(res->size()) + " results for " + std::to_string(multi_get_rows) +
                 " gets");
      return false;
    }
    for (std::size_t j = 0; j < multi_get_rows; ++j) {
      if (!good_row((*res)[j]) || (*res)[j].row != gets[j].row) {
        errors.add("multi-get: wrong row at " + std::to_string(j));
        return false;
      }
    }
    return true;
  }
  bool scan(rng& r) {
    auto k = make_key(r.below(N - scan_rows + 1));
    auto sc = table.scan(cellar::scan().start_row(k.str()).limit(scan_rows).caching(scan_rows));
    if (!sc) {
      errors.add("scan: " + sc.error().to_string());
      return false;
    }
    auto all = sc->all();
    if (!all) {
      errors.add("scan next: " + all.error().to_string());
      return false;
    }
    if (all->size() != scan_rows || all->front().row != k.str()) {
      errors.add("scan: " + std::to_string(all->size()) + " rows instead of 100");
      return false;
    }
    return true;
  }
  std::vector<cellar::batch_op> get_batch(rng& r) {
    std::vector<cellar::batch_op> ops;
    ops.reserve(batch_rows);
    for (std::size_t j = 0; j < batch_rows; ++j) ops.emplace_back(cellar::get(make_key(r.below(N)).str()));
    return ops;
  }
  static bool check_get_batch(const std::vector<cellar::op_result>& res) {
    if (res.size() != batch_rows) {
      errors.add("async get: " + std::to_string(res.size()) + " results");
      return false;
    }
    for (const auto& x : res) {
      if (!x.st || !good_row(x.row)) {
        errors.add("async get: " + (x.st ? std::string("wrong row") : x.st.to_string()));
        return false;
      }
    }
    return true;
  }
  std::vector<cellar::batch_op> put_batch(rng& r) {
    std::vector<cellar::batch_op> ops;
    ops.reserve(batch_rows);
    for (std::size_t j = 0; j < batch_rows; ++j) {
      std::uint64_t i = r.below(N);
      cellar::put p(make_key(i).str(), put_ts);
      p.add(family, qualifier, make_value(i, salt.fetch_add(1, std::memory_order_relaxed)));
      ops.emplace_back(std::move(p));
    }
    return ops;
  }
  static bool check_put_batch(const std::vector<cellar::op_result>& res) {
    if (res.size() != batch_rows) {
      errors.add("async put: " + std::to_string(res.size()) + " results");
      return false;
    }
    for (const auto& x : res) {
      if (!x.st) {
        errors.add("async put: " + x.st.to_string());
        return false;
      }
    }
    return true;
  }
};

// Loads o.rows rows into `table` with o.threads threads (put of 1000 rows at a time).
void load_cellar(cellar::store& store, cellar::table& table, const bench_options& o) {
  auto t0 = clock_type::now();
  std::vector<std::thread> loaders;
  const std::uint64_t chunk = 1000;
  std::atomic<std::uint64_t> next_chunk{0};
  for (int t = 0; t < o.threads; ++t) {
    loaders.emplace_back([&] {
      for (;;) {
        std::uint64_t first = next_chunk.fetch_add(chunk);
        if (first >= o.rows) break;
        std::uint64_t last = std::min(o.rows, first + chunk);
        std::vector<cellar::put> puts;
        puts.reserve(last - first);
        for (std::uint64_t i = first; i < last; ++i)
          puts.emplace_back(make_key(i).str(), load_timestamp).add(family, qualifier, make_value(i, 0));
        if (auto st = table.put(puts); !st) die("load put", st);
      }
    });
  }
  for (auto& th : loaders) th.join();
  double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::printf("cellar load: %.2f s (%s rows/s, put(vector) of 1000 rows, %d threads)\n", s,
              fmt_rate(static_cast<double>(o.rows) / s).c_str(), o.threads);
  if (auto st = store.stats("bench")) {
    std::printf("cellar stats after load: cells=%" PRIu64 " bytes=%" PRIu64 " per partition:", st->cells, st->bytes);
    for (auto c : st->cells_per_partition) std::printf(" %" PRIu64, c);
    std::printf("\n");
  }
}

// The rows of the figures table: the phases --only names (all when empty).
std::vector<figure_row> chosen_phases(const bench_options& o) {
  std::vector<figure_row> rows;
  auto add_row = [&](std::string phase, std::string name, std::size_t rows_per_op) {
    if (!o.only.empty() && ("," + o.only + ",").find("," + phase + ",") == std::string::npos) return;
    rows.push_back({std::move(phase), std::move(name), rows_per_op, true, {}, {}, {}});
  };
  add_row("put", "put", 1);
  add_row("get", "get", 1);
  const std::string b = std::to_string(multi_get_rows);
  add_row("multi-get", "multi-get " + b, multi_get_rows);
  add_row("scan", "scan 100", scan_rows);
  if (o.async) {
    add_row("async-get", "async get " + b + " x" + std::to_string(o.inflight), batch_rows);
    add_row("async-put", "async put " + b + " x" + std::to_string(o.inflight), batch_rows);
  }
  return rows;
}

// The medians of `rows` as one markdown table.
void print_figures(const std::vector<figure_row>& rows, const bench_options& o, bool with_stdmap) {
  std::printf(
      "\nmedian of %d repetitions x %.1f s; cellar: %d client threads (async: 1 issuing "
      "thread) + CAF workers; bare maps: 1 thread\n\n",
      o.reps, o.seconds, o.threads);
  std::printf(
      "| operation | rows/op | cellar ops/s | cellar rows/s | btree_map ops/s |%s "
      "ratio btree/cellar | cellar p50 us | cellar p99 us | cellar CPU us/op | "
      "btree CPU us/op |\n",
      with_stdmap ? " std::map ops/s |" : "");
  std::printf("|---|--:|--:|--:|--:|%s--:|--:|--:|--:|--:|\n", with_stdmap ? "--:|" : "");
  for (auto& fr : rows) {
    std::vector<double> c_ops, c_p50, c_p99, b_ops, s_ops, c_cpu, b_cpu;
    for (auto& s : fr.cellar) {
      c_ops.push_back(s.ops_per_s);
      c_cpu.push_back(s.cpu_us_per_op);
      c_p50.push_back(s.p50_us);
      c_p99.push_back(s.p99_us);
    }
    for (auto& s : fr.btree) {
      b_ops.push_back(s.ops_per_s);
      b_cpu.push_back(s.cpu_us_per_op);
    }
    for (auto& s : fr.stdmap) s_ops.push_back(s.ops_per_s);
    double c = median(c_ops), b = median(b_ops);
    char ratio[32];
    if (c > 0 && b > 0) {
      std::snprintf(ratio, sizeof ratio, "%.2f", b / c);
    } else {
      std::snprintf(ratio, sizeof ratio, "-");
    }
    char p50[32], p99[32];
    std::snprintf(p50, sizeof p50, "%.1f", median(c_p50));
    std::snprintf(p99, sizeof p99, "%.1f", median(c_p99));
    char ccpu[32], bcpu[32];
    std::snprintf(ccpu, sizeof ccpu, "%.2f", median(c_cpu));
    if (b_cpu.empty()) {
      std::snprintf(bcpu, sizeof bcpu, "-");
    } else {
      std::snprintf(bcpu, sizeof bcpu, "%.2f", median(b_cpu));
    }
    std::string smap = with_stdmap ? " " + fmt_rate(median(s_ops)) + " |" : "";
    std::printf("| %s | %zu | %s | %s | %s |%s %s | %s | %s | %s | %s |\n", fr.name.c_str(), fr.rows_per_op,
                fmt_rate(c).c_str(), fmt_rate(c * static_cast<double>(fr.rows_per_op)).c_str(), fmt_rate(b).c_str(),
                smap.c_str(), ratio, p50, p99, ccpu, bcpu);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench_options o;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      usage();
      return 0;
    }
  }
  if (!parse(argc, argv, o)) {
    usage();
    return 2;
  }
  multi_get_rows = o.batch;
  std::vector<figure_row> rows = chosen_phases(o);
  if (rows.empty()) {
    usage();
    return 2;
  }
  std::printf("bench_embedded: rows=%" PRIu64
              " (16 B keys, 100 B values), partitions=%u (KEY hash), "
              "client threads=%d, CAF workers=%zu%s, seconds/phase=%.1f, reps=%d, inflight=%d, "
              "hardware threads=%u, loadavg %s\n",
              o.rows, o.partitions, o.threads, o.workers, o.workers == 0 ? " (one per core)" : "", o.seconds, o.reps,
              o.inflight, std::thread::hardware_concurrency(), loadavg().c_str());
  std::fflush(stdout);

  // --- cellar: open, create, load -------------------------------------------------
  cellar::store_options so;
  so.worker_threads = o.workers;
  cellar::detail::scheduler_tuning tune;
  if (o.spin_polls >= 0) tune.spin_polls = static_cast<std::size_t>(o.spin_polls);
  if (o.idle_sleep_us >= 0) tune.idle_sleep = std::chrono::microseconds(o.idle_sleep_us);
  std::printf("CAF workers spin %zu polls before sleeping, then sleep up to %lld us\n", tune.spin_polls,
              static_cast<long long>(tune.idle_sleep.count()));
  auto opened = cellar::detail::open_store(std::move(so), tune);
  if (!opened) die("store::open", opened.error());
  auto& store = *opened.value();

  cellar::table_descriptor desc;
  desc.name = "bench";
  desc.partitioning = cellar::partition_spec::hash(o.partitions);
  cellar::family_descriptor fd;
  fd.name = family;
  fd.max_versions = 1;
  desc.families.push_back(fd);
  if (auto st = store.create_table(desc, cellar::schema_origin::hbase_shell); !st) die("create_table", st);
  auto topen = store.open_table("bench");
  if (!topen) die("open_table", topen.error());
  cellar::table table = topen.value();
  load_cellar(store, table, o);

  // --- bare maps: load ----------------------------------------------------------------
  std::unique_ptr<btree_side> btree;
  if (o.bare) {
    btree = std::make_unique<btree_side>();
    auto t0 = clock_type::now();
    btree->load(o.rows);
    double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    std::printf("btree_map load: %.2f s (sequential, 1 thread)\n", s);
  }
  std::unique_ptr<stdmap_side> stdmap;
  if (o.std_map) {
    stdmap = std::make_unique<stdmap_side>();
    auto t0 = clock_type::now();
    stdmap->load(o.rows);
    double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    std::printf("std::map load: %.2f s (sequential, 1 thread)\n", s);
  }
  std::fflush(stdout);

  // --- the phases ---------------------------------------------------------------------
  const std::uint64_t N = o.rows;
  std::atomic<std::uint64_t> salt{1};
  cellar_ops ops{table, N, o.server_ts ? cellar::latest_timestamp : load_timestamp, salt};
  auto sync_op = [&](bool (cellar_ops::*fn)(rng&)) { return [&ops, fn](rng& r) { return (ops.*fn)(r); }; };
  for (int rep = 0; rep < o.reps; ++rep) {
    std::uint64_t seed = static_cast<std::uint64_t>(rep) + 1;
    std::printf("repetition %d/%d ...\n", rep + 1, o.reps);
    std::fflush(stdout);
    // cellar, then btree, then std::map, for each operation.
    auto bare = [&](figure_row& fr, auto&& fn) {
      if (!btree) return;
      fr.btree.push_back(run_bare(o.seconds, seed, [&](rng& r) { fn(*btree, r); }));
      if (stdmap) fr.stdmap.push_back(run_bare(o.seconds, seed, [&](rng& r) { fn(*stdmap, r); }));
    };
    for (auto& fr : rows) {
      const std::string& ph = fr.phase;
      if (ph == "put") {
        fr.cellar.push_back(run_sync(o.threads, o.seconds, seed, sync_op(&cellar_ops::put)));
        bare(fr, [&](auto& m, rng& r) { m.put(N, r, salt.fetch_add(1, std::memory_order_relaxed)); });
      } else if (ph == "get") {
        fr.cellar.push_back(run_sync(o.threads, o.seconds, seed, sync_op(&cellar_ops::get)));
        bare(fr, [&](auto& m, rng& r) { m.get(N, r); });
      } else if (ph == "multi-get") {
        fr.cellar.push_back(run_sync(o.threads, o.seconds, seed, sync_op(&cellar_ops::multi_get)));
        bare(fr, [&](auto& m, rng& r) { m.multi_get(N, r); });
      } else if (ph == "scan") {
        fr.cellar.push_back(run_sync(o.threads, o.seconds, seed, sync_op(&cellar_ops::scan)));
        bare(fr, [&](auto& m, rng& r) { m.scan(N, r); });
      } else if (ph == "async-get") {
        fr.cellar.push_back(run_async(
            table, o.inflight, o.seconds, seed, [&](rng& r) { return ops.get_batch(r); }, cellar_ops::check_get_batch));
        bare(fr, [&](auto& m, rng& r) { m.multi_get(N, r); });
      } else if (ph == "async-put") {
        fr.cellar.push_back(run_async(
            table, o.inflight, o.seconds, seed, [&](rng& r) { return ops.put_batch(r); }, cellar_ops::check_put_batch));
        bare(fr, [&](auto& m, rng& r) { m.put_batch(N, r, salt.fetch_add(1, std::memory_order_relaxed)); });
      }
    }
  }

  if (auto st = store.stats("bench"); st)
    std::printf("cellar stats after the run: cells=%" PRIu64 " bytes=%" PRIu64 "\n", st->cells, st->bytes);
  std::printf("loadavg at the end: %s\n", loadavg().c_str());
  print_figures(rows, o, stdmap != nullptr);
  std::printf("\n(sink %" PRIu64 ")\n", (btree ? btree->sink : 0) + (stdmap ? stdmap->sink : 0));

  if (errors.count.load() > 0) {
    std::fprintf(stderr, "bench_embedded: %" PRIu64 " failed calls; first: %s\n", errors.count.load(),
                 errors.first.c_str());
    return 1;
  }
  return 0;
}
