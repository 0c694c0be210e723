// The metrics endpoint and the status page (rpc/status_http.h, rpc/metrics.h): calls made
// over both protocols show up in /metrics with their operation, outcome and latency; the
// store's figures (tables, partitions, cells, memory, snapshots, log) are there and on the
// page; the page is self-contained HTML.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <regex>
#include <string>
#include <thread>

#include "../persist/crash_copy.h"
#include "../support/temp_dir.h"
#include "cellar/client.h"
#include "cellar/summary.h"
#include "http_get.h"
#include "rpc/metrics.h"
#include "rpc/status_http.h"
#include "served_store.h"

namespace {

using cellar::code;

// The value of the sample `series` (name and labels exactly as rendered), or -1.
double sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::unique_ptr<cellar::rpc::status_http> start_http(served_store& s) {
  cellar::rpc::status_http_options o;
  o.port = 0;
  auto h = cellar::rpc::status_http::start(
      std::make_shared<cellar::rpc::store_status>(*s.store, *s.server, "127.0.0.1:" + std::to_string(s.server->port())),
      o);
  REQUIRE(h);
  return std::move(h.value());
}

std::unique_ptr<cellar::connection> connect(served_store& s, bool frames) {
  cellar::rpc::client_options o;
  o.frames = frames;
  auto c = cellar::rpc::connect("127.0.0.1:" + std::to_string(s.server->port()), o);
  INFO(c.error().to_string());
  REQUIRE(c);
  return std::move(c.value());
}

}  // namespace

