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

table_descriptor table(const std::string& name, std::vector<std::string> families,
                       partition_spec p = partition_spec::hash(4)) {
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
  CHECK(t->families[0].desc.name == "a");        // sorted by name
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
      ddl_request::alter_table("t", {{"READONLY", "true"}, {"k", "v"}}, {"OWNER", "MAX_FILESIZE"}),
      ddl_request::create_namespace({"ns", {{"k", "v"}}}),
      ddl_request::drop_namespace("ns"),
      ddl_request::alter_namespace("ns", {{"a", "b"}}, {"k"}),
      ddl_request::reshape("t", partition_spec::range_bounds({"g", "k", "p"}), 7, {"n1", "n2", "n1", "n3"},
                           {"/moves/t_t.0", "/moves/t_t.1", "/moves/t_t.2"}, 5),
      ddl_request::reshape("t", partition_spec::range_bounds({"g"}), 8, {"n1", "n2"}, {"/moves/t_t.0"}, 6),
  };
  all.back().replica_sets = {{"n1", "n2", "n3"}, {"n2", "n3", "n1"}};
  all[3].expected_version = 42;
  all[3].family.ttl_seconds = 3600;
  all[3].family.kind = family_kind::time_series;
  all[0].descriptor.attributes = {{"MAX_FILESIZE", "134217728"}};
  all[0].descriptor.families[1].min_versions = 1;
  all[0].descriptor.families[1].attributes = {{"BLOOMFILTER", "ROW"}};
  all[2].family.min_versions = 2;
  all[2].family.attributes = {{"team", "search"}};
  for (const auto& r : all) {
    auto back = decode_ddl_request(encode_ddl_request(r));
    REQUIRE_OK(back);
    CHECK(*back == r);
  }
  // A request of format 1 (before attributes) reads as one without them.
  {
    const ddl_request plain = ddl_request::drop("g");
    const std::string v2 = encode_ddl_request(plain);
    // family (u32 + 0 attributes), 2 empty maps, no names; then (format 3) the namespace's
    // empty name and properties; then (format 4) a zero uid, no owners and no intents;
    // then (format 5) no replica sets.
    const std::size_t trailer = 4 + 4 + 4 + 4 + 4 + 4 + 4 + 8 + 4 + 4 + 4;
    std::string v1 = std::string("\0\0\0\1", 4) + v2.substr(4, v2.size() - 4 - trailer);
    auto back = decode_ddl_request(v1);
    REQUIRE_OK(back);
    CHECK(*back == plain);
  }
  REQUIRE_CODE(decode_ddl_request("nonsense"), code::corruption);
  REQUIRE_CODE(decode_ddl_request(encode_ddl_request(all[0]) + "x"), code::corruption);

  cluster_catalog c = apply_ok({}, all[0]);
  auto h = decode_catalog_header(encode_catalog_header(header_of(c)));
  REQUIRE_OK(h);
  CHECK(h->version == 1);
  CHECK(h->next_family_id == c.next_family_id);
  CHECK(h->tables == std::map<std::string, std::uint64_t>{{"t", 1}});
  CHECK(h->namespaces == c.namespaces);
  auto t = decode_table_entry(encode_table_entry(*c.find("t")));
  REQUIRE_OK(t);
  CHECK(t->version == 1);
  CHECK(t->descriptor() == c.find("t")->descriptor());
  CHECK(t->descriptor().attributes.at("MAX_FILESIZE") == "134217728");
  CHECK(t->descriptor().families[1].min_versions == 1);
  REQUIRE_CODE(decode_table_entry("x"), code::corruption);
}

TEST_CASE("a split or merge on the cluster catalog: new bounds under the uid it was built for", "[catalog]") {
  cluster_catalog c = apply_ok({}, ddl_request::create(table("t", {"f"}, partition_spec::range_bounds({"m"})),
                                                       schema_origin::hbase_shell));
  const std::uint64_t was = c.find("t")->uid;
  auto split = apply_ddl(c, ddl_request::reshape("t", partition_spec::range_bounds({"g", "m"}), c.next_uid,
                                                 {"n1", "n2", "n3"}, {}, c.version));
  REQUIRE_OK(split);
  CHECK(split->new_partitions);
  CHECK(split->old_partitions_gone);
  const auto* t = split->catalog.find("t");
  CHECK(t->uid != was);
  CHECK(t->uid == c.next_uid);
  CHECK(t->partitioning.bounds == std::vector<std::string>{"g", "m"});
  REQUIRE(t->families.size() == 1);
  CHECK(t->families[0].id == c.find("t")->families[0].id);  // the cells keep their family ids
  // Built for another uid (a DDL came in between), another version, or owners that do not
  // match: refused.
  REQUIRE_CODE(apply_ddl(c, ddl_request::reshape("t", partition_spec::range_bounds({"g", "m"}), c.next_uid + 1,
                                                 {"n1", "n2", "n3"}, {}, c.version)),
               code::conflict);
  REQUIRE_CODE(apply_ddl(c, ddl_request::reshape("t", partition_spec::range_bounds({"g", "m"}), c.next_uid,
                                                 {"n1", "n2", "n3"}, {}, c.version - 1)),
               code::conflict);
  REQUIRE_CODE(apply_ddl(c, ddl_request::reshape("t", partition_spec::range_bounds({"g", "m"}), c.next_uid,
                                                 {"n1", "n2"}, {}, c.version)),
               code::invalid_argument);
  REQUIRE_CODE(apply_ddl(c, ddl_request::reshape("t", partition_spec::range_bounds({"m", "g"}), c.next_uid,
                                                 {"n1", "n2", "n3"}, {}, c.version)),
               code::invalid_argument);
  // KEY partitions stay fixed.
  cluster_catalog h =
      apply_ok({}, ddl_request::create(table("h", {"f"}, partition_spec::hash(3)), schema_origin::hbase_shell));
  REQUIRE_CODE(apply_ddl(h, ddl_request::reshape("h", partition_spec::range_bounds({"g"}), h.next_uid, {"n1", "n2"}, {},
                                                 h.version)),
               code::invalid_argument);
  REQUIRE_CODE(apply_ddl(c, ddl_request::reshape("nope", partition_spec::range_bounds({"g"}), c.next_uid, {"n1", "n2"},
                                                 {}, c.version)),
               code::table_not_found);
}

