// io_ring (rpc/io_ring.h): the writes a loop's streams make in one turn go out in one
// io_uring_enter, in order and whole; what a full socket does not take follows when it
// drains; a failed send fails only its own stream; a stream that goes away before the flush
// is not sent. And the server: its loops send through the ring unless told not to, and a
// frame client's replies then arrive as before. Where the kernel refuses io_uring, the
// program is skipped (rpc/ring_main.cc), so a ring that fails to open here is a failure.
#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <kj/debug.h>

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <capnp/serialize.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cellar.capnp.h"
#include "rpc/frames.h"
#include "rpc/io_ring.h"
#include "rpc/message_stream.h"
#include "rpc/socket_stream.h"
#include "served_store.h"

using cellar::rpc::buffered_message_stream;
using cellar::rpc::io_ring;
using cellar::rpc::socket_stream;

namespace {

// A writer stream (sending through the ring) and its reader, over a socket pair.
struct ring_link {
  std::unique_ptr<socket_stream> ours, theirs;
  std::unique_ptr<buffered_message_stream> writer, reader;
  ring_link(kj::AsyncIoContext& io, io_ring& ring) {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    ours = std::make_unique<socket_stream>(io.unixEventPort, kj::AutoCloseFd(fds[0]));
    theirs = std::make_unique<socket_stream>(io.unixEventPort, kj::AutoCloseFd(fds[1]));
    writer = std::make_unique<buffered_message_stream>(*ours);
    reader = std::make_unique<buffered_message_stream>(*theirs);
    writer->use_ring(ring);
  }
};

void fill(capnp::MallocMessageBuilder& b, unsigned code, std::size_t n) {
  auto e = b.initRoot<cellar::wire::Error>();
  e.setCode(static_cast<std::uint16_t>(code));
  e.setMessage(std::string(n, static_cast<char>('a' + code % 26)));
}

// Reads one message and checks it is fill(code, n)'s.
void expect(kj::AsyncIoContext& io, buffered_message_stream& reader, unsigned code, std::size_t n) {
  auto r = reader.readMessage()
               .exclusiveJoin(
                   io.provider->getTimer().afterDelay(30 * kj::SECONDS).then([]() -> kj::Own<capnp::MessageReader> {
                     KJ_FAIL_REQUIRE("timed out");
                   }))
               .wait(io.waitScope);
  auto e = r->getRoot<cellar::wire::Error>();
  CHECK(e.getCode() == code);
  CHECK(std::string(e.getMessage().cStr()) == std::string(n, static_cast<char>('a' + code % 26)));
}

}  // namespace

TEST_CASE("io ring: one turn's writes to several sockets go out in one io_uring_enter", "[rpc][ring]") {
  auto io = kj::setupAsyncIo();
  auto ring = io_ring::open();
  REQUIRE(ring.get() != nullptr);
  std::vector<std::unique_ptr<ring_link>> links;
  for (int i = 0; i < 3; ++i) links.push_back(std::make_unique<ring_link>(io, *ring));
  for (unsigned i = 0; i < 3; ++i) {
    capnp::MallocMessageBuilder b;
    fill(b, i, 50);
    links[i]->writer->writeMessage(b).wait(io.waitScope);  // queued: nothing sent yet
  }
  CHECK(ring->enters() == 0);
  io.waitScope.poll();  // the end of the turn
  CHECK(ring->enters() == 1);
  CHECK(ring->sends() == 3);
  for (unsigned i = 0; i < 3; ++i) expect(io, *links[i]->reader, i, 50);

  // Two messages on one stream in a turn: one send for both, in order.
  capnp::MallocMessageBuilder a, b;
  fill(a, 7, 10);
  fill(b, 8, 20);
  links[1]->writer->writeMessage(a).wait(io.waitScope);
  links[1]->writer->writeMessage(b).wait(io.waitScope);
  io.waitScope.poll();
  CHECK(ring->enters() == 2);
  CHECK(ring->sends() == 4);
  expect(io, *links[1]->reader, 7, 10);
  expect(io, *links[1]->reader, 8, 20);
}

TEST_CASE("io ring: a turn with more calls than the ring holds submits them in several enters", "[rpc][ring]") {
  auto io = kj::setupAsyncIo();
  auto ring = io_ring::open(nullptr, 4);  // four calls per io_uring_enter
  REQUIRE(ring.get() != nullptr);
  std::vector<std::unique_ptr<ring_link>> links;
  for (int i = 0; i < 10; ++i) links.push_back(std::make_unique<ring_link>(io, *ring));
  // Three reads first (the flush submits reads before sends), then ten sends: 13 calls.
  std::vector<std::pair<kj::AutoCloseFd, kj::AutoCloseFd>> pairs;
  std::vector<kj::Promise<long>> reads;
  char buffers[3][8] = {};
  for (int i = 0; i < 3; ++i) {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    pairs.emplace_back(kj::AutoCloseFd(fds[0]), kj::AutoCloseFd(fds[1]));
    REQUIRE(::write(pairs.back().second.get(), "abc", 3) == 3);
    reads.push_back(ring->recv(pairs.back().first.get(), buffers[i], sizeof buffers[i]));
  }
  for (unsigned i = 0; i < 10; ++i) {
    capnp::MallocMessageBuilder b;
    fill(b, i, 20 + i);
    links[i]->writer->writeMessage(b).wait(io.waitScope);
  }
  io.waitScope.poll();
  CHECK(ring->enters() == 4);  // 4 + 4 + 4 + 1
  CHECK(ring->recvs() == 3);
  CHECK(ring->sends() == 10);
  for (auto& r : reads) CHECK(r.wait(io.waitScope) == 3);
  for (unsigned i = 0; i < 10; ++i) expect(io, *links[i]->reader, i, 20 + i);
}

