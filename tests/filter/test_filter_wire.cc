// Every filter kind gives the same answer embedded and through a cellar-server, over
// Cap'n Proto RPC and over frames, structured or as text; bad filters answer
// INVALID_ARGUMENT on both protocols.
#include <catch2/catch.hpp>

#include <capnp/message.h>

#include <set>

#include "cellar/client.h"
#include "cellar/connection.h"
#include "filter_fixture.h"
#include "rpc/convert.h"
#include "rpc/frames.h"
#include "rpc/server.h"

using namespace cellar;
using namespace filter_test;

namespace {

// One filter of every kind (and the language's compound forms), as text.
const char* const every_kind[] = {
    "RowFilter(>=, 'binary:r05')",
    "RowFilter(=, 'regexstring:r0[13]')",
    "FamilyFilter(=, 'binary:g')",
    "QualifierFilter(<, 'binary:c')",
    "ValueFilter(=, 'substring:V1')",
    "ValueFilter(>, 'long:5')",
    "ValueFilter(=, 'bitand:\x01')",
    "ValueFilter(!=, 'null:')",
    "PrefixFilter('r1')",
    "ColumnPrefixFilter('b')",
    "MultipleColumnPrefixFilter('a', 'c')",
    "ColumnRangeFilter('b', true, 'c', true)",
    "ColumnCountGetFilter(2)",
    "ColumnPaginationFilter(2, 1)",
    "ColumnPaginationFilter(1, 'b')",
    "PageFilter(3)",
    "SingleColumnValueFilter('f', 'a', =, 'binary:v1', true, true)",
    "SingleColumnValueExcludeFilter('f', 'a', =, 'binary:v1')",
    "ColumnValueFilter('f', 'b', >=, 'binary:v1')",
    "DependentColumnFilter('f', 'a', false)",
    "DependentColumnFilter('f', 'a', true, =, 'binary:v2')",
    "FirstKeyOnlyFilter()",
    "KeyOnlyFilter(true)",
    "InclusiveStopFilter('r04')",
    "TimestampsFilter(2, 3, true)",
    "RandomRowFilter(1073741824)",  // 2.0: every row
    "SKIP ValueFilter(!=, 'binary:v3')",
    "WHILE RowFilter(<, 'binary:r07')",
    "PrefixFilter('r0') AND (ColumnPrefixFilter('a') OR ColumnPrefixFilter('c'))",
    "MultiRowRangeFilter('r02', true, 'r04', false, 'r10', false, 'r12', true)",
    "FuzzyRowFilter('r?1', '010')",
};

struct served {
  std::unique_ptr<store> s = open_store();
  std::unique_ptr<rpc::server> server;
  std::string address;

  served() {
    table_descriptor d;
    d.name = "t";
    d.partitioning = partition_spec::hash(3);
    d.families = {family_descriptor{"f"}, family_descriptor{"g"}};
    REQUIRE(s->create_table(d, schema_origin::oceanbase_ddl));
    auto t = s->open_table("t");
    REQUIRE(t);
    for (int i = 0; i < 15; ++i) {
      char row[8];
      std::snprintf(row, sizeof row, "r%02d", i);
      put p(row);
      for (std::int64_t ts = 1; ts <= 3; ++ts) {
        p.add("f", "a", ts, "v" + std::to_string((i + ts) % 4));
        p.add("f", "b", ts + 1, "V" + std::to_string((i * ts) % 3));
      }
      p.add("g", "c", 2, long_bytes(i));
      REQUIRE(t->put(p));
    }
    rpc::server_options so;
    so.port = 0;
    auto srv = rpc::server::start(*s, so);
    REQUIRE(srv);
    server = std::move(srv.value());
    address = "127.0.0.1:" + std::to_string(server->port());
  }
};

std::vector<std::string> scan_all(connection& c, const scan& s) {
  auto st = c.scan("t", s);
  INFO(st.error().to_string());
  REQUIRE(st);
  std::vector<std::string> out;
  for (;;) {
    auto page = st.value()->next(4);
    INFO(page.error().to_string());
    REQUIRE(page);
    if (page->empty()) break;
    for (const auto& r : page.value())
      for (const auto& x : r.cells) out.push_back(kv(x, true));
  }
  return out;
}

std::vector<std::string> get_all(connection& c, const std::vector<std::string>& rows, const read_options& o) {
  std::vector<batch_op> ops;
  for (const auto& r : rows) {
    get g(r);
    g.options = o;
    ops.push_back(g);
  }
  auto res = c.batch("t", std::move(ops));
  std::vector<std::string> out;
  for (const auto& r : res) {
    INFO(r.st.to_string());
    REQUIRE(r.st);
    for (const auto& x : r.row.cells) out.push_back(kv(x, true));
  }
  return out;
}

}  // namespace

