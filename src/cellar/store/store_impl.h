// store/store_impl.h: what a store is inside (private to the store's own files:
// src/cellar/store.cc and the files of src/cellar/store/).
//
// A store is a few parts with narrow interfaces, built in this order and closed in the
// reverse:
//   - the actor system its partitions run on, and the memory pool they draw from;
//   - cluster_state: whether it is a cluster member, and the member's hooks;
//   - store_persistence (a store with a directory): the WiredTiger home, the redo log,
//     recovery and snapshots;
//   - partition_factory: starts partition actors with what they need;
//   - catalog_service: the catalog and the one path that changes it;
//   - data_path: the checks of every data call and its hand-off to the dispatcher.
// The layers above reach the data path (rpc, the scanner) and, for a cluster member, the
// cluster seat, through store/access.h; nothing else of this struct.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <caf/all.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "cellar/store.h"
#include "partition/memory_budget.h"
#include "store/access.h"
#include "store/catalog_service.h"
#include "store/cluster_state.h"
#include "store/data_path.h"
#include "store/partition_factory.h"
#include "store/persistence.h"
#include "store/scheduler_tuning.h"
#include "store/snapshot_files.h"

namespace cellar::detail {

struct store_impl {
  // `tuning`: how idle CAF workers wait (store/scheduler_tuning.h). `configure` (may be empty)
  // adjusts the actor system's configuration before the system starts (a cluster member
  // loads CAF's middleman there). A `cluster_member` store starts no partition at
  // recovery: its cluster (cluster/member.h) says which to start.
  static result<std::unique_ptr<store>> open(store_options o, const scheduler_tuning& tuning,
                                             const std::function<void(caf::actor_system_config&)>& configure,
                                             bool cluster_member);
  store_impl(store_options o, const scheduler_tuning& tuning,
             const std::function<void(caf::actor_system_config&)>& configure, bool cluster_member);
  ~store_impl();
  status close();
  result<snapshot_stats> snapshot();

  store_options options;
  memory_pool memory;
  std::unique_ptr<caf::actor_system_config> caf_config;
  std::unique_ptr<caf::actor_system> system;
  cluster_state cluster;
  std::unique_ptr<store_persistence> persistence;  // null: memory only
  std::unique_ptr<partition_factory> partitions;
  std::unique_ptr<catalog_service> catalog;
  std::unique_ptr<data_path> data;
  std::unique_ptr<cluster_seat> seat;
  std::unique_ptr<snapshot_repo> snapshots;  // the named snapshots (cellar/backup.h)
  bool opened = false;                       // recovery finished: a close may snapshot
  // The size-driven split check (store_options::split_check_interval), until close().
  void run_split_checks();
  absl::Mutex split_mu;
  bool split_stop ABSL_GUARDED_BY(split_mu) = false;
  std::thread splitter;
  std::atomic<bool> closed{false};
};

}  // namespace cellar::detail
