// The dispatcher's in-place path (dispatch/dispatch.h): a batch part run on the caller's thread
// when its partition is free answers exactly as the partition's actor would, atomically.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "../support/eventually.h"
#include "cellar/store.h"
#include "route/router.h"
#include "store/access.h"
#include "store/catalog_service.h"
#include "store/data_path.h"

using namespace cellar;
using cellar::detail::call_order;

namespace {

struct ran {
  std::vector<op_result> results;
  bool here = false;  // every part ran on this thread, none at an actor
};

// Runs `ops` for a caller with nothing waiting (its own call_order), in place where the
// partitions are free; waits for parts that went to an actor.
ran run_here(store& s, const std::string& table, std::vector<batch_op> ops) {
  auto& data = detail::store_access::data(s);
  const auto queued = data.stats()->queued.load();
  std::promise<std::vector<op_result>> later;
  auto now = data.run_batch(table, std::move(ops), std::make_shared<call_order>(), true,
                            [&later](std::vector<op_result> r) { later.set_value(std::move(r)); });
  ran out;
  out.results = now ? std::move(*now) : later.get_future().get();
  out.here = data.stats()->queued.load() == queued;
  return out;
}

// As run_here, retried until every part ran here (idle partitions whose actor holds them
// a moment, for a maintenance tick on a preempted thread).
ran run_here_retrying(store& s, const std::string& table, const std::vector<batch_op>& ops) {
  ran r;
  testsupport::eventually([&] {
    r = run_here(s, table, ops);
    return r.here;
  });
  return r;
}

}  // namespace

TEST_CASE("gets run in place answer as through the actors", "[in_place]") {
  auto s = store::open({}).value();
  REQUIRE(s->create_table({"t", partition_spec::hash(4), {{"f", 3}}}, schema_origin::oceanbase_ddl).is_ok());
  auto t = s->open_table("t").value();
  for (int i = 0; i < 50; ++i)
    REQUIRE(t.put(put("r" + std::to_string(i)).add("f", "q", 1, "a").add("f", "q", 2, "b")).is_ok());
  std::vector<batch_op> gets;
  for (int i = 0; i < 60; ++i) gets.push_back(get("r" + std::to_string(i)).all_versions());
  auto now = run_here_retrying(*s, "t", gets);
  REQUIRE(now.here);
  std::promise<std::vector<op_result>> p;
  t.batch_async(gets, [&p](std::vector<op_result> r) { p.set_value(std::move(r)); });  // always at the actors
  auto via_actor = p.get_future().get();
  REQUIRE(now.results.size() == via_actor.size());
  for (std::size_t i = 0; i < via_actor.size(); ++i) {
    CHECK(now.results[i].st.code() == code::ok);
    CHECK(now.results[i].row.cells == via_actor[i].row.cells);
    CHECK(now.results[i].row.exists == via_actor[i].row.exists);
  }
  CHECK(now.results[0].row.cells.size() == 2);
  CHECK(now.results[55].row.cells.empty());

  // An invalid batch is refused whole, before anything runs.
  auto refused = run_here(*s, "t", {put("r1").add("f", "q", 3, "x"), get("r2").family("nope")});
  CHECK(refused.results[1].st.code() == code::family_not_found);
  CHECK(refused.results[0].st.code() == code::aborted);
  CHECK(t.get(get("r1")).value().cells.front().value == "b");

  REQUIRE(s->drop_table("t").is_ok());
  CHECK(run_here(*s, "t", gets).results[0].st.code() == code::table_not_found);
}

