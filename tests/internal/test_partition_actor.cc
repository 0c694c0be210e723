// The partition protocol (partition/protocol.h), stepped one message at a time on CAF's
// test coordinator: no threads, no sleeps (but for the log writer of the log-sync case).
// Replies come through the same reply sinks the store uses (partition/ask.h), which run
// their callback when the partition answers.
#include <catch2/catch.hpp>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <filesystem>
#include <thread>

#include "../support/temp_dir.h"
#include "dispatch/dispatch.h"
#include "partition/ask.h"
#include "partition/partition.h"
#include "persist/codec.h"
#include "persist/redo_log.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  memory_pool pool;
  std::shared_ptr<table_schema> schema = std::make_shared<table_schema>();

  fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    add_partition_protocol(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    schema->name = "t";
    schema->uid = 7;
    schema->partitioned = true;
    schema->version = 1;
    schema->families = {{family_descriptor{"f", 0, 0}, 1}};
  }

  partition_config config(log_stream log = {}) {
    partition_config pc;
    pc.schema = schema;
    pc.memory = &pool;
    pc.clock = [] { return std::int64_t{1'000'000}; };  // 1000 s after the epoch
    pc.track_delta = true;
    pc.log = log;
    return pc;
  }

  partition_actor spawn(std::shared_ptr<local_partition> local = nullptr, log_stream log = {}) {
    auto a = spawn_partition(*sys, config(log), std::move(local));
    sched->run();
    return a;
  }

  // Sends `req`; the returned slot fills when the reply comes.
  template <class Reply, class Request>
  std::shared_ptr<std::optional<result<Reply>>> send(const partition_actor& a, Request req) {
    auto slot = std::make_shared<std::optional<result<Reply>>>();
    ask<Reply>(*sys, a, std::move(req), [slot](result<Reply> r) { slot->emplace(std::move(r)); });
    return slot;
  }

  batch_request batch(std::vector<batch_op> ops) { return {schema->version, std::move(ops)}; }
};

std::string value_of(const op_result& r) { return r.row.cells.empty() ? "" : r.row.cells[0].value; }

}  // namespace

TEST_CASE("a batch request is answered when the actor runs it, in mailbox order", "[actor]") {
  fixture f;
  auto a = f.spawn();
  auto first = f.send<batch_reply>(a, f.batch({put("r").add("f", "q", 5, "one")}));
  auto second = f.send<batch_reply>(a, f.batch({get("r"), put("r").add("f", "q", 5, "two")}));
  CHECK_FALSE(first->has_value());
  CHECK(f.sched->try_run_once());
  REQUIRE(first->has_value());
  CHECK_FALSE(second->has_value());
  REQUIRE(**first);
  CHECK((**first)->results.at(0).st.is_ok());
  CHECK(f.sched->try_run_once());
  REQUIRE(second->has_value());
  REQUIRE(**second);
  CHECK(value_of((**second)->results.at(0)) == "one");  // saw the first request, not its own put
  CHECK((**second)->results.at(1).st.is_ok());
}

TEST_CASE("a failing action undoes its whole request and aborts the others", "[actor]") {
  fixture f;
  auto a = f.spawn();
  auto r = f.send<batch_reply>(a, f.batch({put("r1").add("f", "q", 1, "v"), put("r2").add("f", "n", 1, "not a long"),
                                           increment("r2").add("f", "n", 1)}));
  f.sched->run();
  REQUIRE(r->has_value());
  auto& out = (**r)->results;
  REQUIRE(out.size() == 3);
  CHECK(out[0].st.code() == code::aborted);
  CHECK(out[1].st.code() == code::aborted);
  CHECK(out[2].st.code() == code::not_a_long);
  auto check = f.send<batch_reply>(a, f.batch({get("r1"), get("r2")}));
  f.sched->run();
  REQUIRE(check->has_value());
  CHECK((**check)->results[0].row.cells.empty());
  CHECK((**check)->results[1].row.cells.empty());
  CHECK(f.pool.used() == 0);
}

