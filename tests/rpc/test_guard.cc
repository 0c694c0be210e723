// What the server enforces about a connection besides its calls (rpc/connection_guard.h,
// rpc/server.h): the token compared in constant time, a connection closed after a few
// failed logins (each logged with the peer's address), the connection limit, the idle
// timeout, the bound on replies a client leaves unread, and the per-call limits
// max_batch, max_in_flight and max_message_bytes. Both protocols.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../support/eventually.h"
#include "cellar/client.h"
#include "rpc/connection_guard.h"
#include "rpc/frames.h"
#include "served_store.h"

namespace {

using cellar::code;
using cellar::rpc::frame_client;

std::string address_of(const served_store& s) { return "127.0.0.1:" + std::to_string(s.server->port()); }

// Log lines of the server while it lives (spdlog's default logger, restored after).
struct captured_log {
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  std::shared_ptr<spdlog::logger> old = spdlog::default_logger();
  captured_log() { spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink)); }
  ~captured_log() { spdlog::set_default_logger(old); }
  std::string text() const {
    std::string all;
    for (auto& l : sink->last_formatted()) all += l;
    return all;
  }
};

using testsupport::eventually;

// A raw blocking socket to `s` (for bytes the clients would not send).
struct raw_socket {
  int fd;
  explicit raw_socket(const served_store& s)
      : fd(cellar::rpc::connect_socket("127.0.0.1", s.server->port()).release()) {
    ::fcntl(fd, F_SETFL, 0);
    timeval tv{30, 0};  // a server that never closes fails the test instead of hanging it
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~raw_socket() { ::close(fd); }
  std::string local_address() const {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    char host[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(a.sin_port));
  }
  void send_all(const std::vector<unsigned char>& out) const {
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::send(fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
      REQUIRE(n > 0);
      done += static_cast<std::size_t>(n);
    }
  }
  // Everything the server sends until it closes; `closed` is false when it did not close
  // within the receive timeout.
  std::string read_until_closed(bool& closed) const {
    std::string out;
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) {
        closed = true;
        return out;
      }
      if (n < 0) {
        closed = false;
        return out;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
};

void append_login(std::vector<unsigned char>& out, std::uint64_t id, const std::string& token) {
  capnp::MallocMessageBuilder m;
  auto r = m.initRoot<cellar::wire::Request>();
  r.setId(id);
  r.setLogin(token);
  cellar::rpc::append_frame(out, m);
}

struct reply_status {
  std::uint64_t id;
  cellar::status st;
};

// The replies in `bytes` (after the server's eight-byte greeting).
std::vector<reply_status> frame_replies(const std::string& bytes) {
  REQUIRE(bytes.size() >= 8);
  REQUIRE(bytes.substr(0, 8) == std::string(reinterpret_cast<const char*>(cellar::rpc::frame_magic), 8));
  std::vector<capnp::word> words((bytes.size() - 8) / 8);
  std::memcpy(words.data(), bytes.data() + 8, words.size() * 8);
  std::vector<reply_status> out;
  kj::ArrayPtr<const capnp::word> rest(words.data(), words.size());
  while (rest.size() > 0) {
    capnp::FlatArrayMessageReader reader(rest);
    auto r = reader.getRoot<cellar::wire::Reply>();
    out.push_back({r.getId(), cellar::rpc::from_wire(r.getError())});
    rest = kj::ArrayPtr<const capnp::word>(reader.getEnd(), rest.end());
  }
  return out;
}

}  // namespace

TEST_CASE("tokens are compared whole, whatever their lengths", "[rpc][guard]") {
  using cellar::rpc::same_token;
  CHECK(same_token("s3cret", "s3cret"));
  CHECK_FALSE(same_token("s3cret", "s3creT"));
  CHECK_FALSE(same_token("s3cret", "S3cret"));
  CHECK_FALSE(same_token("s3cret", "s3cre"));
  CHECK_FALSE(same_token("s3cret", "s3crets"));
  CHECK_FALSE(same_token("s3cret", "s3crets3cret"));  // `expected` repeated is not `expected`
  CHECK_FALSE(same_token("s3cret", ""));
  CHECK_FALSE(same_token("", ""));  // no token set is handled by the caller, never a match here
  CHECK_FALSE(same_token("", "x"));
  CHECK(same_token(std::string("a\0b", 3), std::string("a\0b", 3)));
  CHECK_FALSE(same_token(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST_CASE("frames: three wrong tokens close the connection, each logged with the peer", "[rpc][guard]") {
  captured_log log;
  served_store s(cellar::partition_spec{}, 10, "s3cret");
  raw_socket sock(s);
  std::vector<unsigned char> out(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  append_login(out, 1, "guess1");
  append_login(out, 2, "");
  append_login(out, 3, "guess3");
  append_login(out, 4, "s3cret");  // too late: the connection is done
  sock.send_all(out);
  bool closed = false;
  auto replies = frame_replies(sock.read_until_closed(closed));
  CHECK(closed);
  REQUIRE(replies.size() >= 3);
  for (auto& r : replies) CHECK(r.st.code() == code::permission_denied);
  CHECK(replies[0].st.message() == "wrong token");
  CHECK(replies[1].st.message() == "this server requires a token; none was given");
  CHECK(replies[2].st.message() == "wrong token; the connection is closed after 3 failed logins");
  const auto text = log.text();
  const auto peer = sock.local_address();
  CHECK(text.find("failed login from " + peer + " (frames, wrong token; attempt 1") != std::string::npos);
  CHECK(text.find("failed login from " + peer + " (frames, no token; attempt 2") != std::string::npos);
  CHECK(text.find("failed login from " + peer + " (frames, wrong token; attempt 3 on this connection, closing it)") !=
        std::string::npos);
  CHECK(text.find("s3cret") == std::string::npos);  // the token never reaches the log
  CHECK(text.find("guess") == std::string::npos);

  // Two failures and then the right token: logged in.
  raw_socket again(s);
  out.assign(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  append_login(out, 1, "guess1");
  append_login(out, 2, "guess2");
  append_login(out, 3, "s3cret");
  again.send_all(out);
  ::shutdown(again.fd, SHUT_WR);
  replies = frame_replies(again.read_until_closed(closed));
  REQUIRE(replies.size() == 3);
  CHECK(replies[2].id == 3);
  CHECK(replies[2].st.is_ok());
}

TEST_CASE("rpc: three wrong tokens close the connection", "[rpc][guard]") {
  captured_log log;
  served_store s(cellar::partition_spec{}, 10, "s3cret");
  {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    auto channel = kj::heap<cellar::rpc::client_channel>(
        kj::heap<cellar::rpc::socket_stream>(io.unixEventPort,
                                             cellar::rpc::connect_socket("127.0.0.1", s.server->port())));
    auto login = channel->login();
    auto attempt = [&](const char* token) {
      auto req = login.loginRequest();
      req.setToken(token);
      return cellar::rpc::from_wire(req.send().wait(io.waitScope).getError());
    };
    CHECK(attempt("guess").message() == "wrong token");
    CHECK(attempt("guess").message() == "wrong token");
    auto third = attempt("guess");
    CHECK(third.code() == code::permission_denied);
    CHECK(third.message() == "wrong token; the connection is closed after 3 failed logins");
    // The server has closed the connection: the right token comes too late.
    CHECK_THROWS_AS(attempt("s3cret"), kj::Exception);
    CHECK(log.text().find("failed login from 127.0.0.1:") != std::string::npos);
    CHECK(log.text().find("(rpc, wrong token; attempt 3 on this connection, closing it)") != std::string::npos);
  }
  // The client library says the same (its own event loop: the one above is gone).
  auto wrong = cellar::rpc::connect(address_of(s), {"guess"});
  REQUIRE(!wrong);
  CHECK(wrong.error().code() == code::permission_denied);
  CHECK(wrong.error().message() == "wrong token");
}

TEST_CASE("connections over --max-connections are refused with UNAVAILABLE and closed", "[rpc][guard]") {
  captured_log log;
  auto so = loopback_options();
  so.max_connections = 2;
  served_store s(cellar::partition_spec{}, 10, so);
  std::vector<std::unique_ptr<frame_client>> held;
  for (int i = 0; i < 2; ++i) {
    auto c = frame_client::connect(address_of(s));
    REQUIRE(c);
    held.push_back(std::move(c.value()));
  }
  const std::string why = "the server is at its connection limit (2 connections); try again later";
  auto third = frame_client::connect(address_of(s));
  REQUIRE(!third);
  CHECK(third.error().code() == code::unavailable);
  CHECK(third.error().message() == why);
  cellar::rpc::client_options rpc_only;
  rpc_only.frames = false;
  auto over_rpc = cellar::rpc::connect(address_of(s), rpc_only);
  REQUIRE(!over_rpc);
  CHECK(over_rpc.error().code() == code::unavailable);
  CHECK(over_rpc.error().message() == why);
  CHECK(log.text().find("refusing the connection from 127.0.0.1:") != std::string::npos);
  // The refused connections are closed; the two held ones still work.
  CHECK(eventually([&] { return s.server->connections() == 2; }));
  auto r = held[0]->batch("t", {cellar::get(row_name(1))});
  REQUIRE(r);
  CHECK((*r)[0].row.cells.at(0).value == "v1");
  // A slot given back is taken again.
  held.pop_back();
  CHECK(eventually([&] { return s.server->connections() == 1; }));
  auto next = frame_client::connect(address_of(s));
  CHECK(next);
}

TEST_CASE("a connection idle for --idle-timeout is closed; a talking one is not", "[rpc][guard]") {
  captured_log log;
  auto so = loopback_options();
  so.idle_timeout = std::chrono::milliseconds(1000);  // the talking client sends every 20 ms
  served_store s(cellar::partition_spec{}, 10, so);
  // Beside it, a server with the timeout off (0), whose quiet client must outlive the above.
  auto off = loopback_options();
  off.idle_timeout = std::chrono::milliseconds(0);
  served_store never(cellar::partition_spec{}, 10, off);
  auto kept = frame_client::connect(address_of(never));
  REQUIRE(kept);
  auto quiet = frame_client::connect(address_of(s));
  REQUIRE(quiet);
  auto talking = frame_client::connect(address_of(s));
  REQUIRE(talking);
  // One of the two goes; the one that keeps sending stays.
  bool talking_ok = true;
  for (int i = 0; i < 1000 && s.server->connections() > 1; ++i) {
    auto r = talking.value()->batch("t", {cellar::get(row_name(2))});
    talking_ok = talking_ok && r.is_ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(talking_ok);
  CHECK(s.server->connections() == 1);
  auto late = quiet.value()->batch("t", {cellar::get(row_name(2))});
  REQUIRE(!late);
  CHECK(late.error().code() == code::unavailable);
  CHECK(talking.value()->batch("t", {cellar::get(row_name(2))}));
  CHECK(log.text().find("idle for 1000 ms") != std::string::npos);
  // Quiet as long, on the server without the timeout: still served.
  CHECK(kept.value()->batch("t", {cellar::get(row_name(2))}));
}

TEST_CASE("a client that does not read its replies is closed past --max-unsent", "[rpc][guard]") {
  captured_log log;
  auto so = loopback_options();
  so.max_unsent_bytes = 1 << 20;
  served_store s(cellar::partition_spec{}, 10, so);
  auto t = s.store->open_table("t");
  REQUIRE(t);
  REQUIRE(t->put({cellar::put("big").add("f", "q", 1, std::string(256 << 10, 'x'))}));
  raw_socket sock(s);
  const int small = 4096;  // the client's receive buffer: small, so the server's queue fills soon
  ::setsockopt(sock.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  // Gets of the 256 KiB cell, never read: far more than the socket buffers hold.
  std::vector<unsigned char> out(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  append_login(out, 1, "");
  for (std::uint64_t id = 2; id < 200; ++id) {
    capnp::MallocMessageBuilder m;
    auto r = m.initRoot<cellar::wire::Request>();
    r.setId(id);
    auto b = r.initBatch();
    b.setTable("t");
    cellar::rpc::to_wire(cellar::batch_op(cellar::get("big")), b.initActions(1)[0]);
    cellar::rpc::append_frame(out, m);
  }
  REQUIRE(eventually([&] { return s.server->connections() == 1; }));  // accepted
  sock.send_all(out);
  CHECK(eventually([&] { return s.server->connections() == 0; }));
  CHECK(log.text().find("closing the connection from " + sock.local_address() + ": it does not read its replies") !=
        std::string::npos);
  bool closed = false;
  sock.read_until_closed(closed);
  CHECK(closed);
  // A client that reads gets the same replies.
  auto c = frame_client::connect(address_of(s));
  REQUIRE(c);
  for (int i = 0; i < 20; ++i) {
    auto r = c.value()->batch("t", {cellar::get("big")});
    REQUIRE(r);
    CHECK((*r)[0].row.cells.at(0).value.size() == (256u << 10));
  }
}

TEST_CASE("--max-batch: a bigger batch is refused whole, on both protocols", "[rpc][guard]") {
  auto so = loopback_options();
  so.max_batch = 5;
  served_store s(cellar::partition_spec{}, 10, so);
  std::vector<cellar::batch_op> five, six;
  for (int i = 0; i < 5; ++i) five.emplace_back(cellar::put("n" + std::to_string(i)).add("f", "q", 1, "x"));
  six = five;
  six.emplace_back(cellar::put("n5").add("f", "q", 1, "x"));
  for (bool frames : {true, false}) {
    cellar::rpc::client_options co;
    co.frames = frames;
    auto c = cellar::rpc::connect(address_of(s), co);
    REQUIRE(c);
    auto refused = c.value()->batch("t", six);
    REQUIRE(refused.size() == 6);
    for (auto& r : refused) {
      CHECK(r.st.code() == code::too_large);
      CHECK(r.st.message() == "a batch of 6 actions exceeds the limit of 5");
    }
    auto n5 = s.store->open_table("t")->get(cellar::get("n5"));
    REQUIRE(n5);
    CHECK(n5->cells.empty());  // nothing of the refused batch ran
    for (auto& r : c.value()->batch("t", five)) CHECK(r.st.is_ok());
  }
}

TEST_CASE("--max-in-flight: calls beyond it on one connection are refused with UNAVAILABLE", "[rpc][guard]") {
  auto so = loopback_options();
  so.max_in_flight = 3;
  served_store s(cellar::partition_spec::hash(4), 200, so);
  auto c = frame_client::connect(address_of(s));
  REQUIRE(c);
  // Scans always wait for the partitions' answer: pipelined in one write, the server reads
  // them together, and all but the first three find the connection's limit reached.
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 12; ++i) ids.push_back(c.value()->send_scan("t", cellar::scan(), 50));
  int ok = 0, refused = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto r = c.value()->receive();
    REQUIRE(r);
    auto page = frame_client::page_of(r.value()->get());
    if (page) {
      ++ok;
      CHECK(page->rows.size() == 50);
    } else {
      ++refused;
      CHECK(page.error().code() == code::unavailable);
      CHECK(page.error().message() == "too many calls in flight on this connection (limit 3)");
    }
  }
  CHECK(ok >= 3);
  CHECK(refused >= 1);
  CHECK(ok + refused == 12);
  // Once answered, calls are admitted again.
  auto again = c.value()->scan("t", cellar::scan(), 10);
  REQUIRE(again);
  CHECK(again->rows.size() == 10);
}

TEST_CASE("--max-message: a bigger message closes the connection, on both protocols", "[rpc][guard]") {
  auto so = loopback_options();
  so.max_message_bytes = 64 << 10;
  served_store s(cellar::partition_spec{}, 10, so);
  const std::string fits(16 << 10, 'a'), too_big(128 << 10, 'b');
  for (bool frames : {true, false}) {
    cellar::rpc::client_options co;
    co.frames = frames;
    auto c = cellar::rpc::connect(address_of(s), co);
    REQUIRE(c);
    auto r = c.value()->batch("t", {cellar::put("m").add("f", "q", 1, fits)});
    REQUIRE(r.size() == 1);
    CHECK(r[0].st.is_ok());
    r = c.value()->batch("t", {cellar::put("m").add("f", "q", 2, too_big)});
    REQUIRE(r.size() == 1);
    CHECK(r[0].st.code() == code::unavailable);  // the connection is gone
    auto after = c.value()->batch("t", {cellar::get("m")});
    CHECK(after.at(0).st.code() == code::unavailable);
    auto m = s.store->open_table("t")->get(cellar::get("m"));
    REQUIRE(m);
    REQUIRE(m->cells.size() == 1);
    CHECK(m->cells[0].timestamp == 1);  // the big put never ran
  }
}
