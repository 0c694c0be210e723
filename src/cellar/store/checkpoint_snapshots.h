// store/checkpoint_snapshots.h: the named snapshots of a single store with a directory,
// kept as WiredTiger checkpoints of the table's partition tables rather than as copies of
// its cells (docs/backup.md, "Where a snapshot's cells are kept").
//
// Taking one is a persistence snapshot (the partitions cut, their changes written) and a
// named checkpoint of the table's tables, which shares every page with the live tables
// until they rewrite it: no cell is copied, and the snapshot's own files are a manifest and
// the schema. Reading one (restore, clone, export) writes its part files from the
// checkpoint, a partition at a time; from there it is read as a snapshot of files is.
// The tables of a table dropped or split after its snapshot stay until no snapshot holds
// them (store_persistence::keep_tables_when).
//
// Thread safety: as store.h's calls, from any thread.
#pragma once

#include <cstdint>
#include <string>

#include "cellar/status.h"
#include "store/snapshot_files.h"

namespace cellar::detail {

struct store_impl;

// Takes snapshot `name` of `table` (a store with a directory, not a cluster member).
// Errors: ALREADY_EXISTS, TABLE_NOT_FOUND, INVALID_ARGUMENT (a table with no family yet),
// and those of store::snapshot().
status take_checkpoint_snapshot(store_impl& s, const std::string& table, const std::string& name);
// Writes checkpoint snapshot `m`'s schema and part files into directory `dir` (which
// exists), synced, and returns the manifest of those files: what a snapshot of files
// holds. The manifest itself is not written. CORRUPTION when the checkpoint is gone.
result<snapshot_manifest> write_checkpoint_files(store_impl& s, const snapshot_manifest& m, const std::string& dir);
// Deletes checkpoint snapshot `m`: its checkpoint, its files, and the tables of its table
// when that table was dropped or split since and no other snapshot holds them. CONFLICT
// while the snapshot is being read.
status delete_checkpoint_snapshot(store_impl& s, const snapshot_manifest& m);
// Whether a snapshot of `repo` is a checkpoint of tables of table `uid`. True when the
// repo cannot be read, so that no table is dropped on a guess.
bool holds_tables(const snapshot_repo& repo, std::uint64_t uid);
// Whether the partition tables of table incarnation `uid` are named: by a table of the
// catalog now, or by a checkpoint snapshot (holds_tables).
bool tables_in_use(store_impl& s, std::uint64_t uid);

}  // namespace cellar::detail
