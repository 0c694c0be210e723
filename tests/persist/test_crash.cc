// Crash tests: a child process (crash_writer) writes, snapshots and runs DDL, recording
// every acknowledged step (crash_workload.h); it is killed with SIGKILL at a random
// moment, right after it began a snapshot, or right after it began a DDL step; the store
// is reopened and checked against what each durability mode promises (README,
// "Durability"):
//  - every mode: the catalog survives with every acknowledged DDL step and nothing of an
//    unacknowledged one but all or nothing; no write is ever half there (both rows of a
//    batch, both families of a row, or nothing); what survived is a prefix of the
//    sequence of writes (no holes), in snapshot mode of each partition's (see check());
//  - log-sync and log: every acknowledged write survived (a kill -9 is a process crash;
//    log mode acknowledges a write once its record is written, in the OS's hands);
//  - snapshot: every write covered by the last completed snapshot survived.
// CELLAR_CRASH_ITERATIONS sets the kills per mode (3 by default; scripts/crash-loop.sh
// runs many). Each mode ends with a summary line on stdout ("crash-loop: ...").
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "crash_workload.h"

namespace fs = std::filesystem;

namespace {

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct acks {
  bool ready = false;
  long last = -1;
  long snapshot = -1;        // every write <= snapshot is in a completed snapshot
  bool in_snapshot = false;  // the last line is a snap-begin: killed during it
  std::set<long> ddl_begun, ddl_done;
  std::vector<std::int64_t> at;  // ack time of write i
};

acks read_acks(const std::string& path) {
  acks a;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a torn last line (no newline yet)
    if (line == "ready") {
      a.ready = true;
      continue;
    }
    std::istringstream ls(line);
    std::string first;
    long n = 0;
    ls >> first;
    if (first == "snap-begin") {
      a.in_snapshot = true;
      continue;
    }
    if (first == "snap") {
      ls >> a.snapshot;
      a.in_snapshot = false;
      continue;
    }
    if (first == "ddl-begin" && (ls >> n)) {
      a.ddl_begun.insert(n);
      continue;
    }
    if (first == "ddl" && (ls >> n)) {
      a.ddl_done.insert(n);
      continue;
    }
    std::int64_t ms = 0;
    if (!(ls >> ms)) break;
    long i = std::stol(first);
    if (i != a.last + 1) break;
    a.last = i;
    a.at.push_back(ms);
  }
  return a;
}

// When to kill the child.
enum class moment { random, snapshot, ddl };

struct run_result {
  acks a;
  std::int64_t killed_at = 0;
};

// The last complete line of the ack file starts with `prefix`.
bool last_line_starts(const std::string& path, const std::string& prefix) {
  std::ifstream in(path, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.empty() || s.back() != '\n') return false;
  const auto start = s.rfind('\n', s.size() - 2);
  return s.compare(start == std::string::npos ? 0 : start + 1, prefix.size(), prefix) == 0;
}

