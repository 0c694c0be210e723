// HBase's create/alter options through the embedded API (catalog/hbase_options.h):
// MIN_VERSIONS against the family TTL (HBase's ScanWildcardColumnTracker: the newest
// MIN_VERSIONS versions outlive the TTL, a cell TTL still removes its cell), every family
// setting and table attribute either kept or refused by name, READONLY refusing writes,
// DURABILITY against the store's own, and all of it kept across a restart.
#include "cellar/filter.h"
#include "semantics_fixture.h"
#include "support/store_fixture.h"

namespace {

family_descriptor min_fam(std::uint32_t versions, std::int64_t ttl_s, std::uint32_t min_versions) {
  family_descriptor f = fam("f", versions, ttl_s);
  f.min_versions = min_versions;
  return f;
}

using testsupport::open_store;
using testsupport::temp_dir;

}  // namespace

TEST_CASE("MIN_VERSIONS: the family TTL never removes the newest MIN_VERSIONS versions", "[hbase][min_versions]") {
  fixture fx;
  const auto T = fx.t();
  SECTION("one version kept past the TTL, the older ones not") {
    auto t = fx.make("mv", {min_fam(3, 1, 1)}, schema_origin::hbase_shell);
    put_ok(t, cellar::put("r").add("f", "q", T - 10000, "oldest"));
    // Past the TTL at once, but the newest version: visible.
    REQUIRE(get_cells(t, cellar::get("r").all_versions()) == std::vector<std::string>{cs("f:q", T - 10000, "oldest")});
    put_ok(t, cellar::put("r").add("f", "q", T - 9000, "older"));
    REQUIRE(get_cells(t, cellar::get("r").all_versions()) == std::vector<std::string>{cs("f:q", T - 9000, "older")});
    put_ok(t, cellar::put("r").add("f", "q", T, "new"));
    REQUIRE(get_cells(t, cellar::get("r").all_versions()) == std::vector<std::string>{cs("f:q", T, "new")});
    fx.advance(5000);  // every version is past the TTL now: the newest stays
    REQUIRE(get_cells(t, cellar::get("r").all_versions()) == std::vector<std::string>{cs("f:q", T, "new")});
    REQUIRE(get_cells(t, cellar::get("r")) == std::vector<std::string>{cs("f:q", T, "new")});
    // The same through a scan, a filtered read and a time range (the rank is counted over
    // every version, then the range applies).
    auto rs = scan_all(t, cellar::scan().all_versions());
    REQUIRE(rs.size() == 1);
    REQUIRE(cells_of(rs[0]) == std::vector<std::string>{cs("f:q", T, "new")});
    auto f = cellar::parse_filter("ValueFilter(!=, 'binary:zzz')");
    REQUIRE_OK(f);
    REQUIRE(get_cells(t, cellar::get("r").all_versions().filter(f.value())) ==
            std::vector<std::string>{cs("f:q", T, "new")});
    REQUIRE(get_cells(t, cellar::get("r").all_versions().range(0, T)).empty());
    // Read-modify-write sees the kept version: append reads it, checkAndMutate compares it.
    auto cam = t.check_and_mutate(
        cellar::check_and_mutate("r", "f", "q").if_equals("new").then(cellar::put("r").add("f", "m", "1")));
    REQUIRE_OK(cam);
    REQUIRE(cam.value());
    auto app = t.append(cellar::append("r").add("f", "q", "+"));
    REQUIRE_OK(app);
    REQUIRE(get_cells(t, cellar::get("r").column("f", "q")) == std::vector<std::string>{cs("f:q", fx.t(), "new+")});
    // The background reclaim keeps what reads see.
    fx.advance(5000);
    REQUIRE_OK(fx.store->compact("mv"));
    REQUIRE(fx.cells("mv") == 2);  // f:q newest, f:m
    REQUIRE(get_cells(t, cellar::get("r").all_versions()) ==
            std::vector<std::string>{cs("f:m", T + 5000, "1"), cs("f:q", T + 5000, "new+")});
  }
  SECTION("MIN_VERSIONS => 2 keeps two, within MaxVersions") {
    auto t = fx.make("mv2", {min_fam(3, 1, 2)}, schema_origin::hbase_shell);
    for (int i = 1; i <= 4; ++i) put_ok(t, cellar::put("r").add("f", "q", T + i, "v" + std::to_string(i)));
    REQUIRE(get_cells(t, cellar::get("r").all_versions()).size() == 3);  // MaxVersions
    fx.advance(10000);
    REQUIRE(get_cells(t, cellar::get("r").all_versions()) ==
            std::vector<std::string>{cs("f:q", T + 4, "v4"), cs("f:q", T + 3, "v3")});
    REQUIRE_OK(fx.store->compact("mv2"));
    REQUIRE(fx.cells("mv2") == 2);
  }
  SECTION("without MIN_VERSIONS the TTL removes every version") {
    auto t = fx.make("mv0", {min_fam(3, 1, 0)}, schema_origin::hbase_shell);
    put_ok(t, cellar::put("r").add("f", "q", T, "v"));
    fx.advance(5000);
    REQUIRE(get_cells(t, cellar::get("r").all_versions()).empty());
  }
  SECTION("a cell TTL still removes its cell, even the newest version") {
    auto t = fx.make("mvc", {min_fam(3, 1, 1)}, schema_origin::hbase_shell);
    put_ok(t, cellar::put("r").add("f", "q", T - 5000, "family-expired"));
    put_ok(t, cellar::put("c").add("f", "q", T - 5000, "cell-expired").ttl(1000));
    REQUIRE(get_cells(t, cellar::get("r").all_versions()) ==
            std::vector<std::string>{cs("f:q", T - 5000, "family-expired")});
    REQUIRE(get_cells(t, cellar::get("c").all_versions()).empty());
    put_ok(t, cellar::put("d").add("f", "q", T, "cell-ttl").ttl(1000));
    fx.advance(3000);
    REQUIRE(get_cells(t, cellar::get("d").all_versions()).empty());
  }
  SECTION("a put of one version (MaxVersions 1) past the TTL replaces the old one and stays") {
    auto t = fx.make("mv1", {min_fam(1, 1, 1)}, schema_origin::hbase_shell);
    put_ok(t, cellar::put("r").add("f", "q", T - 9000, "a"));
    put_ok(t, cellar::put("r").add("f", "q", T - 8000, "b"));
    REQUIRE(get_cells(t, cellar::get("r").all_versions()) == std::vector<std::string>{cs("f:q", T - 8000, "b")});
    REQUIRE(fx.cells("mv1") == 1);
  }
}

