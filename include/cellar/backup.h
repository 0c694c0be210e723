// cellar/backup.h: named snapshots, their portable files, and bulk loads.
//
// A named snapshot is one table as it was at one instant per partition: for every
// partition, the cells it held between two of its requests, so a batch's actions in a
// partition are all in the snapshot or none of them are. It is taken while writes go on,
// kept under its name until deleted (also past a drop of its table), and survives a
// restart and a crash once store::snapshot(table, name) has returned. A store with a
// directory keeps it as a WiredTiger checkpoint of the table's own files, copying no
// cell; a memory-only store copies the cells and keeps the copy in memory until it
// closes; a cluster copies them into files on its nodes. docs/backup.md says what each
// costs.
//
//   s->snapshot("t", "t-monday");             // HBase: snapshot 't', 't-monday'
//   s->disable_table("t");
//   s->restore_snapshot("t-monday");          // t's cells and schema as they were
//   s->enable_table("t");
//   s->clone_snapshot("t-monday", "t_copy");  // a new, independent table
//
// Files. store::export_snapshot writes a snapshot as a directory: `manifest` (text: the
// format, the name, the table, its families by id, and each file's size, cell count and
// CRC-32C), `schema` (the table's schema, as the catalog stores it: docs/storage.md) and
// one `part-NNNNN.cells` per partition, its cells in key order. A store keeps its own in
// DIR/snapshots/NAME/ (only the manifest and schema for one kept as a checkpoint). A bulk load's input
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
