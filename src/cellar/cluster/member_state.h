// cluster/member_state.h: the state of a cluster member (member.h), shared by the files
// that implement it: member.cc (join, reconcile, moves, DDL), member_report.cc (what
// `status 'detailed'` shows).
#pragma once

#include <absl/synchronization/mutex.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/member.h"
#include "cluster/mover.h"
#include "cluster/node_gate.h"
#include "cluster/remote.h"
#include "cluster/replica_host.h"
#include "cluster/replica_warden.h"
#include "cluster/size_splitter.h"
#include "cluster/snapshot_service.h"
#include "store/access.h"
#include "store/catalog_service.h"
#include "store/cluster_state.h"

namespace cellar::cluster {

using detail::runtime_ptr;
using detail::table_runtime;

struct member::state final : detail::cluster_hooks {
  state(detail::cluster_seat& s, member_options o) : seat(s), local(s.catalog()), opts(std::move(o)) {}

  detail::cluster_seat& seat;      // the node's store
  detail::catalog_service& local;  // its catalog, which reconcile() makes the cluster's
  const member_options opts;
  std::shared_ptr<peer_directory> peers;
  node_endpoint endpoint;
  std::string peer_address;
  std::shared_ptr<std::atomic<std::uint64_t>> served;  // requests other nodes forwarded here
  std::atomic<std::uint64_t> refused{0};               // client requests answered NOT_OWNER (not_owner)
  std::unique_ptr<cluster_node> node;                  // set once at join, under move_mu
  std::unique_ptr<replica_host> replicas;              // set once at join, before the endpoint is published
  std::unique_ptr<replica_warden> warden;              // set once at join, after `node`; goes before it
  std::unique_ptr<snapshot_service> snaps;             // set once at join, before the endpoint is published
  // Size-driven splits (size_splitter.h); set once at join, after the gate opens; stopped
  // first and destroyed after the gate closes when the member leaves.
  std::unique_ptr<size_splitter> splitter;
  // How admin calls on other threads use `node` (opened once it has joined, closed before it
  // goes): move, balance, DDL, snapshots, the report.
  node_gate gate;
  // Options of the moves admin calls run: they give up once the gate closes.
  move_options admin_moves() const;

  // What ZooKeeper said last, and the catalog version this node has applied; waiters on
  // `applied` (ddl, catch_up) wait on mu.
  mutable absl::Mutex mu;
  std::shared_ptr<const cluster_catalog> catalog ABSL_GUARDED_BY(mu);
  std::shared_ptr<const placement_map> map ABSL_GUARDED_BY(mu);
  std::vector<node_info> members ABSL_GUARDED_BY(mu);
  std::uint64_t applied ABSL_GUARDED_BY(mu) = 0;
  // Waits until `applied` reaches `version`, at most `timeout`; true once it has.
  bool wait_applied(std::uint64_t version, std::chrono::nanoseconds timeout) ABSL_LOCKS_EXCLUDED(mu);

  // Only the ZooKeeper event thread (reconcile) uses it: each table's owners as applied.
  std::map<std::string, std::vector<partition_owner>> applied_owners;

  // Moves (mover.h). `incoming`: copies being built here, not serving
  // until the map gives them to this node. `moved_out`: partitions that moved away from
  // here, and the forwarder to their owner now (the endpoint sends requests that still
  // come here on to it).
  using part_key = std::pair<std::string, std::uint32_t>;
  struct incoming_copy {
    std::uint64_t uid = 0;
    detail::partition_ref ref;
  };
  mutable absl::Mutex move_mu;
  std::map<part_key, incoming_copy> incoming ABSL_GUARDED_BY(move_mu);
  std::map<part_key, detail::partition_actor> moved_out ABSL_GUARDED_BY(move_mu);

  // This node's side of the moves running now, by partition: while a move's intent znode
  // exists its mover may still finish it; when the intent goes and the map does not give
  // the partition to the target, the mover died or gave up (mover.h): the source runs what
  // its freeze held, the target drops its copy. `czxid` names the intent watched (0: not
  // seen yet). `guards_open` is false once the member is leaving.
  struct move_side {
    bool source = false;
    bool target = false;
    std::int64_t czxid = 0;
    std::uint64_t uid = 0;  // the source's table incarnation when its move began
  };
  std::map<part_key, move_side> guarded ABSL_GUARDED_BY(move_mu);
  bool guards_open ABSL_GUARDED_BY(move_mu) = true;
  void guard_move(const std::string& table, std::uint32_t index, bool source);  // any thread
  void arm_guard(const part_key& key);                                          // event thread
  void settle_move(const part_key& key, std::int64_t czxid);                    // event thread

