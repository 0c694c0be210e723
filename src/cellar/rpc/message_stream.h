// A Cap'n Proto message stream over a socket that reads in large chunks and coalesces
// writes.
//
// capnp's own AsyncIoMessageStream reads every message with two or three read(2) calls
// (first word, segment table, segments) and writes every message with its own writev(2):
// several system calls per request. This stream reads up to `read_chunk` bytes per call and
// serves every message already in its buffer without a syscall, and gathers the messages
// written during one event-loop turn into one write, sent when the loop has nothing else to
// run (kj::evalLast). Writers are told to wait only when `max_pending` bytes are queued.
#pragma once

#include <capnp/serialize-async.h>
#include <kj/async-io.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

namespace cellar::rpc {

class socket_stream;
class io_ring;

// A growable array of Cap'n Proto words, for read buffers (a message read in place must
// be word-aligned). Not std::vector<capnp::word>: a word can be neither copied nor moved,
// and only GCC's library grows such a vector (clang's fuzz build refuses it).
class word_buffer {
 public:
  explicit word_buffer(std::size_t words) : a_(kj::heapArray<capnp::word>(words)) {}
  capnp::word* data() { return a_.begin(); }
  const capnp::word* data() const { return a_.begin(); }
  std::size_t size() const { return a_.size(); }
  // Keeps the first words that fit.
  void resize(std::size_t words) {
    auto next = kj::heapArray<capnp::word>(words);
    std::memcpy(static_cast<void*>(next.begin()), a_.begin(), std::min(words, a_.size()) * sizeof(capnp::word));
    a_ = kj::mv(next);
  }

 private:
  kj::Array<capnp::word> a_;
};

class buffered_message_stream final : public capnp::MessageStream, private kj::TaskSet::ErrorHandler {
 public:
  explicit buffered_message_stream(kj::AsyncIoStream& inner, std::size_t read_chunk = 64 * 1024,
                                   std::size_t max_pending = 4 * 1024 * 1024);
  ~buffered_message_stream() noexcept;

  using capnp::MessageStream::tryReadMessage;
  using capnp::MessageStream::writeMessage;
  using capnp::MessageStream::writeMessages;

  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> tryReadMessage(kj::ArrayPtr<kj::AutoCloseFd> fdSpace,
                                                                    capnp::ReaderOptions options,
                                                                    kj::ArrayPtr<capnp::word> scratchSpace) override;
  kj::Promise<void> writeMessage(kj::ArrayPtr<const int> fds,
                                 kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) override;
  kj::Promise<void> writeMessages(kj::ArrayPtr<kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>>> messages) override;
  kj::Maybe<int> getSendBufferSize() override;
  kj::Promise<void> end() override;

  // For a protocol check before the first message: resolves with the first `n` bytes read
  // (fewer only if the peer closed first); they stay unread until skip().
  kj::Promise<kj::ArrayPtr<const unsigned char>> peek(std::size_t n);
  void skip(std::size_t n);
  // The next complete message already read, in place: valid until the next read on this
  // stream. nullptr when more bytes are needed (read_some); throws for a malformed or
  // oversized message. Lets a caller serve every message of a read without a promise each.
  kj::Maybe<kj::ArrayPtr<const capnp::word>> take_buffered(const capnp::ReaderOptions& options);
  // Reads more bytes; resolves false at the end of the stream (throws if it ends inside a
  // message).
  kj::Promise<bool> read_some();
  // The direct path, for a stream over a plain socket (direct(); not TLS): a server loop
  // that reads and serves what it read without a promise per step.
  //   read_now(): one read(2) into the buffer: 1 when bytes came, 0 at the end of the
  //     stream (throws if it ends inside a message), -1 when the socket is empty; then
  //     when_readable() resolves at its next readable edge.
  //   writers_held(): a writer would be told to wait (too much unsent) or the stream has
  //     failed: the loop must then wait on what writeMessage returned.
  bool direct() const { return socket_ != nullptr; }
  int read_now();
  kj::Promise<void> when_readable();
  // The error that failed the stream's writes, if one did.
  const kj::Maybe<kj::Exception>& write_error() const { return write_error_; }
  bool writers_held() const { return write_error_ != nullptr || pending_.size() + writing_.size() > max_pending_; }
  // Queues bytes in place, for a caller that writes its own frames (the frames session):
  // fill(std::vector<unsigned char>& out) appends whole frames to `out`, the queue itself,
  // and returns true, or appends nothing and returns false. Returns what fill returned
  // (true, without calling it, when the stream has failed). `held` becomes the stream's
  // error when it has failed, and a promise that resolves once there is room when the
  // queue is over its bound; otherwise it is left as it is. So a write that finds room
  // makes no promise: a ready one would be a heap node for every reply.
  template <class Fill>
  bool queue(Fill&& fill, kj::Maybe<kj::Promise<void>>& held) {
    if (write_error_ != nullptr || !room_for_more()) {  // room_for_more() sets the error
      held = kj::Promise<void>(kj::cp(KJ_ASSERT_NONNULL(write_error_)));
      return true;
    }
    if (!fill(pending_)) return false;
    schedule_flush();
    KJ_IF_MAYBE (p, wait_for_room()) {
      held = kj::mv(*p);
    }
    return true;
  }
  // Resolves once the queue is within its bound (at once if it is); rejects if the stream
  // has failed.
  kj::Promise<void> when_room();

