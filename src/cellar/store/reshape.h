// store/reshape.h: splitting and merging the partitions of a RANGE-partitioned table
// (store.h: split_region, split_partition, split_table, merge_regions), in one process.
//
// A reshape gives the table a new partition rule (its bounds with one added or removed, or
// with a middle row added in each partition split_table splits) and new partitions, as one
// catalog change:
//   1. every partition of the table is frozen (move_request freeze: it runs no write
//      from here on, and holds writes in order) and its cells copied (chunks);
//   2. the cells are dealt to new partitions by the new bounds, under a new table uid
//      (partitions are stored by position, and positions after the split point move);
//      with a directory, each new partition's cells are written and checkpointed, then
//      the catalog entry names the new uid: a crash before that finds the old table whole,
//      after it the new one;
//   3. the new runtime is published, and each old partition hands what it held, and
//      every request that still reaches it through a runtime loaded before, to a
//      forwarder that runs it on the new partitions covering the old one's key range.
// So no write is lost or applied twice, and a reader sees each cell once: a scan opened
// before keeps paging the old partitions, whose pages now come from the new ones, clipped
// to the old key ranges. A batch that reached an old partition and falls on both sides
// of a new bound runs as two parts (atomic per new partition).
//
// Thread safety: called with the catalog's mutex held (catalog_service).
#pragma once

#include <caf/all.hpp>

#include <optional>
#include <string>

#include "cellar/status.h"
#include "dispatch/dispatch.h"

namespace cellar::detail {

// The actor an old partition with key range [lo, hi) (empty: unbounded) hands its
// requests to once `next` has replaced its table's runtime.
partition_actor spawn_reshape_forwarder(caf::actor_system& sys, runtime_ptr next, std::string lo, std::string hi);

// The middle row of partition `p` (the row half of its rows sort before), or none when it
// holds fewer than two rows; the union of every family's rows. A single partition is read
// in chunks while it keeps serving; a replicated one (`replicated`, replica/
// replicated_partition.h) answers its cells whole after a read barrier, and NOT_LEADER
// unless it leads its group. Blocks until answered: not for a CAF worker.
result<std::optional<std::string>> middle_row_of(caf::actor_system& sys, const partition_actor& p, bool replicated);

// The key range [lo, hi) of RANGE partition `i` under `bounds` (empty: unbounded).
std::pair<std::string, std::string> range_of(const std::vector<std::string>& bounds, std::uint32_t i);

}  // namespace cellar::detail
