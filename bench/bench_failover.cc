// bench_failover: how long the partitions a killed node led take to accept writes again, on
// a running 3-node cluster with replication factor 3 (scripts/bench-failover.sh runs it
// on fresh clusters and gives the medians).
//
//   build/bench/bench_failover ZK_HOST:PORT[/chroot] NODE=PID [NODE=PID ...]
//       [--via n1] [--warmup-ms 1000] [--settle-ms 500] [--max-ms 30000]
//
// Creates the table 'failover' (one family, hash(6); the cluster's default replication
// factor, 3), and finds which node leads each partition's Raft group: a write of partition
// p sent through node `via` is passed by via's replica router to p's leader, which counts it
// among the requests it served for other nodes (status 'detailed'), so the node whose count
// grows by the writes sent leads p, and via leads it when no other count grows. The victim
// is the node of the NODE=PID list (not `via`) that leads the most partitions. Then one
// thread per partition writes to it through `via` without pause (one synchronous put at a
// time, each on a connection of its own), and after `warmup-ms` the victim is killed with
// SIGKILL. Once every partition the victim led has acknowledged a write sent after the
// kill (and `settle-ms` more), prints one line:
//
//   victim n2 led 2/6 first_ms 1612.3 all_ms 1833.0 gap_led_ms 1840.2 gap_others_ms 12.4 failed 2
//
// first_ms: from the kill to the first acknowledged write (sent after the kill) to a
// partition the victim led; all_ms: until the last of them had one; gap_led_ms: the longest
// time between two acknowledged writes of one of those partitions; gap_others_ms: the same
// for the other partitions (the leaders that survived); failed: writes answered with an
// error. Exit codes: 0 measured; 4 no listed node leads a partition (try a fresh cluster); 5
// a partition the victim led accepted no write within `max-ms`; 1 anything else.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cellar/client.h"
#include "cluster/membership.h"
#include "cluster/zk_state.h"
#include "route/router.h"

using namespace cellar;
using clk = std::chrono::steady_clock;

namespace {

constexpr const char* table_name = "failover";
constexpr std::uint32_t partitions = 6;
constexpr int probe_writes = 20;

double ms_between(clk::time_point a, clk::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int fail(const std::string& why) {
  std::fprintf(stderr, "bench_failover: %s\n", why.c_str());
  return 1;
}

// The requests the node at `address` has served for other nodes, from its cluster report;
// -1 when it cannot be read. On a thread of its own: a thread holds one RPC connection (its
// kj event loop), and the calling thread's is the writes'.
std::int64_t served_for_others(const std::string& address) {
  std::int64_t n = -1;
  std::thread([&] {
    auto c = rpc::connect(address);
    if (!c) return;
    auto s = (*c)->summary();
    if (!s) return;
    std::smatch m;
    static const std::regex served("which served ([0-9]+) forwarded requests");
    if (std::regex_search(s->store.cluster, m, served)) n = std::stoll(m[1].str());
  }).join();
  return n;
}

struct write_record {
  clk::time_point sent, answered;
  bool ok = false;
};

struct options {
  std::string zk, via = "n1";
  std::map<std::string, pid_t> pids;
  int warmup_ms = 1000, settle_ms = 500, max_ms = 30000;
};

bool parse(int argc, char** argv, options& o) {
  if (argc < 3) return false;
  o.zk = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](int& out) {
      if (i + 1 >= argc) return false;
      out = std::atoi(argv[++i]);
      return out >= 0;
    };
    if (a == "--via" && i + 1 < argc) {
      o.via = argv[++i];
    } else if (a == "--warmup-ms") {
      if (!value(o.warmup_ms)) return false;
    } else if (a == "--settle-ms") {
      if (!value(o.settle_ms)) return false;
    } else if (a == "--max-ms") {
      if (!value(o.max_ms)) return false;
    } else if (auto eq = a.find('='); eq != std::string::npos && eq > 0) {
      o.pids[a.substr(0, eq)] = static_cast<pid_t>(std::atoi(a.c_str() + eq + 1));
    } else {
      return false;
    }
  }
  return !o.pids.empty();
}

