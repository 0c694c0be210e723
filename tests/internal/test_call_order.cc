// dispatch/call_order.h: when a call of a caller may run in place without overtaking one of
// the same caller still waiting at that partition.
#include <catch2/catch.hpp>

#include "dispatch/call_order.h"

using cellar::detail::call_order;
using cellar::detail::partition_id;

namespace {

const partition_id t0{1, 0}, t1{1, 1}, t2{1, 2}, u1{2, 1};

}  // namespace

TEST_CASE("a call runs in place unless something of its caller waits ahead of it there", "[order]") {
  call_order c;
  CHECK(c.may_run_now(t0, false));
  CHECK(c.may_run_now(t1, true));
  CHECK(c.pending() == 0);

  SECTION("a write waiting at a partition") {
    c.enter(t1, true);
    CHECK_FALSE(c.may_run_now(t1, false));  // a read must see it
    CHECK_FALSE(c.may_run_now(t1, true));   // writes stay in order
    CHECK(c.may_run_now(t0, false));        // other partitions are independent
    CHECK(c.may_run_now(t2, true));
    CHECK(c.may_run_now(u1, true));  // and so are other tables
    c.leave(t1, true);
    CHECK(c.may_run_now(t1, false));
    CHECK(c.may_run_now(t1, true));
    CHECK(c.pending() == 0);
  }
  SECTION("a read waiting at a partition") {
    c.enter(t1, false);
    CHECK(c.may_run_now(t1, false));       // reads may pass reads
    CHECK_FALSE(c.may_run_now(t1, true));  // a write must not pass the read
    CHECK(c.may_run_now(t2, true));
    c.enter(t1, false);
    c.leave(t1, false);
    CHECK_FALSE(c.may_run_now(t1, true));  // one read still waits
    c.leave(t1, false);
    CHECK(c.may_run_now(t1, true));
    CHECK(c.pending() == 0);
  }
  SECTION("a barrier (DDL, admin) keeps every call on the actors") {
    c.raise_barrier();
    CHECK_FALSE(c.may_run_now(t0, false));
    CHECK_FALSE(c.may_run_now(u1, true));
    c.lower_barrier();
    CHECK(c.may_run_now(t0, true));
    c.lower_barrier();  // one too many changes nothing
    CHECK(c.pending() == 0);
  }
}