TEST_CASE("metrics: calls are counted by protocol, operation and outcome", "[status_http]") {
  served_store s(cellar::partition_spec::hash(4), 1000);
  auto http = start_http(s);
  auto frames = connect(s, true);

  for (int i = 0; i < 3; ++i) REQUIRE(frames->put("t", cellar::put("new" + std::to_string(i)).add("f", "q", "v")));
  REQUIRE(frames->get("t", cellar::get(row_name(1))));
  CHECK(frames->get("nosuch", cellar::get("r")).error().code() == code::table_not_found);
  // Refused per action: the call is answered, its action failed.
  CHECK(frames->put("t", cellar::put("x").add("nofamily", "q", "v")).code() == code::family_not_found);
  std::vector<cellar::batch_op> mixed{cellar::get(row_name(2)), cellar::put("y").add("f", "q", "v")};
  auto mixed_results = frames->batch("t", mixed);
  REQUIRE(mixed_results.size() == 2);
  // An RPC-only client, on a thread of its own (a client runs a kj event loop on its
  // thread); it stays connected until the checks below are done.
  std::promise<void> called, release;
  std::thread rpc_thread([&] {
    cellar::rpc::client_options o;
    o.frames = false;
    auto rpc = cellar::rpc::connect("127.0.0.1:" + std::to_string(s.server->port()), o);
    if (rpc) {
      CHECK(rpc.value()->put("t", cellar::put("z").add("f", "q", "v")).is_ok());
      CHECK(rpc.value()->list_tables().is_ok());
      auto scan = rpc.value()->scan("t", cellar::scan());
      CHECK((scan && scan.value()->next(10).value().size() == 10));
    }
    called.set_value();
    release.get_future().wait();
  });
  called.get_future().wait();
  struct joiner {
    std::promise<void>& release;
    std::thread& t;
    ~joiner() {
      release.set_value();
      t.join();
    }
  } join_at_end{release, rpc_thread};

  auto r = testhttp::request(http->port(), "/metrics");
  REQUIRE(r.status == 200);
  CHECK(contains(r.headers, "content-type: text/plain; version=0.0.4"));
  const auto& m = r.body;
  INFO(m);
  CHECK(sample(m, R"(cellar_requests_total{protocol="frames",op="put",code="OK"})") == 4);  // the refused one too
  CHECK(sample(m, R"(cellar_requests_total{protocol="frames",op="get",code="OK"})") == 1);
  CHECK(sample(m, R"(cellar_requests_total{protocol="frames",op="get",code="TABLE_NOT_FOUND"})") == 1);
  CHECK(sample(m, R"(cellar_requests_total{protocol="frames",op="mixed",code="OK"})") == 1);
  CHECK(sample(m, R"(cellar_requests_total{protocol="rpc",op="put",code="OK"})") == 1);
  CHECK(sample(m, R"(cellar_requests_total{protocol="rpc",op="list_tables",code="OK"})") == 1);
  CHECK(sample(m, R"(cellar_requests_total{protocol="rpc",op="scan",code="OK"})") == 1);
  CHECK(sample(m, R"(cellar_requests_total{protocol="frames",op="login",code="OK"})") >= 1);
  CHECK(sample(m, R"(cellar_actions_total{op="put",code="OK"})") == 4);
  CHECK(sample(m, R"(cellar_actions_total{op="put",code="FAMILY_NOT_FOUND"})") == 1);
  CHECK(sample(m, R"(cellar_actions_total{op="mixed",code="OK"})") == 2);
  // Latency: one histogram per protocol and operation, cumulative buckets up to +Inf.
  CHECK(sample(m, R"(cellar_request_duration_seconds_count{protocol="frames",op="put"})") == 4);
  CHECK(sample(m, R"(cellar_request_duration_seconds_bucket{protocol="frames",op="put",le="+Inf"})") == 4);
  CHECK(sample(m, R"(cellar_request_duration_seconds_bucket{protocol="frames",op="put",le="10"})") == 4);
  CHECK(sample(m, R"(cellar_request_duration_seconds_sum{protocol="frames",op="put"})") > 0);
  CHECK(contains(m, "# TYPE cellar_request_duration_seconds histogram\n"));
  // The store.
  CHECK(sample(m, R"(cellar_table_cells{table="t"})") == 1005);
  CHECK(sample(m, R"(cellar_table_partitions{table="t"})") == 4);
  CHECK(sample(m, R"(cellar_table_families{table="t"})") == 1);
  CHECK(sample(m, R"(cellar_table_bytes{table="t"})") > 0);
  CHECK(sample(m, R"(cellar_partition_cells{table="t",partition="3"})") > 0);
  CHECK(sample(m, "cellar_memory_used_bytes") == sample(m, R"(cellar_table_bytes{table="t"})"));
  CHECK(sample(m, "cellar_memory_limit_bytes") == 0);
  CHECK(sample(m, "cellar_tables") == 1);
  CHECK(sample(m, R"(cellar_info{version="0.1.0",durability="snapshot",persistent="false"})") == 1);
  // Connections: each client holds an RPC connection, the frames one a frame connection too.
  CHECK(sample(m, "cellar_connections") == 3);
  CHECK(sample(m, R"(cellar_connections_accepted_total{protocol="rpc"})") == 2);
  CHECK(sample(m, R"(cellar_connections_accepted_total{protocol="frames"})") == 1);
}

TEST_CASE("status page: the server, its tables and its requests, self-contained", "[status_http]") {
  served_store s(cellar::partition_spec::hash(3), 100);
  auto http = start_http(s);
  auto c = connect(s, true);
  REQUIRE(c->put("t", cellar::put("a").add("f", "q", "v")));

  auto r = testhttp::request(http->port(), "/");
  REQUIRE(r.status == 200);
  CHECK(contains(r.headers, "content-type: text/html; charset=utf-8"));
  const auto& page = r.body;
  INFO(page);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(contains(page, "</html>"));
  CHECK(contains(page, "127.0.0.1:" + std::to_string(s.server->port())));
  CHECK(contains(page, "<tr><td>t</td><td>f</td><td>KEY(K) 3</td><td class=\"n\">3</td><td class=\"n\">101</td>"));
  CHECK(contains(page, "<th>Durability</th><td>snapshot</td>"));
  CHECK(contains(page, "none: in memory, nothing persists"));
  CHECK(contains(page, "(no limit)"));
  CHECK(contains(page, "<th>Connections</th><td>2</td>"));
  CHECK(contains(page, "<td>frames</td><td>put</td><td class=\"n\">1</td>"));
  // Nothing fetched from elsewhere: no scripts, no external links, styles inline.
  CHECK(!contains(page, "<script"));
  CHECK(!contains(page, "<link"));
  CHECK(!contains(page, "src="));
  CHECK(!std::regex_search(page, std::regex("(href|url)\\s*[=(]\\s*[\"']?(https?:)?//")));

  CHECK(testhttp::request(http->port(), "/nope").status == 404);
  CHECK(testhttp::request(http->port(), "/metrics", "POST").status == 405);
  auto head = testhttp::request(http->port(), "/", "HEAD");
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  http->stop();
  http->stop();  // idempotent
}

