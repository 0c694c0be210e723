// cluster/member.h: a store serving as one node of a cluster.
//
// `member::open_store` opens a store the way store::open does, ready to be a member: CAF's
// middleman is loaded, and recovery starts no partition (it keeps the recovered cells).
// `member::join` then makes the store one node of the cluster (cluster_node.h):
//  - it publishes the node's endpoint (cluster/remote.h) on the peer address;
//  - it applies every catalog and placement map ZooKeeper reports to the store: each table
//    group of the cluster catalog becomes a table of the store, with the cluster's schema
//    (uid, family ids, version); each partition the map gives this node is started here,
//    in the store's data directory (on the cells recovered from it, if any); each partition
//    of another node becomes a remote partition forwarding to that node; a replicated
//    partition (a Raft group) becomes a replica router, with this node's replica when the
//    map names this node among its replicas (cluster/replica_host.h). Tables that left
//    the catalog are dropped; a table whose uid changed (dropped and created again, new
//    partition rule) gets new partitions;
//  - the store's DDL calls go through the master (cluster_node::ddl) and return once this
//    node has applied the catalog version they produced, so the caller's next call sees it.
//    disable, enable and truncate of one family are not cluster DDL yet: UNSUPPORTED.
//    A split or merge of a RANGE table's partitions runs from the node that got it
//    (cluster/reshaper.h); the partitions it builds here wait in `staged` until the catalog
//    names their incarnation (a replicated table's: this node's replicas of the new Raft
//    groups, which the replica host runs until a placement takes them over). A partition
//    this node froze watches the split's intent; should it go without a commit, a
//    single-copy partition runs what it held and a replicated one's release is proposed
//    at its group's leader.
//
// A table appears on a node once the node has both its catalog entry and its placement
// (ZooKeeper reports them separately); until then calls name an unknown table, and
// forwarded calls wait at the owner (remote.h).
//
// Threads: the cluster's callbacks run on the ZooKeeper event thread and apply changes
// under the store's DDL mutex; every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cellar/status.h"
#include "cellar/store.h"
#include "cluster/cluster_node.h"
#include "cluster/replica_report.h"
#include "store/scheduler_tuning.h"

namespace cellar::cluster {

struct member_options {
  zk_options zookeeper;                 // connect string "host:port[,...][/chroot]", session timeout
  std::string node_id;                  // membership.h: check_node_id
  std::string data_address;             // host:port where clients reach this node's RPC server
  std::string peer_host = "127.0.0.1";  // where the node's endpoint listens (CAF middleman)
  std::uint16_t peer_port = 0;          // 0: any free port
  // A forwarded request with no answer for this long fails UNAVAILABLE.
  std::chrono::milliseconds forward_timeout{10000};
  // How long a DDL call waits for this node to apply what the master committed.
  std::chrono::milliseconds apply_wait{10000};
  std::chrono::milliseconds ddl_timeout{30000};        // cluster_options::ddl_timeout
  std::chrono::milliseconds wait_for_previous{30000};  // cluster_options::wait_for_previous
  // Replicas of each partition of a table created through this node without
  // REGION_REPLICATION (1, 3 or 5; cluster/replica_host.h).
  std::uint32_t replication_factor = 1;
  // Raft's election timeout for this node's replicas (each election waits 1x to 2x it);
  // the heartbeat is a tenth of it.
  std::chrono::milliseconds election_timeout{1000};
  // While this node is the master: a node dead (its ZooKeeper membership gone) this long
  // has each of its replicas replaced on a live node (cluster/replica_warden.h).
  std::chrono::milliseconds dead_node_timeout{600000};
  // An admin step to a replicated partition (a named snapshot, a split's freeze, fill or
  // release) asks its replicas for the leader this long before it fails UNAVAILABLE; the
  // release of a partition a dead split left frozen asks again until it is taken.
  std::chrono::milliseconds leader_wait{30000};
};

// One node as `status 'detailed'` shows it.
struct node_report {
  node_info node;
  bool live = false;  // registered now
  bool master = false;
  std::vector<std::string> partitions;  // "table/index" the placement map gives it
};

struct cluster_report {
  std::string self;
  std::string master;  // empty: none
  std::uint64_t catalog_version = 0;
  std::uint64_t placement_epoch = 0;
  std::uint64_t forwarded_here = 0;  // batch parts and scan pages other nodes forwarded to `self`
  // Partitions of client batches that asked not to be forwarded, answered NOT_OWNER by `self`.
  std::uint64_t not_owner_answers = 0;
  std::vector<node_report> nodes;        // live members and every owner in the map, by id
  std::vector<replica_report> replicas;  // this node's replicas, by table and partition
  // On the master: what it could not do to keep every partition's replication factor
  // (cluster/replica_warden.h).
  std::vector<std::string> replication_notes;
};

class member {
 public:
  // store::open for a store that will join a cluster (see above). Same errors.
  static result<std::unique_ptr<store>> open_store(store_options options, const detail::scheduler_tuning& tuning = {});
  // Joins; the store (opened by open_store, outliving the member) then serves the cluster's
  // tables. Errors: those of cluster_node::start; IO_ERROR when the endpoint cannot listen;
  // INVALID_ARGUMENT for a store not opened by open_store.
  static result<std::unique_ptr<member>> join(store& s, member_options options);
  // Leaves the cluster (others see the node go at once) and stops forwarding; the store
  // keeps its partitions until it is closed.
  ~member();
  member(const member&) = delete;
  member& operator=(const member&) = delete;

  cluster_node& node();
  // Where the node's endpoint listens (host:port).
  std::string peer_address() const;
  // The catalog version this node has fully applied.
  std::uint64_t applied_version() const;
  cluster_report report() const;

  struct state;

 private:
  explicit member(std::shared_ptr<state> st);
  std::shared_ptr<state> st_;
};

// The report as text, one node per line (the shell's `status 'detailed'`).
std::string format_report(const cluster_report& r);

}  // namespace cellar::cluster