TEST_CASE("a write batch runs in place as its partitions would", "[in_place]") {
  auto s = store::open({}).value();
  // RANGE: rows "a..." in one partition, "n..." in another.
  REQUIRE(s->create_table({"t", partition_spec::range_bounds({"m"}), {{"f", 3}, {"g"}}}, schema_origin::oceanbase_ddl)
              .is_ok());
  auto t = s->open_table("t").value();
  auto r = run_here_retrying(*s, "t",
                             {put("a1").add("f", "q", 5, "x").add("g", "q", 5, "y"), put("a2").add("f", "q", "z"),
                              increment("a3").add("f", "n", 7), deletion("a1").family("g")});
  REQUIRE(r.here);
  REQUIRE(r.results.size() == 4);
  for (const auto& x : r.results) CHECK(x.st.code() == code::ok);
  CHECK(to_long(r.results[2].row.cells.at(0).value) == 7);
  auto a1 = t.get(get("a1")).value();
  REQUIRE(a1.cells.size() == 1);
  CHECK(a1.cells[0].family == "f");
  CHECK(a1.cells[0].value == "x");

  // A failing action undoes its partition's whole unit, as through the actor.
  auto failed = run_here_retrying(*s, "t", {put("a4").add("f", "q", "kept?"), increment("a2").add("f", "q", 1)});
  CHECK(failed.results[1].st.code() == code::not_a_long);
  CHECK(failed.results[0].st.code() == code::aborted);
  CHECK(t.get(get("a4")).value().cells.empty());

  // Over two partitions: each part in place, each its own unit.
  auto two =
      run_here_retrying(*s, "t",
                        {put("a5").add("f", "q", "v"), increment("n1").add("f", "q", 1), put("n2").add("f", "q", "w")});
  REQUIRE(two.here);
  CHECK(two.results[0].st.is_ok());
  CHECK(two.results[1].st.is_ok());
  CHECK(two.results[2].st.is_ok());
  CHECK(t.get(get("n2")).value().cells.at(0).value == "w");
}

TEST_CASE("batches run in place and through the actors agree", "[in_place]") {
  store_options o;
  o.clock = [] { return std::int64_t{1'700'000'000'000}; };  // both tables see the same time
  auto s = store::open(o).value();
  for (auto name : {"direct", "actors"})
    REQUIRE(s->create_table({name, partition_spec::hash(4), {{"f", 2}, {"g"}}}, schema_origin::oceanbase_ddl).is_ok());
  auto direct = s->open_table("direct").value();
  auto actors = s->open_table("actors").value();
  std::mt19937 rng(42);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto row = [&] { return "r" + std::to_string(pick(40)); };
  auto fam = [&] { return std::string(pick(2) ? "f" : "g"); };
  auto q = [&] { return "q" + std::to_string(pick(3)); };
  auto action = [&]() -> batch_op {
    switch (pick(8)) {
      case 0: return put(row()).add(fam(), q(), 1000 + pick(5), "v" + std::to_string(pick(100)));
      case 1: return put(row()).add(fam(), q(), "w" + std::to_string(pick(100))).add("nope", "q", "x");
      case 2: return deletion(row()).column(fam(), q());
      case 3: return deletion(row()).family(fam());
      case 4: return increment(row()).add("g", "n", pick(10));
      case 5: return append(row()).add("f", q(), "+");
      case 6: return increment(row()).add("f", q(), 1);  // NOT_A_LONG over a put's value
      default: return check_and_mutate(row(), "f", q()).if_equals("v1").then(put("x").add("g", "c", "y"));
    }
  };
  int in_place = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<batch_op> ops;
    for (int n = 1 + pick(3); n > 0; --n) ops.push_back(action());
    if (auto* cm = std::get_if<check_and_mutate>(&ops[0]))
      cm->mutation = row_mutations(cm->row).add(put(cm->row).add("g", "c", "y"));
    auto a = run_here(*s, "direct", ops);
    if (a.here) ++in_place;
    std::promise<std::vector<op_result>> p;
    actors.batch_async(ops, [&p](std::vector<op_result> r) { p.set_value(std::move(r)); });
    auto b = p.get_future().get();
    REQUIRE(a.results.size() == b.size());
    for (std::size_t k = 0; k < b.size(); ++k) {
      INFO("batch " << i << " action " << k);
      CHECK(a.results[k].st.code() == b[k].st.code());
      CHECK(a.results[k].processed == b[k].processed);
      CHECK(a.results[k].row.cells == b[k].row.cells);
    }
  }
  CHECK(in_place > 1500);  // nothing else runs: most find their partitions free
  auto all = [&](table& t) { return t.scan(scan().all_versions()).value().all().value(); };
  auto x = all(direct), y = all(actors);
  REQUIRE(x.size() == y.size());
  CHECK(x.size() > 10);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(x[i].cells == y[i].cells);
}