TEST_CASE("status page and metrics: memory limit, snapshot and log figures, escaping", "[status_http]") {
  cellar::store_summary sum;
  sum.version = "9.9.9";
  sum.connections = 5;
  sum.store.directory = "/srv/<cellar>";
  sum.store.durability = cellar::durability::log_sync;
  sum.store.memory_used_bytes = 256ull << 20;
  sum.store.memory_limit_bytes = 1ull << 30;
  sum.store.snapshots = 2;
  sum.store.last_snapshot = cellar::snapshot_stats{7, 1234, 56789, 0.5, 0.01, 1};
  sum.store.last_snapshot_unix_ms = 1700000000000;
  sum.store.log_generation = 8;
  sum.store.log_records = 42;
  sum.store.log_bytes = 4200;
  sum.store.log_syncs = 11;
  cellar::table_summary t;
  t.descriptor.name = "a\"b<c>";
  t.descriptor.partitioning = cellar::partition_spec::range_bounds({"m"});
  t.descriptor.families.push_back(cellar::family_descriptor{"ts", 0, 0, 1024, cellar::family_kind::time_series});
  t.stats.cells = 10;
  t.stats.bytes = 1000;
  t.stats.cells_per_partition = {4, 6};
  sum.tables.push_back(t);
  cellar::rpc::status_context ctx{"127.0.0.1:1", 1700000000000, 1700000090000};
  cellar::rpc::metrics none;

  const auto page = cellar::rpc::render_status_page(sum, none.read(), ctx);
  INFO(page);
  CHECK(contains(page, "256.0 MiB of 1.0 GiB (25%)"));
  CHECK(contains(page, "width:25%"));
  CHECK(contains(page, "<th>Durability</th><td>log-sync</td>"));
  CHECK(contains(page, "/srv/&lt;cellar&gt;"));
  CHECK(contains(page, "2023-11-14 22:13:20 UTC &middot; generation 7 &middot; 1,234 changes"));
  CHECK(contains(page, "generation 8 &middot; 42 records &middot; 4.1 KiB &middot; 11 syncs"));
  CHECK(contains(page, "<td>a&quot;b&lt;c&gt;</td><td>ts (time series)</td><td>RANGE COLUMNS(K) 2</td>"));
  CHECK(contains(page, "(up 90.0 s)"));
  CHECK(!contains(page, "<c>"));

  const auto text = cellar::rpc::render_prometheus(sum, none, ctx);
  INFO(text);
  CHECK(sample(text, R"(cellar_table_cells{table="a\"b<c>"})") == 10);
  CHECK(sample(text, "cellar_memory_limit_bytes") == 1073741824);
  CHECK(sample(text, "cellar_snapshot_last_generation") == 7);
  CHECK(sample(text, "cellar_snapshot_last_duration_seconds") == 0.5);
  CHECK(sample(text, "cellar_snapshot_last_timestamp_seconds") == 1700000000);
  CHECK(sample(text, "cellar_snapshots_total") == 2);
  CHECK(sample(text, "cellar_log_records_total") == 42);
  CHECK(sample(text, "cellar_log_syncs_total") == 11);
  CHECK(sample(text, "cellar_connections") == 5);
  CHECK(sample(text, R"(cellar_info{version="9.9.9",durability="log-sync",persistent="true"})") == 1);
}

