// tests/parse/test_ddl.cc: the OceanBase DDL parser (catalog/ddl.h) against the seeds.
//
// Every SQL block of seeds 000 and 001 (verbatim in tests/seeds/, shared with the shell
// tests) is parsed, executed against
// a real store and checked through store::describe. Blocks that reuse a table name are
// alternatives, so each runs in a fresh store. Then every refusal: its code, and that the
// store's catalog is unchanged.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "catalog/ddl.h"
#include "cellar/store.h"
#include "store/ddl_apply.h"
#include "store/scheduler_tuning.h"

using namespace cellar;

namespace {

// One SQL block of the seeds, as tests/seeds/ holds it.
std::string seed_block(const std::string& file) {
  std::ifstream in(std::string(CELLAR_SEED_SQL) + "/" + file);
  if (!in) throw std::runtime_error("missing seed block " + file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Seed 000 (OBKV-HBase 数据模式, OceanBase V4.3.5): every SQL block, verbatim.
const std::string seed000_tablegroup = seed_block("seed000_01.sql");

const std::string seed000_kv_attributes = seed_block("seed000_02.sql");

const std::string seed000_normal_tables = seed_block("seed000_03.sql");

const std::string seed000_time_series = seed_block("seed000_04.sql");

const std::string seed000_lob = seed_block("seed000_05.sql");

const std::string seed000_key_partition = seed_block("seed000_06.sql");

const std::string seed000_prefix_partition = seed_block("seed000_07.sql");

const std::string seed000_range_partition = seed_block("seed000_08.sql");

const std::string seed000_user_message_prefix = seed_block("seed000_09.sql");

// Seed 001 (HBaseAPI storage model): every SQL statement, verbatim.
const std::string seed001_plain = seed_block("seed001_01.sql");

const std::string seed001_like = seed_block("seed001_02.sql");

const std::string seed001_key_partition = seed_block("seed001_03.sql");

const std::string seed001_prefix_partition = seed_block("seed001_04.sql");

const std::string seed001_range_partition = seed_block("seed001_05.sql");

std::unique_ptr<store> fresh() {
  store_options o;
  o.worker_threads = 2;
  auto s = cellar::detail::open_store(o, {.spin_polls = 0});
  REQUIRE(s.is_ok());
  return std::move(s).value();
}

void run(store& s, std::string_view sql) {
  auto st = execute_ddl(s, sql);
  INFO(st.to_string());
  REQUIRE(st.is_ok());
}

table_descriptor desc(const store& s, const std::string& table) {
  auto d = s.describe(table);
  INFO(table);
  REQUIRE(d.is_ok());
  return d.value();
}

const family_descriptor& family(const table_descriptor& d, const std::string& name) {
  auto it =
      std::find_if(d.families.begin(), d.families.end(), [&](const family_descriptor& f) { return f.name == name; });
  INFO(d.name + "$" + name);
  REQUIRE(it != d.families.end());
  return *it;
}

std::vector<std::string> family_names(const table_descriptor& d) {
  std::vector<std::string> out;
  for (const auto& f : d.families) out.push_back(f.name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> tables(const store& s) {
  auto t = s.list_tables();
  std::sort(t.begin(), t.end());
  return t;
}

// The whole catalog, to check that a refused statement changed nothing.
std::vector<table_descriptor> catalog(const store& s) {
  std::vector<table_descriptor> out;
  for (const auto& t : tables(s)) out.push_back(desc(s, t));
  return out;
}

// A normal family as the seeds declare it: V varbinary(1048576), all versions, no TTL.
family_descriptor seed_family(std::string name) {
  family_descriptor f;
  f.name = std::move(name);
  f.max_versions = 0;
  f.ttl_seconds = 0;
  f.max_value_bytes = 1048576;
  f.kind = family_kind::normal;
  return f;
}

// Runs `sql` (parse + execute) expecting `c`, and checks the catalog did not move.
void expect_refused(store& s, std::string_view sql, code c) {
  const auto before = catalog(s);
  auto st = execute_ddl(s, sql);
  INFO(std::string(sql));
  INFO(st.to_string());
  CHECK(st.code() == c);
  CHECK(!st.message().empty());
  CHECK(catalog(s) == before);
}

// A store holding table group `htable1` with family1 (KEY(K) PARTITIONS 97) and `other`
// with f (not partitioned), so "unchanged" means something.
std::unique_ptr<store> populated() {
  auto s = fresh();
  run(*s, seed000_normal_tables);
  run(*s,
      "CREATE TABLE other$f (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(100), "
      "PRIMARY KEY(K, Q, T))");
  return s;
}

// A normal table definition with the given pieces swapped in.
std::string table_sql(std::string_view name, std::string_view columns, std::string_view tail = "") {
  return "CREATE TABLE " + std::string(name) + " (" + std::string(columns) + ") " + std::string(tail);
}
constexpr std::string_view kqtv =
    "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1048576) NOT NULL, PRIMARY KEY(K, Q, T)";

}  // namespace

// ---------------------------------------------------------------------------------------
// Seed 000

TEST_CASE("seed 000: CREATE TABLEGROUP", "[ddl][seed]") {
  auto parsed = parse_ddl(seed000_tablegroup);
  REQUIRE(parsed.is_ok());
  REQUIRE(parsed->size() == 1);
  CHECK((*parsed)[0].what == ddl_statement::kind::create_table_group);
  CHECK((*parsed)[0].group == "htable1");

  auto s = fresh();
  run(*s, seed000_tablegroup);
  CHECK(tables(*s) == std::vector<std::string>{"htable1"});
  CHECK(desc(*s, "htable1").families.empty());
  // Running it again: the group exists.
  CHECK(execute_ddl(*s, seed000_tablegroup).code() == code::already_exists);
  run(*s, "CREATE TABLEGROUP IF NOT EXISTS htable1");
}

TEST_CASE("seed 000: kv_attributes alternatives, each in a fresh store", "[ddl][seed]") {
  auto parsed = parse_ddl(seed000_kv_attributes);
  REQUIRE(parsed.is_ok());
  REQUIRE(parsed->size() == 3);
  struct want {
    std::uint32_t max_versions;
    std::int64_t ttl;
  };
  const want wants[] = {{3, 3600}, {3, 0}, {0, 0}};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& st = (*parsed)[i];
    CHECK(st.what == ddl_statement::kind::create_table);
    CHECK(st.group == "t1");
    CHECK(st.family == "cf1");
    CHECK_FALSE(st.explicit_table_group);
    auto s = fresh();
    auto r = execute_ddl(*s, st);
    INFO(r.to_string());
    REQUIRE(r.is_ok());
    CHECK(tables(*s) == std::vector<std::string>{"t1"});  // group created implicitly
    auto d = desc(*s, "t1");
    CHECK(d.partitioning == partition_spec::hash(97));
    auto want_family = seed_family("cf1");
    want_family.max_versions = wants[i].max_versions;
    want_family.ttl_seconds = wants[i].ttl;
    CHECK(d.families == std::vector<family_descriptor>{want_family});
  }
  // The block as a whole: the alternatives collide on t1$cf1 after the first.
  auto s = fresh();
  CHECK(execute_ddl(*s, seed000_kv_attributes).code() == code::already_exists);
  CHECK(family(desc(*s, "t1"), "cf1").ttl_seconds == 3600);
}

TEST_CASE("seed 000: normal tables in a table group", "[ddl][seed]") {
  auto s = fresh();
  run(*s, seed000_normal_tables);
  CHECK(tables(*s) == std::vector<std::string>{"htable1"});
  auto d = desc(*s, "htable1");
  CHECK(d.partitioning == partition_spec::hash(97));
  CHECK(d.families == std::vector<family_descriptor>{seed_family("family1"), seed_family("family2")});

  // DDL families keep every version (R7, OceanBase origin).
  auto t = s->open_table("htable1").value();
  for (std::int64_t ts = 1; ts <= 5; ++ts) REQUIRE(t.put(cellar::put("r").add("family1", "q", ts, "v")).is_ok());
  auto row = t.get(cellar::get("r").all_versions());
  REQUIRE(row.is_ok());
  CHECK(row->cells.size() == 5);
}

TEST_CASE("seed 000: time-series tables", "[ddl][seed]") {
  auto parsed = parse_ddl(seed000_time_series);
  REQUIRE(parsed.is_ok());
  REQUIRE(parsed->size() == 3);
  CHECK((*parsed)[1].descriptor.kind == family_kind::time_series);

  auto s = fresh();
  run(*s, seed000_time_series);
  auto d = desc(*s, "htable1");
  CHECK(d.partitioning == partition_spec::hash(97));
  REQUIRE(family_names(d) == std::vector<std::string>{"family1", "family2"});
  for (const auto& f : d.families) {
    CHECK(f.kind == family_kind::time_series);
    CHECK(f.max_versions == 0);
    CHECK(f.ttl_seconds == 0);
    CHECK(f.max_value_bytes == default_value_bytes);
  }
}

TEST_CASE("seed 000: longblob family needs its table group first", "[ddl][seed]") {
  auto s = fresh();
  // TABLEGROUP = htable1 names a group that does not exist: refused as in OceanBase.
  expect_refused(*s, seed000_lob, code::table_not_found);
  CHECK(tables(*s).empty());

  run(*s, seed000_tablegroup);
  run(*s, seed000_lob);
  auto d = desc(*s, "htable1");
  CHECK(d.partitioning == partition_spec::hash(97));
  auto f = seed_family("family1");
  f.max_value_bytes = longblob_value_bytes;
  CHECK(d.families == std::vector<family_descriptor>{f});
}

TEST_CASE("seed 000: partitioning blocks", "[ddl][seed]") {
  struct block {
    std::string_view sql;
    partition_spec want;
  };
  const block blocks[] = {
      {seed000_key_partition, partition_spec::hash(97)},
      {seed000_prefix_partition, partition_spec::hash_prefix(97, 4)},
      {seed000_range_partition, partition_spec::range_bounds({"a", "w"})},
      {seed000_user_message_prefix, partition_spec::hash_prefix(97, 64)},
  };
  for (const auto& b : blocks) {
    INFO(std::string(b.sql));
    auto s = fresh();
    run(*s, seed000_tablegroup);
    run(*s, b.sql);
    auto d = desc(*s, "htable1");
    CHECK(d.partitioning == b.want);
    CHECK(d.families == std::vector<family_descriptor>{seed_family("family1")});
    auto parsed = parse_ddl(b.sql);
    REQUIRE(parsed.is_ok());
    CHECK((*parsed)[0].explicit_table_group);
  }
}

TEST_CASE("seed 000: range partitions route rows by their bounds", "[ddl][seed]") {
  auto s = fresh();
  run(*s, seed000_tablegroup);
  run(*s, seed000_range_partition);
  auto t = s->open_table("htable1").value();
  for (std::string row : {"A", "apple", "zebra", "m"})
    REQUIRE(t.put(cellar::put(row).add("family1", "q", "v")).is_ok());
  auto st = s->stats("htable1");
  REQUIRE(st.is_ok());
  // 'A' < 'a' | 'a' <= apple, m < 'w' | zebra
  CHECK(st->cells_per_partition == std::vector<std::uint64_t>{1, 2, 1});
}

// ---------------------------------------------------------------------------------------
// Seed 001

TEST_CASE("seed 001: the plain table and CREATE TABLE LIKE", "[ddl][seed]") {
  auto s = fresh();
  run(*s, seed001_plain);
  auto d1 = desc(*s, "htable1");
  CHECK(d1.partitioning == partition_spec::single());
  CHECK(d1.families == std::vector<family_descriptor>{seed_family("family1")});

  run(*s, seed001_like);
  CHECK(tables(*s) == std::vector<std::string>{"htable1", "htable2"});
  auto d2 = desc(*s, "htable2");
  CHECK(d2.partitioning == partition_spec::single());
  CHECK(d2.families == std::vector<family_descriptor>{seed_family("family2")});

  auto parsed = parse_ddl(seed001_like);
  REQUIRE(parsed.is_ok());
  REQUIRE(parsed->size() == 1);
  CHECK((*parsed)[0].what == ddl_statement::kind::create_table_like);
  CHECK((*parsed)[0].source_group == "htable1");
  CHECK((*parsed)[0].source_family == "family1");
}

TEST_CASE("seed 001: partitioning alternatives, each in a fresh store", "[ddl][seed]") {
  struct block {
    std::string_view sql;
    partition_spec want;
  };
  const block blocks[] = {
      {seed001_key_partition, partition_spec::hash(97)},
      {seed001_prefix_partition, partition_spec::hash_prefix(97, 4)},
      {seed001_range_partition, partition_spec::range_bounds({"a", "w"})},
  };
  for (const auto& b : blocks) {
    INFO(std::string(b.sql));
    auto s = fresh();
    run(*s, b.sql);  // no TABLEGROUP clause: the group is created implicitly
    CHECK(tables(*s) == std::vector<std::string>{"htable1"});
    auto d = desc(*s, "htable1");
    CHECK(d.partitioning == b.want);
    CHECK(d.families == std::vector<family_descriptor>{seed_family("family1")});
  }
}

TEST_CASE("CREATE TABLE LIKE copies kv_attributes, V size and partitioning", "[ddl]") {
  auto s = fresh();
  run(*s,
      "CREATE TABLE src$f (K varbinary(1024), Q varbinary(256), T bigint, V longblob, PRIMARY KEY(K, Q, T)) "
      "kv_attributes = '{\"HBase\": {\"TimeToLive\": 60, \"MaxVersions\": 2}}' "
      "PARTITION BY KEY(K) PARTITIONS 7;"
      "CREATE TABLE `dst$g` LIKE `src$f`;"
      "CREATE TABLE src$h LIKE src$f;"
      "CREATE TABLE IF NOT EXISTS src$h LIKE src$f;");
  auto d = desc(*s, "dst");
  CHECK(d.partitioning == partition_spec::hash(7));
  REQUIRE(d.families.size() == 1);
  CHECK(d.families[0].name == "g");
  CHECK(d.families[0].max_versions == 2);
  CHECK(d.families[0].ttl_seconds == 60);
  CHECK(d.families[0].max_value_bytes == longblob_value_bytes);
  CHECK(family_names(desc(*s, "src")) == std::vector<std::string>{"f", "h"});

  expect_refused(*s, "CREATE TABLE x$y LIKE nosuch$f", code::table_not_found);
  expect_refused(*s, "CREATE TABLE x$y LIKE src$nosuch", code::family_not_found);
  expect_refused(*s, "CREATE TABLE src$h LIKE src$f", code::already_exists);
  // A template whose partitioning differs from the target group's.
  run(*s, "CREATE TABLE single$f (" + std::string(kqtv) + ")");
  expect_refused(*s, "CREATE TABLE single$g LIKE src$f", code::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Syntax

TEST_CASE("comments, case, backquotes and separators", "[ddl]") {
  auto parsed = parse_ddl(
      "/* a script */ create tablegroup `g1` ;\n"
      "-- a comment line\n"
      "# a MySQL hash comment\n"
      "Create Table If Not Exists `g1$f1` (\n"
      "  `k` VarBinary(1024) not null, q varbinary(256) /* inline */, t BIGINT(20), v varbinary(64),\n"
      "  primary key (`k`, q, T)\n"
      ") TableGroup = 'g1', KV_ATTRIBUTES '{\"hbase\": {\"maxversions\": 1, \"TIMETOLIVE\": 5}}'"
      " DEFAULT CHARSET = utf8mb4 COMMENT 'x'\n"
      "partition by key(k) partitions 3;;;\n"
      "drop table if exists g1$f1, g1$f2 ;\n"
      "DROP TABLEGROUP IF EXISTS g1");
  INFO(parsed.error().to_string());
  REQUIRE(parsed.is_ok());
  REQUIRE(parsed->size() == 5);
  const auto& c = (*parsed)[1];
  CHECK(c.what == ddl_statement::kind::create_table);
  CHECK(c.if_not_exists);
  CHECK(c.explicit_table_group);
  CHECK(c.group == "g1");
  CHECK(c.family == "f1");
  CHECK(c.descriptor.max_versions == 1);
  CHECK(c.descriptor.ttl_seconds == 5);
  CHECK(c.descriptor.max_value_bytes == 64);
  CHECK(c.partitioning == partition_spec::hash(3));
  CHECK((*parsed)[2].what == ddl_statement::kind::drop_table);
  CHECK((*parsed)[2].family == "f1");
  CHECK((*parsed)[3].family == "f2");
  CHECK((*parsed)[3].if_exists);
  CHECK((*parsed)[4].what == ddl_statement::kind::drop_table_group);

  CHECK(parse_ddl("").value().empty());
  CHECK(parse_ddl("  -- nothing\n ; /* */ ;").value().empty());
}

TEST_CASE("range bounds: hex literals, (MAXVALUE), byte order", "[ddl]") {
  auto parsed =
      parse_ddl(table_sql("g$f", kqtv,
                          "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN (X'00FF'),"
                          " PARTITION p1 VALUES LESS THAN ('a\\'b'), PARTITION p2 VALUES LESS THAN ('a''c'),"
                          " PARTITION p3 VALUES LESS THAN (0x7F), PARTITION p4 VALUES LESS THAN (MAXVALUE))"));
  INFO(parsed.error().to_string());
  REQUIRE(parsed.is_ok());
  CHECK((*parsed)[0].partitioning == partition_spec::range_bounds({std::string("\x00\xFF", 2), "a'b", "a'c", "\x7F"}));
  // Unsigned byte order: 0x80 sorts after 0x7F.
  auto hi = parse_ddl(table_sql("g$f", kqtv,
                                "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN (0x7F),"
                                " PARTITION p1 VALUES LESS THAN (0x80), PARTITION p2 VALUES LESS THAN MAXVALUE)"));
  REQUIRE(hi.is_ok());
  CHECK((*hi)[0].partitioning.bounds == std::vector<std::string>{"\x7F", "\x80"});
  // A single MAXVALUE partition.
  auto one =
      parse_ddl(table_sql("g$f", kqtv, "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN MAXVALUE)"));
  REQUIRE(one.is_ok());
  CHECK((*one)[0].partitioning == partition_spec::range_bounds({}));
}

TEST_CASE("DROP TABLE, DROP TABLEGROUP and IF [NOT] EXISTS", "[ddl]") {
  auto s = populated();
  run(*s, "DROP TABLE htable1$family2");
  CHECK(family_names(desc(*s, "htable1")) == std::vector<std::string>{"family1"});
  // The group keeps its partitioning for the next family.
  CHECK(desc(*s, "htable1").partitioning == partition_spec::hash(97));
  expect_refused(*s, "DROP TABLE htable1$family2", code::family_not_found);
  expect_refused(*s, "DROP TABLE nosuch$family2", code::table_not_found);
  expect_refused(*s, "DROP TABLEGROUP nosuch", code::table_not_found);
  expect_refused(*s, "DROP TABLE htable1", code::invalid_argument);  // not group$family
  run(*s, "DROP TABLE IF EXISTS htable1$family2; DROP TABLE IF EXISTS nosuch$x; DROP TABLEGROUP IF EXISTS nosuch");
  run(*s, "CREATE TABLE IF NOT EXISTS htable1$family1 (" + std::string(kqtv) +
              ") TABLEGROUP = htable1 "
              "PARTITION BY KEY(K) PARTITIONS 97");
  expect_refused(*s, "CREATE TABLE htable1$family1 (" + std::string(kqtv) + ") PARTITION BY KEY(K) PARTITIONS 97",
                 code::already_exists);
  run(*s, "DROP TABLEGROUP htable1");
  CHECK(tables(*s) == std::vector<std::string>{"other"});
}

TEST_CASE("a script stops at the first failing statement; a syntax error runs nothing", "[ddl]") {
  auto s = fresh();
  const auto before = catalog(*s);
  CHECK(execute_ddl(*s, "CREATE TABLEGROUP a; CREATE TABLEGROUP b; CREATE TABLEGROUP (").code() ==
        code::invalid_argument);
  CHECK(catalog(*s) == before);
  auto st = execute_ddl(*s, "CREATE TABLEGROUP a; CREATE TABLEGROUP a; CREATE TABLEGROUP b");
  CHECK(st.code() == code::already_exists);
  CHECK(st.message().find("CREATE TABLEGROUP a") != std::string::npos);
  CHECK(tables(*s) == std::vector<std::string>{"a"});
}

TEST_CASE("describe_ddl", "[ddl]") {
  auto one = [](std::string_view sql) {
    auto p = parse_ddl(sql);
    INFO(p.error().to_string());
    REQUIRE(p.is_ok());
    REQUIRE(p->size() >= 1);
    return describe_ddl(p->back());
  };
  CHECK(one(seed000_tablegroup) == "CREATE TABLEGROUP htable1");
  CHECK(one(seed000_normal_tables) ==
        "CREATE TABLE htable1$family2: normal family, V varbinary(1048576), MaxVersions all, TimeToLive none, "
        "KEY(K) PARTITIONS 97, TABLEGROUP htable1");
  CHECK(one(seed000_kv_attributes.substr(0, seed000_kv_attributes.find(';') + 1)) ==
        "CREATE TABLE t1$cf1: normal family, V varbinary(1048576), MaxVersions 3, TimeToLive 3600s, "
        "KEY(K) PARTITIONS 97");
  CHECK(one(seed000_time_series) ==
        "CREATE TABLE htable1$family2: time-series family, MaxVersions all, TimeToLive none, KEY(K) PARTITIONS 97");
  CHECK(one(seed000_lob).find("V longblob") != std::string::npos);
  CHECK(one(seed000_prefix_partition).find("KEY(substring(K, 1, 4)) PARTITIONS 97") != std::string::npos);
  CHECK(one(seed000_range_partition).find("RANGE COLUMNS(K) LESS THAN ('a', 'w', MAXVALUE)") != std::string::npos);
  CHECK(one(seed001_like) == "CREATE TABLE htable2$family2 LIKE htable1$family1");
  CHECK(one(table_sql("g$f", kqtv,
                      "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN (X'00FF'), "
                      "PARTITION p1 VALUES LESS THAN ('it''s'), PARTITION p2 VALUES LESS THAN MAXVALUE)"))
            .find("RANGE COLUMNS(K) LESS THAN (X'00FF', X'69742773', MAXVALUE)") != std::string::npos);
  CHECK(one("drop table if exists a$b") == "DROP TABLE IF EXISTS a$b");
  CHECK(one("drop tablegroup a") == "DROP TABLEGROUP a");
}

// ---------------------------------------------------------------------------------------
// Refusals: each leaves the store unchanged.

TEST_CASE("refused: renamed, missing and extra columns", "[ddl][refuse]") {
  auto s = populated();
  const auto inv = code::invalid_argument;
  // Renamed K, Q, T or V.
  expect_refused(*s,
                 table_sql("n$f",
                           "ROWKEY varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), "
                           "PRIMARY KEY(ROWKEY, Q, T)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), QUAL varbinary(256), T bigint, V varbinary(10), "
                           "PRIMARY KEY(K, QUAL, T)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(256), TS bigint, V varbinary(10), "
                           "PRIMARY KEY(K, Q, TS)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(256), T bigint, VAL varbinary(10), "
                           "PRIMARY KEY(K, Q, T)"),
                 inv);
  // Missing V.
  expect_refused(*s, table_sql("n$f", "K varbinary(1024), Q varbinary(256), T bigint, PRIMARY KEY(K, Q, T)"), inv);
  // Extra plain column; two prefix columns.
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), X bigint, "
                           "PRIMARY KEY(K, Q, T)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), "
                           "P1 varbinary(4) GENERATED ALWAYS AS (substring(K, 1, 4)), "
                           "P2 varbinary(8) GENERATED ALWAYS AS (substring(K, 1, 8)), "
                           "PRIMARY KEY(K, Q, T)",
                           "PARTITION BY KEY(P1) PARTITIONS 3"),
                 inv);
  // A prefix column that is not the partition key.
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), "
                           "P1 varbinary(4) GENERATED ALWAYS AS (substring(K, 1, 4)), PRIMARY KEY(K, Q, T)",
                           "PARTITION BY KEY(K) PARTITIONS 3"),
                 inv);
  // Duplicate column.
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), k varbinary(1024), Q varbinary(256), T bigint, "
                           "V varbinary(10), PRIMARY KEY(K, Q, T)"),
                 inv);
  // Wrong types and sizes.
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(2048), Q varbinary(256), T bigint, V varbinary(10), "
                           "PRIMARY KEY(K, Q, T)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(257), T bigint, V varbinary(10), "
                           "PRIMARY KEY(K, Q, T)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(256), T int, V varbinary(10), "
                           "PRIMARY KEY(K, Q, T)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1048577), "
                           "PRIMARY KEY(K, Q, T)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varbinary(1024), Q varbinary(256), T bigint, V varchar(10), "
                           "PRIMARY KEY(K, Q, T)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f",
                           "K varchar(1024), Q varbinary(256), T bigint, V varbinary(10), "
                           "PRIMARY KEY(K, Q, T)"),
                 inv);
  // Not named group$family.
  expect_refused(*s, table_sql("plain", kqtv), inv);
  expect_refused(*s, table_sql("a$b$c", kqtv), inv);
  expect_refused(*s, table_sql("$b", kqtv), inv);
}

