// Namespaces and regions through the real cellar-shell, against a real cellar-server on a
// loopback port and against an embedded store (both must print the same JSON), and across
// a restart: HBase's namespace commands, `ns:table` names, OceanBase's CREATE DATABASE /
// USE, list_regions, split and merge_region.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>

#include "process.h"

using json = nlohmann::json;

namespace {

using testproc::temp_dir;

using testproc::lines;

std::string comparable(const std::string& s) {
  std::string out = std::regex_replace(s, std::regex("\"timestamp\":[0-9]+"), "\"timestamp\":T");
  return std::regex_replace(out, std::regex("\"seconds\":[0-9.e-]+"), "\"seconds\":X");
}

std::vector<json> parse(const std::string& out) {
  std::vector<json> v;
  for (const auto& l : lines(out)) v.push_back(json::parse(l));
  return v;
}

// Runs `script` with --json through a fresh server and a fresh embedded store; both must
// print the same objects. Returns them parsed, one per command.
std::vector<json> run_both(const std::string& script) {
  temp_dir data, emb;
  testproc::server srv(CELLAR_SERVER, data.path);
  auto rpc = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, script);
  auto local = testproc::run({CELLAR_SHELL, "--embedded", emb.path, "--json"}, script);
  INFO("rpc output:\n" << rpc.out);
  CHECK(comparable(rpc.out) == comparable(local.out));
  return parse(rpc.out);
}

std::vector<json> embedded(const std::string& dir, const std::string& script) {
  auto r = testproc::run({CELLAR_SHELL, "--embedded", dir, "--json"}, script);
  INFO(r.out);
  return parse(r.out);
}

json ok() { return json{{"ok", true}}; }

void check_error(const json& j, const std::string& code, const std::string& says) {
  INFO(j.dump());
  CHECK(j.value("ok", true) == false);
  CHECK(j.value("error", "") == code);
  CHECK(j.value("message", "").find(says) != std::string::npos);
}

