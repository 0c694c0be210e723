// The shell behaves as the HBase 2.x shell (semantics SH1-SH3), driven end to
// end: every script runs through the real cellar-shell against a real cellar-server on a
// loopback port and against an embedded store, and both must give the same JSON; then
// the JSON lines are checked one by one, and the human output where it matters.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>
#include <sstream>

#include "process.h"
#include "shell_runner.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using testproc::temp_dir;

using testproc::lines;
using namespace shell_runner;

}  // namespace

TEST_CASE("SH1: delete removes the newest version or exactly one; deleteall every version", "[shell][hbase]") {
  const std::string script = R"(create 't', {NAME => 'f', VERSIONS => 5}
put 't', 'r', 'f:q', 'v1', 1
put 't', 'r', 'f:q', 'v2', 2
put 't', 'r', 'f:q', 'v3', 3
put 't', 'r', 'f:p', 'p1', 1
put 't', 'r', 'f:p', 'p2', 2
delete 't', 'r', 'f:q'
get 't', 'r', {COLUMN => 'f:q', VERSIONS => 5}
delete 't', 'r', 'f:q', 1
get 't', 'r', {COLUMN => 'f:q', VERSIONS => 5}
put 't', 'r', 'f:q', 'v4', 4
deleteall 't', 'r', 'f:q'
get 't', 'r', {COLUMN => 'f:q', VERSIONS => 5}
delete 't', 'r', 'f', 2
get 't', 'r', {VERSIONS => 5}
delete 't', 'r', 'f'
put 't', 'a1', 'f:q', 'x', 1
put 't', 'a2', 'f:q', 'x', 1
put 't', 'b1', 'f:q', 'x', 1
deleteall 't', {ROWPREFIXFILTER => 'a', CACHE => 1}
scan 't'
deleteall 't', 'b1'
count 't'
delete 't', 'r', 'f:q', {VISIBILITY => 'secret'}
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 24);
  for (int i : {0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 13, 16, 17, 18, 19, 21})
    CHECK(out[static_cast<std::size_t>(i)] == ok());
  CHECK(out[7] == cells({cell("r", "f:q", 2, "v2"), cell("r", "f:q", 1, "v1")}, 1));  // newest (v3) gone
  CHECK(out[9] == cells({cell("r", "f:q", 2, "v2")}, 1));                             // exactly version 1 gone
  CHECK(out[12] == cells({}, 0));                                                     // every version gone
  CHECK(out[14] == cells({cell("r", "f:p", 1, "p1")}, 1));                            // family at ts 2 gone
  check_error(out[15], "INVALID_ARGUMENT", "give the timestamp");
  CHECK(out[20] == cells({cell("b1", "f:q", 1, "x"), cell("r", "f:p", 1, "p1")}, 2));  // a1, a2 gone
  CHECK(out[22] == json{{"ok", true}, {"count", 1}});
  check_error(out[23], "UNSUPPORTED", "VISIBILITY");
}

TEST_CASE("SH2: scan options are honoured, and an unknown or unsupported option is an error naming it",
          "[shell][hbase]") {
  const std::string data = R"(create 's', {NAME => 'f', VERSIONS => 3}, 'g'
put 's', 'a1', 'f:q', '1', 10
put 's', 'a2', 'f:q', '2', 20
put 's', 'b1', 'f:q', '3', 30
put 's', 'b2', 'f:q', '4', 40
put 's', 'c1', 'f:q', '5', 50
put 's', 'a1', 'f:q', '1b', 11
put 's', 'a1', 'f:r', 'r1', 10
put 's', 'a1', 'g:x', 'gx', 10
)";
  const std::string script = data + R"(scan 's', {LIMIT => 0, COLUMNS => 'f:q'}
