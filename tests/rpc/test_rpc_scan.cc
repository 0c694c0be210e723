// Scans over RPC against an in-process server: pages are fetched without blocking a
// thread, and `next` calls pipelined on one scanner are answered in order.
#include <kj/async-io.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/client.h"
#include "cellar/filter.h"
#include "cellar/store.h"
#include "route/router.h"
#include "rpc/convert.h"
#include "rpc/frames.h"
#include "rpc/message_stream.h"
#include "rpc/scoped_scan.h"
#include "rpc/server.h"
#include "served_store.h"

namespace {

capnp::Data::Reader bytes(const std::string& s) { return {reinterpret_cast<const capnp::byte*>(s.data()), s.size()}; }

std::string str(capnp::Data::Reader d) { return {reinterpret_cast<const char*>(d.begin()), d.size()}; }

template <class Results>
std::vector<std::string> rows_of(Results results) {
  std::vector<std::string> out;
  for (auto rr : results) out.push_back(str(rr.getRow()));
  return out;
}

std::vector<std::string> rows_of(const std::vector<cellar::row_result>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r.row);
  return out;
}

std::string address_of(const served_store& s) { return "127.0.0.1:" + std::to_string(s.server->port()); }

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
    for (auto rr : r.getResults())
      rows.emplace_back(reinterpret_cast<const char*>(rr.getRow().begin()), rr.getRow().size());
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

TEST_CASE("a scan over chosen partitions visits only those; a partition the table lacks is INVALID_ARGUMENT",
          "[rpc][scan][cluster-wire]") {
  const auto spec = cellar::partition_spec::hash(4);
  served_store s(spec);
  std::vector<std::string> expected;  // the rows of partitions 1 and 3, in order
  for (int i = 0; i < 1000; ++i) {
    const auto p = cellar::detail::partition_of(spec, row_name(i));
    if (p == 1 || p == 3) expected.push_back(row_name(i));
  }
  REQUIRE(expected.size() > 300);
  REQUIRE(expected.size() < 700);

  SECTION("RPC: the first page and the scanner's") {
    rpc_client client(s);
    auto scan = client.cellar.scanRequest();
    scan.setTable("t");
    auto ps = scan.initPartitions(2);
    ps.set(0, 3);
    ps.set(1, 1);
    scan.setNoForward(true);  // not a cluster member: nothing to refuse
    scan.setFirstCount(100);
    auto r = scan.send().wait(client.io.waitScope);
    REQUIRE(r.getError().getCode() == 0);
    auto rows = rows_of(r.getResults());
    REQUIRE_FALSE(r.getDone());
    auto next = r.getScanner().nextRequest();
    next.setCount(5000);
    auto rest = next.send().wait(client.io.waitScope);
    CHECK(rest.getDone());
    for (auto& x : rows_of(rest.getResults())) rows.push_back(x);
    CHECK(rows == expected);

    auto bad = client.cellar.scanRequest();
    bad.setTable("t");
    bad.initPartitions(2).set(1, 4);
    bad.setFirstCount(10);
    auto refused = bad.send().wait(client.io.waitScope);
    CHECK(refused.getError().getCode() == static_cast<std::uint16_t>(cellar::code::invalid_argument));
    CHECK(std::string(refused.getError().getMessage().cStr()).find("has no partition 4 (it has 4)") !=
          std::string::npos);
    CHECK_FALSE(refused.hasScanner());
  }
  SECTION("frames") {
    auto c = cellar::rpc::frame_client::connect(address_of(s));
    REQUIRE(c);
    cellar::detail::scan_scope scope;
    scope.partitions = {1, 3};
    auto page = (*c)->scan("t", cellar::scan(), 10000, scope);
    REQUIRE(page);
    CHECK(page->done);
    CHECK(rows_of(page->rows) == expected);
    scope.partitions = {7};
    CHECK((*c)->scan("t", cellar::scan(), 10, scope).code() == cellar::code::invalid_argument);
  }
  SECTION("the client library, in both directions") {
    auto c = cellar::rpc::connect(address_of(s));
    REQUIRE(c);
    cellar::detail::scan_scope scope;
    scope.partitions = {3, 1};
    scope.no_forward = true;
    for (bool reversed : {false, true}) {
      auto st = cellar::rpc::scan_scoped(**c, "t", cellar::scan().reversed(reversed).caching(33), scope);
      REQUIRE(st);
      auto all = (*st)->next(5000);
      REQUIRE(all);
      CHECK((*st)->over());
      CHECK_FALSE((*st)->filter_end());
      auto want = expected;
      if (reversed) std::reverse(want.begin(), want.end());
      CHECK(rows_of(*all) == want);
    }
    scope.partitions = {4};
    CHECK(cellar::rpc::scan_scoped(**c, "t", cellar::scan(), scope).code() == cellar::code::invalid_argument);
  }
}

