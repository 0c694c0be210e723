#include "rpc/socket_stream.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>
#include <kj/debug.h>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace cellar::rpc {

namespace {

void set_nodelay(int fd) {
  int one = 1;
  // Fails (harmlessly) on a Unix socket, which has no Nagle to turn off.
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

socket_stream::socket_stream(kj::UnixEventPort& port, kj::AutoCloseFd fd)
    : fd_(kj::mv(fd)), observer_(port, fd_.get(), kj::UnixEventPort::FdObserver::OBSERVE_READ_WRITE) {}

kj::Promise<std::size_t> socket_stream::tryRead(void* buffer, std::size_t min_bytes, std::size_t max_bytes) {
  return kj::evalNow([&] { return read_some(static_cast<kj::byte*>(buffer), min_bytes, max_bytes, 0); });
}

kj::Promise<std::size_t> socket_stream::read_some(kj::byte* buffer, std::size_t min_bytes, std::size_t max_bytes,
                                                  std::size_t done) {
  for (;;) {
    KJ_IF_MAYBE (r, readable_) {
      auto wait = kj::mv(*r);
      readable_ = nullptr;
      return wait.then(
          [this, buffer, min_bytes, max_bytes, done] { return read_some(buffer, min_bytes, max_bytes, done); });
    }
    const ssize_t n = read_now(buffer + done, max_bytes - done);
    if (n < 0) continue;      // empty: read_now registered the edge to wait for
    if (n == 0) return done;  // end of stream
    done += static_cast<std::size_t>(n);
    if (done >= min_bytes) return done;
  }
}

ssize_t socket_stream::read_now(void* buffer, std::size_t max_bytes) {
  if (readable_ != nullptr) return -1;  // empty at the last read; the edge is registered
  for (;;) {
    const ssize_t n = ::read(fd_.get(), buffer, max_bytes);
    if (n < 0 && errno == EINTR) continue;
    return settle_read(n < 0 ? -errno : n, max_bytes);
  }
}

ssize_t socket_stream::settle_read(ssize_t result, std::size_t max_bytes) {
  ++read_calls_;
  if (result < 0) {
    if (result == -EAGAIN || result == -EWOULDBLOCK) {
      ++empty_reads_;
      readable_ = observer_.whenBecomesReadable();
      return -1;
    }
    KJ_FAIL_SYSCALL("read", static_cast<int>(-result));
  }
  // Fewer bytes than asked for: the socket is empty now, unless the peer has closed (then
  // no edge would come, and the next read must see the end itself).
  if (result > 0 && static_cast<std::size_t>(result) < max_bytes)
    KJ_IF_MAYBE (at_end, observer_.atEndHint()) {
      if (!*at_end) readable_ = observer_.whenBecomesReadable();
    }
  return result;
}

kj::Promise<void> socket_stream::when_readable() {
  KJ_IF_MAYBE (r, readable_) {
    auto wait = kj::mv(*r);
    readable_ = nullptr;
    return wait;
  }
  return kj::READY_NOW;  // nothing registered: read_now reads at once
}

kj::Promise<void> socket_stream::write(const void* buffer, std::size_t size) {
  return kj::evalNow([&] { return write_rest(static_cast<const kj::byte*>(buffer), size); });
}

std::size_t socket_stream::write_now(const void* buffer, std::size_t size) {
  for (;;) {
    const ssize_t n = ::send(fd_.get(), buffer, size, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<std::size_t>(n);  // all, or a short write: the buffer is full
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    KJ_FAIL_SYSCALL("send", errno);
  }
}

kj::Promise<void> socket_stream::write_rest(const kj::byte* buffer, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd_.get(), buffer, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) KJ_FAIL_SYSCALL("send", errno);
    } else {
      buffer += n;
      size -= static_cast<std::size_t>(n);
      if (size == 0) break;
    }
    // EAGAIN or a short write: the send buffer is full, so the next writable edge will come.
    return observer_.whenBecomesWritable().then([this, buffer, size] { return write_rest(buffer, size); });
  }
  return kj::READY_NOW;
}

kj::Promise<void> socket_stream::write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) {
  if (pieces.size() == 1) return write(pieces[0].begin(), pieces[0].size());
  std::size_t total = 0;
  for (auto& p : pieces) total += p.size();
  auto joined = kj::heapArray<kj::byte>(total);
  std::size_t at = 0;
  for (auto& p : pieces) {
    if (p.size() > 0) std::memcpy(joined.begin() + at, p.begin(), p.size());
    at += p.size();
  }
  auto promise = write(joined.begin(), joined.size());
  return promise.attach(kj::mv(joined));
}

