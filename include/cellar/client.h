// cellar/client.h: a `connection` (cellar/connection.h) to a cellar-server.
//
// The connection runs a kj event loop on the thread that made it and must only be used
// from that thread. Every call is synchronous: it sends one request and waits for its
// answer. A broken connection makes every later call fail with UNAVAILABLE. Batches go
// over the frame protocol unless client_options::frames is false.
#pragma once

#include <memory>
#include <string>

#include "cellar/connection.h"

namespace cellar::rpc {

struct client_options {
  std::string token;  // see resolve_token() for taking it from a file or the environment
  std::uint64_t max_message_bytes = 256ull << 20;
  // Data calls (batch) over a frame connection (rpc/frames.h) opened beside the RPC one: one
  // message each way instead of a Cap'n Proto call. Scans, DDL and admin stay on RPC. Calls
  // are synchronous, so the order of a connection's calls is kept across the two sockets.
  // If the frame connection cannot be opened, everything goes over RPC.
  bool frames = true;
  // TLS: a PEM file of the CA certificates to trust (only these; not the system's). The
  // server's certificate must chain to one of them and name the server (tls_server_name,
  // else the host of the address; an IP address must be a DNS entry of the certificate's
  // subjectAltName, as kj-tls matches names only). Empty: plain TCP.
  std::string tls_ca;
  std::string tls_server_name;
  // Cluster: every batch asks the node not to forward (the wire's noForward): the actions of
  // partitions the node does not own answer NOT_OWNER, naming its placement epoch, instead
  // of being forwarded to their owner. For clients that route themselves
  // (cluster/routed_connection.h); off, a node forwards (docs/cluster.md §3-§4). Scans are
  // not flagged by this: a routed client flags each scan it sends to an owner node.
  bool no_forward = false;
};

// `address` is "host:port".
result<std::unique_ptr<connection>> connect(const std::string& address, client_options o = {});

// The login token a program was given, so that it need not show in `ps`: `token` (from a
// --token flag) if not empty, else the content of the file `token_file` if not empty (its
// trailing whitespace and line break removed), else the environment variable CELLAR_TOKEN,
// else "" (no token). Errors: INVALID_ARGUMENT when both `token` and `token_file` are
// given or the file holds no token; IO_ERROR when the file cannot be read.
result<std::string> resolve_token(const std::string& token, const std::string& token_file);

}  // namespace cellar::rpc
