// thrift/event_server.h: serves a Thrift processor from a few event-loop threads.
//
// Thrift's own C++ servers either give each connection a thread (TThreadedServer: a
// wake-up and a switch per call) or need framed transport (TNonblockingServer), while
// HBase's clients default to buffered transport. This server keeps a fixed number of
// loops; each accepts connections from the shared listening socket, reads what they send
// as it arrives (epoll, edge-triggered), runs the processor on every complete message in
// the loop's own thread, and sends each reply with one send(2).
//
// Framed transport gives each message its length. Buffered transport does not: the
// processor reads the message from the bytes received so far, and when they end before
// the message does (the generated processor reads all arguments before it calls the
// handler, so nothing has run yet) the attempt is dropped and made again when more bytes
// arrive. A message longer than `max_message_bytes`, or one that is not Thrift, closes
// its connection and no other.
//
// With TLS (`tls` set) each connection's bytes go through its own OpenSSL session
// (thrift/tls_session.h) on the same loops: the handshake advances as the client's bytes
// arrive, a record that arrives in pieces waits until it is whole, and what OpenSSL has for
// the client is sent as the replies are. A client whose handshake fails, or that has not
// finished it `tls_handshake_timeout` after it connected, is closed; TLS connections count
// against `max_connections` from their accept, as plain ones.
//
// A call runs on its loop until it returns, so a slow call (DDL, a remote partition's
// answer) delays the other connections of that loop: `loops` sets how many calls run at
// once.
//
// Thread safety: start() and stop() from one thread; the processor is called from every
// loop at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <thrift/TProcessor.h>

#include "cellar/status.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace cellar::thrift {

struct event_server_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;           // 0: any free port
  std::size_t loops = 1;            // serving threads
  bool framed = false;              // TFramedTransport, else TBufferedTransport
  bool compact = false;             // TCompactProtocol, else TBinaryProtocol
  std::size_t max_connections = 0;  // served at once; more wait in the listen queue. 0: no limit
  // Thrift's own default limit of a message.
  std::size_t max_message_bytes = 100u << 20;
  // Reply bytes a connection may leave unread before the loop stops reading its requests.
  std::size_t max_unsent_bytes = 64u << 20;
  // TLS on every connection with this context's keys and settings (rpc::server_ssl_context);
  // null: plain TCP.
  std::shared_ptr<ssl_ctx_st> tls;
  std::chrono::milliseconds tls_handshake_timeout{std::chrono::seconds(10)};
};

class event_server {
 public:
  // Binds address:port and starts the loops. IO_ERROR when the port cannot be bound.
  static result<std::unique_ptr<event_server>> start(std::shared_ptr<apache::thrift::TProcessor> processor,
                                                     event_server_options options);
  ~event_server();  // stop()
  event_server(const event_server&) = delete;
  event_server& operator=(const event_server&) = delete;

  std::uint16_t port() const;
  // Stops the loops, closing every connection. Idempotent.
  void stop();

  struct impl;

 private:
  explicit event_server(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace cellar::thrift
