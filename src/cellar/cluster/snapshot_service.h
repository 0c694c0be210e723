// cluster/snapshot_service.h: a cluster member's named snapshots (store/snapshot_cluster.h;
// docs/backup.md, "In a cluster").
//
// The node that serves a snapshot call runs it:
//  - copy: each partition at one instant, by node_snapshot `copy` at the node holding it:
//    a single-copy partition at its owner, by the track/records/cut steps of a move
//    (partition/protocol.h), under the partition's move intent znode (so no move of it
//    runs meanwhile); a replicated partition at its leader, after a read barrier, in one
//    step between two applied log entries. That node encodes the partition's cell file
//    and stages it in its own repository.
//  - keep: every live node starts a staged copy (`begin`); each other node pulls each
//    partition's file from the node that staged it, in pieces (`pull`, `fetch_staged`),
//    and takes the schema from the serving node in pieces (`keep_file`); then every node
//    commits its copy (`keep`), and the manifest and the nodes holding the files go to the
//    persistent znode /snapshots/s_<name>: the snapshot exists once that znode does, so
//    every node lists the same snapshots, and a node lost loses no snapshot while another
//    holder lives. An ephemeral /snapshot_writes/s_<name> claims the name meanwhile.
//  - restore and clone read the manifest from ZooKeeper and the files from this node's
//    repository, or from another holder's (in pieces) when this node's copy is missing or
//    damaged (each file is checked against the manifest's size and CRC before anything
//    changes). Then the node of each partition's owner, or of its Raft group's leader,
//    loads the part file: its own copy when it holds an intact one, else one it fetches
//    from a holder in pieces (`load` with `from`). A bulk load goes the same way, each
//    node fetching its part file from the serving node, which offers the files it was
//    given for the time of the load (`fetch_offered`). A single-copy partition takes the
//    file in one step; a replicated one through its group's log (a large part staged on
//    every replica in log entries, then written in one step:
//    replica/replicated_partition.h). Owners then take a snapshot of their stores, making
//    the cells durable.
//  - delete removes the znode (the snapshot is gone from then on), leaves a tombstone under
//    /snapshot_deleted naming the nodes that may hold its files, then asks every live
//    node to delete its files and takes those that did out of the tombstone; a node that
//    was down removes its copy of that snapshot when it joins again or gets a new
//    ZooKeeper session (drop_unnamed; snapshot_sweep.h). A write that fails is recorded
//    the same way.
//
// Thread safety: every call may come from any thread but a CAF worker (they block).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_node.h"
#include "cluster/node_gate.h"
#include "cluster/remote.h"
#include "store/access.h"
#include "store/snapshot_cluster.h"
#include "store/snapshot_files.h"

namespace cellar::cluster {

struct snapshot_service_options {
  std::string self;  // this node's id
  // This node's partition ref for (table, index) (member.h: find): `local` set for a
  // single-copy partition of this node, `replica_here` for its replica of a replicated one.
  std::function<bool(const std::string& table, std::uint32_t index, detail::partition_ref& out)> find;
  // This node's snapshot repository (the store's).
  detail::snapshot_repo* repo = nullptr;
  // A node that cannot be connected within `connect_timeout`, or whose step has no answer
  // within `step_timeout` (a step copies or writes a whole partition or snapshot), fails
  // the call UNAVAILABLE; a node that dies during a step fails it at once. A replicated
  // partition whose replicas do not answer as leader is asked again for `leader_wait`.
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds step_timeout{600000};
  std::chrono::milliseconds leader_wait{30000};
  // The steps of a split or merge (remote.h: node_snapshot freeze ... unstage):
  // `guard_source` watches the move intent of this node's partition (table, index) that a
  // freeze holds (member.h: guard_move); `stage` serves stage and unstage. Unset:
  // UNSUPPORTED.
  std::function<void(const std::string& table, std::uint32_t index)> guard_source;
  // The uid of the incarnation of `table` this node has applied (0: none).
  std::function<std::uint64_t(const std::string& table)> table_uid;
  std::function<status(const node_snapshot& m)> stage;
};

class snapshot_service final : public detail::snapshot_cluster {
 public:
  // Calls use the cluster node through `gate` (the member's): UNAVAILABLE before the node
  // has joined and once it is leaving; a call running when the member leaves gives up at
  // its next wait for another node.
  snapshot_service(detail::cluster_seat& seat, peer_directory& peers, const node_gate& gate,
                   snapshot_service_options o);

  status put(const std::string& name,
             const std::function<result<detail::snapshot_manifest>(detail::snapshot_keeper&)>& make) override;
  result<std::vector<detail::snapshot_manifest>> list() override;
  result<detail::snapshot_manifest> manifest(const std::string& name) override;
  status remove(const std::string& name) override;
  result<detail::file_bytes> file(const detail::snapshot_manifest& m, const std::string& file) override;
  status load(const std::string& table, std::uint32_t partitions, const load_source& from) override;

