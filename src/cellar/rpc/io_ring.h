// The reads and the replies of one event-loop turn, made with one io_uring_enter(2) each
// instead of one read(2) and one send(2) per connection.
//
// Without pipelining every request is read by a read(2) and answered by a send(2) of its
// own, and every entry into the kernel has a fixed cost before any TCP work (a large one on
// a kernel that isolates its page tables). The event loop learns from one epoll_wait which
// connections have bytes, and serves them all before it sends, so their reads and their
// replies can each go together: a connection whose socket became readable asks the ring for
// its read (recv), a stream with replies queues itself (queue), and at the end of the turn
// (kj::evalLast) the ring makes one non-blocking recv or send for each and submits them all
// at once. The kernel does each at once (MSG_DONTWAIT: a recv that finds nothing or a send
// that finds the socket's buffer full completes with EAGAIN instead of waiting), so every
// completion is read in the same call. A read then resolves its promise (the connection
// serves what came, and its replies go with the next flush); a stream left with unsent
// bytes waits for its socket as it would after a short send(2).
//
// Only for plain sockets on the server (a TLS stream encrypts in user space); cellar's
// clients keep read(2) and send(2). The load generator batches its own reads and sends the
// same way for every server it drives (examples/loadgen/uring_io.h). One ring per event
// loop thread; not thread-safe.
#pragma once

#include <kj/async.h>
#include <kj/memory.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

struct io_uring;
struct io_uring_sqe;

namespace cellar::rpc {

class buffered_message_stream;

// What a ring has done, readable from any thread (the server's loop_info).
struct io_ring_stats {
  std::atomic<std::uint64_t> enters{0};  // io_uring_enter calls made
  std::atomic<std::uint64_t> sends{0};   // the sends they carried
  std::atomic<std::uint64_t> recvs{0};   // and the reads
};

class io_ring final : private kj::TaskSet::ErrorHandler {
 public:
  // A ring for the calling thread's event loop; null when the kernel refuses io_uring (older
  // than 5.6, or forbidden by a seccomp filter, as in some containers) or does not complete
  // a non-blocking send or recv at once (checked here on a socket pair): callers then read
  // and send as before.
  // `stats`, if given, must outlive the ring. `entries`: the most calls one io_uring_enter
  // carries (a turn with more makes several).
  static kj::Own<io_ring> open(io_ring_stats* stats = nullptr, unsigned entries = 256);
  // Use open(): `ring` is set up.
  io_ring(kj::Own<io_uring> ring, io_ring_stats* stats);
  ~io_ring() noexcept;
  io_ring(const io_ring&) = delete;
  io_ring& operator=(const io_ring&) = delete;

  // `s` has bytes to send: they go with the others' at the end of this turn. A stream
  // queues itself once per turn (buffered_message_stream::after_append).
  void queue(buffered_message_stream& s);
  // `s` is going away: it is not sent.
  void forget(buffered_message_stream& s);
  // A recv of up to `size` bytes from `fd` into `buffer`, made with the turn's others at
  // its end: resolves with the bytes read, 0 at the end of the stream, or -errno (-EAGAIN:
  // nothing to read; -EINTR: the ring could not make it, read(2) instead). `buffer` must
  // stay valid until the promise resolves or is dropped; a dropped read is not made.
  // `settle`, if given, runs inside the flush, as soon as the outcome is known, and the
  // promise resolves with what it returns (or rejects with what it throws): a reader that
  // found the socket empty registers for the socket's next readable edge there, before kj
  // next looks at epoll (kj polls epoll between turns; an edge reported while nobody
  // waits for it is lost, and the reader would wait for bytes already in its socket).
  using settle_fn = std::function<long(long result)>;
  kj::Promise<long> recv(int fd, void* buffer, std::size_t size, settle_fn settle = nullptr);

  // io_uring_enter calls made, and the sends and reads they carried.
  std::uint64_t enters() const { return stats_->enters.load(std::memory_order_relaxed); }
  std::uint64_t sends() const { return stats_->sends.load(std::memory_order_relaxed); }
  std::uint64_t recvs() const { return stats_->recvs.load(std::memory_order_relaxed); }

 private:
  struct recv_op;  // a recv's promise, queued until the flush
  // One submission: a stream's send, or a recv.
  struct entry {
    buffered_message_stream* stream;
    recv_op* recv;
  };
  void flush();
  // The next free submission slot, after submitting what is queued if the ring is full;
  // null if the ring is broken.
  struct io_uring_sqe* next_sqe();
  // Submits batch_, hands each its completion, empties batch_.
  void submit_and_complete();
  void complete(const entry& e, long result);
  void taskFailed(kj::Exception&& e) override;
  void schedule();

  kj::Own<io_uring> ring_;
  std::vector<buffered_message_stream*> queued_;    // to send at this turn's flush; null: forgotten
  std::vector<buffered_message_stream*> flushing_;  // the ones the running flush sends
  std::vector<recv_op*> recvs_;                     // to read at this turn's flush; null: dropped
  std::vector<recv_op*> recvs_flushing_;            // the ones the running flush reads
  std::vector<entry> batch_;                        // submitted together; index = user data
  bool scheduled_ = false;
  bool broken_ = false;  // the kernel refused a submission: streams read and send on their own
  kj::TaskSet tasks_;
  io_ring_stats own_stats_;
  io_ring_stats* stats_;  // written by this thread only
};

}  // namespace cellar::rpc
