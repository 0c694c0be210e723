// The partition actor's protocol, stepped one message at a time on CAF's test
// coordinator: no threads, no sleeps.
#include <catch2/catch.hpp>

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "partition/partition_actor.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::atomic<std::int64_t> bytes{0};
  std::shared_ptr<table_schema> schema = std::make_shared<table_schema>();

  fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    schema->name = "t";
    schema->partitioned = true;
    schema->version = 1;
    schema->families = {{family_descriptor{"f", 0, 0}, 1}};
  }

  partition_actor spawn() {
    partition_config pc;
    pc.schema = schema;
    pc.global_bytes = &bytes;
    pc.clock = [] { return std::int64_t{1000}; };
    return sys->spawn(partition_behavior, pc);
  }

  std::shared_ptr<batch_state> batch(std::vector<batch_op> ops) {
    auto st = std::make_shared<batch_state>();
    st->ops = std::move(ops);
    st->results.resize(st->ops.size());
    st->pending = 1;
    return st;
  }

  batch_part_ptr part(const std::shared_ptr<batch_state>& st) {
    auto p = std::make_shared<batch_part>(schema, st);
    for (std::uint32_t i = 0; i < st->ops.size(); ++i) p->indices.push_back(i);
    return p;
  }
};

}  // namespace

TEST_CASE("a batch part is answered only when the actor runs it, in mailbox order", "[actor]") {
  fixture f;
  auto a = f.spawn();
  f.sched->run();
  auto first = f.batch({put("r").add("f", "q", 5, "one")});
  auto second = f.batch({get("r"), put("r").add("f", "q", 5, "two")});
  int answered = 0;
  first->done = [&](std::vector<op_result> r) { ++answered; CHECK(r[0].st.is_ok()); };
  second->done = [&](std::vector<op_result> r) {
    ++answered;
    REQUIRE(r[0].row.cells.size() == 1);
    CHECK(r[0].row.cells[0].value == "one");  // saw the first part, not its own later put
  };
  caf::anon_send(a, f.part(first));
  caf::anon_send(a, f.part(second));
  CHECK(answered == 0);
  CHECK(f.sched->try_run_once());
  CHECK(answered == 1);
  CHECK(f.sched->try_run_once());
  CHECK(answered == 2);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  f.sched->run();
}

TEST_CASE("a failing action undoes its whole part and aborts the others", "[actor]") {
  fixture f;
  auto a = f.spawn();
  f.sched->run();
  auto st = f.batch({put("r1").add("f", "q", 1, "v"), put("r2").add("f", "n", 1, "not a long"),
                     increment("r2").add("f", "n", 1)});
  std::vector<op_result> out;
  st->done = [&](std::vector<op_result> r) { out = std::move(r); };
  caf::anon_send(a, f.part(st));
  f.sched->run();
  REQUIRE(out.size() == 3);
  CHECK(out[0].st.code() == code::aborted);
  CHECK(out[1].st.code() == code::aborted);
  CHECK(out[2].st.code() == code::not_a_long);
  auto check = f.batch({get("r1"), get("r2")});
  std::vector<op_result> after;
  check->done = [&](std::vector<op_result> r) { after = std::move(r); };
  caf::anon_send(a, f.part(check));
  f.sched->run();
  REQUIRE(after.size() == 2);
  CHECK(after[0].row.cells.empty());
  CHECK(after[1].row.cells.empty());
  CHECK(f.bytes.load() == 0);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  f.sched->run();
}

TEST_CASE("messages left when a partition stops are answered UNAVAILABLE", "[actor]") {
  fixture f;
  auto a = f.spawn();
  f.sched->run();
  auto stop = std::make_shared<admin_part>(admin_part::kind::stop, nullptr, 0);
  auto st = f.batch({put("r").add("f", "q", "v")});
  std::vector<op_result> out;
  st->done = [&](std::vector<op_result> r) { out = std::move(r); };
  caf::anon_send(a, stop);
  caf::anon_send(a, f.part(st));
  f.sched->run();
  REQUIRE(out.size() == 1);
  CHECK(out[0].st.code() == code::unavailable);
}