TEST_CASE("refused: primary keys other than (K, Q, T)", "[ddl][refuse]") {
  auto s = populated();
  const auto inv = code::invalid_argument;
  const std::string cols = "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), ";
  expect_refused(*s, table_sql("n$f", cols + "PRIMARY KEY(K, T, Q)"), inv);
  expect_refused(*s, table_sql("n$f", cols + "PRIMARY KEY(K, Q)"), inv);
  expect_refused(*s, table_sql("n$f", cols + "PRIMARY KEY(K, Q, T, V)"), inv);
  expect_refused(*s, table_sql("n$f", "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10)"), inv);
  expect_refused(*s, table_sql("n$f", cols + "PRIMARY KEY(K, Q, T), PRIMARY KEY(K, Q, T)"), inv);
  expect_refused(*s, table_sql("n$f", "K varbinary(1024) PRIMARY KEY, Q varbinary(256), T bigint, V varbinary(10)"),
                 inv);
  // Secondary indexes: valid MySQL, not in OBKV-HBase.
  expect_refused(*s, table_sql("n$f", cols + "PRIMARY KEY(K, Q, T), KEY idx_q (Q)"), code::unsupported);
}

TEST_CASE("refused: bad kv_attributes", "[ddl][refuse]") {
  auto s = populated();
  const std::string bad[] = {
      R"({"HBase": {"TimeToLive": 0}})",
      R"({"HBase": {"MaxVersions": -1}})",
      R"({"HBase": {"MaxVersions": 1.5}})",
      R"({"HBase": {"MaxVersions": "3"}})",
      R"({"HBase": {"MaxVersions": 99999999999}})",
      R"({"HBase": {"TimeToLive": 99999999999999999999}})",
      R"({"HBase": {"TTL": 5}})",
      R"({"HBase": {"MaxVersions": 3, "maxversions": 4}})",
      R"({"HBase": {"MaxVersions": 3}, "Redis": {}})",
      R"({"Redis": {}})",
      R"({"HBase": 3})",
      R"({"HBase": []})",
      R"({"HBase": {}})"
      " x",
      R"([])",
      R"(not json)",
      R"({"HBase": {"MaxVersions": 3,}})",
      R"({"HBase": {"MaxVersions": null}})",
      R"()",
  };
  for (const auto& json : bad)
    expect_refused(*s, table_sql("n$f", kqtv, "kv_attributes = '" + json + "'"), code::invalid_argument);
  // Not a string at all, and given twice.
  expect_refused(*s, table_sql("n$f", kqtv, "kv_attributes = 3"), code::invalid_argument);
  expect_refused(*s, table_sql("n$f", kqtv, R"(kv_attributes = '{"HBase": {}}' kv_attributes = '{"HBase": {}}')"),
                 code::invalid_argument);

  // Names are case-insensitive; whitespace and escapes are JSON's.
  auto p =
      parse_ddl(table_sql("n$f", kqtv, R"(kv_attributes='{ "hbase" : { "timetolive" : 86400 , "MAXVERSIONS":7 } }')"));
  INFO(p.error().to_string());
  REQUIRE(p.is_ok());
  CHECK((*p)[0].descriptor.ttl_seconds == 86400);
  CHECK((*p)[0].descriptor.max_versions == 7);
  // A JSON escape goes through the SQL string as \\u (MySQL drops the backslash of \u).
  auto esc = parse_ddl(table_sql("n$f", kqtv, R"(kv_attributes='{"\\u0048Base": {"Max\\u0056ersions": 2}}')"));
  INFO(esc.error().to_string());
  REQUIRE(esc.is_ok());
  CHECK((*esc)[0].descriptor.max_versions == 2);
}

