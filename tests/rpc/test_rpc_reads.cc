// Batches over RPC that the server runs on its own thread (in place, dispatch/dispatch.h) when
// nothing of the connection waits ahead of them at their partitions (dispatch/call_order.h): a
// read must still see every write the same connection sent before it, and a write must not
// overtake a read sent before it, pipelined or not. (tests/internal/test_call_order.cc
// checks the rule itself; these check the server keeps it.)
#include <kj/async-io.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/store.h"
#include "rpc/convert.h"
#include "rpc/message_stream.h"
#include "rpc/server.h"
#include "served_store.h"

namespace {

kj::Promise<capnp::Response<cellar::wire::Cellar::BatchResults>> send(cellar::wire::Cellar::Client& c,
                                                                      const cellar::batch_op& op) {
  auto req = c.batchRequest();
  req.setTable("t");
  cellar::rpc::to_wire(op, req.initActions(1)[0]);
  return req.send();
}

std::string value_of(const capnp::Response<cellar::wire::Cellar::BatchResults>& r) {
  REQUIRE(r.getError().getCode() == 0);
  REQUIRE(r.getResults().size() == 1);
  auto row = r.getResults()[0].getRow();
  if (row.getCells().size() != 1) return "";
  auto v = row.getCells()[0].getValue();
  return {reinterpret_cast<const char*>(v.begin()), v.size()};
}

}  // namespace

TEST_CASE("a read sees the writes its connection sent before it, pipelined or not", "[rpc]") {
  auto spec = GENERATE(cellar::partition_spec{}, cellar::partition_spec::hash(4));
  served_store s(spec, 0);
  rpc_client client(s);
  auto& io = client.io;
  auto c = client.cellar;

  // Pipelined: every put and the get after it leave before any answer arrives.
  {
    busy_connection busy(s);
    for (int round = 0; round < 5; ++round) {
      std::vector<kj::Promise<capnp::Response<cellar::wire::Cellar::BatchResults>>> puts, gets;
      for (int i = 0; i < 100; ++i) {
        const std::string row = "r" + std::to_string(i % 10);
        puts.push_back(send(c, cellar::put(row).add("f", "q", "v" + std::to_string(round * 100 + i))));
        gets.push_back(send(c, cellar::get(row)));
      }
      for (int i = 0; i < 100; ++i) {
        REQUIRE(puts[static_cast<std::size_t>(i)].wait(io.waitScope).getError().getCode() == 0);
        CHECK(value_of(gets[static_cast<std::size_t>(i)].wait(io.waitScope)) == "v" + std::to_string(round * 100 + i));
      }
    }
  }
  // One at a time (the reads take the in-place path).
  for (int i = 0; i < 100; ++i) {
    REQUIRE(send(c, cellar::put("s").add("f", "q", "w" + std::to_string(i))).wait(io.waitScope).getError().getCode() ==
            0);
    CHECK(value_of(send(c, cellar::get("s")).wait(io.waitScope)) == "w" + std::to_string(i));
  }
}

// Writes are run in place too (dispatch/dispatch.h) when nothing of the connection waits at
// their partition: such a write must not overtake a read the same connection sent before it.
TEST_CASE("a write does not overtake the reads its connection sent before it", "[rpc]") {
  auto spec = GENERATE(cellar::partition_spec{}, cellar::partition_spec::hash(4));
  served_store s(spec, 0);
  rpc_client client(s);
  auto& io = client.io;
  auto c = client.cellar;

  REQUIRE(send(c, cellar::put("x").add("f", "q", "v0")).wait(io.waitScope).getError().getCode() == 0);
  auto busy = std::make_unique<busy_connection>(s);
  // Pipelined pairs: get x, then put x; each get sees the put before it, not the one after.
  int version = 0;
  for (int round = 0; round < 5; ++round) {
    std::vector<kj::Promise<capnp::Response<cellar::wire::Cellar::BatchResults>>> gets, puts;
    for (int i = 1; i <= 100; ++i) {
      gets.push_back(send(c, cellar::get("x")));
      puts.push_back(send(c, cellar::put("x").add("f", "q", "v" + std::to_string(version + i))));
    }
    for (int i = 1; i <= 100; ++i) {
      CHECK(value_of(gets[static_cast<std::size_t>(i - 1)].wait(io.waitScope)) ==
            "v" + std::to_string(version + i - 1));
      REQUIRE(puts[static_cast<std::size_t>(i - 1)].wait(io.waitScope).getError().getCode() == 0);
    }
    version += 100;
  }
  busy.reset();
  // One at a time (both take the in-place path): each write is seen by the next read.
  for (int i = 0; i < 100; ++i) {
    REQUIRE(send(c, cellar::put("x").add("f", "q", "w" + std::to_string(i))).wait(io.waitScope).getError().getCode() ==
            0);
    CHECK(value_of(send(c, cellar::get("x")).wait(io.waitScope)) == "w" + std::to_string(i));
  }
}
