// cellar/durability.h: what a crash can lose (docs/operations.md, "Durability").
//
// A plain value: the store's mode (store_options::durability, cellar/store.h) and the most
// a table's DURABILITY attribute may ask for (catalog/hbase_options.h) are both this enum.
//
// Thread safety: a plain value.
#pragma once

#include <cstdint>

namespace cellar {

enum class durability : std::uint8_t {
  // Writes are acknowledged from memory; a crash loses what was acknowledged after the
  // last completed snapshot, never part of a row mutation or of a partition's batch.
  snapshot,
  // A write is acknowledged once its log record is written to the log file (handed to
  // the OS; one write for every record waiting), and the file is synced every
  // `log_sync_interval`: a process crash loses no acknowledged write; a machine crash at
  // most the last interval.
  log,
  // Group commit: a write is acknowledged only once its log record is on disk.
  log_sync,
};

}  // namespace cellar
