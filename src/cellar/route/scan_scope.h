// route/scan_scope.h: which partitions a scan visits, for clients that route scans
// themselves (cluster/routed_connection.h): on the wire, the `partitions` and `noForward`
// of Cellar.scan and of the frames' ScanRequest (schemas/cellar.capnp).
#pragma once

#include <cstdint>
#include <vector>

namespace cellar::detail {

struct scan_scope {
  // The scan visits only these of the table's partitions (those its range touches); empty:
  // every partition. A number the table does not have is INVALID_ARGUMENT.
  std::vector<std::uint32_t> partitions;
  // A cluster member answers NOT_OWNER (cluster_hooks::not_owner, store/cluster_state.h) if another
  // node owns a partition the scan would visit, instead of forwarding its pages.
  bool no_forward = false;
};

}  // namespace cellar::detail