  // Removes from this node's snapshot repository every copy of a snapshot the cluster
  // recorded as gone (deleted while this node was down, or left by a write that failed:
  // its tombstone under /snapshot_deleted) that no /snapshots znode names and no
  // /snapshot_writes claim is writing, logging each, and takes this node out of the
  // tombstones (snapshot_sweep.h: sweep_snapshot_copies); a copy the cluster has no record
  // of is kept. Run when the node joins its cluster and when its ZooKeeper session is
  // established anew. A copy whose manifest cannot be read stops it (the error).
  status drop_unnamed();

  // A step another node (or this one) asks of this node (remote.h: node_snapshot).
  node_snapshot_reply serve(node_snapshot& m);
  // Step `m` at node `n`: served here for this node, else through its endpoint.
  result<node_snapshot_reply> ask(const std::string& n, node_snapshot m);
  // Step `m` of a replicated partition at whichever of `replicas` leads, retried while the
  // group has no leader (NOT_LEADER or UNAVAILABLE), for at most `leader_wait`; the node
  // that answered into *who when given.
  result<node_snapshot_reply> ask_leader(const std::vector<std::string>& replicas, const node_snapshot& m,
                                         std::string* who = nullptr);

 private:
  struct holders_and_manifest {
    std::vector<std::string> holders;
    detail::snapshot_manifest m;
  };
  result<node_gate::use> node() const { return gate_.enter(o_.self); }
  class keeper;
  // A partition's file of snapshot `name`, staged where it was copied.
  struct staged_copy {
    detail::snapshot_manifest::file f;
    std::string node;  // the node that staged it
  };
  // Partition (table, index) copied and its file staged for snapshot `name`, at the node
  // holding it (node_snapshot copy).
  result<staged_copy> copy_one(const std::string& name, const std::string& table, std::uint32_t index,
                               const std::set<std::uint32_t>& families);
  result<holders_and_manifest> read_znode(const std::string& name);
  // Pulls file `file` of snapshot `name`, staged at node `from` (`bytes` bytes, CRC `crc`),
  // into this node's staged files, a piece at a time (node_snapshot pull).
  status pull_here(const node_snapshot& m);
  // File `file` of snapshot `name` read from node `n` a piece at a time by step `step`
  // (fetch: its kept copy; fetch_staged: its staged one; fetch_offered: a file it offers
  // under `name`).
  result<std::string> fetch_from(const std::string& n, std::uint8_t step, const std::string& name,
                                 const std::string& file);
  node_snapshot_reply copy_here(const node_snapshot& m);
  node_snapshot_reply piece_here(const node_snapshot& m);     // fetch, fetch_staged
  node_snapshot_reply freeze_here(const node_snapshot& m);    // freeze, release
  node_snapshot_reply piece_offered(const node_snapshot& m);  // fetch_offered
  // File `file` this node offers under `name` (a bulk load's), if it does.
  std::optional<detail::file_bytes> offered_file(const std::string& name, const std::string& file) const;
  // load of a partition (single-copy, or a replica that leads) from its part file: this
  // node's copy of snapshot `m.name` (NOT_FOUND when it holds no intact one), or the file
  // fetched from node `m.from`.
  node_snapshot_reply load_here(const node_snapshot& m);
  // File `m.file` as node `m.from` has it (load with `from`), read a piece at a time and
  // checked against `m.bytes` and `m.crc`: NOT_FOUND when it cannot be fetched,
  // CORRUPTION when it is not that file. A file this node offers itself is its mapping.
  result<detail::file_bytes> fetch_for_load(const node_snapshot& m);
  // Step `m` at the node that loads a partition placed as `o`: its owner's, or its Raft
  // group leader's.
  result<node_snapshot_reply> ask_loader(const partition_owner& o, const node_snapshot& m);
  node_snapshot_reply stats_here(const node_snapshot& m);
  static std::vector<std::string> live_nodes(cluster_node& n);
  // Snapshot `m` is gone: records it for the nodes of `may_hold` (snapshot_sweep.h), asks
  // the `live` ones to drop its files, and takes out of the record those that did.
  void record_gone(zk_client& zk, const detail::snapshot_manifest& m, const std::set<std::string>& may_hold,
                   const std::vector<std::string>& live);

  // The files of the bulk loads this node serves, by offer name, for fetch_offered.
  class offer;
  mutable absl::Mutex offers_mu_;
  std::map<std::string, std::map<std::string, detail::file_bytes>> offers_ ABSL_GUARDED_BY(offers_mu_);

  detail::cluster_seat& seat_;
  peer_directory& peers_;
  const node_gate& gate_;
  const snapshot_service_options o_;
};

}  // namespace cellar::cluster
