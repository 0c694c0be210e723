// socket_stream: reads that wait for epoll instead of finding the socket empty, the end of
// stream after such a wait, reads that gather several writes, writes bigger than the socket
// buffer, and the address parsing of connect_socket. Runs over Unix socket pairs.
#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <kj/debug.h>

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include <capnp/serialize.h>

#include "cellar.capnp.h"
#include "rpc/message_stream.h"
#include "rpc/socket_stream.h"

using cellar::rpc::buffered_message_stream;
using cellar::rpc::socket_stream;

namespace {

struct socket_pair {
  kj::AutoCloseFd ours;
  kj::AutoCloseFd peer;
  socket_pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    ours = kj::AutoCloseFd(fds[0]);
    peer = kj::AutoCloseFd(fds[1]);
  }
};

void send_all(int fd, const std::string& s) {
  REQUIRE(::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
}

// Waits for `p`, failing instead of hanging if it does not resolve within 30 s: generous,
// since a busy machine with MALLOC_PERTURB_ set (as meson test sets it) can take seconds
// for a few MB.
template <typename T>
T wait_briefly(kj::AsyncIoContext& io, kj::Promise<T> p) {
  return p
      .exclusiveJoin(
          io.provider->getTimer().afterDelay(30 * kj::SECONDS).then([]() -> T { KJ_FAIL_REQUIRE("timed out"); }))
      .wait(io.waitScope);
}

}  // namespace

TEST_CASE("after a read that empties the socket, the next read waits for epoll instead of reading", "[rpc]") {
  auto io = kj::setupAsyncIo();
  socket_pair sp;
  socket_stream s(io.unixEventPort, kj::mv(sp.ours));
  char buf[256];

  // Nothing to read yet: the first read finds the socket empty and waits.
  auto first = s.tryRead(buf, 1, sizeof buf);
  CHECK(s.empty_reads() == 1);
  send_all(sp.peer.get(), "hello");
  REQUIRE(wait_briefly(io, kj::mv(first)) == 5);
  CHECK(std::string(buf, 5) == "hello");

  // Every later exchange costs one read(2): none of them finds the socket empty.
  for (int i = 0; i < 20; ++i) {
    const auto calls = s.read_calls();
    auto next = s.tryRead(buf, 1, sizeof buf);
    const std::string msg = "message " + std::to_string(i);
    send_all(sp.peer.get(), msg);
    REQUIRE(wait_briefly(io, kj::mv(next)) == msg.size());
    CHECK(std::string(buf, msg.size()) == msg);
    CHECK(s.read_calls() == calls + 1);
  }
  CHECK(s.empty_reads() == 1);
}

TEST_CASE("the end of the stream is seen after a read that emptied the socket", "[rpc]") {
  auto io = kj::setupAsyncIo();
  socket_pair sp;
  socket_stream s(io.unixEventPort, kj::mv(sp.ours));
  char buf[64];
  SECTION("the peer closes after the wait began") {
    auto first = s.tryRead(buf, 1, sizeof buf);
    send_all(sp.peer.get(), "abc");
    REQUIRE(wait_briefly(io, kj::mv(first)) == 3);
    auto end = s.tryRead(buf, 1, sizeof buf);
    sp.peer = nullptr;
    CHECK(wait_briefly(io, kj::mv(end)) == 0);
  }
  SECTION("the peer closes before any wait") {
    send_all(sp.peer.get(), "abc");
    sp.peer = nullptr;
    REQUIRE(wait_briefly(io, s.tryRead(buf, 1, sizeof buf)) == 3);
    CHECK(wait_briefly(io, s.tryRead(buf, 1, sizeof buf)) == 0);
  }
  SECTION("the peer closes after data that arrived during a wait") {
    auto first = s.tryRead(buf, 1, sizeof buf);
    send_all(sp.peer.get(), "x");
    REQUIRE(wait_briefly(io, kj::mv(first)) == 1);
    send_all(sp.peer.get(), "yz");
    sp.peer = nullptr;
    REQUIRE(wait_briefly(io, s.tryRead(buf, 1, sizeof buf)) == 2);
    CHECK(std::string(buf, 2) == "yz");
    CHECK(wait_briefly(io, s.tryRead(buf, 1, sizeof buf)) == 0);
  }
}