TEST_CASE("MIN_VERSIONS: checked as HBase checks it, and altered", "[hbase][min_versions]") {
  fixture fx;
  cellar::table_descriptor d{"bad", cellar::partition_spec::single(), {min_fam(2, 10, 3)}};
  auto s = fx.store->create_table(d, schema_origin::hbase_shell);
  REQUIRE_CODE(s, code::invalid_argument);
  CHECK(s.message().find("Min versions for column family f must be less than the Max versions") != std::string::npos);
  CHECK_FALSE(fx.store->table_exists("bad"));

  auto t = fx.make("alt", {min_fam(3, 1, 0)}, schema_origin::hbase_shell);
  const auto T = fx.t();
  put_ok(t, cellar::put("r").add("f", "q", T, "v"));
  fx.advance(5000);
  REQUIRE(get_cells(t, cellar::get("r")).empty());  // hidden, not yet reclaimed
  REQUIRE_OK(fx.store->alter_family("alt", min_fam(3, 1, 1)));
  REQUIRE(get_cells(t, cellar::get("r")) == std::vector<std::string>{cs("f:q", T, "v")});
  REQUIRE(fx.store->describe("alt")->families[0].min_versions == 1);

  family_descriptor ts = fam("s");
  ts.kind = cellar::family_kind::time_series;
  ts.min_versions = 1;
  REQUIRE_CODE(fx.store->create_table({"ts", cellar::partition_spec::single(), {ts}}, schema_origin::oceanbase_ddl),
               code::unsupported);
}