TEST_CASE("reads in place see a partition's batches whole while they are written", "[in_place][concurrency]") {
  auto s = store::open({}).value();
  REQUIRE(s->create_table({"t", partition_spec::single(), {{"f"}, {"g"}}}, schema_origin::oceanbase_ddl).is_ok());
  auto t = s->open_table("t").value();
  std::atomic<bool> stop{false};
  std::atomic<int> write_failures{0};  // Catch's assertions are for the test's own thread
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      const std::string v = std::to_string(i);
      // Through the actor (batch_async), while the reader reads in place: one put of two
      // families of one row, and one batch of two rows, each one unit.
      std::promise<void> done;
      t.batch_async({put("r").add("f", "a", v).add("g", "b", v), put("x").add("f", "q", v), put("y").add("f", "q", v)},
                    [&](std::vector<op_result> r) {
                      for (auto& x : r)
                        if (!x.st.is_ok()) ++write_failures;
                      done.set_value();
                    });
      done.get_future().get();
    }
  });
  std::vector<batch_op> gets{get("r"), get("x"), get("y")};
  int answered = 0, torn = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (std::chrono::steady_clock::now() < until) {
    auto r = run_here(*s, "t", gets);
    if (!r.here) continue;
    ++answered;
    const auto& row = r.results[0].row.cells;
    if (row.size() == 1 || (row.size() == 2 && row[0].value != row[1].value)) ++torn;
    const auto& x = r.results[1].row.cells;
    const auto& y = r.results[2].row.cells;
    if (x.size() != y.size() || (!x.empty() && x[0].value != y[0].value)) ++torn;
  }
  stop = true;
  writer.join();
  CHECK(write_failures == 0);
  CHECK(answered > 0);
  CHECK(torn == 0);
}

TEST_CASE("the embedded API keeps its calls in order per partition", "[in_place][order]") {
  // A write queued at a partition's actor (batch_async) and then a read of the same row
  // from the same API: the read must not run in place ahead of the write.
  auto s = store::open({}).value();
  REQUIRE(s->create_table({"t", partition_spec::hash(4), {{"f"}}}, schema_origin::oceanbase_ddl).is_ok());
  auto t = s->open_table("t").value();
  int stale = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string row = "r" + std::to_string(i % 17), v = std::to_string(i);
    std::atomic<bool> acked{false};
    t.batch_async({put(row).add("f", "q", v)}, [&](std::vector<op_result>) { acked = true; });
    auto r = t.get(get(row));
    REQUIRE(r);
    if (r->cells.empty() || r->cells[0].value != v) ++stale;
    while (!acked) std::this_thread::yield();
  }
  CHECK(stale == 0);
}