  // Partitions of a table's next incarnation built here by a split or merge (reshaper.h),
  // not serving until the catalog names that incarnation (place_partition adopts them).
  std::map<part_key, incoming_copy> staged ABSL_GUARDED_BY(move_mu);
  // Likewise this node's replicas of the new Raft groups of a replicated table (replica_host::
  // stage), by partition, with the incarnation they were started for.
  std::map<part_key, std::uint64_t> staged_replicas ABSL_GUARDED_BY(move_mu);
  // The stage, fill and unstage steps (remote.h: node_snapshot), on a thread of their own.
  status stage(const node_snapshot& m);
  status stage_replica(const node_snapshot& m);
  // Ends the freeze `hold` of the replicated partition (table, index) at its group's leader
  // (a split or merge whose runner died: its intent went without a commit), on a thread of
  // its own, which holds the state while it asks; ~member waits for those threads (they
  // give up once the gate closes), so the state never outlives the member on one of them.
  void release_frozen(const std::string& table, std::uint32_t index, std::vector<std::string> replicas,
                      std::uint64_t hold);
  struct thread_count {
    absl::Mutex mu;
    int running ABSL_GUARDED_BY(mu) = 0;
  };
  std::shared_ptr<thread_count> releasing = std::make_shared<thread_count>();
  std::weak_ptr<state> self;  // set once at join
  // Drops what staged holds for incarnations `cat` will not name (a split or merge that
  // failed or whose runner died before its commit).
  void drop_stale_staged(const cluster_catalog& cat);
  result<std::uint32_t> reshape(const detail::reshape_call& c) override;
  // The partitions this node is responsible for splitting by size (size_splitter.h): the
  // single-copy ones the map gives it and its replicas of replicated ones, of the tables
  // with a size limit; none once the member is leaving or while writes are refused.
  std::vector<split_candidate> split_candidates() const;

  status prepare_incoming(const std::string& table, std::uint32_t index);
  status persist_incoming(const std::string& table, std::uint32_t index, const detail::delta_handle& cut);
  void drop_incoming(const std::string& table, std::uint32_t index);
  status move(const std::string& partition, const std::string& node) override;
  status move_replica(const std::string& partition, const std::string& from, const std::string& to) override;
  status transfer_leader(const std::string& partition, const std::string& node) override;
  result<std::uint32_t> balance() override;
  void on_session(const session_event& ev);
  // The snapshot sweep (snapshot_service::drop_unnamed): at join, and on the event thread
  // when a new session starts.
  void sweep_snapshots();

  status ddl(const detail::ddl_call& c) override;
  bool catch_up() override;
  detail::snapshot_cluster* snapshots() override { return snaps.get(); }
  std::string report() const override;
  std::vector<cellar::cluster_node> nodes() const override;
  std::string owner_of(const std::string& table, std::uint32_t index) const override;
  result<std::pair<std::uint64_t, std::uint64_t>> partition_stats(const std::string& table,
                                                                  std::uint32_t index) override;
  status not_owner(const std::string& table, std::uint32_t index) override;
  cluster_report make_report() const;
  // make_report() and the state of this node's replicas, which it asks each for.
  cluster_report full_report() const;
  void reconcile();
  // What reconcile() does after it has published the new catalog, gathered while it builds it.
  struct reconcile_effects {
    std::vector<runtime_ptr> retired;              // replaced wholesale: stop, drop local tables
    std::vector<detail::partition_actor> stopped;  // replaced partitions to stop now (let_go)
    std::vector<std::pair<runtime_ptr, std::vector<std::uint32_t>>> dropped_families;
    std::vector<detail::partition_id> moved_out_here;  // local partitions that moved away
    std::vector<part_key> adopted;                     // incoming copies that serve here from now on
  };
  // The runtime of table `name` as `cs` and the owners `want` say, built from `old` (the
  // one published now, if any) whose owners as applied are `*was` (null: not applied yet
  // since this node started). Caller: reconcile().
  runtime_ptr apply_table(const std::string& name, const detail::table_schema& cs,
                          const std::vector<partition_owner>& want, const runtime_ptr& old,
                          const std::vector<partition_owner>* was, reconcile_effects& fx)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(local.mutex());
  // Partition `i` of the new runtime of table `name`, owned by `owner`: `prev` (the old
  // runtime's, or null) kept when `keep`, else a local partition started (on `recovered`
  // cells, or the copy a move brought) or a forwarder to the owner.
  detail::partition_ref place_partition(const std::string& name, const detail::schema_ptr& schema, std::uint32_t i,
                                        const partition_owner& owner, const detail::partition_ref* prev, bool keep,
                                        std::shared_ptr<std::unique_ptr<detail::memtable>> recovered,
                                        reconcile_effects& fx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(local.mutex());
  // The rest of reconcile() once `cat` is published: stops, drops and the snapshot after a
  // move away.
  void finish_reconcile(const cluster_catalog& cat, reconcile_effects& fx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(local.mutex());
  // Deletes the Raft state of replicas the catalog and the owners applied no longer give
  // this node (replica_host::sweep, stale_replica). Event thread; nothing before the node
  // has started (join() asks for one then).
  void sweep_replicas();
  std::int64_t swept_session = 0;  // event thread: the session whose view a sweep synced
  bool find(const std::string& table, std::uint32_t index, std::uint64_t version, detail::partition_ref& out) const;
  std::string describe_owner(const std::string& table, std::uint32_t index) const;
};

// `r`, made to stop its actor once no copy of it is left (dispatch.h). A runtime replaced
// by reconcile() may still be in a client's hands for a moment (loaded just before the new
// one was published); its partitions keep answering until it is let go.
detail::partition_ref stops_when_released(detail::partition_ref r);

}  // namespace cellar::cluster