TEST_CASE("store::info and summarize: memory, snapshots and the log of a persistent store", "[status_http]") {
  testsupport::made_dir tmp("cellar-status");
  const std::string& dir = tmp.path;
  {
    cellar::store_options o;
    o.directory = dir;
    o.durability = cellar::durability::log;
    o.snapshot_interval = std::chrono::milliseconds(0);
    o.worker_threads = 2;
    o.memory_limit_bytes = 64ull << 20;
    auto opened = cellar::store::open(o);
    REQUIRE(opened);
    auto& st = *opened.value();
    add_table(st, "g", cellar::partition_spec::hash(2));
    auto before = st.info();
    CHECK(before.directory == dir);
    CHECK(before.durability == cellar::durability::log);
    CHECK(before.memory_limit_bytes == 64ull << 20);
    CHECK(before.memory_used_bytes == 0);
    CHECK(before.snapshots == 0);
    CHECK(!before.last_snapshot);
    CHECK(before.log_generation > 0);

    auto t = st.open_table("g");
    REQUIRE(t);
    for (int i = 0; i < 10; ++i) REQUIRE(t->put(cellar::put(row_name(i)).add("f", "q", "value")));
    auto snap = st.snapshot();
    REQUIRE(snap);
    auto after = st.info();
    CHECK(after.memory_used_bytes > 0);
    CHECK(after.snapshots == 1);
    REQUIRE(after.last_snapshot);
    CHECK(after.last_snapshot->generation == snap->generation);
    CHECK(after.last_snapshot->changes == 10);
    CHECK(after.last_snapshot_unix_ms > 1600000000000);
    CHECK(after.log_records >= 10);
    CHECK(after.log_bytes > 10 * 5);
    CHECK(after.log_generation > before.log_generation);  // a snapshot rotates the log

    auto sum = cellar::summarize(st);
    REQUIRE(sum);
    REQUIRE(sum->tables.size() == 1);
    CHECK(sum->tables[0].descriptor.name == "g");
    CHECK(sum->tables[0].stats.cells == 10);
    CHECK(sum->tables[0].stats.cells_per_partition.size() == 2);
    CHECK(sum->store.memory_used_bytes == sum->tables[0].stats.bytes);
    CHECK(sum->connections == -1);
    CHECK(sum->version == "0.1.0");
    REQUIRE(st.close());
  }
}

TEST_CASE("connection::summary: the same figures over RPC as embedded", "[status_http]") {
  served_store s(cellar::partition_spec::hash(2), 10);
  auto c = connect(s, true);
  auto over = c->summary();
  REQUIRE(over);
  auto local = cellar::connect_embedded(*s.store)->summary();
  REQUIRE(local);
  REQUIRE(over->tables.size() == 1);
  REQUIRE(local->tables.size() == 1);
  CHECK(over->tables[0].descriptor == local->tables[0].descriptor);
  CHECK(over->tables[0].stats.cells == 10);
  CHECK(over->tables[0].stats.cells_per_partition == local->tables[0].stats.cells_per_partition);
  CHECK(over->tables[0].stats.bytes == local->tables[0].stats.bytes);
  CHECK(over->store.memory_used_bytes == local->store.memory_used_bytes);
  CHECK(over->store.durability == local->store.durability);
  CHECK(over->version == local->version);
  CHECK(over->connections == 2);  // this client's RPC and frame connections
  CHECK(local->connections == -1);
}