TEST_CASE("refused: partitioning", "[ddl][refuse]") {
  auto s = populated();
  const auto inv = code::invalid_argument;
  const auto uns = code::unsupported;
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY KEY(K) PARTITIONS 0"), inv);
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY KEY(K) PARTITIONS 100000"), inv);
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY KEY(Q) PARTITIONS 3"), inv);
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY KEY(K, Q) PARTITIONS 3"), uns);
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY HASH(K) PARTITIONS 3"), uns);
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY LIST COLUMNS(K) (PARTITION p0 VALUES IN ('a'))"), uns);
  // Two-level partitioning.
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY KEY(K) PARTITIONS 3 SUBPARTITION BY KEY(K) SUBPARTITIONS 2"),
                 uns);
  expect_refused(*s,
                 table_sql("n$f", kqtv,
                           "PARTITION BY RANGE COLUMNS(K) SUBPARTITION BY KEY(K) SUBPARTITIONS 2 "
                           "(PARTITION p0 VALUES LESS THAN MAXVALUE)"),
                 uns);
  expect_refused(*s,
                 table_sql("n$f", kqtv,
                           "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN ('m') "
                           "(SUBPARTITION s0, SUBPARTITION s1), PARTITION p1 VALUES LESS THAN MAXVALUE)"),
                 uns);
  // Range bounds.
  expect_refused(*s,
                 table_sql("n$f", kqtv,
                           "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN ('w'), "
                           "PARTITION p1 VALUES LESS THAN ('a'), PARTITION p2 VALUES LESS THAN MAXVALUE)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f", kqtv,
                           "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN ('a'), "
                           "PARTITION p1 VALUES LESS THAN ('a'), PARTITION p2 VALUES LESS THAN MAXVALUE)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f", kqtv,
                           "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN ('a'), "
                           "PARTITION p1 VALUES LESS THAN ('w'))"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f", kqtv,
                           "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN MAXVALUE, "
                           "PARTITION p1 VALUES LESS THAN ('w'))"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f", kqtv,
                           "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN (''), "
                           "PARTITION p1 VALUES LESS THAN MAXVALUE)"),
                 inv);
  expect_refused(*s,
                 table_sql("n$f", kqtv,
                           "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN ('a'), "
                           "PARTITION P0 VALUES LESS THAN MAXVALUE)"),
                 inv);
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY RANGE(K) (PARTITION p0 VALUES LESS THAN MAXVALUE)"), inv);
  expect_refused(*s, table_sql("n$f", kqtv, "PARTITION BY RANGE COLUMNS(Q) (PARTITION p0 VALUES LESS THAN MAXVALUE)"),
                 inv);
  // A family whose partitioning differs from its group's (the store's rule).
  expect_refused(*s, table_sql("htable1$family3", kqtv, "TABLEGROUP = htable1 PARTITION BY KEY(K) PARTITIONS 7"), inv);
  expect_refused(*s, table_sql("htable1$family3", kqtv), inv);
  // The same rule is accepted.
  run(*s, table_sql("htable1$family3", kqtv, "PARTITION BY KEY(K) PARTITIONS 97"));
}

