// uring_io.h: the I/O of the load generator's socket engines (redis, frames) batched through
// one io_uring per engine, for both alike.
//
// Without pipelining every request costs the client a send(2) and a recv(2) of its own, and
// where entering the kernel is dear (a kernel that isolates its page tables) the load
// generator would spend as much CPU per operation as the server it measures, so the server's
// throughput would be the client's. The ring is used as the server uses its own
// (src/cellar/rpc/io_ring.h): epoll still says which sockets are readable; then the recvs of
// all of them and the sends of every connection with queued requests go to the kernel in one
// io_uring_enter(2), each non-blocking (MSG_DONTWAIT), so all complete in that call. A turn
// is one epoll_wait and one enter instead of one epoll_wait and a recv and a send per
// connection.
//
// The recvs are not left armed for the ring to complete when bytes come: io_uring then polls
// the socket itself, and the wake-up of a polled request costs the sender more than epoll's,
// which would load the server being measured.
//
// The redis and frames engines use it the same way (uring_turn below), so the comparison
// of servers stays fair; `--io-uring false` gives each engine's plain send(2)/recv(2) back.
// TLS connections keep those (their bytes are encrypted in user space). Not thread-safe:
// one ring per engine, and an engine is one thread's.
#pragma once

#include <liburing.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace loadgen {

class uring_io {
 public:
  // A ring of `entries` submissions; null when the kernel refuses io_uring (older than 5.6,
  // or a seccomp filter) or does not complete a non-blocking recv at once (checked on a
  // socket pair): the engine then keeps send(2) and recv(2).
  static std::unique_ptr<uring_io> open(unsigned entries = 256) {
    auto r = std::unique_ptr<uring_io>(new uring_io);
    if (io_uring_queue_init(entries, &r->ring_, 0) != 0) return nullptr;
    r->open_ = true;
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return nullptr;
    char b = 0;
    auto* e = io_uring_get_sqe(&r->ring_);
    io_uring_prep_recv(e, sv[0], &b, 1, MSG_DONTWAIT);
    io_uring_submit(&r->ring_);
    io_uring_cqe* cqe = nullptr;
    const bool inline_done = io_uring_peek_cqe(&r->ring_, &cqe) == 0 && cqe->res == -EAGAIN;
    // The probe's completion is consumed here: submit_all counts only the engine's own.
    if (inline_done) io_uring_cqe_seen(&r->ring_, cqe);
    ::close(sv[0]);
    ::close(sv[1]);
    return inline_done ? std::move(r) : nullptr;  // (a ring that failed the probe is closed with it)
  }
  ~uring_io() {
    if (open_) io_uring_queue_exit(&ring_);
  }
  uring_io(const uring_io&) = delete;
  uring_io& operator=(const uring_io&) = delete;

  // Queues a non-blocking recv into `buf` (up to `size` bytes) or send of `size` bytes of
  // `buf` on `fd`, for the connection `tag`; both are made by the next submit_all.
  void recv(int fd, void* buf, std::size_t size, void* tag) {
    auto* e = sqe();
    io_uring_prep_recv(e, fd, buf, size, MSG_DONTWAIT);
    io_uring_sqe_set_data64(e, reinterpret_cast<std::uintptr_t>(tag));
  }
  void send(int fd, const void* buf, std::size_t size, void* tag) {
    auto* e = sqe();
    io_uring_prep_send(e, fd, buf, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    io_uring_sqe_set_data64(e, reinterpret_cast<std::uintptr_t>(tag) | 1u);
  }

  // Makes everything queued in one io_uring_enter and calls on(tag, is_send, result) for
  // each (result: bytes, or -errno; -EAGAIN: the socket had nothing, or no room).
  template <class F>
  void submit_all(F on) {
    if (queued_ == 0) return;
    const int r = io_uring_submit_and_wait(&ring_, queued_);
    if (r < 0 && r != -EINTR) throw std::runtime_error(std::string("io_uring_enter: ") + std::strerror(-r));
    io_uring_cqe* cqe = nullptr;
    unsigned head = 0, n = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      const std::uint64_t d = io_uring_cqe_get_data64(cqe);
      ++n;
      on(reinterpret_cast<void*>(d & ~std::uint64_t{1}), (d & 1u) != 0, cqe->res);
    }
    io_uring_cq_advance(&ring_, n);
    queued_ -= std::min(queued_, n);
  }

