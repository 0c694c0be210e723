// epoll_out.h: the write side of the load generator's epoll engines (redis, frames).
#pragma once

#include <sys/epoll.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace loadgen {

// Sends what connection `c` has queued (c.out from c.out_pos) with `send(data, size)` until
// all is sent or the socket is full, then asks epoll (`epfd`) for EPOLLOUT only while
// something is left. `Conn` has fd, out (a byte string), out_pos and polling_out. Throws
// on a send error, naming `peer`.
template <class Conn, class Send>
void flush_queued(int epfd, Conn& c, Send send, const char* peer) {
  while (c.out_pos < c.out.size()) {
    const ssize_t n = send(c.out.data() + c.out_pos, c.out.size() - c.out_pos);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) throw std::runtime_error(std::string("send to ") + peer + ": " + std::strerror(errno));
    c.out_pos += static_cast<std::size_t>(n);
  }
  const bool rest = c.out_pos < c.out.size();
  if (!rest) {
    c.out.clear();
    c.out_pos = 0;
  }
  if (rest != c.polling_out) {  // wait for room only while something is left to write
    epoll_event ev{};
    ev.events = EPOLLIN | (rest ? EPOLLOUT : 0u);
    ev.data.ptr = &c;
    ::epoll_ctl(epfd, EPOLL_CTL_MOD, c.fd, &ev);
    c.polling_out = rest;
  }
}

}  // namespace loadgen