TEST_CASE("each request kind gets its reply", "[actor]") {
  fixture f;
  auto a = f.spawn();
  auto w = f.send<batch_reply>(a, f.batch({put("a").add("f", "q", 1, "x"), put("b").add("f", "q", 1, "y")}));
  f.sched->run();
  REQUIRE(w->has_value());

  SECTION("scan_request: one page, in row order, with where to go on") {
    scan_request req{f.schema->version, {}};
    req.page.max_rows = 1;
    auto page = f.send<scan_reply>(a, req);
    f.sched->run();
    REQUIRE(page->has_value());
    REQUIRE((**page)->st.is_ok());
    REQUIRE((**page)->page.rows.size() == 1);
    CHECK((**page)->page.rows[0].row == "a");
    CHECK_FALSE((**page)->page.exhausted);
    CHECK((**page)->page.last_row == "a");
  }
  SECTION("stats_request: cells and bytes") {
    auto st = f.send<stats_reply>(a, stats_request{});
    f.sched->run();
    REQUIRE(st->has_value());
    CHECK((**st)->stats.cells == 2);
    CHECK((**st)->stats.bytes == static_cast<std::uint64_t>(f.pool.used()));
  }
  SECTION("cut_request: the changes since the last cut, once") {
    auto c1 = f.send<cut_reply>(a, cut_request{});
    f.sched->run();
    REQUIRE(c1->has_value());
    CHECK((**c1)->delta.map->size() == 2);
    auto c2 = f.send<cut_reply>(a, cut_request{});
    f.sched->run();
    CHECK((**c2)->delta.map->empty());
    SECTION("merge_delta_request: a failed snapshot's cut comes back") {
      auto m = f.send<admin_reply>(a, merge_delta_request{(**c1)->delta});
      f.sched->run();
      REQUIRE(m->has_value());
      auto c3 = f.send<cut_reply>(a, cut_request{});
      f.sched->run();
      CHECK((**c3)->delta.map->size() == 2);
    }
  }
  SECTION("adopt_schema_request: a new family can be written, an old request is refused") {
    auto newer = *f.schema;
    newer.version = 2;
    newer.families.push_back({family_descriptor{"g", 0, 0}, 2});
    batch_request put_g{2, {put("a").add("g", "q", 1, "z")}};
    auto early = f.send<batch_reply>(a, put_g);  // checked against version 2, not yet adopted
    f.sched->run();
    REQUIRE(early->has_value());
    CHECK((**early)->results[0].st.code() == code::unavailable);
    auto ad = f.send<admin_reply>(a, adopt_schema_request{newer});
    auto late = f.send<batch_reply>(a, put_g);
    f.sched->run();
    REQUIRE(ad->has_value());
    REQUIRE(late->has_value());
    CHECK((**late)->results[0].st.is_ok());
  }
  SECTION("drop_families_request: the family's cells are gone") {
    auto d = f.send<admin_reply>(a, drop_families_request{{1}});
    auto st = f.send<stats_reply>(a, stats_request{});
    f.sched->run();
    REQUIRE(d->has_value());
    CHECK((**st)->stats.cells == 0);
    CHECK(f.pool.used() == 0);
  }
  SECTION("reclaim_request: cells expired under a new TTL go now") {
    auto ttl = *f.schema;
    ttl.version = 2;
    ttl.families[0].desc.ttl_seconds = 10;  // the cells at ts 1 are 1000 s old
    f.send<admin_reply>(a, adopt_schema_request{ttl});
    auto rec = f.send<reclaim_reply>(a, reclaim_request{});
    f.sched->run();
    REQUIRE(rec->has_value());
    CHECK((**rec)->cells == 2);
    CHECK(f.pool.used() == 0);
  }
}

TEST_CASE("a stopped partition answers UNAVAILABLE; a new one serves its cells", "[actor]") {
  fixture f;
  auto local = std::make_shared<local_partition>();
  auto a = f.spawn(local);
  auto w = f.send<batch_reply>(a, f.batch({put("r").add("f", "q", 1, "v")}));
  f.sched->run();
  // Cells handed on as a recovered memtable would be.
  auto cut = f.send<cut_reply>(a, cut_request{});
  auto stop = f.send<admin_reply>(a, stop_request{});
  auto after = f.send<batch_reply>(a, f.batch({get("r")}));
  f.sched->run();
  REQUIRE(stop->has_value());
  CHECK((**stop)->st.is_ok());
  REQUIRE(after->has_value());
  CHECK_FALSE(**after);
  CHECK((*after)->error().code() == code::unavailable);
  batch_request g = f.batch({get("r")});
  batch_reply out;
  CHECK(local->try_run(g, out, nullptr) == local_partition::outcome::declined);

  // Restart: the same partition on the cells it held (here rebuilt from its cut).
  auto mem = std::make_shared<std::unique_ptr<memtable>>(std::make_unique<memtable>(&f.pool));
  for (auto it = (**cut)->delta.map->begin(); it != (**cut)->delta.map->end(); ++it) {
    auto key = decode_cell_key(it->first.bytes);
    REQUIRE(key);
    (*mem)->load(key->family, cell_key{std::move(key->row), std::move(key->qualifier), key->ts},
                 cell_value{std::string(it->second.value()), it->second.expires_at});
  }
  auto cfg = f.config();
  cfg.recovered = mem;
  auto local2 = std::make_shared<local_partition>();
  auto b = spawn_partition(*f.sys, cfg, local2);
  f.sched->run();
  batch_request g2 = f.batch({get("r")});
  batch_reply out2;
  REQUIRE(local2->try_run(g2, out2, nullptr) == local_partition::outcome::done);
  CHECK(value_of(out2.results.at(0)) == "v");
}

