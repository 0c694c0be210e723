// buffered_message_stream: framing of messages read in chunks, coalescing of writes,
// refusals of malformed input, and backpressure. Runs over socket pairs and kj's in-memory pipe.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/async-io.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cellar.capnp.h"
#include "rpc/frames.h"
#include "rpc/message_stream.h"

using cellar::rpc::buffered_message_stream;

namespace {

// Forwards to another stream and counts the write calls that reach it.
class counting_stream final : public kj::AsyncIoStream {
 public:
  explicit counting_stream(kj::AsyncIoStream& inner) : inner_(inner) {}
  std::size_t writes = 0;
  std::size_t bytes = 0;
  kj::Promise<std::size_t> tryRead(void* b, std::size_t min, std::size_t max) override {
    return inner_.tryRead(b, min, max);
  }
  kj::Promise<void> write(const void* b, std::size_t n) override {
    ++writes;
    bytes += n;
    return inner_.write(b, n);
  }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    ++writes;
    for (auto& p : pieces) bytes += p.size();
    return inner_.write(pieces);
  }
  kj::Promise<void> whenWriteDisconnected() override { return inner_.whenWriteDisconnected(); }
  void shutdownWrite() override { inner_.shutdownWrite(); }

 private:
  kj::AsyncIoStream& inner_;
};

// A status message whose text is `n` copies of a letter chosen by `i`; `first_segment_words`
// small forces several segments.
void fill(capnp::MallocMessageBuilder& b, unsigned i, std::size_t n) {
  auto s = b.initRoot<cellar::wire::Error>();
  s.setCode(static_cast<std::uint16_t>(i));
  s.setMessage(std::string(n, static_cast<char>('a' + i % 26)));
}

void check(capnp::MessageReader& r, unsigned i, std::size_t n) {
  auto s = r.getRoot<cellar::wire::Error>();
  CHECK(s.getCode() == static_cast<std::uint16_t>(i));
  CHECK(std::string(s.getMessage().cStr()) == std::string(n, static_cast<char>('a' + i % 26)));
}

std::size_t size_of(unsigned i) { return (i * 977) % 3000; }

}  // namespace

TEST_CASE("messages written in one turn arrive intact and leave in one write", "[rpc]") {
  auto io = kj::setupAsyncIo();
  auto pipe = io.provider->newTwoWayPipe();
  counting_stream counted(*pipe.ends[0]);
  buffered_message_stream writer(counted);
  buffered_message_stream reader(*pipe.ends[1], 256);  // a small chunk: messages straddle reads

  constexpr unsigned n = 60;
  std::vector<kj::Own<capnp::MallocMessageBuilder>> builders;
  kj::Vector<kj::Promise<void>> writes;
  for (unsigned i = 0; i < n; ++i) {
    // Tiny first segments make the longer messages multi-segment.
    builders.push_back(
        kj::heap<capnp::MallocMessageBuilder>(i % 2 ? 8u : 1024u, capnp::AllocationStrategy::FIXED_SIZE));
    fill(*builders.back(), i, size_of(i));
    writes.add(writer.writeMessage(*builders.back()));
  }
  CHECK(counted.writes == 0);  // nothing is sent before the loop runs out of other work
  for (unsigned i = 0; i < n; ++i) {
    auto r = reader.readMessage().wait(io.waitScope);
    check(*r, i, size_of(i));
  }
  kj::joinPromises(writes.releaseAsArray()).wait(io.waitScope);
  CHECK(counted.writes == 1);
  std::size_t expected = 0;
  for (auto& b : builders) expected += capnp::computeSerializedSizeInWords(*b) * sizeof(capnp::word);
  CHECK(counted.bytes == expected);
}

