// cluster/membership.h: which cellar nodes are alive, as ephemeral znodes.
//
// A node joins by creating the ephemeral znode /nodes/<node id> holding its addresses; the
// znode lives as long as the node's ZooKeeper session, so a node that stops (or is killed,
// or loses ZooKeeper for longer than the session timeout) leaves the list by itself. A
// `membership` keeps its node registered across sessions: after an expiry it creates the
// znode again in the new session.
//
// A restarted node may find its previous incarnation's znode still there (that session has
// not timed out yet): join() waits for it to vanish, up to `wait_for_previous`, and only
// then reports ALREADY_EXISTS (another live node uses the id).
//
// Threads: the change callback runs on the zk_client's event thread (see zk_client.h), once
// with the list found at start and then after every change, always with the whole list
// sorted by node id. It may call the zk_client and members(), and must not destroy the
// membership. After the destructor returns the callback is not running and never runs
// again. Other methods may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"
#include "cluster/zk_client.h"

namespace cellar::cluster {

struct node_info {
  std::string id;            // 1..128 bytes of [A-Za-z0-9_.-] (not "." or "..")
  std::string data_address;  // host:port where clients reach the node (RPC)
  std::string peer_address;  // host:port of the node's CAF middleman (node-to-node)

  friend bool operator==(const node_info&, const node_info&) = default;
};

std::string encode_node_info(const node_info& n);
// CORRUPTION when the bytes are not a node_info.
result<node_info> decode_node_info(std::string_view bytes);
// INVALID_ARGUMENT unless `id` can name a node (and a znode).
status check_node_id(std::string_view id);

class membership {
 public:
  using change_fn = std::function<void(const std::vector<node_info>& members)>;

  // Registers `self` and watches the list. Errors: INVALID_ARGUMENT (bad id), ALREADY_EXISTS
  // (the id stayed registered by another session for `wait_for_previous`), UNAVAILABLE.
  static result<std::unique_ptr<membership>> join(
      zk_client& zk, node_info self, change_fn on_change,
      std::chrono::milliseconds wait_for_previous = std::chrono::seconds(30));
  // Watches the list without registering (a client, a tool).
  static result<std::unique_ptr<membership>> observe(zk_client& zk, change_fn on_change);
  // One read of the list, without watching.
  static result<std::vector<node_info>> list(zk_client& zk);

  // Leaves: removes the node's znode (others see it leave at once) and stops the callback.
  ~membership();
  membership(const membership&) = delete;
  membership& operator=(const membership&) = delete;

  // The list as of the last change seen.
  std::vector<node_info> members() const;
  // Whether this node's znode exists in the current session (false for observe()).
  bool registered() const;

  struct state;

 private:
  explicit membership(std::shared_ptr<state> st);
  std::shared_ptr<state> st_;
};

}  // namespace cellar::cluster