TEST_CASE("recovering: the page and the metrics show the recovery's progress", "[status_http][recovery]") {
  cellar::recovery_progress::figures f;
  f.phase = cellar::recovery_progress::phase::reading_snapshot;
  f.partitions_done = 3;
  f.partitions_total = 8;
  f.cells = 123456;
  f.log_records = 0;
  f.bytes = 3ull << 20;
  f.started_unix_ms = 1700000000000;
  f.seconds = 10;
  cellar::rpc::status_context ctx{"127.0.0.1:9090", 1700000000000, 1700000010000};

  const auto text = cellar::rpc::render_recovery_prometheus(f, ctx);
  INFO(text);
  CHECK(sample(text, "cellar_recovery_in_progress") == 1);
  CHECK(sample(text, "cellar_recovery_partitions_done") == 3);
  CHECK(sample(text, "cellar_recovery_partitions_total") == 8);
  CHECK(sample(text, "cellar_recovery_cells") == 123456);
  CHECK(sample(text, "cellar_recovery_log_records") == 0);
  CHECK(sample(text, "cellar_recovery_bytes") == 3 << 20);
  CHECK(sample(text, "cellar_recovery_elapsed_seconds") == 10);
  CHECK(sample(text, R"(cellar_recovery_phase{phase="reading snapshot"})") == 1);
  CHECK(sample(text, R"(cellar_recovery_phase{phase="replaying log"})") == 0);
  CHECK(contains(text, "# TYPE cellar_recovery_cells gauge\n"));

  const auto page = cellar::rpc::render_recovery_page(f, ctx);
  INFO(page);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(contains(page, "</html>"));
  CHECK(contains(page, "Recovering: the store is not serving yet"));
  CHECK(contains(page, "<th>Phase</th><td>reading snapshot</td>"));
  CHECK(contains(page, "3 of 8 partitions read"));
  CHECK(contains(page, "width:37.5%"));
  CHECK(contains(page, "<th>Cells read</th><td>123,456 (12,345/s)</td>"));
  CHECK(contains(page, "<th>Log records replayed</th><td>0 (0/s)</td>"));
  CHECK(contains(page, "<th>Bytes read</th><td>3.0 MiB</td>"));
  CHECK(contains(page, "<th>Elapsed</th><td>10.0 s</td>"));
  CHECK(contains(page, "<meta http-equiv=\"refresh\""));
  CHECK(contains(page, "127.0.0.1:9090"));
  CHECK(!contains(page, "<script"));

  // Once the store serves, the full figures say recovery is over, and what it found.
  cellar::store_summary sum;
  sum.version = "0.1.0";
  sum.store.directory = "/data";
  sum.store.recovery.cells_loaded = 5000;
  sum.store.recovery.log_records = 12;
  sum.store.recovery.partitions = 8;
  sum.store.recovery.threads = 2;
  sum.store.recovery.seconds = 2.5;
  cellar::rpc::metrics none;
  const auto full = cellar::rpc::render_prometheus(sum, none, ctx);
  INFO(full);
  CHECK(sample(full, "cellar_recovery_in_progress") == 0);
  CHECK(sample(full, "cellar_recovery_partitions_done") == 8);
  CHECK(sample(full, "cellar_recovery_partitions_total") == 8);
  CHECK(sample(full, "cellar_recovery_duration_seconds") == 2.5);
  const auto full_page = cellar::rpc::render_status_page(sum, none.read(), ctx);
  CHECK(contains(full_page, "5,000 cells from the snapshot (8 partitions, 2 threads), 12 log records, took 2.5 s"));
}

namespace {

// Holds a store's recovery after its first partition is read, until released: the
// observer the recovery calls waits on it.
struct recovery_gate {
  std::mutex mu;
  std::condition_variable cv;
  bool reached = false;
  bool released = false;

