// store/snapshot_files.h: a snapshot repository taking a snapshot a file at a time (the
// way a cluster node takes one, cluster/snapshot_service.h), in memory and in a directory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "../support/temp_dir.h"
#include "persist/codec.h"
#include "persist/delta_map.h"
#include "persist/loaded_cells.h"
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
    CHECK(repo.read_piece("s", "part-00000.cells", 5, 3, false).value() == "byt");
    CHECK(repo.read_piece("s", "part-00000.cells", 8, 100, false).value() == "es");
    CHECK(repo.read_piece("s", "part-00000.cells", 10, 100, false).value().empty());
    CHECK(repo.read_piece("s", "other", 0, 100, false).code() == code::not_found);
    CHECK(repo.commit_staged(m).code() == code::already_exists);
    // Starting again drops the copy of that name (the caller knows it is a leftover).
    REQUIRE(repo.begin_staged("s").is_ok());
    CHECK_FALSE(repo.manifest("s").is_ok());
  }
}

TEST_CASE("a snapshot repo stages a file in pieces, in order, and reads it back in pieces", "[snapshot_repo]") {
  testsupport::made_dir dir("cellar-pieces");
  for (const std::string& root : {std::string(), dir.path}) {
    INFO("store directory '" << root << "'");
    detail::snapshot_repo repo(root);
    CHECK(repo.stage("p", "part-00000.cells", "abc", 0).code() == code::not_found);  // not begun
    REQUIRE(repo.begin_staged("p").is_ok());
    REQUIRE(repo.stage("p", "part-00000.cells", "abc", 0).is_ok());
    CHECK(repo.stage("p", "part-00000.cells", "xyz", 2).code() == code::invalid_argument);  // overlaps
    CHECK(repo.stage("p", "part-00000.cells", "xyz", 4).code() == code::invalid_argument);  // leaves a gap
    REQUIRE(repo.stage("p", "part-00000.cells", "defg", 3).is_ok());
    REQUIRE(repo.stage("p", "part-00000.cells", "", 7).is_ok());
    CHECK(repo.read_piece("p", "part-00000.cells", 0, 100, true).value() == "abcdefg");
    CHECK(repo.read_piece("p", "part-00000.cells", 2, 3, true).value() == "cde");
    CHECK(repo.read_piece("p", "part-00000.cells", 0, 100, false).code() == code::not_found);  // not kept yet
    // Offset 0 starts the file again.
    REQUIRE(repo.stage("p", "part-00000.cells", "new", 0).is_ok());
    CHECK(repo.read_piece("p", "part-00000.cells", 0, 100, true).value() == "new");
    detail::snapshot_manifest m;
    m.name = "p";
    m.table = "t";
    m.partitions = 1;
    m.files["part-00000.cells"] = {3, 0, detail::crc32c("new")};
    m.files["schema"] = {0, 0, detail::crc32c("")};
    REQUIRE(repo.stage("p", "schema", "", 0).is_ok());
    REQUIRE(repo.commit_staged(m).is_ok());
    CHECK(repo.read("p", "part-00000.cells").value() == "new");
    // A writer of staged files: a file it appends to starts empty.
    CHECK(repo.write_staged("none", [](detail::snapshot_writer&) { return status::ok(); }).code() == code::not_found);
    REQUIRE(repo.begin_staged("w").is_ok());
    REQUIRE(repo.stage("w", "part-00000.cells", "old bytes", 0).is_ok());
    REQUIRE(repo.write_staged("w",
                              [](detail::snapshot_writer& w) -> status {
                                if (auto st = w.append("part-00000.cells", "new "); !st) return st;
                                return w.append("part-00000.cells", "bytes");
                              })
                .is_ok());
    CHECK(repo.read_piece("w", "part-00000.cells", 0, 100, true).value() == "new bytes");
    // A staged set abandoned leaves nothing to read.
    REQUIRE(repo.begin_staged("q").is_ok());
    REQUIRE(repo.stage("q", "part-00000.cells", "abc", 0).is_ok());
    repo.abandon_staged("q");
    CHECK(repo.read_piece("q", "part-00000.cells", 0, 100, true).code() == code::not_found);
    CHECK(repo.stage("q", "part-00000.cells", "abc", 3).code() == code::not_found);
  }
}