TEST_CASE("the last page of a scan a filter ended says where: the scanner, RPC and frames",
          "[rpc][scan][cluster-wire]") {
  served_store s(cellar::partition_spec::hash(4));
  // Each partition stops at its first row past row00500 (in scan direction); the scan ends
  // at the earliest of them, row00500 itself.
  const cellar::filter before_500 = cellar::while_match_filter{
      cellar::row_filter{cellar::compare_op::less, cellar::comparator::binary(row_name(500))}};
  const cellar::filter after_500 = cellar::while_match_filter{
      cellar::row_filter{cellar::compare_op::greater, cellar::comparator::binary(row_name(500))}};

  SECTION("the scanner") {
    auto t = s.store->open_table("t");
    REQUIRE(t);
    auto sc = t->scan(cellar::scan().filter(before_500).caching(16));
    REQUIRE(sc);
    auto all = sc->all();
    REQUIRE(all);
    CHECK(all->size() == 500);
    REQUIRE(sc->filter_end());
    CHECK(*sc->filter_end() == cellar::scan_end{row_name(500), false});
    auto rev = t->scan(cellar::scan().filter(after_500).reversed());
    REQUIRE(rev);
    REQUIRE(rev->all());
    CHECK(rev->filter_end() == std::optional<cellar::scan_end>(cellar::scan_end{row_name(500), false}));
    auto plain = t->scan(cellar::scan());
    REQUIRE(plain);
    REQUIRE(plain->all());
    CHECK_FALSE(plain->filter_end());
  }
  SECTION("RPC: on the last page only") {
    rpc_client client(s);
    auto scan = client.cellar.scanRequest();
    scan.setTable("t");
    cellar::rpc::to_wire(cellar::scan().filter(before_500).caching(16), scan.initScan());
    scan.setFirstCount(10);
    auto r = scan.send().wait(client.io.waitScope);
    REQUIRE(r.getError().getCode() == 0);
    REQUIRE_FALSE(r.getDone());
    CHECK_FALSE(r.hasFilterEnd());
    auto next = r.getScanner().nextRequest();
    next.setCount(5000);
    auto rest = next.send().wait(client.io.waitScope);
    REQUIRE(rest.getDone());
    CHECK(rows_of(r.getResults()).size() + rows_of(rest.getResults()).size() == 500);
    REQUIRE(rest.hasFilterEnd());
    CHECK(str(rest.getFilterEnd().getRow()) == row_name(500));
    CHECK_FALSE(rest.getFilterEnd().getBeforeAll());

    auto whole = client.cellar.scanRequest();  // ended inside the scan call's page
    whole.setTable("t");
    cellar::rpc::to_wire(cellar::scan().filter(after_500).reversed(), whole.initScan());
    whole.setFirstCount(1000);
    auto w = whole.send().wait(client.io.waitScope);
    REQUIRE(w.getDone());
    CHECK(w.getResults().size() == 499);
    REQUIRE(w.hasFilterEnd());
    CHECK(str(w.getFilterEnd().getRow()) == row_name(500));

    auto plain = client.cellar.scanRequest();
    plain.setTable("t");
    plain.setFirstCount(2000);
    auto p = plain.send().wait(client.io.waitScope);
    REQUIRE(p.getDone());
    CHECK_FALSE(p.hasFilterEnd());
  }
  SECTION("frames and the client library") {
    auto f = cellar::rpc::frame_client::connect(address_of(s));
    REQUIRE(f);
    auto page = (*f)->scan("t", cellar::scan().filter(before_500), 10000);
    REQUIRE(page);
    CHECK(page->done);
    CHECK(page->rows.size() == 500);
    CHECK(page->filter_end == std::optional<cellar::scan_end>(cellar::scan_end{row_name(500), false}));
    auto partial = (*f)->scan("t", cellar::scan().filter(before_500), 20);  // not the last page
    REQUIRE(partial);
    CHECK_FALSE(partial->done);
    CHECK_FALSE(partial->filter_end);

    auto c = cellar::rpc::connect(address_of(s));
    REQUIRE(c);
    auto st = cellar::rpc::scan_scoped(**c, "t", cellar::scan().filter(after_500).reversed().caching(7), {});
    REQUIRE(st);
    CHECK_FALSE((*st)->filter_end());  // not over yet
    auto all = (*st)->next(5000);
    REQUIRE(all);
    CHECK(all->size() == 499);
    CHECK((*st)->over());
    CHECK((*st)->filter_end() == std::optional<cellar::scan_end>(cellar::scan_end{row_name(500), false}));
  }
}
