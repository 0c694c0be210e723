// epoll_out.h: the waiting and the write side of the load generator's socket engines (redis,
// frames): both run the same loops, so neither side of a comparison gets a better client.
#pragma once

#include <sys/epoll.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
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

// Milliseconds for a wait of `left_ns` (rounded up; 0 once it has passed).
inline int wait_ms(std::int64_t left_ns) { return left_ns <= 0 ? 0 : static_cast<int>((left_ns + 999999) / 1000000); }

// An engine's wait without a ring: sends what is queued (flush_all()); then, until
// any_done() or `deadline_ns` (steady clock, now_ns()) has passed, waits on `epfd` and hands
// each ready connection (a Conn* in its event's data) to on_ready(c, events), and sends once
// more before it returns (the writes those replies queued: rmw's second requests, scans'
// next pages). Throws when epoll_wait fails.
template <class Conn, class Now, class Flush, class Done, class OnReady>
void epoll_wait_loop(int epfd, std::int64_t deadline_ns, Now now_ns, Flush flush_all, Done any_done, OnReady on_ready) {
  for (;;) {
    flush_all();
    if (any_done()) return;
    const std::int64_t left = deadline_ns - now_ns();
    epoll_event evs[64];
    const int n = ::epoll_wait(epfd, evs, 64, wait_ms(left));
    if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("epoll_wait: ") + std::strerror(errno));
    for (int e = 0; e < n; ++e) on_ready(*static_cast<Conn*>(evs[e].data.ptr), evs[e].events);
    if (any_done() || left <= 0) {
      flush_all();
      return;
    }
  }
}

}  // namespace loadgen