run_result crash_once(const std::string& dir, const std::string& mode, int delay_ms, moment when, int extra_us) {
  const std::string ackfile = dir + ".acks";
  std::remove(ackfile.c_str());
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    execl(CRASH_WRITER, CRASH_WRITER, dir.c_str(), mode.c_str(), ackfile.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the child is writing, then let it run for the random delay; for a kill in
  // a snapshot or a DDL step, then wait for the child to begin one (polling its ack file)
  // and give it `extra_us` more.
  for (int i = 0; i < 3000 && !read_acks(ackfile).ready; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  if (when != moment::random) {
    const std::string prefix = when == moment::snapshot ? "snap-begin " : "ddl-begin ";
    for (int i = 0; i < 100000 && !last_line_starts(ackfile, prefix); ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    std::this_thread::sleep_for(std::chrono::microseconds(extra_us));
  }
  run_result r;
  r.killed_at = wall_ms();
  kill(pid, SIGKILL);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  REQUIRE(WIFSIGNALED(wstatus));  // it was still writing: it did not fail on its own
  r.a = read_acks(ackfile);
  return r;
}

struct totals {
  long kills = 0, in_snapshot = 0, in_ddl = 0;
  long acknowledged = 0, recovered = 0;
  long lost = 0;     // acknowledged writes missing after the restart
  long beyond = 0;   // of those, the ones the mode does not allow to lose (must stay 0)
  long partial = 0;  // half rows or half batches (must stay 0)
  long ddl_checked = 0;
  long early = 0;  // kills that came before the child acknowledged anything (nothing to check)
};

// DDL: every acknowledged step is there, an unacknowledged one is all or nothing.
void check_ddl(cellar::store& s, const acks& a, totals& t) {
  std::set<long> tables;
  for (long k : a.ddl_begun) tables.insert(k - k % 3);
  for (long j : tables) {
    INFO("DDL table ddl" << j);
    const bool created = a.ddl_done.count(j), create_begun = a.ddl_begun.count(j);
    const bool altered = a.ddl_done.count(j + 1), alter_begun = a.ddl_begun.count(j + 1);
    const bool dropped = a.ddl_done.count(j + 2), drop_begun = a.ddl_begun.count(j + 2);
    const bool exists = s.table_exists(crash::ddl_table(j));
    if (dropped) {
      CHECK_FALSE(exists);
    } else if (created && !drop_begun) {
      CHECK(exists);
    } else if (!create_begun) {
      CHECK_FALSE(exists);
    }
    if (exists) {
      auto d = s.describe(crash::ddl_table(j));
      REQUIRE(d.is_ok());
      std::set<std::string> families;
      for (const auto& f : d->families) families.insert(f.name);
      if (altered)
        CHECK(families == std::set<std::string>{"a", "b", "c"});
      else if (!alter_begun)
        CHECK(families == std::set<std::string>{"a", "b"});
      else
        CHECK((families == std::set<std::string>{"a", "b"} || families == std::set<std::string>{"a", "b", "c"}));
      auto tb = s.open_table(crash::ddl_table(j));
      REQUIRE(tb.is_ok());
      CHECK(tb->get(cellar::get("x")).is_ok());  // its partitions serve
    }
    ++t.ddl_checked;
  }
}

// Opens the store after the crash and checks the promises; adds to `t`.
void check(const std::string& dir, const std::string& mode, const run_result& r, totals& t) {
  cellar::store_options o;
  o.directory = dir;
  o.durability = crash::mode(mode);
  o.snapshot_interval = std::chrono::milliseconds(0);
  auto opened = cellar::store::open(o);
  INFO(opened.error().to_string());
  REQUIRE(opened.is_ok());
  auto& s = *opened.value();
  REQUIRE(s.table_exists("crash"));  // the catalog survived
  check_ddl(s, r.a, t);
  auto tb = s.open_table("crash").value();
  long present = 0;
  // Writes found must be a prefix of the writes: of all of them in the log modes (the log
  // is one stream), of each partition's in snapshot mode. There a crash during a
  // snapshot can leave a partition whose table was empty at the new cut (a partition's
  // first snapshot is a bulk load, which WiredTiger makes durable when the load ends)
  // and the others at the previous snapshot: each is a point-in-time cut of its
  // partition, which is the consistency cellar promises. Write i is in the partition of
  // the prefix "g<i % 4>" (crash_workload.h).
  const bool per_partition = mode == "snapshot";
  bool gap[4] = {false, false, false, false};
  std::vector<bool> found;
  const long upto = r.a.last + 200;  // writes applied but not yet acknowledged may be there
  for (long i = 0; i <= upto; ++i) {
    auto rows = tb.get(std::vector<cellar::get>{cellar::get(crash::row_a(i)), cellar::get(crash::row_b(i))});
    REQUIRE(rows.is_ok());
    for (const auto& row : rows.value()) {
      INFO("write " << i << " row " << row.row);
      // Never half a row.
      if (row.cells.size() != 0 && row.cells.size() != 2) ++t.partial;
      REQUIRE((row.cells.size() == 0 || row.cells.size() == 2));
      for (const auto& c : row.cells) CHECK(c.value == crash::value(i));
    }
    const bool a = !rows.value()[0].cells.empty(), b = !rows.value()[1].cells.empty();
    INFO("write " << i);
    if (a != b) ++t.partial;
    REQUIRE(a == b);  // never half a batch
    bool& g = gap[per_partition ? i % 4 : 0];
    if (a) {
      REQUIRE_FALSE(g);  // a prefix: nothing after a missing write
      ++present;
    } else {
      g = true;
    }
    found.push_back(a);
  }
  const long acked = r.a.last + 1;
  long must = acked;  // what the mode promises survives
  if (mode == "snapshot") must = r.a.snapshot + 1;
  INFO("mode " << mode << ": " << acked << " acknowledged, " << present << " recovered, last snapshot "
               << r.a.snapshot);
  long lost = 0, beyond = 0;
  for (long i = 0; i < acked; ++i)
    if (!found[static_cast<std::size_t>(i)]) {
      ++lost;
      if (i < must) ++beyond;
    }
  CHECK(beyond == 0);
  t.acknowledged += acked;
  t.recovered += present;
  t.lost += lost;
  t.beyond += beyond;
}

void crash_test(const std::string& mode, int iterations) {
  std::mt19937 rng(std::random_device{}());
  totals t;
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 0; it < iterations; ++it) {
    const auto dir = (fs::temp_directory_path() /
                      ("cellar-crash-" + mode + "-" + std::to_string(getpid()) + "-" + std::to_string(it)))
                         .string();
    fs::remove_all(dir);
    // One kill in three lands at random, one just after a snapshot began, one just after
    // a DDL step began (plus up to 20 ms of a snapshot or 5 ms of a DDL step, which is
    // shorter, so at any point of it).
    const auto when = static_cast<moment>(it % 3);
    const int delay = std::uniform_int_distribution<int>(100, 700)(rng);
    const int extra_us = std::uniform_int_distribution<int>(0, when == moment::ddl ? 5000 : 20000)(rng);
    auto r = crash_once(dir, mode, delay, when, extra_us);
    INFO("iteration " << it << ", killed after " << delay << " ms, moment " << static_cast<int>(when));
    // On a loaded machine the child may not have written anything yet when the kill comes:
    // nothing to check then, but still a kill it must recover from.
    if (r.a.last < 0) {
      ++t.early;
      fs::remove_all(dir);
      std::remove((dir + ".acks").c_str());
      continue;
    }
    ++t.kills;
    if (r.a.in_snapshot) ++t.in_snapshot;
    if (r.a.ddl_begun.size() > r.a.ddl_done.size()) ++t.in_ddl;
    check(dir, mode, r, t);
    fs::remove_all(dir);
    std::remove((dir + ".acks").c_str());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "crash-loop: mode %s: %ld kills (%ld during a snapshot, %ld during DDL) in %.0f s; %ld writes acknowledged, "
      "%ld recovered; acknowledged writes lost: %ld (%ld of them beyond what the mode allows); partial rows or "
      "batches: %ld; DDL tables checked: %ld; kills before the first write (not counted): %ld\n",
      mode.c_str(), t.kills, t.in_snapshot, t.in_ddl, secs, t.acknowledged, t.recovered, t.lost, t.beyond, t.partial,
      t.ddl_checked, t.early);
  std::fflush(stdout);
  // Most kills must find writes to check (an early kill is rare: a loaded machine).
  CHECK(t.kills > t.early);
  CHECK(t.partial == 0);
  CHECK(t.beyond == 0);
  if (mode != "snapshot") CHECK(t.lost == 0);
}

int iterations() {
  const char* n = std::getenv("CELLAR_CRASH_ITERATIONS");
  return n ? std::atoi(n) : 3;
}

}  // namespace

TEST_CASE("crash: log-sync loses no acknowledged write", "[crash]") { crash_test("log-sync", iterations()); }
TEST_CASE("crash: log loses no acknowledged write to a process crash", "[crash]") { crash_test("log", iterations()); }
TEST_CASE("crash: snapshot loses only what came after the last snapshot", "[crash]") {
  crash_test("snapshot", iterations());
}
