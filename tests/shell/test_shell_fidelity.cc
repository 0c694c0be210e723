// HBase fidelity through the real cellar-shell, against a real cellar-server on a loopback
// port and against an embedded store (both must print the same JSON): every option of
// `create` and `alter` kept or refused by name, MIN_VERSIONS against the TTL, READONLY,
// table attributes in `describe`.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "process.h"
#include "shell_runner.h"

using json = nlohmann::json;

namespace {

using testproc::temp_dir;

using testproc::lines;
using namespace shell_runner;

}  // namespace

TEST_CASE("MIN_VERSIONS: the newest version outlives the TTL, as in HBase", "[shell][fidelity]") {
  // Timestamps 1 and 2 are far past a TTL of one second: without MIN_VERSIONS nothing is
  // left; with MIN_VERSIONS => 1 the newest version is.
  const std::string script = R"(create 'mv', {NAME => 'f', TTL => 1, MIN_VERSIONS => 1, VERSIONS => 3}
put 'mv', 'r', 'f:q', 'old', 1
put 'mv', 'r', 'f:q', 'newer', 2
get 'mv', 'r', {COLUMN => 'f:q', VERSIONS => 3}
scan 'mv'
create 'plain', {NAME => 'f', TTL => 1, VERSIONS => 3}
put 'plain', 'r', 'f:q', 'old', 1
get 'plain', 'r'
alter 'plain', NAME => 'f', MIN_VERSIONS => 1
get 'plain', 'r'
alter 'mv', NAME => 'f', VERSIONS => 5
create 'bad', {NAME => 'f', VERSIONS => 1, MIN_VERSIONS => 2}
alter 'mv', NAME => 'f', MIN_VERSIONS => -1
describe 'mv'
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 14);
  CHECK(out[3] == cells({cell("r", "f:q", 2, "newer")}, 1));
  CHECK(out[4] == cells({cell("r", "f:q", 2, "newer")}, 1));
  CHECK(out[7] == cells({}, 0));
  CHECK(out[8] == ok());
  CHECK(out[9] == cells({}, 0));  // removed when it was written: past the TTL, and no MIN_VERSIONS then
  CHECK(out[10] == ok());
  check_error(out[11], "INVALID_ARGUMENT", "Min versions for column family f must be less than the Max versions");
  check_error(out[12], "INVALID_ARGUMENT", "must be positive");
  const auto& fam = out[13]["table"]["families"][0];
  CHECK(fam["min_versions"] == 1);  // kept by the alter of VERSIONS
  CHECK(fam["versions"] == 5);
  CHECK(fam["ttl_seconds"] == 1);
}

