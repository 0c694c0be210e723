// The frame protocol (schemas/cellar.capnp, "frames"; rpc/frames.h): data calls on the
// RPC port without the RPC layer. The same answers as the embedded API, errors that leave
// the store as it was, login, order per partition under pipelining, and a server that
// keeps both protocols apart on one port.
#include <catch2/catch.hpp>

#include <capnp/message.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cellar/client.h"
#include "cellar/store.h"
#include "rpc/frames.h"
#include "rpc/socket_stream.h"
#include "served_store.h"

namespace {

using cellar::code;
using cellar::rpc::frame_client;

std::unique_ptr<frame_client> dial(const served_store& s, const std::string& token = "") {
  auto c = frame_client::connect("127.0.0.1:" + std::to_string(s.server->port()), token);
  REQUIRE(c);
  return std::move(c.value());
}

// Cells as compared across two tables: an increment stamps the time it ran, so the
// counters' timestamps are left out.
std::vector<cellar::cell> comparable(std::vector<cellar::cell> cells) {
  for (auto& c : cells)
    if (c.qualifier == "n") c.timestamp = 0;
  return cells;
}

std::string value_of(const cellar::op_result& r) { return r.row.cells.size() == 1 ? r.row.cells[0].value : ""; }

// Bytes until the server closes the connection (or `limit` bytes).
std::string read_until_closed(int fd, std::size_t limit = 1 << 20) {
  std::string out;
  char buf[4096];
  while (out.size() < limit) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// Sends `out` (the magic and some frames) on a new raw connection to `s`, shuts the
// sending side, and returns what the server wrote until it closed, after its eight-byte
// greeting (required), as words.
std::vector<capnp::word> raw_exchange(const served_store& s, const std::vector<unsigned char>& out) {
  auto fd = cellar::rpc::connect_socket("127.0.0.1", s.server->port());
  REQUIRE(::send(fd.get(), out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size()));
  ::shutdown(fd.get(), SHUT_WR);
  ::fcntl(fd.get(), F_SETFL, 0);
  auto bytes = read_until_closed(fd.get());
  REQUIRE(bytes.substr(0, 8) == std::string(reinterpret_cast<const char*>(cellar::rpc::frame_magic), 8));
  bytes = bytes.substr(8);
  REQUIRE(bytes.size() % 8 == 0);
  std::vector<capnp::word> words(bytes.size() / 8);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

// The frame magic, then a login with no token (id 1): what a client sends first.
std::vector<unsigned char> magic_and_login() {
  std::vector<unsigned char> out(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  capnp::MallocMessageBuilder m;
  auto req = m.initRoot<cellar::wire::Request>();
  req.setId(1);
  req.setLogin("");
  cellar::rpc::append_frame(out, m);
  return out;
}

// Appends a frame of request `id`: a batch of table "t" with one put of f:q = "x" to `row`.
void append_put(std::vector<unsigned char>& out, std::uint64_t id, const std::string& row) {
  capnp::MallocMessageBuilder m;
  auto req = m.initRoot<cellar::wire::Request>();
  req.setId(id);
  auto b = req.initBatch();
  b.setTable("t");
  cellar::rpc::to_wire(cellar::batch_op(cellar::put(row).add("f", "q", "x")), b.initActions(1)[0]);
  cellar::rpc::append_frame(out, m);
}

// Sends `out` in one write on a new raw connection to `s` and waits until the server
// closes it (as it does after a frame it cannot serve).
void send_until_closed(const served_store& s, const std::vector<unsigned char>& out) {
  auto fd = cellar::rpc::connect_socket("127.0.0.1", s.server->port());
  REQUIRE(::send(fd.get(), out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size()));
  ::fcntl(fd.get(), F_SETFL, 0);
  read_until_closed(fd.get());
}

// How many cells each of the rows `prefix`0 .. `prefix`(n-1) of table "t" holds, in order.
std::vector<std::size_t> cells_per_row(const served_store& s, const std::string& prefix, int n) {
  auto t = s.store->open_table("t");
  REQUIRE(t);
  std::vector<std::size_t> out;
  for (int i = 0; i < n; ++i) {
    auto g = t->get(cellar::get(prefix + std::to_string(i)));
    REQUIRE(g);
    out.push_back(g->cells.size());
  }
  return out;
}

// A frame header claiming 2^31 segments: the server refuses it as malformed.
constexpr unsigned char malformed_frame[16] = {0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

}  // namespace

TEST_CASE("frames: a batch gives the results the embedded API gives", "[frames]") {
  auto spec = GENERATE(cellar::partition_spec{}, cellar::partition_spec::hash(4));
  served_store s(spec, 100);
  auto c = dial(s);
  auto t = s.store->open_table("t");
  REQUIRE(t);

  // Random batches of puts, gets, deletes and increments over a few rows; the same batch
  // then runs through the embedded API on a twin table, and every result must match.
  add_table(*s.store, "twin", spec);
  auto twin = s.store->open_table("twin");
  REQUIRE(twin);
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<cellar::batch_op> ops;
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < n; ++i) {
      const std::string row = "k" + std::to_string(rng() % 12);
      const std::int64_t ts = 1 + static_cast<std::int64_t>(rng() % 5);
      switch (rng() % 4) {
        case 0:
          ops.emplace_back(cellar::put(row).add("f", "q" + std::to_string(rng() % 3), ts, "v" + std::to_string(rng())));
          break;
        case 1: ops.emplace_back(cellar::get(row)); break;
        case 2: ops.emplace_back(cellar::deletion(row).column("f", "q" + std::to_string(rng() % 3))); break;
        default: ops.emplace_back(cellar::increment(row).add("f", "n", 1)); break;
      }
    }
    auto remote = c->batch("twin2", ops);
    REQUIRE(!remote);  // no such table: the call fails as a whole
    CHECK(remote.error().code() == code::table_not_found);
    auto got = c->batch("t", ops);
    REQUIRE(got);
    auto want = twin->batch(ops);
    REQUIRE(got->size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK((*got)[i].st.code() == want[i].st.code());
      CHECK(comparable((*got)[i].row.cells) == comparable(want[i].row.cells));
      CHECK((*got)[i].processed == want[i].processed);
    }
  }
  // Both tables now hold the same cells.
  auto a = t->scan(cellar::scan().start_row("k").stop_row("l").all_versions());
  auto b = twin->scan(cellar::scan().start_row("k").stop_row("l").all_versions());
  REQUIRE(a);
  REQUIRE(b);
  auto ra = a->all();
  auto rb = b->all();
  REQUIRE(ra);
  REQUIRE(rb);
  REQUIRE(ra->size() == rb->size());
  CHECK(!ra->empty());
  for (std::size_t i = 0; i < ra->size(); ++i) CHECK(comparable((*ra)[i].cells) == comparable((*rb)[i].cells));
}

TEST_CASE("frames: a bad batch is refused and leaves the store as it was", "[frames]") {
  served_store s(cellar::partition_spec{}, 0);
  auto c = dial(s);
  // An empty row key in the middle of a batch: the batch is refused whole, as the
  // embedded API refuses it, and nothing of it is applied.
  std::vector<cellar::batch_op> bad{cellar::put("a").add("f", "q", "1"), cellar::put("").add("f", "q", "2")};
  auto r = c->batch("t", bad);
  REQUIRE(r);
  auto t = s.store->open_table("t");
  REQUIRE(t);
  auto want = t->batch(bad);
  REQUIRE(r->size() == 2);
  CHECK((*r)[1].st.code() == code::invalid_argument);
  CHECK((*r)[0].st.code() == want[0].st.code());
  CHECK(!(*r)[0].st);
  auto g = c->batch("t", {cellar::get("a")});
  REQUIRE(g);
  CHECK((*g)[0].row.cells.empty());
  // An unknown family fails its action; the call itself succeeds.
  auto fam = c->batch("t", {cellar::put("a").add("nope", "q", "1")});
  REQUIRE(fam);
  CHECK((*fam)[0].st.code() == code::family_not_found);
  // Too many actions.
  std::vector<cellar::batch_op> many(10001, cellar::batch_op(cellar::get("a")));
  auto big = c->batch("t", many);
  REQUIRE(!big);
  CHECK(big.error().code() == code::too_large);
  // The connection still works.
  REQUIRE(c->batch("t", {cellar::put("a").add("f", "q", "ok")}));
  auto after = c->batch("t", {cellar::get("a")});
  REQUIRE(after);
  CHECK(value_of((*after)[0]) == "ok");
}

TEST_CASE("frames: a scan returns one page and says whether more follow", "[frames]") {
  served_store s(cellar::partition_spec::hash(3), 1000);
  auto c = dial(s);
  auto p = c->scan("t", cellar::scan().start_row(row_name(10)), 25);
  REQUIRE(p);
  REQUIRE(p->rows.size() == 25);
  CHECK(!p->done);
  for (int i = 0; i < 25; ++i) {
    CHECK(p->rows[static_cast<std::size_t>(i)].row == row_name(10 + i));
    REQUIRE(p->rows[static_cast<std::size_t>(i)].cells.size() == 1);
    CHECK(p->rows[static_cast<std::size_t>(i)].cells[0].value == "v" + std::to_string(10 + i));
  }
  auto tail = c->scan("t", cellar::scan().start_row(row_name(990)), 100);
  REQUIRE(tail);
  CHECK(tail->rows.size() == 10);
  CHECK(tail->done);
  auto limited = c->scan("t", cellar::scan().start_row(row_name(0)).limit(5), 100);
  REQUIRE(limited);
  CHECK(limited->rows.size() == 5);
  CHECK(limited->done);

  auto zero = c->scan("t", cellar::scan(), 0);
  REQUIRE(!zero);
  CHECK(zero.error().code() == code::invalid_argument);
  auto missing = c->scan("nope", cellar::scan(), 10);
  REQUIRE(!missing);
  CHECK(missing.error().code() == code::table_not_found);
}

TEST_CASE("frames: the first request must be login, with the server's token", "[frames]") {
  served_store s(cellar::partition_spec{}, 10, "secret");
  auto wrong = frame_client::connect("127.0.0.1:" + std::to_string(s.server->port()), "guess");
  REQUIRE(!wrong);
  CHECK(wrong.error().code() == code::permission_denied);
  CHECK(wrong.error().message() == "wrong token");
  // Without a token the refusal says one is required, not that it is wrong.
  auto none = frame_client::connect("127.0.0.1:" + std::to_string(s.server->port()), "");
  REQUIRE(!none);
  CHECK(none.error().code() == code::permission_denied);
  CHECK(none.error().message() == "this server requires a token; none was given");
  auto right = dial(s, "secret");
  auto r = right->batch("t", {cellar::get(row_name(3))});
  REQUIRE(r);
  CHECK(value_of((*r)[0]) == "v3");

  // A batch without login: refused, nothing written.
  std::vector<unsigned char> out(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  capnp::MallocMessageBuilder m;
  auto req = m.initRoot<cellar::wire::Request>();
  req.setId(9);
  auto b = req.initBatch();
  b.setTable("t");
  cellar::rpc::to_wire(cellar::batch_op(cellar::put("intruder").add("f", "q", "x")), b.initActions(1)[0]);
  cellar::rpc::append_frame(out, m);
  auto words = raw_exchange(s, out);
  REQUIRE(cellar::rpc::frame_size(reinterpret_cast<const unsigned char*>(words.data()), words.size() * 8, {}) ==
          words.size() * 8);
  capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()));
  auto reply = reader.getRoot<cellar::wire::Reply>();
  CHECK(reply.getId() == 9);
  CHECK(reply.getError().getCode() == static_cast<std::uint16_t>(code::permission_denied));
  auto t = s.store->open_table("t");
  REQUIRE(t);
  auto g = t->get(cellar::get("intruder"));
  REQUIRE(g);
  CHECK(g->cells.empty());
}

// One round of 100 pipelined pairs on `c`: a put of "v<round*100+i>" to one of ten rows,
// then `follow(row)`, a request that must see that put. Half the pairs leave in one write,
// half apart: a put that waits at a busy actor may then meet its follower when the
// partition is free again but the put not yet run. Checks every put succeeded and returns
// the followers' replies in order.
template <class Follow>
std::vector<std::unique_ptr<cellar::rpc::frame_reply>> pipelined_pairs(frame_client& c, int round, Follow follow) {
  std::vector<std::uint64_t> puts, followers;
  for (int i = 0; i < 100; ++i) {
    const std::string row = "r" + std::to_string(i % 10);
    puts.push_back(c.send_batch("t", {cellar::put(row).add("f", "q", "v" + std::to_string(round * 100 + i))}));
    if (i % 2 == 1) {
      REQUIRE(c.flush());
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    followers.push_back(follow(row));
  }
  REQUIRE(c.flush());
  std::map<std::uint64_t, std::unique_ptr<cellar::rpc::frame_reply>> replies;
  while (replies.size() < 200) {
    auto r = c.receive();
    REQUIRE(r);
    const auto id = r.value()->get().getId();
    CHECK(replies.count(id) == 0);
    replies[id] = std::move(r.value());
  }
  std::vector<std::unique_ptr<cellar::rpc::frame_reply>> out;
  for (int i = 0; i < 100; ++i) {
    auto p = frame_client::batch_results(replies.at(puts[static_cast<std::size_t>(i)])->get());
    REQUIRE(p);
    REQUIRE((*p)[0].st);
    out.push_back(std::move(replies.at(followers[static_cast<std::size_t>(i)])));
  }
  return out;
}

TEST_CASE("frames: pipelined calls keep their order per partition", "[frames]") {
  auto spec = GENERATE(cellar::partition_spec{}, cellar::partition_spec::hash(4));
  served_store s(spec, 0);
  auto c = dial(s);
  // Another connection keeps the partitions busy, so that some calls wait at an actor
  // while later ones of this connection could run in place and overtake them.
  busy_connection busy(s);
  for (int round = 0; round < 5; ++round) {
    auto gets =
        pipelined_pairs(*c, round, [&](const std::string& row) { return c->send_batch("t", {cellar::get(row)}); });
    for (int i = 0; i < 100; ++i) {
      auto g = frame_client::batch_results(gets[static_cast<std::size_t>(i)]->get());
      REQUIRE(g);
      CHECK(value_of((*g)[0]) == "v" + std::to_string(round * 100 + i));
    }
  }
}

TEST_CASE("frames: a scan pipelined after a put sees it", "[frames]") {
  // A scan whose connection has nothing else in flight reads its page in place; one that
  // follows a put still waiting at a busy partition must not, or it would overtake it.
  auto spec = GENERATE(cellar::partition_spec{}, cellar::partition_spec::hash(4),
                       cellar::partition_spec::range_bounds({"r3", "r6"}));
  served_store s(spec, 0);
  auto c = dial(s);
  busy_connection busy(s);
  for (int round = 0; round < 5; ++round) {
    auto scans = pipelined_pairs(*c, round, [&](const std::string& row) {
      return c->send_scan("t", cellar::scan().start_row(row).stop_row(row, true), 1);
    });
    for (int i = 0; i < 100; ++i) {
      auto page = frame_client::page_of(scans[static_cast<std::size_t>(i)]->get());
      REQUIRE(page);
      REQUIRE(page->rows.size() == 1);
      REQUIRE(page->rows[0].cells.size() == 1);
      CHECK(page->rows[0].cells[0].value == "v" + std::to_string(round * 100 + i));
    }
  }
}

TEST_CASE("frames: replies are written after the client stops sending", "[frames]") {
  served_store s(cellar::partition_spec::hash(2), 50);
  std::vector<unsigned char> out(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  for (std::uint64_t id = 1; id <= 20; ++id) {
    capnp::MallocMessageBuilder m;
    auto req = m.initRoot<cellar::wire::Request>();
    req.setId(id);
    if (id == 1) {
      req.setLogin("");
    } else {
      auto b = req.initBatch();
      b.setTable("t");
      cellar::rpc::to_wire(cellar::batch_op(cellar::get(row_name(static_cast<int>(id)))), b.initActions(1)[0]);
    }
    cellar::rpc::append_frame(out, m);
  }
  const auto words = raw_exchange(s, out);
  const std::size_t total = words.size() * 8;
  std::size_t pos = 0, replies = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(words.data());
  while (pos < total) {
    const auto n = cellar::rpc::frame_size(p + pos, total - pos, {});
    REQUIRE(n > 0);
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data() + pos / 8, n / 8));
    auto reply = reader.getRoot<cellar::wire::Reply>();
    CHECK(reply.getError().getCode() == 0);
    if (reply.getId() > 1) {
      REQUIRE(reply.getResults().size() == 1);
      auto v = reply.getResults()[0].getRow().getCells()[0].getValue();
      CHECK(std::string(reinterpret_cast<const char*>(v.begin()), v.size()) == "v" + std::to_string(reply.getId()));
    }
    pos += n;
    ++replies;
  }
  CHECK(replies == 20);
}

// A client that keeps its socket full (pipelined gets written without pause, its replies
// read on another thread) must not hold the event loop: the server reads a few buffers of
// it, then lets the loop's other connections in (serve_direct's reads_per_turn).
TEST_CASE("frames: a client that never stops sending leaves room for the others", "[frames]") {
  served_store s(cellar::partition_spec::hash(2), 50);  // one event loop
  const std::vector<unsigned char> login = magic_and_login();
  std::vector<unsigned char> block;  // about 256 KB of gets
  while (block.size() < (256u << 10)) {
    capnp::MallocMessageBuilder m;
    auto req = m.initRoot<cellar::wire::Request>();
    req.setId(2);
    auto b = req.initBatch();
    b.setTable("t");
    cellar::rpc::to_wire(cellar::batch_op(cellar::get(row_name(7))), b.initActions(1)[0]);
    cellar::rpc::append_frame(block, m);
  }
  auto fd = cellar::rpc::connect_socket("127.0.0.1", s.server->port());
  ::fcntl(fd.get(), F_SETFL, 0);  // blocking
  REQUIRE(::send(fd.get(), login.data(), login.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(login.size()));
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> received{0};
  std::thread reader([&] {
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
      if (n <= 0) return;
      received += static_cast<std::uint64_t>(n);
    }
  });
  const auto flood_ends = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::thread writer([&] {
    while (!stop && std::chrono::steady_clock::now() < flood_ends)
      if (::send(fd.get(), block.data(), block.size(), MSG_NOSIGNAL) <= 0) return;
  });
  while (received.load() < (1u << 20) && std::chrono::steady_clock::now() < flood_ends)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // The flood is on: another client connects, logs in and reads, well before it ends.
  const auto t0 = std::chrono::steady_clock::now();
  auto c = dial(s);
  auto r = c->batch("t", {cellar::get(row_name(4))});
  const auto waited = std::chrono::steady_clock::now() - t0;
  const bool flood_on = std::chrono::steady_clock::now() < flood_ends;
  stop = true;
  writer.join();
  ::shutdown(fd.get(), SHUT_RDWR);
  reader.join();
  REQUIRE(r);
  CHECK(value_of((*r)[0]) == "v4");
  CHECK(flood_on);
  CHECK(waited < std::chrono::seconds(10));
}

TEST_CASE("frames: a malformed frame closes its connection only", "[frames]") {
  served_store s(cellar::partition_spec{}, 10);
  auto c = dial(s);
  auto fd = cellar::rpc::connect_socket("127.0.0.1", s.server->port());
  std::vector<unsigned char> out(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  out.insert(out.end(), std::begin(malformed_frame), std::end(malformed_frame));
  REQUIRE(::send(fd.get(), out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size()));
  ::fcntl(fd.get(), F_SETFL, 0);
  // Closed with no reply (at most the greeting, if it left before the bad frame was read).
  const auto got = read_until_closed(fd.get());
  CHECK((got.empty() || got == std::string(reinterpret_cast<const char*>(cellar::rpc::frame_magic), 8)));
  // The other frame connection and RPC connections go on.
  auto r = c->batch("t", {cellar::get(row_name(4))});
  REQUIRE(r);
  CHECK(value_of((*r)[0]) == "v4");
  rpc_client rpc(s);
  auto req = rpc.cellar.batchRequest();
  req.setTable("t");
  cellar::rpc::to_wire(cellar::batch_op(cellar::get(row_name(5))), req.initActions(1)[0]);
  auto res = req.send().wait(rpc.io.waitScope);
  REQUIRE(res.getResults().size() == 1);
  CHECK(res.getResults()[0].getRow().getCells().size() == 1);
}

// The server takes every frame of a read before it serves them (to prefetch their rows):
// a malformed frame among them must still fail only after the ones before it ran.
TEST_CASE("frames: the requests read before a malformed frame are served", "[frames]") {
  served_store s(cellar::partition_spec::hash(4), 0);
  std::vector<unsigned char> out = magic_and_login();
  for (int i = 0; i < 6; ++i) append_put(out, static_cast<std::uint64_t>(2 + i), "before-junk" + std::to_string(i));
  out.insert(out.end(), std::begin(malformed_frame), std::end(malformed_frame));
  send_until_closed(s, out);
  CHECK(cells_per_row(s, "before-junk", 6) == std::vector<std::size_t>(6, 1));
}

// The server decodes each frame of a read three frames before it serves it (to prefetch
// its row): a frame whose framing is sound but whose message does not decode (its root
// pointer points past its one segment) must still fail the session only after the frames
// before it ran, and none after it may run.
TEST_CASE("frames: a frame that does not decode fails after those before it, and those after it do not run",
          "[frames]") {
  served_store s(cellar::partition_spec::hash(4), 0);
  std::vector<unsigned char> out = magic_and_login();
  for (int i = 0; i < 6; ++i) append_put(out, static_cast<std::uint64_t>(2 + i), "before" + std::to_string(i));
  // One segment of one word: a struct pointer 1000 words past the segment's end.
  const unsigned char undecodable[16] = {0, 0, 0, 0, 1, 0, 0, 0, 0xa0, 0x0f, 0, 0, 1, 0, 0, 0};
  out.insert(out.end(), std::begin(undecodable), std::end(undecodable));
  for (int i = 0; i < 3; ++i) append_put(out, static_cast<std::uint64_t>(10 + i), "after" + std::to_string(i));
  send_until_closed(s, out);
  CHECK(cells_per_row(s, "before", 6) == std::vector<std::size_t>(6, 1));
  CHECK(cells_per_row(s, "after", 3) == std::vector<std::size_t>(3, 0));
}

// The server decodes a connection's gets into one reused request, and a get that sends no
// options (the load generator's) skips decoding them: such a get must read with the
// defaults, not with the options of the get before it on the connection.
TEST_CASE("frames: a get without options reads with the defaults after one with options", "[frames]") {
  served_store s(cellar::partition_spec{}, 0);
  auto t = s.store->open_table("t");
  REQUIRE(t);
  REQUIRE(t->put({cellar::put("wide").add("f", "a", 1, "x").add("f", "b", 1, "y").add("f", "b", 2, "z")}));
  std::vector<unsigned char> out(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  auto frame = [&](std::uint64_t id, auto fill) {
    capnp::MallocMessageBuilder m;
    auto req = m.initRoot<cellar::wire::Request>();
    req.setId(id);
    fill(req);
    cellar::rpc::append_frame(out, m);
  };
  frame(1, [](cellar::wire::Request::Builder r) { r.setLogin(""); });
  // id 2: only f:b, every version; id 3: no options at all; id 4: as 2 again.
  auto narrow = [](cellar::wire::Request::Builder r) {
    auto b = r.initBatch();
    b.setTable("t");
    cellar::rpc::to_wire(cellar::batch_op(cellar::get("wide").column("f", "b").all_versions()), b.initActions(1)[0]);
  };
  frame(2, narrow);
  frame(3, [](cellar::wire::Request::Builder r) {
    auto b = r.initBatch();
    b.setTable("t");
    auto g = b.initActions(1)[0].initGet();
    g.setRow(capnp::Data::Reader(reinterpret_cast<const kj::byte*>("wide"), 4));
    REQUIRE(!g.hasOptions());
  });
  frame(4, narrow);
  const auto words = raw_exchange(s, out);
  // The replies, by id: the qualifiers and values of each one's cells.
  std::map<std::uint64_t, std::vector<std::string>> got;
  std::size_t at = 0;
  while (at < words.size()) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(words.data() + at);
    const auto n = cellar::rpc::frame_size(bytes, (words.size() - at) * 8, {});
    REQUIRE(n > 0);
    REQUIRE(n % 8 == 0);
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data() + at, n / 8));
    auto reply = reader.getRoot<cellar::wire::Reply>();
    REQUIRE(reply.getError().getCode() == 0);
    auto& cells = got[reply.getId()];
    if (reply.hasResults())
      for (auto c : reply.getResults()[0].getRow().getCells())
        cells.push_back(std::string(reinterpret_cast<const char*>(c.getQualifier().begin()), c.getQualifier().size()) +
                        "=" + std::string(reinterpret_cast<const char*>(c.getValue().begin()), c.getValue().size()));
    at += n / 8;
  }
  REQUIRE(got.size() == 4);
  CHECK(got[2] == std::vector<std::string>{"b=z", "b=y"});
  CHECK(got[3] == std::vector<std::string>{"a=x", "b=z"});  // both columns, the newest version only
  CHECK(got[4] == std::vector<std::string>{"b=z", "b=y"});
}