TEST_CASE("table attributes on the cluster catalog: set, unset, refused as on one store", "[catalog]") {
  cluster_catalog c = apply_ok({}, ddl_request::create(table("t", {"f"}), schema_origin::hbase_shell));
  c = apply_ok(c, ddl_request::alter_table("t", {{"READONLY", "true"}, {"OWNER", "ops"}}, {}));
  CHECK(c.find("t")->attributes == std::map<std::string, std::string>{{"OWNER", "ops"}, {"READONLY", "true"}});
  CHECK(c.find("t")->version == 2);
  c = apply_ok(c, ddl_request::alter_table("t", {{"MAX_FILESIZE", "134217728"}}, {"OWNER"}));
  CHECK(c.find("t")->attributes ==
        std::map<std::string, std::string>{{"MAX_FILESIZE", "134217728"}, {"READONLY", "true"}});
  auto missing = apply_ddl(c, ddl_request::alter_table("t", {}, {"OWNER"}));
  REQUIRE_CODE(missing, code::invalid_argument);
  CHECK(missing.error().message() == "Could not find attribute: OWNER");
  REQUIRE_CODE(apply_ddl(c, ddl_request::alter_table("nosuch", {{"OWNER", "x"}}, {})), code::table_not_found);
  // The last family: HBase's alter keeps it, OceanBase's DROP TABLE drops it.
  auto last = apply_ddl(c, ddl_request::drop_family("t", "f", schema_origin::hbase_shell));
  REQUIRE_CODE(last, code::invalid_argument);
  CHECK(last.error().message() == "Family 'f' is the only column family in the table, so it cannot be deleted");
  CHECK(apply_ok(c, ddl_request::drop_family("t", "f", schema_origin::oceanbase_ddl)).find("t")->families.empty());
  // MIN_VERSIONS above VERSIONS is refused by the master as by a store.
  family_descriptor f = fam("f");
  f.max_versions = 1;
  f.min_versions = 2;
  REQUIRE_CODE(apply_ddl(c, ddl_request::alter("t", f)), code::invalid_argument);
}

TEST_CASE("namespaces on the cluster catalog: the store's rules, kept in the header", "[catalog]") {
  cluster_catalog c = apply_ok({}, ddl_request::create_namespace({"ns", {{"owner", "ops"}}}));
  REQUIRE_CODE(apply_ddl(c, ddl_request::create_namespace({"ns", {}})), code::already_exists);
  REQUIRE_CODE(apply_ddl(c, ddl_request::create(table("nope:t", {"f"}), schema_origin::hbase_shell)), code::not_found);
  REQUIRE_CODE(apply_ddl(c, ddl_request::create(table("hbase:t", {"f"}), schema_origin::hbase_shell)),
               code::invalid_argument);
  c = apply_ok(c, ddl_request::create(table("ns:t", {"f"}), schema_origin::hbase_shell));
  auto busy = apply_ddl(c, ddl_request::drop_namespace("ns"));
  REQUIRE_CODE(busy, code::invalid_argument);
  CHECK(busy.error().message() == "Only empty namespaces can be removed. Namespace ns has 1 tables");
  REQUIRE_CODE(apply_ddl(c, ddl_request::drop_namespace("default")), code::invalid_argument);
  c = apply_ok(c, ddl_request::alter_namespace("ns", {{"hbase.namespace.quota.maxtables", "1"}}, {"owner"}));
  CHECK(c.namespaces.at("ns") == std::map<std::string, std::string>{{"hbase.namespace.quota.maxtables", "1"}});
  REQUIRE_CODE(apply_ddl(c, ddl_request::create(table("ns:u", {"f"}), schema_origin::hbase_shell)),
               code::invalid_argument);
  auto h = decode_catalog_header(encode_catalog_header(header_of(c)));
  REQUIRE_OK(h);
  CHECK(h->namespaces == c.namespaces);
  c = apply_ok(c, ddl_request::drop("ns:t"));
  c = apply_ok(c, ddl_request::drop_namespace("ns"));
  CHECK(c.namespaces.count("ns") == 0);
  REQUIRE_CODE(apply_ddl(c, ddl_request::drop_namespace("ns")), code::not_found);
}
