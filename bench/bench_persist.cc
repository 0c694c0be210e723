// bench_persist: persistence figures, each next to its baseline measured in the same run.
//
//   snapshot MB/s            vs  raw sequential write MB/s of the same disk (1 MiB writes + fdatasync)
//   snapshot of 100, 1k, 10k, 100k scattered changes: seconds, bytes written to disk, and
//     their ratio to the changed cells' bytes (goal <= 4x plus a constant); amortised over
//     snapshots of 10k changes up to a merge of the runs into the base
//   recovery cells/s         (reopen of the snapshot just written)
//   put p50/p99 during a snapshot  vs  without one (same writer thread, same store)
//   log-sync acked writes/s with 1, 16, 64 writers  vs  fdatasync/s of the same disk
//
// Usage: bench_persist [--dir DIR] [--cells N] [--value BYTES] [--seconds S] [--spin-polls N]
//                      [--reps N] [--snapshot-threads N] [--max-amortised N]
// The disk's speed swings several-fold from one second to the next on these VMs, so the
// snapshot is measured --reps times (default 3), each on a fresh store in a fresh process
// and each followed by its raw-write baseline; the median ratio is the figure.
// Not a test: results go to docs/benchmarks.md with the command line.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cellar/store.h"
#include "store/scheduler_tuning.h"

using namespace cellar;
using clk = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double secs(clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct args {
  std::string dir = "/tmp/cellar-bench-persist";
  long cells = 1'000'000;
  int value = 100;
  double seconds = 3;
  long spin_polls = -1;  // -1: the library's default
  int reps = 3;
  long snapshot_threads = -1;  // -1: the library's default
  int max_amortised = 100;     // snapshots of the amortised figure at most
};

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir")
      a.dir = v;
    else if (k == "--cells")
      a.cells = std::stol(v);
    else if (k == "--value")
      a.value = std::stoi(v);
    else if (k == "--seconds")
      a.seconds = std::stod(v);
    else if (k == "--spin-polls")
      a.spin_polls = std::stol(v);
    else if (k == "--reps")
      a.reps = std::max(1, std::stoi(v));
    else if (k == "--snapshot-threads")
      a.snapshot_threads = std::stol(v);
    else if (k == "--max-amortised")
      a.max_amortised = std::max(1, std::stoi(v));
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

std::string key(long i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "user%012ld", i);
  return buf;
}

double raw_write_mbs(const std::string& dir, std::size_t mb) {
  const std::string path = dir + "/raw-write-test";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string block(1 << 20, 'x');
  auto t0 = clk::now();
  for (std::size_t i = 0; i < mb; ++i)
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) std::abort();
  ::fdatasync(fd);
  auto t1 = clk::now();
  ::close(fd);
  ::unlink(path.c_str());
  return static_cast<double>(mb) / secs(t0, t1);
}

double fsyncs_per_second(const std::string& dir, double seconds) {
  const std::string path = dir + "/fsync-test";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  std::string rec(128, 'r');
  long n = 0;
  auto t0 = clk::now();
  while (secs(t0, clk::now()) < seconds) {
    if (::write(fd, rec.data(), rec.size()) < 0) std::abort();
    ::fdatasync(fd);
    ++n;
  }
  double r = n / secs(t0, clk::now());
  ::close(fd);
  ::unlink(path.c_str());
  return r;
}

// Bytes this process has caused to be written to storage (/proc/self/io write_bytes).
long long io_write_bytes() {
  FILE* f = std::fopen("/proc/self/io", "r");
  if (!f) return -1;
  char line[128];
  long long v = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "write_bytes: %lld", &v) == 1) break;
  std::fclose(f);
  return v;
}

struct latencies {
  double p50 = 0, p99 = 0;
  std::size_t n = 0;
};

