// A kj stream over a connected socket that skips the read(2) kj's own stream makes only to
// learn that the socket is empty.
//
// kj's stream calls read() whenever asked for bytes; after a request has been read, the next
// call finds the socket empty (EAGAIN) and only then waits for epoll: without pipelining, one
// system call in three of the server and of the client. epoll is edge-triggered in kj, and a
// read that returns fewer bytes than asked for means the socket was empty at that moment. So
// this stream registers for the next "readable" edge right then, in the same call, and the next
// read waits for that edge instead of asking the kernel.
// Registering in the same call matters: an edge that fires while nobody listens is lost.
#pragma once

#include <kj/async-io.h>
#include <kj/async-unix.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cellar::rpc {

class socket_stream final : public kj::AsyncIoStream {
 public:
  // Takes `fd`: a connected, non-blocking stream socket.
  socket_stream(kj::UnixEventPort& port, kj::AutoCloseFd fd);
  ~socket_stream() noexcept = default;

  kj::Promise<std::size_t> tryRead(void* buffer, std::size_t min_bytes, std::size_t max_bytes) override;
  kj::Promise<void> write(const void* buffer, std::size_t size) override;
  // Sends what the socket takes now, without waiting: the bytes sent (fewer than `size`
  // when the send buffer is full). Throws kj::Exception as write() fails.
  std::size_t write_now(const void* buffer, std::size_t size);
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override;
  kj::Promise<void> whenWriteDisconnected() override;
  void shutdownWrite() override;
  void abortRead() override;
  void getsockopt(int level, int option, void* value, kj::uint* length) override;
  void setsockopt(int level, int option, const void* value, kj::uint length) override;
  void getsockname(struct sockaddr* addr, kj::uint* length) override;
  void getpeername(struct sockaddr* addr, kj::uint* length) override;
  kj::Maybe<int> getFd() const override { return fd_.get(); }

  // One read(2) into `buffer`, without a promise: the bytes read (> 0), 0 at the end of the
  // stream, or -1 when the socket is empty (or known to be: a short read before) — then
  // when_readable() resolves at the next readable edge, which is registered in this call.
  // Throws kj::Exception as read() fails.
  ssize_t read_now(void* buffer, std::size_t max_bytes);
  // Resolves at the readable edge read_now() registered when it returned -1.
  kj::Promise<void> when_readable();
  // True when a read found the socket empty and its edge has not come yet.
  bool known_empty() const { return readable_ != nullptr; }
  // read_now()'s outcome for a read made elsewhere (io_ring's recv): `result` bytes read into
  // a buffer of `max_bytes`, or -errno (not EINTR). Returns as read_now() does.
  ssize_t settle_read(ssize_t result, std::size_t max_bytes);

  // The first byte the peer sent, left unread (MSG_PEEK); -1 if it closed before sending
  // one. Call before any read.
  kj::Promise<int> first_byte();

  // read(2) calls made so far, and how many of them found the socket empty (for tests).
  std::uint64_t read_calls() const { return read_calls_; }
  std::uint64_t empty_reads() const { return empty_reads_; }

 private:
  kj::Promise<std::size_t> read_some(kj::byte* buffer, std::size_t min_bytes, std::size_t max_bytes, std::size_t done);
  kj::Promise<void> write_rest(const kj::byte* buffer, std::size_t size);

  kj::AutoCloseFd fd_;
  kj::UnixEventPort::FdObserver observer_;
  // Set when a read found the socket empty: resolves at the next readable edge.
  kj::Maybe<kj::Promise<void>> readable_;
  std::uint64_t read_calls_ = 0;
  std::uint64_t empty_reads_ = 0;
};

// A socket connected to `host`:`port` (names, IPv4 and IPv6 literals), non-blocking, with
// TCP_NODELAY, as kj's own connect() leaves it. Throws kj::Exception when it cannot connect.
kj::AutoCloseFd connect_socket(const std::string& host, std::uint16_t port);
// `host:port` or `[v6]:port` split for connect_socket; throws on a malformed address.
kj::AutoCloseFd connect_socket(const std::string& address);
// `host:port` or `[v6]:port` split into the host (without the brackets) and the port (0 to
// 65535, written in digits only); nullopt for anything else.
std::optional<std::pair<std::string, std::uint16_t>> split_host_port(std::string_view address);

// Accepts connections on a listening, non-blocking socket, as kj sockets.
class socket_listener {
 public:
  socket_listener(kj::UnixEventPort& port, kj::AutoCloseFd fd);
  kj::Promise<kj::Own<socket_stream>> accept();

 private:
  kj::UnixEventPort& port_;
  kj::AutoCloseFd fd_;
  kj::UnixEventPort::FdObserver observer_;
};

}  // namespace cellar::rpc