namespace {

// Established TCP connections of this process's network namespace whose remote end is
// `port`: the client ends of connections to that server (/proc/net/tcp, IPv4).
std::size_t client_sockets_to(std::uint16_t port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  std::size_t n = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string sl, local, remote, state;
    fields >> sl >> local >> remote >> state;
    const auto colon = remote.find(':');
    if (colon == std::string::npos) continue;
    if (std::stoul(remote.substr(colon + 1), nullptr, 16) == port && state == "01") ++n;
  }
  return n;
}

}  // namespace

// cellar::rpc::connect (the client the shell uses) sends batches over a frame connection
// beside its RPC one, unless told not to; either way a batch gives the same results.
TEST_CASE("connect(): batches over frames give the RPC path's results", "[frames]") {
  served_store s(cellar::partition_spec::hash(4), 0);
  const std::string address = "127.0.0.1:" + std::to_string(s.server->port());
  add_table(*s.store, "twin", cellar::partition_spec::hash(4));
  std::mt19937 rng(17);
  std::vector<std::vector<cellar::batch_op>> batches;
  for (int round = 0; round < 200; ++round) {
    std::vector<cellar::batch_op> ops;
    const int n = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      const std::string row = "k" + std::to_string(rng() % 10);
      switch (rng() % 3) {
        case 0:
          ops.emplace_back(
              cellar::put(row).add("f", "q" + std::to_string(rng() % 3), 1 + round, "v" + std::to_string(rng())));
          break;
        case 1: ops.emplace_back(cellar::get(row)); break;
        default: ops.emplace_back(cellar::deletion(row).column("f", "q" + std::to_string(rng() % 3))); break;
      }
    }
    batches.push_back(std::move(ops));
  }
  // One connection at a time: a connection runs its own kj event loop on this thread.
  auto run = [&](const cellar::rpc::client_options& o, const std::string& table, std::size_t* sockets) {
    auto c = cellar::rpc::connect(address, o);
    REQUIRE(c);
    *sockets = client_sockets_to(s.server->port());
    std::vector<std::vector<cellar::op_result>> out;
    for (const auto& ops : batches) out.push_back(c.value()->batch(table, ops));
    auto missing = c.value()->batch("nope", {cellar::get("x"), cellar::get("y")});
    REQUIRE(missing.size() == 2);
    CHECK(missing[0].st.code() == code::table_not_found);
    CHECK(missing[1].st.code() == code::table_not_found);
    return out;
  };
  std::size_t with_frames = 0, without = 0;
  auto a = run(cellar::rpc::client_options{}, "t", &with_frames);
  cellar::rpc::client_options plain;
  plain.frames = false;
  auto b = run(plain, "twin", &without);
  CHECK(with_frames == 2);  // RPC and frames
  CHECK(without == 1);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == b[i].size());
    for (std::size_t j = 0; j < a[i].size(); ++j) {
      CHECK(a[i][j].st.code() == b[i][j].st.code());
      CHECK(a[i][j].row.cells == b[i][j].row.cells);
    }
  }
  // A wrong token is refused.
  served_store guarded(cellar::partition_spec{}, 0, "secret");
  cellar::rpc::client_options wrong;
  wrong.token = "guess";
  auto refused = cellar::rpc::connect("127.0.0.1:" + std::to_string(guarded.server->port()), wrong);
  REQUIRE(!refused);
  CHECK(refused.error().code() == code::permission_denied);
  CHECK(refused.error().message() == "wrong token");
  auto no_token = cellar::rpc::connect("127.0.0.1:" + std::to_string(guarded.server->port()), {});
  REQUIRE(!no_token);
  CHECK(no_token.error().code() == code::permission_denied);
  CHECK(no_token.error().message() == "this server requires a token; none was given");
}

// A server without frames (as an older one) closes a frame connection at its first bytes;
// connect() then keeps everything on RPC, and batches still work.
TEST_CASE("connect(): a server without frames is served over RPC alone", "[frames]") {
  served_store s(cellar::partition_spec{}, 10, "", /*frames=*/false);
  const std::string address = "127.0.0.1:" + std::to_string(s.server->port());
  auto direct = frame_client::connect(address);
  REQUIRE(!direct);
  CHECK(direct.error().code() == code::unavailable);
  auto c = cellar::rpc::connect(address);
  REQUIRE(c);
  CHECK(client_sockets_to(s.server->port()) == 1);
  auto r = c.value()->batch("t", {cellar::put("n").add("f", "q", "new"), cellar::get(row_name(3))});
  REQUIRE(r.size() == 2);
  CHECK(r[0].st);
  CHECK(value_of(r[1]) == "v3");
}
