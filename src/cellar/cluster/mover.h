// cluster/mover.h: moving a partition to another node with its data (docs/cluster.md §7).
//
// run_move() moves partition `index` of `table` from the node that owns it (A) to node
// `to` (B) while writes to it continue, then flips the placement map:
//   1. intent: the ephemeral znode /moves/t_<table>.<index> (one move per partition at a
//      time; it goes with the session of the node running the move);
//   2. B starts an empty copy of the partition, not serving (node_move::prepare);
//   3. A starts a move delta (move_request::track), then B gets A's cells in chunks, each
//      read by A's actor between two requests, and A's move delta (cuts) until it is small;
//   4. A freezes (holds writes, in order) and hands over its last delta; B applies it and
//      writes its copy to its files (node_move::finish);
//   5. the flip: one multi() that checks the intent, sets the map (epoch + 1, compare-and-
//      set on its version) and deletes the intent. Each node applies the new map: B serves
//      its copy; A hands what it held and every later request on to B, in order
//      (handoff_request), and drops its copy.
// Any failure before the flip aborts: A stops tracking and runs what it held, B drops its
// copy, the intent is deleted. After the flip the move is done: B holds the partition on
// disk. The data travels through the node running the move (A -> it -> B).
// Should the node running the move die (or its session end) before the flip, its intent
// goes with its session; A and B watch the intent from steps 2 and 3 on (member.h) and,
// seeing it gone while the map still gives the partition to A, abort their side
// themselves: A runs what it held, B drops its copy. A flip is only tried in the session
// that made the intent.
//
// Threads: blocks (for the whole move); call it from a thread that is not a CAF worker.
#pragma once

#include <caf/all.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "cellar/status.h"
#include "cluster/cluster_node.h"
#include "cluster/remote.h"

namespace cellar::cluster {

struct move_options {
  // One node_move's answer. A node that dies mid-step (its connection closes) is noticed
  // at once; one that stops answering while its connection stays up, by this timeout.
  std::chrono::milliseconds step_timeout{10000};
  std::uint64_t chunk_bytes = 1 << 20;  // cells per chunk, about
  std::size_t small_delta = 256;        // a cut this small is the last before the freeze
  int max_catch_up = 8;                 // cuts before freezing anyway
  // A membership change of a replicated partition (replica_mover.h): how long the leader may
  // take to add a replica (its catch-up) or remove one.
  std::chrono::milliseconds change_timeout{180000};
  // Checked while a membership change waits: once true, the change gives up (UNAVAILABLE)
  // and rolls back as far as it still can. Unset: never.
  std::function<bool()> cancelled;
  // run_balance: moves running at once (at most one per source node).
  std::uint32_t parallel_moves = 4;
  // run_leader_transfer: wait, at most step_timeout, until the new preferred leader leads.
  bool await_leader = true;
};

// What run_balance did besides its count.
struct balance_stats {
  std::uint32_t most_at_once = 0;  // the most moves that ran at the same time
};

// A replicated partition's replica on its preferred leader moves to `to` instead, by Raft
// membership change (replica_mover.h); OK at once when `to` holds a replica already.
// Errors: TABLE_NOT_FOUND, NOT_FOUND (no such partition, `to` not a live member),
// UNAVAILABLE (the owner is down or a node did not answer: the move was aborted),
// CONFLICT (another move of the partition is running).
status run_move(cluster_node& node, peer_directory& peers, caf::actor_system& sys, const std::string& table,
                std::uint32_t index, const std::string& to, const move_options& o = {});

// Moves the copy of partition `index` of `table` that node `from` holds to node `to`: of a
// replicated partition, that replica, any of its set, by run_replica_move; of a
// single-copy partition, `from` must be its owner (INVALID_ARGUMENT otherwise) and it
// moves by run_move. Errors as theirs; INVALID_ARGUMENT too when `to` holds a replica.
status run_move_from(cluster_node& node, peer_directory& peers, caf::actor_system& sys, const std::string& table,
                     std::uint32_t index, const std::string& from, const std::string& to, const move_options& o = {});

// Runs the moves plan_balance() and plan_replica_balance() find (placement.h): those of
// single-copy partitions by run_move, those of replicas by run_replica_move (each from the
// replica the plan names). Up to o.parallel_moves run at once, at most one per source node
// (so one node's freeze and copy-out, or one replica leaving it, at a time), and the moves
// of one partition one after the other in the plan's order. Then, on the map the moves
// left, the changes of preferred leader plan_leader_transfers() finds, one after the
// other (run_leader_transfer, not waiting for each handover): with as many live nodes as
// a table's factor no replica can move, and the leaders still even out. Returns how many
// moves and transfers ran. After a move fails no further one starts; the running ones
// end, and the error (the move's) says how many of the planned moves were done. Blocks
// like run_move.
result<std::uint32_t> run_balance(cluster_node& node, peer_directory& peers, caf::actor_system& sys,
                                  const move_options& o = {}, balance_stats* stats = nullptr);

// "table/index" (as status 'detailed' shows partitions) -> (table, index). INVALID_ARGUMENT.
result<std::pair<std::string, std::uint32_t>> parse_partition_name(const std::string& name);

}  // namespace cellar::cluster