TEST_CASE("a snapshot repo takes a snapshot whose files are written as their bytes come, all or nothing",
          "[snapshot_repo]") {
  testsupport::made_dir dir("cellar-streamed");
  for (const std::string& root : {std::string(), dir.path}) {
    INFO("store directory '" << root << "'");
    detail::snapshot_repo repo(root);
    const std::string schema = "schema bytes", cells = "cell bytes";
    auto make = [&](detail::snapshot_writer& w) -> result<detail::snapshot_manifest> {
      detail::snapshot_manifest m;
      m.name = "s";
      m.table = "t";
      m.partitions = 1;
      m.files["schema"] = {schema.size(), 0, detail::crc32c(schema)};
      m.files["part-00000.cells"] = {cells.size(), 0, detail::crc32c(cells)};
      // Two files appended to in turn; one read back and written again.
      if (auto st = w.append("part-00000.cells", "cell "); !st) return st;
      if (auto st = w.append("schema", schema); !st) return st;
      if (auto st = w.append("part-00000.cells", "bites"); !st) return st;
      auto now = w.contents("part-00000.cells");
      if (!now) return now.error();
      CHECK(now->data == "cell bites");
      // Between two files: not a snapshot yet, and its name is held.
      CHECK_FALSE(repo.manifest("s").is_ok());
      CHECK(repo.put(m, {{"schema", schema}}).code() == code::already_exists);
      if (auto st = w.replace("part-00000.cells", {now->data.substr(0, 5), "bytes"}); !st) return st;
      return m;
    };
    // A failure midway leaves nothing: no snapshot, no staging directory, the name free.
    auto fails = [&](detail::snapshot_writer& w) -> result<detail::snapshot_manifest> {
      REQUIRE(w.append("schema", schema).is_ok());
      return status{code::io_error, "the disk is full"};
    };
    CHECK(repo.put_streamed("s", fails).code() == code::io_error);
    CHECK_FALSE(repo.manifest("s").is_ok());
    if (!root.empty()) CHECK_FALSE(std::filesystem::exists(root + "/snapshots/.new-s"));
    REQUIRE(repo.put_streamed("s", make).is_ok());
    CHECK(repo.verify("s").is_ok());
    CHECK(repo.read("s", "schema").value() == schema);
    CHECK(repo.read("s", "part-00000.cells").value() == cells);
    if (!root.empty()) CHECK_FALSE(std::filesystem::exists(root + "/snapshots/s/part-00000.cells.next"));
    bool made = false;
    CHECK(repo.put_streamed("s",
                            [&](detail::snapshot_writer&) -> result<detail::snapshot_manifest> {
                              made = true;
                              return status{code::internal, "never called"};
                            })
              .code() == code::already_exists);
    CHECK_FALSE(made);
  }
}

TEST_CASE("a malformed chunk of copied records is refused, not cut short", "[snapshot_repo]") {
  std::string chunk;
  detail::append_cell_record(chunk, "key1", 0, "value");
  detail::append_cell_record(chunk, "key2", 0, "value");
  chunk.resize(chunk.size() - 2);  // the last record cut short
  std::deque<std::string> scratch;
  std::vector<std::string_view> chunks{chunk};
  auto pieces = detail::cell_file_pieces({chunks, nullptr}, {}, nullptr, scratch);
  CHECK(pieces.code() == code::corruption);
}

