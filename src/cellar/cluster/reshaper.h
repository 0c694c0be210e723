// cluster/reshaper.h: a split or merge of a RANGE table's partitions in a cluster
// (store.h: split_region, split_partition, split_table, merge_regions; docs/cluster.md §7).
//
// run_reshape() gives table `c.table` its new partitions as one catalog and placement
// change, from the node that got the call:
//   1. intent: the move intent znode of every partition of the table (ephemeral, this
//      node's session), so that no move or snapshot of them runs meanwhile;
//   2. each owner copies its partition as a move's source does (track, chunks, cuts, while
//      writes go on) and freezes it: from the freeze on it holds writes (reads go on);
//   3. the new bounds are planned (store/reshape_plan.h; a middle row from the copies), the
//      new partitions placed like a new table's (placement.h: assign_table), the copies'
//      cells dealt to them by the new bounds, and each new partition built at its owner
//      under the table's next incarnation (uid), durable, not serving (node_snapshot stage);
//   4. the commit: one DDL (reshape_table) through the master: one multi() writes the
//      catalog (new bounds, the uid built under, compare-and-set on the catalog version),
//      the placement (epoch + 1) and deletes the intents, and fails if an intent is gone.
// Every node then applies the new incarnation: the built partitions serve; the frozen ones
// stop and answer what they held UNAVAILABLE, as does a node for a request another node
// routed with the old incarnation (remote.h: node_batch::uid): clients send those again
// and reach the new partitions. So no acknowledged write is lost or applied twice: each
// one ran on an old partition before its freeze (and is in the copy) or on a new one.
// Any failure before the commit undoes it: the intents go first (so a commit still on its
// way fails), the old partitions run what they held, the built ones are dropped. Should
// this node die first, its intents go with its session and the owners release their
// partitions themselves (member.h), and the built partitions are dropped when a later
// catalog shows they were never named.
//
// Replicated partitions (REGION_REPLICATION 3 or 5: each a Raft group, replica_host.h) go
// the same way, with these differences:
//   2. the freeze goes through the group's log, at its leader (asked of each replica in
//      turn): a freeze entry after which every replica refuses writes UNAVAILABLE, whoever
//      leads, so that no write slips in after the copy; the copy is the leader's cells as
//      of that entry. The undo's release is a log entry too;
//   3. each new partition is a new Raft group, placed as a new table's are (its replicas on
//      distinct nodes), started empty on its replicas (stage with the replica set) and
//      filled through its own log (fill: a staged load, replicated_partition.h), so that
//      every replica holds all of its cells or none. When the plan needs no cells (a split
//      at a key, a merge) the groups start before the freeze and elect their leaders while
//      writes go on. A fill rather than seeding each replica from a snapshot: the load
//      path already makes a large fill atomic on every replica and survives a leader
//      change midway (the fill is sent again, whole);
//   4. the commit names each new partition's replica set; every node's replica host takes
//      the running replicas over, and drops the old groups' replicas and Raft state.
// Each freeze and release names its hold, the czxid of the partition's intent, so that a
// late release never ends a later split's freeze. Should this node die first, the node
// that served a freeze sees the intent go without a new incarnation and proposes the
// release at the group's leader (member.h), and the staged groups stop once a catalog
// passes their incarnation.
// KEY partitions are never split or merged (UNSUPPORTED, with the reason).
//
// Threads: blocks for the whole call; not on a CAF worker nor ZooKeeper's event thread.
#pragma once

#include <cstdint>

#include "cellar/status.h"
#include "cluster/cluster_node.h"
#include "cluster/snapshot_service.h"
#include "store/reshape_plan.h"

namespace cellar::cluster {

struct reshape_result {
  std::uint32_t splits = 0;
  std::uint64_t version = 0;  // the catalog version of the commit (0: nothing changed)
};

// Errors: those of plan_reshape (INVALID_ARGUMENT, UNSUPPORTED); TABLE_NOT_FOUND;
// UNAVAILABLE when an owner (a replicated partition: its group's leader) is down or did not
// answer; CONFLICT when a move or snapshot of a partition runs, or another DDL came first
// (nothing changed: call again); ABORTED when this node's session ended midway.
result<reshape_result> run_reshape(cluster_node& node, snapshot_service& snaps, const detail::reshape_call& c);

}  // namespace cellar::cluster