TEST_CASE("family settings: kept in their shown form, or refused by name", "[hbase][options]") {
  fixture fx;
  family_descriptor f = fam("f", 1);
  f.attributes = {{"BLOOMFILTER", "row"},           {"IN_MEMORY", "TRUE"},
                  {"BLOCKSIZE", "65536"},           {"KEEP_DELETED_CELLS", "false"},
                  {"NEW_VERSION_BEHAVIOR", "true"}, {"team", "search"}};
  REQUIRE_OK(fx.store->create_table({"kept", cellar::partition_spec::single(), {f}}, schema_origin::hbase_shell));
  const auto got = fx.store->describe("kept")->families[0].attributes;
  CHECK(got == std::map<std::string, std::string>{{"BLOCKSIZE", "65536"},
                                                  {"BLOOMFILTER", "ROW"},
                                                  {"IN_MEMORY", "true"},
                                                  {"KEEP_DELETED_CELLS", "FALSE"},
                                                  {"NEW_VERSION_BEHAVIOR", "true"},
                                                  {"team", "search"}});

  struct refusal {
    std::string name, value;
    code c;
  };
  for (const auto& r : std::vector<refusal>{{"KEEP_DELETED_CELLS", "TRUE", code::unsupported},
                                            {"KEEP_DELETED_CELLS", "ttl", code::unsupported},
                                            {"NEW_VERSION_BEHAVIOR", "false", code::unsupported},
                                            {"ENCRYPTION", "AES", code::unsupported},
                                            {"REPLICATION_SCOPE", "1", code::unsupported},
                                            {"DFS_REPLICATION", "3", code::unsupported},
                                            {"BLOOMFILTER", "SOMETIMES", code::invalid_argument},
                                            {"BLOCKSIZE", "512", code::invalid_argument},
                                            {"IN_MEMORY", "yes", code::invalid_argument},
                                            {"VERSIONS", "3", code::invalid_argument}}) {
    INFO(r.name << " => " << r.value);
    family_descriptor g = fam("g", 1);
    g.attributes[r.name] = r.value;
    auto s = fx.store->create_table({"t_" + std::to_string(r.name.size()), cellar::partition_spec::single(), {g}},
                                    schema_origin::hbase_shell);
    CHECK(s.code() == r.c);
    CHECK(s.message().find(r.name) != std::string::npos);
    // An alter is checked the same way and changes nothing.
    auto a = fx.store->alter_family("kept", g);
    CHECK(a.code() == r.c);
  }
  CHECK(fx.store->list_tables() == std::vector<std::string>{"kept"});
  CHECK(fx.store->describe("kept")->families.size() == 1);
}

TEST_CASE("READONLY => true refuses every write with TABLE_READ_ONLY; reads go on", "[hbase][options]") {
  fixture fx;
  auto t = fx.make("ro", {fam("f", 1)}, schema_origin::hbase_shell);
  put_ok(t, cellar::put("r").add("f", "q", 5, "v"));
  REQUIRE_OK(fx.store->alter_table("ro", {{"READONLY", "TRUE"}}, {}));
  CHECK(fx.store->describe("ro")->attributes.at("READONLY") == "true");
  for (cellar::batch_op op : std::vector<cellar::batch_op>{
           cellar::put("r").add("f", "q", "w"), cellar::deletion("r"), cellar::increment("r").add("f", "n", 1),
           cellar::append("r").add("f", "q", "x"),
           cellar::check_and_mutate("r", "f", "q").if_equals("v").then(cellar::put("r").add("f", "m", "1"))}) {
    auto r = t.batch({op});
    REQUIRE(r.size() == 1);
    CHECK(r[0].st.code() == code::table_read_only);
    CHECK(r[0].st.message().find("'ro' is read-only") != std::string::npos);
  }
  // A batch with a write is refused whole: the read in it is not run.
  auto mixed = t.batch({cellar::get("r"), cellar::put("r").add("f", "q", "w")});
  CHECK(mixed[0].st.code() == code::aborted);
  CHECK(mixed[1].st.code() == code::table_read_only);
  CHECK(get_cells(t, cellar::get("r")) == std::vector<std::string>{cs("f:q", 5, "v")});
  CHECK(scan_all(t, cellar::scan()).size() == 1);

  REQUIRE_OK(fx.store->alter_table("ro", {{"READONLY", "false"}}, {}));
  put_ok(t, cellar::put("r").add("f", "q", 6, "w"));
  REQUIRE_OK(fx.store->alter_table("ro", {{"READONLY", "true"}}, {}));
  CHECK(t.put(cellar::put("r").add("f", "q", "x")).code() == code::table_read_only);
  REQUIRE_OK(fx.store->alter_table("ro", {}, {"READONLY"}));
  put_ok(t, cellar::put("r").add("f", "q", 7, "x"));
  CHECK(get_cells(t, cellar::get("r")) == std::vector<std::string>{cs("f:q", 7, "x")});
}

