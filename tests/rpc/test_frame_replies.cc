// rpc/frame_replies.h: the copied reply to a batch of one plain OK result is byte for
// byte what fill_batch_reply builds, for any id, and fits() takes exactly the results the
// template holds. A connection's reused requests carry nothing into the next one.
#include <catch2/catch.hpp>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <string>

#include "rpc/convert.h"
#include "rpc/frame_replies.h"
#include "rpc/frames.h"
#include "served_store.h"

using cellar::op_result;
using cellar::status;
using cellar::rpc::plain_ok_reply;

namespace {

std::vector<unsigned char> built(std::uint64_t id, const status& s, const std::vector<op_result>& r) {
  capnp::MallocMessageBuilder b;
  cellar::rpc::fill_batch_reply(b.initRoot<cellar::wire::Reply>(), id, s, r);
  std::vector<unsigned char> out;
  cellar::rpc::append_frame(out, b);
  return out;
}

}  // namespace

TEST_CASE("plain OK reply: the copy is the built reply, for every id", "[rpc][frames]") {
  plain_ok_reply reply;
  REQUIRE(reply.enabled());
  for (std::uint64_t id : {0ull, 1ull, 255ull, 0x100ull, 0x8000000000000000ull, ~0ull, 0x0123456789abcdefull}) {
    INFO("id " << id);
    const std::vector<op_result> one(1);
    CHECK(reply.bytes(id) == built(id, status::ok(), one));
    // And it reads back as that reply.
    const auto& bytes = reply.bytes(id);
    std::vector<capnp::word> words(bytes.size() / sizeof(capnp::word));
    std::memcpy(words.data(), bytes.data(), bytes.size());
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()));
    auto r = reader.getRoot<cellar::wire::Reply>();
    CHECK(r.getId() == id);
    CHECK(r.getError().getCode() == 0);
    REQUIRE(r.getResults().size() == 1);
    CHECK(r.getResults()[0].getError().getCode() == 0);
    CHECK(r.getResults()[0].getRow().getCells().size() == 0);
  }
}

TEST_CASE("plain OK reply: fits only a batch of one plain OK result", "[rpc][frames]") {
  const std::vector<op_result> one(1);
  CHECK(plain_ok_reply::fits(status::ok(), one));
  CHECK_FALSE(plain_ok_reply::fits(status::ok(), std::vector<op_result>(2)));
  CHECK_FALSE(plain_ok_reply::fits(status::ok(), {}));
  CHECK_FALSE(plain_ok_reply::fits(status{cellar::code::unavailable, "down"}, one));
  auto differs = [](auto change) {
    std::vector<op_result> r(1);
    change(r[0]);
    return !plain_ok_reply::fits(status::ok(), r);
  };
  CHECK(differs([](op_result& x) { x.st = status{cellar::code::not_found, "no"}; }));
  CHECK(differs([](op_result& x) { x.processed = true; }));
  CHECK(differs([](op_result& x) { x.row.row = "r"; }));
  CHECK(differs([](op_result& x) { x.row.exists = true; }));
  CHECK(differs([](op_result& x) { x.row.partial = true; }));
  CHECK(differs([](op_result& x) { x.row.cells.push_back({"r", "f", "q", 1, "v"}); }));
}

TEST_CASE("frames: gets of one connection with different options each read with their own", "[rpc][frames]") {
  // The server decodes every get of a connection into the same object (get_in_place):
  // nothing of one get's options may carry into the next.
  served_store s(cellar::partition_spec::hash(2), 0);
  auto c = cellar::rpc::frame_client::connect("127.0.0.1:" + std::to_string(s.server->port()));
  REQUIRE(c);
  auto& client = *c.value();
  for (const std::string row : {"r1", "r2"})
    REQUIRE(client.batch("t", {cellar::put(row).add("f", "a", 5, row + "a").add("f", "b", 5, row + "b")}));
  auto cells = [&](cellar::get g) {
    auto r = client.batch("t", {std::move(g)});
    REQUIRE(r);
    REQUIRE(r.value().at(0).st);
    std::vector<std::string> out;
    for (const auto& x : r.value()[0].row.cells) out.push_back(x.row + ":" + x.qualifier);
    return out;
  };
  using v = std::vector<std::string>;
  for (int round = 0; round < 2; ++round) {
    CHECK(cells(cellar::get("r1").column("f", "a")) == v{"r1:a"});
    CHECK(cells(cellar::get("r1")) == v{"r1:a", "r1:b"});
    CHECK(cells(cellar::get("r2").column("f", "b")) == v{"r2:b"});
    CHECK(cells(cellar::get("r2").range(0, 3)).empty());  // before both cells
    CHECK(cells(cellar::get("r2")) == v{"r2:a", "r2:b"});
    CHECK(cells(cellar::get("r1").filter(cellar::parse_filter("QualifierFilter(=, 'binary:b')").value())) == v{"r1:b"});
    CHECK(cells(cellar::get("r1")) == v{"r1:a", "r1:b"});
  }
}

