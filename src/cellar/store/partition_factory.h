// store/partition_factory.h: starts the partition actors of this process.
//
// Every partition a store runs (created by DDL, recovered at open, or placed on this node
// by its cluster) is started here, with what it needs from the store: the clock, the
// memory pool, its stream in the redo log and whether it keeps the changes a snapshot
// writes (partition/partition.h: partition_config).
//
// Thread safety: start() may be called from any thread.
#pragma once

#include <caf/all.hpp>

#include <memory>

#include "cellar/store.h"
#include "dispatch/dispatch.h"
#include "partition/memory_budget.h"

namespace cellar::detail {

class memtable;
class store_persistence;

class partition_factory {
 public:
  // `persistence` is null for a memory-only store; all must outlive the factory.
  partition_factory(caf::actor_system& system, const store_options& options, memory_pool& memory,
                    const store_persistence* persistence)
      : system_(system), options_(options), memory_(memory), persistence_(persistence) {}

  // Starts partition `index` of `schema`, on `recovered` cells if given (else empty).
  partition_ref start(const schema_ptr& schema, std::uint32_t index,
                      std::shared_ptr<std::unique_ptr<memtable>> recovered) const;

  // What start() gives partition `index` of `schema` except a log and recovered cells: the
  // configuration a replica of it starts with (replica/replicated_partition.h).
  partition_config replica_config(const schema_ptr& schema, std::uint32_t index) const;

  caf::actor_system& system() const { return system_; }
  const store_options& options() const { return options_; }
  // The pool partitions' cells are counted in.
  memory_pool& memory() const { return memory_; }

 private:
  caf::actor_system& system_;
  const store_options& options_;
  memory_pool& memory_;
  const store_persistence* persistence_;
};

}  // namespace cellar::detail
