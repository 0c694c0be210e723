// cluster/replica_sweep.h: what a node checks in ZooKeeper before it deletes Raft state.
//
// The sweep (replica_host::sweep, stale_replica) judges a replica by the catalog and the
// placement this node applied last. ZooKeeper's servers may lag its leader, so a node that
// (re)connected to a lagging server could have applied a placement older than the Raft
// files it holds (a move that made a replica here, its flip read from a server that had
// not seen it yet), and would delete state a newer placement names. So before a sweep the
// node asks for a ZooKeeper sync of the catalog and the placement and reads both again:
// it sweeps only when what it applied is what ZooKeeper holds then. A session never reads
// older state than it has seen, so the reads of the sweep (move intents) are as new too.
//
// Thread safety: a plain function over a zk_client (see zk_client.h for threads).
#pragma once

#include <cstdint>

#include "cellar/status.h"
#include "cluster/catalog_state.h"
#include "cluster/zk_client.h"

namespace cellar::cluster {

// Syncs /catalog and /placement (zk_client::sync), then reads them: OK when the catalog is
// at `applied`'s version and the map at epoch `epoch` (what this node applied; the tables
// of `applied` are not read again);
// CONFLICT, saying which, when ZooKeeper holds a newer one (its watch brings it, and the
// sweep after it judges); ZooKeeper's error when it cannot tell. Anything but OK: do not
// sweep now.
status sweep_view_current(zk_client& zk, const cluster_catalog& applied, std::uint64_t epoch);

}  // namespace cellar::cluster
