// cluster/placement.h: which node owns each partition, and how the master changes that.
//
// The placement map assigns every partition (table group, index) to a node. The master
// writes it to ZooKeeper (/placement, with compare-and-set on the znode's version); every
// node and client reads it. Its `epoch` grows by one with every change; each partition
// also carries the epoch at which it got its current owner, so a node can tell a request
// routed with an older map (NOT_OWNER, current epoch) from one it should serve.
//
// The functions here are pure. The rules they keep:
//  - New partitions (a new table, a new partition rule) go to the live nodes with the
//    fewest partitions (ties: fewest of that table, then node id), keeping the live nodes
//    within one partition of each other.
//  - A node that is not live keeps its partitions: its data lives in its own directory, so
//    they answer UNAVAILABLE until it returns or an operator moves them (apply_move).
//  - plan_balance() brings the live nodes to within one partition of each other (counting
//    only the partitions they hold) with the fewest moves: the nodes holding the most keep
//    the larger shares, and only the excess moves, to the nodes short of their share.
//    Replicated partitions are not counted there: a replica moves by Raft membership
//    change (cluster/replica_mover.h), which writes its new set with replace_replica
//    (apply_move refuses them, UNSUPPORTED), and plan_replica_balance() balances them apart
//    from the single-copy partitions: it moves replicas to even out how many each node
//    holds, and plan_leader_transfers() then evens out the preferred leaders within their
//    sets (prefer_replica), moving no data; a replica moves for a leader only where no
//    transfer can even the leaders out. plan_replacements() places the replicas of dead
//    nodes.
//
// Size: 12 bytes per partition plus each table and node name once; ZooKeeper's default
// 1 MiB znode limit holds about 80,000 partitions.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"

namespace cellar::cluster {

struct partition_ref {
  std::string table;
  std::uint32_t index = 0;

  friend bool operator==(const partition_ref&, const partition_ref&) = default;
  friend auto operator<=>(const partition_ref&, const partition_ref&) = default;
};

struct partition_owner {
  std::string node;
  std::uint64_t epoch = 0;  // the map epoch at which `node` got the partition
  // A replicated partition (a Raft group, replica/group.h): the nodes holding its replicas,
  // `node` (the replica that should lead) first. Empty: one copy, on `node`.
  std::vector<std::string> replicas;
  // The Raft id (replica/group.h) of each replica, in `replicas`' order. Empty: the group's
  // initial configuration, ids 1, 2, 3... by position, which every replica bootstraps alike
  // (replica_group::start). A membership change (replace_replica) writes them out: a new
  // member gets an id no replica of the group ever had, and a replica whose storage is
  // empty then waits for the leader instead of bootstrapping a configuration of its own.
  std::vector<std::uint64_t> replica_ids;

  bool replicated() const { return !replicas.empty(); }
  std::uint64_t replica_id(std::size_t i) const { return replica_ids.empty() ? i + 1 : replica_ids[i]; }
  // An id for a new replica: above every id the group has (ids only grow, so an id is
  // never given to two replicas).
  std::uint64_t next_replica_id() const;
  // Whether `n` holds the partition (its only copy or one of its replicas).
  bool holds(std::string_view n) const;

  friend bool operator==(const partition_owner&, const partition_owner&) = default;
};

struct placement_map {
  std::uint64_t epoch = 0;
  std::map<std::string, std::vector<partition_owner>> tables;  // owner of partition i at [i]

  // nullptr when the table or the partition is not in the map.
  const partition_owner* owner(const partition_ref& p) const;
  // Partitions per node (nodes holding none are absent); a replica counts as a partition.
  std::map<std::string, std::uint32_t> load() const;
  // Replicas each node is the preferred leader of (replicated partitions only).
  std::map<std::string, std::uint32_t> leaders() const;
  std::vector<partition_ref> partitions_of(std::string_view node) const;

  friend bool operator==(const placement_map&, const placement_map&) = default;
};

struct planned_move {
  partition_ref partition;
  std::string from;
  std::string to;

