// Table state (semantics SH3): store::disable_table / enable_table / is_table_enabled, and
// OceanBase's per-family truncate (store::truncate_family). A disabled table refuses every
// read and write with TABLE_DISABLED, keeps its cells, still takes DDL, and stays
// disabled across a restart.
#include <catch2/catch.hpp>

#include <future>
#include <string>
#include <vector>

#include "cellar/store.h"
#include "support/store_fixture.h"

using namespace cellar;

namespace {

using testsupport::open_store;

table_descriptor two_families(const std::string& name) { return {name, partition_spec::hash(3), {{"f"}, {"g"}}}; }

}  // namespace

TEST_CASE("SH3: a disabled table refuses reads and writes until enabled; its cells stay", "[state]") {
  auto s = open_store();
  REQUIRE(s->create_table(two_families("t"), schema_origin::hbase_shell).is_ok());
  auto t = s->open_table("t").value();
  REQUIRE(t.put(put("r1").add("f", "q", 1, "a")).is_ok());
  REQUIRE(t.put(put("r2").add("g", "q", 1, "b")).is_ok());
  CHECK(s->is_table_enabled("t").value());

  REQUIRE(s->disable_table("t").is_ok());
  CHECK_FALSE(s->is_table_enabled("t").value());
  CHECK(s->disable_table("t").is_ok());  // already disabled: nothing to do
  // Every action of a batch answers TABLE_DISABLED, reads and writes alike.
  auto r = t.batch({get("r1"), put("r3").add("f", "q", "x"), deletion("r2"), increment("r1").add("f", "n", 1)});
  REQUIRE(r.size() == 4);
  for (const auto& x : r) {
    CHECK(x.st.code() == code::table_disabled);
    CHECK(x.st.message().find("'t' is disabled") != std::string::npos);
  }
  CHECK(t.get(get("r1")).code() == code::table_disabled);
  CHECK(t.scan(scan()).code() == code::table_disabled);
  std::promise<std::vector<op_result>> p;
  t.batch_async({get("r1")}, [&p](std::vector<op_result> x) { p.set_value(std::move(x)); });
  CHECK(p.get_future().get().at(0).st.code() == code::table_disabled);
  // DDL and admin calls still work on a disabled table.
  CHECK(s->describe("t").is_ok());
  CHECK(s->alter_family("t", {"f", 3}).is_ok());
  CHECK(s->stats("t").value().cells == 2);

  REQUIRE(s->enable_table("t").is_ok());
  CHECK(s->enable_table("t").is_ok());
  CHECK(s->is_table_enabled("t").value());
  CHECK(t.get(get("r1")).value().cells.size() == 1);
  CHECK(t.get(get("r2")).value().cells.size() == 1);
  REQUIRE(t.put(put("r3").add("f", "q", "x")).is_ok());

  CHECK(s->disable_table("nosuch").code() == code::table_not_found);
  CHECK(s->enable_table("nosuch").code() == code::table_not_found);
  CHECK(s->is_table_enabled("nosuch").code() == code::table_not_found);
  // The store's drop does not ask (SQL DROP TABLEGROUP keeps OceanBase's behaviour; the
  // shell's drop asks for disable first).
  CHECK(s->drop_table("t").is_ok());
}

TEST_CASE("SH3: the disabled state survives a restart, in the catalog", "[state]") {
  testsupport::temp_dir tmp;
  const std::string& dir = tmp.path;
  {
    auto s = open_store(dir);
    REQUIRE(s->create_table(two_families("t"), schema_origin::hbase_shell).is_ok());
    REQUIRE(s->create_table(two_families("u"), schema_origin::hbase_shell).is_ok());
    REQUIRE(s->open_table("t").value().put(put("r").add("f", "q", 1, "kept")).is_ok());
    REQUIRE(s->disable_table("t").is_ok());
  }
  {
    auto s = open_store(dir);
    CHECK_FALSE(s->is_table_enabled("t").value());
    CHECK(s->is_table_enabled("u").value());
    CHECK(s->open_table("t").value().get(get("r")).code() == code::table_disabled);
    REQUIRE(s->enable_table("t").is_ok());
  }
  {
    auto s = open_store(dir);
    CHECK(s->is_table_enabled("t").value());
    auto row = s->open_table("t").value().get(get("r"));
    REQUIRE(row.is_ok());
    REQUIRE(row->cells.size() == 1);
    CHECK(row->cells[0].value == "kept");
  }
}

TEST_CASE("truncate_family empties one family and keeps the others and the schema", "[state]") {
  auto s = open_store();
  REQUIRE(s->create_table(two_families("t"), schema_origin::hbase_shell).is_ok());
  auto t = s->open_table("t").value();
  for (const char* row : {"a", "b", "c"}) REQUIRE(t.put(put(row).add("f", "q", 1, "x").add("g", "q", 1, "y")).is_ok());
  const auto before = s->describe("t").value();
  REQUIRE(s->truncate_family("t", "f").is_ok());
  CHECK(s->describe("t").value() == before);
  auto rows = t.scan(scan()).value().all().value();
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows) {
    REQUIRE(r.cells.size() == 1);
    CHECK(r.cells[0].family == "g");
  }
  REQUIRE(t.put(put("a").add("f", "q", 2, "new")).is_ok());
  CHECK(t.get(get("a").family("f")).value().cells.at(0).value == "new");
  CHECK(s->truncate_family("t", "nosuch").code() == code::family_not_found);
  CHECK(s->truncate_family("nosuch", "f").code() == code::table_not_found);
}