TEST_CASE("the in-place path runs the actor's code and declines what it may not run", "[actor]") {
  fixture f;
  auto local = std::make_shared<local_partition>();
  auto a = f.spawn(local);
  batch_request w = f.batch({put("r").add("f", "q", 1, "v"), increment("r").add("f", "n", 2)});
  batch_reply out;
  REQUIRE(local->try_run(w, out, nullptr) == local_partition::outcome::done);
  CHECK(out.results.at(1).row.cells.at(0).value == long_bytes(2));
  // What it wrote is the actor's state: the actor reads it.
  auto r = f.send<batch_reply>(a, f.batch({get("r").column("f", "q")}));
  f.sched->run();
  CHECK(value_of((**r)->results.at(0)) == "v");
  // A request checked against a schema the partition has not adopted goes to the actor.
  batch_request newer{f.schema->version + 1, {get("r")}};
  CHECK(local->try_run(newer, out, nullptr) == local_partition::outcome::declined);
  scan_reply page;
  CHECK(local->try_scan(scan_request{f.schema->version + 1, {}}, page) == false);
  REQUIRE(local->try_scan(scan_request{f.schema->version, {}}, page));
  CHECK(page.page.rows.size() == 1);
}

TEST_CASE("in log-sync mode a write is answered only once its record is on disk", "[actor][log]") {
  fixture f;
  testsupport::made_dir dir("cellar-actor-log");
  auto log = redo_log::open(cellar::env::posix(), dir.path, 1, true, std::chrono::milliseconds(100));
  REQUIRE(log);
  {
    auto a = f.spawn(nullptr, log_stream(log->get(), f.schema->uid, 0));
    auto w = f.send<batch_reply>(a, f.batch({put("r").add("f", "q", 1, "v")}));
    auto rd = f.send<batch_reply>(a, f.batch({get("r")}));
    REQUIRE(f.sched->try_run_once());  // the write ran and was logged ...
    CHECK_FALSE(w->has_value());       // ... but waits for the sync
    REQUIRE(f.sched->try_run_once());  // a read needs no sync, and sees the write
    REQUIRE(rd->has_value());
    CHECK(value_of((**rd)->results.at(0)) == "v");
    // The writer thread syncs, then notifies the actor (an enqueue into the test
    // coordinator, which only this thread may touch while it runs): rotate() returns once
    // the writer has run the acknowledgements of every record queued before it.
    REQUIRE((*log)->rotate(2).is_ok());
    for (int i = 0; i < 5000 && !w->has_value(); ++i) {
      if (!f.sched->try_run_once()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(w->has_value());
    CHECK((**w)->results.at(0).st.is_ok());
    CHECK((*log)->syncs() >= 1);
    f.send<admin_reply>(a, stop_request{});
    f.sched->run();
  }
  log->reset();
}

// The ordering rule (dispatch/call_order.h) as the dispatcher applies it, stepped on the test
// coordinator: a call of a caller that has something waiting at a partition's actor must
// not run in place ahead of it, while another caller's may.
TEST_CASE("the dispatcher keeps a caller's calls in order per partition", "[actor][order]") {
  fixture f;
  auto local = std::make_shared<local_partition>();
  auto a = f.spawn(local);
  table_runtime rt;
  rt.schema = f.schema;
  rt.partitions.push_back({a, local, {f.schema->uid, 0}, false, nullptr});
  auto stats = std::make_shared<dispatch_stats>();
  auto mine = std::make_shared<call_order>();
  dispatch_context queued{f.sys.get(), mine, stats, false};  // as batch_async: always the actor
  dispatch_context here{f.sys.get(), mine, stats, true};
  std::optional<std::vector<op_result>> later_write, later_read;
  auto w = dispatch_batch(queued, rt, {put("r").add("f", "q", 1, "new")},
                          [&](std::vector<op_result> r) { later_write = std::move(r); });
  CHECK_FALSE(w);  // waits at the actor
  // A read of the same caller may not overtake it: it waits too, and sees the write.
  auto r = dispatch_batch(here, rt, {get("r")}, [&](std::vector<op_result> x) { later_read = std::move(x); });
  CHECK_FALSE(r);
  // Another caller's read is independent: it runs in place now, before the write.
  auto other = std::make_shared<call_order>();
  auto o = dispatch_batch({f.sys.get(), other, stats, true}, rt, {get("r")}, [](std::vector<op_result>) {});
  REQUIRE(o);
  CHECK(o->at(0).row.cells.empty());
  f.sched->run();
  REQUIRE(later_write);
  REQUIRE(later_read);
  CHECK(value_of(later_read->at(0)) == "new");
  CHECK(mine->pending() == 0);
  // Nothing waits now: the caller's next calls run in place.
  auto next = dispatch_batch(here, rt, {put("r").add("f", "q", 2, "newer"), get("r")}, [](std::vector<op_result>) {});
  REQUIRE(next);
  CHECK(value_of(next->at(1)) == "newer");

  // A write may not overtake a read of the same caller waiting at the actor.
  std::optional<std::vector<op_result>> queued_read, later_put;
  CHECK_FALSE(dispatch_batch(queued, rt, {get("r")}, [&](std::vector<op_result> x) { queued_read = std::move(x); }));
  CHECK_FALSE(dispatch_batch(here, rt, {put("r").add("f", "q", 3, "newest")},
                             [&](std::vector<op_result> x) { later_put = std::move(x); }));
  f.sched->run();
  REQUIRE(queued_read);
  CHECK(value_of(queued_read->at(0)) == "newer");
  REQUIRE(later_put);
}