TEST_CASE("a message bigger than the read buffer is read whole", "[rpc]") {
  auto io = kj::setupAsyncIo();
  auto pipe = io.provider->newTwoWayPipe();
  buffered_message_stream writer(*pipe.ends[0]);
  buffered_message_stream reader(*pipe.ends[1], 128);
  capnp::MallocMessageBuilder b;
  fill(b, 7, 1 << 20);
  auto w = writer.writeMessage(b);
  auto r = reader.readMessage().wait(io.waitScope);
  check(*r, 7, 1 << 20);
  w.wait(io.waitScope);
}

TEST_CASE("a clean end of stream reads as no message; an end inside a message is an error", "[rpc]") {
  auto io = kj::setupAsyncIo();
  SECTION("clean") {
    auto pipe = io.provider->newTwoWayPipe();
    buffered_message_stream writer(*pipe.ends[0]);
    buffered_message_stream reader(*pipe.ends[1]);
    capnp::MallocMessageBuilder b;
    fill(b, 1, 10);
    writer.writeMessage(b).wait(io.waitScope);
    writer.end().wait(io.waitScope);
    auto first = reader.tryReadMessage().wait(io.waitScope);
    REQUIRE(first != nullptr);
    KJ_IF_MAYBE (m, first) {
      check(**m, 1, 10);
    }
    CHECK(reader.tryReadMessage().wait(io.waitScope) == nullptr);
  }
  SECTION("truncated") {
    auto pipe = io.provider->newTwoWayPipe();
    buffered_message_stream reader(*pipe.ends[1]);
    capnp::MallocMessageBuilder b;
    fill(b, 2, 100);
    auto flat = capnp::messageToFlatArray(b);
    auto bytes = flat.asBytes();
    pipe.ends[0]->write(bytes.begin(), bytes.size() - 8).wait(io.waitScope);
    pipe.ends[0]->shutdownWrite();
    CHECK_THROWS(reader.tryReadMessage().wait(io.waitScope));
  }
}

TEST_CASE("malformed and oversized messages are refused", "[rpc]") {
  auto io = kj::setupAsyncIo();
  auto pipe = io.provider->newTwoWayPipe();
  SECTION("too many segments") {
    buffered_message_stream reader(*pipe.ends[1]);
    std::uint32_t header[2] = {100000, 1};
    pipe.ends[0]->write(header, sizeof header).wait(io.waitScope);
    CHECK_THROWS(reader.tryReadMessage().wait(io.waitScope));
  }
  SECTION("a bad header behind a good message is a broken promise, not a throw") {
    buffered_message_stream reader(*pipe.ends[1]);
    capnp::MallocMessageBuilder b;
    fill(b, 6, 10);
    auto flat = capnp::messageToFlatArray(b);
    std::vector<unsigned char> bytes(flat.asBytes().begin(), flat.asBytes().end());
    const std::uint32_t bad[2] = {100000, 1};
    bytes.insert(bytes.end(), reinterpret_cast<const unsigned char*>(bad),
                 reinterpret_cast<const unsigned char*>(bad) + 8);
    pipe.ends[0]->write(bytes.data(), bytes.size()).wait(io.waitScope);
    check(*reader.readMessage().wait(io.waitScope), 6, 10);
    // The second header is already buffered: the refusal must still come as a promise.
    kj::Maybe<kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>>> next;
    CHECK_NOTHROW(next = reader.tryReadMessage(nullptr, capnp::ReaderOptions(), nullptr));
    KJ_IF_MAYBE (p, next) {
      CHECK_THROWS(p->wait(io.waitScope));
    }
  }
  SECTION("over the traversal limit") {
    buffered_message_stream writer(*pipe.ends[0]);
    buffered_message_stream reader(*pipe.ends[1]);
    capnp::MallocMessageBuilder b;
    fill(b, 3, 10000);
    auto w = writer.writeMessage(b);
    capnp::ReaderOptions small;
    small.traversalLimitInWords = 100;
    CHECK_THROWS(reader.tryReadMessage(small).wait(io.waitScope));
  }
}

