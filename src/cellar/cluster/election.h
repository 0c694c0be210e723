// cluster/election.h: choosing the cluster's master through ZooKeeper.
//
// Every node is a candidate: it creates an ephemeral sequential znode /election/n_<seq>
// holding its node id. The candidate with the lowest sequence number is the master; every
// other candidate watches the candidate just before it (not the whole list, so a master
// change wakes one node, not all). When the master's session ends (the node stopped, was
// killed, or lost ZooKeeper for longer than the session timeout) its znode goes, and the
// next candidate becomes master.
//
// The master's *term* is its znode's sequence number: a later master always has a larger
// term, so a term orders masters. The master's znode also fences its writes: the master
// puts `zk_op::check(fence_path(), 0)` into each multi(), which then fails once the
// master's session is gone, even when a slow master has not yet heard that it was deposed.
//
// A master steps down (the deposed callback) as soon as its connection drops, before the
// session is known to be lost: while disconnected it cannot tell whether another node has
// taken over. If the connection comes back in the same session and its znode is still the
// lowest, it is elected again with the same term. After an expiry it is a new candidate.
//
// Threads: `elected` and `deposed` run on the zk_client's event thread, in alternation
// (never two elected in a row). They may call the zk_client; they must not destroy the
// election. Other methods may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cellar/status.h"
#include "cluster/zk_client.h"

namespace cellar::cluster {

struct master_info {
  std::string node_id;
  std::int64_t term = 0;
  std::string znode;  // the master's election znode
};

class master_election {
 public:
  struct callbacks {
    std::function<void(const master_info& self)> elected;
    std::function<void()> deposed;
  };

  // Enters the election as `node_id`; returns once the candidate znode exists and the first
  // check ran (if this node won, `elected` has been called). Errors: UNAVAILABLE.
  static result<std::unique_ptr<master_election>> enter(zk_client& zk, std::string node_id, callbacks cb);
  // Withdraws: removes the candidate znode (the next candidate takes over at once). A master
  // hears `deposed` before the destructor returns; no callback runs after it.
  ~master_election();
  master_election(const master_election&) = delete;
  master_election& operator=(const master_election&) = delete;

  bool is_master() const;
  // This node's term while it is master, else 0.
  std::int64_t term() const;
  // This candidate's znode in the current session ("" between sessions).
  std::string fence_path() const;

  // The current master as ZooKeeper has it (the lowest candidate); NOT_FOUND when there is
  // no candidate. Any client may ask.
  static result<master_info> current(zk_client& zk);

  struct state;

 private:
  explicit master_election(std::shared_ptr<state> st);
  std::shared_ptr<state> st_;
};

}  // namespace cellar::cluster
