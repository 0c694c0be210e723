// cluster/replica_host.h: this node's replicas of the cluster's replicated partitions.
//
// A partition the placement map gives a replica set (placement.h: partition_owner::replicas)
// is a Raft group (replica/group.h) with one replica on each node of the set. The host
// starts this node's replica of such a partition and, on every node, the replica router
// (replica_router.h) that the table's runtime holds for it. Its replicas' Raft messages
// travel over the node links (replica_links.h), addressed by group name and partition.
//
// Where a replica keeps its Raft state follows the store's durability:
//   snapshot  in memory: a replica that restarts comes back empty and catches up from the
//             others, so the data survives while a majority of the replicas does;
//   log       in files under <directory>/raft (replica/storage.h), written at each change;
//   log-sync  the same, fsynced before the replica counts toward the majority.
// A memory-only store (no directory) keeps its replicas in memory.
//
// A replica's Raft id comes from the placement (partition_owner::replica_id). When the
// replica set changes (a membership change, cluster/replica_mover.h) a replica that stays
// keeps running: the routers of successive placements share it, and it stops when the last
// of them goes. A replica started for a new member (join) serves once a placement names
// its node; one whose node the placement no longer names stops, and its Raft state is
// deleted.
//
// Raft state nothing will use again is deleted (docs/cluster.md §9, "Replica files"):
// drop_table() stops the replicas of a table incarnation the catalog no longer has and
// deletes their state; sweep() stops the running replicas and deletes the files of
// partitions stale_replica() says no placement gives this node any more (a node whose
// replicas were replaced while it was away, or a table dropped). Neither touches a
// replica that join() started and no placement has taken over yet.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <absl/synchronization/mutex.h>

#include <atomic>

#include "catalog/catalog.h"
#include "cluster/catalog_state.h"
#include "cluster/placement.h"
#include "cluster/remote.h"
#include "cluster/replica_links.h"
#include "cluster/replica_report.h"
#include "dispatch/dispatch.h"
#include "replica/group.h"
#include "store/access.h"

namespace cellar::cluster {

struct replica_host_options {
  std::string self;  // this node's id
  std::chrono::milliseconds forward_timeout{10000};
  unsigned election_timeout_ms = 1000;  // libraft randomises each election between 1x and 2x
  unsigned heartbeat_timeout_ms = 100;
};

class replica_host {
 public:
  replica_host(detail::cluster_seat& seat, std::shared_ptr<peer_directory> peers, replica_host_options options);
  replica_host(const replica_host&) = delete;
  replica_host& operator=(const replica_host&) = delete;

  // The ref of partition `index` of `schema`, replicated as `owner` says (replicas, the
  // preferred leader first, and their Raft ids): a replica router, and this node's replica
  // when `owner` names this node: the one running already, else one started now (resuming
  // from its stored Raft state, if any; a pristine one bootstraps the group's initial
  // configuration only when the set never changed). The router stops the replica when no
  // other router shares it. A replica that cannot open its storage is logged and left out:
  // the router then reaches the other replicas only.
  detail::partition_ref place(const detail::schema_ptr& schema, std::uint32_t index, const partition_owner& owner);

  // Starts this node's replica of partition `index` of `schema` with Raft id `id`, for a
  // membership change that adds it: empty (Raft state left by an earlier replica here is
  // deleted) and without a configuration of its own, waiting for the leader. OK if it runs
  // already with that id; CONFLICT if a replica with another id still runs here (one the
  // placement dropped, not stopped yet); IO_ERROR if its storage cannot be opened. It
  // runs until a placement naming this node takes it over, or leave().
  status join(const detail::schema_ptr& schema, std::uint32_t index, std::uint64_t id);
  // Starts this node's replica of partition `index` of `schema`, replicated as `owner`
  // says, for a split or merge (cluster/reshaper.h) whose incarnation no placement names
  // yet: empty (Raft state left by an earlier replica here is deleted), bootstrapping the
  // group's initial configuration as place() would, so that place() takes it over once a
  // placement names it. It runs until then, or leave(). OK if it runs already; NOT_OWNER if
  // `owner` does not name this node; IO_ERROR if its storage cannot be opened.
  status stage(const detail::schema_ptr& schema, std::uint32_t index, const partition_owner& owner);
  // Stops a replica join() or stage() started that no placement took over, and deletes its
  // state.
  void leave(const std::string& group, std::uint32_t index);

  // This node's replica of partition `index` of the group named `group` (group_name);
  // null when it holds none.
  caf::actor replica(const std::string& group, std::uint32_t index) const;

