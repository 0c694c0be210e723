// store/access.h: what the layers above the store may reach of a store of this process.
//
// The RPC server and the scanner reach its data path (store/data_path.h); a cluster
// member reaches its cluster seat below: the parts it needs to run this store as one of
// the cluster's nodes. Nothing else of a store's inside is reachable from outside it.
//
// Thread safety: as the parts themselves; the references stay valid while the store is
// open.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <functional>
#include <memory>

#include "cellar/store.h"
#include "store/scheduler_tuning.h"

namespace cellar::detail {

class catalog_service;
class cluster_state;
class data_path;
class partition_factory;
class snapshot_repo;
class store_persistence;
struct store_impl;

// What a cluster member (cluster/member.h) runs its node's store with.
class cluster_seat {
 public:
  virtual ~cluster_seat() = default;
  virtual caf::actor_system& system() = 0;
  virtual catalog_service& catalog() = 0;
  virtual const partition_factory& partitions() = 0;
  virtual cluster_state& cluster() = 0;
  // Null for a memory-only store.
  virtual store_persistence* persistence() = 0;
  // store::snapshot.
  virtual result<snapshot_stats> snapshot() = 0;
  // The store's named snapshots (store/snapshot_files.h).
  virtual snapshot_repo& snapshots() = 0;
  // store_options::split_check_interval (0: no size-driven splits).
  virtual std::chrono::milliseconds split_check_interval() = 0;
};

struct store_access {
  static data_path& data(store& s);
  // Every store has a seat; only one opened by open_cluster_store is a member
  // (cluster().member()).
  static cluster_seat& seat(store& s);
  // store::open for a store that will be a cluster member: `configure` adjusts CAF's
  // configuration before the actor system starts; no partition starts at recovery.
  static result<std::unique_ptr<store>> open_cluster_store(
      store_options options, const scheduler_tuning& tuning,
      const std::function<void(caf::actor_system_config&)>& configure);
  // The public handle of an opened store.
  static std::unique_ptr<store> make(std::shared_ptr<store_impl> impl);
};

}  // namespace cellar::detail
