// tests/cluster/servers_test.h: a real cluster for the tests: the test ZooKeeper plus
// cellar-server processes on loopback, each with its own data directory, started and
// stopped by the test; and the helpers the cluster-server tests share.
#pragma once

#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "../shell/process.h"
#include "../support/temp_dir.h"
#include "cellar/connection.h"
#include "cluster/layout.h"
#include "cluster/placement.h"
#include "cluster_test.h"

namespace clustertest {

using namespace cellar;
using testproc::lines;

// A fresh directory `root` holding each node's data directory, removed afterwards.
struct node_dirs {
  testsupport::made_dir dir{"cellar-cluster-test"};
  const std::string& root = dir.path;
  std::string of(int i) const { return root + "/n" + std::to_string(i); }
};

// Nodes n1..n3 (or the first `n`) of a cluster under a fresh chroot.
class cluster3 {
 public:
  explicit cluster3(std::vector<std::string> extra = {}, int n = 3)
      : chroot_(zktest::fresh_chroot("servers")), extra_(std::move(extra)) {
    for (int i = 1; i <= n; ++i) start(i);
  }

  void start(int i) {
    std::vector<std::string> args{"--cluster",
                                  zktest::zk_server::shared().connect(chroot_),
                                  "--node-id",
                                  id(i),
                                  "--zk-session-timeout-ms",
                                  "4000",
                                  "--default-partitions",
                                  "6",
                                  "--worker-threads",
                                  "1",
                                  "--event-loops",
                                  "1"};
    for (auto& e : extra_) args.push_back(e);
    nodes_[i] = std::make_unique<testproc::server>(CELLAR_SERVER, dirs_.of(i), args);
  }
  // SIGKILL, no cleanup: the node's session expires one session timeout later (4 s: short
  // sessions expire spuriously on a loaded machine, and a node that loses its session
  // while joining exits).
  void kill9(int i) {
    ::kill(nodes_[i]->pid(), SIGKILL);
    nodes_[i].reset();  // reaps it
  }
  static std::string id(int i) { return "n" + std::to_string(i); }
  testproc::server& node(int i) { return *nodes_[i]; }
  std::string data_dir(int i) const { return dirs_.of(i); }
  std::unique_ptr<cluster::zk_client> zk() { return zktest::connect(chroot_); }
  std::string zk_connect() const { return zktest::zk_server::shared().connect(chroot_); }

  cluster::placement_map placement() {
    auto c = zk();
    auto z = c->get(cluster::layout::placement);
    REQUIRE(z.is_ok());
    auto m = cluster::decode_placement(z->data);
    REQUIRE(m.is_ok());
    return *m;
  }

 private:
  node_dirs dirs_;
  std::string chroot_;
  std::vector<std::string> extra_;
  std::map<int, std::unique_ptr<testproc::server>> nodes_;
};

inline testproc::output shell(testproc::server& srv, const std::string& script) {
  return testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, script);
}

using zktest::first_partition_on;  // cluster_test.h

inline std::string row_name(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "r%03d", i);
  return b;
}

// From node `i`'s `status 'detailed'`: the batch parts and scan pages other nodes forwarded
// to it, the client requests it answered NOT_OWNER, and its placement epoch.
struct node_counts {
  std::uint64_t forwarded = 0, not_owner = 0, epoch = 0;
};
inline node_counts counts_of(cluster3& c, int i) {
  auto st = testproc::run({CELLAR_SHELL, "--connect", c.node(i).address()}, "status 'detailed'\n");
  std::smatch m;
  if (!std::regex_search(st.out, m,
                         std::regex("placement epoch ([0-9]+) .*which served ([0-9]+) forwarded requests and "
                                    "answered ([0-9]+) NOT_OWNER"))) {
    FAIL("no cluster line in: " << st.out);
  }
  return {std::stoull(m[2].str()), std::stoull(m[3].str()), std::stoull(m[1].str())};
}
inline std::uint64_t forwarded_to(cluster3& c, int i) { return counts_of(c, i).forwarded; }

// Rows r000.. r<n-1> of `table` with f:q = "v" + row (and f:pad, `value_bytes` bytes).
inline std::vector<std::string> preload(connection& conn, const std::string& table, int n,
                                        std::size_t value_bytes = 0) {
  std::vector<std::string> rows;
  for (int at = 0; at < n; at += 100) {
    std::vector<batch_op> puts;
    for (int i = at; i < std::min(n, at + 100); ++i) {
      rows.push_back(row_name(i));
      std::string v = "v" + rows.back();
      puts.push_back(cellar::put(rows.back()).add("f", "q", v).add("f", "pad", std::string(value_bytes, 'p')));
    }
    for (auto& r : conn.batch(table, std::move(puts))) REQUIRE(r.st.is_ok());
  }
  return rows;
}

}  // namespace clustertest
