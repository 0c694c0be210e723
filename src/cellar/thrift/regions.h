// thrift/regions.h: which server region locations name for a table's partitions.
//
// HBase answers a region's location with the region server that holds it. In a cluster a
// cellar partition is held by the node that owns it in the placement map, so a region
// names that node: its host and its data port (the port its clients and the other nodes
// reach it on, as HBase names a region server's RPC port, not a Thrift server). Outside a
// cluster every partition is served here, and a region names the gateway that answered.
//
// Thread safety: a plain function; the store is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cellar/store.h"
#include "thrift/scanners.h"

namespace cellar::thrift {

struct server_address {
  std::string host;
  std::int32_t port = 0;
};

// The server of each of the `count` partitions of `table` (its full name): the owning
// node's, or `self` outside a cluster and for a partition whose owner is not known now.
std::vector<server_address> partition_servers(store& s, const std::string& table, std::uint32_t count,
                                              const endpoint& self);

}  // namespace cellar::thrift
