// thrift/gateway.h: HBase's Thrift gateway over a cellar store (docs/thrift.md).
//
// A `gateway` serves one of HBase's two Thrift services on a TCP port: thrift2
// (THBaseService, HBase 2.x's hbase-thrift/.../thrift2/hbase.thrift) or thrift1 (Hbase, the
// service happybase speaks), so that HBase applications in any language reach cellar by
// changing a host name. Transport and protocol are those of HBase's server: buffered and
// binary by default, framed (HBase's -f) and compact (-c) on request.
//
// Every call goes through cellar's public connection API (cellar/connection.h) over the
// store, so the gateway answers what the store answers: embedded, or as a cluster node
// that routes each row to its partition's owner. Errors are cellar's status codes, sent
// as TIOError (or TIllegalArgument / IllegalArgument where HBase declares it) whose message
// is the status text ("TABLE_NOT_FOUND: ..."); a bad request fails alone and never closes
// another client's connection.
//
// Serving: `threads` event loops (thrift/event_server.h) share the connections, each
// running its connections' calls one after another, with TLS or without.
//
// Thread safety: start() and stop() from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "cellar/status.h"
#include "cellar/store.h"

namespace cellar::thrift {

enum class service : std::uint8_t {
  thrift1,  // Hbase (happybase)
  thrift2,  // THBaseService
};

struct gateway_options {
  cellar::thrift::service service = cellar::thrift::service::thrift2;
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: any free port (see gateway::port)
  bool framed = false;     // TFramedTransport instead of TBufferedTransport (HBase's -f)
  bool compact = false;    // TCompactProtocol instead of TBinaryProtocol (HBase's -c)
  // TLS on the port (HBase's hbase.thrift.ssl.enabled): the PEM certificate chain and its
  // unencrypted key, served with the data port's settings (rpc/tls.h: TLS 1.2 or later,
  // its cipher suites). Both empty: plain TCP.
  std::string tls_cert_file;
  std::string tls_key_file;
  // A TLS client that has not finished its handshake this long after it connected is
  // closed (until then it holds one of max_connections).
  std::chrono::milliseconds tls_handshake_timeout{std::chrono::seconds(10)};
  // Connections served at once; more wait in the listen queue until one closes. 0: no limit.
  std::size_t max_connections = 0;
  // Serving threads: calls that run at once (each loop runs one at a time).
  std::size_t threads = 4;
  // Partitions (KEY hashing) of a table created without split keys, as the shell's create.
  std::uint32_t default_partitions = 7;
  // Where clients reach this gateway, for region locations; empty: address:port.
  std::string advertise;
  // Open scanners kept for every client together: past it, opening one fails with TIOError.
  std::size_t max_scanners = 10000;
  // A scanner not used for this long is closed when the next one opens (clients that die
  // without closing theirs leave them behind).
  std::chrono::milliseconds scanner_timeout{std::chrono::minutes(10)};
};

class gateway {
 public:
  // Listens on options.address:port and serves `s` (which must outlive the gateway) on
  // threads of its own. Errors: IO_ERROR when the port cannot be bound or the TLS
  // certificate or key cannot be read; INVALID_ARGUMENT for a bad `advertise`, a
  // certificate without its key (or the reverse), or files that hold no PEM certificate,
  // no unencrypted key, or a key that is not the certificate's.
  static result<std::unique_ptr<gateway>> start(store& s, gateway_options options);
  // stop() if not yet stopped.
  ~gateway();
  gateway(const gateway&) = delete;
  gateway& operator=(const gateway&) = delete;

  // The port bound (the one chosen when options.port was 0).
  std::uint16_t port() const;
  // Stops accepting, closes every connection and waits for the serving threads. Idempotent.
  void stop();

  struct impl;

 private:
  explicit gateway(std::unique_ptr<impl> i);
  std::unique_ptr<impl> impl_;
};

}  // namespace cellar::thrift
