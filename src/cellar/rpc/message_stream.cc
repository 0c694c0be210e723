#include "rpc/message_stream.h"

#include <capnp/serialize.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "rpc/frames.h"
#include "rpc/io_ring.h"
#include "rpc/socket_stream.h"

namespace cellar::rpc {

buffered_message_stream::buffered_message_stream(kj::AsyncIoStream& inner, std::size_t read_chunk,
                                                 std::size_t max_pending)
    : inner_(inner),
      socket_(dynamic_cast<socket_stream*>(&inner)),
      read_chunk_(read_chunk),
      max_pending_(max_pending),
      in_((read_chunk + sizeof(capnp::word) - 1) / sizeof(capnp::word)),
      tasks_(*this) {}

buffered_message_stream::~buffered_message_stream() noexcept {
  if (ring_ != nullptr && flush_scheduled_) ring_->forget(*this);
}

void buffered_message_stream::use_ring(io_ring& ring) {
  KJ_REQUIRE(socket_ != nullptr, "only a plain socket's stream goes through io_uring");
  KJ_REQUIRE(!flush_scheduled_ && !write_in_progress_, "use_ring comes before the first write");
  ring_ = &ring;
}

int buffered_message_stream::ring_fd() const { return KJ_ASSERT_NONNULL(socket_->getFd()); }

kj::ArrayPtr<const unsigned char> buffered_message_stream::begin_send() {
  flush_scheduled_ = false;
  if (!take_pending()) return nullptr;
  return kj::arrayPtr(writing_.data(), writing_.size());
}

void buffered_message_stream::end_send(long result) {
  // All, part or none (the socket's buffer was full): the rest waits for it to become
  // writable, as after write_now.
  if (result >= 0) return continue_write(static_cast<std::size_t>(result));
  if (result == -EAGAIN || result == -EWOULDBLOCK || result == -EINTR) return continue_write(0);
  KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { KJ_FAIL_SYSCALL("send", static_cast<int>(-result)); })) {
    taskFailed(kj::mv(*e));
  }
}

std::size_t buffered_message_stream::complete_message(const capnp::ReaderOptions& options) const {
  return frame_size(bytes() + in_pos_, in_end_ - in_pos_, options);
}

kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> buffered_message_stream::tryReadMessage(
    kj::ArrayPtr<kj::AutoCloseFd>, capnp::ReaderOptions options, kj::ArrayPtr<capnp::word>) {
  // A malformed message is a broken promise, never an exception out of this call.
  return kj::evalNow([&] { return read_buffered(options); });
}

kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> buffered_message_stream::read_buffered(
    capnp::ReaderOptions options) {
  if (const auto n = complete_message(options)) {
    // Copy the message out so the reader owns aligned memory independent of the buffer.
    auto words = kj::heapArray<capnp::word>(n / sizeof(capnp::word));
    std::memcpy(words.begin(), bytes() + in_pos_, n);
    in_pos_ += n;
    if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
    auto reader = kj::heap<capnp::FlatArrayMessageReader>(words.asPtr(), options).attach(kj::mv(words));
    return kj::Maybe<capnp::MessageReaderAndFds>(capnp::MessageReaderAndFds{kj::mv(reader), nullptr});
  }
  return read_more(options);
}

kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> buffered_message_stream::read_more(capnp::ReaderOptions options) {
  return read_some().then([this, options](bool more) -> kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> {
    if (!more) return kj::Maybe<capnp::MessageReaderAndFds>(nullptr);
    return read_buffered(options);
  });
}

void buffered_message_stream::make_room() {
  // Move the unconsumed bytes to the front (the buffer's start, so messages stay
  // word-aligned: every message is a whole number of words), grow for a message bigger
  // than the buffer.
  if (in_pos_ > 0) {
    std::memmove(bytes(), bytes() + in_pos_, in_end_ - in_pos_);
    in_end_ -= in_pos_;
    in_pos_ = 0;
  }
  if (in_end_ == in_bytes()) in_.resize(in_.size() * 2);
  if (in_end_ == 0 && in_bytes() > 4 * read_chunk_) {
    in_.resize(read_chunk_ / sizeof(capnp::word));
  }
}

kj::Promise<std::size_t> buffered_message_stream::read_raw() {
  make_room();
  return inner_.tryRead(bytes() + in_end_, 1, in_bytes() - in_end_).then([this](std::size_t n) {
    in_end_ += n;
    progress_ += n;
    return n;
  });
}

kj::Promise<bool> buffered_message_stream::read_some() {
  return read_raw().then([this](std::size_t n) {
    if (n == 0 && in_end_ != in_pos_) KJ_FAIL_REQUIRE("premature EOF in the middle of a message");
    return n > 0;
  });
}