latencies summarize(std::vector<double> v) {
  latencies l;
  l.n = v.size();
  if (v.empty()) return l;
  std::sort(v.begin(), v.end());
  l.p50 = v[v.size() / 2];
  l.p99 = v[v.size() * 99 / 100];
  return l;
}

// Sync puts from one thread while `busy` holds; latencies in microseconds.
std::vector<double> put_loop(table& t, long cells, const std::atomic<bool>& stop, int value) {
  std::vector<double> out;
  std::string v(static_cast<std::size_t>(value), 'w');
  for (long i = 0; !stop.load(); ++i) {
    auto a = clk::now();
    if (!t.put(put(key((i * 7919) % cells)).add("f", "q", v))) std::abort();
    out.push_back(std::chrono::duration<double, std::micro>(clk::now() - a).count());
  }
  return out;
}

// The store at `dir`, snapshots on demand only, with --spin-polls and --snapshot-threads
// applied; `durability` as given.
std::unique_ptr<store> open_tuned(const args& a, const std::string& dir, durability d = durability::snapshot) {
  store_options o;
  o.directory = dir;
  o.durability = d;
  o.snapshot_interval = std::chrono::milliseconds(0);
  if (a.snapshot_threads >= 0) o.snapshot_threads = static_cast<std::size_t>(a.snapshot_threads);
  cellar::detail::scheduler_tuning tune;
  if (a.spin_polls >= 0) tune.spin_polls = static_cast<std::size_t>(a.spin_polls);
  return cellar::detail::open_store(std::move(o), tune).value();
}

// Table 't' (4 hash partitions, family 'f' of one version) of `s`.
table make_table(store& s) {
  if (!s.create_table({"t", partition_spec::hash(4), {{"f", 1}}}, schema_origin::oceanbase_ddl)) std::abort();
  return s.open_table("t").value();
}

// Every cell of the store written, 1000 per put.
void load_all(table& t, const args& a) {
  const std::string v(static_cast<std::size_t>(a.value), 'v');
  std::vector<cellar::put> batch;
  for (long i = 0; i < a.cells; ++i) {
    batch.push_back(put(key(i)).add("f", "q", v));
    if (batch.size() == 1000 || i + 1 == a.cells) {
      if (!t.put(batch)) std::abort();
      batch.clear();
    }
  }
}

// 2. Snapshots of few changes: their cost follows the changes, not the store. Each is
// measured against the changed cells' bytes (snapshot_stats::bytes); the constant is what
// a snapshot of nothing writes (a checkpoint of the metadata).
void scattered_changes(store& s, table& t, const args& a) {
  std::printf("\nsnapshot of scattered changes to the %ld-cell store (goal: disk <= 4x changed + constant)\n", a.cells);
  const long long e0 = io_write_bytes();
  s.snapshot().value();
  const long long constant = io_write_bytes() - e0;
  std::printf("  nothing changed: %.3f MB written (the constant)\n", constant / 1e6);
  std::printf("  changes      s   changed MB  disk MB  per change (KB)  ratio  (disk-constant)/changed  merged\n");
  const std::string v(static_cast<std::size_t>(a.value), 'v');
  long salt = 0;
  auto scatter = [&](long changes) {
    ++salt;
    for (long i = 0; i < changes; ++i)
      if (!t.put(put(key((i * 104729 + changes * 31 + salt * 7) % a.cells)).add("f", "q", v))) std::abort();
  };
  for (long changes : {100L, 1000L, 10000L, 100000L}) {
    scatter(changes);
    const long long w0 = io_write_bytes();
    auto small = s.snapshot().value();
    const long long w1 = io_write_bytes();
    const double disk = static_cast<double>(w1 - w0), changed = static_cast<double>(small.bytes);
    std::printf("  %7ld  %6.3f  %9.2f  %7.1f  %15.2f  %5.1f  %22.2f  %6u\n", changes, small.seconds, changed / 1e6,
                disk / 1e6, disk / 1024.0 / changes, disk / changed, (disk - constant) / changed,
                small.merged_partitions);
  }
  // Amortised: snapshots of 10k scattered changes until the runs have been merged into
  // the base once, every byte written counted.
  double disk = 0, changed = 0;
  int snaps = 0;
  bool merged = false;
  while (!merged && snaps < a.max_amortised) {
    scatter(10000);
    const long long w0 = io_write_bytes();
    auto small = s.snapshot().value();
    disk += static_cast<double>(io_write_bytes() - w0);
    changed += static_cast<double>(small.bytes);
    merged = small.merged_partitions > 0;
    ++snaps;
  }
  std::printf(
      "  amortised over %d snapshots of 10000 changes up to and with a merge into the base%s:\n"
      "    %.1f MB written for %.1f MB changed: ratio %.2f, (disk-constant)/changed %.2f (goal <= 4)\n",
      snaps, merged ? "" : " (no merge came)", disk / 1e6, changed / 1e6, disk / changed,
      (disk - constant * snaps) / changed);
}