TEST_CASE("every filter kind: embedded, RPC and frames agree", "[filter][wire]") {
  served sv;
  std::vector<std::string> rows;
  for (int i = 0; i < 15; ++i) {
    char row[8];
    std::snprintf(row, sizeof row, "r%02d", i);
    rows.push_back(row);
  }
  struct query {
    std::string text;
    scan s;
  };
  std::vector<query> queries;
  for (const char* text : every_kind)
    for (bool all_versions : {false, true}) {
      auto f = parsed(text);
      scan s = scan().filter(f);
      if (all_versions) s.all_versions();
      s.caching(4);  // several pages per partition: the filter's state crosses pages
      queries.push_back({text, s});
    }
  // Answers embedded, then through each kind of connection (one kj event loop per thread:
  // one RPC connection at a time).
  auto embedded = connect_embedded(*sv.s);
  std::vector<std::vector<std::string>> scans, gets;
  for (const auto& q : queries) {
    scans.push_back(scan_all(*embedded, q.s));
    gets.push_back(get_all(*embedded, rows, q.s.options));
  }
  for (bool use_frames : {false, true}) {
    rpc::client_options o;
    o.frames = use_frames;  // with frames: gets over frames, scans over RPC
    auto c = rpc::connect(sv.address, o);
    INFO(c.error().to_string());
    REQUIRE(c);
    for (std::size_t i = 0; i < queries.size(); ++i) {
      INFO(queries[i].text << (use_frames ? " (frames)" : " (rpc)"));
      CHECK(scan_all(*c.value(), queries[i].s) == scans[i]);
      CHECK(get_all(*c.value(), rows, queries[i].s.options) == gets[i]);
    }
  }
  auto frames = rpc::frame_client::connect(sv.address);
  REQUIRE(frames);
  for (std::size_t i = 0; i < queries.size(); ++i) {
    INFO(queries[i].text << " (frame scan)");
    auto page = frames.value()->scan("t", queries[i].s, 1000);
    REQUIRE(page);
    std::vector<std::string> got;
    for (const auto& r : page->rows)
      for (const auto& x : r.cells) got.push_back(kv(x, true));
    CHECK(got == scans[i]);
  }
  // PageFilter and WhileMatchFilter hold for the whole scan (3 partitions, small pages).
  for (std::size_t i = 0; i < queries.size(); ++i) {
    if (queries[i].text == "PageFilter(3)") {
      std::set<std::string> rows_seen;
      for (const auto& c : scans[i]) rows_seen.insert(c.substr(0, 3));
      CHECK(rows_seen == std::set<std::string>{"r00", "r01", "r02"});
    }
    if (queries[i].text == "WHILE RowFilter(<, 'binary:r07')") {
      std::set<std::string> rows_seen;
      for (const auto& c : scans[i]) rows_seen.insert(c.substr(0, 3));
      CHECK(rows_seen == std::set<std::string>{"r00", "r01", "r02", "r03", "r04", "r05", "r06"});
    }
  }
  // The answers are not trivial: most filters keep some cells and drop others.
  std::size_t full = scan_all(*embedded, scan()).size(), partial = 0;
  for (const auto& r : scans)
    if (!r.empty() && r.size() < full) ++partial;
  CHECK(partial > queries.size() / 2);
}

