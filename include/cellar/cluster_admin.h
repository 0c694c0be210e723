// cellar/cluster_admin.h: administering the cluster a store of this process belongs to.
//
// A store opened as a cluster member (cellar-server --cluster) is one node of a cluster;
// the cluster's partitions can be moved between its nodes and balanced over them. These
// calls act on the whole cluster, not on the store they are reached through, so they live
// here rather than on cellar::store, which a single embedded program uses alone.
//
//   auto admin = cellar::cluster_admin::of(*store);
//   if (!admin) return admin.status();           // not a cluster member
//   auto moved = admin->balance();
//
// Thread safety: a cluster_admin may be used from any thread; it must not outlive the
// store it was made from. Its calls block until the cluster has done what they ask: do not
// call them from a CAF worker.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cellar/status.h"

namespace cellar {

class store;

// One node of the cluster as its placement map and ZooKeeper see it.
struct cluster_node {
  std::string id;       // the node's --node-id
  std::string address;  // where it serves; empty for a node that is down
  bool live = false;    // registered in ZooKeeper now
};

// The cluster as one node sees it.
struct cluster_status {
  // Every node the cluster knows: those registered now (live) and those the placement
  // map still names that are not (down).
  std::vector<cluster_node> nodes;
  // The nodes, their partitions and the master, as the shell's `status 'detailed'`
  // prints them.
  std::string report;

  std::size_t live_count() const;
  std::size_t down_count() const;
};

class cluster_admin {
 public:
  // The administration of the cluster `s` belongs to. Errors: UNSUPPORTED when `s` is
  // not a cluster member (a single store has no cluster to administer).
  static result<cluster_admin> of(store& s);

  // The nodes and their partitions as this node knows them now.
  cluster_status status() const;

  // Moves partition "table/index" (as status 'detailed' names it) to node `node` with its
  // data while it keeps serving (docs/cluster.md); returns once the placement map gives
  // it to `node`. Errors: INVALID_ARGUMENT (not "table/index"), TABLE_NOT_FOUND,
  // NOT_FOUND (no such partition; `node` not a live member), CONFLICT (a move of it is
  // running), UNAVAILABLE (a node failed or did not answer: the move was aborted and
  // nothing changed).
  cellar::status move_partition(const std::string& partition, const std::string& node);

  // Moves the replica that node `from` holds of replicated partition "table/index" (any
  // replica of its set, the preferred leader's or a follower's) to node `to`, by Raft
  // membership change (docs/cluster.md §9); of a single-copy partition, `from` must be its
  // owner and the partition moves as move_partition moves it. Returns once the placement
  // map names `to` in `from`'s place. Errors: INVALID_ARGUMENT (not "table/index", `from`
  // holds no replica of it, `to` holds one already), TABLE_NOT_FOUND, NOT_FOUND (no such
  // partition; `to` not a live member), CONFLICT (a move of it is running), UNAVAILABLE (a
  // step failed: the move was rolled back).
  cellar::status move_replica(const std::string& partition, const std::string& from, const std::string& to);

  // Makes node `node`, which holds a replica of replicated partition "table/index", the
  // partition's preferred leader: no data moves; the leader hands leadership to it by a
  // Raft leadership transfer once its log matches (docs/cluster.md §9). Returns once the
  // placement map names it first. Errors: INVALID_ARGUMENT (not "table/index", not
  // replicated, `node` holds no replica of it), TABLE_NOT_FOUND, NOT_FOUND (no such
  // partition; `node` not a live member), CONFLICT (a move of it is running).
  cellar::status transfer_leader(const std::string& partition, const std::string& node);

  // Runs the moves that bring the live nodes within one partition of each other (and, for
  // replicated tables, within one replica and one preferred leader: a leader that no
  // replica move can even out changes within its set, as transfer_leader does); returns
  // how many moves and transfers ran. Errors as move_partition's.
  result<std::uint32_t> balance();

 private:
  explicit cluster_admin(store& s) : store_(&s) {}
  store* store_;
};

}  // namespace cellar
