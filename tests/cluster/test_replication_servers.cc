// Replication in a real cluster: the test ZooKeeper plus three (or four) cellar-server
// processes, each partition of a table a Raft group of three replicas, one per node. Nodes
// are killed with SIGKILL while a client writes; what was acknowledged must survive. With
// four nodes, replicas move by Raft membership change: by `balancer` and `move`, and to
// replace the replicas of a node dead past --dead-node-timeout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../support/eventually.h"
#include "cellar/client.h"
#include "cluster/routed_connection.h"
#include "cluster/zk_state.h"
#include "servers_test.h"

using namespace cellar;
using namespace clustertest;
using namespace std::chrono_literals;
using testsupport::eventually;

namespace {

const std::vector<std::string> replicated{"--durability",          "log", "--replication-factor", "3",
                                          "--election-timeout-ms", "400"};

std::unique_ptr<connection> connect_to(testproc::server& s) {
  auto c = rpc::connect(s.address());
  INFO(s.address() << ": " << (c.is_ok() ? std::string("connected") : c.error().to_string()));
  REQUIRE(c.is_ok());
  return std::move(*c);
}

// The rows of `acked` that do not read back with their value through `conn`, each with why.
std::vector<std::string> missing(connection& conn, const std::set<std::string>& acked,
                                 const std::string& table = "rt") {
  std::vector<std::string> out;
  for (const auto& row : acked) {
    auto g = conn.get(table, cellar::get(row));
    if (!g.is_ok())
      out.push_back(row + ": " + g.error().to_string());
    else if (g->cells.size() != 1 || g->cells[0].value != "v" + row)
      out.push_back(row + ": " + std::to_string(g->cells.size()) + " cell(s), not 'v" + row + "'");
  }
  return out;
}

// Writes rows b<row_name(0..n-1)> to 'rt', each retried until accepted (within 30 s);
// returns them.
std::set<std::string> write_until_accepted(connection& conn, int n) {
  std::set<std::string> rows;
  for (int i = 0; i < n; ++i) {
    const auto row = "b" + row_name(i);
    REQUIRE(eventually([&] { return conn.put("rt", cellar::put(row).add("f", "q", "v" + row)).is_ok(); }, 30s));
    rows.insert(row);
  }
  return rows;
}

void check_all(connection& conn, const std::set<std::string>& acked) {
  CHECK(missing(conn, acked) == std::vector<std::string>{});
}

// `work` run with a connection of its own to `s`, on a thread of its own: a connection runs
// a kj event loop on the thread that made it, and a thread holds one loop at a time. `work`
// must not use Catch's assertions (they are not thread-safe); it returns what to check.
template <class Work>
auto with_connection(testproc::server& s, Work work) -> decltype(work(std::declval<connection&>())) {
  std::optional<decltype(work(std::declval<connection&>()))> out;
  std::string error;
  std::thread([&] {
    auto c = rpc::connect(s.address());
    if (!c.is_ok())
      error = c.error().to_string();
    else
      out = work(**c);
  }).join();
  INFO(s.address() << ": " << error);
  REQUIRE(out.has_value());
  return std::move(*out);
}

// Every row of `acked` reads back through a connection of its own to `s`.
void check_all_on(testproc::server& s, const std::set<std::string>& acked, const std::string& table = "rt") {
  CHECK(with_connection(s, [&](connection& c) { return missing(c, acked, table); }) == std::vector<std::string>{});
}

bool is_failover_error(const status& st) { return st.code() == code::unavailable || st.code() == code::not_leader; }

}  // namespace