TEST_CASE("the server takes a filter as text, and refuses bad ones on both protocols", "[filter][wire]") {
  served sv;
  auto frames = rpc::frame_client::connect(sv.address);
  REQUIRE(frames);
  // A Scan with filterText, through a raw frame request.
  auto send_scan = [&](const std::string& text) {
    capnp::MallocMessageBuilder m;
    auto req = m.initRoot<wire::Request>();
    auto sc = req.initScan();
    sc.setTable("t");
    sc.setCount(1000);
    rpc::to_wire(scan(), sc.initScan());
    sc.getScan().getOptions().setFilterText(text);
    frames.value()->send(m);
    auto r = frames.value()->receive();
    REQUIRE(r);
    return rpc::frame_client::page_of(r.value()->get());
  };
  auto page = send_scan("PrefixFilter('r1') AND KeyOnlyFilter()");
  INFO(page.error().to_string());
  REQUIRE(page);
  CHECK(page->rows.size() == 5);
  for (const auto& r : page->rows)
    for (const auto& c : r.cells) CHECK(c.value.empty());
  auto bad = send_scan("PrefixFilter('r1'");
  CHECK(bad.code() == code::invalid_argument);
  CHECK(bad.error().message().find("filter string at position") != std::string::npos);

  // A get with filterText and a checkAndMutate with a bad structured filter.
  capnp::MallocMessageBuilder m;
  auto req = m.initRoot<wire::Request>();
  auto b = req.initBatch();
  b.setTable("t");
  auto actions = b.initActions(1);
  rpc::to_wire(batch_op(get("r01")), actions[0]);
  actions[0].getGet().getOptions().setFilterText("QualifierFilter(=, 'binary:c')");
  frames.value()->send(m);
  auto r = frames.value()->receive();
  REQUIRE(r);
  auto results = rpc::frame_client::batch_results(r.value()->get());
  REQUIRE(results);
  REQUIRE(results->size() == 1);
  CHECK(results->at(0).row.cells.size() == 1);

  // Over RPC: a bad regex and nesting too deep, refused with INVALID_ARGUMENT.
  {
    rpc::client_options rpc_only;
    rpc_only.frames = false;
    auto c = rpc::connect(sv.address, rpc_only);
    REQUIRE(c);
    auto st = c.value()->scan("t", scan().filter(value_filter{compare_op::equal, comparator::regex("(a)\\1")}));
    status err = st.error();
    if (st) err = st.value()->next(10).error();
    CHECK(err.code() == code::invalid_argument);
    filter deep = prefix_filter{"a"};
    for (int i = 0; i < 120; ++i) deep = skip_filter{deep};
    auto g = c.value()->get("t", get("r01").filter(deep));
    CHECK(g.code() == code::invalid_argument);
  }
  // checkAndMutate with a filter over both protocols.
  for (bool fr : {false, true}) {
    rpc::client_options o;
    o.frames = fr;
    auto cc = rpc::connect(sv.address, o);
    REQUIRE(cc);
    auto res =
        cc.value()->batch("t",
                          {check_and_mutate("r02")
                               .if_matches(column_value_filter{"g", "c", compare_op::equal, comparator::long_value(2)})
                               .then(put("r02").add("f", "z", 9, fr ? "frames" : "rpc"))});
    REQUIRE(res.size() == 1);
    INFO(res[0].st.to_string());
    REQUIRE(res[0].st);
    CHECK(res[0].processed);
    auto no =
        cc.value()->batch("t",
                          {check_and_mutate("r02")
                               .if_matches(column_value_filter{"g", "c", compare_op::equal, comparator::long_value(3)})
                               .then(put("r02").add("f", "z", 9, "never"))});
    REQUIRE(no[0].st);
    CHECK_FALSE(no[0].processed);
  }
  auto t = sv.s->open_table("t");
  REQUIRE(t);
  CHECK(get_kvs(*t, get("r02").column("f", "z")) == std::vector<std::string>{"r02/f:z=frames"});
}

TEST_CASE("structured filters round-trip through the wire form", "[filter][wire]") {
  for (const char* text : every_kind) {
    auto f = parsed(text);
    capnp::MallocMessageBuilder m;
    rpc::to_wire(f, m.initRoot<wire::Filter>());
    auto back = rpc::from_wire(m.getRoot<wire::Filter>().asReader());
    INFO(text << ": " << back.error().to_string());
    REQUIRE(back);
    CHECK(back.value() == f);
  }
  // A malformed tree (a list claiming more children than follow) is refused.
  capnp::MallocMessageBuilder m;
  auto nodes = m.initRoot<wire::Filter>().initNodes(2);
  nodes[0].initList().setCount(5);
  nodes[1].setFirstKeyOnly();
  CHECK(rpc::from_wire(m.getRoot<wire::Filter>().asReader()).code() == code::invalid_argument);
  capnp::MallocMessageBuilder m2;
  m2.initRoot<wire::Filter>().initNodes(1)[0].setSkip();
  CHECK(rpc::from_wire(m2.getRoot<wire::Filter>().asReader()).code() == code::invalid_argument);
}
