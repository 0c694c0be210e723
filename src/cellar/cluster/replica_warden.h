// cluster/replica_warden.h: the master restores the replication factor of the partitions
// whose replicas sit on a node that has been dead too long (docs/cluster.md §9).
//
// A node is dead when its membership znode is gone (its ZooKeeper session expired). While
// this node is the master the warden notes, about once a second, since when each node
// holding a replica has been dead; once one has been dead for `dead_node_timeout`, each of
// its replicas is replaced by one on a live node outside the partition's set, chosen as
// plan_replacements (placement.h) balances, by the same membership change as a move
// (replica_mover.h: the new replica joins and catches up, the dead one is removed, the map
// is written). A replacement that fails is tried again on a later pass. When fewer live
// nodes than a partition's factor remain, or most of its replicas are dead (its group can
// commit no change), its dead replicas stay and notes() says so. A
// node that returns before the timeout keeps its replicas (Raft brings them up to date).
// A node dead that long also counts as swept in the tombstones of deleted named snapshots
// (snapshot_sweep.h), which then no longer wait for it.
//
// Thread safety: its own thread runs the passes; notes() may be called from any thread. The
// destructor cancels a replacement under way (move_options::cancelled).
#pragma once

#include <caf/all.hpp>

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_node.h"
#include "cluster/mover.h"
#include "cluster/remote.h"

namespace cellar::cluster {

class replica_warden {
 public:
  replica_warden(cluster_node& node, peer_directory& peers, caf::actor_system& sys,
                 std::chrono::milliseconds dead_node_timeout, move_options moves = {});
  // Stops the thread; a replacement under way ends first (or rolls back).
  ~replica_warden();
  replica_warden(const replica_warden&) = delete;
  replica_warden& operator=(const replica_warden&) = delete;

  // What the last pass could not do (partitions left a replica short), for the master's
  // `status 'detailed'`; empty when nothing is amiss.
  std::vector<std::string> notes() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void run();
  // One pass (see above); returns the notes.
  std::vector<std::string> pass();
  // Takes the nodes dead for `timeout_` out of the snapshot tombstones: a node gone that
  // long counts as swept (snapshot_sweep.h).
  void forget_dead_in_tombstones(const std::vector<std::string>& live, std::chrono::steady_clock::time_point now);
  bool stopping() const ABSL_LOCKS_EXCLUDED(mu_);

  cluster_node& node_;
  peer_directory& peers_;
  caf::actor_system& sys_;
  const std::chrono::milliseconds timeout_;
  move_options moves_;                                                       // set before the thread starts
  std::map<std::string, std::chrono::steady_clock::time_point> dead_since_;  // the thread's own
  // Since when each dead node a snapshot tombstone waits for has been dead; the thread's own.
  std::map<std::string, std::chrono::steady_clock::time_point> tombstone_dead_since_;
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> notes_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace cellar::cluster
