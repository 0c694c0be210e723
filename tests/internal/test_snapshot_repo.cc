// store/snapshot_files.h: a snapshot repository taking a snapshot a file at a time (the
// way a cluster node takes one, cluster/snapshot_service.h), in memory and in a directory.
#include <catch2/catch.hpp>

#include <string>

#include "../support/temp_dir.h"
#include "persist/codec.h"
#include "store/snapshot_files.h"

using namespace cellar;

TEST_CASE("a snapshot repo takes a snapshot a file at a time: it exists once committed", "[snapshot_repo]") {
  testsupport::made_dir dir("cellar-staged");
  for (const std::string& root : {std::string(), dir.path}) {
    INFO("store directory '" << root << "'");
    detail::snapshot_repo repo(root);
    detail::snapshot_manifest m;
    m.name = "s";
    m.table = "t";
    m.partitions = 1;
    const std::string schema = "schema bytes", cells = "cell bytes";
    m.files["schema"] = {schema.size(), 0, detail::crc32c(schema)};
    m.files["part-00000.cells"] = {cells.size(), 0, detail::crc32c(cells)};
    REQUIRE(repo.begin_staged("s").is_ok());
    REQUIRE(repo.stage("s", "schema", schema).is_ok());
    CHECK(repo.stage("s", "../elsewhere", cells).code() == code::invalid_argument);
    CHECK_FALSE(repo.manifest("s").is_ok());  // not a snapshot until committed
    REQUIRE(repo.stage("s", "part-00000.cells", cells).is_ok());
    REQUIRE(repo.commit_staged(m).is_ok());
    CHECK(repo.verify("s").is_ok());
    CHECK(repo.read("s", "part-00000.cells").value() == cells);
    CHECK(repo.commit_staged(m).code() == code::already_exists);
    // Starting again drops the copy of that name (the caller knows it is a leftover).
    REQUIRE(repo.begin_staged("s").is_ok());
    CHECK_FALSE(repo.manifest("s").is_ok());
  }
}