kj::Promise<int> socket_stream::first_byte() {
  for (;;) {
    unsigned char b = 0;
    const ssize_t n = ::recv(fd_.get(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 1) return static_cast<int>(b);
    if (n == 0) return -1;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return observer_.whenBecomesReadable().then([this] { return first_byte(); });
    KJ_FAIL_SYSCALL("recv", errno);
  }
}

kj::Promise<void> socket_stream::whenWriteDisconnected() { return observer_.whenWriteDisconnected(); }

void socket_stream::shutdownWrite() { KJ_SYSCALL(::shutdown(fd_.get(), SHUT_WR)); }

void socket_stream::abortRead() { KJ_SYSCALL(::shutdown(fd_.get(), SHUT_RD)); }

void socket_stream::getsockopt(int level, int option, void* value, kj::uint* length) {
  socklen_t len = *length;
  KJ_SYSCALL(::getsockopt(fd_.get(), level, option, value, &len));
  *length = len;
}

void socket_stream::setsockopt(int level, int option, const void* value, kj::uint length) {
  KJ_SYSCALL(::setsockopt(fd_.get(), level, option, value, length));
}

void socket_stream::getsockname(struct sockaddr* addr, kj::uint* length) {
  socklen_t len = *length;
  KJ_SYSCALL(::getsockname(fd_.get(), addr, &len));
  *length = len;
}

void socket_stream::getpeername(struct sockaddr* addr, kj::uint* length) {
  socklen_t len = *length;
  KJ_SYSCALL(::getpeername(fd_.get(), addr, &len));
  *length = len;
}

kj::AutoCloseFd connect_socket(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int e = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); e != 0)
    KJ_FAIL_REQUIRE("cannot resolve address", host, ::gai_strerror(e));
  KJ_DEFER(::freeaddrinfo(found));
  int last_error = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    kj::AutoCloseFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (fd.get() < 0) {
      last_error = errno;
      continue;
    }
    int r;
    do r = ::connect(fd.get(), a->ai_addr, a->ai_addrlen);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
      last_error = errno;
      continue;
    }
    KJ_SYSCALL(::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK));
    set_nodelay(fd.get());
    return fd;
  }
  KJ_FAIL_SYSCALL("connect", last_error, host, port);
}

std::optional<std::pair<std::string, std::uint16_t>> split_host_port(std::string_view address) {
  std::string_view host, port;
  if (!address.empty() && address.front() == '[') {
    const auto close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() || address[close + 1] != ':')
      return std::nullopt;
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  unsigned p = 0;
  const char* end = port.data() + port.size();
  if (port.empty() || std::from_chars(port.data(), end, p).ptr != end || p > 65535) return std::nullopt;
  return std::make_pair(std::string(host), static_cast<std::uint16_t>(p));
}

kj::AutoCloseFd connect_socket(const std::string& address) {
  auto at = split_host_port(address);
  if (!at || at->second == 0) {  // say which part is wrong
    if (!address.empty() && address.front() == '[') {
      const auto close = address.find(']');
      KJ_REQUIRE(close != std::string::npos && close + 1 < address.size() && address[close + 1] == ':',
                 "malformed address", address);
    } else {
      KJ_REQUIRE(address.find(':') != std::string::npos, "address needs a port: host:port", address);
    }
    KJ_FAIL_REQUIRE("malformed port", address);
  }
  return connect_socket(at->first, at->second);
}

socket_listener::socket_listener(kj::UnixEventPort& port, kj::AutoCloseFd fd)
    : port_(port), fd_(kj::mv(fd)), observer_(port, fd_.get(), kj::UnixEventPort::FdObserver::OBSERVE_READ) {}

kj::Promise<kj::Own<socket_stream>> socket_listener::accept() {
  for (;;) {
    const int fd = ::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      set_nodelay(fd);
      return kj::heap<socket_stream>(port_, kj::AutoCloseFd(fd));
    }
    switch (errno) {
      case EINTR:
      // A connection that went away before we took it: take the next one.
      case ECONNABORTED:
      case EPROTO: continue;
      // Nothing to accept, or out of descriptors or memory (as kj does: wait for the next
      // connection attempt instead of spinning).
      case EAGAIN:
#if EAGAIN != EWOULDBLOCK
      case EWOULDBLOCK:
#endif
      case EMFILE:
      case ENFILE:
      case ENOBUFS:
      case ENOMEM: return observer_.whenBecomesReadable().then([this] { return accept(); });
      default: KJ_FAIL_SYSCALL("accept", errno);
    }
  }
}

}  // namespace cellar::rpc
