// A real cluster: the test ZooKeeper plus three cellar-server processes on loopback, each
// with its own data directory, started and stopped by the test. Clients (the shell, the
// client library) talk to one node; requests for partitions of other nodes are forwarded
// over CAF's middleman.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "../shell/blog_session.h"
#include "../shell/process.h"
#include "cellar/client.h"
#include "cluster/election.h"
#include "cluster/layout.h"
#include "cluster/membership.h"
#include "cluster/placement.h"
#include "cluster/routed_connection.h"
#include "cluster_test.h"
#include "route/router.h"
#include "servers_test.h"

namespace fs = std::filesystem;
using namespace cellar;
using namespace clustertest;
using testproc::blog_reads;
using testproc::blog_writes;
using testproc::cells_of;

namespace {

std::vector<std::string> rows_of(const std::string& json_line) {
  std::vector<std::string> out;
  for (auto& c : cells_of(json_line)) {
    auto row = c.substr(0, c.find(' '));
    if (out.empty() || out.back() != row) out.push_back(row);
  }
  return out;
}

}  // namespace

TEST_CASE("seed 003 through node 1 with the partitions on all three nodes, read back through node 3",
          "[cluster][servers]") {
  cluster3 c;
  auto w = shell(c.node(1), blog_writes);
  INFO(w.out);
  REQUIRE(w.exit_code == 0);
  auto wl = lines(w.out);
  REQUIRE(wl.size() == 15);
  for (auto& l : wl) CHECK(l == "{\"ok\":true}");

  // The six partitions are spread two per node.
  auto m = c.placement();
  REQUIRE(m.tables.count("blogtable") == 1);
  CHECK(m.tables.at("blogtable").size() == 6);
  CHECK(m.load() == std::map<std::string, std::uint32_t>{{"n1", 2}, {"n2", 2}, {"n3", 2}});

  auto r = shell(c.node(3), blog_reads);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto out = lines(r.out);
  REQUIRE(out.size() == 6);
  CHECK(cells_of(out[0]) ==
        std::vector<std::string>{"1 info:title = this is doc title", "1 text: = what is this doc context ?",
                                 "2 info:title = this is doc title2", "2 text: = what is this doc context2?"});
  CHECK(cells_of(out[1]) == std::vector<std::string>{"2 info:url = http://www.javabloger.com/index.html"});
  CHECK(cells_of(out[2]) ==
        std::vector<std::string>{"1 comment_author: = javabloger", "1 comment_text: = this is nice doc",
                                 "1 comment_title: = this is doc comment_title ", "1 info:author = javabloger",
                                 "1 info:title = this is doc title", "1 info:url = http://www.javabloger.com/index.php",
                                 "1 text: = what is this doc context ?"});
  CHECK(cells_of(out[3]) == std::vector<std::string>{"1 info:author = javabloger", "1 info:title = this is doc title",
                                                     "1 info:url = http://www.javabloger.com/index.php"});
  CHECK(cells_of(out[4]) == std::vector<std::string>{"1 text: = what is this doc context ?"});
  CHECK(cells_of(out[5]) ==
        std::vector<std::string>{"1 info:author = javabloger", "1 text: = what is this doc context ?"});

  // Rows on every node: batches split by node, scans merged in global order both ways,
  // LIMIT global.
  auto conn = rpc::connect(c.node(2).address());
  REQUIRE(conn.is_ok());
  std::vector<batch_op> puts;
  for (int i = 0; i < 40; ++i) puts.push_back(cellar::put(row_name(i)).add("info", "n", std::to_string(i)));
  for (auto& res : (*conn)->batch("blogtable", std::move(puts))) CHECK(res.st.is_ok());
  auto s = shell(c.node(3),
                 "scan 'blogtable', {COLUMNS => 'info:n'}\n"
                 "scan 'blogtable', {COLUMNS => 'info:n', REVERSED => true, LIMIT => 5}\n"
                 "scan 'blogtable', {COLUMNS => 'info:n', STARTROW => 'r010', LIMIT => 3}\n");
  INFO(s.out);
  auto sl = lines(s.out);
  REQUIRE(sl.size() == 3);
  std::vector<std::string> all;
  for (int i = 0; i < 40; ++i) all.push_back(row_name(i));
  CHECK(rows_of(sl[0]) == all);
  CHECK(rows_of(sl[1]) == std::vector<std::string>{"r039", "r038", "r037", "r036", "r035"});
  CHECK(rows_of(sl[2]) == std::vector<std::string>{"r010", "r011", "r012"});

  // status 'detailed' on any node: the nodes, their partitions and the master.
  auto st = testproc::run({CELLAR_SHELL, "--connect", c.node(2).address()}, "status 'detailed'\n");
  INFO(st.out);
  CHECK(st.out.find("cluster: 3 nodes, master n") != std::string::npos);
  for (int i = 1; i <= 3; ++i) {
    std::string line;
    for (auto& l : lines(st.out))
      if (l.rfind("  n" + std::to_string(i), 0) == 0) line = l;
    CHECK(line.find(": 2 partitions [blogtable/") != std::string::npos);
  }
  CHECK(st.out.find(" (master) ") != std::string::npos);
}

