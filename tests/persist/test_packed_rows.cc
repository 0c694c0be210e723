// Small rows are packed into one block of bytes in memory (partition/packed_row.h), wide
// ones kept in a B-tree, and a row moves from one to the other as it grows. Whatever the
// layout, a store reads back every cell it was given, before and after a snapshot and a
// restart, and after a log replayed over a snapshot: binary rows, qualifiers and values of
// every size class at the layout's boundaries (a varint's byte, the 12 bytes a B-tree slot
// holds in place, the block's 2 KB), versions beyond MaxVersions, cell TTLs, deletes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../support/store_fixture.h"
#include "cellar/store.h"

using namespace cellar;

namespace {

using testsupport::open_ok;
using testsupport::temp_dir;

// Every cell of `table` with its TTL, every version, in scan order, as one comparable value.
using seen_cell = std::tuple<std::string, std::string, std::string, std::int64_t, std::string, std::int64_t>;
std::vector<seen_cell> contents(store& s, const std::string& table) {
  auto t = s.open_table(table);
  REQUIRE(t.is_ok());
  auto sc = t->scan(scan().all_versions().with_cell_ttls());
  REQUIRE(sc.is_ok());
  auto rows = sc->all();
  REQUIRE(rows.is_ok());
  std::vector<seen_cell> out;
  for (auto& r : *rows)
    for (auto& c : r.cells) out.emplace_back(c.row, c.family, c.qualifier, c.timestamp, c.value, c.ttl_ms);
  return out;
}

std::string bytes(std::size_t n, std::uint32_t seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((seed * 131 + i * 7) & 0xff);
  return s;
}

const std::vector<std::string> rows = {std::string(1, '\0'), "a", "\xff\xfe", std::string(40, 'k'), "wide"};
const std::vector<std::string> quals = {"", std::string("\0\1", 2), std::string(127, 'q'), std::string(128, 'q')};
const std::vector<std::size_t> value_sizes = {0, 1, 12, 13, 127, 128, 1000, 2100};

// Writes the cells, and the model of what the table then holds (family f keeps 3 versions).
void write_all(table& t, std::map<std::tuple<std::string, std::string, std::int64_t>, std::string>& model) {
  std::uint32_t n = 0;
  for (const auto& r : rows) {
    const bool wide = r == "wide";
    const std::size_t columns = wide ? 100 : quals.size();
    for (std::size_t c = 0; c < columns; ++c) {
      const std::string q = wide ? "c" + std::to_string(1000 + c) : quals[c];
      for (std::int64_t ts = 1; ts <= 4; ++ts, ++n) {
        // Sizes cycle so that each row gets small and large values; the first rows stay
        // within a block, the ones given 1000- and 2100-byte values do not.
        const std::string v = bytes(wide ? 10 : value_sizes[n % value_sizes.size()], n);
        put p(r);
        p.add("f", q, ts, v);
        if (n % 3 == 0) p.ttl(10'000'000'000'000);  // a cell TTL, far from expiring (the cells are dated 1970)
        REQUIRE(t.put(p).is_ok());
        model[{r, q, ts}] = v;
        if (ts == 4) model.erase({r, q, 1});  // MaxVersions 3
      }
    }
  }
}

}  // namespace

TEST_CASE("packed and wide rows read back exactly across a snapshot, a restart and a replayed log",
          "[persist][packed]") {
  for (auto mode : {durability::snapshot, durability::log_sync}) {
    CAPTURE(static_cast<int>(mode));
    temp_dir dir;
    const auto o = testsupport::store_options_for(dir.path, mode);
    std::vector<seen_cell> written;
    {
      auto s = open_ok(o);
      table_descriptor d{"pk", partition_spec::hash(3), {{"f"}}};
      d.families[0].max_versions = 3;
      REQUIRE(s->create_table(d, schema_origin::hbase_shell).is_ok());
      auto t = s->open_table("pk").value();
      std::map<std::tuple<std::string, std::string, std::int64_t>, std::string> model;
      write_all(t, model);
      written = contents(*s, "pk");
      // What the scan returns is the model: every version kept, and only those.
      std::map<std::tuple<std::string, std::string, std::int64_t>, std::string> seen;
      for (const auto& c : written) {
        CHECK(std::get<1>(c) == "f");
        seen[{std::get<0>(c), std::get<2>(c), std::get<3>(c)}] = std::get<4>(c);
      }
      CHECK(seen.size() == written.size());
      CHECK(seen == model);
      REQUIRE(s->snapshot().is_ok());
      if (mode == durability::log_sync) {
        // After the snapshot, changes only the log holds: a packed row's value grows past
        // the block (the row moves to a B-tree), a cell of another is deleted, a wide
        // row's cell changes.
        REQUIRE(t.put(put("a").add("f", "", 9, bytes(3000, 9))).is_ok());
        REQUIRE(t.remove(deletion(std::string(1, '\0')).column("f", quals[1], 3)).is_ok());
        REQUIRE(t.put(put("wide").add("f", "c1000", 9, "new")).is_ok());
        written = contents(*s, "pk");
      }
    }
    auto s = open_ok(o);
    CHECK(contents(*s, "pk") == written);
  }
}
