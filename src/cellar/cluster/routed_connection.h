// cluster/routed_connection.h: a client connection to a whole cluster that sends each
// batch and each scan straight to the nodes owning its rows.
//
// `connect_routed` opens a ZooKeeper session of its own (it does not register as a node)
// and reads the cluster catalog (each table group's partition rule), the placement map and
// the member list, with watches: a change marks the copy stale and the next call re-reads
// it. A batch is split by owner node, with the table's partition rule, exactly as a node
// splits it by partition; each node's part goes over an RPC connection to that node (made
// on first use) and the results are put back in the batch's order. A partition's actions always
// stay in one part, so each partition's unit is kept whole. Each node's RPC connection runs
// on a thread of its own (an RPC connection's kj event loop is per thread, cluster/node_link.h),
// so the parts for different nodes travel in parallel.
//
// A replicated partition's part goes to the first of its replicas that can be connected
// (the preferred leader while it is up); that node's replica router follows the leader
// (cluster/replica_router.h), so a failover costs the client nothing but time.
//
// A scan is opened on every node owning a partition its range touches, each over those
// partitions, and the nodes' streams are merged here in global order, both directions, with
// LIMIT, a PageFilter's row limit and a filter's end (WhileMatchFilter) holding for the
// whole scan, as a node's scanner merges its partitions (cluster/routed_scan.h); pages of
// different nodes are fetched in parallel. A scan whose partitions are all on one node is
// that node's stream.
//
// Every batch and scan asks its node not to forward (client_options::no_forward; a scan's
// scope, rpc/scoped_scan.h): a node that does not own some of a part's partitions (the copy
// was stale: a move, before the watch fired) answers NOT_OWNER, naming its placement epoch
// (a batch, for those actions; a scan, when it is opened); the client re-reads the
// catalog, map and members from ZooKeeper and sends those actions again (opens the scan
// again) to the owners it now sees, up to `not_owner_retries` times (waiting a little
// longer each time, for a node whose copy is behind), so a stale map costs a round trip,
// never a forward. Actions a split or merge refuses (RESHAPING: frozen, or routed with the
// partitions it replaced) are sent again after a re-read, for up to 30 s (util/resend.h);
// a scan opened with replaced partitions is opened again like one answered NOT_OWNER. A
// partition that moves while a scan pages through it fails the scan (the node's error).
// DDL and admin calls go to one node; after a DDL the copy is re-read. A table the copy
// cannot route (unknown to it, no family yet) is scanned through one node.
//
// Errors: a node that cannot be connected fails its part UNAVAILABLE, naming the node; a
// connection that broke is dropped and made again on the next call; actions (scans) still
// answered NOT_OWNER after the last retry keep that error (its message says how many
// re-reads).
//
// Thread safety: one thread at a time (calls are synchronous, as on an RPC connection); a
// scan's stream too. A stream holds the connections to its nodes (cluster/node_link.h): it
// may outlive the routed connection.
#pragma once

#include <memory>

#include "cellar/client.h"
#include "cellar/connection.h"
#include "cluster/zk_client.h"

namespace cellar::cluster {

struct routed_options {
  zk_options zookeeper;        // "host:port[,...][/chroot]" of the cluster
  rpc::client_options client;  // for the connections to the nodes (no_forward is set)
  // Re-reads of the map (and resends) after NOT_OWNER answers, per batch or scan.
  int not_owner_retries = 8;
  // true: a ZooKeeper watch marks the copy stale and the next call re-reads it. false: the
  // copy is re-read only after a NOT_OWNER or a DDL (tests use it to keep a stale copy).
  bool follow_watches = true;
};

// UNAVAILABLE when ZooKeeper or no node can be reached.
result<std::unique_ptr<connection>> connect_routed(routed_options o);

}  // namespace cellar::cluster