int buffered_message_stream::read_now() {
  KJ_REQUIRE(socket_ != nullptr, "read_now needs a plain socket");
  make_room();
  const ssize_t n = socket_->read_now(bytes() + in_end_, in_bytes() - in_end_);
  return n < 0 ? -1 : took(static_cast<std::size_t>(n));
}

int buffered_message_stream::took(std::size_t n) {
  if (n == 0) {
    if (in_end_ != in_pos_) KJ_FAIL_REQUIRE("premature EOF in the middle of a message");
    return 0;
  }
  in_end_ += n;
  progress_ += n;
  return 1;
}

kj::Promise<int> buffered_message_stream::read_ring() {
  KJ_REQUIRE(ring_ != nullptr, "read_ring needs use_ring");
  if (socket_->known_empty()) return -1;
  make_room();
  // The buffer stays as it is until the read resolves: nothing else reads this stream
  // meanwhile (its one reader waits on this promise).
  const std::size_t room = in_bytes() - in_end_;
  // Settled inside the ring's flush: an empty or short read registers the socket's next
  // readable edge there, before kj looks at epoll again (io_ring::recv).
  auto settle = [this, room](long result) -> long {
    if (result == -EINTR) return result;  // not made: read(2) below
    return socket_->settle_read(result, room);
  };
  return ring_->recv(ring_fd(), bytes() + in_end_, room, settle).then([this](long n) -> int {
    if (n == -EINTR) return read_now();
    return n < 0 ? -1 : took(static_cast<std::size_t>(n));
  });
}

kj::Promise<void> buffered_message_stream::when_readable() {
  KJ_REQUIRE(socket_ != nullptr, "when_readable needs a plain socket");
  return socket_->when_readable();
}

kj::Promise<kj::ArrayPtr<const unsigned char>> buffered_message_stream::peek(std::size_t n) {
  if (in_end_ - in_pos_ >= n) return kj::arrayPtr<const unsigned char>(bytes() + in_pos_, n);
  return read_raw().then([this, n](std::size_t got) -> kj::Promise<kj::ArrayPtr<const unsigned char>> {
    if (got == 0) return kj::arrayPtr<const unsigned char>(bytes() + in_pos_, in_end_ - in_pos_);
    return peek(n);
  });
}

void buffered_message_stream::skip(std::size_t n) {
  KJ_REQUIRE(n <= in_end_ - in_pos_);
  in_pos_ += n;
  if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
}

kj::Maybe<kj::ArrayPtr<const capnp::word>> buffered_message_stream::take_buffered(const capnp::ReaderOptions& options) {
  const auto n = complete_message(options);
  if (n == 0) return nullptr;
  KJ_REQUIRE(in_pos_ % sizeof(capnp::word) == 0, "messages must start at a word boundary");
  auto words = kj::arrayPtr(in_.data() + in_pos_ / sizeof(capnp::word), n / sizeof(capnp::word));
  in_pos_ += n;
  if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
  return words.asConst();
}

void buffered_message_stream::append(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) {
  KJ_REQUIRE(segments.size() > 0, "a message has at least one segment");
  append_segments(pending_, segments);
}

void buffered_message_stream::schedule_flush() {
  if (!flush_scheduled_ && ring_ != nullptr) {
    flush_scheduled_ = true;
    ring_->queue(*this);
  } else if (!flush_scheduled_) {
    flush_scheduled_ = true;
    tasks_.add(kj::evalLast([this] {
      flush_scheduled_ = false;
      start_write();
    }));
  }
}

kj::Maybe<kj::Promise<void>> buffered_message_stream::wait_for_room() {
  if (pending_.size() + writing_.size() <= max_pending_) return nullptr;
  auto paf = kj::newPromiseAndFulfiller<void>();
  waiting_.push_back(kj::mv(paf.fulfiller));
  return kj::mv(paf.promise);
}

kj::Promise<void> buffered_message_stream::after_append() {
  schedule_flush();
  return when_room();
}

kj::Promise<void> buffered_message_stream::when_room() {
  KJ_IF_MAYBE (e, write_error_) {
    return kj::cp(*e);
  }
  KJ_IF_MAYBE (p, wait_for_room()) {
    return kj::mv(*p);
  }
  return kj::READY_NOW;
}

kj::Promise<void> buffered_message_stream::writeMessage(kj::ArrayPtr<const int> fds,
                                                        kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) {
  KJ_REQUIRE(fds.size() == 0, "this stream cannot carry file descriptors");
  KJ_IF_MAYBE (e, write_error_) {
    return kj::cp(*e);
  }
  if (!room_for_more()) return kj::cp(KJ_ASSERT_NONNULL(write_error_));
  append(segments);
  return after_append();
}

