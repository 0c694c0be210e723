// cluster/routed_connection.h: a client connection to a whole cluster that sends each
// batch straight to the nodes owning its rows.
//
// `connect_routed` opens a ZooKeeper session of its own (it does not register as a node)
// and reads the cluster catalog (each table group's partition rule), the placement map and
// the member list, with watches: a change marks the copy stale and the next call re-reads
// it. A batch is split by owner node, with the table's partition rule, exactly as a node
// splits it by partition; each node's part goes over an RPC connection to that node (made
// on first use) and the results are put back in the batch's order. A partition's actions always
// stay in one part, so each partition's unit is kept whole. Each node's RPC connection runs
// on a thread of its own (an RPC connection's kj event loop is per thread), so the parts for
// different nodes travel in parallel.
//
// A map that is stale when a part is sent costs a forward, not an error: the node that gets
// it forwards what it does not own (cluster/remote.h). Scans, DDL and admin calls go to one
// node (scans are merged across nodes there); after a DDL the copy is re-read.
//
// Errors: a node that cannot be connected fails its part UNAVAILABLE, naming the node; a
// connection that broke is dropped and made again on the next call.
//
// Thread safety: one thread at a time (calls are synchronous, as on an RPC connection).
#pragma once

#include <memory>

#include "cellar/client.h"
#include "cellar/connection.h"
#include "cluster/zk_client.h"

namespace cellar::cluster {

struct routed_options {
  zk_options zookeeper;          // "host:port[,...][/chroot]" of the cluster
  rpc::client_options client;    // for the connections to the nodes
};

// UNAVAILABLE when ZooKeeper or no node can be reached.
result<std::unique_ptr<connection>> connect_routed(routed_options o);

}  // namespace cellar::cluster
