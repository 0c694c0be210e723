// cellar/backup.h: named snapshots, their portable files, and bulk loads.
//
// A named snapshot is a copy of one table as it was at one instant per partition: for
// every partition, the cells it held between two of its requests, so a batch's actions
// in a partition are all in the snapshot or none of them are. It is taken while writes
// go on (no partition stops for more than the copy of one chunk of its cells), kept
// under its name until deleted, and survives a restart and a crash once
// store::snapshot(table, name) has returned (a memory-only store keeps its named
// snapshots in memory, until it closes). docs/backup.md says why a snapshot is a copy
// and what it costs.
//
//   s->snapshot("t", "t-monday");             // HBase: snapshot 't', 't-monday'
//   s->disable_table("t");
//   s->restore_snapshot("t-monday");          // t's cells and schema as they were
//   s->enable_table("t");
//   s->clone_snapshot("t-monday", "t_copy");  // a new, independent table
//
// Files. A snapshot is a directory (the store keeps its own in DIR/snapshots/NAME/;
// store::export_snapshot writes one anywhere): `manifest` (text: the format, the name,
// the table, its families by id, and each file's size, cell count and CRC-32C),
// `schema` (the table's schema, as the catalog stores it: docs/storage.md) and one
// `part-NNNNN.cells` per partition, its cells in key order. A bulk load's input
// (store::bulk_load) is the same directory without a schema. docs/backup.md specifies
// the bytes.
//
// Thread safety: every call may be made from any thread, as the store's calls; calls on
// one snapshot name serialise (a second snapshot under a name that is being written
// fails with ALREADY_EXISTS).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cellar {

// One named snapshot, as listed.
struct snapshot_info {
  std::string name;
  std::string table;  // the table it was taken of
  std::int64_t created_unix_ms = 0;
  std::uint32_t partitions = 0;
  std::uint64_t cells = 0;  // cells copied
  std::uint64_t bytes = 0;  // bytes of its files
};

// What a bulk load attached.
struct bulk_load_stats {
  std::uint32_t partitions = 0;  // partitions that received cells
  std::uint64_t cells = 0;
  std::uint64_t bytes = 0;  // bytes of the files read
};

}  // namespace cellar