// The frames session looks a table up once per read's worth of requests
// (catalog_service::lookup with a table_lookup_cache): the cache must answer as lookup() does
// after every change of the catalog, including a drop and a re-create of the same name.
TEST_CASE("a table lookup cache answers as lookup() after every catalog change", "[in_place][catalog]") {
  auto s = store::open({}).value();
  auto& catalog = detail::store_access::seat(*s).catalog();
  detail::table_lookup_cache cache;
  CHECK(catalog.lookup("t", cache) == nullptr);  // no such table yet
  REQUIRE(s->create_table({"t", partition_spec::hash(2), {{"f", 1}}}, schema_origin::oceanbase_ddl).is_ok());
  const auto first = catalog.lookup("t", cache);
  REQUIRE(first != nullptr);
  CHECK(first == catalog.lookup("t"));
  REQUIRE(s->create_table({"u", partition_spec::hash(2), {{"f", 1}}}, schema_origin::oceanbase_ddl).is_ok());
  CHECK(catalog.lookup("t", cache) == first);  // a new catalog, the same runtime for "t"
  CHECK(catalog.lookup("u", cache) == catalog.lookup("u"));
  CHECK(catalog.lookup("t", cache) == first);
  REQUIRE(s->disable_table("t").is_ok());
  const auto disabled = catalog.lookup("t", cache);
  REQUIRE(disabled != nullptr);
  CHECK(disabled != first);
  CHECK(disabled->schema->disabled);
  REQUIRE(s->drop_table("t").is_ok());
  CHECK(catalog.lookup("t", cache) == nullptr);
  REQUIRE(s->create_table({"t", partition_spec::hash(2), {{"f", 1}}}, schema_origin::oceanbase_ddl).is_ok());
  const auto again = catalog.lookup("t", cache);
  REQUIRE(again != nullptr);
  CHECK(again == catalog.lookup("t"));
  CHECK(again->schema->uid != first->schema->uid);
  cache.clear();
  CHECK(cache.rt == nullptr);
}

// The frames loop resolves each pipelined get or put to its partition once and prefetches
// through that pointer (data_path::local_partition_of): the partition must be the one the
// row routes to, and `keep` must hold its table's runtime so that the pointer outlives a
// drop of the table during the read.
TEST_CASE("a row's local partition is resolved as the router routes it and kept alive", "[in_place][prefetch]") {
  auto s = store::open({}).value();
  auto& impl = detail::store_access::data(*s);
  detail::table_lookup_cache cache;
  std::vector<detail::runtime_ptr> keep;
  CHECK(impl.local_partition_of("t", cache, "r1", keep) == nullptr);  // no such table
  CHECK(keep.empty());
  REQUIRE(s->create_table({"t", partition_spec::hash(4), {{"f", 1}}}, schema_origin::oceanbase_ddl).is_ok());
  REQUIRE(s->create_table({"u", partition_spec::hash(2), {{"f", 1}}}, schema_origin::oceanbase_ddl).is_ok());
  const auto rt = impl.lookup("t");
  std::set<detail::local_partition*> seen;
  for (int i = 0; i < 64; ++i) {
    const std::string row = "r" + std::to_string(i);
    auto* part = impl.local_partition_of("t", cache, row, keep);
    REQUIRE(part != nullptr);
    CHECK(part == rt->partitions[detail::partition_of(rt->schema->partitioning, row)].local.get());
    seen.insert(part);
  }
  CHECK(seen.size() == 4);
  REQUIRE(keep.size() == 1);  // one table: its runtime kept once
  CHECK(keep[0] == rt);
  REQUIRE(impl.local_partition_of("u", cache, "r1", keep) != nullptr);
  CHECK(keep.size() == 2);
  auto* kept = impl.local_partition_of("t", cache, "r7", keep);
  REQUIRE(keep.size() == 3);
  // Dropped while the pointer is held: it still points into the kept runtime's partition,
  // and a prefetch through it is a hint on a stopped partition (nothing happens).
  REQUIRE(s->drop_table("t").is_ok());
  CHECK(kept == keep[2]->partitions[detail::partition_of(keep[2]->schema->partitioning, "r7")].local.get());
  using step = detail::cell_map::prefetch_step;
  for (auto st : {step::probe, step::node, step::cells}) kept->prefetch_row("r7", st);
  CHECK(impl.local_partition_of("t", cache, "r7", keep) == nullptr);  // gone from the catalog
  REQUIRE(s->disable_table("u").is_ok());
  CHECK(impl.local_partition_of("u", cache, "r1", keep) == nullptr);  // disabled: no hint
  CHECK(keep.size() == 3);
}
