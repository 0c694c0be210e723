// Scans through the routed client (cluster/routed_connection.h) against a real cluster of
// three nodes: each node is asked for its own partitions only, nothing is forwarded between
// nodes, and the merge gives exactly what one node's scanner gives when it merges every
// partition itself (through a thin client, with forwarding).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "cellar/client.h"
#include "cellar/filter.h"
#include "cluster/routed_connection.h"
#include "servers_test.h"

using namespace cellar;
using namespace clustertest;

namespace {

// Every result of `s` through `c`, one string each: the row, whether it is a piece of a
// row, and its cells; or the error.
std::vector<std::string> scan_all(connection& c, const std::string& table, const cellar::scan& s) {
  std::vector<std::string> out;
  auto st = c.scan(table, s);
  if (!st.is_ok()) return {"error " + st.error().to_string()};
  for (;;) {
    auto page = (*st)->next(50);
    if (!page.is_ok()) {
      out.push_back("error " + page.error().to_string());
      return out;
    }
    if (page->empty()) return out;
    for (const auto& r : *page) {
      std::string line = r.row + (r.partial ? " (part):" : ":");
      for (const auto& cell : r.cells) line += " " + cell.family + ":" + cell.qualifier + "=" + cell.value;
      out.push_back(std::move(line));
    }
  }
}

std::vector<std::string> rows_in(const std::vector<std::string>& results) {
  std::vector<std::string> rows;
  for (const auto& r : results) {
    auto row = r.substr(0, r.find_first_of(" :"));
    if (rows.empty() || rows.back() != row) rows.push_back(row);
  }
  return rows;
}

// Rows r000..r299 of `table`, each with f:a, f:b, f:c and f:q ("v<row>"); r150's f:q is
// "stop", where a WhileMatchFilter on the values ends the scan.
void load_rows(connection& c, const std::string& table) {
  for (int at = 0; at < 300; at += 100) {
    std::vector<batch_op> puts;
    for (int i = at; i < at + 100; ++i) {
      const auto row = row_name(i);
      puts.push_back(cellar::put(row)
                         .add("f", "a", "a" + row)
                         .add("f", "b", "b" + row)
                         .add("f", "c", "c" + row)
                         .add("f", "q", i == 150 ? "stop" : "v" + row));
    }
    for (auto& r : c.batch(table, std::move(puts))) REQUIRE(r.st.is_ok());
  }
}

struct named_scan {
  std::string name;
  cellar::scan s;
};

std::vector<named_scan> scans_to_compare() {
  const cellar::filter stop = cellar::while_match_filter{
      cellar::value_filter{cellar::compare_op::not_equal, cellar::comparator::binary("stop")}};
  std::vector<named_scan> v;
  v.push_back({"everything", cellar::scan()});
  v.push_back({"everything, reversed", cellar::scan().reversed()});
  v.push_back({"small pages", cellar::scan().caching(7)});
  v.push_back({"start and stop", cellar::scan().start_row(row_name(40)).stop_row(row_name(260))});
  v.push_back({"start exclusive, stop inclusive, reversed",
               cellar::scan().start_row(row_name(260), false).stop_row(row_name(40), true).reversed()});
  v.push_back({"empty interval", cellar::scan().start_row(row_name(200)).stop_row(row_name(100))});
  v.push_back({"limit", cellar::scan().limit(17).caching(5)});
  v.push_back({"limit, reversed, from a start", cellar::scan().start_row(row_name(222)).reversed().limit(31)});
  v.push_back({"PageFilter", cellar::scan().filter(cellar::page_filter{25}).caching(4)});
  v.push_back({"PageFilter, reversed, with a lower limit",
               cellar::scan().reversed().filter(cellar::page_filter{40}).limit(12)});
  v.push_back({"WhileMatchFilter", cellar::scan().filter(stop).caching(9)});
  v.push_back({"WhileMatchFilter, reversed", cellar::scan().filter(stop).reversed()});
  v.push_back({"WhileMatchFilter from a start, with a limit past its end",
               cellar::scan().start_row(row_name(120)).filter(stop).limit(100)});
  v.push_back({"batch: rows in pieces", cellar::scan().batch(3).caching(7)});
  v.push_back({"batch, reversed, with a limit", cellar::scan().batch(3).reversed().limit(9).caching(4)});
  v.push_back({"maxResultSize with partial results",
               cellar::scan().max_result_size(40).allow_partial_results().start_row(row_name(100)).caching(5)});
  v.push_back({"batch with WhileMatchFilter", cellar::scan().batch(2).filter(stop).caching(3)});
  return v;
}

}  // namespace