std::vector<std::string> rows_of(const json& scan) {
  std::vector<std::string> out;
  for (const auto& c : scan["cells"]) out.push_back(c["row"].get<std::string>() + "=" + c["value"].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("namespaces: create, describe, alter, list, drop only when empty; ns:table everywhere",
          "[shell][namespace]") {
  const std::string script = R"(create_namespace 'ns1', {'owner' => 'ops'}
create_namespace 'ns1'
create_namespace 'bad name'
list_namespace
describe_namespace 'ns1'
create 'ns1:t1', 'f'
create 'nope:t1', 'f'
create 'hbase:t1', 'f'
put 'ns1:t1', 'r1', 'f:a', 'v1'
get 'ns1:t1', 'r1'
list
list_namespace_tables 'ns1'
list_namespace_tables 'default'
drop_namespace 'ns1'
drop_namespace 'default'
drop_namespace 'hbase'
alter_namespace 'ns1', {METHOD => 'set', 'hbase.namespace.quota.maxtables' => '1'}
create 'ns1:t2', 'f'
alter_namespace 'ns1', {METHOD => 'unset', NAME => 'owner'}
alter_namespace 'ns1', {METHOD => 'unset', NAME => 'owner'}
describe_namespace 'ns1'
create 'default:plain', 'f'
put 'plain', 'r', 'f:q', 'x'
scan 'default:plain'
exists 'default:plain'
disable 'ns1:t1'
drop 'ns1:t1'
drop_namespace 'ns1'
describe_namespace 'ns1'
list_namespace 'n.*'
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 30);
  CHECK(out[0]["ok"] == true);
  check_error(out[1], "ALREADY_EXISTS", "namespace 'ns1' already exists");
  check_error(out[2], "INVALID_ARGUMENT", "may only hold letters");
  CHECK(out[3]["namespaces"] == json::array({"default", "hbase", "ns1"}));
  CHECK(out[4]["namespace"] == "ns1");
  CHECK(out[4]["properties"] == json{{"owner", "ops"}});
  CHECK(out[5]["ok"] == true);
  check_error(out[6], "NOT_FOUND", "namespace 'nope' does not exist");
  check_error(out[7], "INVALID_ARGUMENT", "system namespace");
  CHECK(out[8] == ok());
  REQUIRE(out[9]["cells"].size() == 1);
  CHECK(out[9]["cells"][0]["value"] == "v1");
  CHECK(out[10]["tables"] == json::array({"ns1:t1"}));
  CHECK(out[11]["tables"] == json::array({"t1"}));
  CHECK(out[12]["tables"] == json::array());
  check_error(out[13], "INVALID_ARGUMENT", "Only empty namespaces can be removed. Namespace ns1 has 1 tables");
  check_error(out[14], "INVALID_ARGUMENT", "reserved");
  check_error(out[15], "INVALID_ARGUMENT", "reserved");
  CHECK(out[16]["ok"] == true);
  check_error(out[17], "INVALID_ARGUMENT", "The total number of tables permitted is 1");
  CHECK(out[18]["ok"] == true);
  check_error(out[19], "INVALID_ARGUMENT", "has no property 'owner'");
  CHECK(out[20]["properties"] == json{{"hbase.namespace.quota.maxtables", "1"}});
  CHECK(out[21]["ok"] == true);
  CHECK(out[22] == ok());
  CHECK(rows_of(out[23]) == std::vector<std::string>{"r=x"});
  CHECK(out[24]["exists"] == true);
  CHECK(out[27]["ok"] == true);
  check_error(out[28], "NOT_FOUND", "namespace 'ns1' does not exist");
  CHECK(out[29]["namespaces"] == json::array());
}

TEST_CASE("namespaces and their tables survive a restart", "[shell][namespace]") {
  temp_dir dir;
  auto first = embedded(dir.path, R"(create_namespace 'keep', {'k' => 'v'}
create 'keep:t', 'f'
put 'keep:t', 'r', 'f:q', 'v1'
create_namespace 'gone'
drop_namespace 'gone'
)");
  REQUIRE(first.size() == 5);
  for (const auto& j : first) CHECK(j["ok"] == true);
  auto again = embedded(dir.path, R"(list_namespace
describe_namespace 'keep'
get 'keep:t', 'r'
list_namespace_tables 'keep'
drop_namespace 'keep'
)");
  REQUIRE(again.size() == 5);
  CHECK(again[0]["namespaces"] == json::array({"default", "hbase", "keep"}));
  CHECK(again[1]["properties"] == json{{"k", "v"}});
  REQUIRE(again[2]["cells"].size() == 1);
  CHECK(again[2]["cells"][0]["value"] == "v1");
  CHECK(again[3]["tables"] == json::array({"t"}));
  check_error(again[4], "INVALID_ARGUMENT", "Only empty namespaces can be removed");
}

TEST_CASE("SQL: a database is a namespace (CREATE DATABASE, USE, db.g$f, DROP DATABASE)", "[shell][namespace][sql]") {
  const std::string script = R"(CREATE DATABASE blog;
CREATE DATABASE IF NOT EXISTS blog;
USE nope;
USE blog;
CREATE TABLEGROUP posts;
CREATE TABLE posts$info (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1048576), PRIMARY KEY(K, Q, T)) TABLEGROUP = posts;
SHOW TABLES;
list
put 'blog:posts', 'r1', 'info:t', 'hello'
USE default;
SHOW TABLES;
CREATE TABLE blog.c$f (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1048576), PRIMARY KEY(K, Q, T));
list_namespace_tables 'blog'
DROP DATABASE blog;
DROP TABLEGROUP blog.posts;
DROP TABLEGROUP blog.c;
DROP DATABASE blog;
SHOW DATABASES;
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 18);
  CHECK(out[0] == ok());
  CHECK(out[1] == ok());
  check_error(out[2], "NOT_FOUND", "Unknown database 'nope'");
  CHECK(out[3]["database"] == "blog");
  CHECK(out[6]["tables"] == json::array({"posts$info"}));
  CHECK(out[7]["tables"] == json::array({"blog:posts"}));
  CHECK(out[8] == ok());
  CHECK(out[10]["tables"] == json::array());
  CHECK(out[12]["tables"] == json::array({"c", "posts"}));
  check_error(out[13], "INVALID_ARGUMENT", "Only empty namespaces can be removed");
  CHECK(out[16] == ok());
  CHECK(out[17]["databases"] == json::array({"default", "hbase"}));
}