TEST_CASE("writers wait once more than max_pending bytes are queued", "[rpc]") {
  auto io = kj::setupAsyncIo();
  auto pipe = kj::newTwoWayPipe();  // in memory: a write completes only when it is read
  buffered_message_stream writer(*pipe.ends[0], 64 * 1024, 1024);
  buffered_message_stream reader(*pipe.ends[1]);
  capnp::MallocMessageBuilder small, big;
  fill(small, 4, 10);
  fill(big, 5, 4000);
  auto first = writer.writeMessage(small);
  CHECK(first.poll(io.waitScope));  // under the limit: accepted at once
  auto second = writer.writeMessage(big);
  CHECK_FALSE(second.poll(io.waitScope));  // over it: held until the queue drains
  check(*reader.readMessage().wait(io.waitScope), 4, 10);
  check(*reader.readMessage().wait(io.waitScope), 5, 4000);
  second.wait(io.waitScope);
  first.wait(io.waitScope);
}

// queue(): the frames session's writes. Under the bound a write leaves the caller's promise
// as it is (none made); over it the promise waits until the queue drains; a fill that
// declines appends nothing; a failed stream hands its error over and calls no fill.
TEST_CASE("queue() makes a promise only when writers must wait", "[rpc]") {
  auto io = kj::setupAsyncIo();
  auto pipe = kj::newTwoWayPipe();
  buffered_message_stream writer(*pipe.ends[0], 64 * 1024, 1024);
  buffered_message_stream reader(*pipe.ends[1]);
  auto frame_of = [](int tag, std::size_t words) {
    capnp::MallocMessageBuilder b;
    fill(b, tag, words);
    std::vector<unsigned char> out;
    cellar::rpc::append_segments(out, b.getSegmentsForOutput());
    return out;
  };
  const auto small = frame_of(4, 10), big = frame_of(5, 4000);
  auto append = [](const std::vector<unsigned char>& bytes) {
    return [&bytes](std::vector<unsigned char>& out) {
      out.insert(out.end(), bytes.begin(), bytes.end());
      return true;
    };
  };
  kj::Maybe<kj::Promise<void>> held;
  CHECK(writer.queue(append(small), held));
  CHECK(held == nullptr);  // under the limit: nothing to wait for
  CHECK_FALSE(writer.queue([](std::vector<unsigned char>&) { return false; }, held));
  CHECK(held == nullptr);
  CHECK(writer.queue(append(big), held));
  KJ_IF_MAYBE (p, held) {
    CHECK_FALSE(p->poll(io.waitScope));  // over it: held until the queue drains
  } else {
    FAIL("a write over the bound made no promise");
  }
  CHECK_FALSE(writer.when_room().poll(io.waitScope));
  check(*reader.readMessage().wait(io.waitScope), 4, 10);
  check(*reader.readMessage().wait(io.waitScope), 5, 4000);
  KJ_ASSERT_NONNULL(held).wait(io.waitScope);
  writer.when_room().wait(io.waitScope);
}

TEST_CASE("queue() on a failed stream hands over its error and writes nothing", "[rpc]") {
  auto io = kj::setupAsyncIo();
  auto pipe = kj::newTwoWayPipe();
  buffered_message_stream writer(*pipe.ends[0], 64 * 1024, 1 << 20);
  auto overflow = writer.when_unsent_exceeds(1, [](std::uint64_t) {});  // any queued byte is too many
  kj::Maybe<kj::Promise<void>> held;
  const std::vector<unsigned char> frame(64, 0);
  auto append = [&frame](std::vector<unsigned char>& out) {
    out.insert(out.end(), frame.begin(), frame.end());
    return true;
  };
  CHECK(writer.queue(append, held));  // queued: nothing was queued before it
  bool called = false;
  CHECK(writer.queue(
      [&](std::vector<unsigned char>& out) {
        called = true;
        return append(out);
      },
      held));
  CHECK_FALSE(called);
  REQUIRE(held != nullptr);
  CHECK_THROWS(KJ_ASSERT_NONNULL(held).wait(io.waitScope));
  CHECK_THROWS(writer.when_room().wait(io.waitScope));
}
