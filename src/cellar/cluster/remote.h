// cluster/remote.h: reaching the partitions of other nodes over CAF's middleman.
//
// Every cluster node publishes one *node endpoint* actor on its peer address (the
// `peer_address` of its membership znode). The endpoint takes a batch part or a scan page
// for one partition of the node, named by (table group, index), and delegates it to the
// partition's actor, so the partition's reply goes straight back to the asking node:
//
//   node_batch -> batch_reply      node_scan -> scan_reply
//
// The endpoint answers NOT_OWNER (with the node's placement epoch and the owner it knows)
// when the node does not own the partition. When the request was checked against a schema
// the node has not applied yet (it carries the sender's schema version), or names a table
// the node does not know yet, the endpoint holds it, in order, until the node's catalog
// catches up (ZooKeeper tells every node at about the same time), for at most
// `catch_up_wait`; then it answers UNAVAILABLE.
//
// On the asking side, a partition of another node is a *remote partition* actor of this
// process with the partition protocol's type (partition/protocol.h), so the store's
// router, dispatcher and scanner use it exactly as a local partition without an in-place
// path (dispatch/dispatch.h: partition_ref::local is null). It forwards batch and scan
// requests to the owner's endpoint and answers admin requests itself (a remote partition
// holds nothing here: stats are zero, a cut is empty, stop ends the forwarder only, once
// the requests it has in flight are answered).
// Its failures are values: UNAVAILABLE naming the node when the node is not a member (it
// died and its session expired), when it cannot be connected within `forward_timeout`
// (the actor does not block while it connects: requests wait in line for the connect),
// when the connection breaks with requests in flight (answered at once, on the
// middleman's notice), or when no reply comes within `forward_timeout`.
//
// Threads: actors; peer_directory may be used from any thread.
#pragma once

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cellar/status.h"
#include "cluster/membership.h"
#include "dispatch/dispatch.h"
#include "partition/protocol.h"
#include "replica/replicated_partition.h"

