// cluster/replica_links.h: the Raft messages of this node's replicas, carried to other nodes.
//
// A replicated partition (replica/replicated_partition.h) has one replica per node; its
// group's members are addressed by node id. Its transport hands a message to the node
// endpoint of the member's node (cluster/remote.h: node_replica), over the same middleman
// connections the forwarded requests use (peer_directory), and that endpoint hands it to
// its replica of the same partition.
//
// Sending never blocks the replica's actor: when the node is not connected yet, the message
// is dropped (Raft sends again at its next heartbeat) and a connect starts in the
// background, one per node at a time. A link actor, held until it ends, watches each
// connection for as long as it lasts; when it breaks (the node died), the directory forgets
// it, so the next message connects again (to the node's new address if it came back
// elsewhere). When the directory lets go of a connection first (the node left the
// membership or moved), the next message replaces the node's link with a new one.
//
// Thread safety: every method may be called from any thread; the transports it makes are
// used by their replica's actor.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "cluster/remote.h"
#include "replica/actor_io.h"

namespace cellar::cluster {

class replica_links {
 public:
  replica_links(caf::actor_system& sys, std::shared_ptr<peer_directory> peers,
                std::chrono::milliseconds connect_timeout = std::chrono::seconds(5));
  ~replica_links();
  replica_links(const replica_links&) = delete;
  replica_links& operator=(const replica_links&) = delete;

  // Hands `m` to the endpoint of `node`; false when not connected now (see above).
  bool send(const std::string& node, node_replica m);

  // The transport of this node's replica of partition (table, index). A member's address
  // in the group's configuration is its node id.
  std::unique_ptr<replica::transport> transport_for(std::string table, std::uint32_t index);

  struct state;

 private:
  std::shared_ptr<state> st_;
};

}  // namespace cellar::cluster