TEST_CASE("regions: list_regions, split and merge_region of RANGE partitions", "[shell][regions]") {
  const std::string script = R"(create 'rg', 'f', SPLITS => ['g', 'p']
put 'rg', 'a', 'f:q', '1'
put 'rg', 'h', 'f:q', '2'
put 'rg', 'k', 'f:q', '3'
put 'rg', 'z', 'f:q', '4'
list_regions 'rg'
split 'rg', 'k'
list_regions 'rg'
scan 'rg'
split 'rg', 'k'
split 'rg', ''
merge_region 'rg/0', 'rg/1'
list_regions 'rg'
merge_region 'rg/0', 'rg/2'
merge_region 'rg/2', 'rg/3'
scan 'rg', {REVERSED => true}
put 'rg', 'm', 'f:q', '5'
scan 'rg'
create 'hash', 'f'
split 'hash', 'k'
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 20);
  auto bounds = [](const json& regions) {
    std::vector<std::string> v;
    for (const auto& r : regions["regions"])
      v.push_back(r["start_key"].get<std::string>() + ".." + r["end_key"].get<std::string>() + ":" +
                  std::to_string(r["cells"].get<int>()));
    return v;
  };
  CHECK(bounds(out[5]) == std::vector<std::string>{"..g:1", "g..p:2", "p..:1"});
  CHECK(out[6]["ok"] == true);
  CHECK(bounds(out[7]) == std::vector<std::string>{"..g:1", "g..k:1", "k..p:1", "p..:1"});
  CHECK(out[7]["regions"][1]["region"] == "rg/1");
  CHECK(rows_of(out[8]) == std::vector<std::string>{"a=1", "h=2", "k=3", "z=4"});
  check_error(out[9], "INVALID_ARGUMENT", "'k' is already the start of a region");
  check_error(out[10], "INVALID_ARGUMENT", "a split key is needed");
  CHECK(out[11]["ok"] == true);
  CHECK(bounds(out[12]) == std::vector<std::string>{"..k:2", "k..p:1", "p..:1"});
  check_error(out[13], "INVALID_ARGUMENT", "not adjacent");
  check_error(out[14], "INVALID_ARGUMENT", "has no regions 2 and 3");
  CHECK(rows_of(out[15]) == std::vector<std::string>{"z=4", "k=3", "h=2", "a=1"});
  CHECK(rows_of(out[17]) == std::vector<std::string>{"a=1", "h=2", "k=3", "m=5", "z=4"});
  check_error(out[19], "UNSUPPORTED", "KEY (hash) partitioned");
}

TEST_CASE("split as HBase: a table at its regions' middle rows, a region by name, with or without a key",
          "[shell][regions]") {
  const std::string script = R"(create 'sp', 'f', SPLITS => ['m']
put 'sp', 'a', 'f:q', '1'
put 'sp', 'b', 'f:q', '2'
put 'sp', 'c', 'f:q', '3'
put 'sp', 'd', 'f:q', '4'
put 'sp', 'n', 'f:q', '5'
split 'sp'
list_regions 'sp'
put 'sp', 'o', 'f:q', '6'
put 'sp', 'p', 'f:q', '7'
split 'sp/2'
list_regions 'sp'
split 'sp/1', 'd'
list_regions 'sp'
split 'sp/1', 'z'
split 'sp/3', 'p'
split 'sp/0', 'a'
split 'sp/9'
split 'sp/2'
split 'sp/x'
split 'sp/0', ''
scan 'sp'
create 'hash', 'f'
split 'hash'
split 'hash/0'
split 'nope'
create 'few', 'f', SPLITS => ['m']
put 'few', 'x', 'f:q', '1'
split 'few'
list_regions 'few'
split
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 31);
  auto bounds = [](const json& regions) {
    std::vector<std::string> v;
    for (const auto& r : regions["regions"])
      v.push_back(r["start_key"].get<std::string>() + ".." + r["end_key"].get<std::string>() + ":" +
                  std::to_string(r["cells"].get<int>()));
    return v;
  };
  // Region 0 (a, b, c, d) splits at its middle row, c; region 1 (n alone) stays.
  CHECK(out[6]["ok"] == true);
  CHECK(out[6]["splits"] == 1);
  CHECK(bounds(out[7]) == std::vector<std::string>{"..c:2", "c..m:2", "m..:1"});
  // Region 2 (n, o, p) by name, at its middle row.
  CHECK(out[10]["ok"] == true);
  CHECK(out[10]["region"] == "sp/2");
  CHECK(bounds(out[11]) == std::vector<std::string>{"..c:2", "c..m:2", "m..o:1", "o..:2"});
  // Region 1 (c, d) at a key given.
  CHECK(out[12]["ok"] == true);
  CHECK(bounds(out[13]) == std::vector<std::string>{"..c:2", "c..d:1", "d..m:1", "m..o:1", "o..:2"});
  check_error(out[14], "INVALID_ARGUMENT", "'z' is outside region 'sp/1', which holds the rows from 'c' up to 'd'");
  check_error(out[15], "INVALID_ARGUMENT", "'p' is outside region 'sp/3', which holds the rows from 'm' up to 'o'");
  CHECK(out[16]["ok"] == true);  // region 0 starts unbounded: 'a' lies within it
  check_error(out[17], "INVALID_ARGUMENT", "'sp' has no region 9");
  check_error(out[18], "INVALID_ARGUMENT", "fewer than two rows");
  check_error(out[19], "INVALID_ARGUMENT", "not a region name");
  check_error(out[20], "INVALID_ARGUMENT", "a split key is needed");
  CHECK(rows_of(out[21]) == std::vector<std::string>{"a=1", "b=2", "c=3", "d=4", "n=5", "o=6", "p=7"});
  check_error(out[23], "UNSUPPORTED", "KEY (hash) partitioned");
  check_error(out[24], "UNSUPPORTED", "KEY (hash) partitioned");
  check_error(out[25], "TABLE_NOT_FOUND", "'nope'");
  // No region with two rows: nothing splits.
  CHECK(out[28]["ok"] == true);
  CHECK(out[28]["splits"] == 0);
  CHECK(bounds(out[29]) == std::vector<std::string>{"..m:0", "m..:1"});
  check_error(out[30], "INVALID_ARGUMENT", "split takes a table or a region");
}

