// The frames server answers a get that it can read in place from views of the partition's
// cells (data_path::read_views, get_views_to_wire) instead of a row_result: the reply
// must be the same message, byte for byte, as the one built from read_row's row_result.
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "partition/memtable.h"
#include "rpc/convert.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

kj::Array<capnp::word> flat(capnp::MessageBuilder& m) { return capnp::messageToFlatArray(m); }

bool same(const kj::Array<capnp::word>& a, const kj::Array<capnp::word>& b) {
  return a.size() == b.size() && std::memcmp(a.begin(), b.begin(), a.size() * sizeof(capnp::word)) == 0;
}

}  // namespace

TEST_CASE("a get answered from views of the cells is the message read_row's result gives", "[rpc][frames]") {
  memory_pool pool;
  memtable m(&pool);
  table_schema s;
  s.name = "t";
  s.partitioned = true;
  s.families = {{family_descriptor{"a", 3, 0}, 1}, {family_descriptor{"bb", 0, 0}, 2}};
  const std::int64_t now = 1'000'000;
  const std::string row = "user000000000000000000042";  // longer than a short string
  for (std::int64_t ts = 1; ts <= 4; ++ts)
    REQUIRE(
        m.apply(s, put(row).add("a", "q1", ts, "v" + std::to_string(ts)).add("a", "q2", ts, std::string(300, 'x')), now)
            .is_ok());
  REQUIRE(m.apply(s, put(row).add("bb", "", 7, "").add("bb", std::string("\0z", 2), 8, "binary\0v"), now).is_ok());
  REQUIRE(m.apply(s, put("other").add("a", "q1", 1, "not this row"), now).is_ok());

  std::vector<read_options> reads(5);
  reads[1].max_versions = 10;
  reads[2].columns.families.push_back({"bb", {}});
  reads[2].columns.families.push_back({"a", {"q2"}});
  reads[3].range = {2, 4};
  reads[3].max_versions = 10;
  reads[4].columns.families.push_back({"a", {"nothing"}});  // no cell: exists is false
  for (std::size_t i = 0; i < reads.size(); ++i) {
    for (const std::string& key : {row, std::string("absent")}) {
      CAPTURE(i, key);
      op_result r;
      r.row = m.read_row(s, key, reads[i], false, now);
      capnp::MallocMessageBuilder want;
      rpc::to_wire(r, want.initRoot<wire::ActionResult>());

      std::vector<read_cell_view> views;
      const bool exists = m.read_row_views(s, key, reads[i], now, views);
      CHECK(exists == r.row.exists);
      CHECK(views.size() == r.row.cells.size());
      capnp::MallocMessageBuilder got;
      rpc::get_views_to_wire(key, exists, views, got.initRoot<wire::ActionResult>());
      CHECK(same(flat(got), flat(want)));
      // The size estimate covers the message, so a reply is built in one segment.
      CHECK(rpc::get_views_words(key, views) >= capnp::computeSerializedSizeInWords(got));
    }
  }
}
