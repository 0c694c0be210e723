// store/snapshot_cluster.h: what a cluster member's store hands to the cluster for its
// named snapshots (store/named_snapshots.cc; docs/backup.md, "In a cluster").
//
// On a single store the snapshots live in its own snapshot_repo and its partitions are
// all local. On a cluster member a snapshot covers partitions on every node, and every
// node answers for the same set of snapshots, so the store asks the cluster
// (cluster/snapshot_service.h) for the partition copies, the snapshot's safekeeping and
// listing, and for loading cells into the partitions of a restored or cloned table;
// everything else (the manifest, the checks, the DDL of a restore) stays the store's.
//
// Thread safety: every call may be made from any thread but a CAF worker (they block).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"
#include "persist/delta_map.h"
#include "persist/loaded_cells.h"
#include "store/snapshot_files.h"

namespace cellar::detail {

// What snapshot_cluster::put gives the maker of a snapshot to hand its files to the nodes
// keeping it. A node that fails a step is left out of the rest; a call fails UNAVAILABLE
// once fewer than two nodes (the only node, with one) keep every file so far.
class snapshot_keeper {
 public:
  virtual ~snapshot_keeper() = default;
  // Hands file `file` to every node keeping the snapshot, in pieces of a few MiB.
  virtual status keep(const std::string& file, std::string_view data) = 0;
  // Each partition of table `table` (`partitions` of them) as it was at one instant, as
  // the cell file of its cells of `families`, kept as part_file_name(p): the instant
  // between two of its requests (a single-copy partition, copied at its owner) or between
  // two of its log entries (a replicated one, copied at its leader after a read barrier).
  // The node holding the partition encodes and stages its file, and the other keeping
  // nodes fetch it from there in pieces, so no node holds more than the few files being
  // made. `kept(p, f)` gets each file's size, cells and CRC as it is kept, on the calling
  // thread, one at a time and in no set order. CONFLICT while a move of a partition runs;
  // the first error of a copy or of `kept`.
  virtual status copy_partitions(
      const std::string& table, std::uint32_t partitions, const std::set<std::uint32_t>& families,
      const std::function<status(std::uint32_t p, const snapshot_manifest::file& f)>& kept) = 0;
};

class snapshot_cluster {
 public:
  virtual ~snapshot_cluster() = default;

  // Keeps snapshot `name`: its files on every live node, its manifest in ZooKeeper (the
  // snapshot exists from then on). `make` hands the files over through the keeper it is
  // given and returns the manifest. The name is claimed before `make` runs. ALREADY_EXISTS
  // if the name is taken or being written; when `make` or the keeping fails (UNAVAILABLE
  // when fewer than two nodes, or the only one, kept every file) nothing is left.
  virtual status put(const std::string& name,
                     const std::function<result<snapshot_manifest>(snapshot_keeper&)>& make) = 0;
  virtual result<std::vector<snapshot_manifest>> list() = 0;
  // NOT_FOUND naming the snapshot when there is none of that name.
  virtual result<snapshot_manifest> manifest(const std::string& name) = 0;
  virtual status remove(const std::string& name) = 0;
  // File `file` of snapshot `m`, checked against `m` (size and CRC): this node's copy
  // (mapped, when the store has a directory), or another node's when this one has none or a
  // damaged one. CORRUPTION when no node holds an intact copy of it.
  virtual result<file_bytes> file(const snapshot_manifest& m, const std::string& file) = 0;
  // Where the part files of a load come from, and how their family ids map to the table's.
  struct load_source {
    const snapshot_manifest* m = nullptr;  // the files' manifest (a snapshot's, or a bulk load's)
    loaded_cells::id_map ids;
    // Empty: the files are those of snapshot `*m`, kept by the nodes holding it. Else the
    // files themselves, mapped and checked on this node (a bulk load's), by file name.
    std::map<std::string, file_bytes> files;
  };
  // Writes the cells of each part file part_file_name(p) of `from` over partition p of
  // table `table`, for every p below `partitions`, one partition at a time: the node of its
  // owner (or of its Raft group's leader) reads the file and loads it there, so no part's
  // cells are built or sent whole from here. A single-copy partition takes it in one step;
  // a replicated one through its group's log (every replica applies it). That node reads
  // its own copy of a snapshot's file when it holds an intact one, else fetches one from a
  // node that does; a bulk load's files it fetches from this node. Files move in pieces of
  // a few MiB, each file checked against the manifest's size and CRC. Made durable before
  // it returns. CORRUPTION when no node holds an intact copy of a snapshot's file; the
  // first error of a partition stops it.
  virtual status load(const std::string& table, std::uint32_t partitions, const load_source& from) = 0;
};

}  // namespace cellar::detail