  void observe(const cellar::recovery_progress& p) {
    const auto f = p.read();
    if (f.phase != cellar::recovery_progress::phase::reading_snapshot || f.partitions_done != 1) return;
    std::unique_lock l(mu);
    reached = true;
    cv.notify_all();
    cv.wait(l, [&] { return released; });
  }
  bool wait_reached() {
    std::unique_lock l(mu);
    return cv.wait_for(l, std::chrono::seconds(60), [&] { return reached; });
  }
  void release() {
    std::lock_guard l(mu);
    released = true;
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("recovering: the endpoint answers while the store recovers, then shows the store",
          "[status_http][recovery]") {
  testsupport::made_dir tmp("cellar-recovering");
  cellar::store_options o;
  o.directory = tmp.path;
  o.durability = cellar::durability::log_sync;
  o.snapshot_interval = std::chrono::milliseconds(0);
  o.worker_threads = 2;
  o.recovery_threads = 1;
  {
    auto opened = cellar::store::open(o);
    REQUIRE(opened);
    add_table(*opened.value(), "t", cellar::partition_spec::hash(4));
    auto t = opened.value()->open_table("t");
    REQUIRE(t);
    std::vector<cellar::put> puts;
    for (int i = 0; i < 400; ++i) puts.push_back(cellar::put(row_name(i)).add("f", "q", 1, "v"));
    REQUIRE(t->put(puts));
    REQUIRE(opened.value()->snapshot());
    for (int i = 0; i < 5; ++i) REQUIRE(t->put(cellar::put("late" + std::to_string(i)).add("f", "q", 1, "v")));
    // What a crash now would leave (a clean close would snapshot the log away).
    o.directory = persisttest::crash_copy(tmp.path, tmp.path + "-crash");
  }

  // As cellar-server does: the endpoint first, on the recovery's progress.
  auto progress = std::make_shared<cellar::recovery_progress>();
  recovery_gate gate;
  progress->set_observer([&](const cellar::recovery_progress& p) { gate.observe(p); });
  o.recovery_progress = progress;
  cellar::rpc::status_http_options ho;
  ho.port = 0;
  auto http =
      cellar::rpc::status_http::start(std::make_shared<cellar::rpc::recovery_status>(progress, "127.0.0.1:0"), ho);
  REQUIRE(http);
  auto opening = std::async(std::launch::async, [&] { return cellar::store::open(o); });
  struct releaser {
    recovery_gate& g;
    ~releaser() { g.release(); }  // a failed check must not leave the open waiting
  } release_at_end{gate};
  REQUIRE(gate.wait_reached());

  auto m = testhttp::request(http.value()->port(), "/metrics");
  REQUIRE(m.status == 200);
  INFO(m.body);
  CHECK(contains(m.headers, "content-type: text/plain; version=0.0.4"));
  CHECK(sample(m.body, "cellar_recovery_in_progress") == 1);
  CHECK(sample(m.body, "cellar_recovery_partitions_done") == 1);
  CHECK(sample(m.body, "cellar_recovery_partitions_total") == 4);
  CHECK(sample(m.body, "cellar_recovery_cells") > 0);
  CHECK(sample(m.body, "cellar_recovery_cells") < 400);
  CHECK(sample(m.body, "cellar_recovery_log_records") == 0);
  CHECK(sample(m.body, R"(cellar_recovery_phase{phase="reading snapshot"})") == 1);
  auto page = testhttp::request(http.value()->port(), "/");
  REQUIRE(page.status == 200);
  INFO(page.body);
  CHECK(contains(page.headers, "content-type: text/html; charset=utf-8"));
  CHECK(contains(page.body, "Recovering: the store is not serving yet"));
  CHECK(contains(page.body, "1 of 4 partitions read"));

  gate.release();
  auto opened = opening.get();
  REQUIRE(opened);
  CHECK(progress->read().phase == cellar::recovery_progress::phase::done);
  CHECK(progress->read().partitions_done == 4);
  CHECK(progress->read().cells == 400);
  CHECK(progress->read().log_records == 5);
  auto srv = cellar::rpc::server::start(*opened.value(), loopback_options());
  REQUIRE(srv);
  http.value()->serve(std::make_shared<cellar::rpc::store_status>(*opened.value(), *srv.value(),
                                                                  "127.0.0.1:" + std::to_string(srv.value()->port())));

  auto after = testhttp::request(http.value()->port(), "/metrics");
  REQUIRE(after.status == 200);
  INFO(after.body);
  CHECK(sample(after.body, "cellar_recovery_in_progress") == 0);
  CHECK(sample(after.body, "cellar_recovery_partitions_total") == 4);
  CHECK(sample(after.body, "cellar_recovery_log_records") == 5);
  CHECK(sample(after.body, "cellar_recovery_cells_loaded") == 400);
  CHECK(sample(after.body, R"(cellar_table_cells{table="t"})") == 405);
  auto full = testhttp::request(http.value()->port(), "/");
  REQUIRE(full.status == 200);
  INFO(full.body);
  CHECK(!contains(full.body, "Recovering"));
  CHECK(contains(full.body, "<tr><td>t</td><td>f</td><td>KEY(K) 4</td>"));
  CHECK(contains(full.body, "400 cells from the snapshot (4 partitions, 1 thread), 5 log records, took "));
  http.value()->stop();
  srv.value()->stop();
  REQUIRE(opened.value()->close());
}