TEST_CASE("table attributes: kept, checked, unset; unknown names are METADATA", "[hbase][options]") {
  fixture fx;
  fx.make("a", {fam("f", 1)}, schema_origin::hbase_shell);
  REQUIRE_OK(fx.store->alter_table("a",
                                   {{"MAX_FILESIZE", "134217728"},
                                    {"OWNER", "ops"},
                                    {"owner-note", "x"},
                                    {"REGION_REPLICATION", "1"},
                                    {"DURABILITY", "skip_wal"},
                                    {"SPLIT_POLICY", "org.apache.hadoop.hbase.regionserver.SteppingSplitPolicy"}},
                                   {}));
  CHECK(fx.store->describe("a")->attributes ==
        std::map<std::string, std::string>{{"DURABILITY", "SKIP_WAL"},
                                           {"MAX_FILESIZE", "134217728"},
                                           {"OWNER", "ops"},
                                           {"REGION_REPLICATION", "1"},
                                           {"SPLIT_POLICY", "org.apache.hadoop.hbase.regionserver.SteppingSplitPolicy"},
                                           {"owner-note", "x"}});
  const auto before = fx.store->describe("a").value();
  auto st = fx.store->alter_table("a", {{"REGION_REPLICATION", "3"}}, {});
  REQUIRE_CODE(st, code::unsupported);
  CHECK(st.message().find("REGION_REPLICATION is fixed when the table is created") != std::string::npos);
  REQUIRE_CODE(fx.store->alter_table("a", {{"REGION_REPLICATION", "2"}}, {}), code::invalid_argument);
  // A single node cannot hold three replicas of a partition.
  cellar::table_descriptor three{"r3", cellar::partition_spec::single(), {fam("f", 1)}};
  three.attributes["REGION_REPLICATION"] = "3";
  st = fx.store->create_table(three, schema_origin::hbase_shell);
  REQUIRE_CODE(st, code::unavailable);
  CHECK(st.message().find("needs 3 nodes of a cluster") != std::string::npos);
  CHECK(!fx.store->describe("r3").is_ok());
  // The store's durability is snapshot: a table cannot ask for a logged or synced write.
  st = fx.store->alter_table("a", {{"DURABILITY", "SYNC_WAL"}}, {});
  REQUIRE_CODE(st, code::unsupported);
  CHECK(st.message().find("DURABILITY") != std::string::npos);
  REQUIRE_CODE(fx.store->alter_table("a", {{"MAX_FILESIZE", "1024"}}, {}), code::invalid_argument);
  REQUIRE_CODE(fx.store->alter_table("a", {{"SPLIT_POLICY", "MyPolicy"}}, {}), code::invalid_argument);
  REQUIRE_CODE(fx.store->alter_table("a", {{"coprocessor$1", "x"}}, {}), code::unsupported);
  st = fx.store->alter_table("a", {}, {"MEMSTORE_FLUSHSIZE"});
  REQUIRE_CODE(st, code::invalid_argument);
  CHECK(st.message() == "Could not find attribute: MEMSTORE_FLUSHSIZE");
  // A refused change changes nothing, even its valid part.
  REQUIRE_CODE(fx.store->alter_table("a", {{"OWNER", "someone"}}, {"OWNER", "NOPE"}), code::invalid_argument);
  CHECK(fx.store->describe("a").value() == before);
  REQUIRE_CODE(fx.store->alter_table("nosuch", {{"OWNER", "x"}}, {}), code::table_not_found);

  REQUIRE_OK(fx.store->alter_table("a", {}, {"OWNER", "owner-note"}));
  CHECK(fx.store->describe("a")->attributes.count("OWNER") == 0);
  CHECK(fx.store->describe("a")->attributes.count("owner-note") == 0);
}