TEST_CASE("refused: generated columns", "[ddl][refuse]") {
  auto s = populated();
  const std::string cols = "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), ";
  expect_refused(*s,
                 table_sql("n$f", cols + "H bigint GENERATED ALWAYS AS (crc32(K)), PRIMARY KEY(K, Q, T)",
                           "PARTITION BY KEY(H) PARTITIONS 3"),
                 code::unsupported);
  expect_refused(*s,
                 table_sql("n$f",
                           cols + "P varbinary(4) GENERATED ALWAYS AS (substring(K, 2, 4)), "
                                  "PRIMARY KEY(K, Q, T)",
                           "PARTITION BY KEY(P) PARTITIONS 3"),
                 code::unsupported);
  expect_refused(*s,
                 table_sql("n$f",
                           cols + "P varbinary(4) GENERATED ALWAYS AS (substring(Q, 1, 4)), "
                                  "PRIMARY KEY(K, Q, T)",
                           "PARTITION BY KEY(P) PARTITIONS 3"),
                 code::unsupported);
  expect_refused(*s,
                 table_sql("n$f", cols + "P varbinary(4) AS (concat(K, 'x')) VIRTUAL, PRIMARY KEY(K, Q, T)",
                           "PARTITION BY KEY(P) PARTITIONS 3"),
                 code::unsupported);
  expect_refused(*s,
                 table_sql("n$f",
                           cols + "P varbinary(4) GENERATED ALWAYS AS (substring(K, 1, 0)), "
                                  "PRIMARY KEY(K, Q, T)",
                           "PARTITION BY KEY(P) PARTITIONS 3"),
                 code::invalid_argument);
  // substr and the short AS form are the same thing.
  auto p = parse_ddl(table_sql("n$f", cols + "P varbinary(8) AS (substr(K,1,8)) STORED, PRIMARY KEY(K, Q, T)",
                               "PARTITION BY KEY(P) PARTITIONS 5"));
  INFO(p.error().to_string());
  REQUIRE(p.is_ok());
  CHECK((*p)[0].partitioning == partition_spec::hash_prefix(5, 8));
}

