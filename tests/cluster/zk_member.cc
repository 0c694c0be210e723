// A cellar node's ZooKeeper side in a process of its own, for tests that kill it with
// SIGKILL: joins the membership and the master election, prints "ready" and waits.
//   zk_member CONNECT NODE_ID SESSION_TIMEOUT_MS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <spdlog/spdlog.h>

#include "cluster/election.h"
#include "cluster/membership.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: zk_member CONNECT NODE_ID SESSION_TIMEOUT_MS\n");
    return 2;
  }
  using namespace cellar::cluster;
  spdlog::set_level(spdlog::level::warn);  // stdout is the pipe to the test
  zk_options o;
  o.connect = argv[1];
  o.session_timeout = std::chrono::milliseconds(std::atoi(argv[3]));
  auto zk = zk_client::open(o);
  if (!zk) {
    std::fprintf(stderr, "%s\n", zk.error().to_string().c_str());
    return 1;
  }
  node_info self{argv[2], std::string(argv[2]) + ".data:1", std::string(argv[2]) + ".peer:2"};
  auto m = membership::join(**zk, self, nullptr);
  auto e = master_election::enter(**zk, argv[2], {});
  if (!m || !e) return 1;
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(60));
}
