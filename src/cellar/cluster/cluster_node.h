// cluster/cluster_node.h: one cellar node's place in the cluster, everything that talks to
// ZooKeeper in one object.
//
// A `cluster_node` opens a ZooKeeper session, registers the node (membership.h), enters
// the master election (election.h), and keeps a current copy of the catalog and of the
// placement map, re-read whenever ZooKeeper reports a change (zk_state.h). While it is the
// master it also serves the DDL requests of every node (ddl.h) and is the one node that
// may change the placement map (move). docs/cluster.md describes the protocols.
//
// What it does not do: open or close partitions, ship data, route requests. The owner
// (cellar-server) does that from the callbacks: `catalog_changed` and `placement_changed`
// tell it which partitions this node must serve now.
//
// Session loss: while disconnected the node keeps its copies (they may be stale) and a
// master steps down; after an expiry it registers again, enters the election again and
// re-reads catalog and map, calling the callbacks when they changed meanwhile.
//
// Threads: every callback runs on the ZooKeeper event thread (zk_client.h), one at a
// time: members_changed, mastership_changed, catalog_changed, placement_changed. They may
// call the accessors and move()/plan_balance(), not ddl() (which waits for that thread),
// and must not destroy the node. Every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cellar/status.h"
#include "cluster/catalog_state.h"
#include "cluster/election.h"
#include "cluster/membership.h"
#include "cluster/placement.h"
#include "cluster/zk_client.h"

namespace cellar::cluster {

struct cluster_options {
  zk_options zookeeper;  // connect "host:port[,...][/chroot]", session timeout
  node_info self;
  // How long ddl() waits for the master's answer.
  std::chrono::milliseconds ddl_timeout{30000};
  // How long start() waits for a previous incarnation's registration to expire.
  std::chrono::milliseconds wait_for_previous{30000};
};

struct cluster_callbacks {
  std::function<void(const std::vector<node_info>& members)> members_changed;
  std::function<void(bool is_master, std::int64_t term)> mastership_changed;
  std::function<void(std::shared_ptr<const cluster_catalog> catalog)> catalog_changed;
  std::function<void(std::shared_ptr<const placement_map> map)> placement_changed;
};

class cluster_node {
 public:
  // Joins the cluster. The first catalog_changed/placement_changed/members_changed calls
  // (with what ZooKeeper holds now) have run when it returns. Errors: UNAVAILABLE (no
  // ZooKeeper), INVALID_ARGUMENT (address, node id), ALREADY_EXISTS (node id in use).
  static result<std::unique_ptr<cluster_node>> start(cluster_options options, cluster_callbacks callbacks = {});
  // Leaves: withdraws from the election (another node takes over at once), unregisters,
  // closes the session. No callback runs after it returns.
  ~cluster_node();
  cluster_node(const cluster_node&) = delete;
  cluster_node& operator=(const cluster_node&) = delete;

  const node_info& self() const;
  zk_client& zookeeper();

  std::vector<node_info> members() const;
  bool is_master() const;
  // The current master, read from ZooKeeper; NOT_FOUND when there is none.
  result<master_info> master() const;
  std::shared_ptr<const cluster_catalog> catalog() const;
  std::shared_ptr<const placement_map> placement() const;

  // Runs a DDL through the master; returns the catalog version it produced (the node's
  // own copy has it once catalog_changed ran for it). Errors: the DDL's own, CONFLICT,
  // UNAVAILABLE (no master within ddl_timeout; nothing changed).
  result<std::uint64_t> ddl(const ddl_request& r);

  // Master only (UNAVAILABLE elsewhere, naming the master): gives partition `p` to node
  // `to`, a live member (NOT_FOUND otherwise); returns the map's new epoch. This is only
  // the flip of the map: shipping the partition's data comes before it.
  result<std::uint64_t> move(const partition_ref& p, const std::string& to);
  // Master only: the moves that would balance the live nodes: plan_balance's, then
  // plan_replica_balance's (see placement.h).
  result<std::vector<planned_move>> plan_balance() const;

  struct state;

 private:
  explicit cluster_node(std::shared_ptr<state> st);
  std::shared_ptr<state> st_;
};

}  // namespace cellar::cluster