kj::Promise<void> buffered_message_stream::writeMessages(
    kj::ArrayPtr<kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>>> messages) {
  KJ_IF_MAYBE (e, write_error_) {
    return kj::cp(*e);
  }
  if (!room_for_more()) return kj::cp(KJ_ASSERT_NONNULL(write_error_));
  for (auto& m : messages) append(m);
  return after_append();
}

bool buffered_message_stream::take_pending() {
  if (write_in_progress_ || pending_.empty() || write_error_ != nullptr) return false;
  writing_.swap(pending_);
  write_in_progress_ = true;
  return true;
}

void buffered_message_stream::continue_write(std::size_t sent) {
  if (sent == writing_.size()) return finish_write();
  tasks_.add(inner_.write(writing_.data() + sent, writing_.size() - sent).then([this] { finish_write(); }));
}

void buffered_message_stream::start_write() {
  if (!take_pending()) return;
  // A plain socket usually takes the whole write at once (one send(2), no promise); what
  // it does not take is written as on any stream. Called within tasks_ (the flush, or the
  // end of the previous write), so a failed send fails the stream as a failed write does.
  continue_write(socket_ != nullptr ? socket_->write_now(writing_.data(), writing_.size()) : 0);
}

void buffered_message_stream::finish_write() {
  write_in_progress_ = false;
  progress_ += writing_.size();
  writing_.clear();
  if (writing_.capacity() > 4 * read_chunk_) writing_.shrink_to_fit();
  if (!pending_.empty()) {
    start_write();
    if (pending_.size() + writing_.size() > max_pending_) return;
  }
  for (auto& w : waiting_) w->fulfill();
  waiting_.clear();
  if (!write_in_progress_)
    KJ_IF_MAYBE (d, drained_) {
      (*d)->fulfill();
      drained_ = nullptr;
    }
}

kj::Promise<void> buffered_message_stream::when_unsent_exceeds(std::uint64_t max_unsent,
                                                               std::function<void(std::uint64_t)> report) {
  max_unsent_ = max_unsent;
  if (max_unsent == 0) return kj::NEVER_DONE;
  report_unsent_ = std::move(report);
  auto paf = kj::newPromiseAndFulfiller<void>();
  close_unsent_ = kj::mv(paf.fulfiller);
  return kj::mv(paf.promise);
}

bool buffered_message_stream::room_for_more() {
  const std::uint64_t unsent = pending_.size() + writing_.size();
  if (max_unsent_ == 0 || unsent < max_unsent_) return true;
  write_error_ = KJ_EXCEPTION(DISCONNECTED, "the peer does not read what is sent to it", unsent, max_unsent_);
  unsent_exceeded_ = true;
  for (auto& w : waiting_) w->reject(kj::cp(KJ_ASSERT_NONNULL(write_error_)));
  waiting_.clear();
  if (report_unsent_) report_unsent_(unsent);
  KJ_IF_MAYBE (f, close_unsent_) {
    (*f)->fulfill();
    close_unsent_ = nullptr;
  }
  return false;
}

void buffered_message_stream::taskFailed(kj::Exception&& e) {
  write_in_progress_ = false;
  for (auto& w : waiting_) w->reject(kj::cp(e));
  waiting_.clear();
  KJ_IF_MAYBE (d, drained_) {
    (*d)->reject(kj::cp(e));
    drained_ = nullptr;
  }
  write_error_ = kj::mv(e);
}

kj::Maybe<int> buffered_message_stream::getSendBufferSize() {
  int size = 0;
  unsigned len = sizeof size;
  KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] { inner_.getsockopt(SOL_SOCKET, SO_SNDBUF, &size, &len); })) {
    return nullptr;
  }
  return size;
}

kj::Promise<void> buffered_message_stream::end() {
  KJ_IF_MAYBE (e, write_error_) {
    return kj::cp(*e);
  }
  if (!write_in_progress_ && pending_.empty()) {
    inner_.shutdownWrite();
    return kj::READY_NOW;
  }
  auto paf = kj::newPromiseAndFulfiller<void>();
  drained_ = kj::mv(paf.fulfiller);
  return paf.promise.then([this] { inner_.shutdownWrite(); });
}

}  // namespace cellar::rpc

namespace cellar::rpc {

client_channel::client_channel(kj::Own<kj::AsyncIoStream> stream, capnp::ReaderOptions options)
    : stream_(kj::mv(stream)),
      messages_(*stream_),
      network_(messages_, capnp::rpc::twoparty::Side::CLIENT, options),
      rpc_(capnp::makeRpcClient(network_)) {}

wire::Login::Client client_channel::login() {
  capnp::word scratch[4]{};
  capnp::MallocMessageBuilder message(scratch);
  auto vat = message.getRoot<capnp::rpc::twoparty::VatId>();
  vat.setSide(capnp::rpc::twoparty::Side::SERVER);
  return rpc_.bootstrap(vat).castAs<wire::Login>();
}

}  // namespace cellar::rpc
