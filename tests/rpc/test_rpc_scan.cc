// Scans over RPC against an in-process server: pages are fetched without blocking a
// thread, and `next` calls pipelined on one scanner are answered in order.
#include <kj/async-io.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/store.h"
#include "rpc/convert.h"
#include "rpc/message_stream.h"
#include "rpc/server.h"
#include "served_store.h"

namespace {

capnp::Data::Reader bytes(const std::string& s) {
  return {reinterpret_cast<const capnp::byte*>(s.data()), s.size()};
}

}  // namespace

TEST_CASE("pipelined next calls on one scanner return every row once, in order", "[rpc][scan]") {
  auto spec = GENERATE(cellar::partition_spec{}, cellar::partition_spec::hash(4),
                       cellar::partition_spec::range_bounds({row_name(250), row_name(500), row_name(750)}));
  served_store s(spec);
  rpc_client client(s);
  auto& io = client.io;
  auto cellar_cap = client.cellar;

  auto scan = cellar_cap.scanRequest();
  scan.setTable("t");
  scan.getScan().setCaching(37);  // pages that do not line up with the calls
  auto opened = scan.send();
  // Eight calls of 130 rows, all sent before the first answer arrives.
  std::vector<kj::Promise<capnp::Response<cellar::wire::Scanner::NextResults>>> calls;
  for (int i = 0; i < 8; ++i) {
    auto next = opened.getScanner().nextRequest();
    next.setCount(130);
    calls.push_back(next.send());
  }
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    auto r = calls[i].wait(io.waitScope);
    REQUIRE(r.getError().getCode() == 0);
    for (auto rr : r.getResults()) rows.emplace_back(reinterpret_cast<const char*>(rr.getRow().begin()), rr.getRow().size());
    CHECK(r.getDone() == (i == calls.size() - 1));  // 1000 rows: the 8th call comes up short
  }
  REQUIRE(rows.size() == 1000);
  for (int i = 0; i < 1000; ++i) CHECK(rows[static_cast<std::size_t>(i)] == row_name(i));
}

TEST_CASE("a scan of a dropped table ends with an error, not a hang", "[rpc][scan]") {
  served_store s(cellar::partition_spec::hash(3));
  rpc_client client(s);
  auto& io = client.io;
  auto cellar_cap = client.cellar;
  auto scan = cellar_cap.scanRequest();
  scan.setTable("t");
  scan.getScan().setCaching(10);
  auto opened = scan.send().wait(io.waitScope);
  REQUIRE(opened.getError().getCode() == 0);
  auto first = opened.getScanner().nextRequest();
  first.setCount(5);
  REQUIRE(first.send().wait(io.waitScope).getResults().size() == 5);
  REQUIRE(s.store->drop_table("t"));
  auto rest = opened.getScanner().nextRequest();
  rest.setCount(2000);
  auto r = rest.send().wait(io.waitScope);
  // Rows already buffered may come back; the partitions' answer to the next page is an error.
  CHECK(r.getError().getCode() != 0);
  CHECK(r.getDone());
}

TEST_CASE("the scan call returns the first page; a scan that ends there has no scanner", "[rpc][scan]") {
  auto spec = GENERATE(cellar::partition_spec::hash(4),
                       cellar::partition_spec::range_bounds({row_name(250), row_name(500), row_name(750)}));
  served_store s(spec);
  rpc_client client(s);
  auto& io = client.io;
  auto cellar_cap = client.cellar;
  auto rows_of = [](auto results) {
    std::vector<std::string> out;
    for (auto rr : results) out.emplace_back(reinterpret_cast<const char*>(rr.getRow().begin()), rr.getRow().size());
    return out;
  };

  SECTION("the limit ends the scan inside the first page") {
    auto scan = cellar_cap.scanRequest();
    scan.setTable("t");
    const std::string start = row_name(240);
    scan.getScan().setStart(bytes(start));
    scan.getScan().setLimit(20);  // crosses the range bound at row 250
    scan.setFirstCount(20);
    auto r = scan.send().wait(io.waitScope);
    REQUIRE(r.getError().getCode() == 0);
    CHECK(r.getDone());
    CHECK_FALSE(r.hasScanner());
    auto rows = rows_of(r.getResults());
    REQUIRE(rows.size() == 20);
    for (int i = 0; i < 20; ++i) CHECK(rows[static_cast<std::size_t>(i)] == row_name(240 + i));
  }
  SECTION("the rest follows through the scanner, in order") {
    auto scan = cellar_cap.scanRequest();
    scan.setTable("t");
    scan.setFirstCount(300);
    auto r = scan.send().wait(io.waitScope);
    REQUIRE(r.getError().getCode() == 0);
    CHECK_FALSE(r.getDone());
    auto rows = rows_of(r.getResults());
    CHECK(rows.size() == 300);
    auto next = r.getScanner().nextRequest();
    next.setCount(5000);
    auto rest = next.send().wait(io.waitScope);
    CHECK(rest.getDone());
    for (auto& x : rows_of(rest.getResults())) rows.push_back(x);
    REQUIRE(rows.size() == 1000);
    for (int i = 0; i < 1000; ++i) CHECK(rows[static_cast<std::size_t>(i)] == row_name(i));
  }
  SECTION("an unknown table is an error and no scanner") {
    auto scan = cellar_cap.scanRequest();
    scan.setTable("nope");
    scan.setFirstCount(10);
    auto r = scan.send().wait(io.waitScope);
    CHECK(r.getError().getCode() != 0);
    CHECK_FALSE(r.hasScanner());
  }
}
