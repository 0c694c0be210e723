// The shell's snapshot commands, through a cellar-server (--connect, the Cap'n Proto API)
// and embedded: the same script, the same answers.
#include <catch2/catch.hpp>

#include <regex>

#include "../shell/process.h"

namespace {

using testproc::temp_dir;

bool has(const std::string& line, const std::string& what) { return line.find(what) != std::string::npos; }

const std::string script = R"(create 't', {NAME => 'f', VERSIONS => 3}
put 't', 'r1', 'f:a', 'v1'
put 't', 'r2', 'f:a', 'v2'
snapshot 't', 's1'
put 't', 'r3', 'f:a', 'v3'
list_snapshots
list_table_snapshots 't'
restore_snapshot 's1'
disable 't'
restore_snapshot 's1'
enable 't'
scan 't'
clone_snapshot 's1', 'c'
scan 'c'
snapshot 't', 's1'
delete_snapshot 's1'
list_snapshots 's.*'
snapshot
snapshot 't'
help 'snapshot'
)";

void check_session(const std::vector<std::string>& l, bool persistent) {
  REQUIRE(l.size() == 20);
  for (int i : {0, 1, 2, 3, 4, 8, 9, 10, 12, 15}) {
    INFO(i << ": " << l[static_cast<std::size_t>(i)]);
    CHECK(l[static_cast<std::size_t>(i)] == "{\"ok\":true}");
  }
  CHECK(has(l[5], R"("name":"s1","table":"t")"));
  CHECK(has(l[6], R"("name":"s1")"));
  CHECK(has(l[7], R"("error":"TABLE_NOT_DISABLED")"));
  CHECK(has(l[11], R"("row":"r1")"));
  CHECK(has(l[11], R"("row":"r2")"));
  CHECK_FALSE(has(l[11], R"("row":"r3")"));
  CHECK(has(l[13], R"("row":"r2")"));
  CHECK_FALSE(has(l[13], R"("row":"r3")"));
  CHECK(has(l[14], R"("error":"ALREADY_EXISTS")"));
  CHECK(has(l[16], R"("snapshots":[])"));
  // The store's own snapshot still works (and needs a directory).
  if (persistent) CHECK(has(l[17], R"("ok":true)"));
  CHECK(has(l[18], R"("error":"INVALID_ARGUMENT")"));
  CHECK(has(l[19], "persistence snapshot"));
}

}  // namespace

TEST_CASE("snapshot, list, restore, clone and delete through the shell, over RPC and embedded", "[backup][shell]") {
  temp_dir data, emb;
  testproc::server srv(CELLAR_SERVER, data.path);
  auto rpc = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, script);
  auto local = testproc::run({CELLAR_SHELL, "--embedded", emb.path, "--json"}, script);
  INFO(rpc.out);
  check_session(testproc::lines(rpc.out), true);
  INFO(local.out);
  check_session(testproc::lines(local.out), true);
}

TEST_CASE("the shell's help tells the two snapshots apart", "[backup][shell]") {
  temp_dir emb;
  auto out = testproc::run({CELLAR_SHELL, "--embedded", emb.path}, "help 'snapshots'\n");
  CHECK(has(out.out, "snapshot 'sourceTable', 'snapshotName'"));
  CHECK(has(out.out, "persistence snapshot"));
  CHECK(has(out.out, "restore_snapshot"));
}