TEST_CASE("a partition copied in chunks of records makes the cell file its merged copy would", "[snapshot_repo]") {
  using detail::delta_map;
  std::mt19937 rng(11);
  // Keys as encoded cell keys start: a big-endian family id, then bytes.
  auto key_of = [](std::uint32_t family, int row) {
    std::string k;
    detail::put_u32(k, family);
    k += "row" + std::to_string(100000 + row);
    return k;
  };
  for (int round = 0; round < 50; ++round) {
    // Cells of families 1 and 2 in chunks of up to 7 keys, each after the one before.
    std::vector<std::string> keys;
    for (std::uint32_t f : {1u, 2u})
      for (int r = 0; r < 40; ++r)
        if (rng() % 3 != 0) keys.push_back(key_of(f, 2 * r));  // odd rows are left for new keys
    std::sort(keys.begin(), keys.end());
    struct {
      std::vector<std::shared_ptr<const delta_map>> chunks;
      std::shared_ptr<const delta_map> changes;
    } cells;
    delta_map merged;
    for (std::size_t i = 0; i < keys.size();) {
      auto chunk = std::make_shared<delta_map>();
      for (std::size_t end = std::min(keys.size(), i + 1 + rng() % 7); i < end; ++i) {
        const std::string v = "v" + std::to_string(rng() % 1000);
        chunk->put(keys[i], static_cast<std::int64_t>(rng() % 3), v);
      }
      for (auto it = chunk->begin(); it != chunk->end(); ++it)
        merged.put(it->first.bytes, it->second.expires_at, it->second.value());
      cells.chunks.push_back(chunk);
    }
    // Changes since: replaced and erased copied keys, new keys between, before and after.
    auto changes = std::make_shared<delta_map>();
    for (int c = 0; c < 15; ++c) {
      const std::string k = key_of(1 + rng() % 3, static_cast<int>(rng() % 82) - 1);
      if (rng() % 3 == 0) {
        changes->erase(k);
        merged.erase(k);
      } else {
        const std::string v = "changed" + std::to_string(c);
        changes->put(k, 7, v);
        merged.put(k, 7, v);
      }
    }
    if (round % 5 != 0) cells.changes = changes;
    if (round % 5 == 0) {  // no changes: the merged copy without them
      merged = delta_map();
      for (const auto& ch : cells.chunks)
        for (auto it = ch->begin(); it != ch->end(); ++it)
          merged.put(it->first.bytes, it->second.expires_at, it->second.value());
    }
    if (round % 7 == 3 && cells.chunks.size() > 1)
      std::swap(cells.chunks.front(), cells.chunks.back());  // out of order
    for (const std::set<std::uint32_t>& families : {std::set<std::uint32_t>{}, std::set<std::uint32_t>{2}}) {
      std::uint64_t n_merged = 0;
      const std::string whole = detail::encode_cells(merged, families, &n_merged);
      INFO("round " << round);
      // The same chunks as cell file records (a named snapshot's copy), written as pieces.
      std::vector<std::string> held;
      for (const auto& ch : cells.chunks) {
        std::string& r = held.emplace_back();
        for (auto it = ch->begin(); it != ch->end(); ++it)
          detail::append_cell_record(r, it->first.bytes, it->second.expires_at, it->second.value());
      }
      detail::record_chunks records;
      records.changes = cells.changes;
      for (const auto& r : held) records.chunks.push_back(r);
      std::deque<std::string> scratch;
      std::uint64_t n_records = 0;
      std::string joined;
      auto pieces = detail::cell_file_pieces(records, families, &n_records, scratch);
      REQUIRE(pieces.is_ok());
      for (auto piece : *pieces) joined.append(piece);
      CHECK(joined == whole);
      CHECK(n_records == n_merged);
      // Without the header: the records alone (a chunk added to a file already begun).
      std::string records_only;
      auto bare = detail::cell_file_pieces(records, families, nullptr, scratch, false);
      REQUIRE(bare.is_ok());
      for (auto piece : *bare) records_only.append(piece);
      CHECK(std::string(detail::cell_file_header()) + records_only == whole);
    }
  }
}
