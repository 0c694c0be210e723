// Crash tests: a child process (crash_writer) writes and records every acknowledged
// write; it is killed with SIGKILL at a random moment; the store is reopened and
// checked against what each durability mode promises (README, "Durability"):
//  - every mode: the catalog survives; no write is ever half there (both rows of a
//    batch, both families of a row, or nothing); what survived is a prefix of the
//    sequence of writes (no holes);
//  - log-sync: every acknowledged write survived;
//  - log: every write acknowledged more than a sync interval (plus slack) before the
//    kill survived;
//  - snapshot: every write covered by the last completed snapshot survived.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "crash_workload.h"

namespace fs = std::filesystem;

namespace {

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct acks {
  bool ready = false;
  long last = -1;
  long snapshot = -1;
  std::vector<std::int64_t> at;  // ack time of write i
};

acks read_acks(const std::string& path) {
  acks a;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line == "ready") {
      a.ready = true;
      continue;
    }
    std::istringstream ls(line);
    std::string first;
    ls >> first;
    if (first == "snap") {
      ls >> a.snapshot;
      continue;
    }
    std::int64_t ms = 0;
    if (!(ls >> ms)) break;  // a torn last line
    long i = std::stol(first);
    if (i != a.last + 1) break;
    a.last = i;
    a.at.push_back(ms);
  }
  return a;
}

struct run_result {
  acks a;
  std::int64_t killed_at = 0;
};

run_result crash_once(const std::string& dir, const std::string& mode, int delay_ms) {
  const std::string ackfile = dir + ".acks";
  std::remove(ackfile.c_str());
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    execl(CRASH_WRITER, CRASH_WRITER, dir.c_str(), mode.c_str(), ackfile.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the child is writing, then let it run for the random delay.
  for (int i = 0; i < 3000 && !read_acks(ackfile).ready; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  run_result r;
  r.killed_at = wall_ms();
  kill(pid, SIGKILL);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  REQUIRE(WIFSIGNALED(wstatus));  // it was still writing: it did not fail on its own
  r.a = read_acks(ackfile);
  return r;
}

// Opens the store after the crash and checks the promises; returns the writes found.
long check(const std::string& dir, const std::string& mode, const run_result& r) {
  cellar::store_options o;
  o.directory = dir;
  o.durability = crash::mode(mode);
  o.snapshot_interval = std::chrono::milliseconds(0);
  auto opened = cellar::store::open(o);
  REQUIRE(opened.is_ok());
  auto& s = *opened.value();
  REQUIRE(s.table_exists("crash"));  // the catalog survived
  auto t = s.open_table("crash").value();
  long present = 0;
  bool gap = false;
  const long upto = r.a.last + 200;  // writes applied but not yet acknowledged may be there
  for (long i = 0; i <= upto; ++i) {
    auto rows = t.get(std::vector<cellar::get>{cellar::get(crash::row_a(i)), cellar::get(crash::row_b(i))});
    REQUIRE(rows.is_ok());
    for (const auto& row : rows.value()) {
      INFO("write " << i << " row " << row.row);
      // Never half a row.
      REQUIRE((row.cells.size() == 0 || row.cells.size() == 2));
      for (const auto& c : row.cells) CHECK(c.value == crash::value(i));
    }
    const bool a = !rows.value()[0].cells.empty(), b = !rows.value()[1].cells.empty();
    INFO("write " << i);
    REQUIRE(a == b);  // never half a batch
    if (a) {
      REQUIRE_FALSE(gap);  // a prefix: nothing after a missing write
      ++present;
    } else {
      gap = true;
    }
  }
  INFO("mode " << mode << ": " << r.a.last + 1 << " acknowledged, " << present << " recovered, last snapshot "
               << r.a.snapshot);
  if (mode == "log-sync") CHECK(present >= r.a.last + 1);
  if (mode == "snapshot") CHECK(present >= r.a.snapshot + 1);
  if (mode == "log") {
    long must = 0;
    for (long i = 0; i <= r.a.last; ++i)
      if (r.a.at[static_cast<std::size_t>(i)] <= r.killed_at - 500) must = i + 1;
    CHECK(present >= must);
  }
  return present;
}

void crash_test(const std::string& mode, int iterations) {
  std::mt19937 rng(std::random_device{}());
  for (int it = 0; it < iterations; ++it) {
    const auto dir = (fs::temp_directory_path() / ("cellar-crash-" + mode + "-" + std::to_string(getpid()) + "-" +
                                                   std::to_string(it)))
                         .string();
    fs::remove_all(dir);
    const int delay = std::uniform_int_distribution<int>(100, 700)(rng);
    auto r = crash_once(dir, mode, delay);
    INFO("iteration " << it << ", killed after " << delay << " ms");
    REQUIRE(r.a.last >= 0);  // it wrote something before the kill
    check(dir, mode, r);
    fs::remove_all(dir);
    std::remove((dir + ".acks").c_str());
  }
}

int iterations() {
  const char* n = std::getenv("CELLAR_CRASH_ITERATIONS");
  return n ? std::atoi(n) : 3;
}

}  // namespace

TEST_CASE("crash: log-sync loses no acknowledged write", "[crash]") { crash_test("log-sync", iterations()); }
TEST_CASE("crash: log loses at most the last sync interval", "[crash]") { crash_test("log", iterations()); }
TEST_CASE("crash: snapshot loses only what came after the last snapshot", "[crash]") {
  crash_test("snapshot", iterations());
}