scan 's', {LIMIT => -3, COLUMNS => 'f:q'}
scan 's', {LIMIT => 2, COLUMNS => 'f:q'}
scan 's', {ROWPREFIXFILTER => 'b', STARTROW => 'a', STOPROW => 'z', COLUMNS => 'f:q'}
scan 's', {ROWPREFIXFILTER => 'b', REVERSED => true, COLUMNS => 'f:q'}
scan 's', {STARTROW => 'b2', REVERSED => true, LIMIT => 2, COLUMNS => ['f:q']}
scan 's', {STARTROW => 'a1', STOPROW => 'a2', BATCH => 1}
scan 's', {STARTROW => 'a1', STOPROW => 'a2', MAX_RESULT_SIZE => 1, ALLOW_PARTIAL_RESULTS => true}
scan 's', {STARTROW => 'a1', STOPROW => 'a2', MAX_RESULT_SIZE => 1}
scan 's', {STARTROW => 'a1', STOPROW => 'a2', COLUMNS => 'f:q', VERSIONS => 3}
scan 's', {COLUMNS => 'f:q', TIMESTAMP => 20}
scan 's', {COLUMNS => 'f:q', TIMERANGE => [20, 41]}
scan 's', {COLUMNS => 'g'}
scan 's', {CACHE => 1, COLUMNS => 'f:q'}
scan 's', {CACHE_BLOCKS => false, RAW => false, CONSISTENCY => 'STRONG', LIMIT => 1, COLUMNS => 'f:q'}
scan 's', {RAW => true}
scan 's', {FOO => 1}
scan 's', {ATTRIBUTES => {'k' => 'v'}}
scan 's', {CONSISTENCY => 'TIMELINE'}
get 's', 'a1', {FOO => 1}
get 's', 'a1', {AUTHORIZATIONS => ['x']}
put 's', 'a1', 'f:q', 'v', {BAR => 1}
put 's', 'a1', 'f:q', 'v', {ATTRIBUTES => {'k' => 'v'}}
count 's', {FOO => 1}
count 's', {ROWPREFIXFILTER => 'a', CACHE => 1}
incr 's', 'a1', 'f:n', 1, {NOPE => 1}
get 's', 'a1', 'f:q', 'g:x'
get 's', 'a1', ['f:r'], {TIMERANGE => [0, 11]}
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 9 + 28);
  auto at = [&](int i) { return out[static_cast<std::size_t>(9 + i)]; };
  const json every = cells({cell("a1", "f:q", 11, "1b"), cell("a2", "f:q", 20, "2"), cell("b1", "f:q", 30, "3"),
                            cell("b2", "f:q", 40, "4"), cell("c1", "f:q", 50, "5")},
                           5);
  CHECK(at(0) == every);  // LIMIT => 0: no limit
  CHECK(at(1) == every);  // negative: no limit
  CHECK(at(2) == cells({cell("a1", "f:q", 11, "1b"), cell("a2", "f:q", 20, "2")}, 2));
  CHECK(at(3) == cells({cell("b1", "f:q", 30, "3"), cell("b2", "f:q", 40, "4")}, 2));  // prefix beats start/stop
  CHECK(at(4) == cells({cell("b2", "f:q", 40, "4"), cell("b1", "f:q", 30, "3")}, 2));
  CHECK(at(5) == cells({cell("b2", "f:q", 40, "4"), cell("b1", "f:q", 30, "3")}, 2));
  const std::vector<json> a1 = {cell("a1", "f:q", 11, "1b"), cell("a1", "f:r", 10, "r1"), cell("a1", "g:x", 10, "gx")};
  CHECK(at(6) == cells(a1, 3));  // BATCH => 1: one result per cell, counted as HBase counts them
  CHECK(at(7) == cells(a1, 3));  // partial results of one cell each
  CHECK(at(8) == cells(a1, 1));  // without ALLOW_PARTIAL_RESULTS: whole rows
  CHECK(at(9) == cells({cell("a1", "f:q", 11, "1b"), cell("a1", "f:q", 10, "1")}, 1));
  CHECK(at(10) == cells({cell("a2", "f:q", 20, "2")}, 1));
  CHECK(at(11) == cells({cell("a2", "f:q", 20, "2"), cell("b1", "f:q", 30, "3"), cell("b2", "f:q", 40, "4")}, 3));
  CHECK(at(12) == cells({cell("a1", "g:x", 10, "gx")}, 1));
  CHECK(at(13) == every);
  CHECK(at(14) == cells({cell("a1", "f:q", 11, "1b")}, 1));
  check_error(at(15), "UNSUPPORTED", "RAW");
  check_error(at(16), "INVALID_ARGUMENT", "unknown option FOO");
  check_error(at(17), "UNSUPPORTED", "ATTRIBUTES");
  check_error(at(18), "UNSUPPORTED", "TIMELINE");
  check_error(at(19), "INVALID_ARGUMENT", "unknown option FOO");
  check_error(at(20), "UNSUPPORTED", "AUTHORIZATIONS");
  check_error(at(21), "INVALID_ARGUMENT", "unknown option BAR");
  check_error(at(22), "UNSUPPORTED", "ATTRIBUTES");
  check_error(at(23), "INVALID_ARGUMENT", "unknown option FOO");
  CHECK(at(24) == json{{"ok", true}, {"count", 2}});
  check_error(at(25), "INVALID_ARGUMENT", "unknown option NOPE");
  CHECK(at(26) == cells({cell("a1", "f:q", 11, "1b"), cell("a1", "g:x", 10, "gx")}, 1));
  CHECK(at(27) == cells({cell("a1", "f:r", 10, "r1")}, 1));

  // count's INTERVAL and CACHE, and MAXLENGTH, as the HBase shell prints them.
  temp_dir emb;
  auto text = human(emb.path, data +
                                  "count 's', INTERVAL => 2, CACHE => 1\ncount 's', 3\n"
                                  "scan 's', {COLUMNS => 'f:q', LIMIT => 1, MAXLENGTH => 12}\n");
  CHECK(text.find("Current count: 2, row: a2\nCurrent count: 4, row: b2\n5 row(s)\n") != std::string::npos);
  CHECK(text.find("Current count: 3, row: b1\n5 row(s)\n") != std::string::npos);
  CHECK(text.find(" a1" + std::string(30, ' ') + "column=f:q, timestamp=11\n1 row(s)\n") != std::string::npos);
}

