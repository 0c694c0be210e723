// cluster/layout.h: where cellar keeps its cluster state in ZooKeeper.
//
// Every path is relative to the chroot of the connect string (`--cluster host:port/cellar`),
// so several clusters can share one ZooKeeper. docs/cluster.md describes each znode.
//
//   /nodes/<node id>             ephemeral: a live node and its addresses (membership)
//   /election/n_<seq>            ephemeral sequential: master candidates; lowest is master
//   /catalog                     the catalog header: version, id counters, table versions
//   /catalog/tables/t_<table>    one table group's schema (catalog/catalog.h encoding)
//   /ddl/requests/r_<seq>        persistent sequential: a DDL waiting for the master
//   /ddl/results/r_<seq>         the master's answer to the request of the same name
//   /placement                   the placement map: epoch, (table, partition) -> node
//   /moves/t_<table>.<index>     ephemeral: a move of that partition is running (mover.h), or
//                                a named snapshot copying it (snapshot_service.h)
//   /snapshots/s_<name>          a named snapshot: the nodes holding its files, its manifest
//   /snapshot_writes/s_<name>    ephemeral: a named snapshot being written (snapshot_service.h)
//   /snapshot_deleted/s_<name>   a tombstone: per deleted incarnation of the name (or one
//                                whose write failed), its manifest and the nodes that may
//                                still hold a copy (snapshot_sweep.h)
#pragma once

#include <cstdint>
#include <string>

namespace cellar::cluster::layout {

inline constexpr const char* nodes = "/nodes";
inline constexpr const char* election = "/election";
inline constexpr const char* catalog = "/catalog";
inline constexpr const char* catalog_tables = "/catalog/tables";
inline constexpr const char* ddl_requests = "/ddl/requests";
inline constexpr const char* ddl_results = "/ddl/results";
inline constexpr const char* placement = "/placement";
inline constexpr const char* moves = "/moves";
inline constexpr const char* snapshots = "/snapshots";
inline constexpr const char* snapshot_writes = "/snapshot_writes";
inline constexpr const char* snapshot_deleted = "/snapshot_deleted";

// The intent znode of a move of partition `index` of `table`; its data is "FROM TO".
inline std::string move_intent(const std::string& table, std::uint32_t index) {
  return std::string(moves) + "/t_" + table + "." + std::to_string(index);
}

}  // namespace cellar::cluster::layout