TEST_CASE("a read for more bytes than one write gathers several writes", "[rpc]") {
  auto io = kj::setupAsyncIo();
  socket_pair sp;
  socket_stream s(io.unixEventPort, kj::mv(sp.ours));
  char buf[12];
  auto read = s.tryRead(buf, sizeof buf, sizeof buf);
  // Each piece arrives in its own turn of the loop.
  kj::Promise<void> feed = kj::READY_NOW;
  for (const char* piece : {"abcd", "efgh", "ijkl"})
    feed = feed.then([&io] { return io.provider->getTimer().afterDelay(2 * kj::MILLISECONDS); }).then([&sp, piece] {
      send_all(sp.peer.get(), piece);
    });
  feed = feed.eagerlyEvaluate(nullptr);
  REQUIRE(wait_briefly(io, kj::mv(read)) == sizeof buf);
  feed.wait(io.waitScope);
  CHECK(std::string(buf, sizeof buf) == "abcdefghijkl");
}

TEST_CASE("a write bigger than the socket buffer arrives whole and in order", "[rpc]") {
  auto io = kj::setupAsyncIo();
  socket_pair sp;
  socket_stream writer(io.unixEventPort, kj::mv(sp.ours));
  socket_stream reader(io.unixEventPort, kj::mv(sp.peer));
  std::vector<unsigned char> out(8 << 20);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(i * 131 + i / 4096);
  std::vector<unsigned char> in(out.size());
  auto w = writer.write(out.data(), out.size());
  auto r = reader.read(in.data(), in.size());
  w.wait(io.waitScope);
  r.wait(io.waitScope);
  CHECK(in == out);
  // A write in several pieces too.
  const std::string a = "first ", b = "second";
  kj::ArrayPtr<const kj::byte> pieces[] = {kj::StringPtr(a.c_str()).asBytes(), kj::StringPtr(b.c_str()).asBytes()};
  writer.write(kj::arrayPtr(pieces, 2)).wait(io.waitScope);
  char got[12];
  reader.read(got, sizeof got).wait(io.waitScope);
  CHECK(std::string(got, sizeof got) == "first second");
}

TEST_CASE("a message stream over a socket sends what the socket takes at once, the rest when it drains", "[rpc]") {
  auto io = kj::setupAsyncIo();
  socket_pair sp;
  socket_stream ours(io.unixEventPort, kj::mv(sp.ours));
  socket_stream peer(io.unixEventPort, kj::mv(sp.peer));
  buffered_message_stream writer(ours);
  buffered_message_stream reader(peer);
  auto message = [](capnp::MallocMessageBuilder& b, unsigned i, std::size_t n) {
    auto e = b.initRoot<cellar::wire::Error>();
    e.setCode(static_cast<std::uint16_t>(i));
    e.setMessage(std::string(n, static_cast<char>('a' + i % 26)));
  };
  capnp::MallocMessageBuilder small;
  message(small, 1, 100);
  wait_briefly(io, writer.writeMessage(small));
  io.waitScope.poll();  // the flush
  // One bigger than the socket's buffer: sent in part at once, the rest as the reader
  // drains it; then a small one queued behind it. Both arrive whole and in order.
  capnp::MallocMessageBuilder big, after;
  message(big, 2, 8 << 20);
  message(after, 3, 10);
  auto w1 = writer.writeMessage(big);
  auto w2 = writer.writeMessage(after);
  for (auto [i, n] : {std::pair<unsigned, std::size_t>{1, 100}, {2, 8 << 20}, {3, 10}}) {
    auto r = wait_briefly(io, reader.readMessage());
    auto e = r->getRoot<cellar::wire::Error>();
    CHECK(e.getCode() == i);
    CHECK(std::string(e.getMessage().cStr()) == std::string(n, static_cast<char>('a' + i % 26)));
  }
  wait_briefly(io, kj::mv(w1));
  wait_briefly(io, kj::mv(w2));
}

TEST_CASE("a message stream over a socket the peer closed fails its writes", "[rpc]") {
  auto io = kj::setupAsyncIo();
  socket_pair sp;
  socket_stream ours(io.unixEventPort, kj::mv(sp.ours));
  buffered_message_stream writer(ours);
  sp.peer = nullptr;  // closed
  capnp::MallocMessageBuilder b;
  b.initRoot<cellar::wire::Error>().setMessage("unheard");
  (void)writer.writeMessage(b);
  io.waitScope.poll();  // the flush: send(2) fails (EPIPE) and the stream fails with it
  CHECK_THROWS(writer.writeMessage(b).wait(io.waitScope));
  CHECK_THROWS(writer.end().wait(io.waitScope));
}