TEST_CASE("create and alter: every HBase option is kept and shown, or refused by name", "[shell][fidelity]") {
  const std::string script =
      R"(create 'o', {NAME => 'f', BLOOMFILTER => 'row', COMPRESSION => 'SNAPPY', IN_MEMORY => true, BLOCKSIZE => 65536, KEEP_DELETED_CELLS => false, DATA_BLOCK_ENCODING => 'FAST_DIFF', REPLICATION_SCOPE => 0, METADATA => {'team' => 'search'}}, MAX_FILESIZE => '134217728', OWNER => 'ops', DURABILITY => 'SKIP_WAL', METADATA => {'purpose' => 'test'}
describe 'o'
create 'k', {NAME => 'f', KEEP_DELETED_CELLS => true}
create 'k', {NAME => 'f', KEEP_DELETED_CELLS => 'TTL'}
create 'k', {NAME => 'f', ENCRYPTION => 'AES'}
create 'k', 'f', REGION_REPLICATION => 2
create 'k', {NAME => 'f', CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '20'}}
create 'k', {NAME => 'f', FOO => 1}
create 'k', 'f', FOO => 1
create 'k', 'f', DURABILITY => 'SYNC_WAL'
create 'k', {NAME => 'f', NEW_VERSION_BEHAVIOR => false}
exists 'k'
alter 'o', MAX_FILESIZE => '268435456'
alter 'o', NAME => 'f', KEEP_DELETED_CELLS => 'TRUE'
alter 'o', NAME => 'f', BLOOMFILTER => 'ROWCOL'
alter 'o', METHOD => 'table_att_unset', NAME => 'OWNER'
alter 'o', METHOD => 'table_att_unset', NAME => 'OWNER'
alter 'o', METHOD => 'table_att', REGION_REPLICATION => 1
describe 'o'
create 'hex', 'f', {NUMREGIONS => 4, SPLITALGO => 'HexStringSplit'}
get_splits 'hex'
create 'dec', 'f', {NUMREGIONS => 2, SPLITALGO => 'org.apache.hadoop.hbase.util.RegionSplitter$DecimalStringSplit'}
get_splits 'dec'
create 'nope', 'f', {NUMREGIONS => 4, SPLITALGO => 'MySplit'}
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 24);
  CHECK(out[0] == ok());
  const json want = json::parse(R"({"name":"o","enabled":true,"partitioning":{"method":"key","partitions":4},
      "attributes":{"DURABILITY":"SKIP_WAL","MAX_FILESIZE":"134217728","OWNER":"ops","purpose":"test"},
      "families":[{"name":"f","versions":1,"ttl_seconds":null,"max_value_bytes":1048576,"time_series":false,
                   "min_versions":0,"attributes":{"BLOCKSIZE":"65536","BLOOMFILTER":"ROW","COMPRESSION":"SNAPPY",
                   "DATA_BLOCK_ENCODING":"FAST_DIFF","IN_MEMORY":"true","KEEP_DELETED_CELLS":"FALSE",
                   "REPLICATION_SCOPE":"0","team":"search"}}]})");
  json got = out[1]["table"];
  got["partitioning"]["partitions"] = 4;  // the server's default number: not what is checked here
  CHECK(got == want);
  check_error(out[2], "UNSUPPORTED", "KEEP_DELETED_CELLS => 'TRUE' is not supported: deletes are physical");
  check_error(out[3], "UNSUPPORTED", "KEEP_DELETED_CELLS => 'TTL' is not supported");
  check_error(out[4], "UNSUPPORTED", "ENCRYPTION");
  check_error(out[5], "INVALID_ARGUMENT", "REGION_REPLICATION => '2': a partition has 1, 3 or 5 replicas");
  check_error(out[6], "UNSUPPORTED", "CONFIGURATION is not supported");
  check_error(out[7], "INVALID_ARGUMENT", "unknown column family option FOO");
  check_error(out[8], "INVALID_ARGUMENT", "unknown table option FOO");
  check_error(out[9], "UNSUPPORTED", "DURABILITY => 'SYNC_WAL' is not supported");
  check_error(out[10], "UNSUPPORTED", "NEW_VERSION_BEHAVIOR => 'false' is not supported");
  CHECK(out[11] == json({{"ok", true}, {"exists", false}}));
  CHECK(out[12] == ok());
  check_error(out[13], "UNSUPPORTED", "KEEP_DELETED_CELLS");
  CHECK(out[14] == ok());
  CHECK(out[15] == ok());
  check_error(out[16], "INVALID_ARGUMENT", "Could not find attribute: OWNER");
  CHECK(out[17] == ok());
  const auto& t = out[18]["table"];
  CHECK(t["attributes"] == json::parse(R"({"DURABILITY":"SKIP_WAL","MAX_FILESIZE":"268435456",
      "REGION_REPLICATION":"1","purpose":"test"})"));
  CHECK(t["families"][0]["attributes"]["BLOOMFILTER"] == "ROWCOL");
  CHECK(t["families"][0]["attributes"]["KEEP_DELETED_CELLS"] == "FALSE");
  CHECK(out[20]["splits"] == json::parse(R"(["40000000","80000000","c0000000"])"));
  CHECK(out[22]["splits"] == json::parse(R"(["50000000"])"));
  check_error(out[23], "UNSUPPORTED", "SPLITALGO 'MySplit' is not supported");
}

TEST_CASE("alter 't', MAX_FILESIZE => ... sets a table attribute; describe shows it", "[shell][fidelity]") {
  temp_dir emb;
  auto text =
      human(emb.path,
            R"(create 't', {NAME => 'f', MIN_VERSIONS => 1, TTL => 60, BLOOMFILTER => 'ROW', METADATA => {'k' => 'v'}}
alter 't', MAX_FILESIZE => '134217728'
describe 't'
)");
  INFO(text);
  CHECK(text.find("Updating all regions with the new schema...\nDone.\n") != std::string::npos);
  CHECK(text.find("t, {TABLE_ATTRIBUTES => {MAX_FILESIZE => '134217728'}}, PARTITIONS => ") != std::string::npos);
  CHECK(text.find("{NAME => 'f', VERSIONS => '1', MIN_VERSIONS => '1', TTL => '60 SECONDS', MAX_VALUE_BYTES => "
                  "'1048576', BLOOMFILTER => 'ROW', METADATA => {'k' => 'v'}}") != std::string::npos);
  CHECK(text.find("a column family needs NAME") == std::string::npos);
}

