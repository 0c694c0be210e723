// The cluster catalog's DDL rules and encodings (pure functions).
#include "cluster/catalog_state.h"
#include "cluster_test.h"

using namespace cellar;
using namespace cellar::cluster;

namespace {

family_descriptor fam(const std::string& name) {
  family_descriptor f;
  f.name = name;
  return f;
}

table_descriptor table(const std::string& name, std::vector<std::string> families, partition_spec p = partition_spec::hash(4)) {
  table_descriptor d;
  d.name = name;
  d.partitioning = p;
  for (auto& f : families) d.families.push_back(fam(f));
  return d;
}

cluster_catalog apply_ok(const cluster_catalog& c, const ddl_request& r) {
  auto out = apply_ddl(c, r);
  INFO(zktest::describe_status(out));
  REQUIRE(out.is_ok());
  return out->catalog;
}

}  // namespace

TEST_CASE("DDL on the cluster catalog follows the store's rules", "[catalog]") {
  cluster_catalog c;
  auto created = apply_ddl(c, ddl_request::create(table("t", {"b", "a"}), schema_origin::hbase_shell));
  REQUIRE_OK(created);
  CHECK(created->new_partitions);
  CHECK_FALSE(created->dropped);
  c = created->catalog;
  CHECK(c.version == 1);
  const auto* t = c.find("t");
  REQUIRE(t);
  CHECK(t->version == 1);
  CHECK(t->uid == 1);
  REQUIRE(t->families.size() == 2);
  CHECK(t->families[0].desc.name == "a");  // sorted by name
  CHECK(t->families[0].desc.max_versions == 1);  // R7: the HBase shell keeps one version
  CHECK(t->families[0].id != t->families[1].id);
  CHECK(c.next_family_id == 3);

  REQUIRE_CODE(apply_ddl(c, ddl_request::create(table("t", {"x"}), schema_origin::hbase_shell)), code::already_exists);
  REQUIRE_CODE(apply_ddl(c, ddl_request::create(table("bad name", {"x"}), schema_origin::hbase_shell)),
               code::invalid_argument);
  REQUIRE_CODE(apply_ddl(c, ddl_request::create(table("u", {}), schema_origin::hbase_shell)), code::invalid_argument);
  REQUIRE_CODE(apply_ddl(c, ddl_request::drop("missing")), code::table_not_found);
  REQUIRE_CODE(apply_ddl(c, ddl_request::drop_family("t", "zz")), code::family_not_found);
  REQUIRE_CODE(apply_ddl(c, ddl_request::add("t", fam("c"), partition_spec::hash(8))), code::invalid_argument);
  REQUIRE_CODE(apply_ddl(c, ddl_request::alter("missing", fam("a"))), code::table_not_found);

  // A refused DDL changes nothing; a later one sees the same counters.
  auto added = apply_ddl(c, ddl_request::add("t", fam("c"), partition_spec::hash(4)));
  REQUIRE_OK(added);
  CHECK_FALSE(added->new_partitions);
  c = added->catalog;
  CHECK(c.version == 2);
  CHECK(c.find("t")->families.size() == 3);

  // truncate: new family ids, same partitions.
  auto before_ids = c.find("t")->families;
  c = apply_ok(c, ddl_request::truncate("t"));
  for (std::size_t i = 0; i < before_ids.size(); ++i) CHECK(c.find("t")->families[i].id != before_ids[i].id);

  // A group whose last family was dropped takes a new rule with its next family.
  c = apply_ok(c, ddl_request::drop_family("t", "a"));
  c = apply_ok(c, ddl_request::drop_family("t", "b"));
  c = apply_ok(c, ddl_request::drop_family("t", "c"));
  const auto old_uid = c.find("t")->uid;
  auto re = apply_ddl(c, ddl_request::add("t", fam("n"), partition_spec::hash(16)));
  REQUIRE_OK(re);
  CHECK(re->new_partitions);
  CHECK(re->old_partitions_gone);
  CHECK(re->catalog.find("t")->uid != old_uid);
  CHECK(re->catalog.find("t")->partitioning.count() == 16);

  // OceanBase style: an empty group, then its first family fixes the rule.
  c = apply_ok(re->catalog, ddl_request::create_group("g"));
  CHECK_FALSE(c.find("g")->partitioned);
  REQUIRE_CODE(apply_ddl(c, ddl_request::alter("g", fam("f"))), code::invalid_argument);
  auto first = apply_ddl(c, ddl_request::add("g", fam("f"), partition_spec::hash(2)));
  REQUIRE_OK(first);
  CHECK(first->new_partitions);
  CHECK_FALSE(first->old_partitions_gone);

  auto dropped = apply_ddl(first->catalog, ddl_request::drop("g"));
  REQUIRE_OK(dropped);
  CHECK(dropped->dropped);
  CHECK(dropped->old_partitions_gone);
  CHECK_FALSE(dropped->catalog.find("g"));
}

TEST_CASE("a DDL decided on an older catalog version gets CONFLICT", "[catalog]") {
  cluster_catalog c;
  auto r = ddl_request::create_group("g");
  r.expected_version = 0;
  c = apply_ok(c, r);
  auto again = ddl_request::create_group("h");
  again.expected_version = 0;
  auto lost = apply_ddl(c, again);
  REQUIRE_CODE(lost, code::conflict);
  CHECK(lost.error().message().find("version 1") != std::string::npos);
  again.expected_version = 1;
  CHECK(apply_ddl(c, again).is_ok());
}

TEST_CASE("DDL requests, catalog headers and table entries round-trip", "[catalog]") {
  std::vector<ddl_request> all{
      ddl_request::create(table("t", {"a", "b"}, partition_spec::range_bounds({"g", "p"})), schema_origin::hbase_shell),
      ddl_request::create_group("g"),
      ddl_request::add("g", fam("f"), partition_spec::hash_prefix(8, 3)),
      ddl_request::alter("g", fam("f")),
      ddl_request::drop_family("g", "f"),
      ddl_request::drop("g"),
      ddl_request::truncate("t"),
  };
  all[3].expected_version = 42;
  all[3].family.ttl_seconds = 3600;
  all[3].family.kind = family_kind::time_series;
  for (const auto& r : all) {
    auto back = decode_ddl_request(encode_ddl_request(r));
    REQUIRE_OK(back);
    CHECK(*back == r);
  }
  REQUIRE_CODE(decode_ddl_request("nonsense"), code::corruption);
  REQUIRE_CODE(decode_ddl_request(encode_ddl_request(all[0]) + "x"), code::corruption);

  cluster_catalog c = apply_ok({}, all[0]);
  auto h = decode_catalog_header(encode_catalog_header(header_of(c)));
  REQUIRE_OK(h);
  CHECK(h->version == 1);
  CHECK(h->next_family_id == c.next_family_id);
  CHECK(h->tables == std::map<std::string, std::uint64_t>{{"t", 1}});
  auto t = decode_table_entry(encode_table_entry(*c.find("t")));
  REQUIRE_OK(t);
  CHECK(t->version == 1);
  CHECK(t->descriptor() == c.find("t")->descriptor());
  REQUIRE_CODE(decode_table_entry("x"), code::corruption);
}
