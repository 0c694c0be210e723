// rpc/listen.cc: exclusive listening sockets (listen.h).
#include "rpc/listen.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

namespace cellar::rpc {

namespace {

struct address_of {
  sockaddr_storage ss{};
  socklen_t len = 0;
};

result<address_of> parse(const std::string& address, std::uint16_t port) {
  address_of a;
  const std::string text = address == "localhost" ? "127.0.0.1" : address;
  if (auto* v4 = reinterpret_cast<sockaddr_in*>(&a.ss); inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    a.len = sizeof(sockaddr_in);
  } else if (auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.ss);
             inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    a.len = sizeof(sockaddr_in6);
  } else {
    return status{code::invalid_argument, "listen address must be a numeric IPv4 or IPv6 address: " + address};
  }
  return a;
}

void set_port(address_of& a, std::uint16_t port) {
  if (a.ss.ss_family == AF_INET6)
    reinterpret_cast<sockaddr_in6*>(&a.ss)->sin6_port = htons(port);
  else
    reinterpret_cast<sockaddr_in*>(&a.ss)->sin_port = htons(port);
}

std::uint16_t bound_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

status cannot(const std::string& address, std::uint16_t port, int err) {
  if (err == EADDRINUSE)
    return {code::io_error, "cannot listen on " + address + ":" + std::to_string(port) +
                                ": address already in use (another process holds it)"};
  return {code::io_error, "cannot listen on " + address + ":" + std::to_string(port) + ": " + std::strerror(err)};
}

// A TCP socket bound to `a` (SO_REUSEADDR, so that connections of a previous server in
// TIME_WAIT do not hold the port; SO_REUSEPORT when `group`), listening when `listening`.
// The errno on failure.
int bound_socket(const address_of& a, bool group, bool listening, int* out) {
  int fd = ::socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return errno;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (group) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a.ss), a.len) != 0 || (listening && ::listen(fd, 1024) != 0)) {
    const int err = errno;
    ::close(fd);
    return err;
  }
  *out = fd;
  return 0;
}

// The claim on address:port (listen.h): a bound abstract Unix socket, or -1 with errno
// EADDRINUSE when another process holds it.
int claim(const std::string& address, std::uint16_t port) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  const std::string name = "cellar-listen " + address + " " + std::to_string(port);
  // Abstract: a leading NUL byte, then the name (no file, no NUL terminator counted).
  const std::size_t n = std::min(name.size(), sizeof un.sun_path - 1);
  std::memcpy(un.sun_path + 1, name.data(), n);
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&un), len) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace

listening_sockets::listening_sockets(listening_sockets&& o) noexcept
    : fds_(std::exchange(o.fds_, {})), port_(o.port_) {}

listening_sockets& listening_sockets::operator=(listening_sockets&& o) noexcept {
  if (this != &o) {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
    fds_ = std::exchange(o.fds_, {});
    port_ = o.port_;
  }
  return *this;
}

listening_sockets::~listening_sockets() {
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
}

int listening_sockets::take(std::size_t i) { return std::exchange(fds_.at(i), -1); }

result<listening_sockets> listen_on(const std::string& address, std::uint16_t port, std::size_t sockets) {
  auto a = parse(address, port);
  if (!a) return a.error();
  listening_sockets out;
  if (sockets <= 1) {
    int fd = -1;
    if (int err = bound_socket(*a, false, true, &fd); err != 0) return cannot(address, port, err);
    out.port_ = bound_port(fd);
    out.fds_.push_back(fd);
    return out;
  }
  // The probe: without SO_REUSEPORT it fails if any socket holds the address, and keeps
  // every other one out while it is bound (listen.h).
  int probe = -1;
  if (int err = bound_socket(*a, false, false, &probe); err != 0) return cannot(address, port, err);
  const std::uint16_t chosen = bound_port(probe);
  const int claimed = claim(address, chosen);
  if (claimed < 0) {
    const int err = errno;
    ::close(probe);
    return cannot(address, chosen, err);
  }
  ::close(probe);
  set_port(*a, chosen);
  status failed;
  for (std::size_t i = 0; i < sockets; ++i) {
    int fd = -1;
    if (int err = bound_socket(*a, true, true, &fd); err != 0) {
      failed = cannot(address, chosen, err);
      break;
    }
    out.fds_.push_back(fd);
  }
  ::close(claimed);  // the group holds the port now: another process's probe fails on it
  if (!failed) return failed;
  out.port_ = chosen;
  return out;
}

}  // namespace cellar::rpc