TEST_CASE("SH3: disable and enable take effect; drop needs disable; SQL DROP TABLEGROUP does not", "[shell][hbase]") {
  const std::string script = R"(create 'd', 'f'
put 'd', 'r', 'f:q', 'v', 5
is_enabled 'd'
is_disabled 'd'
drop 'd'
disable 'd'
disable 'd'
is_enabled 'd'
is_disabled 'd'
get 'd', 'r'
put 'd', 'r', 'f:q', 'w'
scan 'd'
count 'd'
incr 'd', 'r', 'f:n'
deleteall 'd', 'r'
describe 'd'
alter 'd', NAME => 'f', VERSIONS => 2
enable 'd'
enable 'd'
get 'd', 'r'
disable 'd'
drop 'd'
exists 'd'
is_enabled 'nosuch'
disable 'nosuch'
CREATE TABLEGROUP g2;
CREATE TABLE g2$f (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1048576), PRIMARY KEY(K, Q, T)) TABLEGROUP = g2;
DROP TABLEGROUP g2;
exists 'g2'
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 29);
  CHECK(out[2] == json({{"ok", true}, {"enabled", true}}));
  CHECK(out[3] == json({{"ok", true}, {"disabled", false}}));
  check_error(out[4], "INVALID_ARGUMENT", "Table d is enabled. Disable it first.");
  CHECK(out[5] == ok());
  CHECK(out[6] == ok());
  CHECK(out[7] == json({{"ok", true}, {"enabled", false}}));
  CHECK(out[8] == json({{"ok", true}, {"disabled", true}}));
  for (int i = 9; i <= 14; ++i) check_error(out[static_cast<std::size_t>(i)], "TABLE_DISABLED", "'d' is disabled");
  CHECK(out[15]["table"]["enabled"] == false);
  CHECK(out[16] == ok());  // DDL on a disabled table
  CHECK(out[17] == ok());
  CHECK(out[18] == ok());
  CHECK(out[19] == cells({cell("r", "f:q", 5, "v")}, 1));  // the cells stayed
  CHECK(out[21] == ok());
  CHECK(out[22] == json({{"ok", true}, {"exists", false}}));
  check_error(out[23], "TABLE_NOT_FOUND", "nosuch");
  check_error(out[24], "TABLE_NOT_FOUND", "nosuch");
  CHECK(out[27] == ok());
  CHECK(out[28] == json({{"ok", true}, {"exists", false}}));

  temp_dir emb;
  auto text =
      human(emb.path, "create 'd', 'f'\ndisable 'd'\ndescribe 'd'\nis_disabled 'd'\nis_enabled 'd'\nget 'd', 'r'\n");
  CHECK(text.find("Table d is DISABLED\n") != std::string::npos);
  CHECK(text.find("\ntrue\nfalse\nERROR: TABLE_DISABLED: ") != std::string::npos);
}