TEST_CASE("frames: puts of one connection with different shapes each write only their own cells", "[rpc][frames]") {
  // The server decodes every put of a connection into the same object (put_in_place):
  // nothing of one put's entries, timestamp or TTL may carry into the next.
  served_store s(cellar::partition_spec::hash(2), 0);
  auto c = cellar::rpc::frame_client::connect("127.0.0.1:" + std::to_string(s.server->port()));
  REQUIRE(c);
  auto& client = *c.value();
  auto write = [&](cellar::put p) {
    auto r = client.batch("t", {std::move(p)});
    REQUIRE(r);
    REQUIRE(r.value().size() == 1);
    return r.value()[0].st;
  };
  auto cells = [&](const std::string& row) {
    auto r = client.batch("t", {cellar::get(row).max_versions(10)});
    REQUIRE(r);
    REQUIRE(r.value().at(0).st);
    std::vector<std::string> out;
    for (const auto& x : r.value()[0].row.cells)
      out.push_back(x.qualifier + "@" + std::to_string(x.timestamp) + "=" + x.value);
    return out;
  };
  using v = std::vector<std::string>;
  REQUIRE(write(cellar::put("r1").add("f", "a", 5, "1").add("f", "b", 5, "22")));
  REQUIRE(write(cellar::put("r2").add("f", "c", 5, "3")));
  CHECK(cells("r1") == v{"a@5=1", "b@5=22"});
  CHECK(cells("r2") == v{"c@5=3"});
  // A cell TTL long past, then a put without one at the same timestamp.
  REQUIRE(write(cellar::put("r3").add("f", "a", 5, "gone").ttl(1)));
  REQUIRE(write(cellar::put("r4").add("f", "a", 5, "kept")));
  CHECK(cells("r3").empty());
  CHECK(cells("r4") == v{"a@5=kept"});
  // The put's own timestamp, then the server's time.
  REQUIRE(write(cellar::put("r5", 7).add("f", "a", "x")));
  REQUIRE(write(cellar::put("r6").add("f", "a", "y")));
  CHECK(cells("r5") == v{"a@7=x"});
  const auto now = cells("r6");
  REQUIRE(now.size() == 1);
  CHECK(now[0] != "a@7=y");
  // A refused put answers its error and leaves nothing; the next is written.
  const auto bad = write(cellar::put("r7").add("nope", "a", 5, "z"));
  CHECK(bad.code() == cellar::code::family_not_found);
  CHECK(cells("r7").empty());
  REQUIRE(write(cellar::put("r7").add("f", "a", 5, "ok")));
  CHECK(cells("r7") == v{"a@5=ok"});
  // A shorter value after a longer one, and an empty one (the family keeps every version).
  REQUIRE(write(cellar::put("r1").add("f", "b", 6, "2")));
  REQUIRE(write(cellar::put("r1").add("f", "a", 6, "")));
  CHECK(cells("r1") == v{"a@6=", "a@5=1", "b@6=2", "b@5=22"});
  // A put larger than the session keeps (its storage is let go), then small ones again; a
  // row wider than the session keeps views for, then a narrow one.
  const std::string big(200 << 10, 'x');
  REQUIRE(write(cellar::put("r8").add("f", "a", 5, big)));
  REQUIRE(write(cellar::put("r9").add("f", "a", 5, "small")));
  auto r8 = client.batch("t", {cellar::get("r8")});
  REQUIRE(r8);
  REQUIRE(r8.value().at(0).row.cells.size() == 1);
  CHECK(r8.value()[0].row.cells[0].value == big);
  CHECK(cells("r9") == v{"a@5=small"});
  cellar::put wide("r10");
  for (int i = 0; i < 3000; ++i) wide.add("f", "q" + std::to_string(10000 + i), 5, "w");
  REQUIRE(write(std::move(wide)));
  CHECK(cells("r10").size() == 3000);
  CHECK(cells("r9") == v{"a@5=small"});
  REQUIRE(write(cellar::put("r9").add("f", "b", 5, "after")));
  CHECK(cells("r9") == v{"a@5=small", "b@5=after"});
}