TEST_CASE("refused: time-series tables outside the model", "[ddl][refuse]") {
  auto s = populated();
  const std::string ts =
      "K varbinary(1024) NOT NULL, T bigint NOT NULL, S bigint NOT NULL, V json NOT NULL, "
      "G bigint GENERATED ALWAYS AS (ABS(T)), ";
  run(*s, table_sql("ts$a", ts + "PRIMARY KEY(K, T, S)"));
  CHECK(family(desc(*s, "ts"), "a").kind == family_kind::time_series);
  expect_refused(*s, table_sql("ts2$a", ts + "PRIMARY KEY(K, T, S)", "PARTITION BY KEY(G) PARTITIONS 3"),
                 code::unsupported);
  expect_refused(*s,
                 table_sql("ts2$a", ts + "PRIMARY KEY(K, T, S)",
                           "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN MAXVALUE)"),
                 code::unsupported);
  expect_refused(*s, table_sql("ts2$a", ts + "PRIMARY KEY(K, S, T)"), code::invalid_argument);
  expect_refused(*s, table_sql("ts2$a", "K varbinary(1024), T bigint, S bigint, V json, PRIMARY KEY(K, T, S)"),
                 code::invalid_argument);  // no G
  expect_refused(*s,
                 table_sql("ts2$a",
                           "K varbinary(1024), T bigint, S bigint, V json, G bigint, "
                           "PRIMARY KEY(K, T, S)"),
                 code::invalid_argument);  // G not generated
  expect_refused(*s,
                 table_sql("ts2$a",
                           "K varbinary(1024), T bigint, S bigint, V varbinary(10), "
                           "G bigint GENERATED ALWAYS AS (ABS(T)), PRIMARY KEY(K, T, S)"),
                 code::invalid_argument);  // V not json
  expect_refused(*s, table_sql("ts2$a", ts + "Q varbinary(256), PRIMARY KEY(K, T, S)"), code::invalid_argument);
}

