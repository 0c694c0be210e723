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
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"
#include "persist/delta_map.h"
#include "store/snapshot_files.h"

namespace cellar::detail {

class snapshot_cluster {
 public:
  virtual ~snapshot_cluster() = default;

  // A partition's copy: its cell file (snapshot_files.h) and the cells it holds.
  struct partition_file {
    std::string data;
    std::uint64_t cells = 0;
  };
  // Takes the copy of one partition (see copy_partitions); an error stops the copying.
  using take_copy_fn = std::function<status(std::uint32_t partition, partition_file file)>;
  // Each partition of table `table` (`partitions` of them) as it was at one instant, as the
  // cell file of its cells of `families`: the instant between two of its requests (a
  // single-copy partition, copied and encoded at its owner) or between two of its log
  // entries (a replicated one, copied at its leader after a read barrier). Each file goes
  // to `take` as soon as it is made, on the calling thread, one at a time and in no set
  // order, so only the few being made are held at once. CONFLICT while a move of a
  // partition runs; the first error of a copy or of `take`.
  virtual status copy_partitions(const std::string& table, std::uint32_t partitions,
                                 const std::set<std::uint32_t>& families, const take_copy_fn& take) = 0;

  // Hands one file of a snapshot being kept to the nodes keeping it.
  using keep_file_fn = std::function<status(const std::string& file, std::string_view data)>;
  // Keeps snapshot `name`, whose files `make` hands over one at a time through the function
  // it is given (each file goes to every live node as it comes, so none is held longer),
  // and whose manifest `make` returns: its files on every live node, its manifest in
  // ZooKeeper (the snapshot exists from then on). The name is claimed before `make` runs.
  // ALREADY_EXISTS if the name is taken or being written; when `make` or the keeping fails
  // (UNAVAILABLE when fewer than two nodes, or the only one, took a file) nothing is left.
  virtual status put(const std::string& name,
                     const std::function<result<snapshot_manifest>(const keep_file_fn& keep)>& make) = 0;
  virtual result<std::vector<snapshot_manifest>> list() = 0;
  // NOT_FOUND naming the snapshot when there is none of that name.
  virtual result<snapshot_manifest> manifest(const std::string& name) = 0;
  virtual status remove(const std::string& name) = 0;
  // File `file` of snapshot `m`, checked against `m` (size and CRC): this node's copy
  // (mapped, when the store has a directory), or another node's when this one has none or a
  // damaged one. CORRUPTION when no node holds an intact copy of it.
  virtual result<file_bytes> file(const snapshot_manifest& m, const std::string& file) = 0;
  // Gives the part of partition p (cells keyed with the table's family ids) to build as
  // `part(p)`, for p below `partitions`.
  using part_fn = std::function<result<std::shared_ptr<delta_map>>(std::uint32_t p)>;
  // Writes part(p) over partition p of table `table`, for every p, one partition at a time
  // (part(p) is built when that partition's turn comes and dropped after it): through its
  // owner, or through the Raft group of a replicated partition (every replica applies it).
  // Made durable before it returns. The first error of `part` or of a partition stops it.
  virtual status load(const std::string& table, std::uint32_t partitions, const part_fn& part) = 0;
};

}  // namespace cellar::detail
