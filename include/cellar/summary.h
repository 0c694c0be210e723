// cellar/summary.h: one picture of a store for the people watching it.
//
// A `store_summary` is what cellar-server's status page shows (`--metrics-listen`, path
// `/`) and what `connection::summary()` returns, embedded or over RPC: the store-wide
// figures (memory, durability, last snapshot, log) and, per table group, its partitioning,
// families, cells and bytes.
//
// Thread safety: plain values; summarize() is as thread-safe as `store`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cellar/schema.h"
#include "cellar/status.h"
#include "cellar/store.h"

namespace cellar {

struct table_summary {
  table_descriptor descriptor;  // name, partitioning, families
  table_stats stats;            // cells and bytes, in all and per partition
};

struct store_summary {
  std::string version;  // cellar's version, "0.1.0"
  store_info store;
  std::vector<table_summary> tables;  // by name
  // Client connections the server has open now; -1 for an embedded store.
  std::int64_t connections = -1;
};

// Describes every table group of `s` and asks each partition for its counts (waits for
// the partitions, as store::stats does). A table dropped meanwhile is left out.
result<store_summary> summarize(store& s);

}  // namespace cellar