TEST_CASE("SH3: the disabled state survives a server restart and an embedded reopen", "[shell][hbase]") {
  temp_dir data, emb;
  const std::string setup = "create 'p', 'f'\nput 'p', 'r', 'f:q', 'kept', 1\ndisable 'p'\n";
  const std::string probe = "is_disabled 'p'\nget 'p', 'r'\n";
  {
    testproc::server srv(CELLAR_SERVER, data.path);
    REQUIRE(json_rpc(srv, setup).exit_code == 0);
    CHECK(srv.stop() == 0);
  }
  REQUIRE(testproc::run({CELLAR_SHELL, "--embedded", emb.path, "--json"}, setup).exit_code == 0);
  for (int round = 0; round < 2; ++round) {
    testproc::server srv(CELLAR_SERVER, data.path);
    for (const auto& o : {json_rpc(srv, probe + (round == 0 ? "enable 'p'\n" : "")),
                          testproc::run({CELLAR_SHELL, "--embedded", emb.path, "--json"},
                                        probe + (round == 0 ? "enable 'p'\n" : ""))}) {
      auto l = lines(o.out);
      REQUIRE(l.size() >= 2);
      if (round == 0) {
        CHECK(json::parse(l[0]) == json({{"ok", true}, {"disabled", true}}));
        check_error(json::parse(l[1]), "TABLE_DISABLED", "'p' is disabled");
      } else {
        CHECK(json::parse(l[0]) == json({{"ok", true}, {"disabled", false}}));
        CHECK(json::parse(l[1]) == cells({cell("r", "f:q", 1, "kept")}, 1));
      }
    }
    CHECK(srv.stop() == 0);
  }
}

