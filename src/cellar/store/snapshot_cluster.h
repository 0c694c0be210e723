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

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cellar/status.h"
#include "persist/delta_map.h"
#include "store/snapshot_files.h"

namespace cellar::detail {

class snapshot_cluster {
 public:
  virtual ~snapshot_cluster() = default;

  // Each partition of table `table` (incarnation `uid`, `partitions` of them) as it was at
  // one instant: the instant between two of its requests (a single-copy partition, copied
  // at its owner) or between two of its log entries (a replicated one, copied at its
  // leader after a read barrier). CONFLICT while a move of a partition runs.
  virtual result<std::vector<std::shared_ptr<delta_map>>> copy_partitions(const std::string& table,
                                                                          std::uint32_t partitions) = 0;
  // Keeps snapshot `m`: its files on every live node, its manifest in ZooKeeper (the
  // snapshot exists from then on). ALREADY_EXISTS if the name is taken or being written.
  virtual status put(const snapshot_manifest& m, const std::map<std::string, std::string>& files) = 0;
  virtual result<std::vector<snapshot_manifest>> list() = 0;
  // NOT_FOUND naming the snapshot when there is none of that name.
  virtual result<snapshot_manifest> manifest(const std::string& name) = 0;
  virtual status remove(const std::string& name) = 0;
  // Every file of snapshot `m`, each checked against `m` (size and CRC): from this node's
  // copy, or from another node's when this one has none or a damaged one. CORRUPTION when
  // no node holds an intact copy of a file.
  virtual result<std::map<std::string, std::string>> files(const snapshot_manifest& m) = 0;
  // Writes `parts[p]` (cells keyed with the table's family ids) over partition p of table
  // `table`, for every p: through its owner, or through the Raft group of a replicated
  // partition (every replica applies it). Made durable before it returns.
  virtual status load(const std::string& table, const std::vector<std::shared_ptr<const delta_map>>& parts) = 0;
};

}  // namespace cellar::detail
