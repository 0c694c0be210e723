// Listening sockets (rpc/listen.h): a server's event loops share one port, which another
// server (listen_on's probe) or a plain socket cannot bind meanwhile; a port another
// socket holds, with SO_REUSEPORT or not, is refused with "address already in use".
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "rpc/listen.h"

using namespace cellar;

namespace {

// A loopback TCP socket bound (and listening) on `port`, as another process's server
// would hold it; -1 when the bind fails.
int foreign_socket(std::uint16_t port, bool reuseport) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuseport) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("listen_on: one port for every socket of the group, closed to another server", "[listen]") {
  for (std::size_t n : {1u, 3u}) {
    INFO(n << " sockets");
    auto s = rpc::listen_on("127.0.0.1", 0, n);
    REQUIRE(s.is_ok());
    REQUIRE(s->size() == n);
    REQUIRE(s->port() != 0);
    std::vector<int> fds;
    for (std::size_t i = 0; i < n; ++i) {
      fds.push_back(s->take(i));
      CHECK(port_of(fds.back()) == s->port());
    }
    // A plain socket cannot bind the port; nor, with one socket (no SO_REUSEPORT group to
    // join), one with SO_REUSEPORT. (A group takes a socket of the same user that sets
    // SO_REUSEPORT itself: the kernel's rule, which a second server's probe never meets.)
    CHECK(foreign_socket(s->port(), false) == -1);
    if (n == 1) CHECK(foreign_socket(s->port(), true) == -1);
    auto again = rpc::listen_on("127.0.0.1", s->port(), n);
    REQUIRE_FALSE(again.is_ok());
    CHECK(again.code() == code::io_error);
    CHECK(again.error().message() == "cannot listen on 127.0.0.1:" + std::to_string(s->port()) +
                                         ": address already in use (another process holds it)");
    for (int fd : fds) ::close(fd);
  }
}

TEST_CASE("listen_on: a port another socket holds is refused, SO_REUSEPORT or not", "[listen]") {
  for (bool reuseport : {true, false}) {
    for (std::size_t n : {1u, 2u}) {
      INFO((reuseport ? "SO_REUSEPORT" : "plain") << " holder, " << n << " sockets");
      auto first = rpc::listen_on("127.0.0.1", 0, 1);
      REQUIRE(first.is_ok());
      const std::uint16_t port = first->port();
      first = rpc::listen_on("127.0.0.1", 0, 1);  // frees `port`
      const int holder = foreign_socket(port, reuseport);
      REQUIRE(holder >= 0);
      auto s = rpc::listen_on("127.0.0.1", port, n);
      REQUIRE_FALSE(s.is_ok());
      CHECK(s.error().message().find("address already in use") != std::string::npos);
      ::close(holder);
      // Free again: it binds.
      CHECK(rpc::listen_on("127.0.0.1", port, n).is_ok());
    }
  }
  CHECK(rpc::listen_on("not-an-address", 0, 1).code() == code::invalid_argument);
}
