// replica/replicated_partition.h: a partition whose writes go through its Raft group.
//
// A replicated partition is one replica of a partition's Raft group (replica/group.h): an
// actor that answers the partition protocol (partition/protocol.h) and is also its
// replica's loop. What changes against a single partition (partition/partition.h):
//  - A write (a batch with any action that is not a get) is refused on a replica that is
//    not the leader: every action answers NOT_LEADER, naming the leader it knows. On the
//    leader the batches that arrive together (those in the mailbox before the flush message
//    the actor sends itself) become one log entry: the time they run at (the leader's
//    clock, so every replica assigns the same timestamps and expiries) and the
//    batch_requests in the partition protocol's serialised form. Every replica runs each
//    batch when the entry is committed, in log order, as one unit exactly as a single
//    partition does; the leader answers each with what its run produced, after the commit.
//  - A read (a batch of gets, a scan page) is served by the leader only, after a read
//    barrier (raft_barrier) that the reads arriving together share, or after the entry of
//    the writes that arrived with them: it then sees every write acknowledged before it was
//    asked (linearizable). A follower answers NOT_LEADER, naming the leader.
//  - The Raft log is the partition's log (no log_stream) and the Raft snapshot is the
//    partition's schema and cells; a replica that restarts rebuilds them from its
//    storage's snapshot and log.
//  - Schema changes (adopt_schema_request) and family drops (drop_families_request) are
//    log entries too: the replica told of one proposes it when it leads (now, or once
//    elected), and every replica adopts it when applied, in log order with the writes, so
//    every replica runs each write with the schema the leader checked it against.
//  - No in-place path and no copying moves: a move_request or handoff_request answers
//    UNSUPPORTED. A replicated partition moves by Raft membership change instead: its
//    leader takes replica_add_atom (a new replica joins as a learner and becomes a voter
//    once caught up) and replica_remove_atom (a replica leaves; the leader leaving hands
//    leadership over first and answers NOT_LEADER naming the new leader), one change at a
//    time (replica_group::add_member, remove_member). A replica started for a new member
//    (replication_config::members empty) starts empty and waits for the leader.
//  - A load (move_request::apply: a restore's, a clone's or a bulk load's cells) is one
//    log entry when its cells fit in replication_config::load_entry_bytes. A larger one is
//    proposed by the leader as parts of that size under a random load id, one after
//    another, which every replica only stages; then one small entry that writes the
//    staged parts in one step, so a reader sees all of a load or none. Part 0 of a load
//    drops what an earlier one left staged, and a leader that finds parts of a load not its
//    own staged (its predecessor failed or died mid-load) proposes an abort entry that
//    drops them. Staged parts are part of the Raft snapshot, so a replica restored from
//    one taken mid-load stages the rest and writes the whole load. A load whose leader
//    loses leadership or stops answers NOT_LEADER or UNAVAILABLE and leaves nothing
//    written: it may be sent again, whole, to the next leader.
//  - A split or merge of the table (cluster/reshaper.h) freezes the partition through the
//    log: the leader takes move_request::freeze, proposes a freeze entry and answers every
//    cell as of that entry; from it on every replica refuses writes UNAVAILABLE (to be sent
//    again, to the table's new partitions), whoever leads, reads go on. move_request::abort
//    proposes the release entry that ends it. Each carries a hold token in max_bytes: a
//    release ends only the freeze of its hold (0: any), so a late release of a split that
//    gave up never thaws the next split's freeze. Both answer NOT_LEADER on a follower; the
//    freeze is part of the Raft snapshot.
// The leader checks a write's schema version before proposing it: a write made against a
// schema the log has not applied yet answers UNAVAILABLE, to be sent again.
//
// Thread safety: an actor; its storage and transport are used from it only (the transport
// must be thread-safe if several replicas share it, as local_transport is).
#pragma once

#include <caf/all.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "partition/partition.h"
#include "replica/caf_loop.h"
#include "replica/group.h"
#include "replica/storage.h"

namespace cellar::replica {

// What a replicated partition sends itself to propose the writes and serve the reads queued
// since the last one.
using batch_flush_atom = caf::atom_constant<caf::atom("rbatch")>;

// Asks a replica for what it knows of its group (replica_group::report).
using replica_status_atom = caf::atom_constant<caf::atom("rstatus")>;

// Membership changes, on the leader (see above): (replica_add_atom, id, address) and
// (replica_remove_atom, id) answer an admin_reply once the change is done or has failed;
// (replica_prefer_atom, id) sets the replica that should lead (group_options::
// preferred_leader; 0: none).
using replica_add_atom = caf::atom_constant<caf::atom("radd")>;
using replica_remove_atom = caf::atom_constant<caf::atom("rremove")>;
using replica_prefer_atom = caf::atom_constant<caf::atom("rprefer")>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, member& x) {
  return f(caf::meta::type_name("replica_member"), x.id, x.address);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_status::peer& x) {
  return f(caf::meta::type_name("replica_peer"), x.who, x.match_index, x.voter);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_status& x) {
  return f(caf::meta::type_name("replica_status"), x.role, x.term, x.leader, x.last_index, x.commit_index,
           x.last_applied, x.peers);
}

using replicated_partition_actor = detail::partition_actor::extend<
    caf::reacts_to<replica_tick_atom, std::uint64_t>, caf::reacts_to<replica_flush_atom>,
    caf::reacts_to<replica_msg_atom, std::string>, caf::replies_to<replica_status_atom>::with<group_status>,
    caf::reacts_to<batch_flush_atom>,
    caf::replies_to<replica_add_atom, std::uint64_t, std::string>::with<detail::admin_reply>,
    caf::replies_to<replica_remove_atom, std::uint64_t>::with<detail::admin_reply>,
    caf::reacts_to<replica_prefer_atom, std::uint64_t>>;

struct replication_config {
  group_options group;  // this replica's id and address, timeouts
  // The group's initial configuration (see replica_group::start); empty for a replica that
  // joins a running group (it must not make a configuration of its own).
  std::vector<member> members;
  replica_storage* storage = nullptr;  // outlives the actor, or is held by `keep`
  transport* net = nullptr;            // outlives the actor, or is held by `keep`
  // A load larger than this many bytes of cells goes through the log as a staged load
  // of parts of about this size (see above); one no larger, as one entry.
  std::size_t load_entry_bytes = 4u << 20;
  // For tests: asked on the leader before it proposes the next entry of a staged load,
  // with the number of parts committed so far; false holds the load until the next tick
  // asks again (a test stops a load midway with it). Called on the actor's thread.
  std::function<bool(std::size_t parts_committed)> load_may_continue;
  // Held by the actor until it exits (after its group is closed): what owns `storage` and
  // `net` when nothing else does.
  std::shared_ptr<void> keep;
};

// Starts a replica of a partition. `cfg`'s schema, index, memory and clock are used; its
// log and recovered cells are not (the replica's storage holds its state). The actor stops
// with an error if its replica cannot start.
replicated_partition_actor spawn_replicated_partition(caf::actor_system& sys, detail::partition_config cfg,
                                                      replication_config rc);

}  // namespace cellar::replica