TEST_CASE("READONLY => true refuses writes with TABLE_READ_ONLY until it is lifted", "[shell][fidelity]") {
  const std::string script = R"(create 'ro', 'f'
put 'ro', 'r', 'f:q', 'v', 1
alter 'ro', READONLY => true
put 'ro', 'r', 'f:q', 'w', 2
deleteall 'ro', 'r'
incr 'ro', 'r', 'f:n'
append 'ro', 'r', 'f:q', 'x'
get 'ro', 'r'
count 'ro'
alter 'ro', READONLY => false
put 'ro', 'r', 'f:q', 'w', 2
get 'ro', 'r'
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 12);
  for (int i : {3, 4, 5, 6}) check_error(out[static_cast<std::size_t>(i)], "TABLE_READ_ONLY", "'ro' is read-only");
  CHECK(out[7] == cells({cell("r", "f:q", 1, "v")}, 1));
  CHECK(out[8]["count"] == 1);
  CHECK(out[10] == ok());
  CHECK(out[11] == cells({cell("r", "f:q", 2, "w")}, 1));
}

TEST_CASE("table attributes, family settings and MIN_VERSIONS survive a server restart", "[shell][fidelity]") {
  temp_dir data;
  const std::string setup =
      "create 'p', {NAME => 'f', MIN_VERSIONS => 1, TTL => 1, VERSIONS => 2, "
      "COMPRESSION => 'GZ'}, OWNER => 'ops'\nput 'p', 'r', 'f:q', 'kept', 1\n"
      "alter 'p', READONLY => true\n";
  const std::string probe = "describe 'p'\nget 'p', 'r'\nput 'p', 'r', 'f:q', 'no'\n";
  {
    testproc::server srv(CELLAR_SERVER, data.path);
    auto o = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, setup);
    REQUIRE(o.exit_code == 0);
    CHECK(srv.stop() == 0);
  }
  testproc::server srv(CELLAR_SERVER, data.path);
  auto o = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, probe);
  auto l = lines(o.out);
  REQUIRE(l.size() == 3);
  const auto d = json::parse(l[0])["table"];
  CHECK(d["attributes"] == json::parse(R"({"OWNER":"ops","READONLY":"true"})"));
  CHECK(d["families"][0]["min_versions"] == 1);
  CHECK(d["families"][0]["attributes"] == json::parse(R"({"COMPRESSION":"GZ"})"));
  CHECK(json::parse(l[1]) == cells({cell("r", "f:q", 1, "kept")}, 1));
  check_error(json::parse(l[2]), "TABLE_READ_ONLY", "read-only");
}

TEST_CASE("create takes SPLITS_FILE, one split per line", "[shell][fidelity]") {
  temp_dir emb, files;
  std::filesystem::create_directories(files.path);
  const std::string path = files.path + "/splits.txt";
  std::ofstream(path) << "m\nc\n";
  auto o = testproc::run({CELLAR_SHELL, "--embedded", emb.path, "--json"}, "create 's', 'f', SPLITS_FILE => '" + path +
                                                                               "'\nget_splits 's'\n"
                                                                               "create 'n', 'f', SPLITS_FILE => '" +
                                                                               files.path + "/none'\n");
  auto l = lines(o.out);
  REQUIRE(l.size() == 3);
  CHECK(json::parse(l[1])["splits"] == json::parse(R"(["c","m"])"));
  check_error(json::parse(l[2]), "INVALID_ARGUMENT", "doesn't exist");
}

