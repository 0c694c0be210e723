// cluster/routed_scan.h: a routed client's scan (cluster/routed_connection.h): one stream
// per owner node, over the partitions it owns that the scan touches, merged in global order.
//
// Each node's stream is its own scanner over its partitions, asked not to forward
// (rpc/scoped_scan.h): it merges those partitions, holds LIMIT and a PageFilter's row
// limit for them and stops where a filter (WhileMatchFilter, ...) ended the scan in one of
// them. The merge does across nodes what a node's scanner does across partitions: it takes
// the smallest row (the largest, reversed) of the streams' next rows, refilling every empty
// live stream before each pick (in parallel, each on its node's link); it holds LIMIT and
// the PageFilter's row limit for the whole scan (each node got the same limits: the first
// `limit` rows of the scan are among the first `limit` rows of their nodes); and it drops
// the rows beyond the earliest filter end any stream reported on its last page, in scan
// direction, as the node's scanner drops them across its partitions. A row split into
// several results (batch, maxResultSize) lives in one partition, so its pieces come from
// one stream in a row: the merge passes them on together.
//
// Thread safety: one thread at a time, as a row_stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cellar/connection.h"
#include "cluster/node_link.h"

namespace cellar::cluster {

// One node's part of a scan: the link to the node and the scan's partitions it owns.
struct scan_part {
  std::string node;
  std::shared_ptr<node_link> link;
  std::vector<std::uint32_t> partitions;
};

// Opens `s` on every part's node at once, each over its partitions with no_forward, and
// returns the merged stream (a single part's stream as it is). Errors: the error of a part
// that could not be opened (its node named in `*failed_node`): NOT_OWNER when the node
// does not own one of the part's partitions (a stale map), UNAVAILABLE when the connection
// broke, or the scan's own (TABLE_NOT_FOUND, INVALID_ARGUMENT, ...); the parts opened are
// closed again.
result<std::unique_ptr<row_stream>> open_routed_scan(const std::string& table, const cellar::scan& s,
                                                     std::vector<scan_part> parts, std::string* failed_node);

}  // namespace cellar::cluster