namespace cellar::cluster {

// `uid`: the incarnation of the table the sender routed with (0: any). A split or merge
// gives the table a new incarnation whose partition `index` holds other rows, so a request
// routed with the old one is refused UNAVAILABLE (send again) once the node has the new one.
struct node_batch {
  std::string table;
  std::uint32_t index = 0;
  detail::batch_request req;
  std::uint64_t uid = 0;
};

struct node_scan {
  std::string table;
  std::uint32_t index = 0;
  detail::scan_request req;
  std::uint64_t uid = 0;
};

// A step of a move (cluster/mover.h) sent to a node's endpoint: either to the partition
// that moves (on_source: `req` goes to the partition as it is), or to the copy being built
// on the target node (prepare: start an empty copy, not serving; apply: apply req.cells
// to it; finish: write it durably; drop: forget it).
struct node_move {
  enum target_step : std::uint8_t { on_source = 0, prepare = 1, apply = 2, finish = 3, drop = 4 };
  std::string table;
  std::uint32_t index = 0;
  std::uint8_t step = on_source;
  detail::move_request req;
};

// A Raft message (replica/wire.h) for this node's replica of partition (table, index): the
// endpoint hands it to the replica's actor (replica_msg_atom); nothing is answered, as Raft
// sends again what is lost.
struct node_replica {
  std::string table;
  std::uint32_t index = 0;
  std::string bytes;
};

// A step of a Raft membership change of partition (table, index) (cluster/replica_mover.h)
// at this node, whose replica's group is the table's incarnation `uid`:
//   join    start a replica with Raft id `id` that joins the group empty (it does not
//           bootstrap), unless it runs already;
//   leave   forget a replica `join` started that the placement does not name: stop it and
//           delete its Raft state;
//   add, remove, prefer   ask this node's replica (the leader, for add and remove) to add
//           replica `id` at node `address`, remove replica `id`, prefer `id` as leader;
//   report  what this node's replica knows of its group.
struct node_member {
  enum step_kind : std::uint8_t { join = 0, leave = 1, add = 2, remove = 3, prefer = 4, report = 5 };
  std::string table;
  std::uint64_t uid = 0;
  std::uint32_t index = 0;
  std::uint8_t step = report;
  std::uint64_t id = 0;
  std::string address;
};

struct node_member_reply {
  status st;
  replica::group_status report;  // for `report`
};

// A step of a named snapshot (cluster/snapshot_service.h) at this node; blocking work, run
// on a thread of its own:
//   copy     partition (table, index) at one instant: this node's single-copy partition
//            (track, chunks, cut, here), or its replica of a replicated one if it leads
//            (after a read barrier; NOT_LEADER otherwise)
//   load     writes part file `file` (`bytes` bytes, CRC `crc`, `file_cells` cells, its
//            family ids mapped to the table's by `ids`) over partition (table, index): this
//            node's single-copy partition, or a replicated one through its Raft group (its
//            replica here must lead; NOT_LEADER otherwise). Without `from`, the file is this
//            node's copy of snapshot `name` (NOT_FOUND when it holds no intact one); with
//            `from`, it is fetched from node `from` in pieces first: its copy of snapshot
//            `name` (`fetch`), or with `offered` the file it offers under `name`
//            (`fetch_offered`: a bulk load's)
//   persist  takes a snapshot of this node's store, so that the loads it took are durable
//   begin    starts to take the files of snapshot `name` (dropping a copy of that name an
//            unfinished snapshot left here: the caller claimed the name)
//   keep_file  takes the files in `files` (one at a time, so no message holds a whole
//            snapshot)
//   keep     keeps the files taken as snapshot `name` (`manifest`), in this node's
//            snapshot repository
//   fetch    this node's copy of file `file` of snapshot `name`, checked against its own
//            manifest
//   fetch_offered  a piece of file `file` that this node offers under `name` while it
//            serves a bulk load (NOT_FOUND once it no longer does)
//   drop     deletes this node's files of snapshot `name` (OK if it has none)
// and the steps of a split or merge (cluster/reshaper.h), served alike:
//   freeze   copies this node's single-copy partition (table, index) as a move's source
//            does (track, chunks, cuts) and freezes it (it holds writes from then on,
//            until the table's new incarnation replaces it or `release`); `cells`: all of
//            it at the freeze. A replicated partition: its replica here, if it leads
//            (NOT_LEADER otherwise), freezes its group through the Raft log (every replica
//            then refuses writes UNAVAILABLE, whoever leads) and answers its cells at the
//            freeze entry
//   release  ends the freeze of (table, index): what it held runs (a replicated
//            partition: the release entry, on the leader)
//   stage    builds partition `index` of the table's next incarnation (`manifest`: its
//            schema, cluster/catalog_state.h encode_table_entry) on `cells`, durable and
//            not serving until the catalog names that incarnation
//            With `replicas` (a replicated partition's replica set, the preferred leader
//            first) it starts this node's replica of the new Raft group instead, empty,
//            bootstrapping the group's initial configuration as placement.h numbers it;
//            the replica runs, not serving, until a placement names it or `unstage`
//   fill     writes `cells` into partition `index` of incarnation `uid` that `stage` with
//            `replicas` started, through its Raft group (its replica here must lead;
//            NOT_LEADER otherwise): a staged load, written in one step on every replica
//   unstage  drops what `stage` built for incarnation `name` (decimal uid), partition `index`
// and one the store's list_regions asks of the node holding a partition:
//   stats    the cells and bytes (`cells_held`, `bytes_held`) of partition (table, index)
//            here: this node's single-copy partition or its replica of a replicated one
struct node_snapshot {
  enum step_kind : std::uint8_t {
    copy = 0,
    load = 1,
    persist = 2,
    begin = 3,
    keep_file = 4,
    keep = 5,
    fetch = 6,
    drop = 7,
    freeze = 8,
    release = 9,
    stage = 10,
    unstage = 11,
    fill = 12,
    stats = 13,
    pull = 14,
    fetch_staged = 15,
    fetch_offered = 16
  };
  std::uint8_t step = copy;
  std::string table;
  std::uint32_t index = 0;
  std::string name;
  std::uint64_t uid = 0;                     // freeze: the table's uid the caller planned with; fill
  std::string file;                          // fetch, fetch_staged, fetch_offered, pull, load
  std::string manifest;                      // keep: encode_manifest
  std::map<std::string, std::string> files;  // keep_file: a piece of one file, at `offset`
  detail::delta_handle cells;                // stage, fill
  std::vector<std::string> replicas;         // stage: a replicated partition's replica set
  // freeze, release of a replicated partition: the hold (the czxid of the move intent the
  // split holds), so that a release ends only the freeze it names.
  std::uint64_t hold = 0;
  std::vector<std::uint32_t> families;  // copy: the family ids whose cells the file holds
  std::uint64_t offset = 0;             // keep_file, fetch, fetch_staged, fetch_offered: where the piece starts
  std::string from;                     // pull: the node that staged the file; load: the node to fetch it from
  std::uint64_t bytes = 0;              // pull, load: the file's size
  std::uint32_t crc = 0;                // pull, load: the file's CRC-32C
  std::vector<std::uint32_t> ids;       // load: the file's family ids and the table's, in pairs
  std::uint64_t file_cells = 0;         // load: the cells the file holds
  bool offered = false;                 // load with `from`: a file node `from` offers, not a snapshot's
};

struct node_snapshot_reply {
  status st;
  detail::delta_handle cells;                // freeze: the partition's cells
  std::map<std::string, std::string> files;  // fetch, fetch_staged: a piece of the file
  std::uint64_t cells_held = 0;              // stats; copy: the cells of the file it staged
  std::uint64_t bytes_held = 0;              // stats; copy: that file's size
  std::uint32_t crc = 0;                     // copy: that file's CRC-32C
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_snapshot& x) {
  return f(caf::meta::type_name("node_snapshot"), x.step, x.table, x.index, x.name, x.uid, x.file, x.manifest, x.files,
           x.cells, x.replicas, x.hold, x.families, x.offset, x.from, x.bytes, x.crc, x.ids, x.file_cells, x.offered);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_snapshot_reply& x) {
  return f(caf::meta::type_name("node_snapshot_reply"), x.st, x.cells, x.files, x.cells_held, x.bytes_held, x.crc);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_member& x) {
  return f(caf::meta::type_name("node_member"), x.table, x.uid, x.index, x.step, x.id, x.address);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_member_reply& x) {
  return f(caf::meta::type_name("node_member_reply"), x.st, x.report);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_replica& x) {
  return f(caf::meta::type_name("node_replica"), x.table, x.index, x.bytes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_move& x) {
  return f(caf::meta::type_name("node_move"), x.table, x.index, x.step, x.req);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_batch& x) {
  return f(caf::meta::type_name("node_batch"), x.table, x.index, x.req, x.uid);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_scan& x) {
  return f(caf::meta::type_name("node_scan"), x.table, x.index, x.req, x.uid);
}

using catch_up_atom = caf::atom_constant<caf::atom("catchup")>;

using node_endpoint = caf::typed_actor<
    caf::replies_to<node_batch>::with<detail::batch_reply>, caf::replies_to<node_scan>::with<detail::scan_reply>,
    caf::replies_to<node_move>::with<detail::move_reply>, caf::replies_to<node_member>::with<node_member_reply>,
    caf::replies_to<node_snapshot>::with<node_snapshot_reply>, caf::reacts_to<node_replica>,
    caf::reacts_to<catch_up_atom>>;

// Loads CAF's middleman and registers the node-to-node messages (with the partition
// protocol's, which store_impl registers). Call on the configuration before the system starts.
void add_cluster_protocol(caf::actor_system_config& cfg);

// What an endpoint needs to know of its node.
struct endpoint_context {
  std::string self;  // the node's id
  // The partition of this node for (table, index) when the node has applied a schema of
  // `table` at version >= `version`: the partition ref (local null: another node owns it).
  // Returns false while the node has not caught up.
  std::function<bool(const std::string& table, std::uint32_t index, std::uint64_t version, detail::partition_ref& out)>
      find;
  // "owned by node X at epoch E" for a NOT_OWNER message.
  std::function<std::string(const std::string& table, std::uint32_t index)> describe_owner;
  std::chrono::milliseconds catch_up_wait{5000};
  // False while the node must not run writes (its ZooKeeper session was lost): batches
  // with writes are refused UNAVAILABLE. Unset: always true.
  std::function<bool()> writable;
  // For a partition that moved away from this node: the forwarder to its new owner, so
  // requests sent here with an older map go on there. Unset or null: NOT_OWNER.
  std::function<detail::partition_actor(const std::string& table, std::uint32_t index)> moved_to;
  // The target side of a move (node_move): start an empty copy of the partition, not
  // serving; its actor (null: none); write a cut of it durably; forget it.
  std::function<status(const std::string& table, std::uint32_t index)> prepare_incoming;
  std::function<detail::partition_actor(const std::string& table, std::uint32_t index)> incoming;
  std::function<status(const std::string& table, std::uint32_t index, const detail::delta_handle& cut)>
      persist_incoming;
  std::function<void(const std::string& table, std::uint32_t index)> drop_incoming;
  // This node became the source (track) or the target (prepare) of a move: it watches the
  // move's intent from now on (member.h). Unset: no watch.
  std::function<void(const std::string& table, std::uint32_t index, bool source)> guard_move;
  // This node's replica of partition (table, index) (replica/replicated_partition.h), for
  // the Raft messages of its peers. Unset or null: the message is dropped.
  std::function<caf::actor(const std::string& table, std::uint32_t index)> replica;
  // The join and leave steps of a membership change (node_member). Unset: UNSUPPORTED.
  std::function<status(const std::string& table, std::uint64_t uid, std::uint32_t index, std::uint64_t id)>
      join_replica;
  std::function<void(const std::string& table, std::uint64_t uid, std::uint32_t index)> leave_replica;
  // The steps of a named snapshot at this node (node_snapshot), run on a thread of their
  // own. Unset: UNSUPPORTED.
  std::function<node_snapshot_reply(node_snapshot&)> snapshot_step;
  // Counts the batch parts and scan pages the endpoint has taken.
  std::shared_ptr<std::atomic<std::uint64_t>> served = std::make_shared<std::atomic<std::uint64_t>>(0);
};

node_endpoint spawn_node_endpoint(caf::actor_system& sys, endpoint_context ctx);

// The nodes of the cluster and connections to their endpoints.
class peer_directory {
 public:
  explicit peer_directory(caf::actor_system& sys) : sys_(sys) {}

  void set_members(const std::vector<node_info>& members);
  // The endpoint of `node`, connecting when needed: blocks for the connect, at most
  // `timeout`. UNAVAILABLE, naming the node, when it is not a member or cannot be reached
  // within `timeout`. Not for an actor's thread (a remote partition connects without
  // blocking, through find/accept/unreachable).
  result<node_endpoint> endpoint(const std::string& node, std::chrono::milliseconds timeout);
  // Drops a connection that broke (only if it is still `ep`).
  void forget(const std::string& node, const caf::actor_addr& ep);

  // Where `node` is: its endpoint when connected (`ep` set), else the peer address to
  // connect to. UNAVAILABLE, naming the node, when it is not a member or its address is
  // unusable.
  struct location {
    node_endpoint ep;
    std::string address, host;
    std::uint16_t port = 0;
  };
  result<location> find(const std::string& node);
  // What the middleman answered a connect to `where` with: the endpoint, kept for later
  // callers; UNAVAILABLE when nothing, or not a node endpoint, is published there.
  result<node_endpoint> accept(const std::string& node, const location& where, caf::strong_actor_ptr found,
                               const std::set<std::string>& interface);
  // The UNAVAILABLE for a connect to `where` that failed with `e`.
  status unreachable(const std::string& node, const location& where, const caf::error& e);

 private:
  caf::actor_system& sys_;
  std::mutex mu_;
  std::map<std::string, node_info> members_;
  std::map<std::string, node_endpoint> connected_;
};

// Whether a remote partition's UNAVAILABLE `s` failed before the request left this node
// (the node is not a member or could not be connected), so that sending it elsewhere
// cannot run it twice.
bool never_sent(const status& s);

// A partition of `node` as seen from here (see above).
detail::partition_actor spawn_remote_partition(caf::actor_system& sys, std::shared_ptr<peer_directory> peers,
                                               std::string node, std::string table, std::uint32_t index,
                                               std::chrono::milliseconds forward_timeout, std::uint64_t uid = 0);

}  // namespace cellar::cluster