TEST_CASE("a routed client sends each batch straight to its owner nodes; a thin client's are forwarded",
          "[cluster][servers][routing]") {
  cluster3 c;
  REQUIRE(lines(shell(c.node(1), "create 'rt', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  std::uint64_t before[4];
  for (int i = 1; i <= 3; ++i) before[i] = forwarded_to(c, i);

  cluster::routed_options ro;
  ro.zookeeper.connect = c.zk_connect();
  auto routed = cluster::connect_routed(ro);
  REQUIRE(routed.is_ok());
  std::vector<batch_op> puts;
  for (int i = 0; i < 60; ++i) puts.push_back(cellar::put(row_name(i)).add("f", "q", "v" + std::to_string(i)));
  for (auto& r : (*routed)->batch("rt", std::move(puts))) {
    INFO(r.st.to_string());
    CHECK(r.st.is_ok());
  }
  for (int i = 0; i < 60; i += 7) {
    auto g = (*routed)->get("rt", cellar::get(row_name(i)));
    REQUIRE(g.is_ok());
    REQUIRE(g->cells.size() == 1);
    CHECK(g->cells[0].value == "v" + std::to_string(i));
  }
  for (int i = 1; i <= 3; ++i) CHECK(forwarded_to(c, i) == before[i]);  // nothing was forwarded

  // The same batch through one node: the parts for the other two are forwarded to them.
  auto thin = rpc::connect(c.node(1).address());
  REQUIRE(thin.is_ok());
  std::vector<batch_op> again;
  for (int i = 0; i < 60; ++i) again.push_back(cellar::put(row_name(i)).add("f", "q", "w"));
  for (auto& r : (*thin)->batch("rt", std::move(again))) CHECK(r.st.is_ok());
  CHECK(forwarded_to(c, 1) == before[1]);
  CHECK(forwarded_to(c, 2) > before[2]);
  CHECK(forwarded_to(c, 3) > before[3]);
  auto g = (*routed)->get("rt", cellar::get(row_name(5)));
  REQUIRE(g.is_ok());
  CHECK(g->cells.at(0).value == "w");

  // A stale copy: a routed client that does not follow the watches reads the map, then the
  // map changes (every partition of the new, empty table 'st' given to the next node). Its
  // batch reaches nodes that no longer own the rows: they answer NOT_OWNER instead of
  // forwarding, the client re-reads the map and sends those rows to the new owners.
  REQUIRE(lines(shell(c.node(1), "create 'st', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  cluster::routed_options so;
  so.zookeeper.connect = c.zk_connect();
  so.follow_watches = false;
  auto stale = cluster::connect_routed(so);
  REQUIRE(stale.is_ok());
  {
    auto zk = c.zk();
    auto z = zk->get(cluster::layout::placement);
    REQUIRE(z.is_ok());
    auto m = cluster::decode_placement(z->data);
    REQUIRE(m.is_ok());
    auto next = *m;
    ++next.epoch;
    for (auto& o : next.tables.at("st")) o = {o.node == "n1" ? "n2" : o.node == "n2" ? "n3" : "n1", next.epoch};
    REQUIRE(zk->set(cluster::layout::placement, cluster::encode_placement(next), z->stat.version).is_ok());
    REQUIRE(zktest::eventually([&] {
      for (int i = 1; i <= 3; ++i)
        if (counts_of(c, i).epoch != next.epoch) return false;
      return true;
    }));
  }
  node_counts was[4];
  for (int i = 1; i <= 3; ++i) was[i] = counts_of(c, i);
  std::vector<batch_op> late;
  for (int i = 0; i < 60; ++i) late.push_back(cellar::put(row_name(i)).add("f", "q", "s" + std::to_string(i)));
  for (auto& r : (*stale)->batch("st", std::move(late))) {
    INFO(r.st.to_string());
    CHECK(r.st.is_ok());
  }
  std::uint64_t refused = 0;
  for (int i = 1; i <= 3; ++i) {
    auto now = counts_of(c, i);
    CHECK(now.forwarded == was[i].forwarded);      // nothing was forwarded
    CHECK(now.not_owner - was[i].not_owner <= 2);  // once per partition it was asked for
    refused += now.not_owner - was[i].not_owner;
  }
  CHECK(refused == 6);               // every partition of 'st' was sent to its old owner once
  for (int i = 0; i < 60; i += 7) {  // at the new owners, read through any node
    auto gs = (*thin)->get("st", cellar::get(row_name(i)));
    REQUIRE(gs.is_ok());
    REQUIRE(gs->cells.size() == 1);
    CHECK(gs->cells[0].value == "s" + std::to_string(i));
  }
}

TEST_CASE(
    "kill -9 of a node during writes: only its partitions fail, UNAVAILABLE; after restart every acked row is back",
    "[cluster][servers][failure]") {
  cluster3 c({"--durability", "log-sync"});
  {
    auto w = shell(c.node(1), "create 'kt', 'f'\n");
    REQUIRE(lines(w.out) == std::vector<std::string>{"{\"ok\":true}"});
  }
  auto conn = rpc::connect(c.node(1).address());
  REQUIRE(conn.is_ok());
  auto desc = (*conn)->describe("kt");
  REQUIRE(desc.is_ok());
  auto owners = c.placement().tables.at("kt");
  REQUIRE(owners.size() == 6);
  auto owner_of = [&](const std::string& row) { return owners[detail::partition_of(desc->partitioning, row)].node; };

  std::set<std::string> acked;
  int n3_refused = 0;
  for (int i = 0; i < 300; ++i) {
    if (i == 150) c.kill9(3);
    const auto row = row_name(i);
    auto st = (*conn)->put("kt", cellar::put(row).add("f", "q", "v" + row));
    if (i < 150 || owner_of(row) != "n3") {
      INFO(row << " on " << owner_of(row) << ": " << st.to_string());
      CHECK(st.is_ok());
    } else {
      INFO(row << ": " << st.to_string());
      CHECK(st.code() == code::unavailable);
      CHECK(st.message().find("'n3'") != std::string::npos);
      ++n3_refused;
    }
    if (st.is_ok()) acked.insert(row);
  }
  CHECK(n3_refused > 0);

  // Back from its own directory: every acknowledged row is there, read through node 1.
  c.start(3);
  std::string probe;  // a row of n3
  for (int i = 0; probe.empty(); ++i)
    if (owner_of(row_name(i)) == "n3" && i < 150) probe = row_name(i);
  REQUIRE(zktest::eventually([&] { return (*conn)->get("kt", cellar::get(probe)).is_ok(); }));
  int n3_rows = 0;
  for (const auto& row : acked) {
    auto g = (*conn)->get("kt", cellar::get(row));
    INFO(row << " on " << owner_of(row));
    REQUIRE(g.is_ok());
    REQUIRE(g->cells.size() == 1);
    CHECK(g->cells[0].value == "v" + row);
    if (owner_of(row) == "n3") ++n3_rows;
  }
  CHECK(n3_rows > 0);
  CHECK(acked.size() == 300u - static_cast<std::size_t>(n3_refused));
}

TEST_CASE("the master killed: DDL through another node still works", "[cluster][servers][failure]") {
  cluster3 c;
  auto zk = c.zk();
  auto master = cluster::master_election::current(*zk);
  REQUIRE(master.is_ok());
  const int m = std::stoi(master->node_id.substr(1));
  const int other = m == 3 ? 1 : 3;
  c.kill9(m);
  auto r = shell(c.node(other), "create 'after', 'f'\nput 'after', 'a', 'f:q', 'v'\nget 'after', 'a'\n");
  INFO(r.out);
  auto out = lines(r.out);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == "{\"ok\":true}");
  CHECK(out[1] == "{\"ok\":true}");
  CHECK(cells_of(out[2]) == std::vector<std::string>{"a f:q = v"});
  // The new table's partitions went to the two live nodes only.
  auto load = c.placement().load();
  CHECK(load.count(cluster3::id(m)) == 0);
  auto next = cluster::master_election::current(*zk);
  REQUIRE(next.is_ok());
  CHECK(next->node_id != master->node_id);
}

TEST_CASE("cellar-server takes the cluster settings from its TOML file and refuses bad ones",
          "[cluster][servers][config]") {
  node_dirs dirs;
  const std::string chroot = zktest::fresh_chroot("config");
  auto write = [&](const std::string& name, const std::string& extra) {
    const std::string path = dirs.root + "/" + name;
    std::ofstream f(path);
    f << "cluster = \"" << zktest::zk_server::shared().connect(chroot) << "\"\n" << extra;
    return path;
  };
  {
    const auto cfg = write("good.toml",
                           "node_id = \"t1\"\nadvertise = \"127.0.0.1:1\"\n"
                           "peer_listen = \"127.0.0.1:0\"\nzk_session_timeout_ms = 4000\n");
    testproc::server srv(CELLAR_SERVER, dirs.of(1), {"--config", cfg});
    // It joined as t1, advertising the address of the file, its peer port on 127.0.0.1.
    auto zk = zktest::connect(chroot);
    auto z = zk->get(std::string(cluster::layout::nodes) + "/t1");
    REQUIRE(z.is_ok());
    auto n = cluster::decode_node_info(z->data);
    REQUIRE(n.is_ok());
    CHECK(n->data_address == "127.0.0.1:1");
    CHECK(n->peer_address.rfind("127.0.0.1:", 0) == 0);
    CHECK(srv.stop() == 0);
  }
  // A bad value is refused before anything starts (exit 2), naming the key.
  const std::vector<std::pair<std::string, std::string>> bad{
      {"zk_session_timeout_ms = \"4000\"\nnode_id = \"t2\"\n", "key 'zk_session_timeout_ms' must be an integer"},
      {"zk_session_timeout_ms = 0\nnode_id = \"t2\"\n", "(zk_session_timeout_ms) must be 1 to 3600000, not 0"},
      {"node_id = \"a/b\"\n", "--node-id (node_id): "},
      {"node_id = \"t2\"\nadvertise = \"nowhere\"\n", "(advertise) must be address:port, not nowhere"},
      {"node_id = \"t2\"\npeer_listen = 9190\n", "key 'peer_listen' must be a string"},
      {"", "needs --node-id (node_id)"},
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const auto cfg = write("bad" + std::to_string(i) + ".toml", bad[i].first);
    // (Under `timeout`: a server that took the file for good would serve until stopped.)
    auto r = testproc::run({"/usr/bin/timeout", "20", CELLAR_SERVER, "--config", cfg, "--listen", "127.0.0.1:0",
                            "--data", ""},
                           "", true);
    INFO(bad[i].first << r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find(bad[i].second) != std::string::npos);
  }
}

#ifdef CELLAR_LOADGEN
TEST_CASE("YCSB A through the load generator's cluster target: every request to its owner node, 0 errors",
          "[cluster][servers][loadgen]") {
  cluster3 c;
  std::uint64_t before[4];
  for (int i = 1; i <= 3; ++i) before[i] = forwarded_to(c, i);
  const auto json = fs::temp_directory_path() / ("cellar-cluster-ycsb-" + std::to_string(getpid()) + ".json");
  auto r = testproc::run({CELLAR_LOADGEN,
                          "--cluster",
                          c.zk_connect(),
                          "--workload",
                          "a",
                          "--phase",
                          "both",
                          "--records",
                          "600",
                          "--duration",
                          "2",
                          "--threads",
                          "1",
                          "--connections",
                          "2",
                          "--depth",
                          "4",
                          "--partitioning",
                          "range:6",
                          "--field-length",
                          "20",
                          "--quiet",
                          "--json",
                          json.string()},
                         "", true);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);  // 3: some operation failed
  const auto summary = testproc::run({CELLAR_LOADGEN, "summary", json.string()}, "");
  fs::remove(json);
  INFO(summary.out);
  std::istringstream fields(summary.out);
  double ops_per_s = 0, p99 = 0;
  std::uint64_t errors = 1, ops = 0;
  fields >> ops_per_s >> p99 >> errors >> ops;
  CHECK(errors == 0);
  CHECK(ops > 0);
  // Straight to the owners: no node forwarded anything to another.
  for (int i = 1; i <= 3; ++i) CHECK(forwarded_to(c, i) == before[i]);
  // The table's six partitions are two per node, and every loaded row reads back through any
  // node (here each node scans the whole table, merging across the three).
  CHECK(c.placement().load().at("n1") == 2);
  for (int i = 1; i <= 3; ++i) {
    auto conn = rpc::connect(c.node(i).address());
    REQUIRE(conn.is_ok());
    auto sc = (*conn)->scan("usertable", cellar::scan{});
    REQUIRE(sc.is_ok());
    std::set<std::string> rows;
    for (;;) {
      auto page = (*sc)->next(1000);
      REQUIRE(page.is_ok());
      if (page->empty()) break;
      for (auto& row : *page) rows.insert(row.row);
    }
    CHECK(rows.size() == 600u);
  }
}
#endif

// --- moves -----------------------------------------------------------------------------------

namespace {

// The rows of `rows` that `conn` does not read back as "v" + row (with why), in batches.
std::vector<std::string> missing_rows(connection& conn, const std::string& table,
                                      const std::vector<std::string>& rows) {
  std::vector<std::string> missing;
  for (std::size_t at = 0; at < rows.size(); at += 200) {
    std::vector<batch_op> gets;
    const std::size_t end = std::min(rows.size(), at + 200);
    for (std::size_t k = at; k < end; ++k) gets.push_back(cellar::get(rows[k]).column("f", "q"));
    auto res = conn.batch(table, std::move(gets));
    for (std::size_t k = at; k < end; ++k) {
      const auto& r = res[k - at];
      if (!r.st.is_ok())
        missing.push_back(rows[k] + ": " + r.st.to_string());
      else if (r.row.cells.size() != 1 || r.row.cells[0].value != "v" + rows[k])
        missing.push_back(rows[k] + ": not there (" + std::to_string(r.row.cells.size()) + " cells)");
    }
  }
  return missing;
}

// missing_rows through a connection of its own to `address`, made on a thread of its own
// (a connection belongs to the thread that made it, and a thread has one).
std::vector<std::string> missing_through(const std::string& address, const std::string& table,
                                         const std::vector<std::string>& rows) {
  std::vector<std::string> out;
  std::thread t([&] {
    auto c = rpc::connect(address);
    if (!c.is_ok()) {
      out.push_back("connect: " + c.error().to_string());
      return;
    }
    out = missing_rows(**c, table, rows);
  });
  t.join();
  return out;
}

// Keeps writing new rows ("w<n>" = "v" + row) through one node (or the connection `connect`
// makes) and remembers those acknowledged.
class writer {
 public:
  using connector = std::function<result<std::unique_ptr<connection>>()>;
  writer(const std::string& address, std::string table, std::string prefix = "w")
      : writer([address] { return rpc::connect(address); }, std::move(table), std::move(prefix)) {}
  writer(connector connect, std::string table, std::string prefix)
      : table_(std::move(table)), prefix_(std::move(prefix)) {
    // A connection belongs to the thread that made it (cellar/client.h).
    thread_ = std::thread([this, connect] {
      auto c = connect();
      if (!c.is_ok()) {
        std::lock_guard lock(mu_);
        failures_.push_back("connect: " + c.error().to_string());
        return;
      }
      auto conn = std::move(*c);
      for (int i = 0; !stop_; ++i) {
        char b[16];
        std::snprintf(b, sizeof b, "%06d", i);
        const std::string row = prefix_ + b;
        const auto t0 = std::chrono::steady_clock::now();
        auto st = conn->put(table_, cellar::put(row).add("f", "q", "v" + row));
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
        std::lock_guard lock(mu_);
        if (st.is_ok())
          acked_.push_back(row);
        else
          failures_.push_back(row + " (" + std::to_string(took.count()) + " ms): " + st.to_string());
      }
    });
  }
  ~writer() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::size_t acked_count() {
    std::lock_guard lock(mu_);
    return acked_.size();
  }
  // Waits until `n` more writes were acknowledged.
  bool advance(std::size_t n) {
    const auto target = acked_count() + n;
    return zktest::eventually([&] { return acked_count() >= target; });
  }
  // What a failed advance() should show: the counts and the last failures.
  std::string state() {
    std::lock_guard lock(mu_);
    std::string s = std::to_string(acked_.size()) + " acked, " + std::to_string(failures_.size()) + " failed";
    for (std::size_t i = failures_.size() > 5 ? failures_.size() - 5 : 0; i < failures_.size(); ++i)
      s += "\n  " + failures_[i];
    return s;
  }
  std::vector<std::string> acked() {
    std::lock_guard lock(mu_);
    return acked_;
  }
  std::vector<std::string> failures() {
    std::lock_guard lock(mu_);
    return failures_;
  }

 private:
  std::string table_, prefix_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> acked_, failures_;
  std::thread thread_;
};

// The partition of `table` that holds `row`.
std::uint32_t partition_of_row(connection& conn, const std::string& table, const std::string& row) {
  auto d = conn.describe(table);
  REQUIRE(d.is_ok());
  return detail::partition_of(d->partitioning, row);
}

}  // namespace

TEST_CASE("a partition moves to another node under write load: no acknowledged write is lost",
          "[cluster][servers][moves]") {
  cluster3 c({"--durability", "log-sync"});
  REQUIRE(lines(shell(c.node(1), "create 'mv', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  auto conn = rpc::connect(c.node(1).address());
  REQUIRE(conn.is_ok());
  auto rows = preload(**conn, "mv", 300);
  // A partition of n2 goes to n3; the writes come through n1, which forwards them.
  const auto before = c.placement();
  const std::uint32_t p = first_partition_on(before, "mv", "n2");
  const std::string name = "mv/" + std::to_string(p);

  // Two writers, through the node that runs the move and through the old owner.
  writer w(c.node(1).address(), "mv"), w2(c.node(2).address(), "mv", "x");
  if (!w.advance(50)) FAIL(w.state());
  auto moved = shell(c.node(1), "move '" + name + "', 'n3'\n");
  INFO(moved.out);
  CHECK(lines(moved.out) == std::vector<std::string>{"{\"ok\":true}"});
  if (!w.advance(50)) FAIL(w.state());
  if (!w2.advance(50)) FAIL(w2.state());
  w.stop();
  w2.stop();
  for (auto* x : {&w, &w2}) {
    INFO("failed writes: " << x->failures().size() << (x->failures().empty() ? "" : ", first " + x->failures()[0]));
    CHECK(x->failures().empty());  // held during the freeze and sent on, never refused
  }

  const auto after = c.placement();
  CHECK(after.tables.at("mv")[p].node == "n3");
  CHECK(after.epoch > before.epoch);
  CHECK(c.zk()->children(cluster::layout::moves)->empty());  // the intent is gone

  // Every acknowledged row, read through every node.
  auto acked = w.acked();
  auto acked2 = w2.acked();
  acked.insert(acked.end(), acked2.begin(), acked2.end());
  rows.insert(rows.end(), acked.begin(), acked.end());
  std::size_t in_p = 0;
  for (const auto& r : acked) in_p += partition_of_row(**conn, "mv", r) == p;
  CHECK(in_p > 0);  // the move had writes to catch up with
  for (int i = 1; i <= 3; ++i) {
    auto missing = missing_through(c.node(i).address(), "mv", rows);
    INFO("through n" << i << ": " << missing.size() << " missing, first " << (missing.empty() ? "" : missing[0]));
    CHECK(missing.empty());
  }

  // n2 no longer serves it from its copy: with n3 gone, its rows fail through n2, naming
  // n3; n3 restarted has them all, from its own directory.
  std::vector<std::string> p_rows;
  for (const auto& r : rows)
    if (partition_of_row(**conn, "mv", r) == p) p_rows.push_back(r);
  c.kill9(3);
  auto gone = missing_through(c.node(2).address(), "mv", {p_rows.front()});
  REQUIRE(gone.size() == 1);
  CHECK(gone[0].find("UNAVAILABLE") != std::string::npos);
  CHECK(gone[0].find("'n3'") != std::string::npos);
  c.start(3);
  REQUIRE(zktest::eventually([&] { return missing_through(c.node(2).address(), "mv", {p_rows.front()}).empty(); }));
  auto missing = missing_through(c.node(2).address(), "mv", p_rows);
  INFO(missing.size() << " of " << p_rows.size() << " missing after n3's restart");
  CHECK(missing.empty());
}

TEST_CASE("a node joins a cluster of two; the balancer gives every node its share, rows stay readable",
          "[cluster][servers][moves]") {
  cluster3 c({}, 2);
  REQUIRE(lines(shell(c.node(1), "create 'bt', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  auto conn = rpc::connect(c.node(1).address());
  REQUIRE(conn.is_ok());
  auto rows = preload(**conn, "bt", 200);
  CHECK(c.placement().load() == std::map<std::string, std::uint32_t>{{"n1", 3}, {"n2", 3}});

  c.start(3);
  // n3 is a member once it shows in the status.
  REQUIRE(zktest::eventually([&] {
    return testproc::run({CELLAR_SHELL, "--connect", c.node(1).address()}, "status 'detailed'\n").out.find("  n3") !=
           std::string::npos;
  }));
  auto bal = shell(c.node(2), "balancer\n");
  INFO(bal.out);
  REQUIRE(lines(bal.out).size() == 1);
  CHECK(lines(bal.out)[0].find("\"ran\":true") != std::string::npos);
  CHECK(c.placement().load() == std::map<std::string, std::uint32_t>{{"n1", 2}, {"n2", 2}, {"n3", 2}});
  for (int i = 1; i <= 3; ++i) {
    auto missing = missing_through(c.node(i).address(), "bt", rows);
    INFO("through n" << i << ": " << missing.size() << " missing, first " << (missing.empty() ? "" : missing[0]));
    CHECK(missing.empty());
  }
  // Balanced already: it runs and moves nothing.
  const auto epoch = c.placement().epoch;
  CHECK(lines(testproc::run({CELLAR_SHELL, "--connect", c.node(3).address()}, "balancer\n").out).at(0) == "true");
  CHECK(c.placement().epoch == epoch);

  // Bad requests name what was wrong and change nothing.
  auto bad =
      lines(shell(c.node(1), "move 'bt/9', 'n1'\nmove 'nosuch/0', 'n1'\nmove 'bt/0', 'n9'\nmove 'bt', 'n1'\n").out);
  REQUIRE(bad.size() == 4);
  CHECK(bad[0].find("\"error\":\"NOT_FOUND\"") != std::string::npos);
  CHECK(bad[0].find("has no partition 9") != std::string::npos);
  CHECK(bad[1].find("\"error\":\"TABLE_NOT_FOUND\"") != std::string::npos);
  CHECK(bad[2].find("\"error\":\"NOT_FOUND\"") != std::string::npos);
  CHECK(bad[2].find("node 'n9' is not a live member") != std::string::npos);
  CHECK(bad[3].find("\"error\":\"INVALID_ARGUMENT\"") != std::string::npos);
  CHECK(c.placement().epoch == epoch);
}

TEST_CASE("a move whose target is killed before the flip is aborted and loses nothing", "[cluster][servers][moves]") {
  cluster3 c({"--durability", "log-sync"});
  REQUIRE(lines(shell(c.node(1), "create 'ab', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  auto conn = rpc::connect(c.node(1).address());
  REQUIRE(conn.is_ok());
  // Enough data in each partition that the copy takes a while (several chunks).
  auto rows = preload(**conn, "ab", 3000, 2000);
  const auto before = c.placement();
  const std::uint32_t p = first_partition_on(before, "ab", "n2");

  writer w(c.node(1).address(), "ab");
  if (!w.advance(20)) FAIL(w.state());
  testproc::output moved;
  std::atomic<bool> mover_done{false};
  std::thread mover([&] {
    moved = shell(c.node(1), "move 'ab/" + std::to_string(p) + "', 'n3'\n");
    mover_done = true;
  });
  // Kill the target as soon as the move has started (its intent is in ZooKeeper). A move
  // that ended before its intent was seen (done already, or refused) says how.
  auto zk = c.zk();
  const bool started = zktest::eventually(
      [&] {
        auto k = zk->children(cluster::layout::moves);
        return (k.is_ok() && !k->empty()) || mover_done;
      },
      std::chrono::milliseconds(20000));
  if (mover_done) {
    mover.join();
    FAIL("the move ended before its intent was seen: " << moved.out);
  }
  c.kill9(3);
  mover.join();
  if (!started) FAIL("no move intent within 20 s; the move, once its target was killed, said: " << moved.out);
  INFO(moved.out);
  CHECK(moved.out.find("\"error\":\"UNAVAILABLE\"") != std::string::npos);
  CHECK(moved.out.find("aborted") != std::string::npos);
  if (!w.advance(20)) FAIL(w.state());  // n2 writes again: it was unfrozen
  w.stop();

  const auto after = c.placement();
  CHECK(after.tables.at("ab")[p].node == "n2");
  CHECK(after.epoch == before.epoch);
  CHECK(zk->children(cluster::layout::moves)->empty());
  auto acked = w.acked();
  std::vector<std::string> on_n1_n2;
  for (const auto& r : rows)
    if (before.tables.at("ab")[partition_of_row(**conn, "ab", r)].node != "n3") on_n1_n2.push_back(r);
  for (const auto& r : acked)  // acked before n3 died, or on n1 and n2
    if (before.tables.at("ab")[partition_of_row(**conn, "ab", r)].node != "n3") on_n1_n2.push_back(r);
  std::size_t in_p = 0;
  for (const auto& r : acked) in_p += partition_of_row(**conn, "ab", r) == p;
  CHECK(in_p > 0);  // the moving partition took writes
  auto missing = missing_rows(**conn, "ab", on_n1_n2);
  INFO(missing.size() << " missing, first " << (missing.empty() ? "" : missing[0]));
  CHECK(missing.empty());
}

TEST_CASE("a partition moved away and back: a restart does not replay its old log records over it",
          "[cluster][servers][moves]") {
  cluster3 c({"--durability", "log-sync"});
  REQUIRE(lines(shell(c.node(1), "create 'bk', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  auto conn = rpc::connect(c.node(1).address());
  REQUIRE(conn.is_ok());
  auto rows = preload(**conn, "bk", 120);
  const auto before = c.placement();
  const std::uint32_t p = first_partition_on(before, "bk", "n2");
  std::vector<std::string> p_rows;
  for (const auto& r : rows)
    if (partition_of_row(**conn, "bk", r) == p) p_rows.push_back(r);
  REQUIRE(p_rows.size() >= 2);
  const std::string name = "bk/" + std::to_string(p);
  // Away to n3, a row of it deleted there, back to n2; then n2 killed and restarted.
  REQUIRE(lines(shell(c.node(1), "move '" + name + "', 'n3'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  std::vector<batch_op> del;
  del.push_back(cellar::deletion(p_rows[0]));
  for (auto& r : (*conn)->batch("bk", std::move(del))) REQUIRE(r.st.is_ok());
  REQUIRE(lines(shell(c.node(1), "move '" + name + "', 'n2'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  c.kill9(2);
  c.start(2);
  const std::vector<std::string> rest(p_rows.begin() + 1, p_rows.end());
  REQUIRE(zktest::eventually([&] { return missing_through(c.node(1).address(), "bk", rest).empty(); }));
  auto deleted = missing_through(c.node(1).address(), "bk", {p_rows[0]});
  INFO("the deleted row after n2's restart: " << (deleted.empty() ? "back" : deleted[0]));
  REQUIRE(deleted.size() == 1);
  CHECK(deleted[0].find("not there (0 cells)") != std::string::npos);
}

namespace {

// The JSON lines of `script` run through node `i`.
std::vector<std::string> through(cluster3& c, int i, const std::string& script) {
  auto r = shell(c.node(i), script);
  INFO(r.out);
  return lines(r.out);
}

bool has(const std::string& line, const std::string& part) { return line.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("disable, enable, truncate and table attributes in a cluster behave as on one node",
          "[cluster][servers][admin]") {
  cluster3 c;
  auto w = through(c, 1,
                   "create 'x', 'f'\nput 'x', 'a', 'f:q', 'v', 1\nput 'x', 'b', 'f:q', 'w', 1\n"
                   "disable 'x'\ndisable 'x'\nis_disabled 'x'\nget 'x', 'a'\n");
  REQUIRE(w.size() == 7);
  for (int i = 0; i < 5; ++i) CHECK(w[static_cast<std::size_t>(i)] == R"({"ok":true})");
  CHECK(w[5] == R"({"ok":true,"disabled":true})");
  CHECK(has(w[6], R"("error":"TABLE_DISABLED")"));
  // A DDL through node 3 returns once node 3 has applied the catalog that holds it, and so
  // the disable before it: node 3 then refuses reads and writes of 'x' too.
  auto n3 = through(c, 3, "create 'barrier3', 'f'\nis_enabled 'x'\nget 'x', 'a'\nput 'x', 'c', 'f:q', 'z'\nscan 'x'\n");
  REQUIRE(n3.size() == 5);
  CHECK(n3[1] == R"({"ok":true,"enabled":false})");
  for (int i = 2; i < 5; ++i) CHECK(has(n3[static_cast<std::size_t>(i)], R"("error":"TABLE_DISABLED")"));
  // truncate of a disabled table through node 2 empties it and leaves it enabled, and
  // prints what one node prints.
  auto t = testproc::run({CELLAR_SHELL, "--connect", c.node(2).address(), "--quiet"}, "truncate 'x'\n");
  CHECK(t.out == "Truncating 'x' table (it may take a while):\nTruncating table...\n");
  auto n2 = through(c, 2,
                    "is_enabled 'x'\ncount 'x'\nput 'x', 'c', 'f:q', 'z', 1\nenable 'x'\n"
                    "alter 'x', READONLY => true\nput 'x', 'd', 'f:q', 'no'\nalter 'x', 'delete' => 'f'\n");
  REQUIRE(n2.size() == 7);
  CHECK(n2[0] == R"({"ok":true,"enabled":true})");
  CHECK(has(n2[1], R"("count":0)"));
  CHECK(n2[2] == R"({"ok":true})");
  CHECK(n2[3] == R"({"ok":true})");  // enabling an enabled table does nothing
  CHECK(n2[4] == R"({"ok":true})");
  CHECK(has(n2[5], R"("error":"TABLE_READ_ONLY")"));
  CHECK(has(n2[6], "is the only column family in the table, so it cannot be deleted"));
  // Node 1 sees all of it once a DDL through it returns.
  auto n1 = through(c, 1,
                    "create 'barrier1', 'f'\nget 'x', 'c'\nput 'x', 'e', 'f:q', 'no'\ndescribe 'x'\n"
                    "create 'y', 'f', 'g'\nput 'y', 'r', 'f:q', '1', 1\nput 'y', 'r', 'g:q', '2', 1\n"
                    "TRUNCATE TABLE y$f;\nget 'y', 'r'\n");
  REQUIRE(n1.size() == 9);
  CHECK(has(n1[1], R"("value":"z")"));
  CHECK(has(n1[2], R"("error":"TABLE_READ_ONLY")"));
  CHECK(has(n1[3], R"("attributes":{"READONLY":"true"})"));
  CHECK(n1[7] == R"({"ok":true})");  // OceanBase's TRUNCATE TABLE of one family
  CHECK(has(n1[8], R"("column":"g:q")"));
  CHECK_FALSE(has(n1[8], R"("column":"f:q")"));
}

TEST_CASE("namespaces in a cluster: made through one node, used and listed through the others",
          "[cluster][servers][admin][namespace]") {
  cluster3 c;
  auto n1 = through(c, 1, "create_namespace 'app', {'owner' => 'ops'}\ncreate 'app:t', 'f'\n");
  REQUIRE(n1.size() == 2);
  CHECK(n1[0] == R"({"ok":true,"namespace":"app"})");
  auto n2 = through(c, 2,
                    "create 'barrier2', 'f'\nput 'app:t', 'r', 'f:q', 'v', 1\ndrop_namespace 'app'\n"
                    "create 'nope:t', 'f'\n");
  REQUIRE(n2.size() == 4);
  CHECK(n2[1] == R"({"ok":true})");
  CHECK(has(n2[2], "Only empty namespaces can be removed. Namespace app has 1 tables"));
  CHECK(has(n2[3], R"("error":"NOT_FOUND")"));
  auto n3 = through(c, 3,
                    "create 'barrier3', 'f'\nlist_namespace\ndescribe_namespace 'app'\n"
                    "list_namespace_tables 'app'\nget 'app:t', 'r'\nsplit 'barrier3', 'k'\n");
  REQUIRE(n3.size() == 6);
  CHECK(has(n3[1], R"("namespaces":["app","default","hbase"])"));
  CHECK(has(n3[2], R"("properties":{"owner":"ops"})"));
  CHECK(has(n3[3], R"("tables":["t"])"));
  CHECK(has(n3[4], R"("value":"v")"));
  CHECK(has(n3[5], R"("error":"UNSUPPORTED")"));
}

TEST_CASE("status counts a killed node among the dead servers", "[cluster][servers][admin][failure]") {
  cluster3 c;
  REQUIRE(through(c, 1, "create 's', 'f'\n") == std::vector<std::string>{R"({"ok":true})"});
  {
    auto st = testproc::run({CELLAR_SHELL, "--connect", c.node(1).address()}, "status\n");
    CHECK(has(st.out, "1 active master, 0 backup masters, 3 servers, 0 dead, 2.0000 average load\n"));
  }
  c.kill9(3);
  // Its session expires one session timeout later; then it is a dead server.
  REQUIRE(zktest::eventually([&] {
    return has(testproc::run({CELLAR_SHELL, "--connect", c.node(1).address()}, "status 'detailed'\n").out,
               "1 dead servers\n");
  }));
  auto st = testproc::run({CELLAR_SHELL, "--connect", c.node(1).address()}, "status 'detailed'\n");
  INFO(st.out);
  CHECK(has(st.out, "2 live servers\n    n1 " + c.node(1).address() + "\n        numberOfOnlineRegions="));
  CHECK(has(st.out, "\n    n2 " + c.node(2).address() + "\n"));
  CHECK(has(st.out, "1 dead servers\n    n3\n"));
  CHECK(has(st.out, "  n3 DOWN"));
  auto sum = testproc::run({CELLAR_SHELL, "--connect", c.node(2).address()}, "status\n");
  CHECK(has(sum.out, "2 servers, 1 dead, 3.0000 average load\n"));
  auto js = through(c, 2, "status 'simple'\n");
  REQUIRE(js.size() == 1);
  CHECK(has(js[0], R"("servers":2,"dead_servers":1)"));
  CHECK(has(js[0], R"("dead_server_names":["n3"])"));
}

TEST_CASE("split, merge_region and list_regions through cellar-shell --cluster", "[cluster][servers][admin][reshape]") {
  cluster3 c;
  std::string script = "create 'sp', 'f', SPLITS => ['m']\n";
  for (char r = 'a'; r <= 'z'; ++r) script += std::string("put 'sp', '") + r + "', 'f:q', 'v" + r + "', 1\n";
  script +=
      "split 'sp', 'g'\nlist_regions 'sp'\nmerge_region 'sp/1', 'sp/2'\nlist_regions 'sp'\nscan 'sp'\n"
      "create 'hp', 'f', {NUMREGIONS => 3}\nsplit 'hp', 'x'\n";
  auto r = testproc::run({CELLAR_SHELL, "--cluster", c.zk_connect(), "--json"}, script);
  INFO(r.out);
  auto out = lines(r.out);
  REQUIRE(out.size() == 26 + 8);
  for (int i = 0; i < 27; ++i) CHECK(out[i] == R"({"ok":true})");
  CHECK(out[27] == R"({"ok":true,"table":"sp","splits":1})");
  // Three regions, [,g) [g,m) [m,), each on a node of the cluster.
  const auto& split = out[28];
  CHECK(has(split, R"("region":"sp/2")"));
  CHECK(has(split, R"("end_key":"g")"));
  CHECK(has(split, R"("start_key":"g","end_key":"m")"));
  CHECK_FALSE(has(split, R"("server":"")"));
  CHECK(out[29] == R"({"ok":true,"table":"sp"})");
  const auto& merged = out[30];
  CHECK(has(merged, R"("start_key":"g","end_key":"")"));
  CHECK_FALSE(has(merged, R"("region":"sp/2")"));
  CHECK_FALSE(has(merged, R"("server":"")"));
  // Every row once, in order across the bounds.
  const auto& rows = out[31];
  std::size_t at = 0;
  for (char row = 'a'; row <= 'z'; ++row) {
    const auto next = rows.find(std::string(R"("value":"v)") + row + "\"", at);
    INFO(row);
    REQUIRE(next != std::string::npos);
    at = next + 1;
  }
  CHECK(out[32] == R"({"ok":true})");
  CHECK(has(out[33], R"("error":"UNSUPPORTED")"));
  CHECK(has(out[33], "KEY (hash)"));
}

TEST_CASE("a split and a merge under write load: the RPC and routed clients' writes wait, none fails or is lost",
          "[cluster][servers][reshape]") {
  cluster3 c;
  REQUIRE(lines(shell(c.node(1), "create 'sw', 'f', SPLITS => ['m']\n").out) ==
          std::vector<std::string>{"{\"ok\":true}"});
  // Rows "b..." and "h..." fall in [, m), which is split at 'g' and merged back; "x..." in
  // [m, ), which neither changes. A thin RPC client of node 2 and a routed client.
  cluster::routed_options ro;
  ro.zookeeper.connect = c.zk_connect();
  writer thin(c.node(2).address(), "sw", "b");
  writer routed([ro] { return cluster::connect_routed(ro); }, "sw", "h");
  writer other(c.node(3).address(), "sw", "x");
  for (auto* w : {&thin, &routed, &other})
    if (!w->advance(30)) FAIL(w->state());
  auto split = testproc::run({CELLAR_SHELL, "--cluster", c.zk_connect(), "--json"}, "split 'sw', 'g'\n");
  CHECK(lines(split.out) == std::vector<std::string>{R"({"ok":true,"table":"sw","splits":1})"});
  for (auto* w : {&thin, &routed})
    if (!w->advance(30)) FAIL(w->state());
  auto merge = testproc::run({CELLAR_SHELL, "--cluster", c.zk_connect(), "--json"}, "merge_region 'sw/0', 'sw/1'\n");
  CHECK(lines(merge.out) == std::vector<std::string>{R"({"ok":true,"table":"sw"})"});
  for (auto* w : {&thin, &routed})
    if (!w->advance(30)) FAIL(w->state());
  std::vector<std::string> rows;
  for (auto* w : {&thin, &routed, &other}) {
    w->stop();
    INFO(w->state());
    CHECK(w->failures().empty());  // a freeze's refusals were sent again, not returned
    auto acked = w->acked();
    rows.insert(rows.end(), acked.begin(), acked.end());
  }
  for (int i = 1; i <= 3; ++i) {
    auto missing = missing_through(c.node(i).address(), "sw", rows);
    INFO("through n" << i << ": " << missing.size() << " missing, first " << (missing.empty() ? "" : missing[0]));
    CHECK(missing.empty());
  }
}
