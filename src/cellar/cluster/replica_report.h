// cluster/replica_report.h: one of a node's replicas as an operator sees it (the shell's
// `status 'detailed'`): its partition and what it knows of its Raft group.
#pragma once

#include <cstdint>
#include <string>

#include "replica/group.h"

namespace cellar::cluster {

struct replica_report {
  std::string table;
  std::uint32_t index = 0;
  replica::group_status status;  // role "unreachable" when the replica did not answer
};

// One line: the partition, its role and term, its log, commit and apply positions; a
// leader adds each follower's match index and how far it is behind the leader's log.
std::string format_replica(const replica_report& r);

}  // namespace cellar::cluster
