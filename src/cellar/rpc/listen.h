// rpc/listen.h: listening sockets for a server's event loops that refuse an address
// another process holds.
//
// A server's event loops each accept on a socket of their own, all bound to one port with
// SO_REUSEPORT: the kernel spreads new connections over them (and, with loop affinity,
// gives each loop the connections that arrive on its CPU). SO_REUSEPORT alone would also
// let any other process of the same user bind the same port and silently take a share of
// the connections: two servers on one port, each serving some clients. listen_on() makes
// the port this process's alone, as a plain bind does:
//   - one socket: bound without SO_REUSEPORT, so any other socket on the address (with
//     SO_REUSEPORT or not) makes the bind fail, and no later one can join it;
//   - several: the port is first bound by a probe socket without SO_REUSEPORT, which
//     fails the same way if anyone holds it; the probe is closed just before the group
//     binds (it would keep the group out too), and once the group is bound, another
//     process's probe fails on it. For the moment between the probe and the group, a
//     claim is held: an abstract Unix socket named after the address and port, a name
//     only one socket can bind (the kernel frees it when its process ends, however it
//     ends). Another cellar server starting on the same address at that moment fails on
//     the claim instead of joining the group. (The kernel still lets a socket that sets
//     SO_REUSEPORT itself, of the same user, join a bound group: a program that opts in so
//     shares the port, as with any SO_REUSEPORT server; a cellar server never does.)
// A port another process holds is IO_ERROR "cannot listen on A:P: address already in use
// (another process holds it)".
//
// Thread safety: plain functions; a listening_sockets belongs to its caller.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cellar/status.h"

namespace cellar::rpc {

class listening_sockets {
 public:
  listening_sockets() = default;
  listening_sockets(listening_sockets&& o) noexcept;
  listening_sockets& operator=(listening_sockets&& o) noexcept;
  listening_sockets(const listening_sockets&) = delete;
  listening_sockets& operator=(const listening_sockets&) = delete;
  // Closes the sockets not taken.
  ~listening_sockets();

  std::uint16_t port() const { return port_; }
  std::size_t size() const { return fds_.size(); }
  // Socket i (listening, non-blocking), which the caller now owns and closes.
  int take(std::size_t i);

 private:
  friend result<listening_sockets> listen_on(const std::string& address, std::uint16_t port, std::size_t sockets);
  std::vector<int> fds_;
  std::uint16_t port_ = 0;
};

// `sockets` (at least 1) listening TCP sockets on `address` (a numeric IPv4 or IPv6
// address, or "localhost") and `port` (0: a free port, the same for all). Errors:
// IO_ERROR (the address is in use, or the system refused), INVALID_ARGUMENT (not a
// numeric address).
result<listening_sockets> listen_on(const std::string& address, std::uint16_t port, std::size_t sockets);

}  // namespace cellar::rpc