TEST_CASE("refused: TABLEGROUP clause and table groups", "[ddl][refuse]") {
  auto s = populated();
  // TABLEGROUP must name the group part of group$family.
  expect_refused(*s, table_sql("htable1$family3", kqtv, "TABLEGROUP = other PARTITION BY KEY(K) PARTITIONS 97"),
                 code::invalid_argument);
  // TABLEGROUP = g needs CREATE TABLEGROUP g first.
  expect_refused(*s, table_sql("newgroup$f", kqtv, "TABLEGROUP = newgroup"), code::table_not_found);
  // An implicitly created group is removed again when its first family is refused by the
  // store (here: a family name check_name refuses).
  expect_refused(*s, table_sql("`newgroup$bad name`", kqtv), code::invalid_argument);
  CHECK_FALSE(s->table_exists("newgroup"));
  expect_refused(*s, "CREATE TABLEGROUP `bad name`", code::invalid_argument);
  expect_refused(*s, "CREATE TABLEGROUP htable1", code::already_exists);
  expect_refused(*s, "CREATE TABLEGROUP a$b", code::invalid_argument);
}

TEST_CASE("refused: syntax errors name the line and column", "[ddl][refuse]") {
  auto s = populated();
  auto p = parse_ddl("CREATE TABLE n$f (\n  K varbinary(1024),\n  Q varbinary(256) T bigint)");
  REQUIRE_FALSE(p.is_ok());
  CHECK(p.code() == code::invalid_argument);
  CHECK(p.error().message().find("line 3, column 20") != std::string::npos);

  const std::string_view bad[] = {
      "CREATE TABLE n$f (K varbinary(1024)",
      "CREATE TABLE n$f K varbinary(1024)",
      "CREATE TABLEGROUP",
      "CREATE TABLEGROUP g h",
      "CRATE TABLEGROUP g",
      "CREATE TABLEGROUP 'g",
      "CREATE TABLEGROUP g /* unterminated",
      "CREATE TABLEGROUP `g",
      "CREATE TABLEGROUP g; CREATE TABLEGROUP h CREATE TABLEGROUP i",
      "CREATE TABLEGROUP g --comment without a space is not a comment",
      "DROP TABLE IF g$f",
      "CREATE TABLE n$f ("
      "K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), PRIMARY KEY(K, Q, T)"
      ") PARTITION BY KEY(K) PARTITIONS 3 extra",
      "CREATE TABLE n$f (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), PRIMARY KEY(K, Q, T)) @",
  };
  for (auto sql : bad) expect_refused(*s, sql, code::invalid_argument);
  // A database-qualified name reads as the namespace's table; its model is checked the same.
  expect_refused(*s, "CREATE TABLE test.n$f (K varbinary(1024))", code::invalid_argument);

  const std::string_view unsupported_sql[] = {
      "ALTER TABLEGROUP htable1 SHARDING = 'NONE'",
      "CREATE VIEW v AS SELECT 1",
      "CREATE INDEX i ON htable1$family1 (Q)",
      "DROP INDEX i ON htable1$family1",
      "SELECT 1",
      "CREATE TABLE n$f (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(10), PRIMARY KEY(K, Q, T)) "
      "REPLICA_NUM = 3",
  };
  for (auto sql : unsupported_sql) expect_refused(*s, sql, code::unsupported);
}