TEST_CASE("a routed client scans each node's partitions straight from it and merges them as one node does",
          "[cluster][servers][routing]") {
  cluster3 c;
  // A KEY (hash) table and a RANGE table, six partitions each, two per node.
  REQUIRE(lines(shell(c.node(1),
                      "create 'rs', 'f'\n"
                      "create 'rr', 'f', SPLITS => ['r050', 'r100', 'r150', 'r200', 'r250']\n")
                    .out) == std::vector<std::string>{"{\"ok\":true}", "{\"ok\":true}"});
  CHECK(c.placement().load() == std::map<std::string, std::uint32_t>{{"n1", 4}, {"n2", 4}, {"n3", 4}});
  auto thin = rpc::connect(c.node(1).address());
  REQUIRE(thin.is_ok());
  load_rows(**thin, "rs");
  load_rows(**thin, "rr");

  // What node 1's scanner gives, merging its own partitions and the others' (forwarded).
  const auto scans = scans_to_compare();
  std::vector<std::vector<std::string>> expected;
  for (const auto& x : scans) expected.push_back(scan_all(**thin, "rs", x.s));
  // Some of it by hand, so that the comparison is not between two wrong answers.
  std::vector<std::string> all_rows;
  for (int i = 0; i < 300; ++i) all_rows.push_back(row_name(i));
  CHECK(rows_in(expected[0]) == all_rows);
  CHECK(expected[6].size() == 17);
  CHECK(expected[8].size() == 25);
  const auto to_stop = rows_in(expected[10]);
  REQUIRE(to_stop.size() == 151);  // r000 .. r150, whose cells before "stop" come back
  CHECK(to_stop.back() == row_name(150));
  CHECK(expected[10].back() == "r150: f:a=ar150 f:b=br150 f:c=cr150");
  const auto to_stop_reversed = rows_in(expected[11]);
  REQUIRE(to_stop_reversed.size() == 150);  // r299 .. r150
  CHECK(to_stop_reversed.back() == row_name(150));
  CHECK(expected[13].size() == 600);  // two pieces a row
  CHECK(expected[13][0] == "r000 (part): f:a=ar000 f:b=br000 f:c=cr000");
  CHECK(expected[13][1] == "r000: f:q=vr000");

  std::uint64_t forwarded[4], refused[4];
  for (int i = 1; i <= 3; ++i) {
    auto n = counts_of(c, i);
    forwarded[i] = n.forwarded;
    refused[i] = n.not_owner;
  }
  cluster::routed_options ro;
  ro.zookeeper.connect = c.zk_connect();
  auto routed = cluster::connect_routed(ro);
  REQUIRE(routed.is_ok());
  for (std::size_t k = 0; k < scans.size(); ++k) {
    INFO(scans[k].name);
    CHECK(scan_all(**routed, "rs", scans[k].s) == expected[k]);
  }
  // Each node served its own partitions: nothing was forwarded, nothing refused.
  for (int i = 1; i <= 3; ++i) {
    auto n = counts_of(c, i);
    CHECK(n.forwarded == forwarded[i]);
    CHECK(n.not_owner == refused[i]);
  }
  // The counters count: the thin client's batches and scans were forwarded.
  CHECK(forwarded[2] > 0);
  CHECK(forwarded[3] > 0);

  // RANGE partitions: a scan inside one range is one node's stream; the others merge
  // ranges of several nodes.
  const std::vector<cellar::scan> ranged{cellar::scan().start_row(row_name(105)).stop_row(row_name(140)).batch(3),
                                         cellar::scan().start_row(row_name(30)).limit(180).caching(16),
                                         cellar::scan().start_row(row_name(230)).reversed().limit(80),
                                         cellar::scan().reversed().filter(cellar::page_filter{120})};
  std::vector<std::vector<std::string>> ranged_expected;
  for (const auto& x : ranged) ranged_expected.push_back(scan_all(**thin, "rr", x));
  CHECK(rows_in(ranged_expected[0]).size() == 35);
  CHECK(ranged_expected[1].size() == 180);
  for (int i = 1; i <= 3; ++i) forwarded[i] = forwarded_to(c, i);
  for (std::size_t k = 0; k < ranged.size(); ++k) {
    INFO("RANGE scan #" << k);
    CHECK(scan_all(**routed, "rr", ranged[k]) == ranged_expected[k]);
  }
  for (int i = 1; i <= 3; ++i) CHECK(forwarded_to(c, i) == forwarded[i]);

  // Each cell's own TTL comes back when the scan asks for it: through node 1, which has
  // the other nodes' partitions forwarded to it, and through the routed merge.
  constexpr std::int64_t ten_days_ms = 864000000;
  std::vector<batch_op> with_ttls;
  for (int i = 0; i < 30; ++i)
    with_ttls.push_back(cellar::put("t" + row_name(i)).add("f", "t", "x").ttl(ten_days_ms + i));
  for (auto& r : (*thin)->batch("rs", std::move(with_ttls))) REQUIRE(r.st.is_ok());
  for (connection* via : {thin->get(), routed->get()}) {
    for (bool asked : {true, false}) {
      INFO((via == thin->get() ? "thin client" : "routed client") << (asked ? ", TTLs asked" : ""));
      auto st = via->scan("rs", cellar::scan().start_row("t").with_cell_ttls(asked));
      REQUIRE(st.is_ok());
      auto rows = (*st)->next(100);
      REQUIRE(rows.is_ok());
      REQUIRE(rows->size() == 30);
      for (int i = 0; i < 30; ++i) CHECK((*rows)[i].cells.at(0).ttl_ms == (asked ? ten_days_ms + i : 0));
    }
  }

  // Bad requests still get the node's answer.
  auto unknown = (*routed)->scan("nosuch", cellar::scan());
  CHECK(unknown.code() == code::table_not_found);
}