TEST_CASE("alter 't', 'delete' => 'f' keeps a table's last family, as HBase; SQL DROP TABLE drops it",
          "[shell][fidelity]") {
  const std::string script = R"(create 'a1', 'f'
put 'a1', 'r', 'f:q', 'v', 1
alter 'a1', 'delete' => 'f'
alter 'a1', NAME => 'f', METHOD => 'delete'
describe 'a1'
get 'a1', 'r'
create 'a2', 'f', 'g'
alter 'a2', 'delete' => 'g'
alter 'a2', 'delete' => 'f'
CREATE TABLE g$f (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1048576), PRIMARY KEY(K, Q, T));
DROP TABLE g$f;
exists 'g'
)";
  auto out = run_both(script);
  REQUIRE(out.size() == 12);
  check_error(out[2], "INVALID_ARGUMENT", "Family 'f' is the only column family in the table, so it cannot be deleted");
  check_error(out[3], "INVALID_ARGUMENT", "Family 'f' is the only column family in the table");
  CHECK(out[4]["table"]["families"].size() == 1);
  CHECK(out[5] == cells({cell("r", "f:q", 1, "v")}, 1));
  CHECK(out[7] == ok());
  check_error(out[8], "INVALID_ARGUMENT", "only column family");
  CHECK(out[9] == ok());
  CHECK(out[10] == ok());
  CHECK(out[11] == json({{"ok", true}, {"exists", true}}));  // the group stays, empty
}

TEST_CASE("a directory a server holds: the embedded shell and a second server name the holder", "[shell][fidelity]") {
  temp_dir data;
  testproc::server srv(CELLAR_SERVER, data.path);
  const std::string holder = "in use by another process (pid " + std::to_string(srv.pid()) + ")";
  auto shell = testproc::run({CELLAR_SHELL, "--embedded", data.path, "--json"}, "list\n", true);
  INFO(shell.out);
  CHECK(shell.exit_code == 2);
  CHECK(shell.out.find("cellar-shell: cannot open " + data.path + ": IO_ERROR: the store directory " + data.path +
                       " is " + holder) != std::string::npos);
  CHECK(shell.out.find("WiredTiger") == std::string::npos);
  CHECK(shell.out.find("Device or resource busy") == std::string::npos);
  // A second server on another port: it exits at once, saying the same. (`timeout` only
  // bounds a failure of this test: a server that wrongly started would run until killed.)
  auto second = testproc::run({"/usr/bin/timeout", "20", CELLAR_SERVER, "--listen", "127.0.0.1:0", "--data", data.path},
                              "", true);
  INFO(second.out);
  CHECK(second.exit_code == 2);
  CHECK(second.out.find(holder) != std::string::npos);
  // The holder still serves.
  auto o = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, "create 't', 'f'\nexists 't'\n");
  CHECK(lines(o.out).back() == R"({"ok":true,"exists":true})");
}

TEST_CASE("a port another server holds: a second cellar-server exits with 'address already in use'",
          "[shell][fidelity][listen]") {
  temp_dir first_data, second_data;
  testproc::server first(CELLAR_SERVER, first_data.path, {"--event-loops", "2", "--metrics-listen", "127.0.0.1:0"});
  std::smatch m;
  REQUIRE(std::regex_search(first.banner(), m, std::regex("metrics on 127\\.0\\.0\\.1:([0-9]+)")));
  const std::string metrics = "127.0.0.1:" + m[1].str();
  REQUIRE(testproc::run({CELLAR_SHELL, "--connect", first.address(), "--json"}, "create 't', 'f'\n").exit_code == 0);
  // `timeout` only bounds a failure of this test: a server that wrongly started would run
  // until killed (exit 124).
  auto second = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv{"/usr/bin/timeout",       "20", CELLAR_SERVER, "--data", second_data.path,
                                  "--snapshot-interval-ms", "0"};
    for (auto& e : extra) argv.push_back(e);
    return testproc::run(argv, "", true);
  };
  for (const auto& loops : {"1", "2", "4"}) {
    INFO(loops << " event loops");
    auto o = second({"--listen", first.address(), "--event-loops", loops});
    INFO(o.out);
    CHECK(o.exit_code == 2);
    CHECK(o.out.find("cannot listen on " + first.address() + ": address already in use") != std::string::npos);
    CHECK(o.out.find("listening on") == std::string::npos);
  }
  {
    auto o = second({"--listen", "127.0.0.1:0", "--metrics-listen", metrics});
    INFO(o.out);
    CHECK(o.exit_code == 2);
    CHECK(o.out.find("cannot listen on " + metrics + ": address already in use") != std::string::npos);
  }
  // The first server still serves every client (none went to another process).
  for (int i = 0; i < 8; ++i) {
    auto o = testproc::run({CELLAR_SHELL, "--connect", first.address(), "--json"}, "exists 't'\n");
    CHECK(o.out == "{\"ok\":true,\"exists\":true}\n");
  }
  CHECK(first.alive());
}
