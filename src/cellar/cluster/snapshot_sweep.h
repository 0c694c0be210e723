// cluster/snapshot_sweep.h: the records of deleted named snapshots in a cluster, and the
// sweep by which a node removes its copies of them (docs/backup.md, "In a cluster").
//
// A snapshot deleted (or whose write failed) while a node holding its files cannot be told
// leaves a tombstone, /snapshot_deleted/s_<name>, with one entry per deleted incarnation of
// the name: its manifest and the nodes that may still hold a copy of it ("pending"). The
// node that deletes names every node that may hold a copy (the snapshot's holders and every
// live node), asks the live ones to drop their files, then takes out of the entry each node
// that did. A node's sweep (sweep_snapshot_copies, run when it joins and when its ZooKeeper
// session is established anew) removes its copies that match an entry and takes itself out
// of every entry that names it. An entry no node is pending on goes, and the tombstone with
// its last entry. A node dead for longer than the dead-node timeout counts as swept (the
// master takes it out: forget_in_tombstones), as its replicas count as lost then: should it
// return, a copy it still holds is one the cluster has no record of, and is kept.
//
// Thread safety: plain functions over a tombstone_zk, which they use from the caller's
// thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"
#include "cluster/zk_client.h"
#include "store/snapshot_files.h"

namespace cellar::cluster {

// The ZooKeeper calls the tombstones and the sweep make (zk_client's, zk_client.h): a node
// gives its session (tombstone_zk_of); a test may give a server of its own.
class tombstone_zk {
 public:
  virtual ~tombstone_zk() = default;
  virtual status sync(const std::string& path) = 0;
  virtual status ensure_path(const std::string& path) = 0;
  virtual result<std::vector<std::string>> children(const std::string& path) = 0;
  virtual result<znode> get(const std::string& path) = 0;
  virtual result<std::optional<znode_stat>> exists(const std::string& path) = 0;
  virtual result<std::string> create(const std::string& path, std::string_view data) = 0;
  virtual result<znode_stat> set(const std::string& path, std::string_view data, std::int32_t version) = 0;
  virtual status remove(const std::string& path, std::int32_t version) = 0;
};

// The calls on `zk`, which must outlive the result.
std::unique_ptr<tombstone_zk> tombstone_zk_of(zk_client& zk);

// One deleted incarnation of a snapshot name.
struct tombstone_entry {
  std::vector<std::string> pending;  // nodes that may still hold a copy, sorted
  detail::snapshot_manifest m;
};

// A tombstone's data: per entry "pending N1 N2 ...\n", "manifest BYTES\n", then the
// manifest (encode_manifest). decode: CORRUPTION for anything else.
std::string encode_tombstone(const std::vector<tombstone_entry>& entries);
result<std::vector<tombstone_entry>> decode_tombstone(std::string_view data);

// The tombstone of snapshot `name`.
std::string tombstone_znode(const std::string& name);

// Records that snapshot `m` is gone and that the nodes of `pending` may still hold a copy:
// the tombstone of its name gets an entry for `m` (replacing one for the same manifest).
// With `pending` empty no entry is left for `m`.
status mark_deleted(tombstone_zk& zk, const detail::snapshot_manifest& m, const std::set<std::string>& pending);

// Takes the nodes of `swept` out of the entry for manifest `m` in the tombstone of its name
// (they hold no copy of it any more); the entry goes once no node is pending on it, and the
// tombstone with its last entry. OK when there is no such entry.
status mark_swept(tombstone_zk& zk, const detail::snapshot_manifest& m, const std::set<std::string>& swept);

// Node `self`'s sweep of its repository `repo`. After a ZooKeeper sync (the server this
// session reads may lag: the sweep judges by the names and tombstones ZooKeeper holds
// then), removes every copy the repository holds of a snapshot that a tombstone records as
// gone, unless a /snapshots znode names it or a /snapshot_writes claim is writing it; a copy
// the cluster has no record of is kept. Then takes `self` out of every entry naming it
// whose copy it no longer holds. Reads in this order: the copies, the claims, the
// snapshots, the tombstones (a write under way when the copies were read still holds its
// claim when the claims are read, or has made its znode by then). The first error stops
// it (nothing more removed).
status sweep_snapshot_copies(tombstone_zk& zk, detail::snapshot_repo& repo, const std::string& self);

// Takes every node of `gone` out of every tombstone (nodes no longer in the cluster count as
// swept); returns how many tombstones it changed.
result<std::uint32_t> forget_in_tombstones(tombstone_zk& zk, const std::set<std::string>& gone);

// Every node named pending in some tombstone.
result<std::set<std::string>> pending_in_tombstones(tombstone_zk& zk);

}  // namespace cellar::cluster
