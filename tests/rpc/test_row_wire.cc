// A row result crosses Cap'n Proto (rpc/convert.h) with every cell, and with each cell's
// own TTL when a scan asked for them; wire_words covers the message it builds.
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <catch2/catch.hpp>

#include <string>

#include "rpc/convert.h"

using namespace cellar;

namespace {

row_result round_trip(const row_result& r, bool* has_ttls = nullptr) {
  op_result x;
  x.row = r;
  capnp::MallocMessageBuilder m;
  rpc::to_wire(x, m.initRoot<wire::ActionResult>());
  CHECK(rpc::wire_words(x) >= capnp::computeSerializedSizeInWords(m));
  auto reader = m.getRoot<wire::ActionResult>().asReader();
  if (has_ttls) *has_ttls = reader.getRow().hasTtls();
  return rpc::from_wire(reader).row;
}

}  // namespace

TEST_CASE("a row result's cells keep their own TTLs across the wire; without TTLs no list is sent", "[rpc]") {
  row_result r;
  r.row = "row";
  r.exists = true;
  r.cells = {{"row", "f", "a", 9, "no ttl"},
             {"row", "f", "b", 8, "ttl", 2000},
             {"other", "g", std::string("\0q", 2), -3, std::string(100, 'v'), -1}};
  bool has = false;
  CHECK(round_trip(r, &has).cells == r.cells);
  CHECK(has);
  for (auto& c : r.cells) c.ttl_ms = 0;
  CHECK(round_trip(r, &has).cells == r.cells);
  CHECK_FALSE(has);
}
