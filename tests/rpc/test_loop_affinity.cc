// Loop affinity (server_options::loop_affinity): with several event loops and at least as
// many CPUs, loop i runs on the i-th CPU the process may use and serves the connections
// that arrive on that CPU; over loopback, the CPU the client connected from.
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>
#include <sys/utsname.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../support/eventually.h"
#include "rpc/frames.h"
#include "served_store.h"

namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// SO_INCOMING_CPU chooses among a SO_REUSEPORT group's sockets from Linux 6.1 on.
bool kernel_places_by_cpu() {
  utsname u{};
  if (uname(&u) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 6 || (major == 6 && minor >= 1);
}

// Runs `f` on a thread that may only run on `cpu`.
void on_cpu(int cpu, const std::function<void()>& f) {
  std::thread t([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    f();
  });
  t.join();
}

// Cpus_allowed_list of this process's thread named `name` ("" if there is none).
std::string cpus_allowed_of(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string n;
    std::getline(comm, n);
    if (n != name) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Cpus_allowed_list:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 18));
  }
  return "";
}

// Table "t" served by `loops` event loops, with or without loop affinity.
struct served : served_store {
  served(std::size_t loops, bool affinity)
      : served_store(cellar::partition_spec::hash(2), 0, options(loops, affinity)) {}
  static cellar::rpc::server_options options(std::size_t loops, bool affinity) {
    auto so = loopback_options();
    so.event_loops = loops;
    so.loop_affinity = affinity;
    return so;
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server->port()); }
  std::vector<int> connections() const {
    std::vector<int> out;
    for (const auto& l : server->loops()) out.push_back(l.connections);
    return out;
  }
  // Waits (up to 5 s) until the loops serve `want` connections.
  bool settles_at(const std::vector<int>& want) const {
    return testsupport::eventually([&] { return connections() == want; }, std::chrono::seconds(5));
  }
};

// Opens `n` frame connections from a thread on `cpu`; each writes and reads back a row, so
// the server has served it. Returns how many worked.
int connect_from(int cpu, const served& s, int n, std::vector<std::unique_ptr<cellar::rpc::frame_client>>& keep) {
  int ok = 0;
  on_cpu(cpu, [&] {
    for (int i = 0; i < n; ++i) {
      auto c = cellar::rpc::frame_client::connect(s.address());
      if (!c) continue;
      const std::string row = "r" + std::to_string(cpu) + "-" + std::to_string(i);
      auto w = c.value()->batch("t", {cellar::put(row).add("f", "q", 1, "v")});
      auto r = c.value()->batch("t", {cellar::get(row)});
      if (w && r && r.value().at(0).st && r.value()[0].row.cells.size() == 1) ++ok;
      keep.push_back(std::move(c.value()));
    }
  });
  return ok;
}

}  // namespace

TEST_CASE("loop affinity: each loop runs on its own CPU and serves the connections arriving there", "[affinity]") {
  const auto cpus = allowed_cpus();
  if (cpus.size() < 2) {
    // Two loops on one CPU: no affinity, whatever the option says.
    served s(2, true);
    for (const auto& l : s.server->loops()) CHECK(l.cpu == -1);
    return;
  }
  served s(2, true);
  const auto loops = s.server->loops();
  REQUIRE(loops.size() == 2);
  CHECK(loops[0].cpu == cpus[0]);
  CHECK(loops[1].cpu == cpus[1]);
  CHECK(cpus_allowed_of("cellar-loop-0") == std::to_string(cpus[0]));
  CHECK(cpus_allowed_of("cellar-loop-1") == std::to_string(cpus[1]));
  if (!kernel_places_by_cpu()) {
    WARN("kernel older than 6.1: connections are spread by hash, placement not checked");
    return;
  }
  std::vector<std::unique_ptr<cellar::rpc::frame_client>> clients;
  CHECK(connect_from(cpus[1], s, 5, clients) == 5);
  CHECK(s.settles_at({0, 5}));
  CHECK(connect_from(cpus[0], s, 3, clients) == 3);
  CHECK(s.settles_at({3, 5}));
  clients.clear();  // closing counts them out again
  CHECK(s.settles_at({0, 0}));
}

TEST_CASE("without loop affinity the loops run anywhere and the kernel spreads connections", "[affinity]") {
  const auto cpus = allowed_cpus();
  served s(2, false);
  for (const auto& l : s.server->loops()) CHECK(l.cpu == -1);
  const std::string all = cpus_allowed_of("cellar-loop-0");
  CHECK(!all.empty());
  CHECK(cpus_allowed_of("cellar-loop-1") == all);
  // 24 connections from one CPU: by hash, both loops get some (all on one: p = 2^-23).
  std::vector<std::unique_ptr<cellar::rpc::frame_client>> clients;
  CHECK(connect_from(cpus[0], s, 24, clients) == 24);
  std::vector<int> n;
  testsupport::eventually(
      [&] {
        n = s.connections();
        return n.size() == 2 && n[0] + n[1] == 24;
      },
      std::chrono::seconds(5));
  REQUIRE(n.size() == 2);
  CHECK(n[0] + n[1] == 24);
  CHECK(n[0] > 0);
  CHECK(n[1] > 0);
}

TEST_CASE("more loops than CPUs: no affinity", "[affinity]") {
  served s(allowed_cpus().size() + 1, true);
  for (const auto& l : s.server->loops()) CHECK(l.cpu == -1);
  std::vector<std::unique_ptr<cellar::rpc::frame_client>> clients;
  CHECK(connect_from(allowed_cpus()[0], s, 2, clients) == 2);
}