  // Each of this node's replicas with its state, by table and partition; a replica that does
  // not answer within `timeout` is reported "unreachable". Blocks: not for a CAF worker.
  std::vector<replica_report> report(std::chrono::milliseconds timeout) const;

  // Stops this node's replicas of table incarnation `uid` (the table was dropped, or its
  // partitions replaced by new ones under a new uid), those join() started included, and
  // deletes their Raft state: at once for partitions with no replica running here, else
  // as each replica stops.
  void drop_table(std::uint64_t uid) ABSL_LOCKS_EXCLUDED(files_mu_);

  // Deletes the Raft state this node holds of the partitions that `stale(uid, index)`
  // calls stale (a non-empty reason, logged; empty: keep): the files under
  // <directory>/raft of a partition with no replica running here now; a running replica is
  // told to stop (its own actor stops its Raft instance) and its state goes as it exits,
  // whether or not a router of an earlier placement still holds it. A replica that join()
  // started is not asked about: a move is adding it. `stale` runs without the host's locks
  // held; a replica that join() starts meanwhile is left alone. Call it on the thread that
  // calls place().
  void sweep(const std::function<std::string(std::uint64_t uid, std::uint32_t index)>& stale)
      ABSL_LOCKS_EXCLUDED(files_mu_);

  // Stops every replica join() started (the node is leaving).
  ~replica_host();

  // The name of a table's Raft groups: the table and its uid, so that a table dropped and
  // created again never takes its predecessor's messages.
  static std::string group_name(const detail::table_schema& schema);
  static std::string group_name(const std::string& table, std::uint64_t uid);

 private:
  detail::cluster_seat& seat_;
  std::shared_ptr<peer_directory> peers_;
  const replica_host_options opts_;
  replica_links links_;
  using key = std::pair<std::string, std::uint32_t>;
  struct lease;
  struct home;
  // A running replica: its actor, the lease its routers share (it stops the replica when
  // the last holder drops it), its Raft id and whether its state goes when it stops.
  struct entry {
    caf::actor actor;
    std::weak_ptr<lease> shared;
    std::uint64_t id = 0;
    std::shared_ptr<std::atomic<bool>> discard;
  };
  // This node's running replicas by group and partition. Shared with each replica, which
  // takes itself out when it stops, whether or not the host still exists.
  struct running {
    absl::Mutex mu;
    std::map<key, entry> replicas ABSL_GUARDED_BY(mu);
    std::map<key, std::shared_ptr<lease>> joining ABSL_GUARDED_BY(mu);  // started by join()
  };
  std::shared_ptr<running> running_ = std::make_shared<running>();
  // Held while a replica's files are opened and it is registered (spawn), and while files
  // are deleted (drop_table, sweep): a file is never deleted from under a replica starting.
  // Taken before running_->mu.
  absl::Mutex files_mu_;

  // <directory>/raft, where replicas keep their files; empty for a memory-only store.
  std::string raft_dir() const;

  // Starts a replica (members empty: it joins) and registers it; its lease, or null if its
  // storage cannot be opened (`why` says so).
  std::shared_ptr<lease> spawn(const detail::schema_ptr& schema, std::uint32_t index, std::uint64_t id,
                               std::uint64_t preferred, std::vector<replica::member> members, bool fresh, status& why)
      ABSL_LOCKS_EXCLUDED(files_mu_);
};

// What this node knows of the cluster, for stale_replica().
struct replica_view {
  std::string self;                          // this node's id
  const cluster_catalog* catalog = nullptr;  // the catalog this node applied last
  // The owners this node applied last to the partitions of `table`, when it applied them to
  // incarnation `uid` of the table; null otherwise (not applied yet, or another uid).
  std::function<const std::vector<partition_owner>*(const std::string& table, std::uint64_t uid)> applied;
  // The data ("FROM TO") of the intent of a move of partition `index` of `table` running
  // now (cluster/layout.h); NOT_FOUND when none runs.
  std::function<result<std::string>(const std::string& table, std::uint32_t index)> intent;
};

// Why the Raft state this node holds of partition `index` of table incarnation `uid` is
// stale, or empty when it may still be used. Stale: the catalog has no table with that uid
// (one below its next uid: a larger one is newer than the catalog seen), or the owners
// this node applied to that incarnation do not name this node for the partition and no
// move to this node is running for it (a move adds its replica before the map names it).
// Anything unknown (the table's owners not applied yet, the intent unreadable) keeps it.
std::string stale_replica(const replica_view& v, std::uint64_t uid, std::uint32_t index);

}  // namespace cellar::cluster