TEST_CASE("io ring: what a full socket does not take follows as the peer reads, whole and in order", "[rpc][ring]") {
  auto io = kj::setupAsyncIo();
  auto ring = io_ring::open();
  REQUIRE(ring.get() != nullptr);
  ring_link l(io, *ring);
  capnp::MallocMessageBuilder big, after, later;
  fill(big, 2, 8 << 20);  // far more than the socket's buffer
  fill(after, 3, 10);
  fill(later, 4, 30);
  auto w1 = l.writer->writeMessage(big);
  auto w2 = l.writer->writeMessage(after);
  io.waitScope.poll();  // the ring sends what fits; the rest waits for the socket
  CHECK(ring->sends() == 1);
  auto w3 = l.writer->writeMessage(later);  // behind the unsent rest
  expect(io, *l.reader, 2, 8 << 20);
  expect(io, *l.reader, 3, 10);
  expect(io, *l.reader, 4, 30);
  w1.wait(io.waitScope);
  w2.wait(io.waitScope);
  w3.wait(io.waitScope);
}

TEST_CASE("io ring: a send to a closed peer fails its stream only", "[rpc][ring]") {
  auto io = kj::setupAsyncIo();
  auto ring = io_ring::open();
  REQUIRE(ring.get() != nullptr);
  ring_link closed(io, *ring), open(io, *ring);
  closed.reader.reset();
  closed.theirs.reset();  // the peer's socket is closed
  capnp::MallocMessageBuilder b;
  fill(b, 5, 40);
  (void)closed.writer->writeMessage(b);
  (void)open.writer->writeMessage(b);
  io.waitScope.poll();  // one submission: EPIPE for one, delivered for the other
  CHECK(ring->enters() == 1);
  CHECK(ring->sends() == 2);
  CHECK(closed.writer->write_error() != nullptr);
  CHECK_THROWS(closed.writer->writeMessage(b).wait(io.waitScope));
  CHECK(open.writer->write_error() == nullptr);
  expect(io, *open.reader, 5, 40);
}

TEST_CASE("io ring: a stream that goes away before the end of its turn is not sent", "[rpc][ring]") {
  auto io = kj::setupAsyncIo();
  auto ring = io_ring::open();
  REQUIRE(ring.get() != nullptr);
  ring_link gone(io, *ring), stays(io, *ring);
  capnp::MallocMessageBuilder b;
  fill(b, 6, 40);
  (void)gone.writer->writeMessage(b);
  (void)stays.writer->writeMessage(b);
  gone.writer.reset();  // queued in the ring, then destroyed
  io.waitScope.poll();
  CHECK(ring->sends() == 1);
  expect(io, *stays.reader, 6, 40);
}

TEST_CASE("io ring: the reads asked for in one turn are made in one io_uring_enter", "[rpc][ring]") {
  auto io = kj::setupAsyncIo();
  auto ring = io_ring::open();
  REQUIRE(ring.get() != nullptr);
  std::vector<std::pair<kj::AutoCloseFd, kj::AutoCloseFd>> pairs;
  for (int i = 0; i < 3; ++i) {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    pairs.emplace_back(kj::AutoCloseFd(fds[0]), kj::AutoCloseFd(fds[1]));
  }
  REQUIRE(::write(pairs[0].second.get(), "zero", 4) == 4);
  REQUIRE(::write(pairs[1].second.get(), "one", 3) == 3);
  pairs[2].second = nullptr;  // closed: the end of the stream
  char a[16] = {}, b[16] = {}, c[16] = {}, d[16] = {};
  auto ra = ring->recv(pairs[0].first.get(), a, sizeof a);
  auto rb = ring->recv(pairs[1].first.get(), b, sizeof b);
  auto rc = ring->recv(pairs[2].first.get(), c, sizeof c);
  auto rd = ring->recv(pairs[0].first.get(), d, sizeof d);  // after ra took the bytes: nothing
  CHECK(ring->enters() == 0);                               // made at the end of the turn
  CHECK(ra.wait(io.waitScope) == 4);
  CHECK(ring->enters() == 1);
  CHECK(ring->recvs() == 4);
  CHECK(rb.wait(io.waitScope) == 3);
  CHECK(rc.wait(io.waitScope) == 0);
  CHECK(rd.wait(io.waitScope) == -EAGAIN);
  CHECK(std::string(a, 4) == "zero");
  CHECK(std::string(b, 3) == "one");
}