 private:
  uring_io() = default;
  io_uring_sqe* sqe() {
    auto* e = io_uring_get_sqe(&ring_);
    if (e == nullptr) {  // the queue is full: make what it holds (completions wait in the CQ)
      io_uring_submit(&ring_);
      e = io_uring_get_sqe(&ring_);
      if (e == nullptr) throw std::runtime_error("io_uring: no submission entry");
    }
    ++queued_;
    return e;
  }
  io_uring ring_{};
  bool open_ = false;
  unsigned queued_ = 0;  // submissions whose completions are still to be handled
};

// A connection's part of a turn: the bytes its send carried.
struct uring_slot {
  std::size_t send_len = 0;
};

// One turn of an engine's loop through `ring`: epoll_wait on `epfd` (up to `timeout_ms`, or
// not at all while requests wait to be sent), then one enter that reads every readable
// connection (into room(c): a {pointer, size} pair of free space in its input buffer) and
// sends every connection's queued bytes. Each read is handed to on_read(c, bytes). `Conn`
// has fd, out and out_pos (the engine's queued bytes, from out_pos), polling_out (waiting
// for room to send, as epoll_out.h's flush_queued) and io (its uring_slot). Throws when a
// server closes the connection or an operation fails, naming `peer`.
template <class Conn, class Room, class OnRead>
void uring_turn(uring_io& ring, int epfd, std::vector<std::unique_ptr<Conn>>& conns, int timeout_ms, Room room,
                OnRead on_read, const char* peer) {
  auto want_out = [epfd](Conn& c, bool on) {  // EPOLLOUT only while a send found no room
    if (c.polling_out == on) return;
    epoll_event ev{};
    ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
    ev.data.ptr = &c;
    ::epoll_ctl(epfd, EPOLL_CTL_MOD, c.fd, &ev);
    c.polling_out = on;
  };
  bool to_send = false;
  for (auto& p : conns) to_send = to_send || (p->out_pos < p->out.size() && !p->polling_out);
  epoll_event evs[64];
  const int n = ::epoll_wait(epfd, evs, 64, to_send ? 0 : timeout_ms);
  if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("epoll_wait: ") + std::strerror(errno));
  for (int e = 0; e < n; ++e) {
    Conn& c = *static_cast<Conn*>(evs[e].data.ptr);
    if (evs[e].events & EPOLLOUT) want_out(c, false);
    if (evs[e].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
      auto [buf, size] = room(c);
      ring.recv(c.fd, buf, size, &c);
    }
  }
  for (auto& p : conns) {
    Conn& c = *p;
    if (c.out_pos < c.out.size() && !c.polling_out) {
      c.io.send_len = c.out.size() - c.out_pos;
      ring.send(c.fd, c.out.data() + c.out_pos, c.io.send_len, &c);
    }
  }
  ring.submit_all([&](void* tag, bool is_send, int res) {
    Conn& c = *static_cast<Conn*>(tag);
    if (is_send) {
      if (res == -EAGAIN || res == -EINTR) return want_out(c, true);
      if (res < 0) throw std::runtime_error(std::string("send to ") + peer + ": " + std::strerror(-res));
      c.out_pos += static_cast<std::size_t>(res);
      if (c.out_pos == c.out.size()) {
        c.out.clear();
        c.out_pos = 0;
      }
      if (static_cast<std::size_t>(res) < c.io.send_len) want_out(c, true);  // the socket is full
      return;
    }
    if (res == -EAGAIN || res == -EINTR) return;
    if (res < 0) throw std::runtime_error(std::string("recv from ") + peer + ": " + std::strerror(-res));
    if (res == 0) throw std::runtime_error(std::string(peer) + " closed the connection");
    on_read(c, static_cast<std::size_t>(res));
  });
}

}  // namespace loadgen
