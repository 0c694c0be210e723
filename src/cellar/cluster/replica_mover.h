// cluster/replica_mover.h: moving a replica of a replicated partition by Raft membership
// change (docs/cluster.md §9).
//
// A replicated partition's cells live in its Raft group (replica/group.h), so a replica
// moves from node A to node B without copying anything by hand: B joins the group and
// Raft brings it the data, then A leaves. run_replica_move():
//   1. intent: the ephemeral znode /moves/t_<table>.<index>, as a copying move's (one move
//      of a partition at a time);
//   2. B starts an empty replica with a Raft id no replica of the group ever had
//      (partition_owner::next_replica_id); it does not bootstrap, it waits for the leader;
//   3. the leader adds B as a learner; B catches up from the log, or from a snapshot when
//      the log it needs is gone, and is promoted to voter once its log matches the
//      leader's (replica_group::add_member);
//   4. when A is the preferred leader, B becomes it on every replica (it takes A's place in
//      the set), so a leading A hands leadership to B;
//   5. the leader removes A (a leading A hands leadership over first);
//   6. the flip: one multi() that checks the intent, writes the set with B in A's place
//      (replace_replica) and deletes the intent. B's node then serves its replica; A's node
//      stops its replica and deletes its Raft state.
// Writes go on throughout: the group commits with a majority at every step (with B added
// before A leaves, one replica down still leaves a majority), routers follow NOT_LEADER to
// whichever replica leads, B's included before the map names it.
// A failure before the flip rolls back: B is removed from the group (if it was added) and
// its replica stopped and deleted, A stays the preferred leader, the intent goes. A failure
// to write the map once A has left is not rolled back (the group would be a replica short):
// the same move run again finds B a voter and A gone, and only writes the map. Should the
// node running the move die meanwhile, its intent goes with its session; B may stay in the
// group without the map naming it: a later move of the partition to B removes that member
// first (its state may be gone, and a voter must not lose what it acknowledged) and adds B
// afresh with a new id.
//
// Threads: blocks (for the whole move); call it from a thread that is not a CAF worker.
#pragma once

#include <caf/all.hpp>

#include <cstdint>
#include <string>

#include "cellar/status.h"
#include "cluster/cluster_node.h"
#include "cluster/mover.h"
#include "cluster/remote.h"

namespace cellar::cluster {

// Moves the replica of partition `index` of `table` on node `from` to node `to` (a live
// member holding no replica of it). `from` may be down (its replica is then replaced).
// Errors: TABLE_NOT_FOUND; NOT_FOUND (no such partition, `to` not live); INVALID_ARGUMENT
// (not replicated, `from` holds no replica, `to` holds one); CONFLICT (another move of
// the partition is running); UNAVAILABLE (a step failed: the move was rolled back).
status run_replica_move(cluster_node& node, peer_directory& peers, caf::actor_system& sys, const std::string& table,
                        std::uint32_t index, const std::string& from, const std::string& to,
                        const move_options& o = {});

// Makes node `to`, which holds a replica of partition `index` of `table`, its preferred
// leader, moving no data: under the partition's move intent (one change of a partition at
// a time), one multi() writes the set with `to` first (prefer_replica, placement.h); each
// node then tells its replica, and the leader hands leadership to `to` by a Raft
// leadership transfer once `to`'s log matches its own (replica/group.h), as after any
// election. With o.await_leader it then waits, at most o.step_timeout, until `to`'s
// replica leads (OK either way: the handover follows). OK at once when `to` is the
// preferred leader already. Errors: TABLE_NOT_FOUND; NOT_FOUND (no such partition, `to`
// not live); INVALID_ARGUMENT (not replicated, `to` holds no replica); CONFLICT (a move of
// the partition is running).
status run_leader_transfer(cluster_node& node, peer_directory& peers, caf::actor_system& sys, const std::string& table,
                           std::uint32_t index, const std::string& to, const move_options& o = {});

}  // namespace cellar::cluster
