// store_impl.h: what a store is inside (private to the library).
//
// The catalog is a map from table name to an immutable `table_runtime` (schema plus the
// partition actors), published as a whole through an atomic shared_ptr: client threads
// read it without locks; DDL calls serialise on `ddl_mutex`, build a new map and swap it.
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/store.h"
#include "partition/partition_actor.h"

namespace cellar::detail {

struct table_runtime {
  schema_ptr schema;
  std::vector<partition_actor> partitions;  // empty until the group's partitioning is fixed
};

using runtime_ptr = std::shared_ptr<const table_runtime>;
using catalog_map = std::map<std::string, runtime_ptr, std::less<>>;

struct store_impl {
  explicit store_impl(store_options o);
  ~store_impl();

  runtime_ptr lookup(std::string_view table) const;
  std::int64_t now() const { return options.clock(); }

  store_options options;
  std::atomic<std::int64_t> bytes{0};
  std::unique_ptr<caf::actor_system_config> caf_config;
  std::unique_ptr<caf::actor_system> system;

  std::mutex ddl_mutex;
  std::atomic<std::shared_ptr<const catalog_map>> catalog;
  std::uint64_t next_version = 1;   // guarded by ddl_mutex
  std::uint32_t next_family_id = 1; // guarded by ddl_mutex
};

}  // namespace cellar::detail
