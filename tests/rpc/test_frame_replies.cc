// plain_ok_reply (rpc/frame_replies.h): the copied reply to a batch of one plain OK result
// is byte for byte what fill_batch_reply builds, for any id; fits() takes exactly the
// results the template holds.
#include <catch2/catch.hpp>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "rpc/frame_replies.h"
#include "rpc/frames.h"

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