TEST_CASE("DURABILITY may ask for what the store's durability gives", "[hbase][options]") {
  temp_dir tmp("cellar-hbase-options-durability");
  const std::string& dir = tmp.path;
  {
    auto s = open_store(dir, cellar::durability::log);
    cellar::table_descriptor d{"t", cellar::partition_spec::single(), {fam("f", 1)}};
    d.attributes = {{"DURABILITY", "ASYNC_WAL"}};
    REQUIRE_OK(s->create_table(d, schema_origin::hbase_shell));
    REQUIRE_CODE(s->alter_table("t", {{"DURABILITY", "FSYNC_WAL"}}, {}), code::unsupported);
  }
  {
    auto s = open_store(dir, cellar::durability::log_sync);
    REQUIRE_OK(s->alter_table("t", {{"DURABILITY", "FSYNC_WAL"}}, {}));
  }
}

TEST_CASE("attributes and MIN_VERSIONS survive a restart", "[hbase][options]") {
  temp_dir tmp("cellar-hbase-options-restart");
  const std::string& dir = tmp.path;
  {
    auto s = open_store(dir);
    family_descriptor f = min_fam(3, 60, 2);
    f.attributes = {{"COMPRESSION", "snappy"}, {"k", "v"}};
    cellar::table_descriptor d{"t", cellar::partition_spec::hash(2), {f}};
    d.attributes = {{"READONLY", "true"}, {"MAX_FILESIZE", "134217728"}};
    REQUIRE_OK(s->create_table(d, schema_origin::hbase_shell));
  }
  auto s = open_store(dir);
  auto d = s->describe("t");
  REQUIRE_OK(d);
  CHECK(d->attributes == std::map<std::string, std::string>{{"MAX_FILESIZE", "134217728"}, {"READONLY", "true"}});
  CHECK(d->families[0].min_versions == 2);
  CHECK(d->families[0].attributes == std::map<std::string, std::string>{{"COMPRESSION", "SNAPPY"}, {"k", "v"}});
  auto t = s->open_table("t");
  REQUIRE_OK(t);
  CHECK(t->put(cellar::put("r").add("f", "q", "v")).code() == code::table_read_only);
  REQUIRE_OK(s->close());
}

TEST_CASE("the last family of a table cannot be deleted by HBase's alter; OceanBase's DROP TABLE can", "[hbase][ddl]") {
  fixture fx;
  auto t = fx.make("two", {fam("f", 1), fam("g", 1)}, schema_origin::hbase_shell);
  put_ok(t, cellar::put("r").add("f", "q", 1, "a").add("g", "q", 1, "b"));
  REQUIRE_OK(fx.store->drop_family("two", "g"));
  auto s = fx.store->drop_family("two", "f");
  REQUIRE_CODE(s, code::invalid_argument);
  CHECK(s.message() == "Family 'f' is the only column family in the table, so it cannot be deleted");
  CHECK(fx.store->describe("two")->families.size() == 1);
  CHECK(get_cells(t, cellar::get("r")) == std::vector<std::string>{cs("f:q", 1, "a")});
  // Unknown families are still FAMILY_NOT_FOUND, not this error.
  REQUIRE_CODE(fx.store->drop_family("two", "nope"), code::family_not_found);
  // The SQL statement drops it: the group stays, empty.
  REQUIRE_OK(fx.store->drop_family("two", "f", schema_origin::oceanbase_ddl));
  CHECK(fx.store->describe("two")->families.empty());
}