TEST_CASE("statements cellar does not run are UNSUPPORTED by name, not by position", "[ddl][refuse]") {
  auto s = populated();
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"SELECT * FROM htable1$family1", "SELECT is not supported"},
      {"select 1", "SELECT is not supported"},
      {"INSERT INTO htable1$family1 VALUES ('k', 'q', 1, 'v')", "INSERT is not supported"},
      {"DELETE FROM htable1$family1", "DELETE is not supported"},
      {"RENAME TABLE a TO b", "RENAME is not supported"},
      {"CREATE INDEX i ON htable1$family1 (Q)", "CREATE INDEX is not supported"},
      {"CREATE VIEW v AS SELECT 1", "CREATE VIEW is not supported"},
      {"DROP INDEX i ON htable1$family1", "DROP INDEX is not supported"},
      {"ALTER TABLEGROUP htable1 SHARDING = 'NONE'", "ALTER TABLEGROUP is not supported"},
      {"ALTER TABLE htable1$family1 ADD COLUMN x int", "ALTER TABLE ... ADD is not supported"},
      {"SHOW GRANTS", "SHOW GRANTS is not supported"},
      {"SHOW CREATE TABLE htable1$family1", "SHOW CREATE is not supported"},
  };
  for (const auto& [sql, said] : cases) {
    INFO(sql);
    auto p = parse_ddl(sql);
    REQUIRE_FALSE(p.is_ok());
    CHECK(p.code() == code::unsupported);
    CHECK(p.error().message().rfind(std::string(said), 0) == 0);
    CHECK(p.error().message().find("line ") == std::string::npos);
    expect_refused(*s, sql, code::unsupported);
  }
}

TEST_CASE("SHOW, DESC, TRUNCATE TABLE and ALTER TABLE kv_attributes parse", "[ddl]") {
  auto one = [](std::string_view sql) {
    auto p = parse_ddl(sql);
    INFO(sql << ": " << p.error().to_string());
    REQUIRE(p.is_ok());
    REQUIRE(p->size() == 1);
    return p->front();
  };
  using k = ddl_statement::kind;
  CHECK(one("SHOW TABLEGROUPS").what == k::show_table_groups);
  CHECK(one("show tablegroups like 'h%'").pattern == std::optional<std::string>("h%"));
  CHECK(one("SHOW TABLES;").what == k::show_tables);
  CHECK_FALSE(one("SHOW TABLES").pattern);
  auto d = one("DESC `htable1$family1`");
  CHECK(d.what == k::describe_table);
  CHECK(d.group == "htable1");
  CHECK(d.family == "family1");
  CHECK(one("describe htable1$family1").what == k::describe_table);
  auto t = one("TRUNCATE TABLE htable1$family1");
  CHECK(t.what == k::truncate_table);
  CHECK(t.family == "family1");
  CHECK(one("truncate htable1$family1").what == k::truncate_table);
  auto a = one(R"(ALTER TABLE htable1$family1 kv_attributes = '{"HBase": {"TimeToLive": 60}}')");
  CHECK(a.what == k::alter_table);
  CHECK(a.descriptor.ttl_seconds == 60);
  CHECK(a.descriptor.max_versions == 0);  // left out: all versions
  CHECK(
      one(R"(alter table htable1$family1 set KV_ATTRIBUTES '{"hbase": {"maxversions": 2}}')").descriptor.max_versions ==
      2);
  CHECK(describe_ddl(a) == "ALTER TABLE htable1$family1: MaxVersions all, TimeToLive 60s");

  auto bad = parse_ddl(R"(ALTER TABLE htable1$family1 kv_attributes = '{"HBase": {"Bogus": 1}}')");
  CHECK(bad.code() == code::invalid_argument);
  CHECK(parse_ddl("DESC htable1").code() == code::invalid_argument);  // not group$family
  CHECK(parse_ddl("SHOW TABLES FROM test").code() == code::unsupported);
  CHECK(parse_ddl("SHOW TABLES LIKE").code() == code::invalid_argument);
}

