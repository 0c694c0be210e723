// rpc/server.h: serves a store over Cap'n Proto RPC (schemas/cellar.capnp).
//
// The server runs kj event loops on their own threads. Data calls (batch, scan pages) go
// to the partition actors asynchronously and come back through a cross-thread fulfiller,
// so an event loop never blocks on the store; calls that block (DDL, snapshot, stats)
// run on a small pool of worker threads. Messages are read in large chunks and the
// replies of one event-loop turn leave in one write (rpc/message_stream.h).
//
// Abuse limits: messages above `max_message_bytes` close the connection (Cap'n Proto's
// reader refuses them before decoding); batches above `max_batch` actions and calls
// beyond `max_in_flight` per connection are refused with an error result. No client
// input reaches the store before it passes the same validation as the embedded API.
// Per connection (rpc/connection_guard.h): a few wrong tokens close it, as do idleness and
// a pile of replies the client does not read; connections over `max_connections` are
// refused at their login.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cellar/status.h"
#include "cellar/store.h"

namespace cellar::rpc {

class metrics;

struct server_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 9090;  // 0: any free port (see server::port())
  std::string token;          // empty: any login succeeds (compared in constant time)
  // Wrong tokens a connection may try: the last refusal closes it (0: no limit). Every
  // failed login is logged with the peer's address.
  std::size_t max_failed_logins = 3;
  std::uint64_t max_message_bytes = 256ull << 20;
  std::size_t max_batch = 10000;
  std::size_t max_in_flight = 256;
  // Client connections served at once, over every event loop (0: no limit). One more is
  // answered UNAVAILABLE ("at its connection limit") at its login, then closed.
  std::size_t max_connections = 4096;
  // A connection that sends nothing for this long, with no call of its own in progress, is
  // closed (0: never).
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(300)};
  // Bytes of replies a connection may leave unsent (a client that does not read them):
  // past this the connection is closed. One reply larger than the bound is still sent.
  std::uint64_t max_unsent_bytes = 64ull << 20;
  std::size_t worker_threads = 4;  // blocking calls: DDL, snapshot, stats
  // kj event loops, each with its own listening socket on the port (SO_REUSEPORT): the
  // kernel spreads connections over them.
  std::size_t event_loops = 1;
  // With several loops and at least as many CPUs: loop i runs on the i-th CPU and takes the
  // connections that arrive on that CPU (Linux 6.1+: SO_INCOMING_CPU on the SO_REUSEPORT
  // group; older kernels spread by hash), so a connection's packets, its loop and, on
  // loopback, its client share a CPU. Over a network the NIC's receive queues spread
  // connections over CPUs; on loopback a connection arrives on the CPU its client connected
  // from, so a client that opens every connection from one CPU gets one loop. false: the
  // kernel spreads connections over the loops by hash, and loops run on any CPU.
  bool loop_affinity = true;
  // Each event loop reads the frame requests of a turn from its plain-socket connections
  // with one io_uring_enter(2), and sends the turn's replies with another, instead of one
  // read(2) and one send(2) each (rpc/io_ring.h). Where the kernel refuses io_uring the loop
  // uses read(2) and send(2) and says so in the log. TLS connections always do.
  bool io_uring = true;
  // Partitions of a table created with KEY partitioning and 0 partitions (the shell's
  // `create` without SPLITS asks for the server's default this way).
  std::uint32_t default_partitions = 7;
  // Serve the frame protocol on the port (rpc/frames.h). false: only Cap'n Proto RPC; a
  // frame connection is then closed at its first bytes, as an older server does.
  bool frames = true;
  // TLS on the port, for both protocols (rpc/tls.h): PEM files of the certificate chain and
  // its unencrypted private key. Both or neither. A plain-text client is told at its login
  // that TLS is required, then closed.
  std::string tls_cert_file;
  std::string tls_key_file;
};

class server {
 public:
  // Binds and starts serving `s` (which must outlive the server).
  static result<std::unique_ptr<server>> start(store& s, server_options o);
  ~server();  // stop()
  std::uint16_t port() const;
  // Each event loop: the CPU it runs on (-1: any) and the connections it serves now.
  struct loop_info {
    int cpu;
    int connections;
    bool io_uring;              // the loop reads and sends through io_uring (server_options::io_uring)
    std::uint64_t send_enters;  // its io_uring_enter calls
    std::uint64_t ring_sends;   // the sends they carried
    std::uint64_t ring_recvs;   // and the reads
  };
  std::vector<loop_info> loops() const;
  // Client connections open now, over every event loop.
  std::int64_t connections() const;
  // The calls and connections the server has counted since it started (rpc/metrics.h).
  const rpc::metrics& metrics() const;
  // Stops accepting, closes connections and joins the server thread.
  void stop();

  struct impl;

 private:
  explicit server(std::unique_ptr<impl> p);
  std::unique_ptr<impl> p_;
};

}  // namespace cellar::rpc
