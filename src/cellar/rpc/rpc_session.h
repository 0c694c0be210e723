// rpc/rpc_session.h: the Cap'n Proto RPC side of a server connection (schemas/cellar.capnp:
// Login, then Cellar). Internal to rpc/.
//
// Thread safety: a session belongs to its connection's event loop.
#pragma once

#include <capnp/rpc-twoparty.h>

#include <memory>

#include "rpc/connection_guard.h"
#include "rpc/message_stream.h"
#include "rpc/serve_calls.h"

namespace cellar::rpc::serving {

// The RPC system over one connection's messages; its bootstrap is the Login capability,
// whose login hands out the Cellar capability.
struct rpc_session {
  rpc_session(buffered_message_stream& messages, shared_state& st, capnp::ReaderOptions ro, connection_guard& guard,
              std::shared_ptr<connection_state> conn);
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
};

}  // namespace cellar::rpc::serving