  // Bounds the bytes queued and not yet taken by the socket (a peer that does not read):
  // a write that finds `max_unsent` bytes or more queued fails, every later one too;
  // `report` is called then, at once, with the bytes queued, and the promise resolves. 0:
  // no bound (the promise never resolves). One message larger than the bound is accepted
  // when less is queued.
  kj::Promise<void> when_unsent_exceeds(std::uint64_t max_unsent, std::function<void(std::uint64_t)> report);
  bool unsent_exceeded() const { return unsent_exceeded_; }
  // Writers are never told to wait (for a user that does not wait anyway, as capnp's RPC
  // system, which would queue its messages where when_unsent_exceeds cannot see them).
  void never_hold_writers() { max_pending_ = SIZE_MAX; }
  // Bytes read plus bytes the socket has taken, since the stream was made: it grows while
  // the peer talks or reads (the idle timeout watches it).
  std::uint64_t progress() const { return progress_; }
  // For a stream over a plain socket (direct()), before its first write: each turn's
  // writes go out through `ring` (io_ring.h), with the other streams' of the loop, instead
  // of a send(2) of their own, and read_ring() reads through it. `ring` must outlive the
  // stream.
  void use_ring(io_ring& ring);
  bool has_ring() const { return ring_ != nullptr; }
  // read_now() through the ring (use_ring): the read goes with the loop's other reads and
  // sends in one io_uring_enter at the end of the turn; resolves with what read_now()
  // returns (at once with -1 when the socket is known to be empty).
  kj::Promise<int> read_ring();

 private:
  friend class io_ring;
  // The ring's side (io_ring::flush): the socket; the bytes to send now, taken as the
  // write in progress (empty: nothing to send); the send's result (bytes sent, or -errno:
  // what is left is written as after a short send(2), an error fails the stream).
  int ring_fd() const;
  kj::ArrayPtr<const unsigned char> begin_send();
  void end_send(long result);
  // read_now()'s bookkeeping after `n` bytes came into the buffer.
  int took(std::size_t n);

  // Bytes of the complete message at the front of the read buffer, 0 if more are needed
  // (throws for a malformed or oversized message).
  std::size_t complete_message(const capnp::ReaderOptions& options) const;
  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> read_buffered(capnp::ReaderOptions options);
  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> read_more(capnp::ReaderOptions options);
  void append(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments);
  kj::Promise<void> after_append();
  // The flush of what is queued, at the end of this loop turn (through the ring if any).
  void schedule_flush();
  // A promise of room when the queue is over its bound (writers wait on it), else null.
  kj::Maybe<kj::Promise<void>> wait_for_room();
  // Moves what is pending to the write in progress; false when there is nothing to write
  // now (a write is in progress, nothing is pending, or the stream has failed).
  bool take_pending();
  void start_write();
  // The socket took the first `sent` bytes of the write in progress: the rest is written
  // as on any stream (waiting for the socket), or the write is finished.
  void continue_write(std::size_t sent);
  void finish_write();  // the write in progress has been taken by the socket
  // False (and the stream failed) when `max_unsent_` bytes or more are queued.
  bool room_for_more();
  void taskFailed(kj::Exception&& e) override;

  kj::AsyncIoStream& inner_;
  // `inner_` when it is a plain socket: a write it takes at once needs no promise.
  socket_stream* const socket_;
  io_ring* ring_ = nullptr;
  const std::size_t read_chunk_;
  std::size_t max_pending_;
  std::uint64_t max_unsent_ = 0;
  std::uint64_t progress_ = 0;
  bool unsent_exceeded_ = false;
  std::function<void(std::uint64_t)> report_unsent_;
  kj::Maybe<kj::Own<kj::PromiseFulfiller<void>>> close_unsent_;

  kj::Promise<std::size_t> read_raw();  // reads into the buffer; 0 at the end of the stream
  void make_room();                     // before a read: room at the buffer's end
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(in_.data()); }
  const unsigned char* bytes() const { return reinterpret_cast<const unsigned char*>(in_.data()); }
  std::size_t in_bytes() const { return in_.size() * sizeof(capnp::word); }

  // Bytes read, not yet consumed, from byte in_pos_ to in_end_. Words, so that a message
  // (a whole number of words) taken in place is aligned.
  word_buffer in_;
  std::size_t in_pos_ = 0;
  std::size_t in_end_ = 0;

  std::vector<unsigned char> pending_;  // messages written, not yet handed to the socket
  std::vector<unsigned char> writing_;  // the bytes of the write in progress
  bool flush_scheduled_ = false;
  bool write_in_progress_ = false;
  kj::Maybe<kj::Exception> write_error_;
  std::vector<kj::Own<kj::PromiseFulfiller<void>>> waiting_;  // writers held back by max_pending
  kj::Maybe<kj::Own<kj::PromiseFulfiller<void>>> drained_;    // end() waiting for the last write
  kj::TaskSet tasks_;
};

}  // namespace cellar::rpc

#include <capnp/rpc-twoparty.h>

#include "cellar.capnp.h"

namespace cellar::rpc {

// The client end of one connection to cellar-server: the socket, the buffered message stream
// over it and the RPC system, torn down in the right order.
class client_channel {
 public:
  explicit client_channel(kj::Own<kj::AsyncIoStream> stream, capnp::ReaderOptions options = {});
  // The server's bootstrap capability.
  wire::Login::Client login();

 private:
  kj::Own<kj::AsyncIoStream> stream_;
  buffered_message_stream messages_;
  capnp::TwoPartyVatNetwork network_;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc_;
};

}  // namespace cellar::rpc