TEST_CASE("TRUNCATE TABLE empties one family; ALTER TABLE replaces TTL and MaxVersions", "[ddl]") {
  auto s = fresh();
  run(*s, seed000_normal_tables);
  auto t = s->open_table("htable1").value();
  REQUIRE(t.put(put("r").add("family1", "q", 1, "a").add("family2", "q", 1, "b")).is_ok());
  run(*s, "TRUNCATE TABLE htable1$family1");
  auto row = t.get(get("r")).value();
  REQUIRE(row.cells.size() == 1);
  CHECK(row.cells[0].family == "family2");
  CHECK(desc(*s, "htable1").families == std::vector<family_descriptor>{seed_family("family1"), seed_family("family2")});
  REQUIRE(t.put(put("r").add("family1", "q", 2, "c")).is_ok());  // the emptied family still takes writes
  CHECK(t.get(get("r")).value().cells.size() == 2);

  run(*s, R"(ALTER TABLE htable1$family2 kv_attributes = '{"HBase": {"TimeToLive": 3600, "MaxVersions": 2}}')");
  CHECK(family(desc(*s, "htable1"), "family2").ttl_seconds == 3600);
  CHECK(family(desc(*s, "htable1"), "family2").max_versions == 2);
  run(*s, R"(ALTER TABLE htable1$family2 kv_attributes = '{"HBase": {}}')");
  CHECK(family(desc(*s, "htable1"), "family2") == seed_family("family2"));

  // SHOW and DESC change nothing; DESC names what is missing.
  run(*s, "SHOW TABLEGROUPS; SHOW TABLES; DESC htable1$family1");
  expect_refused(*s, "DESC htable1$nosuch", code::family_not_found);
  expect_refused(*s, "DESC nosuch$f", code::table_not_found);
  expect_refused(*s, "TRUNCATE TABLE htable1$nosuch", code::family_not_found);
  expect_refused(*s, R"(ALTER TABLE nosuch$f kv_attributes = '{"HBase": {}}')", code::table_not_found);
}

TEST_CASE("like_match: SQL LIKE patterns", "[ddl]") {
  CHECK(like_match("h%", "htable1"));
  CHECK(like_match("%1", "htable1"));
  CHECK(like_match("%tab%", "htable1"));
  CHECK(like_match("htable_", "htable1"));
  CHECK_FALSE(like_match("htable_", "htable12"));
  CHECK(like_match("%", ""));
  CHECK_FALSE(like_match("a", ""));
  CHECK(like_match("a\\%b", "a%b"));
  CHECK_FALSE(like_match("a\\%b", "axb"));
  CHECK(like_match("%$f%", "g$f1"));
  CHECK(like_match("a%b%c", "aXXbYYc"));
  CHECK_FALSE(like_match("a%b%c", "aXXcYYb"));
}

TEST_CASE("ALTER SYSTEM MOVE PARTITION [FROM], TRANSFER LEADER and BALANCE: parsed; a single store refuses them",
          "[ddl]") {
  auto m = parse_ddl("alter system move partition 'blogtable/3' to 'n2'; ALTER SYSTEM BALANCE");
  REQUIRE(m.is_ok());
  REQUIRE(m->size() == 2);
  CHECK((*m)[0].what == ddl_statement::kind::move_partition);
  CHECK((*m)[0].partition == "blogtable/3");
  CHECK((*m)[0].node == "n2");
  CHECK(describe_ddl((*m)[0]) == "ALTER SYSTEM MOVE PARTITION 'blogtable/3' TO 'n2'");
  CHECK((*m)[1].what == ddl_statement::kind::balance);
  CHECK(parse_ddl("ALTER SYSTEM MOVE PARTITION blogtable TO 'n2'").code() == code::invalid_argument);
  CHECK(parse_ddl("ALTER SYSTEM MOVE PARTITION 'b/1' 'n2'").code() == code::invalid_argument);
  CHECK(parse_ddl("ALTER SYSTEM SWITCH REPLICA").code() == code::unsupported);
  auto r = parse_ddl(
      "alter system move partition 'b/3' from 'n1' to 'n4'; alter system transfer leader partition "
      "'b/2' to 'n3'");
  REQUIRE(r.is_ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].what == ddl_statement::kind::move_partition);
  CHECK((*r)[0].from_node == "n1");
  CHECK((*r)[0].node == "n4");
  CHECK(describe_ddl((*r)[0]) == "ALTER SYSTEM MOVE PARTITION 'b/3' FROM 'n1' TO 'n4'");
  CHECK((*m)[0].from_node.empty());
  CHECK((*r)[1].what == ddl_statement::kind::transfer_leader);
  CHECK((*r)[1].partition == "b/2");
  CHECK((*r)[1].node == "n3");
  CHECK(describe_ddl((*r)[1]) == "ALTER SYSTEM TRANSFER LEADER PARTITION 'b/2' TO 'n3'");
  CHECK(parse_ddl("ALTER SYSTEM MOVE PARTITION 'b/1' FROM n1 TO 'n2'").code() == code::invalid_argument);
  CHECK(parse_ddl("ALTER SYSTEM TRANSFER LEADER PARTITION 'b/1' FROM 'n1' TO 'n2'").code() == code::invalid_argument);
  CHECK(parse_ddl("ALTER SYSTEM TRANSFER LEADER 'b/1' TO 'n2'").code() == code::invalid_argument);
  auto s = fresh();
  expect_refused(*s, "ALTER SYSTEM MOVE PARTITION 'g/0' TO 'n1'", code::unsupported);
  expect_refused(*s, "ALTER SYSTEM MOVE PARTITION 'g/0' FROM 'n1' TO 'n2'", code::unsupported);
  expect_refused(*s, "ALTER SYSTEM TRANSFER LEADER PARTITION 'g/0' TO 'n1'", code::unsupported);
  expect_refused(*s, "ALTER SYSTEM BALANCE", code::unsupported);
}
