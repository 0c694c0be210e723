// store/cluster_state.h: what a store that is a cluster member shares with its member
// (cluster/member.h), and what the member does for it.
//
// A cluster member's store does not apply DDL itself: it hands each DDL call to the
// member as a `ddl_call` (cluster_hooks::ddl), and the member applies the cluster's
// catalog to every node's store through the catalog service (store/catalog_service.h).
// The data path reads the flags here on every call: whether the node has joined, and
// whether it refuses writes while its ZooKeeper session is gone.
//
// Thread safety: every member of cluster_state may be read and written from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/cluster_admin.h"
#include "cellar/schema.h"
#include "cellar/status.h"
#include "store/reshape_plan.h"

namespace cellar::detail {

class snapshot_cluster;

// One DDL call of store.h, as a value: in a cluster the store hands it to the cluster
// (cluster/member.h) instead of applying it; the cluster applies it to every node's store.
struct ddl_call {
  enum class kind : std::uint8_t {
    create_table,
    create_table_group,
    add_family,
    alter_family,
    drop_family,
    drop_table,
    truncate_table,
    disable_table,
    enable_table,
    truncate_family,
    alter_table,
    create_namespace,
    drop_namespace,
    alter_namespace,  // `ns` (alter: set/unset_attributes)
  };
  kind what = kind::create_table;
  std::string table;
  table_descriptor descriptor;
  schema_origin origin = schema_origin::oceanbase_ddl;
  family_descriptor family;
  partition_spec partitioning;
  std::string family_name;
  std::map<std::string, std::string> set_attributes;  // alter_table
  std::vector<std::string> unset_attributes;          // alter_table, alter_namespace
  namespace_descriptor ns;                            // the namespace calls (name, properties)
};

// What a store that is a cluster member delegates to the cluster.
struct cluster_hooks {
  virtual ~cluster_hooks() = default;
  // Runs `c` through the cluster; returns once this node's store has applied it.
  virtual status ddl(const ddl_call& c) = 0;
  // The nodes, their partitions and the master, as text (store_info::cluster).
  virtual std::string report() const = 0;
  // Every node the cluster knows, live or down (cluster_admin::status).
  virtual std::vector<cluster_node> nodes() const { return {}; }
  // The node that owns partition `index` of `table` in the placement map; empty if none.
  virtual std::string owner_of(const std::string& /*table*/, std::uint32_t /*index*/) const { return {}; }
  // NOT_OWNER for a request of a client that asked not to be forwarded (wire: noForward),
  // for partition `index` of `table`, which another node owns; the message names this
  // node's placement epoch and the owner it knows. Counted for `status 'detailed'`.
  virtual status not_owner(const std::string& table, std::uint32_t index) {
    return {code::not_owner, "this node does not own partition " + std::to_string(index) + " of '" + table + "'"};
  }
  // Moves a partition ("table/index") to a node with its data (cluster/mover.h).
  virtual status move(const std::string& partition, const std::string& node) = 0;
  // Moves the replica on node `from` of a partition to node `to` (cluster/replica_mover.h).
  virtual status move_replica(const std::string& /*partition*/, const std::string& /*from*/,
                              const std::string& /*to*/) {
    return {code::unavailable, "this node has not joined its cluster yet"};
  }
  // Makes `node` a replicated partition's preferred leader (cluster/replica_mover.h).
  virtual status transfer_leader(const std::string& /*partition*/, const std::string& /*node*/) {
    return {code::unavailable, "this node has not joined its cluster yet"};
  }
  // A split or merge of a RANGE table's partitions (store/reshape_plan.h), run through the
  // cluster (cluster/reshaper.h); returns how many partitions were split.
  virtual result<std::uint32_t> reshape(const reshape_call& /*c*/) {
    return status{code::unavailable, "this node has not joined its cluster yet"};
  }
  // The cells and bytes of partition `index` of `table`, asked of the node that holds it
  // (any replica of a replicated one), for list_regions.
  virtual result<std::pair<std::uint64_t, std::uint64_t>> partition_stats(const std::string& /*table*/,
                                                                          std::uint32_t /*index*/) {
    return status{code::unavailable, "this node has not joined its cluster yet"};
  }
  // Runs the balancer's moves; returns how many ran.
  virtual result<std::uint32_t> balance() = 0;
  // A request named a table this node does not know: waits, bounded, until this node has
  // applied the catalog the cluster has now (another node's DDL reaches this one a moment
  // later). True once it has (look again); false when it could not tell or did not catch
  // up in time. Blocks: not on a CAF worker.
  virtual bool catch_up() { return false; }
  // The cluster's side of the store's named snapshots (store/snapshot_cluster.h); null
  // until the node has joined.
  virtual snapshot_cluster* snapshots() { return nullptr; }
};

class cluster_state {
 public:
  explicit cluster_state(bool member) : member_(member) {}

  // Whether the store was opened to be a cluster member (member::open_store).
  bool member() const { return member_; }

  // The member's hooks: set when the store opens (hooks that refuse, until the node has
  // joined), replaced at join; null for a store that is not a member. A reader that sees
  // the joined hooks sees the member state they point to (release store, acquire load).
  std::shared_ptr<cluster_hooks> hooks() const { return hooks_.load(std::memory_order_acquire); }
  void set_hooks(std::shared_ptr<cluster_hooks> h) { hooks_.store(std::move(h), std::memory_order_release); }

  // A member serves data calls only once it has joined and applied the cluster's catalog
  // and placement: before, its tables have no partitions yet.
  bool joined() const { return joined_.load(std::memory_order_acquire); }
  void set_joined(bool j) { joined_.store(j, std::memory_order_release); }

  // A member that lost its ZooKeeper connection or session refuses writes until it is back
  // and has re-read the placement map (cluster/member.cc: on_session).
  bool writes_refused() const { return writes_refused_.load(std::memory_order_acquire); }
  void refuse_writes(bool r) { writes_refused_.store(r, std::memory_order_release); }

  // UNAVAILABLE while a member has not joined yet; OK otherwise.
  status ready() const {
    if (member_ && !joined()) return {code::unavailable, "this node has not joined its cluster yet"};
    return status::ok();
  }

 private:
  const bool member_;
  std::atomic<std::shared_ptr<cluster_hooks>> hooks_;
  std::atomic<bool> joined_{false};
  std::atomic<bool> writes_refused_{false};
};

}  // namespace cellar::detail