TEST_CASE("factor 3: every partition has three replicas on distinct nodes; describe shows the factor",
          "[cluster][servers][replication]") {
  cluster3 c(replicated);
  auto made = shell(c.node(1), "create 'rt', 'f'\n");
  REQUIRE(lines(made.out) == std::vector<std::string>{"{\"ok\":true}"});
  const auto owners = c.placement().tables.at("rt");
  REQUIRE(owners.size() == 6);
  std::map<std::string, int> leads;
  for (const auto& o : owners) {
    REQUIRE(o.replicas.size() == 3);
    CHECK(std::set<std::string>(o.replicas.begin(), o.replicas.end()) == std::set<std::string>{"n1", "n2", "n3"});
    ++leads[o.node];
  }
  CHECK(leads == std::map<std::string, int>{{"n1", 2}, {"n2", 2}, {"n3", 2}});
  auto d = shell(c.node(2), "describe 'rt'\n");
  CHECK(d.out.find("REGION_REPLICATION") != std::string::npos);

  // More replicas than live nodes, or an even factor, is refused with the numbers.
  auto five = shell(c.node(1), "create 'r5', 'f', {REGION_REPLICATION => 5}\n");
  CHECK_THAT(five.out, Catch::Contains("needs 5 replicas") && Catch::Contains("3 node(s) are live"));
  auto two = shell(c.node(1), "create 'r2', 'f', {REGION_REPLICATION => 2}\n");
  CHECK(two.out.find("INVALID_ARGUMENT") != std::string::npos);
  auto one = shell(c.node(1), "create 'r1', 'f', {REGION_REPLICATION => 1}\n");
  CHECK(lines(one.out) == std::vector<std::string>{"{\"ok\":true}"});
  CHECK(c.placement().tables.at("r1").at(0).replicas.empty());

  // A write through any node is read through every other.
  auto n1 = connect_to(c.node(1));
  for (int i = 0; i < 30; ++i) {
    auto st = n1->put("rt", cellar::put(row_name(i)).add("f", "q", "v" + row_name(i)));
    INFO(row_name(i) << ": " << st.to_string());
    REQUIRE(st.is_ok());
  }
  std::set<std::string> rows;
  for (int i = 0; i < 30; ++i) rows.insert(row_name(i));
  check_all_on(c.node(2), rows);
  check_all_on(c.node(3), rows);

  // status 'detailed' lists the node's six replicas of 'rt' (and none of 'r1', which has
  // one copy): the leaders with each follower's progress, the followers with their leader.
  n1.reset();  // one connection per thread: the shell runs as its own process anyway
  std::string detailed;
  CHECK(eventually(
      [&] {
        detailed = testproc::run({CELLAR_SHELL, "--connect", c.node(1).address()}, "status 'detailed'\n").out;
        return detailed.find("  rt/5 ") != std::string::npos && detailed.find("(none known)") == std::string::npos &&
               detailed.find(" candidate") == std::string::npos;
      },
      30s));
  INFO(detailed);
  CHECK(detailed.find("replicas on n1:") != std::string::npos);
  int leaders = 0, followers = 0;
  for (int i = 0; i < 6; ++i) {
    const auto at = detailed.find("  rt/" + std::to_string(i) + " ");
    REQUIRE(at != std::string::npos);
    const auto line = detailed.substr(at, detailed.find('\n', at) - at);
    if (line.find(" leader, term ") != std::string::npos) {
      ++leaders;
      CHECK(line.find("n2 matches ") != std::string::npos);
      CHECK(line.find("n3 matches ") != std::string::npos);
    } else {
      ++followers;
      CHECK(line.find(" follower of n") != std::string::npos);
    }
  }
  CHECK(leaders + followers == 6);
  CHECK(detailed.find("  r1/") == std::string::npos);

  // Leadership settles where the placement put it (the first replica of each set), so each
  // node leads its share, two of the six: whoever won the first elections hands over.
  const auto sets = c.placement().tables.at("rt");
  const auto leads_as_placed = [&](const std::string& status) {
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const auto at = status.find("  rt/" + std::to_string(i) + " ");
      if (at == std::string::npos) return false;
      const auto line = status.substr(at, status.find('\n', at) - at);
      const bool leads = line.find(" leader, term ") != std::string::npos;
      if (leads != (sets[i].replicas.front() == "n1")) return false;
    }
    return true;
  };
  CHECK(eventually(
      [&] {
        detailed = testproc::run({CELLAR_SHELL, "--connect", c.node(1).address()}, "status 'detailed'\n").out;
        return leads_as_placed(detailed);
      },
      30s));
  INFO(detailed);
  CHECK(std::count_if(sets.begin(), sets.end(), [](const auto& s) { return s.replicas.front() == "n1"; }) == 2);
}

