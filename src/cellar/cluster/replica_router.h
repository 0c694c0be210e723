// cluster/replica_router.h: a replicated partition as every node of the cluster sees it.
//
// A replicated partition (replica/replicated_partition.h) is served by its Raft group's
// leader; its other replicas answer NOT_LEADER naming the leader they know. On every node,
// the table's runtime holds a *replica router* for it: an actor with the partition
// protocol's type that sends each batch and scan page to the replica it believes leads
// (this node's own replica, or another node's through a remote partition, remote.h) and
// follows the answers:
//  - NOT_LEADER naming a leader: sent again to that leader (also one not in `replicas`: a
//    replica that joined the group by a membership change the placement does not show yet);
//  - NOT_LEADER naming none (an election is under way), or NOT_OWNER (a node whose replica
//    left the group by a membership change): sent again, after a pause, to the next replica
//    in turn;
//  - UNAVAILABLE from a node: a read goes to the next replica; a write only when the
//    request never left this node (remote.h: never_sent), because a write that reached a
//    leader may have been committed and must not run twice; else the UNAVAILABLE is the
//    answer, and the next request starts at the next replica.
// until an answer comes or `deadline` has passed since the request came; then the last
// answer is the reply (NOT_LEADER or UNAVAILABLE, naming the partition). Each try waits for
// its target without a timer of its own: both targets are actors of this node that answer
// within a bounded time (this node's replica within an election timeout of losing its
// majority, a remote partition within `forward_timeout`); one that stops first has its
// requests answered UNAVAILABLE, naming the node, by the router's monitor.
//
// Admin requests concern this node's replica: a schema to adopt and dropped families go to
// it, stats come from it (zero without one), stop stops it with the router (or lets go of
// its lease, when the replica is shared with the routers of later placements) once every
// request the router took has its answer, those waiting for a leader included; cuts are empty
// (the Raft storage, not the store's snapshot, holds a replica's cells) and moves are
// UNSUPPORTED.
//
// Thread safety: an actor.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster/remote.h"
#include "dispatch/dispatch.h"

namespace cellar::cluster {

struct replica_router_config {
  std::string table;  // the table group, as remote partitions name it
  std::uint32_t index = 0;
  // The table's incarnation the router routes for (0: any). Remote partitions name it, so a
  // node that already runs the table's next incarnation (a split or merge) refuses a request
  // UNAVAILABLE instead of serving it from its partition of the same index, which covers
  // other rows.
  std::uint64_t uid = 0;
  std::string self;                   // this node's id
  std::vector<std::string> replicas;  // the nodes holding a replica, the preferred leader first
  detail::partition_actor local;      // this node's replica; null when it holds none
  // What keeps `local` running (replica_host): held until the router stops; null: stop
  // stops `local` itself.
  std::shared_ptr<void> local_lease;
  std::chrono::milliseconds forward_timeout{10000};  // remote partitions' timeout
  std::chrono::milliseconds deadline{10000};         // how long a request is retried
  std::chrono::milliseconds pause{50};               // between tries while no leader is known
};

detail::partition_actor spawn_replica_router(caf::actor_system& sys, std::shared_ptr<peer_directory> peers,
                                             replica_router_config cfg);

}  // namespace cellar::cluster
