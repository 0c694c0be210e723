// cluster/size_splitter.h: HBase's size-driven splits in a cluster (docs/cluster.md §7):
// each node splits the RANGE partitions it is responsible for once their cells take more
// bytes than their table's MAX_FILESIZE.
//
// Every `interval` a round asks for the partitions this node is responsible for (the
// candidates): the single-copy partitions it owns and its replicas of replicated ones, of
// tables whose attributes let partitions split by size (reshape_plan.h: size_split_limit,
// the rule one process follows too). A candidate past its limit is split at the middle
// row of its cells, read here, by the cluster's split (reshaper.h). Of a replicated
// partition only the replica that leads its group reads its cells (the others answer
// NOT_LEADER and are passed over), so one node acts per partition. The split names the
// table incarnation the partition was measured in: if a split, merge or DDL replaced the
// partitions meanwhile, or a move or snapshot holds one, it is refused CONFLICT, which is
// no error: it is logged at debug level and the next round measures again. Any other
// failure is logged as a warning. A round splits each table once at most: a split gives
// the table new partitions, which the next round measures.
//
// Thread safety: its own thread runs the rounds. stop() may be called from any thread: no
// round starts after it, and the round under way starts no further split. The destructor
// stops and waits for the round under way (a split under way ends first: the member's gate
// makes it give up once the member leaves, node_gate.h).
#pragma once

#include <caf/all.hpp>

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cellar/status.h"
#include "partition/protocol.h"
#include "store/reshape_plan.h"

namespace cellar::cluster {

// A partition this node is responsible for, as a round measures it.
struct split_candidate {
  std::string table;
  std::uint32_t index = 0;
  std::uint64_t uid = 0;          // the table incarnation the partition belongs to
  std::uint64_t limit = 0;        // the table's MAX_FILESIZE
  detail::partition_actor actor;  // the partition here: its only copy, or this node's replica
  bool replicated = false;
};

struct size_splitter_options {
  std::string self;  // this node's id, for the log
  std::chrono::milliseconds interval{10000};
  // The partitions this node is responsible for now; none while it must not split (it is
  // leaving, or its ZooKeeper session is lost). Called on the splitter's thread.
  std::function<std::vector<split_candidate>()> candidates;
  // Runs a split through the cluster (reshaper.h) and returns once this node applied it.
  std::function<status(const detail::reshape_call&)> split;
};

class size_splitter {
 public:
  // Starts the rounds; `sys` (the store's actor system) outlives the splitter.
  size_splitter(caf::actor_system& sys, size_splitter_options options);
  ~size_splitter();
  size_splitter(const size_splitter&) = delete;
  size_splitter& operator=(const size_splitter&) = delete;

  // No round starts from now on, and the one under way starts no further split.
  void stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void run();
  void round();
  bool stopping() const ABSL_LOCKS_EXCLUDED(mu_);

  caf::actor_system& sys_;
  const size_splitter_options opts_;
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace cellar::cluster
