// rpc/scoped_scan.h: scans over some of a table's partitions, for clients that route
// scans themselves (cluster/routed_connection.h): each node is asked for the partitions it
// owns, not to forward (NOT_OWNER instead, when the client's map is stale), and tells
// where a filter ended its part, so that the client can merge the parts as a node's
// scanner merges partitions (schemas/cellar.capnp: Cellar.scan's partitions, noForward
// and filterEnd).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cellar/connection.h"
#include "route/scan_scope.h"

namespace cellar::rpc {

// A scan's stream that also says when it is over and where a filter ended it.
class scoped_stream : public row_stream {
 public:
  // Whether next() has nothing more to return (known without asking the server).
  virtual bool over() const = 0;
  // Once over(): where a filter ended the scan at the server (scanner::filter_end), if one
  // did; nullopt before.
  virtual std::optional<scan_end> filter_end() const = 0;
};

// A scan of `table` through `c`, a connection made by rpc::connect, over `scope`: the
// server visits only scope.partitions (those the scan's range touches; empty: all) and,
// with scope.no_forward, answers NOT_OWNER (code 18) instead of forwarding when another
// node owns one of them. Errors: those of connection::scan; INVALID_ARGUMENT for a
// partition the table does not have; UNSUPPORTED when `c` is not an RPC connection.
// Thread safety: as `c` (the stream belongs to the thread that made `c`).
result<std::unique_ptr<scoped_stream>> scan_scoped(connection& c, const std::string& table, const cellar::scan& s,
                                                   const detail::scan_scope& scope);

}  // namespace cellar::rpc