TEST_CASE("a routed client with a stale map scans through NOT_OWNER: it re-reads the map and reopens",
          "[cluster][servers][routing][moves]") {
  cluster3 c;
  REQUIRE(lines(shell(c.node(1), "create 'ms', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  auto thin = rpc::connect(c.node(1).address());
  REQUIRE(thin.is_ok());
  auto rows = preload(**thin, "ms", 200);
  std::sort(rows.begin(), rows.end());

  cluster::routed_options so;
  so.zookeeper.connect = c.zk_connect();
  so.follow_watches = false;  // keeps its copy until a NOT_OWNER
  auto stale = cluster::connect_routed(so);
  REQUIRE(stale.is_ok());
  CHECK(rows_in(scan_all(**stale, "ms", cellar::scan().column("f", "q"))) == rows);

  // A partition of n2 moves to n3 (with its rows); every node applies the new map.
  const auto before = c.placement();
  const std::uint32_t p = first_partition_on(before, "ms", "n2");
  auto moved = shell(c.node(1), "move 'ms/" + std::to_string(p) + "', 'n3'\n");
  INFO(moved.out);
  REQUIRE(lines(moved.out) == std::vector<std::string>{"{\"ok\":true}"});
  const auto epoch = c.placement().epoch;
  REQUIRE(epoch > before.epoch);
  REQUIRE(zktest::eventually([&] {
    for (int i = 1; i <= 3; ++i)
      if (counts_of(c, i).epoch != epoch) return false;
    return true;
  }));

  node_counts was[4];
  for (int i = 1; i <= 3; ++i) was[i] = counts_of(c, i);
  CHECK(rows_in(scan_all(**stale, "ms", cellar::scan().column("f", "q"))) == rows);
  std::vector<std::string> last_ten(rows.rbegin(), rows.rbegin() + 10);
  CHECK(rows_in(scan_all(**stale, "ms", cellar::scan().reversed().limit(10))) == last_ten);
  auto n2 = counts_of(c, 2);
  CHECK(n2.not_owner - was[2].not_owner == 1);  // the first scan's open, once; then the copy was fresh
  for (int i = 1; i <= 3; ++i) CHECK(counts_of(c, i).forwarded == was[i].forwarded);  // nothing forwarded

  // A partition moves while a scan pages through it: the pages after the move come from
  // its new owner (the old owner's scan passes them on), and every row comes once.
  auto sc = (*stale)->scan("ms", cellar::scan().column("f", "q").caching(3));
  REQUIRE(sc.is_ok());
  std::vector<std::string> seen;
  auto take = [&](std::size_t n) {
    auto page = (*sc)->next(n);
    INFO((page.is_ok() ? std::string() : page.error().to_string()));
    REQUIRE(page.is_ok());
    for (const auto& r : *page) seen.push_back(r.row);
    return page->size();
  };
  REQUIRE(take(10) == 10);
  const std::uint32_t q = first_partition_on(c.placement(), "ms", "n1");
  auto again = shell(c.node(2), "move 'ms/" + std::to_string(q) + "', 'n2'\n");
  INFO(again.out);
  REQUIRE(lines(again.out) == std::vector<std::string>{"{\"ok\":true}"});
  while (take(7) > 0) {}
  CHECK(seen == rows);
}
