// rpc/connection_state.h: when a batch of a connection may run in place without being
// reordered with a call the connection sent before it.
#include <catch2/catch.hpp>

#include "rpc/connection_state.h"

using cellar::rpc::connection_state;

namespace {

// What the server does for a batch call it sends to the partitions' actors.
void send_to_actors(connection_state& c, const std::string& table, std::vector<std::uint32_t> parts, bool reads) {
  ++c.in_flight;
  c.wait_at(table, parts, reads, 1);
}

void answered(connection_state& c, const std::string& table, std::vector<std::uint32_t> parts, bool reads) {
  --c.in_flight;
  c.wait_at(table, parts, reads, -1);
}

// Asked inside an admitted call, as the server asks.
bool in_place(connection_state& c, const std::string& table, std::vector<std::uint32_t> parts, bool reads) {
  ++c.in_flight;
  const bool ok = c.may_run_in_place(table, parts, reads);
  --c.in_flight;
  return ok;
}

}  // namespace

TEST_CASE("a batch runs in place unless something of its connection waits ahead of it there", "[rpc]") {
  connection_state c;
  CHECK(in_place(c, "t", {0, 1}, true));
  CHECK(in_place(c, "t", {1}, false));

  SECTION("a write waiting at a partition") {
    send_to_actors(c, "t", {1}, false);
    CHECK_FALSE(in_place(c, "t", {1}, true));     // the read must see it
    CHECK_FALSE(in_place(c, "t", {0, 1}, true));
    CHECK_FALSE(in_place(c, "t", {1}, false));    // writes stay in order
    CHECK(in_place(c, "t", {0, 2}, true));        // other partitions are independent
    CHECK(in_place(c, "t", {2}, false));
    CHECK(in_place(c, "u", {1}, false));          // and so are other tables
    answered(c, "t", {1}, false);
    CHECK(in_place(c, "t", {1}, true));
    CHECK(in_place(c, "t", {1}, false));
    CHECK(c.at.empty());
  }
  SECTION("a read waiting at a partition") {
    send_to_actors(c, "t", {0, 1}, true);
    CHECK(in_place(c, "t", {1}, true));           // reads may pass reads
    CHECK_FALSE(in_place(c, "t", {1}, false));    // a write must not pass the read
    CHECK(in_place(c, "t", {2}, false));
    send_to_actors(c, "t", {1}, true);
    answered(c, "t", {0, 1}, true);
    CHECK_FALSE(in_place(c, "t", {1}, false));    // one read still waits at 1
    CHECK(in_place(c, "t", {0}, false));
    answered(c, "t", {1}, true);
    CHECK(in_place(c, "t", {1}, false));
    CHECK(c.at.empty());
  }
  SECTION("a scan in flight lets reads in place, not writes") {
    ++c.in_flight;
    ++c.scans_in_flight;
    CHECK(in_place(c, "t", {0}, true));
    CHECK_FALSE(in_place(c, "t", {0}, false));
  }
  SECTION("any other call in flight (DDL, admin) keeps every batch on the actors") {
    ++c.in_flight;
    CHECK_FALSE(in_place(c, "t", {0}, true));
    CHECK_FALSE(in_place(c, "t", {0}, false));
  }
}
