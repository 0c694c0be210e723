// rpc/client.h: a `connection` (cellar/connection.h) to a cellar-server.
//
// The connection runs a kj event loop on the thread that made it and must only be used
// from that thread. Every call is synchronous: it sends one request and waits for its
// answer. A broken connection makes every later call fail with UNAVAILABLE.
#pragma once

#include <memory>
#include <string>

#include "cellar/connection.h"

namespace cellar::rpc {

struct client_options {
  std::string token;
  std::uint64_t max_message_bytes = 256ull << 20;
};

// `address` is "host:port".
result<std::unique_ptr<connection>> connect(const std::string& address, client_options o = {});

}  // namespace cellar::rpc