TEST_CASE("a split and a merge survive a restart", "[shell][regions]") {
  temp_dir dir;
  auto first = embedded(dir.path, R"(create 'rs', 'f', SPLITS => ['m']
put 'rs', 'a', 'f:q', '1'
put 'rs', 'n', 'f:q', '2'
put 'rs', 'x', 'f:q', '3'
split 'rs', 'p'
merge_region 'rs/0', 'rs/1'
put 'rs', 'q', 'f:q', '4'
)");
  REQUIRE(first.size() == 7);
  for (const auto& j : first) CHECK(j["ok"] == true);
  auto again = embedded(dir.path, R"(get_splits 'rs'
scan 'rs'
list_regions 'rs'
)");
  REQUIRE(again.size() == 3);
  CHECK(again[0]["splits"] == json::array({"p"}));
  CHECK(rows_of(again[1]) == std::vector<std::string>{"a=1", "n=2", "q=4", "x=3"});
  REQUIRE(again[2]["regions"].size() == 2);
  CHECK(again[2]["regions"][0]["cells"] == 2);
  CHECK(again[2]["regions"][1]["cells"] == 2);
}

TEST_CASE("cellar-server --split-check-interval-ms: a region past MAX_FILESIZE splits on its own", "[shell][regions]") {
  temp_dir data;
  testproc::server srv(CELLAR_SERVER, data.path, {"--split-check-interval-ms", "100"});
  // About 3.2 MiB into the first of two RANGE regions whose MAX_FILESIZE is 2 MiB. No
  // compact: only the server's periodic check splits it, while the rows still come, so
  // where it splits depends on how far the writes got; once all are in, no region is
  // past the limit.
  std::string script = "create 'as', 'f', SPLITS => ['s'], MAX_FILESIZE => '2097152'\n";
  const std::string value(8192, 'v');
  char row[16];
  for (int i = 0; i < 400; ++i) {
    std::snprintf(row, sizeof row, "r%04d", i);
    script += "put 'as', '" + std::string(row) + "', 'f:q', '" + value + "'\n";
  }
  auto loaded = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--quiet"}, script);
  REQUIRE(loaded.exit_code == 0);
  CHECK(loaded.out.find("ERROR") == std::string::npos);
  json regions;
  auto settled = [&] {
    if (regions["regions"].size() < 3) return false;
    for (const auto& r : regions["regions"])
      if (r["bytes"].get<std::uint64_t>() > 2097152) return false;
    return true;
  };
  for (int i = 0; i < 200; ++i) {
    auto out = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, "list_regions 'as'\n");
    regions = json::parse(lines(out.out).at(0));
    if (settled()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(regions.dump());
  REQUIRE(settled());
  const auto& rs = regions["regions"];
  std::uint64_t cells = 0;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    cells += rs[i]["cells"].get<std::uint64_t>();
    if (i > 0) CHECK(rs[i]["start_key"] == rs[i - 1]["end_key"]);
  }
  CHECK(cells == 400);
  CHECK(rs[0]["start_key"] == "");
  CHECK(rs[rs.size() - 1]["start_key"] == "s");
  // A negative interval is refused at start.
  auto bad = testproc::run({CELLAR_SERVER, "--listen", "127.0.0.1:0", "--split-check-interval-ms", "-1"}, "", true);
  CHECK(bad.exit_code != 0);
  CHECK(bad.out.find("--split-check-interval-ms") != std::string::npos);
}