// Per partition, the node leading its Raft group (see the header): writes through `conn`,
// a connection to node `via`; `address` holds every node's, by id; `rows` are rows of each
// partition.
result<std::vector<std::string>> find_leaders(connection& conn, const std::string& via,
                                              const std::map<std::string, std::string>& address,
                                              const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::string> leader(partitions);
  for (std::uint32_t p = 0; p < partitions; ++p) {
    std::map<std::string, std::int64_t> before;
    for (const auto& [id, a] : address) before[id] = served_for_others(a);
    for (int i = 0; i < probe_writes; ++i)
      if (auto st = conn.put(table_name, cellar::put(rows[p][static_cast<std::size_t>(i)]).add("f", "q", "probe")); !st)
        return st;
    leader[p] = via;
    for (const auto& [id, a] : address) {
      const auto after = served_for_others(a);
      if (before[id] < 0 || after < 0) return status{code::unavailable, "no cluster report from node " + id};
      if (id != via && after - before[id] >= probe_writes) leader[p] = id;
    }
  }
  return leader;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: bench_failover ZK_HOST:PORT[/chroot] NODE=PID [NODE=PID ...] [--via NODE] [--warmup-ms N] "
                 "[--settle-ms N] [--max-ms N]\n");
    return 2;
  }
  cluster::zk_options zo;
  zo.connect = o.zk;
  auto zk = cluster::zk_client::open(zo);
  if (!zk) return fail(zk.error().to_string());
  auto members = cluster::membership::list(**zk);
  if (!members) return fail(members.error().to_string());
  std::map<std::string, std::string> address;
  for (const auto& m : *members) address[m.id] = m.data_address;
  if (!address.count(o.via)) return fail("node " + o.via + " is not a live member");
  auto via_conn = rpc::connect(address.at(o.via));
  if (!via_conn) return fail("node " + o.via + ": " + via_conn.error().to_string());
  connection& via = **via_conn;

  table_descriptor d;
  d.name = table_name;
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(partitions);
  if (auto s = via.create_table(d, schema_origin::oceanbase_ddl); !s) return fail("create table: " + s.to_string());
  std::vector<std::vector<std::string>> rows(partitions);
  for (int i = 0; std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.size() < 1000; }); ++i) {
    auto row = "row" + std::to_string(i);
    auto& bucket = rows[detail::partition_of(d.partitioning, row)];
    if (bucket.size() < 1000) bucket.push_back(std::move(row));
  }
  // Every group has elected a leader once a write to each partition succeeds.
  const auto ready_by = clk::now() + std::chrono::seconds(30);
  for (std::uint32_t p = 0; p < partitions; ++p)
    for (;;) {
      auto st = via.put(table_name, cellar::put(rows[p][0]).add("f", "q", "ready"));
      if (st) break;
      if (clk::now() > ready_by) return fail("partition " + std::to_string(p) + " takes no write: " + st.to_string());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }

  auto leaders = find_leaders(via, o.via, address, rows);
  if (!leaders) return fail("finding the leaders: " + leaders.error().to_string());
  std::map<std::string, int> led;
  for (const auto& l : *leaders) ++led[l];
  std::string victim;
  for (const auto& [id, pid] : o.pids)
    if (id != o.via && led[id] > 0 && (victim.empty() || led[id] > led[victim])) victim = id;
  if (victim.empty()) {
    std::fprintf(stderr, "bench_failover: none of the listed nodes leads a partition (leaders:");
    for (const auto& l : *leaders) std::fprintf(stderr, " %s", l.c_str());
    std::fprintf(stderr, ")\n");
    return 4;
  }

  // One writer per partition, through `via`.
  std::atomic<bool> stop{false};
  // The kill's time once it is known (nanoseconds of the steady clock; 0 before), and per
  // partition whether a write sent after it was acknowledged.
  std::atomic<std::int64_t> killed_ns{0};
  std::vector<std::atomic<bool>> back_up(partitions);
  std::vector<std::vector<write_record>> log(partitions);
  std::vector<std::string> first_error(partitions);
  std::vector<std::thread> writers;
  const std::string value(100, 'v');
  for (std::uint32_t p = 0; p < partitions; ++p)
    writers.emplace_back([&, p] {
      auto c = rpc::connect(address.at(o.via));
      if (!c) {
        first_error[p] = c.error().to_string();
        return;
      }
      for (std::size_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        write_record w;
        w.sent = clk::now();
        auto st = (*c)->put(table_name, cellar::put(rows[p][i % rows[p].size()]).add("f", "q", value));
        w.answered = clk::now();
        w.ok = st.is_ok();
        if (!w.ok && first_error[p].empty()) first_error[p] = st.to_string();
        log[p].push_back(w);
        const auto k = killed_ns.load();
        if (w.ok && k != 0 && w.sent.time_since_epoch().count() >= k) back_up[p] = true;
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(o.warmup_ms));
  const auto killed = clk::now();
  killed_ns = std::chrono::duration_cast<clk::duration>(killed.time_since_epoch()).count();
  ::kill(o.pids.at(victim), SIGKILL);
  // Until every partition the victim led has acknowledged a write sent after the kill, and
  // settle-ms more (for the gaps), or max-ms.
  const auto give_up = killed + std::chrono::milliseconds(o.max_ms);
  auto all_back = [&] {
    for (std::uint32_t p = 0; p < partitions; ++p)
      if ((*leaders)[p] == victim && !back_up[p]) return false;
    return true;
  };
  while (!all_back() && clk::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (all_back()) std::this_thread::sleep_for(std::chrono::milliseconds(o.settle_ms));
  stop = true;
  for (auto& t : writers) t.join();

  double first = -1, all = 0, gap_led = 0, gap_others = 0;
  bool recovered = true;
  std::size_t failed = 0;
  std::string why;
  for (std::uint32_t p = 0; p < partitions; ++p) {
    if (log[p].empty()) return fail("partition " + std::to_string(p) + "'s writer wrote nothing: " + first_error[p]);
    const bool victims = (*leaders)[p] == victim;
    double back = -1, gap = 0;
    clk::time_point last_ok = log[p].front().sent;
    for (const auto& w : log[p]) {
      if (!w.ok) {
        ++failed;
        if (why.empty()) why = first_error[p];
        continue;
      }
      gap = std::max(gap, ms_between(last_ok, w.answered));
      last_ok = w.answered;
      if (back < 0 && w.sent >= killed) back = ms_between(killed, w.answered);
    }
    if (victims) {
      if (back < 0) recovered = false;
      first = first < 0 ? back : (back < 0 ? first : std::min(first, back));
      all = std::max(all, back);
      gap_led = std::max(gap_led, gap);
    } else {
      gap_others = std::max(gap_others, gap);
    }
  }
  std::printf("victim %s led %d/%u first_ms %.1f all_ms %.1f gap_led_ms %.1f gap_others_ms %.1f failed %zu\n",
              victim.c_str(), led[victim], partitions, first, recovered ? all : -1.0, gap_led, gap_others, failed);
  if (!why.empty()) std::fprintf(stderr, "bench_failover: the first failed write: %s\n", why.c_str());
  std::fflush(stdout);
  // The connections to the cluster are not closed in order: the cluster goes away next.
  std::_Exit(recovered ? 0 : 5);
}
