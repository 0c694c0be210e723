#include "rpc/io_ring.h"

#include <liburing.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rpc/message_stream.h"

namespace cellar::rpc {

namespace {

// What the ring promises its streams, tried on a socket pair: a MSG_DONTWAIT send or recv is
// done (or refused with EAGAIN) within the io_uring_enter that submits it, so its
// completion is there when the call returns. Kernels that park such a call until the socket
// is ready would leave a stream waiting on a completion nobody reads: no ring for them.
bool completes_at_once(io_uring& ring) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) return false;
  auto one = [&](bool send, int fd, void* data, std::size_t size) -> long {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    if (sqe == nullptr) return -ENOSPC;
    if (send)
      io_uring_prep_send(sqe, fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    else
      io_uring_prep_recv(sqe, fd, data, size, MSG_DONTWAIT);
    if (io_uring_submit(&ring) != 1) return -EIO;
    io_uring_cqe* cqe = nullptr;
    if (io_uring_peek_cqe(&ring, &cqe) != 0 || cqe == nullptr) return -ETIMEDOUT;
    const long res = cqe->res;
    io_uring_cqe_seen(&ring, cqe);
    return res;
  };
  char buf[4096] = {};
  bool ok = one(true, fds[0], buf, 1) == 1 && one(false, fds[1], buf, sizeof buf) == 1;
  ok = ok && one(false, fds[1], buf, sizeof buf) == -EAGAIN;  // nothing to read
  // Fill the pair's buffer, then a send must come back with EAGAIN at once.
  while (ok && ::send(fds[0], buf, sizeof buf, MSG_DONTWAIT | MSG_NOSIGNAL) > 0) {}
  ok = ok && one(true, fds[0], buf, sizeof buf) == -EAGAIN;
  ::close(fds[0]);
  ::close(fds[1]);
  return ok;
}

// One writer: no locked instruction needed.
void bump(std::atomic<std::uint64_t>& a, std::uint64_t n) {
  a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace

// A recv's promise: queued in the ring from its making until the flush hands it its result
// (or it is dropped, and then never made).
struct io_ring::recv_op {
  recv_op(kj::PromiseFulfiller<long>& f, io_ring& r, int fd, void* buffer, std::size_t size, settle_fn settle)
      : fulfiller(f), ring(r), fd(fd), buffer(buffer), size(size), settle(std::move(settle)) {
    ring.recvs_.push_back(this);
    ring.schedule();
  }
  ~recv_op() {
    for (auto* list : {&ring.recvs_, &ring.recvs_flushing_})
      for (auto& q : *list)
        if (q == this) q = nullptr;
  }
  kj::PromiseFulfiller<long>& fulfiller;
  io_ring& ring;
  int fd;
  void* buffer;
  std::size_t size;
  settle_fn settle;
};

kj::Own<io_ring> io_ring::open(io_ring_stats* stats, unsigned entries) {
  auto ring = kj::heap<io_uring>();
  std::memset(ring.get(), 0, sizeof(io_uring));
  // Carry on past a failed entry; only this thread submits; no interrupt to run completions
  // (they are read at once). Kernels before 6.0 know some of these flags: then none.
  int r = io_uring_queue_init(entries, ring.get(),
                              IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
  if (r == -EINVAL) r = io_uring_queue_init(entries, ring.get(), 0);
  if (r < 0) {
    spdlog::info(
        "cellar-server: io_uring is not available ({}): connections are read and sent to with read(2) and "
        "send(2)",
        std::strerror(-r));
    return {};
  }
  if (!completes_at_once(*ring)) {
    io_uring_queue_exit(ring.get());
    spdlog::info(
        "cellar-server: this kernel's io_uring does not complete a non-blocking send or recv at once: "
        "connections are read and sent to with read(2) and send(2)");
    return {};
  }
  return kj::heap<io_ring>(kj::mv(ring), stats);
}

io_ring::io_ring(kj::Own<io_uring> ring, io_ring_stats* stats)
    : ring_(kj::mv(ring)), tasks_(*this), stats_(stats != nullptr ? stats : &own_stats_) {}

io_ring::~io_ring() noexcept {
  if (ring_.get() != nullptr) io_uring_queue_exit(ring_.get());
}

void io_ring::schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  tasks_.add(kj::evalLast([this] { flush(); }));
}

void io_ring::queue(buffered_message_stream& s) {
  queued_.push_back(&s);
  schedule();
}

void io_ring::forget(buffered_message_stream& s) {
  for (auto* list : {&queued_, &flushing_})
    for (auto& q : *list)
      if (q == &s) q = nullptr;
}

kj::Promise<long> io_ring::recv(int fd, void* buffer, std::size_t size, settle_fn settle) {
  return kj::newAdaptedPromise<long, recv_op>(*this, fd, buffer, size, std::move(settle));
}

void io_ring::taskFailed(kj::Exception&& e) {
  spdlog::warn("cellar-server: a turn's reads and sends failed: {}", e.getDescription().cStr());
}

io_uring_sqe* io_ring::next_sqe() {
  if (broken_) return nullptr;
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (sqe != nullptr) return sqe;
  submit_and_complete();  // the ring is full: these first
  return broken_ ? nullptr : io_uring_get_sqe(ring_.get());
}

void io_ring::flush() {
  scheduled_ = false;
  // Reads and streams that queue while this runs (a connection that served what it read, a
  // writer released by a finished send) go with the next flush.
  recvs_flushing_.swap(recvs_);
  flushing_.swap(queued_);
  for (auto* r : recvs_flushing_) {
    if (r == nullptr) continue;
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr) {
      complete({nullptr, r}, -EINTR);  // its reader reads on its own
      continue;
    }
    io_uring_prep_recv(sqe, r->fd, r->buffer, r->size, MSG_DONTWAIT);
    io_uring_sqe_set_data64(sqe, batch_.size());
    batch_.push_back({nullptr, r});
  }
  for (auto* s : flushing_) {
    if (s == nullptr) continue;
    auto bytes = s->begin_send();
    if (bytes.size() == 0) continue;
    io_uring_sqe* sqe = next_sqe();
    if (sqe == nullptr) {
      s->end_send(-EAGAIN);  // the stream's own write path
      continue;
    }
    io_uring_prep_send(sqe, s->ring_fd(), bytes.begin(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    io_uring_sqe_set_data64(sqe, batch_.size());
    batch_.push_back({s, nullptr});
  }
  if (!batch_.empty()) submit_and_complete();
  recvs_flushing_.clear();
  flushing_.clear();
}

void io_ring::complete(const entry& e, long result) {
  if (e.stream != nullptr) {
    e.stream->end_send(result);
    return;
  }
  // Settled now, resolved, not run: its reader continues as an event of its own.
  recv_op& op = *e.recv;
  for (auto& q : recvs_flushing_)
    if (q == &op) q = nullptr;
  if (op.settle) {
    KJ_IF_MAYBE (error, kj::runCatchingExceptions([&] { result = op.settle(result); })) {
      op.fulfiller.reject(kj::mv(*error));
      return;
    }
  }
  op.fulfiller.fulfill(kj::mv(result));
}

void io_ring::submit_and_complete() {
  const auto n = static_cast<unsigned>(batch_.size());
  int submitted;
  do submitted = io_uring_submit(ring_.get());
  while (submitted == -EINTR);
  bump(stats_->enters, 1);
  if (submitted < 0) submitted = 0;
  if (static_cast<unsigned>(submitted) < n) {
    // The kernel took fewer than it was given (out of memory or resources): the rest stay
    // in the ring unsubmitted, pointing at the streams' buffers, so the ring is never
    // entered again; every connection reads and sends on its own from now on.
    spdlog::warn(
        "cellar-server: io_uring took {} of {} reads and sends; connections use read(2) and send(2) from "
        "now on",
        submitted, n);
    broken_ = true;
  }
  std::vector<bool> done(n, false);
  std::uint64_t sends = 0, recvs = 0;
  for (unsigned got = 0; got < static_cast<unsigned>(submitted);) {
    io_uring_cqe* cqe = nullptr;
    // At once, as open() checked; should a completion still be missing, it comes soon
    // (nothing waits for its socket).
    int r = io_uring_peek_cqe(ring_.get(), &cqe);
    if (r == -EAGAIN) r = io_uring_wait_cqe(ring_.get(), &cqe);
    if (r == -EINTR) continue;
    if (r < 0 || cqe == nullptr) {
      // Calls in flight whose outcome cannot be read: making them again could send bytes
      // twice or lose what was read, so their connections fail instead.
      spdlog::warn(
          "cellar-server: reading io_uring's completions failed ({}); connections use read(2) and send(2) "
          "from now on",
          std::strerror(-r));
      broken_ = true;
      for (unsigned i = 0; i < static_cast<unsigned>(submitted); ++i)
        if (!done[i]) {
          done[i] = true;
          complete(batch_[i], -EIO);
        }
      break;
    }
    const auto i = io_uring_cqe_get_data64(cqe);
    const long res = cqe->res;
    io_uring_cqe_seen(ring_.get(), cqe);
    if (i >= n || done[i]) continue;
    done[i] = true;
    ++got;
    ++(batch_[i].stream != nullptr ? sends : recvs);
    complete(batch_[i], res);
  }
  // Not submitted: each makes its call on its own (a read as read(2), a send as send(2)).
  for (unsigned i = 0; i < n; ++i)
    if (!done[i]) complete(batch_[i], batch_[i].stream != nullptr ? -EAGAIN : -EINTR);
  bump(stats_->sends, sends);
  bump(stats_->recvs, recvs);
  batch_.clear();
}

}  // namespace cellar::rpc