TEST_CASE("the direct path reads without a promise until the socket is empty", "[rpc]") {
  auto io = kj::setupAsyncIo();
  socket_pair sp;
  socket_stream ours(io.unixEventPort, kj::mv(sp.ours));
  socket_stream peer(io.unixEventPort, kj::mv(sp.peer));
  buffered_message_stream server(ours);
  buffered_message_stream client(peer);
  REQUIRE(server.direct());
  capnp::ReaderOptions ro;
  auto message = [](capnp::MallocMessageBuilder& b, unsigned i) {
    b.initRoot<cellar::wire::Error>().setCode(static_cast<std::uint16_t>(i));
  };

  // Nothing sent: read_now says so with one read(2), and the next call makes none.
  CHECK(server.read_now() == -1);
  CHECK(ours.read_calls() == 1);
  CHECK(server.read_now() == -1);
  CHECK(ours.read_calls() == 1);

  // Three messages in one write: the readable edge comes, one read takes all three.
  for (unsigned i = 1; i <= 3; ++i) {
    capnp::MallocMessageBuilder b;
    message(b, i);
    (void)client.writeMessage(b);
  }
  auto edge = server.when_readable();
  wait_briefly(io, kj::mv(edge));  // the client's end-of-turn flush ran first
  CHECK(server.read_now() == 1);
  for (unsigned i = 1; i <= 3; ++i) {
    auto words = KJ_ASSERT_NONNULL(server.take_buffered(ro));
    capnp::FlatArrayMessageReader r(words, ro);
    CHECK(r.getRoot<cellar::wire::Error>().getCode() == i);
  }
  CHECK(server.take_buffered(ro) == nullptr);

  // Replies go out at the end of the loop's turn.
  for (unsigned i = 10; i < 12; ++i) {
    capnp::MallocMessageBuilder b;
    message(b, i);
    CHECK(!server.writers_held());
    (void)server.writeMessage(b);
  }
  for (unsigned i = 10; i < 12; ++i) {
    auto r = wait_briefly(io, client.readMessage());
    CHECK(r->getRoot<cellar::wire::Error>().getCode() == i);
  }

  // The end of the stream, and one inside a message.
  wait_briefly(io, client.end());
  const int last = server.read_now();
  if (last == -1) wait_briefly(io, server.when_readable());
  CHECK((last == 0 || server.read_now() == 0));
}

TEST_CASE("the direct path refuses a stream that ends inside a message", "[rpc]") {
  auto io = kj::setupAsyncIo();
  socket_pair sp;
  socket_stream ours(io.unixEventPort, kj::mv(sp.ours));
  buffered_message_stream server(ours);
  send_all(sp.peer.get(), std::string("\0\0\0\0\4\0\0\0abc", 11));  // one segment of 4 words; 3 bytes of it
  sp.peer = nullptr;
  CHECK(server.read_now() == 1);
  CHECK_THROWS_WITH(server.read_now(), Catch::Contains("premature EOF"));
}

TEST_CASE("connect_socket refuses malformed addresses and says why a connection failed", "[rpc]") {
  CHECK_THROWS_WITH(cellar::rpc::connect_socket("localhost"), Catch::Contains("port"));
  CHECK_THROWS_WITH(cellar::rpc::connect_socket("localhost:http"), Catch::Contains("malformed port"));
  CHECK_THROWS_WITH(cellar::rpc::connect_socket("localhost:70000"), Catch::Contains("malformed port"));
  CHECK_THROWS_WITH(cellar::rpc::connect_socket("[::1:80"), Catch::Contains("malformed address"));
  // A port nobody listens on: bind one, note it, close it.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  CHECK_THROWS_WITH(cellar::rpc::connect_socket("127.0.0.1:" + std::to_string(ntohs(a.sin_port))),
                    Catch::Contains("ECONNREFUSED") || Catch::Contains("refused"));
}

TEST_CASE("addresses split into host and port: host:port or [v6]:port, the port in digits, 0 to 65535", "[rpc]") {
  using cellar::rpc::split_host_port;
  using hp = std::pair<std::string, std::uint16_t>;
  CHECK(split_host_port("127.0.0.1:9090") == hp{"127.0.0.1", 9090});
  CHECK(split_host_port("localhost:0") == hp{"localhost", 0});  // "any free port" where a listener takes it
  CHECK(split_host_port("[::1]:65535") == hp{"::1", 65535});
  CHECK(split_host_port("a:b:80") == hp{"a:b", 80});  // the last colon
  CHECK(split_host_port(":80") == hp{"", 80});
  for (const char* bad :
       {"", "host", "host:", "host:65536", "host:8x", "host:-1", "host: 80", "[::1]9090", "[::1", "[::1]:"}) {
    INFO(bad);
    CHECK(split_host_port(bad) == std::nullopt);
  }
  // connect_socket(address) refuses port 0 (the other refusals: the next test case).
  CHECK_THROWS_WITH(cellar::rpc::connect_socket(std::string("127.0.0.1:0")), Catch::Contains("malformed port"));
}
