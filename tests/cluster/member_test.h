// tests/cluster/member_test.h: stores joined to a cluster as members in one process, for the
// tests that run several members side by side.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "cellar/store.h"
#include "cluster/member.h"
#include "cluster_test.h"

namespace zktest {

// A store and its membership; the member goes before the store is closed.
struct member_node {
  std::unique_ptr<cellar::store> s;
  std::unique_ptr<cellar::cluster::member> m;
};

// A store opened with `so`, joined as member `id` to the cluster under `chroot` of the
// shared ZooKeeper server (a 4 s session), with the given Raft election timeout and leader
// wait (cluster/member.h).
inline member_node join_member(const std::string& chroot, const std::string& id, cellar::store_options so = {},
                               std::chrono::milliseconds election = std::chrono::milliseconds(1000),
                               std::chrono::milliseconds leader_wait = cellar::cluster::member_options{}.leader_wait) {
  member_node n;
  auto opened = cellar::cluster::member::open_store(so);
  INFO(describe_status(opened));
  REQUIRE(opened.is_ok());
  n.s = std::move(opened).value();
  cellar::cluster::member_options o;
  o.zookeeper.connect = zk_server::shared().connect(chroot);
  o.zookeeper.session_timeout = std::chrono::milliseconds(4000);
  o.node_id = id;
  o.data_address = "127.0.0.1:1";
  o.election_timeout = election;
  o.leader_wait = leader_wait;
  auto m = cellar::cluster::member::join(*n.s, o);
  INFO(describe_status(m));
  REQUIRE(m.is_ok());
  n.m = std::move(m).value();
  return n;
}

}  // namespace zktest
