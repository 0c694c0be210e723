#include "cluster/replica_sweep.h"

#include <string>

#include "cluster/layout.h"
#include "cluster/zk_state.h"

namespace cellar::cluster {

status sweep_view_current(zk_client& zk, const cluster_catalog& applied, std::uint64_t epoch) {
  for (const char* path : {layout::catalog, layout::placement})
    if (auto st = zk.sync(path); !st) return st;
  auto cat = read_catalog(zk, &applied);
  if (!cat) return cat.error();
  if (cat->catalog.version != applied.version)
    return {code::conflict, "ZooKeeper holds catalog version " + std::to_string(cat->catalog.version) +
                                ", this node applied " + std::to_string(applied.version)};
  auto pl = read_placement(zk);
  if (!pl) return pl.error();
  if (pl->map.epoch != epoch)
    return {code::conflict, "ZooKeeper holds placement epoch " + std::to_string(pl->map.epoch) +
                                ", this node applied " + std::to_string(epoch)};
  return status::ok();
}

}  // namespace cellar::cluster
