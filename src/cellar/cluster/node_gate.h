// cluster/node_gate.h: calls from other threads use a member's cluster node only while it
// is attached.
//
// Admin calls (moves, the balancer, DDL, named snapshots, the status report) reach a
// member on threads of their own and use its cluster_node, which the member destroys when
// it leaves. Each call enters the gate and holds its use while it touches the node. The
// member closes the gate before it destroys the node: closing refuses new uses and waits
// until the running ones end. A call that waits long (a step at another node) watches
// closing() and gives up, so closing takes no longer than the step each call is in.
//
// Thread safety: thread-safe.
#pragma once

#include <absl/synchronization/mutex.h>

#include <string>
#include <utility>

#include "cellar/status.h"

namespace cellar::cluster {

class cluster_node;

class node_gate {
 public:
  // A use of the node: the node stays attached while it exists.
  class use {
   public:
    use(use&& o) noexcept : gate_(std::exchange(o.gate_, nullptr)), node_(o.node_) {}
    use& operator=(use&&) = delete;
    ~use() {
      if (gate_) gate_->leave();
    }
    cluster_node& operator*() const { return *node_; }
    cluster_node* operator->() const { return node_; }

   private:
    friend class node_gate;
    use(const node_gate* g, cluster_node* n) : gate_(g), node_(n) {}
    const node_gate* gate_;
    cluster_node* node_;
  };

  // Attaches `node` (not null): uses can begin.
  void open(cluster_node* node) {
    absl::MutexLock lock(&mu_);
    node_ = node;
  }

  // Refuses new uses, then waits until every running one has ended. Once it returns the
  // node may go.
  void close() {
    absl::MutexLock lock(&mu_);
    node_ = nullptr;
    closed_ = true;
    mu_.Await(absl::Condition(
        +[](int* users) { return *users == 0; }, &users_));
  }

  // True once close() has begun: long waits give up.
  bool closing() const {
    absl::MutexLock lock(&mu_);
    return closed_;
  }

  // A use of the node; UNAVAILABLE naming node `self` when it has not joined its cluster
  // yet or is leaving it.
  result<use> enter(const std::string& self) const {
    absl::MutexLock lock(&mu_);
    if (!node_)
      return status{code::unavailable,
                    "node '" + self + (closed_ ? "' is leaving its cluster" : "' has not joined its cluster yet")};
    ++users_;
    return use(this, node_);
  }

 private:
  void leave() const {
    absl::MutexLock lock(&mu_);
    --users_;
  }

  mutable absl::Mutex mu_;
  cluster_node* node_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  mutable int users_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace cellar::cluster