TEST_CASE("status, version, whoami, get_splits, list with a regex, truncate and help", "[shell][hbase]") {
  const std::string script = R"(create 'r', 'f', SPLITS => ['b', 'd']
create 'h', 'f', {NUMREGIONS => 3}
put 'r', 'a', 'f:q', '1', 1
put 'r', 'c', 'f:q', '2', 1
put 'r', 'e', 'f:q', '3', 1
get_splits 'r'
get_splits 'h'
list 'r'
list '.*'
list 'x.*'
list '['
status
status 'simple'
status 'detailed'
status 'bogus'
status 'replication'
version
whoami
disable 'r'
truncate 'r'
is_enabled 'r'
count 'r'
get_splits 'r'
put 'h', 'x', 'f:q', '1', 1
truncate_preserve 'h'
count 'h'
help
help 'get'
help 'dml'
help 'nosuch'
get_counter 'h', 'x', 'f:n'
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 31);
  CHECK(out[5] == json({{"ok", true}, {"splits", {"b", "d"}}, {"partitions", 3}}));
  CHECK(out[6] == json({{"ok", true}, {"splits", json::array()}, {"partitions", 3}}));
  CHECK(out[7] == json({{"ok", true}, {"tables", {"r"}}}));
  CHECK(out[8] == json({{"ok", true}, {"tables", {"h", "r"}}}));
  CHECK(out[9] == json({{"ok", true}, {"tables", json::array()}}));
  check_error(out[10], "INVALID_ARGUMENT", "regular expression");
  for (int i : {11, 12, 13}) {
    const json& s = out[static_cast<std::size_t>(i)]["status"];
    INFO(s.dump());
    CHECK(s["servers"] == 1);
    CHECK(s["dead_servers"] == 0);
    CHECK(s["regions"] == 6);
    CHECK(s["average_load"] == 6.0);
    CHECK(s["tables"] == 2);
    CHECK(s["cells"] == 3);
  }
  CHECK(out[13]["status"]["table_detail"][1]["cells_per_partition"] == json({1, 1, 1}));
  check_error(out[14], "INVALID_ARGUMENT", "'summary', 'simple' or 'detailed'");
  check_error(out[15], "UNSUPPORTED", "replication");
  CHECK(out[16]["version"] == "0.1.0");
  CHECK(std::regex_match(out[16]["revision"].get<std::string>(), std::regex("[0-9a-f]+|unknown")));
  CHECK(out[17]["auth"] == "SIMPLE");
  CHECK(!out[17]["user"].get<std::string>().empty());
  CHECK(out[19] == ok());
  CHECK(out[20] == json({{"ok", true}, {"enabled", true}}));  // truncate leaves the table enabled
  CHECK(out[21] == json({{"ok", true}, {"count", 0}}));
  CHECK(out[22] == out[5]);  // partitions kept
  CHECK(out[24] == ok());
  CHECK(out[25] == json({{"ok", true}, {"count", 0}}));
  CHECK(out[26]["help"].get<std::string>().find("Group name: dml") != std::string::npos);
  CHECK(out[26]["groups"][1]["group"] == "ddl");
  CHECK(out[27]["help"].get<std::string>().find("hbase> get 't1', 'r1', {COLUMN => 'c1'}") != std::string::npos);
  CHECK(out[28]["help"].get<std::string>().find("Command: scan") != std::string::npos);
  check_error(out[29], "INVALID_ARGUMENT", "no command or group 'nosuch'");
  CHECK(out[30] == json({{"ok", true}, {"counter", nullptr}}));

  temp_dir emb;
  auto text = human(emb.path,
                    "create 'r', 'f', SPLITS => ['b', 'd']\nget_splits 'r'\nstatus\nversion\ntruncate 'r'\n"
                    "help\nget_counter 'r', 'x', 'f:n'\n");
  CHECK(text.find("Total number of splits = 3\nb\nd\n") != std::string::npos);
  CHECK(text.find("1 active master, 0 backup masters, 1 servers, 0 dead, 3.0000 average load\n") != std::string::npos);
  CHECK(std::regex_search(text, std::regex("\n0\\.1\\.0, r([0-9a-f]+|unknown), ")));
  CHECK(text.find("Truncating 'r' table (it may take a while):\nDisabling table...\nTruncating table...\n") !=
        std::string::npos);
  CHECK(text.find("COMMAND GROUPS:\n  Group name: general\n  Commands: help, status, version, whoami\n") !=
        std::string::npos);
  CHECK(text.find("No counter found at specified coordinates\n") != std::string::npos);
}

TEST_CASE("--json describe carries every family's settings and the partitioning", "[shell][hbase]") {
  const std::string script = R"(create 'x', {NAME => 'a', VERSIONS => 4, TTL => 600}, 'b', SPLITS => ['m']
CREATE TABLE ts$f (K varbinary(1024) NOT NULL, T bigint(20) NOT NULL, S bigint(20) NOT NULL, V json NOT NULL, G bigint(20) GENERATED ALWAYS AS (ABS(T)), PRIMARY KEY (K, T, S)) PARTITION BY KEY(K) PARTITIONS 3;
describe 'x'
describe 'ts'
exists 'x'
exists 'nosuch'
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 6);
  const json want1 = json::parse(R"({"ok":true,"table":{"name":"x","enabled":true,
      "partitioning":{"method":"range","partitions":2,"bounds":["m"]},"attributes":{},
      "families":[{"name":"a","versions":4,"ttl_seconds":600,"max_value_bytes":1048576,"time_series":false,
                   "min_versions":0,"attributes":{}},
                  {"name":"b","versions":1,"ttl_seconds":null,"max_value_bytes":1048576,"time_series":false,
                   "min_versions":0,"attributes":{}}]}})");
  CHECK(out[2] == want1);
  const json want2 = json::parse(R"({"ok":true,"table":{"name":"ts","enabled":true,
      "partitioning":{"method":"key","partitions":3},"attributes":{},
      "families":[{"name":"f","versions":null,"ttl_seconds":null,"max_value_bytes":1048576,"time_series":true,
                   "min_versions":0,"attributes":{}}]}})");
  CHECK(out[3] == want2);
  CHECK(out[4] == json({{"ok", true}, {"exists", true}}));
  CHECK(out[5] == json({{"ok", true}, {"exists", false}}));
}