// 3. Put latency with and without a snapshot running.
void put_latency(store& s, table& t, const args& a) {
  std::atomic<bool> stop{false};
  std::vector<double> quiet, during;
  {
    std::thread w([&] { quiet = put_loop(t, a.cells, stop, a.value); });
    std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
    stop = true;
    w.join();
  }
  // Make every cell dirty, so the snapshot has the whole store to write.
  load_all(t, a);
  stop = false;
  snapshot_stats big{};
  {
    std::thread w([&] { during = put_loop(t, a.cells, stop, a.value); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    big = s.snapshot().value();
    stop = true;
    w.join();
  }
  auto lq = summarize(quiet), ld = summarize(during);
  std::printf("\nput latency (sync put from 1 thread, us)   p50      p99      samples\n");
  std::printf("  no snapshot                              %7.1f  %7.1f  %zu\n", lq.p50, lq.p99, lq.n);
  std::printf("  during a snapshot of %8llu changes     %7.1f  %7.1f  %zu   (snapshot %.2f s, cut %.4f s)\n",
              static_cast<unsigned long long>(big.changes), ld.p50, ld.p99, ld.n, big.seconds, big.cut_seconds);
  std::printf("  p99 ratio during/without: %.2f (goal <= 2)\n", ld.p99 / lq.p99);
}

// 4. Group commit: log-sync acknowledged writes against the disk's fdatasyncs.
void group_commit(const args& a) {
  const double fsyncs = fsyncs_per_second(a.dir, a.seconds);
  std::printf("\nlog-sync acknowledged writes/s (disk: %.0f fdatasync/s)\n", fsyncs);
  std::printf("  writers  writes/s  syncs/s  writes per sync\n");
  for (int writers : {1, 16, 64}) {
    auto s = open_tuned(a, a.dir + "/logsync" + std::to_string(writers), durability::log_sync);
    auto t = make_table(*s);
    std::atomic<bool> stop{false};
    std::atomic<long> total{0};
    const auto syncs0 = s->log_syncs();
    auto t0 = clk::now();
    std::vector<std::thread> th;
    for (int w = 0; w < writers; ++w)
      th.emplace_back([&, w] {
        std::string v(static_cast<std::size_t>(a.value), 'l');
        long n = 0;
        for (long i = 0; !stop.load(); ++i) {
          if (!t.put(put(key(w * 1'000'000L + i)).add("f", "q", v))) std::abort();
          ++n;
        }
        total += n;
      });
    std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
    stop = true;
    for (auto& x : th) x.join();
    const double el = secs(t0, clk::now());
    const auto syncs = s->log_syncs() - syncs0;
    std::printf("  %7d  %8.0f  %7.0f  %6.1f\n", writers, total / el, syncs / el,
                syncs ? static_cast<double>(total) / syncs : 0.0);
  }
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  args a = parse(argc, argv);
  fs::remove_all(a.dir);
  fs::create_directories(a.dir);
  std::printf("bench_persist: %ld cells of %d-byte values, dir %s, %u cores\n", a.cells, a.value, a.dir.c_str(),
              std::thread::hardware_concurrency());

  // 1. Snapshot throughput vs raw sequential writes, --reps times on fresh stores.
  const std::string data_dir = a.dir + "/snap";
  std::vector<double> snap_rates, raw_rates, ratios;
  std::printf("\nsnapshot of a fresh store vs raw sequential write, %d times\n", a.reps);
  std::printf("  changes    MB      s      MB/s    raw MB/s  ratio   (write s, finish s)\n");
  // Each repetition but the last runs in a child process of its own, and the last in this one
  // before it starts a thread: every snapshot measured is the first of a fresh process, as a
  // server's first snapshot after a load is. Repeated in one process, a later snapshot runs
  // on a heap that held the stores dropped before, and its writers wait on loading each next
  // B-tree leaf of the delta: that is the process's history, not the snapshot's cost.
  std::fflush(stdout);
  for (int rep = 0; rep < a.reps; ++rep) {
    const bool child_rep = rep + 1 < a.reps;
    int fds[2] = {-1, -1};
    if (child_rep) {
      if (::pipe(fds) != 0) std::abort();
      const pid_t pid = ::fork();
      if (pid < 0) std::abort();
      if (pid > 0) {
        ::close(fds[1]);
        double got[2] = {0, 0};
        const bool ok = ::read(fds[0], got, sizeof got) == static_cast<ssize_t>(sizeof got);
        ::close(fds[0]);
        int wstatus = 0;
        ::waitpid(pid, &wstatus, 0);
        if (!ok || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
          std::fprintf(stderr, "repetition %d failed in its child process\n", rep + 1);
          return 1;
        }
        snap_rates.push_back(got[0]);
        raw_rates.push_back(got[1]);
        ratios.push_back(got[0] / got[1]);
        continue;
      }
      ::close(fds[0]);
    }
    fs::remove_all(data_dir);
    auto s = open_tuned(a, data_dir);
    auto t = make_table(*s);
    load_all(t, a);
    const snapshot_stats snap = s->snapshot().value();
    const double snap_mbs = snap.bytes / 1e6 / snap.seconds;
    const double raw_mbs = raw_write_mbs(a.dir, std::max<std::size_t>(64, snap.bytes >> 20));
    std::printf("  %7llu  %6.1f  %5.2f  %7.1f  %8.1f  %5.2f   (%.2f, %.2f)\n",
                static_cast<unsigned long long>(snap.changes), snap.bytes / 1e6, snap.seconds, snap_mbs, raw_mbs,
                snap_mbs / raw_mbs, snap.write_seconds, snap.finish_seconds);
    std::fflush(stdout);
    if (child_rep) {
      const double out[2] = {snap_mbs, raw_mbs};
      const bool ok = ::write(fds[1], out, sizeof out) == static_cast<ssize_t>(sizeof out);
      ::_exit(ok ? 0 : 1);  // the store is not closed: nothing of it is measured again
    }
    snap_rates.push_back(snap_mbs);
    raw_rates.push_back(raw_mbs);
    ratios.push_back(snap_mbs / raw_mbs);
    scattered_changes(*s, t, a);
    put_latency(*s, t, a);
  }
  {
    auto s = open_tuned(a, data_dir);
    auto r = s->recovery();
    std::printf("\nrecovery: %llu cells in %.2f s = %.0f cells/s\n", static_cast<unsigned long long>(r.cells_loaded),
                r.seconds, r.cells_loaded / r.seconds);
  }
  std::printf("\nsnapshot: median %.1f MB/s; raw sequential write median %.1f MB/s; median ratio %.2f (goal >= 0.5)\n",
              median(snap_rates), median(raw_rates), median(ratios));
  group_commit(a);
  fs::remove_all(a.dir);
  return 0;
}
