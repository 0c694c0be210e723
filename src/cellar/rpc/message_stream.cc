#include "rpc/message_stream.h"

#include <capnp/serialize.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace cellar::rpc {

namespace {

// capnp's own limit (serialize.c++): more segments than this is a malformed message.
constexpr std::uint32_t max_segments = 512;

std::uint32_t load_u32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);  // the wire format is little-endian, as is every target we build for
  return v;
}

void store_u32(std::vector<unsigned char>& out, std::uint32_t v) {
  unsigned char b[4];
  std::memcpy(b, &v, sizeof v);
  out.insert(out.end(), b, b + 4);
}

}  // namespace

buffered_message_stream::buffered_message_stream(kj::AsyncIoStream& inner, std::size_t read_chunk,
                                                 std::size_t max_pending)
    : inner_(inner), read_chunk_(read_chunk), max_pending_(max_pending), in_(read_chunk), tasks_(*this) {}

buffered_message_stream::~buffered_message_stream() noexcept = default;

std::size_t buffered_message_stream::complete_message(const capnp::ReaderOptions& options) const {
  const std::size_t avail = in_end_ - in_pos_;
  if (avail < 8) return 0;
  const unsigned char* p = in_.data() + in_pos_;
  const std::uint64_t segments = std::uint64_t{load_u32(p)} + 1;
  if (segments > max_segments) KJ_FAIL_REQUIRE("message has too many segments", segments);
  const std::size_t header = static_cast<std::size_t>((segments / 2 + 1) * 8);
  if (avail < header) return 0;
  std::uint64_t words = 0;
  for (std::uint64_t i = 0; i < segments; ++i) words += load_u32(p + 4 + 4 * i);
  if (words > options.traversalLimitInWords)
    KJ_FAIL_REQUIRE("message is too large; see capnp::ReaderOptions", words * 8, options.traversalLimitInWords * 8);
  const std::size_t total = header + static_cast<std::size_t>(words) * 8;
  return avail < total ? 0 : total;
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
    std::memcpy(words.begin(), in_.data() + in_pos_, n);
    in_pos_ += n;
    if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
    auto reader = kj::heap<capnp::FlatArrayMessageReader>(words.asPtr(), options).attach(kj::mv(words));
    return kj::Maybe<capnp::MessageReaderAndFds>(capnp::MessageReaderAndFds{kj::mv(reader), nullptr});
  }
  return read_more(options);
}

kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> buffered_message_stream::read_more(capnp::ReaderOptions options) {
  // Make room: move the unconsumed bytes to the front, grow for a message bigger than the buffer.
  if (in_pos_ > 0) {
    std::memmove(in_.data(), in_.data() + in_pos_, in_end_ - in_pos_);
    in_end_ -= in_pos_;
    in_pos_ = 0;
  }
  if (in_end_ == in_.size()) in_.resize(in_.size() * 2);
  if (in_end_ == 0 && in_.size() > 4 * read_chunk_) {
    in_.resize(read_chunk_);
    in_.shrink_to_fit();
  }
  return inner_.tryRead(in_.data() + in_end_, 1, in_.size() - in_end_)
      .then([this, options](std::size_t n) -> kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> {
        if (n == 0) {
          if (in_end_ == in_pos_) return kj::Maybe<capnp::MessageReaderAndFds>(nullptr);
          KJ_FAIL_REQUIRE("premature EOF in the middle of a message");
        }
        in_end_ += n;
        return read_buffered(options);
      });
}

void buffered_message_stream::append(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) {
  KJ_REQUIRE(segments.size() > 0, "a message has at least one segment");
  store_u32(pending_, static_cast<std::uint32_t>(segments.size() - 1));
  for (auto& s : segments) store_u32(pending_, static_cast<std::uint32_t>(s.size()));
  if (segments.size() % 2 == 0) store_u32(pending_, 0);
  for (auto& s : segments) {
    auto b = s.asBytes();
    pending_.insert(pending_.end(), b.begin(), b.end());
  }
}

kj::Promise<void> buffered_message_stream::after_append() {
  if (!flush_scheduled_) {
    flush_scheduled_ = true;
    tasks_.add(kj::evalLast([this] {
      flush_scheduled_ = false;
      start_write();
    }));
  }
  if (pending_.size() + writing_.size() <= max_pending_) return kj::READY_NOW;
  auto paf = kj::newPromiseAndFulfiller<void>();
  waiting_.push_back(kj::mv(paf.fulfiller));
  return kj::mv(paf.promise);
}

kj::Promise<void> buffered_message_stream::writeMessage(kj::ArrayPtr<const int> fds,
                                                        kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) {
  KJ_REQUIRE(fds.size() == 0, "this stream cannot carry file descriptors");
  KJ_IF_MAYBE(e, write_error_) { return kj::cp(*e); }
  append(segments);
  return after_append();
}

kj::Promise<void> buffered_message_stream::writeMessages(
    kj::ArrayPtr<kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>>> messages) {
  KJ_IF_MAYBE(e, write_error_) { return kj::cp(*e); }
  for (auto& m : messages) append(m);
  return after_append();
}

void buffered_message_stream::start_write() {
  if (write_in_progress_ || pending_.empty() || write_error_ != nullptr) return;
  writing_.swap(pending_);
  write_in_progress_ = true;
  tasks_.add(inner_.write(writing_.data(), writing_.size()).then([this] {
    write_in_progress_ = false;
    writing_.clear();
    if (writing_.capacity() > 4 * read_chunk_) writing_.shrink_to_fit();
    if (!pending_.empty()) {
      start_write();
      if (pending_.size() + writing_.size() > max_pending_) return;
    }
    for (auto& w : waiting_) w->fulfill();
    waiting_.clear();
    if (!write_in_progress_) KJ_IF_MAYBE(d, drained_) {
        (*d)->fulfill();
        drained_ = nullptr;
      }
  }));
}

void buffered_message_stream::taskFailed(kj::Exception&& e) {
  write_in_progress_ = false;
  for (auto& w : waiting_) w->reject(kj::cp(e));
  waiting_.clear();
  KJ_IF_MAYBE(d, drained_) {
    (*d)->reject(kj::cp(e));
    drained_ = nullptr;
  }
  write_error_ = kj::mv(e);
}

kj::Maybe<int> buffered_message_stream::getSendBufferSize() {
  int size = 0;
  unsigned len = sizeof size;
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&] { inner_.getsockopt(SOL_SOCKET, SO_SNDBUF, &size, &len); })) {
    return nullptr;
  }
  return size;
}

kj::Promise<void> buffered_message_stream::end() {
  KJ_IF_MAYBE(e, write_error_) { return kj::cp(*e); }
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
