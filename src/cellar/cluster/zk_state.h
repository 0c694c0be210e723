// cluster/zk_state.h: reading the catalog and the placement map from ZooKeeper, and the
// ops that write them (used by the master inside one multi()).
//
// Catalog reads are consistent: the reader takes /catalog (the header: version and each
// table's version), then every table whose version it does not hold yet; a table entry at a
// different version than the header names means a DDL committed in between, and the read
// starts over. So a reader always sees exactly the catalog of one version.
//
// Thread safety: plain functions over a zk_client (see zk_client.h for threads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/catalog_state.h"
#include "cluster/placement.h"
#include "cluster/zk_client.h"

namespace cellar::cluster {

struct catalog_read {
  cluster_catalog catalog;
  std::int32_t znode_version = -1;  // of /catalog, for compare-and-set; -1: no catalog yet
};

// The catalog (empty, version 0, when none was written). `previous` (may be null): tables
// at the same version are taken from it instead of ZooKeeper. `watch` is set on /catalog.
result<catalog_read> read_catalog(zk_client& zk, const cluster_catalog* previous, watch_fn watch = {});

struct placement_read {
  placement_map map;
  std::int32_t znode_version = -1;  // of /placement; -1: no map yet
};

result<placement_read> read_placement(zk_client& zk, watch_fn watch = {});

// The ops that turn catalog `before` (read at znode version `v`) into `after`: the header
// with compare-and-set, and the one changed table's entry.
std::vector<zk_op> catalog_ops(const catalog_read& before, const cluster_catalog& after, const std::string& table);
// The op that writes `after` over the map read as `before` (compare-and-set).
zk_op placement_op(const placement_read& before, const placement_map& after);

// The table's znode: /catalog/tables/t_<name> (the prefix keeps "." and ".." valid).
std::string table_path(const std::string& table);

}  // namespace cellar::cluster