  friend bool operator==(const planned_move&, const planned_move&) = default;
};

// Places a table's `partitions` new partitions (replacing any it had) on `live` nodes; the
// epoch grows by one. With `factor` above 1 each partition is a replica set placed by
// place_replicas (below). UNAVAILABLE when no node is live, or fewer than `factor`;
// INVALID_ARGUMENT unless `factor` is 1, 3 or 5.
result<placement_map> assign_table(const placement_map& m, const std::string& table, std::uint32_t partitions,
                                   const std::vector<std::string>& live, std::uint32_t factor = 1);
// The map without `table` (epoch + 1), or `m` unchanged when it has no such table.
placement_map remove_table(const placement_map& m, const std::string& table);
// The fewest moves that leave every live node within one partition of the others,
// counting single-copy partitions only.
std::vector<planned_move> plan_balance(const placement_map& m, const std::vector<std::string>& live);
// Moves of single replicas of replicated partitions (each to apply with replace_replica, in
// the order given: a partition may move twice) after which every live node is within one
// replica of the others and plan_leader_transfers(), on the map the moves leave, brings
// every live node within one preferred leader of the others; never two replicas of a
// partition on one node. A move whose `from` is the set's front makes `to` the preferred
// leader. Replicas move to even out their counts only, from the nodes above their share to
// those below, and none that a leader needs: the plan first gives each set the leader the
// transfers would, so a node joining a balanced cluster receives its share of replicas,
// nothing else moves, and it leads its share of sets by transfer. Only where no transfer
// can even out the leaders (no chain of sets joins a node leading two more than another to
// it) does a leader's replica move to the node leading fewer, the replicas evened out
// again after it. Sets with a replica on a node not in `live` do not move (the replica
// warden replaces that replica first), though their live replicas and leaders count;
// should they, or the sets, leave no move to a node below its share, the plan stops there.
std::vector<planned_move> plan_replica_balance(const placement_map& m, const std::vector<std::string>& live);
// Gives partition `p` to `to` (epoch + 1; the partition's epoch becomes the new epoch).
// Unchanged when `to` owns it already. TABLE_NOT_FOUND, INVALID_ARGUMENT (no such partition),
// UNSUPPORTED for a replicated partition (its replicas move by replace_replica).
result<placement_map> apply_move(const placement_map& m, const partition_ref& p, const std::string& to);

// The replica sets of a table's `partitions` partitions when each is a Raft group
// (replica/group.h) of `factor` replicas: each set on `factor` distinct live nodes, its
// first node the replica that should lead. The leader is, among the nodes holding the fewest
// replicas (`load`, plus those placed so far), the one leading the fewest (`leaders`, plus
// those placed so far; ties: node id); the other members are the nodes holding the fewest
// replicas. From an even start, live nodes stay within one replica and one leader of each
// other. INVALID_ARGUMENT unless
// `factor` is 1, 3 or 5; UNAVAILABLE, naming both numbers, when fewer than `factor` nodes
// are live (a table cannot have more replicas than nodes).
using replica_set = std::vector<std::string>;
result<std::vector<replica_set>> place_replicas(const std::string& table, std::uint32_t partitions,
                                                std::uint32_t factor, const std::vector<std::string>& live,
                                                const std::map<std::string, std::uint32_t>& load = {},
                                                const std::map<std::string, std::uint32_t>& leaders = {});

// The replica set of replicated partition `p` with `to` (Raft id `to_id`) in the place of
// `from` (epoch + 1; the partition's epoch becomes the new epoch; `node` follows the set's
// front). TABLE_NOT_FOUND; INVALID_ARGUMENT when `p` does not exist or is not replicated,
// `from` holds no replica of it or `to` holds one already.
result<placement_map> replace_replica(const placement_map& m, const partition_ref& p, const std::string& from,
                                      const std::string& to, std::uint64_t to_id);

// The map with `to`, which holds a replica of replicated partition `p`, as the set's
// preferred leader: first in the set (its Raft id with it), the partition's `node`; epoch +
// 1, the partition's epoch the new epoch. Nothing moves: each replica's node hands
// leadership to it (replica/group.h: preferred_leader). `m` unchanged when `to` is first
// already. TABLE_NOT_FOUND; INVALID_ARGUMENT when `p` does not exist or is not replicated,
// or `to` holds no replica of it.
result<placement_map> prefer_replica(const placement_map& m, const partition_ref& p, const std::string& to);

// Changes of preferred leader within sets (each to apply with prefer_replica: `from` the
// set's front, `to` a replica of the set; at most one per set) that leave the live nodes'
// preferred leaders as even as the sets allow: no other choice of leaders has a node
// leading more than the busiest or fewer than the idlest, so they end within one of each
// other whenever any choice does. A leader passes along a chain of sets where no one set
// holds both nodes (a's set to b, b's to d: a leads one fewer, d one more, b as many).
// For the map plan_replica_balance's moves leave, or when replicas cannot move (as many
// live nodes as the factor: every set holds every node); sets with a replica on a node
// not in `live` are left alone, though their leaders count.
std::vector<planned_move> plan_leader_transfers(const placement_map& m, const std::vector<std::string>& live);

// For each replica on a node of `dead`, a live node to hold it instead: one not in its set,
// the fewest replicas first (then, when the dead node was the preferred leader, the fewest
// preferred leaders; then node id), counting the replacements planned so far, as
// place_replicas balances. A partition for which no live node is free keeps its replica
// (it is in `stuck`).
std::vector<planned_move> plan_replacements(const placement_map& m, const std::vector<std::string>& live,
                                            const std::vector<std::string>& dead,
                                            std::vector<partition_ref>* stuck = nullptr);

std::string encode_placement(const placement_map& m);
result<placement_map> decode_placement(std::string_view bytes);  // CORRUPTION

}  // namespace cellar::cluster
