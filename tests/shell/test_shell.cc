// End to end: the real cellar-shell against a real cellar-server on a loopback port, and
// the same scripts with --embedded, which must print the same JSON.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "blog_session.h"
#include "process.h"

namespace fs = std::filesystem;

namespace {

using testproc::temp_dir;

using testproc::cells_of;
using testproc::lines;

// The whole of seed 003's session: its writes, then its reads.
const std::string blog_session = std::string(testproc::blog_writes) + testproc::blog_reads;

testproc::output shell_rpc(const testproc::server& srv, const std::string& script,
                           std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{CELLAR_SHELL, "--connect", srv.address(), "--json"};
  for (auto& e : extra) argv.push_back(e);
  return testproc::run(argv, script);
}

testproc::output shell_embedded(const std::string& dir, const std::string& script) {
  return testproc::run({CELLAR_SHELL, "--embedded", dir, "--json"}, script);
}

// Server-assigned timestamps differ between runs: compare everything else.
std::string without_timestamps(const std::string& s) {
  return std::regex_replace(s, std::regex("\"timestamp\":[0-9]+"), "\"timestamp\":T");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("seed 003: the blog session gives HBase's results over RPC and embedded, the same JSON", "[shell]") {
  temp_dir data, emb;
  testproc::server srv(CELLAR_SERVER, data.path);
  auto rpc = shell_rpc(srv, blog_session);
  auto local = shell_embedded(emb.path, blog_session);
  CHECK(rpc.exit_code == 0);
  CHECK(local.exit_code == 0);
  auto out = lines(rpc.out);
  REQUIRE(out.size() == 21);  // one JSON object per command
  for (int i = 0; i < 15; ++i) CHECK(out[static_cast<std::size_t>(i)] == "{\"ok\":true}");
  CHECK(cells_of(out[15]) ==
        std::vector<std::string>{"1 info:title = this is doc title", "1 text: = what is this doc context ?",
                                 "2 info:title = this is doc title2", "2 text: = what is this doc context2?"});
  CHECK(cells_of(out[16]) == std::vector<std::string>{"2 info:url = http://www.javabloger.com/index.html"});
  CHECK(cells_of(out[17]) ==
        std::vector<std::string>{"1 comment_author: = javabloger", "1 comment_text: = this is nice doc",
                                 "1 comment_title: = this is doc comment_title ", "1 info:author = javabloger",
                                 "1 info:title = this is doc title", "1 info:url = http://www.javabloger.com/index.php",
                                 "1 text: = what is this doc context ?"});
  CHECK(cells_of(out[18]) == std::vector<std::string>{"1 info:author = javabloger", "1 info:title = this is doc title",
                                                      "1 info:url = http://www.javabloger.com/index.php"});
  CHECK(cells_of(out[19]) == std::vector<std::string>{"1 text: = what is this doc context ?"});
  CHECK(cells_of(out[20]) ==
        std::vector<std::string>{"1 info:author = javabloger", "1 text: = what is this doc context ?"});
  CHECK(without_timestamps(rpc.out) == without_timestamps(local.out));
}

TEST_CASE("the human output looks like the HBase shell's", "[shell]") {
  temp_dir emb;
  auto r =
      testproc::run({CELLAR_SHELL, "--embedded", emb.path}, std::string(blog_session) + "count 'blogtable'\nlist\n");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Created table blogtable") != std::string::npos);
  CHECK(r.out.find("ROW                              COLUMN+CELL") != std::string::npos);
  CHECK(r.out.find(" 1                               column=info:title, timestamp=") != std::string::npos);
  CHECK(r.out.find("COLUMN                           CELL") != std::string::npos);
  CHECK(r.out.find(" info:author                     timestamp=") != std::string::npos);
  CHECK(r.out.find("2 row(s)") != std::string::npos);
  CHECK(r.out.find("Took ") != std::string::npos);
  CHECK(r.out.find("TABLE\nblogtable\n1 row(s)") != std::string::npos);
}

namespace {

// Statements of a block, each ending with `;` (comment lines stay with their statement).
std::vector<std::string> statements(const std::string& block) {
  std::vector<std::string> out;
  std::string cur;
  for (const auto& l : lines(block)) {
    cur += l + "\n";
    if (!l.empty() && l.find_last_not_of(" \t") != std::string::npos && l[l.find_last_not_of(" \t")] == ';') {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (cur.find_first_not_of(" \t\n") != std::string::npos) out.push_back(cur);
  return out;
}

// The table groups the seed blocks make: dropped after each block, so that the next one
// starts from an empty store.
const char* const seed_groups[] = {"htable1", "htable2", "t1"};

// After a block: `list` (the tables it made), every seed group dropped, `list` again.
std::string block_trailer() {
  std::string out = "list\n";
  for (const char* g : seed_groups) out += std::string("DROP TABLEGROUP IF EXISTS ") + g + ";\n";
  return out + "list\n";
}

// Checks the output of units made as block + block_trailer(), in order: each statement of a
// block answers {"ok":true}, its `list` names tables, the drops answer {"ok":true} and the
// last `list` is empty. `names` label the units.
void check_units(const std::vector<std::string>& out, const std::vector<std::string>& names) {
  std::size_t i = 0;
  for (const auto& name : names) {
    INFO("unit " << name << ", output line " << i);
    std::size_t statements = 0;
    while (i < out.size() && out[i].find("\"tables\":") == std::string::npos) {
      CHECK(out[i] == "{\"ok\":true}");
      ++statements, ++i;
    }
    CHECK(statements >= 1);
    REQUIRE(i + std::size(seed_groups) + 1 < out.size());
    CHECK(out[i++].find("\"tables\":[\"") != std::string::npos);  // the statements made tables
    for (std::size_t g = 0; g < std::size(seed_groups); ++g) CHECK(out[i++] == "{\"ok\":true}");
    CHECK(out[i++] == "{\"ok\":true,\"tables\":[]}");
  }
  CHECK(i == out.size());
}

}  // namespace

// Each block (and each of seed 000's alternatives of one table) runs on a store the one
// before left empty, through one server and one embedded store.
TEST_CASE("every SQL block of seeds 000 and 001 runs through the shell, over RPC and embedded", "[shell][ddl]") {
  const std::string dir = CELLAR_SEED_SQL;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string script;
  std::vector<std::string> units;
  for (const auto& path : files) {
    const auto name = path.filename().string();
    const std::string block = read_file(path.string());
    // Blocks that bind to TABLEGROUP htable1 get the CREATE TABLEGROUP the document says
    // must come first.
    const bool binds =
        block.find("TABLEGROUP =") != std::string::npos && block.find("CREATE TABLEGROUP") == std::string::npos;
    const std::string prelude = binds ? "CREATE TABLEGROUP htable1;\n" : "";
    if (name == "seed000_02.sql") {
      // Alternatives of one table (seed 000's three t1$cf1 statements).
      for (auto& s : statements(block)) {
        script += prelude + s + block_trailer();
        units.push_back(name + " (" + std::to_string(units.size()) + ")");
      }
    } else if (name == "seed001_02.sql") {
      // CREATE TABLE ... LIKE needs its template first.
      script += read_file(dir + "/seed001_01.sql") + block + block_trailer();
      units.push_back(name);
    } else {
      script += prelude + block + block_trailer();
      units.push_back(name);
    }
  }
  CHECK(files.size() == 14);
  temp_dir data, emb;
  testproc::server srv(CELLAR_SERVER, data.path);
  auto rpc = shell_rpc(srv, script);
  auto local = shell_embedded(emb.path, script);
  INFO("rpc output:\n" << rpc.out);
  CHECK(rpc.exit_code == 0);
  CHECK(local.exit_code == 0);
  check_units(lines(rpc.out), units);
  CHECK(rpc.out == local.out);
}

TEST_CASE("invalid DDL and commands are refused with a clear error and change nothing", "[shell][ddl]") {
  temp_dir data;
  testproc::server srv(CELLAR_SERVER, data.path);
  const std::string setup =
      "CREATE TABLEGROUP g;\nCREATE TABLE g$f (K varbinary(1024), Q varbinary(256), T bigint, "
      "V varbinary(1048576), PRIMARY KEY(K, Q, T)) TABLEGROUP = g PARTITION BY KEY(K) PARTITIONS 3;\n"
      "put 'g', 'r1', 'f:q', 'v1'\n";
  REQUIRE(shell_rpc(srv, setup).exit_code == 0);
  struct refusal {
    std::string script;
    std::string code;
  };
  const std::vector<refusal> refusals = {
      {"CREATE TABLE g$x (RK varbinary(1024), Q varbinary(256), T bigint, V varbinary(1024), PRIMARY KEY(RK, Q, T));",
       "INVALID_ARGUMENT"},  // renamed K
      {"CREATE TABLE g$x (K varbinary(1024), T bigint, V varbinary(1024), PRIMARY KEY(K, T));", "INVALID_ARGUMENT"},
      {"CREATE TABLE g$x (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1024), PRIMARY KEY(K, T, Q));",
       "INVALID_ARGUMENT"},  // primary key order
      {"CREATE TABLE g$x (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1024), PRIMARY KEY(K, Q, T)) "
       "kv_attributes ='{\"HBase\": {\"TimeToLive\": -1}}';",
       "INVALID_ARGUMENT"},
      {"CREATE TABLE g$x (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1024), PRIMARY KEY(K, Q, T)) "
       "kv_attributes ='{\"Other\": {}}';",
       "INVALID_ARGUMENT"},
      {"CREATE TABLE g$x (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1024), PRIMARY KEY(K, Q, T)) "
       "TABLEGROUP = g PARTITION BY KEY(K) PARTITIONS 3 SUBPARTITION BY KEY(Q) SUBPARTITIONS 2;",
       "UNSUPPORTED"},
      {"CREATE TABLE g$x (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1024), "
       "K_PREFIX varbinary(1024) GENERATED ALWAYS AS (upper(K)), PRIMARY KEY(K, Q, T)) "
       "PARTITION BY KEY(K_PREFIX) PARTITIONS 3;",
       "UNSUPPORTED"},
      {"CREATE TABLE g$x (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(1024), PRIMARY KEY(K, Q, T)) "
       "TABLEGROUP = g PARTITION BY KEY(K) PARTITIONS 5;",
       "INVALID_ARGUMENT"},  // partitioning differs from the group's
      {"put 'nosuch', 'r', 'f:q', 'v'", "TABLE_NOT_FOUND"},
      {"put 'g', 'r', 'nosuch:q', 'v'", "FAMILY_NOT_FOUND"},
      {"get 'g', 'r1', {COLUMN => 'nosuch'}", "FAMILY_NOT_FOUND"},
      {"put 'g', 'r', 'f:q'", "INVALID_ARGUMENT"},
      {"put 'g', 'r', 'f:q', 'unterminated", "INVALID_ARGUMENT"},
      {"frobnicate 'g'", "INVALID_ARGUMENT"},
      {"incr 'g', 'r1', 'f:q', 1", "NOT_A_LONG"},
      // Moves need a cluster.
      {"move 'g/0', 'n1'", "UNSUPPORTED"},
      {"balancer", "UNSUPPORTED"},
      {"move 'g/0'", "INVALID_ARGUMENT"},
      {"move 'g/0', 'n1', 'n2'", "UNSUPPORTED"},
      {"move 'g/0', 'n1', 'n2', 'n3'", "INVALID_ARGUMENT"},
      {"transfer_leader 'g/0', 'n1'", "UNSUPPORTED"},
      {"transfer_leader 'g/0'", "INVALID_ARGUMENT"},
  };
  const std::string probe = "list\nscan 'g'\ndescribe 'g'\n";
  const auto before = shell_rpc(srv, probe).out;
  for (const auto& r : refusals) {
    INFO(r.script);
    auto out = shell_rpc(srv, r.script + "\nlist\n");
    INFO(out.out);
    CHECK(out.exit_code == 1);
    auto l = lines(out.out);
    REQUIRE(l.size() == 2);
    CHECK(l[0].rfind("{\"ok\":false,\"error\":\"" + r.code + "\",\"message\":\"", 0) == 0);
    CHECK(l[1].rfind("{\"ok\":true,\"tables\":", 0) == 0);  // the shell went on
  }
  CHECK(without_timestamps(shell_rpc(srv, probe).out) == without_timestamps(before));
}

TEST_CASE("the server survives malformed and oversized messages", "[shell][server]") {
  temp_dir data;
  testproc::server srv(CELLAR_SERVER, data.path, {"--max-message", "1MiB"});
  auto raw = [&](const std::string& bytes) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(srv.port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    CHECK(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    char buf[256];
    // The server closes the connection (read returns 0 or an error) rather than crash.
    (void)read(fd, buf, sizeof buf);
    close(fd);
  };
  raw(std::string(64, '\xff'));                                                     // garbage
  raw(std::string("\x00\x00\x00\x00\x00\x00\x00\x10", 8));                          // one segment of 2^28 words
  raw(std::string("\x00\x00\x00\x00\x02\x00\x00\x00", 8) + std::string(100, 'x'));  // truncated
  REQUIRE(srv.alive());
  auto r = shell_rpc(srv, "create 't', 'f'\nput 't', 'r', 'f:q', 'v'\nget 't', 'r'\n");
  CHECK(r.exit_code == 0);
  CHECK(lines(r.out).back().find("\"value\":\"v\"") != std::string::npos);
  // A value above the message limit closes that connection only.
  auto big = shell_rpc(srv, "put 't', 'big', 'f:q', '" + std::string(2 << 20, 'x') + "'\n");
  CHECK(big.exit_code == 1);
  CHECK(big.out.find("UNAVAILABLE") != std::string::npos);
  CHECK(shell_rpc(srv, "get 't', 'r'\n").exit_code == 0);
  CHECK(srv.stop() == 0);
}

TEST_CASE("SIGTERM takes a final snapshot: a restarted server has the data", "[shell][server]") {
  temp_dir data;
  {
    testproc::server srv(CELLAR_SERVER, data.path);
    REQUIRE(shell_rpc(srv, "create 't', 'f'\nput 't', 'r', 'f:q', 'kept'\n").exit_code == 0);
    CHECK(srv.stop() == 0);
  }
  testproc::server again(CELLAR_SERVER, data.path);
  auto r = shell_rpc(again, "get 't', 'r'\n");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"value\":\"kept\"") != std::string::npos);
}

TEST_CASE("a server with a token lets nobody in without it", "[shell][server]") {
  temp_dir data;
  testproc::server srv(CELLAR_SERVER, data.path, {"--token", "s3cret"});
  auto denied = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, "list\n");
  CHECK(denied.exit_code == 2);
  auto allowed = shell_rpc(srv, "list\n", {"--token", "s3cret"});
  CHECK(allowed.exit_code == 0);
  CHECK(allowed.out == "{\"ok\":true,\"tables\":[]}\n");
}

TEST_CASE("a damaged data file: the server refuses to start, naming it, unless --salvage", "[shell][server]") {
  temp_dir data;
  std::string script = "create 't', 'f'\n";
  // Letters from a generator: values that snapshot compression (snappy by default) cannot
  // shrink much, so the file spans many pages.
  std::uint32_t x = 12345;
  for (int i = 0; i < 3000; ++i) {
    std::string v(500, ' ');
    for (auto& ch : v) ch = static_cast<char>('a' + ((x = x * 1664525u + 1013904223u) >> 24) % 26);
    script += "put 't', 'row" + std::to_string(10000 + i) + "', 'f:q', '" + v + "'\n";
  }
  REQUIRE(shell_embedded(data.path, script).exit_code == 0);
  std::string file;
  for (const auto& e : fs::directory_iterator(data.path))
    if (e.path().filename().string().rfind("d", 0) == 0 && e.path().extension() == ".wt") file = e.path().string();
  REQUIRE(!file.empty());
  const auto size = fs::file_size(file);
  REQUIRE(size > 64 * 1024);
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    for (int i = 0; i < 4096; ++i) f.put('\x5a');
  }
  auto refused = testproc::run({"/bin/sh", "-c",
                                std::string("exec ") + CELLAR_SERVER + " --listen 127.0.0.1:0 --data " + data.path +
                                    " --snapshot-interval-ms 0 2>&1"},
                               "");
  CHECK(refused.exit_code == 2);
  CHECK(refused.out.find("CORRUPTION") != std::string::npos);
  CHECK(refused.out.find(file) != std::string::npos);
  CHECK(refused.out.find("--salvage") != std::string::npos);

  testproc::server srv(CELLAR_SERVER, data.path, {"--salvage"});
  auto counted = shell_rpc(srv, "count 't'\n");
  CHECK(counted.exit_code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(counted.out, m, std::regex("\"count\":([0-9]+)")));
  const int kept = std::stoi(m[1]);
  CHECK(kept > 0);
  CHECK(kept < 3000);
  CHECK(srv.stop() == 0);
}