// A recv through the ring that finds the socket empty must register for the next readable
// edge before kj next looks at epoll. Here the bytes arrive in the same submission, just
// after the recv (the writer's send follows the reader's recv in the flush), and kj is
// told to look at epoll after every turn: an edge reported before the reader registered
// would be lost, and the reader would wait forever for bytes already in its socket.
TEST_CASE("io ring: bytes that arrive right after a recv found the socket empty wake the reader", "[rpc][ring]") {
  auto io = kj::setupAsyncIo();
  auto ring = io_ring::open();
  REQUIRE(ring.get() != nullptr);
  io.waitScope.setBusyPollInterval(0);
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
  socket_stream reader_socket(io.unixEventPort, kj::AutoCloseFd(fds[0]));
  socket_stream writer_socket(io.unixEventPort, kj::AutoCloseFd(fds[1]));
  buffered_message_stream reader(reader_socket), writer(writer_socket);
  reader.use_ring(*ring);
  writer.use_ring(*ring);
  io.waitScope.poll();  // the sockets' first epoll report (writable) is behind us

  auto first = reader.read_ring();  // the recv is made at the end of the turn, first
  capnp::MallocMessageBuilder b;
  fill(b, 7, 20);
  auto sent = writer.writeMessage(b);  // and then, in the same submission, the send
  int got = first.wait(io.waitScope);
  CHECK(ring->enters() == 1);
  if (got < 0) {
    // Empty when read: the edge of the bytes that came after must wake it.
    auto woke = reader.when_readable()
                    .then([] { return true; })
                    .exclusiveJoin(io.provider->getTimer().afterDelay(5 * kj::SECONDS).then([] { return false; }))
                    .wait(io.waitScope);
    REQUIRE(woke);
    got = reader.read_ring().wait(io.waitScope);
  }
  REQUIRE(got == 1);
  auto words = reader.take_buffered(capnp::ReaderOptions());
  REQUIRE(words != nullptr);
  capnp::FlatArrayMessageReader message(KJ_ASSERT_NONNULL(words));
  CHECK(message.getRoot<cellar::wire::Error>().getCode() == 7);
  sent.wait(io.waitScope);
}

TEST_CASE("io ring: a read dropped before the end of its turn is not made", "[rpc][ring]") {
  auto io = kj::setupAsyncIo();
  auto ring = io_ring::open();
  REQUIRE(ring.get() != nullptr);
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
  kj::AutoCloseFd ours(fds[0]), peer(fds[1]);
  REQUIRE(::write(peer.get(), "kept", 4) == 4);
  {
    auto buffer = std::make_unique<char[]>(16);
    auto dropped = ring->recv(ours.get(), buffer.get(), 16);
  }  // the promise and its buffer are gone before the flush
  io.waitScope.poll();
  CHECK(ring->recvs() == 0);
  char got[8] = {};
  CHECK(::read(ours.get(), got, sizeof got) == 4);  // still there for the next reader
  CHECK(std::string(got, 4) == "kept");
}

TEST_CASE("server: its loops read and send through io_uring unless told not to; replies arrive either way",
          "[rpc][ring]") {
  for (bool use : {true, false}) {
    auto so = loopback_options();
    so.io_uring = use;
    served_store s(cellar::partition_spec::hash(2), 0, so);
    const std::string address = "127.0.0.1:" + std::to_string(s.server->port());
    auto c = cellar::rpc::frame_client::connect(address);
    REQUIRE(c);
    for (int i = 0; i < 20; ++i) {
      const std::string row = "r" + std::to_string(i);
      REQUIRE(c.value()->batch("t", {cellar::put(row).add("f", "q", 1, "v" + row)}));
      auto r = c.value()->batch("t", {cellar::get(row)});
      REQUIRE(r);
      REQUIRE(r.value().at(0).row.cells.size() == 1);
      CHECK(r.value()[0].row.cells[0].value == "v" + row);
    }
    const auto loops = s.server->loops();
    REQUIRE(loops.size() == 1);
    INFO("io_uring asked for: " << use);
    if (!use) {
      CHECK_FALSE(loops[0].io_uring);
      CHECK(loops[0].ring_sends == 0);
      CHECK(loops[0].ring_recvs == 0);
    } else if (!loops[0].io_uring) {
      FAIL("the server's loop did not take io_uring, which this kernel offers");
    } else {
      // Every reply went through the ring (20 puts', 20 gets').
      CHECK(loops[0].ring_sends >= 40);
      // Each request after the first came after a wait for its socket: read through the ring.
      CHECK(loops[0].ring_recvs >= 39);
      CHECK(loops[0].send_enters >= 1);
      CHECK(loops[0].send_enters <= loops[0].ring_sends + loops[0].ring_recvs);
    }
  }
}