TEST_CASE("time-series families: an explicit VERSIONS => 1 is honoured", "[shell][hbase][ts]") {
  const std::string script =
      R"(CREATE TABLE ts$f (K varbinary(1024) NOT NULL, T bigint(20) NOT NULL, S bigint(20) NOT NULL, V json NOT NULL, G bigint(20) GENERATED ALWAYS AS (ABS(T)), PRIMARY KEY (K, T, S)) PARTITION BY KEY(K) PARTITIONS 3;
put 'ts', 'k', 'f:q', 'a', 100
put 'ts', 'k', 'f:q', 'b', 101
get 'ts', 'k', {COLUMN => 'f:q'}
get 'ts', 'k', {COLUMN => 'f:q', VERSIONS => 1}
scan 'ts'
scan 'ts', {VERSIONS => 1}
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 7);
  const json both = cells({cell("k", "f:q", 101, "b"), cell("k", "f:q", 100, "a")}, 1);
  const json newest = cells({cell("k", "f:q", 101, "b")}, 1);
  CHECK(out[3] == both);  // TS3: every version without VERSIONS
  CHECK(out[4] == newest);
  CHECK(out[5] == both);
  CHECK(out[6] == newest);
}

TEST_CASE("OceanBase statements: SHOW TABLEGROUPS, SHOW TABLES, DESC, TRUNCATE TABLE, ALTER TABLE; others by name",
          "[shell][hbase][ddl]") {
  const std::string table_sql =
      "(K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1048576) NOT NULL, "
      "PRIMARY KEY(K, Q, T)) TABLEGROUP = htable1 ";
  const std::string script = "CREATE TABLEGROUP htable1;\nCREATE TABLE htable1$family1 " + table_sql +
                             "kv_attributes = '{\"HBase\": {\"MaxVersions\": 3}}' PARTITION BY KEY(K) PARTITIONS 3;\n"
                             "CREATE TABLE htable1$family2 " +
                             table_sql + "PARTITION BY KEY(K) PARTITIONS 3;\n" +
                             R"(CREATE TABLEGROUP empty;
SHOW TABLEGROUPS;
SHOW TABLEGROUPS LIKE 'h%';
show tables;
SHOW TABLES LIKE '%2';
DESC htable1$family1;
put 'htable1', 'r', 'family1:q', 'a', 1
put 'htable1', 'r', 'family2:q', 'b', 1
TRUNCATE TABLE htable1$family1;
scan 'htable1'
ALTER TABLE htable1$family2 kv_attributes = '{"HBase": {"TimeToLive": 3600, "MaxVersions": 2}}';
ALTER TABLE htable1$family1 kv_attributes = '{"HBase": {}}';
describe 'htable1'
DESC htable1$nosuch;
TRUNCATE TABLE nosuch$f;
SELECT * FROM htable1$family1;
CREATE INDEX i ON htable1$family1 (Q);
SHOW GRANTS;
ALTER TABLEGROUP htable1 SHARDING = 'NONE';
ALTER TABLE htable1$family1 ADD COLUMN x int;
INSERT INTO htable1$family1 VALUES ('a');
RENAME TABLE a TO b;
DELETE FROM htable1$family1;
list
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 27);
  for (int i : {0, 1, 2, 3, 9, 10, 11, 13, 14}) CHECK(out[static_cast<std::size_t>(i)] == ok());
  const json want3 = json::parse(R"({"ok":true,"tablegroups":[{"name":"empty","tables":[]},
      {"name":"htable1","tables":["htable1$family1","htable1$family2"]}]})");
  CHECK(out[4] == want3);
  CHECK(
      out[5] ==
      json::parse(R"({"ok":true,"tablegroups":[{"name":"htable1","tables":["htable1$family1","htable1$family2"]}]})"));
  CHECK(out[6] == json({{"ok", true}, {"tables", {"htable1$family1", "htable1$family2"}}}));
  CHECK(out[7] == json({{"ok", true}, {"tables", {"htable1$family2"}}}));
  CHECK(out[8]["table"] == "htable1$family1");
  CHECK(out[8]["columns"].size() == 4);
  const json want5 = json::parse(R"j({"field":"K","type":"varbinary(1024)","null":false,"key":"PRI",
      "default":null,"extra":""})j");
  CHECK(out[8]["columns"][0] == want5);
  CHECK(out[8]["columns"][3]["type"] == "varbinary(1048576)");
  CHECK(out[8]["family"]["versions"] == 3);
  CHECK(out[8]["partitioning"] == json::parse(R"({"method":"key","partitions":3})"));
  CHECK(out[12] == cells({cell("r", "family2:q", 1, "b")}, 1));  // family1 emptied, family2 kept
  const json& fams = out[15]["table"]["families"];
  CHECK(fams[0]["versions"] == nullptr);  // kv_attributes without MaxVersions: all versions
  CHECK(fams[1]["versions"] == 2);
  CHECK(fams[1]["ttl_seconds"] == 3600);
  check_error(out[16], "FAMILY_NOT_FOUND", "htable1$nosuch");
  check_error(out[17], "TABLE_NOT_FOUND", "nosuch");
  const std::vector<std::string> names = {
      "SELECT", "CREATE INDEX", "SHOW GRANTS", "ALTER TABLEGROUP", "ALTER TABLE ... ADD", "INSERT", "RENAME", "DELETE"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const json& e = out[18 + i];
    check_error(e, "UNSUPPORTED", names[i] + " is not supported");
    CHECK(e["message"].get<std::string>().find("line ") == std::string::npos);
  }
  CHECK(out[26]["tables"] == json({"empty", "htable1"}));

  temp_dir emb;
  auto text = human(emb.path, "CREATE TABLEGROUP htable1;\nCREATE TABLE htable1$family1 " + table_sql +
                                  "PARTITION BY KEY(K) PARTITIONS 3;\nSHOW TABLES;\nDESC htable1$family1;\n");
  CHECK(text.find("+------------------+\n| Tables_in_cellar |\n+------------------+\n| htable1$family1  |\n"
                  "+------------------+\n1 row in set\n") != std::string::npos);
  CHECK(text.find("| Field | Type               | Null | Key | Default | Extra |\n") != std::string::npos);
  CHECK(text.find("| K     | varbinary(1024)    | NO   | PRI | NULL    |       |\n") != std::string::npos);
  CHECK(text.find("4 rows in set\n") != std::string::npos);
}

TEST_CASE("a server with a token: without one the shell says a token is required", "[shell][server]") {
  temp_dir data;
  testproc::server srv(CELLAR_SERVER, data.path, {"--token", "s3cret"});
  auto none = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, "list\n", /*with_stderr=*/true);
  CHECK(none.exit_code == 2);
  CHECK(none.out.find("PERMISSION_DENIED: this server requires a token; none was given (give it with --token-file or "
                      "CELLAR_TOKEN)") != std::string::npos);
  CHECK(none.out.find("wrong token") == std::string::npos);
  auto wrong = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json", "--token", "guess"}, "list\n", true);
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.out.find("PERMISSION_DENIED: wrong token") != std::string::npos);
  auto right = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json", "--token", "s3cret"}, "whoami\n");
  CHECK(right.exit_code == 0);
  CHECK(json::parse(lines(right.out).at(0))["auth"] == "TOKEN");
}