TEST_CASE(
    "factor 3: kill -9 of a node during writes loses no acknowledged write, writes go on; it comes back and "
    "catches up",
    "[cluster][servers][replication][failure]") {
  cluster3 c(replicated);
  REQUIRE(lines(shell(c.node(1), "create 'rt', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  auto conn = connect_to(c.node(1));
  std::set<std::string> acked;
  int failed = 0;
  std::chrono::steady_clock::time_point killed;
  std::chrono::milliseconds longest_gap{0};
  auto last_ok = std::chrono::steady_clock::now();
  for (int i = 0; i < 400; ++i) {
    if (i == 150) {
      c.kill9(2);  // the preferred leader of two partitions, a follower of the others
      killed = std::chrono::steady_clock::now();
    }
    const auto row = row_name(i);
    auto st = conn->put("rt", cellar::put(row).add("f", "q", "v" + row));
    const auto now = std::chrono::steady_clock::now();
    if (st.is_ok()) {
      acked.insert(row);
      longest_gap = std::max(longest_gap, std::chrono::duration_cast<std::chrono::milliseconds>(now - last_ok));
      last_ok = now;
    } else {
      INFO(row << ": " << st.to_string());
      CHECK(is_failover_error(st));
      ++failed;
    }
  }
  // Before the kill every write succeeds; after it, at most the writes in flight on the
  // broken connections fail, and the rest are served by the new leaders.
  INFO(failed << " failed writes; the longest pause between acknowledged writes was " << longest_gap.count() << " ms");
  CHECK(failed <= 6);
  CHECK(acked.size() >= 390u);
  CHECK(longest_gap < 10s);

  // Every acknowledged write is there, read through both survivors.
  check_all(*conn, acked);
  check_all_on(c.node(3), acked);

  // n2 comes back from its own Raft files; then n3 dies. n1 and n2 are then the majority
  // every write needs, so writes that succeed now prove n2's replicas caught up with their
  // leaders' logs (an append is accepted only by a replica whose log matches the leader's).
  c.start(2);
  const auto through_n2 = with_connection(c.node(2), [](connection& n2) {
    std::set<std::string> ok;
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (!n2.get("rt", cellar::get(row_name(0))).is_ok()) {
      if (std::chrono::steady_clock::now() > until) return ok;
      std::this_thread::sleep_for(50ms);
    }
    for (int i = 400; i < 450; ++i) {
      const auto row = row_name(i);
      if (n2.put("rt", cellar::put(row).add("f", "q", "v" + row)).is_ok()) ok.insert(row);
    }
    return ok;
  });
  CHECK(through_n2.size() >= 45u);
  acked.insert(through_n2.begin(), through_n2.end());
  c.kill9(3);
  for (int i = 450; i < 500; ++i) {
    const auto row = row_name(i);
    REQUIRE(eventually([&] { return conn->put("rt", cellar::put(row).add("f", "q", "v" + row)).is_ok(); }, 30s));
    acked.insert(row);
  }
  check_all(*conn, acked);
  check_all_on(c.node(2), acked);
}

TEST_CASE(
    "factor 3: with two of three nodes dead writes fail with a clear error, no hang; a node back and they "
    "work again",
    "[cluster][servers][replication][failure]") {
  cluster3 c(replicated);
  REQUIRE(lines(shell(c.node(1), "create 'rt', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  auto conn = connect_to(c.node(1));
  std::set<std::string> acked;
  for (int i = 0; i < 50; ++i) {
    const auto row = row_name(i);
    REQUIRE(conn->put("rt", cellar::put(row).add("f", "q", "v" + row)).is_ok());
    acked.insert(row);
  }
  c.kill9(2);
  c.kill9(3);
  const auto t0 = std::chrono::steady_clock::now();
  auto st = conn->put("rt", cellar::put("late").add("f", "q", "x"));
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(st.to_string());
  CHECK(is_failover_error(st));
  CHECK(st.message().find("partition") != std::string::npos);
  CHECK(took < 30s);

  c.start(2);
  REQUIRE(eventually([&] { return conn->put("rt", cellar::put("back").add("f", "q", "vback")).is_ok(); }, 60s));
  acked.insert("back");
  check_all(*conn, acked);
}

TEST_CASE("factor 3: the routed client reaches a replicated table while its preferred leaders' node is dead",
          "[cluster][servers][replication][failure]") {
  cluster3 c(replicated);
  REQUIRE(lines(shell(c.node(1), "create 'rt', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  cluster::routed_options ro;
  ro.zookeeper.connect = c.zk_connect();
  auto routed = cluster::connect_routed(ro);
  REQUIRE(routed.is_ok());
  auto& conn = **routed;
  std::set<std::string> acked;
  for (int i = 0; i < 60; ++i) {
    const auto row = row_name(i);
    REQUIRE(conn.put("rt", cellar::put(row).add("f", "q", "v" + row)).is_ok());
    acked.insert(row);
  }
  c.kill9(1);
  // Every later write is acknowledged once the groups that n1 led have new leaders.
  for (int i = 60; i < 120; ++i) {
    const auto row = row_name(i);
    REQUIRE(eventually([&] { return conn.put("rt", cellar::put(row).add("f", "q", "v" + row)).is_ok(); }, 30s));
    acked.insert(row);
  }
  check_all(conn, acked);
}

namespace {

// Writes rows w<n>.. to 'rt' through a connection of its own to `s`, on a thread of its
// own, until stopped; keeps the rows acknowledged and the errors seen.
class writer {
 public:
  writer(testproc::server& s, std::string prefix) : address_(s.address()), prefix_(std::move(prefix)) {
    thread_ = std::thread([this] { run(); });
  }
  ~writer() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::size_t acknowledged() {
    std::lock_guard<std::mutex> l(mu_);
    return acked_.size();
  }
  std::set<std::string> acked() {
    std::lock_guard<std::mutex> l(mu_);
    return acked_;
  }
  std::vector<std::string> errors() {
    std::lock_guard<std::mutex> l(mu_);
    return errors_;
  }

 private:
  void run() {
    auto c = rpc::connect(address_);
    if (!c.is_ok()) {
      std::lock_guard<std::mutex> l(mu_);
      errors_.push_back("connect: " + c.error().to_string());
      return;
    }
    for (int i = 0; !stop_; ++i) {
      char b[24];
      std::snprintf(b, sizeof b, "%s%05d", prefix_.c_str(), i);
      const std::string row = b;
      auto st = (*c)->put("rt", cellar::put(row).add("f", "q", "v" + row));
      std::lock_guard<std::mutex> l(mu_);
      if (st.is_ok())
        acked_.insert(row);
      else
        errors_.push_back(row + ": " + st.to_string());
    }
  }

  std::string address_, prefix_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<std::string> acked_;
  std::vector<std::string> errors_;
  std::thread thread_;
};

// Whether every partition of 'rt' has three replicas, all on nodes of `allowed`.
bool sets_within(cluster3& c, const std::set<std::string>& allowed) {
  const auto map = c.placement();
  for (const auto& o : map.tables.at("rt")) {
    const std::set<std::string> s(o.replicas.begin(), o.replicas.end());
    if (s.size() != 3 || o.node != o.replicas.front()) return false;
    for (const auto& n : s)
      if (!allowed.count(n)) return false;
  }
  return true;
}

// Node `i`'s `status 'detailed'`.
std::string detailed_of(cluster3& c, int i) {
  return testproc::run({CELLAR_SHELL, "--connect", c.node(i).address()}, "status 'detailed'\n").out;
}

// How many partitions of 'rt' node `i`'s replicas lead now, from its status.
long leading(cluster3& c, int i) {
  const auto out = detailed_of(c, i);
  const std::regex leader("\n  rt/[0-9]+ leader,");
  return std::distance(std::sregex_iterator(out.begin(), out.end(), leader), std::sregex_iterator());
}

// The one line of a shell's JSON answer, or the whole output when it is not one line.
std::string answer(const testproc::output& o) {
  const auto l = lines(o.out);
  return l.size() == 1 ? l[0] : o.out;
}

}  // namespace

TEST_CASE(
    "factor 3 on 4 nodes: a node dead past --dead-node-timeout has its replicas replaced on live nodes; "
    "nothing acknowledged is lost, and the new replicas hold the data",
    "[cluster][servers][replication][failure][membership]") {
  auto args = replicated;
  args.insert(args.end(), {"--dead-node-timeout", "2"});
  cluster3 c(args, 4);
  REQUIRE(lines(shell(c.node(1), "create 'rt', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  REQUIRE(c.placement().partitions_of("n4").size() >= 1);
  writer w(c.node(1), "a");
  REQUIRE(eventually([&] { return w.acknowledged() >= 100; }, 60s));

  // n4 dies; two seconds after its session expires the master replaces its replicas.
  c.kill9(4);
  CHECK(eventually([&] { return sets_within(c, {"n1", "n2", "n3"}); }, 90s));
  const auto after_repair = w.acknowledged();
  CHECK(eventually([&] { return w.acknowledged() >= after_repair + 50; }, 60s));
  w.stop();
  const auto acked = w.acked();
  INFO(w.errors().size() << " failed writes, the first: " << (w.errors().empty() ? "" : w.errors().front()));
  CHECK(w.errors().size() <= 6);
  auto conn = connect_to(c.node(1));
  check_all(*conn, acked);

  // n2 dies too: every group keeps two of its three replicas, one of them possibly new. A
  // write commits only once a majority's logs match the leader's, so writes that succeed
  // now prove the new replicas hold the log (or a snapshot of it).
  c.kill9(2);
  const auto later = write_until_accepted(*conn, 60);
  check_all(*conn, acked);
  check_all(*conn, later);
  check_all_on(c.node(3), acked);

  // Two live nodes for a factor of 3: nothing can replace n2's replicas, and the master's
  // status says so.
  std::string status;
  CHECK(eventually(
      [&] {
        status = testproc::run({CELLAR_SHELL, "--connect", c.node(1).address()}, "status 'detailed'\n").out +
                 testproc::run({CELLAR_SHELL, "--connect", c.node(3).address()}, "status 'detailed'\n").out;
        return status.find("keeps a replica on a dead node: only 2 live node(s)") != std::string::npos;
      },
      30s));
  INFO(status);
  CHECK(sets_within(c, {"n1", "n2", "n3"}));
}

TEST_CASE(
    "factor 3 on 4 nodes: balancer after a node joins, and move of a replicated partition, under writes are "
    "membership changes; nothing is lost",
    "[cluster][servers][replication][membership]") {
  // The table is made on three nodes, so every node holds all six partitions; then n4 joins.
  cluster3 c(replicated, 3);
  const std::vector<std::string> ok{"{\"ok\":true}"};
  REQUIRE(lines(shell(c.node(1), "create 'rt', 'f'\n").out) == ok);
  {
    // As many nodes as the factor: no replica can move. transfer_leader piles every
    // preferred leader on n1, which then leads them; balancer evens them out by changing
    // preferred leaders within the sets, and the replicas lead where the map says.
    for (int p = 0; p < 6; ++p) {
      const auto t = shell(c.node(2), "transfer_leader 'rt/" + std::to_string(p) + "', 'n1'\n");
      INFO(t.out);
      REQUIRE(lines(t.out) == ok);
    }
    CHECK(c.placement().leaders() == std::map<std::string, std::uint32_t>{{"n1", 6}});
    CHECK(eventually([&] { return leading(c, 1) == 6; }, 30s));
    const auto load = c.placement().load();
    const auto bal = shell(c.node(3), "balancer\n");
    INFO(bal.out);
    CHECK(lines(bal.out) == std::vector<std::string>{"{\"ok\":true,\"ran\":true}"});
    const auto map = c.placement();
    CHECK(map.leaders() == std::map<std::string, std::uint32_t>{{"n1", 2}, {"n2", 2}, {"n3", 2}});
    CHECK(map.load() == load);  // nothing moved
    CHECK(sets_within(c, {"n1", "n2", "n3"}));
    std::map<int, long> led;
    CHECK(eventually(
        [&] {
          for (int i = 1; i <= 3; ++i) led[i] = leading(c, i);
          return led == std::map<int, long>{{1, 2}, {2, 2}, {3, 2}};
        },
        30s));
    INFO("n1 leads " << led[1] << ", n2 " << led[2] << ", n3 " << led[3]);
    CHECK(led == std::map<int, long>{{1, 2}, {2, 2}, {3, 2}});
  }
  c.start(4);
  REQUIRE(eventually(
      [&] {
        return testproc::run({CELLAR_SHELL, "--connect", c.node(1).address()}, "status 'detailed'\n")
                   .out.find("  n4") != std::string::npos;
      },
      30s));
  REQUIRE(c.placement().partitions_of("n4").empty());
  {
    // The balancer gives n4 its share of the 18 replicas and 6 preferred leaders while a
    // client writes.
    writer w(c.node(1), "c");
    REQUIRE(eventually([&] { return w.acknowledged() >= 100; }, 60s));
    const auto bal = shell(c.node(2), "balancer\n");
    INFO(bal.out);
    REQUIRE(lines(bal.out).size() == 1);
    CHECK(lines(bal.out)[0].find("\"ran\":true") != std::string::npos);
    const auto map = c.placement();
    std::map<std::string, std::uint32_t> reps, leads;
    for (const auto& n : {"n1", "n2", "n3", "n4"}) reps[n] = leads[n] = 0;
    for (const auto& [n, k] : map.load()) reps[n] = k;
    for (const auto& [n, k] : map.leaders()) leads[n] = k;
    for (const auto& [n, k] : reps) {
      INFO(n << " holds " << k << " replicas and leads " << leads[n]);
      CHECK((k == 4 || k == 5));
      CHECK((leads[n] == 1 || leads[n] == 2));
    }
    CHECK(sets_within(c, {"n1", "n2", "n3", "n4"}));  // three distinct nodes each
    const auto count = w.acknowledged();
    CHECK(eventually([&] { return w.acknowledged() >= count + 50; }, 60s));
    w.stop();
    INFO(w.errors().size() << " failed writes, the first: " << (w.errors().empty() ? "" : w.errors().front()));
    CHECK(w.errors().empty());
    check_all_on(c.node(4), w.acked());
    // Balanced: a second run moves nothing.
    const auto epoch = c.placement().epoch;
    CHECK(lines(shell(c.node(3), "balancer\n").out) == std::vector<std::string>{"{\"ok\":true,\"ran\":true}"});
    CHECK(c.placement().epoch == epoch);
  }

  const auto before = c.placement().tables.at("rt").at(0);
  std::string outsider;
  for (const auto& n : {"n1", "n2", "n3", "n4"})
    if (!before.holds(n)) outsider = n;
  REQUIRE(!outsider.empty());
  const std::string leaving = before.node;
  const int outsider_i = outsider.back() - '0';
  writer w(c.node(outsider_i), "a");
  REQUIRE(eventually([&] { return w.acknowledged() >= 100; }, 60s));

  // The preferred leader's replica moves to the node outside the set, while writes go on.
  const auto moved = shell(c.node(outsider_i), "move 'rt/0', '" + outsider + "'\n");
  INFO(moved.out);
  REQUIRE(lines(moved.out) == std::vector<std::string>{"{\"ok\":true}"});
  const auto after = c.placement().tables.at("rt").at(0);
  CHECK(after.node == outsider);
  CHECK(after.replicas.front() == outsider);
  CHECK(!after.holds(leaving));
  CHECK(std::vector<std::string>(after.replicas.begin() + 1, after.replicas.end()) ==
        std::vector<std::string>(before.replicas.begin() + 1, before.replicas.end()));
  CHECK(after.replica_ids.at(0) == before.next_replica_id());  // an id the group never had
  // Moving it again to a node that holds it is a no-op; other partitions kept their sets.
  CHECK(lines(shell(c.node(1), "move 'rt/0', '" + outsider + "'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  const auto count = w.acknowledged();
  CHECK(eventually([&] { return w.acknowledged() >= count + 50; }, 60s));
  w.stop();
  INFO(w.errors().size() << " failed writes, the first: " << (w.errors().empty() ? "" : w.errors().front()));
  CHECK(w.errors().empty());
  const auto acked = w.acked();
  check_all_on(c.node(outsider_i), acked);

  {
    // A follower's replica moves by name, the leader staying where it is.
    const auto set1 = c.placement().tables.at("rt").at(1);
    const std::string follower = set1.replicas[1];
    std::string free1;
    for (const auto& n : {"n1", "n2", "n3", "n4"})
      if (!set1.holds(n)) free1 = n;
    const auto mv = shell(c.node(1), "move 'rt/1', '" + follower + "', '" + free1 + "'\n");
    INFO(mv.out);
    REQUIRE(lines(mv.out) == ok);
    const auto now1 = c.placement().tables.at("rt").at(1);
    CHECK(now1.node == set1.node);
    CHECK(now1.replicas == std::vector<std::string>{set1.replicas[0], free1, set1.replicas[2]});
    CHECK(now1.replica_ids.at(1) == set1.next_replica_id());
    std::string on_follower, on_free;
    CHECK(eventually(
        [&] {
          on_follower = detailed_of(c, follower.back() - '0');
          on_free = detailed_of(c, free1.back() - '0');
          return on_follower.find("replicas on") != std::string::npos &&
                 on_follower.find("  rt/1 ") == std::string::npos &&
                 on_free.find("  rt/1 follower") != std::string::npos;
        },
        30s));
    INFO(on_follower << on_free);
    check_all_on(c.node(free1.back() - '0'), acked);
    // Refusals name what is wrong, and change nothing.
    const auto epoch = c.placement().epoch;
    const auto refused = [&](const std::string& script, const std::string& code, const std::string& says) {
      const auto a = answer(shell(c.node(2), script + "\n"));
      INFO(script << ": " << a);
      CHECK(a.find("\"error\":\"" + code + "\"") != std::string::npos);
      CHECK(a.find(says) != std::string::npos);
    };
    refused("move 'rt/1', '" + follower + "', '" + follower + "'", "INVALID_ARGUMENT",
            "node '" + follower + "' holds no replica of partition 1 of 'rt'");
    refused("move 'rt/1', '" + set1.replicas[0] + "', '" + free1 + "'", "INVALID_ARGUMENT",
            "node '" + free1 + "' holds a replica of partition 1 of 'rt' already");
    refused("move 'rt/1', '" + set1.replicas[0] + "', 'n9'", "NOT_FOUND", "node 'n9' is not a live member");
    refused("move 'rt/99', 'n1', 'n2'", "NOT_FOUND", "has no partition 99");
    refused("transfer_leader 'rt/1', '" + follower + "'", "INVALID_ARGUMENT",
            "node '" + follower + "' holds no replica of partition 1 of 'rt'");
    CHECK(c.placement().epoch == epoch);
  }

  // The leaving node let go of its replica (status lists no rt/0 there), and one of the
  // two replicas that stayed dies: partition 0 now commits only with the moved replica.
  std::string detailed;
  CHECK(eventually(
      [&] {
        detailed =
            testproc::run({CELLAR_SHELL, "--connect", c.node(leaving.back() - '0').address()}, "status 'detailed'\n")
                .out;
        return detailed.find("replicas on") != std::string::npos && detailed.find("  rt/0 ") == std::string::npos;
      },
      30s));
  INFO(detailed);
  c.kill9(after.replicas[1].back() - '0');
  auto conn = connect_to(c.node(outsider_i));
  const auto later = write_until_accepted(*conn, 40);
  check_all(*conn, acked);
  check_all(*conn, later);
}

namespace {

// The Raft files (replica/storage.h) of table incarnation `uid` in node `i`'s data directory.
std::vector<std::string> raft_files_of(cluster3& c, int i, std::uint64_t uid) {
  std::vector<std::string> out;
  const std::string prefix = std::to_string(uid) + "-";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(c.data_dir(i) + "/raft", ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find(".raft") != std::string::npos) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The logs among `files` (a snapshot may come and go as a group writes).
std::vector<std::string> logs(const std::vector<std::string>& files) {
  std::vector<std::string> out;
  for (const auto& f : files)
    if (f.ends_with(".raftlog")) out.push_back(f);
  return out;
}

// The uid of table `table` in the cluster's catalog.
std::uint64_t table_uid(cluster3& c, const std::string& table) {
  auto zk = c.zk();
  auto read = cluster::read_catalog(*zk, nullptr);
  REQUIRE(read.is_ok());
  const auto* t = read->catalog.find(table);
  REQUIRE(t != nullptr);
  return t->uid;
}

// Rows p000.. of `table`, written through `conn`.
std::set<std::string> put_rows(connection& conn, const std::string& table, const std::string& prefix, int n) {
  std::set<std::string> rows;
  for (int i = 0; i < n; ++i) {
    const auto row = prefix + row_name(i);
    auto st = conn.put(table, cellar::put(row).add("f", "q", "v" + row));
    INFO(table << "/" << row << ": " << st.to_string());
    REQUIRE(st.is_ok());
    rows.insert(row);
  }
  return rows;
}

const std::vector<std::string> ok_line{"{\"ok\":true}"};

}  // namespace

TEST_CASE("factor 3: dropping a table deletes its replicas' Raft files on every node; other tables keep theirs",
          "[cluster][servers][replication][cleanup]") {
  cluster3 c(replicated);
  REQUIRE(lines(shell(c.node(1), "create 'rt', 'f'\n").out) == ok_line);
  REQUIRE(lines(shell(c.node(1), "create 'keep', 'f'\n").out) == ok_line);
  const auto dropped = table_uid(c, "rt");
  const auto kept = table_uid(c, "keep");
  auto conn = connect_to(c.node(1));
  put_rows(*conn, "rt", "a", 30);
  const auto keep_rows = put_rows(*conn, "keep", "a", 30);
  // Three nodes, factor 3: every node holds a replica of each of the six partitions.
  std::map<int, std::vector<std::string>> keep_files;
  for (int i = 1; i <= 3; ++i) {
    INFO("n" << i);
    CHECK(eventually([&] { return logs(raft_files_of(c, i, dropped)).size() == 6; }, 30s));
    CHECK(eventually([&] { return logs(raft_files_of(c, i, kept)).size() == 6; }, 30s));
    keep_files[i] = raft_files_of(c, i, kept);
  }

  const auto drop = shell(c.node(2), "disable 'rt'\ndrop 'rt'\n");
  INFO(drop.out);
  REQUIRE(lines(drop.out) == std::vector<std::string>{"{\"ok\":true}", "{\"ok\":true}"});
  for (int i = 1; i <= 3; ++i) {
    INFO("n" << i);
    std::vector<std::string> left;
    CHECK(eventually(
        [&] {
          left = raft_files_of(c, i, dropped);
          return left.empty();
        },
        30s));
    CHECK(left == std::vector<std::string>{});
    CHECK(logs(raft_files_of(c, i, kept)) == logs(keep_files[i]));
  }

  // The other table still works through every node, and a table made under the dropped
  // name is a new incarnation with none of the old rows.
  const auto more = put_rows(*conn, "keep", "b", 30);
  for (int i = 1; i <= 3; ++i) {
    check_all_on(c.node(i), keep_rows, "keep");
    check_all_on(c.node(i), more, "keep");
  }
  REQUIRE(lines(shell(c.node(3), "create 'rt', 'f'\n").out) == ok_line);
  CHECK(table_uid(c, "rt") != dropped);
  REQUIRE(eventually([&] { return conn->get("rt", cellar::get("a" + row_name(0))).is_ok(); }, 30s));
  CHECK(conn->get("rt", cellar::get("a" + row_name(0)))->cells.empty());
  for (int i = 1; i <= 3; ++i) CHECK(raft_files_of(c, i, dropped).empty());
}

TEST_CASE(
    "factor 3 on 4 nodes: a node whose replicas were replaced while it was dead deletes their Raft files when "
    "it comes back and does not rejoin their groups; the partitions keep their data",
    "[cluster][servers][replication][failure][membership][cleanup]") {
  auto args = replicated;
  args.insert(args.end(), {"--dead-node-timeout", "2"});
  cluster3 c(args, 4);
  REQUIRE(lines(shell(c.node(1), "create 'rt', 'f'\n").out) == ok_line);
  const auto uid = table_uid(c, "rt");
  REQUIRE(c.placement().partitions_of("n4").size() >= 1);
  auto conn = connect_to(c.node(1));
  const auto acked = put_rows(*conn, "rt", "", 100);
  std::vector<std::string> stale;
  REQUIRE(eventually(
      [&] {
        stale = raft_files_of(c, 4, uid);
        return logs(stale).size() >= c.placement().partitions_of("n4").size();
      },
      30s));

  // n4 dies; two seconds after its session expires the master replaces its replicas.
  c.kill9(4);
  REQUIRE(eventually([&] { return sets_within(c, {"n1", "n2", "n3"}); }, 90s));
  REQUIRE(raft_files_of(c, 4, uid) == stale);  // nothing ran there meanwhile

  // Back, n4 finds that the placement names it for none of them: their files go, and it
  // runs no replica of them (nor do the groups list it).
  c.start(4);
  std::vector<std::string> left;
  CHECK(eventually(
      [&] {
        left = raft_files_of(c, 4, uid);
        return left.empty();
      },
      30s));
  CHECK(left == std::vector<std::string>{});
  const auto detailed = [&](int i) {
    return testproc::run({CELLAR_SHELL, "--connect", c.node(i).address()}, "status 'detailed'\n").out;
  };
  const auto on_n4 = detailed(4);
  INFO(on_n4);
  CHECK(on_n4.find("cluster:") != std::string::npos);
  CHECK(on_n4.find("  rt/") == std::string::npos);
  for (int i = 1; i <= 3; ++i) {
    const auto on = detailed(i);
    INFO(on);
    CHECK(on.find("n4 matches") == std::string::npos);
    CHECK(on.find("n4 (learner)") == std::string::npos);
  }
  CHECK(sets_within(c, {"n1", "n2", "n3"}));

  // The partitions kept their data: it reads back through n4, and writes still commit.
  check_all_on(c.node(4), acked);
  const auto later = put_rows(*conn, "rt", "b", 30);
  check_all_on(c.node(4), later);

  // A table made now gives n4 replicas: their files stay through later placement changes.
  REQUIRE(lines(shell(c.node(4), "create 'rt2', 'f'\n").out) == ok_line);
  const auto uid2 = table_uid(c, "rt2");
  const auto mine = c.placement().partitions_of("n4").size();
  REQUIRE(mine >= 1);
  std::vector<std::string> fresh;
  REQUIRE(eventually(
      [&] {
        fresh = raft_files_of(c, 4, uid2);
        return logs(fresh).size() >= mine;
      },
      30s));
  const auto rows2 = put_rows(*conn, "rt2", "", 30);
  REQUIRE(lines(shell(c.node(2), "create 'rt3', 'f'\n").out) == ok_line);
  CHECK(logs(raft_files_of(c, 4, uid2)) == logs(fresh));
  check_all_on(c.node(4), rows2, "rt2");
}

TEST_CASE("factor 3: split and merge_region through cellar-shell --cluster; each new region a group on three nodes",
          "[cluster][servers][replication][reshape]") {
  cluster3 c(replicated);
  REQUIRE(lines(shell(c.node(1), "create 'rs', 'f', SPLITS => ['m']\n").out) ==
          std::vector<std::string>{"{\"ok\":true}"});
  std::set<std::string> rows;
  {
    auto n2 = connect_to(c.node(2));
    for (char r = 'a'; r <= 'z'; ++r) {
      const std::string row(1, r);
      REQUIRE(eventually([&] { return n2->put("rs", cellar::put(row).add("f", "q", "v" + row)).is_ok(); }, 30s));
      rows.insert(row);
    }
  }
  auto r = testproc::run({CELLAR_SHELL, "--cluster", c.zk_connect(), "--json"},
                         "split 'rs', 'g'\nmerge_region 'rs/1', 'rs/2'\nsplit 'rs', 't'\nlist_regions 'rs'\n");
  INFO(r.out);
  auto out = lines(r.out);
  REQUIRE(out.size() == 4);
  CHECK(out[0] == R"({"ok":true,"table":"rs","splits":1})");
  CHECK(out[1] == R"({"ok":true,"table":"rs"})");
  CHECK(out[2] == R"({"ok":true,"table":"rs","splits":1})");
  CHECK(out[3].find(R"("start_key":"g","end_key":"t")") != std::string::npos);
  CHECK(out[3].find(R"("start_key":"t","end_key":"")") != std::string::npos);
  const auto owners = c.placement().tables.at("rs");
  REQUIRE(owners.size() == 3);
  for (const auto& o : owners)
    CHECK(std::set<std::string>(o.replicas.begin(), o.replicas.end()) == std::set<std::string>{"n1", "n2", "n3"});
  auto n3 = connect_to(c.node(3));
  std::vector<std::string> gone;
  CHECK(eventually(
      [&] {
        gone = missing(*n3, rows, "rs");
        return gone.empty();
      },
      30s));
  for (const auto& g : gone) FAIL_CHECK(g);
}
