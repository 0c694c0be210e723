// store/catalog_map.h: the catalog as the data path reads it: table name -> runtime
// (dispatch/dispatch.h: the schema and the partitions), an immutable map published whole.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "dispatch/dispatch.h"

namespace cellar::detail {

using catalog_map = std::map<std::string, runtime_ptr, std::less<>>;

// One caller's last table lookup (catalog_service::lookup), reused while the catalog is
// unchanged: an event loop serving a read's worth of requests to one table skips the
// catalog's atomic load, its map search and the reference counting of both. What it holds
// keeps that table's runtime, and so its partitions, alive: clear() it when the caller
// goes idle. Not thread-safe: one per caller thread.
struct table_lookup_cache {
  static constexpr std::uint64_t none = ~std::uint64_t{0};
  std::uint64_t version = none;
  std::string name;
  runtime_ptr rt;  // nullptr with a version: no such table
  void clear() {
    version = none;
    rt.reset();
  }
};

}  // namespace cellar::detail
