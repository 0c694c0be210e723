// cluster/replica_host.h: this node's replicas of the cluster's replicated partitions.
//
// A partition the placement map gives a replica set (placement.h: partition_owner::replicas)
// is a Raft group (replica/group.h) with one replica on each node of the set. The host
// starts this node's replica of such a partition and, on every node, the replica router
// (replica_router.h) that the table's runtime holds for it. Its replicas' Raft messages
// travel over the node links (replica_links.h), addressed by group name and partition.
//
// Where a replica keeps its Raft state follows the store's durability:
//   snapshot  in memory: a replica that restarts comes back empty and catches up from the
//             others, so the data survives while a majority of the replicas does;
//   log       in files under <directory>/raft (replica/storage.h), written at each change;
//   log-sync  the same, fsynced before the replica counts toward the majority.
// A memory-only store (no directory) keeps its replicas in memory.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <absl/synchronization/mutex.h>

#include "catalog/catalog.h"
#include "cluster/remote.h"
#include "cluster/replica_links.h"
#include "dispatch/dispatch.h"
#include "cluster/replica_report.h"
#include "store/access.h"

namespace cellar::cluster {

struct replica_host_options {
  std::string self;  // this node's id
  std::chrono::milliseconds forward_timeout{10000};
  unsigned election_timeout_ms = 1000;  // libraft randomises each election between 1x and 2x
  unsigned heartbeat_timeout_ms = 100;
};

class replica_host {
 public:
  replica_host(detail::cluster_seat& seat, std::shared_ptr<peer_directory> peers, replica_host_options options);
  replica_host(const replica_host&) = delete;
  replica_host& operator=(const replica_host&) = delete;

  // The ref of partition `index` of `schema`, replicated on `replicas` (the preferred leader
  // first): a replica router, and this node's replica started first when `replicas` names
  // this node (resuming from its stored Raft state, if any). The router stops the replica
  // with it. A replica that cannot open its storage is logged and left out: the router
  // then reaches the other replicas only.
  detail::partition_ref place(const detail::schema_ptr& schema, std::uint32_t index,
                              const std::vector<std::string>& replicas);

  // This node's replica of partition `index` of the group named `group` (group_name);
  // null when it holds none.
  caf::actor replica(const std::string& group, std::uint32_t index) const;

  // Each of this node's replicas with its state, by table and partition; a replica that does
  // not answer within `timeout` is reported "unreachable". Blocks: not for a CAF worker.
  std::vector<replica_report> report(std::chrono::milliseconds timeout) const;

  // The name of a table's Raft groups: the table and its uid, so that a table dropped and
  // created again never takes its predecessor's messages.
  static std::string group_name(const detail::table_schema& schema);

 private:
  detail::cluster_seat& seat_;
  std::shared_ptr<peer_directory> peers_;
  const replica_host_options opts_;
  replica_links links_;
  // This node's running replicas by group and partition. Shared with each replica, which
  // takes itself out when it stops, whether or not the host still exists.
  struct running {
    absl::Mutex mu;
    std::map<std::pair<std::string, std::uint32_t>, caf::actor> replicas ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<running> running_ = std::make_shared<running>();
};

}  // namespace cellar::cluster
