// Every request and reply of the partition protocol round-trips through CAF's binary
// serializer (what the middleman sends to another node), and hostile bytes fail cleanly.
#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include <algorithm>
#include <limits>
#include <random>

#include "../filter/every_filter.h"
#include "partition/cell_stream.h"
#include "partition/memtable.h"
#include "partition/protocol.h"
#include "persist/codec.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

struct serial {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  serial() {
    cfg.set("scheduler.max-threads", 1);
    add_partition_protocol(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  template <class T>
  std::vector<char> save(T x) {
    std::vector<char> buf;
    caf::binary_serializer out(*sys, buf);
    auto err = out(x);
    REQUIRE_FALSE(err);
    return buf;
  }

  template <class T>
  caf::error load(const std::vector<char>& buf, T& x) {
    caf::binary_deserializer in(*sys, buf);
    return in(x);
  }

  // Saves, loads into a fresh value, and checks the loaded value saves to the same bytes.
  template <class T>
  T round_trip(const T& x) {
    auto bytes = save(x);
    T y{};
    auto err = load(bytes, y);
    REQUIRE_FALSE(err);
    CHECK(save(y) == bytes);
    return y;
  }
};

std::vector<batch_op> every_action() {
  read_options ro;
  ro.columns.add_column("f", "q");
  ro.columns.add_family("g");
  ro.max_versions = 3;
  ro.range = {5, 50};
  ro.max_per_family = 2;
  ro.offset_per_family = 1;
  get g("row-g");
  g.options = ro;
  g.exists_only();
  return {
      g,
      put("row-p", 42).add("f", "q", "v").add("g", std::string("\0\xff", 2), 7, "w").ttl(1500),
      deletion("row-d", 99).family("f").family_version("g", 3).column("f", "a").column("f", "b", 4).columns("g", "c"),
      increment("row-i").add("f", "n", -3).ttl(10).return_results(false),
      append("row-a").add("f", "s", "tail"),
      row_mutations("row-m").add(put("row-m").add("f", "q", "x")).add(deletion("row-m").columns("f", "y")),
      check_and_mutate("row-c", "f", "q")
          .if_matches(compare_op::greater_or_equal, "expected")
          .time_range(1, 9)
          .then(row_mutations("row-c").add(put("row-c").add("f", "q", "new"))),
      check_and_mutate("row-n", "f", "q").if_not_exists().then(put("row-n").add("f", "q", "first")),
  };
}

}  // namespace

TEST_CASE("batch requests and replies round-trip with every kind of action", "[protocol]") {
  serial s;
  batch_request req{17, every_action()};
  auto back = s.round_trip(req);
  CHECK(back.schema_version == 17);
  REQUIRE(back.ops.size() == req.ops.size());
  for (std::size_t i = 0; i < req.ops.size(); ++i) CHECK(back.ops[i].index() == req.ops[i].index());
  const auto& p = std::get<put>(back.ops[1]);
  CHECK(p.row == "row-p");
  CHECK(p.timestamp == 42);
  REQUIRE(p.entries.size() == 2);
  CHECK(p.entries[1].qualifier == std::string("\0\xff", 2));
  CHECK(p.ttl_ms_ == std::optional<std::int64_t>(1500));
  const auto& g = std::get<get>(back.ops[0]);
  CHECK(g.exists_only_);
  CHECK(g.options.range == time_range{5, 50});
  CHECK(g.options.columns.families.size() == 2);
  const auto& d = std::get<deletion>(back.ops[2]);
  REQUIRE(d.entries.size() == 5);
  CHECK(d.entries[3].what == deletion::scope::column_version);
  const auto& c = std::get<check_and_mutate>(back.ops[6]);
  CHECK(c.op == compare_op::greater_or_equal);
  CHECK(c.expected == std::optional<std::string>("expected"));
  CHECK(std::get<check_and_mutate>(back.ops[7]).expected == std::nullopt);
  CHECK(std::holds_alternative<deletion>(std::get<row_mutations>(back.ops[5]).mutations[1]));

  batch_reply rep;
  rep.results.resize(3);
  rep.results[0].row.row = "r";
  rep.results[0].row.exists = true;
  rep.results[0].row.cells.push_back({"r", "f", "q", 9, "v"});
  rep.results[1].st = {code::not_a_long, "Field is not a long, it's 3 bytes wide"};
  rep.results[2].processed = true;
  auto rb = s.round_trip(rep);
  CHECK(rb.results[0].row.cells.at(0) == rep.results[0].row.cells.at(0));
  CHECK(rb.results[1].st == rep.results[1].st);
  CHECK(rb.results[2].processed);
}

TEST_CASE("scan, admin and their replies round-trip", "[protocol]") {
  serial s;
  scan_request sr{3, {}};
  sr.page.from = std::string("from");
  sr.page.from_inclusive = false;
  sr.page.stop = "stop";
  sr.page.reversed = true;
  sr.page.max_rows = 12;
  sr.page.options.max_versions = 2;
  sr.page.options.cell_ttls = true;
  auto sb = s.round_trip(sr);
  CHECK(sb.page.from == std::optional<std::string>("from"));
  CHECK(sb.page.max_rows == 12);
  CHECK(sb.page.options.cell_ttls);
  scan_request open{3, {}};
  CHECK(s.round_trip(open).page.from == std::nullopt);

  scan_reply rep;
  rep.st = {code::unavailable, "gone"};
  rep.page.rows.push_back(row_result{"r", {{"r", "f", "q", 1, "v"}, {"r", "f", "q", 0, "w", 2500}}, true, true});
  rep.page.last_row = "r";
  rep.page.examined_any = true;
  auto rb = s.round_trip(rep);
  CHECK(rb.st.code() == code::unavailable);
  CHECK(rb.page.rows.at(0).partial);
  CHECK(rb.page.rows.at(0).cells == rep.page.rows.at(0).cells);  // each cell's ttl_ms with it

  table_schema t;
  t.name = "g";
  t.uid = 5;
  t.version = 9;
  t.partitioned = true;
  t.partitioning = partition_spec::range_bounds({"m", "t"});
  t.families = {{family_descriptor{"f", 3, 60, 1 << 20, family_kind::normal}, 1},
                {family_descriptor{"ts", 0, 0, 512u << 20, family_kind::time_series}, 2}};
  auto tb = s.round_trip(adopt_schema_request{t});
  CHECK(tb.schema.partitioning == t.partitioning);
  CHECK(tb.schema.families.at(1).desc == t.families.at(1).desc);
  CHECK(s.round_trip(drop_families_request{{1, 2, 3}}).family_ids.size() == 3);
  s.round_trip(reclaim_request{});
  CHECK(s.round_trip(reclaim_reply{77}).cells == 77);
  s.round_trip(stats_request{});
  CHECK(s.round_trip(stats_reply{{10, 2000}}).stats.bytes == 2000);
  s.round_trip(cut_request{});
  s.round_trip(stop_request{});
  CHECK(s.round_trip(admin_reply{{code::io_error, "disk"}}).st.code() == code::io_error);

  cut_reply cut;
  cut.delta.map->put(encode_cell_key(1, "r", "q", 5), 99, "value", true);
  cut.delta.map->erase(encode_cell_key(1, "r", "z", 5));
  auto cb = s.round_trip(cut);
  REQUIRE(cb.delta.map->size() == 2);
  auto first = cb.delta.map->begin();
  CHECK(first->second.present);
  CHECK(first->second.fresh);
  CHECK(first->second.value() == "value");
  CHECK_FALSE(std::next(first)->second.present);
  auto mb = s.round_trip(merge_delta_request{cut.delta});
  CHECK(mb.delta.map->size() == 2);

  // A cut with a bulk load crosses as the one delta it makes (loaded_cells.h: materialize).
  std::string records;
  put_bytes(records, encode_cell_key(1, "r", "q", 5));
  put_u64(records, 7);
  put_bytes(records, "loaded");
  cut.delta.loaded.push_back(
      {std::make_shared<delta_map>(), std::make_shared<const loaded_cells>(records, loaded_cells::id_map{{1, 1}}, 1)});
  cut.delta.map = std::make_shared<delta_map>();
  cut.delta.map->put(encode_cell_key(1, "s", "q", 5), 0, "after");
  auto lb = s.round_trip(cut);
  CHECK(lb.delta.loaded.empty());
  REQUIRE(lb.delta.map->size() == 2);
  CHECK(lb.delta.map->begin()->second.value() == "loaded");
  CHECK(std::next(lb.delta.map->begin())->second.value() == "after");
}

TEST_CASE("filters cross as their text; refused ones as their refusal", "[protocol][filter]") {
  serial s;
  auto through = [&](const filter& f) {
    scan_request r{1, {}};
    r.page.options.filter = f;
    check_and_mutate c("row", "f", "q");
    c.filter = f;
    batch_request b{1, {std::move(c)}};
    auto rb = s.round_trip(b);
    auto cb = std::get<check_and_mutate>(rb.ops.at(0)).filter;
    auto sb = s.round_trip(r).page.options.filter;
    REQUIRE(cb.has_value());
    REQUIRE(sb.has_value());
    CHECK(*cb == *sb);
    return *sb;
  };
  for (const auto& f : filter_test::every_filter()) {
    INFO(to_string(f));
    CHECK(through(f) == f);
  }
  // What the filter language refuses but the API builds.
  filter ordered_regex = value_filter{compare_op::less, comparator::regex("a.*")};
  CHECK(through(ordered_regex) == ordered_regex);
  // A filter check() refuses arrives refused with the same error, whether made by
  // filter::invalid or built with bad arguments.
  auto inv = through(filter::invalid({code::invalid_argument, "bad text"}));
  CHECK(inv.check().message() == "bad text");
  filter negative = page_filter{-1};
  CHECK(through(negative).check() == negative.check());
  filter bad_regex = value_filter{compare_op::equal, comparator::regex("(a)\\1")};
  CHECK(through(bad_regex).check() == bad_regex.check());
  CHECK_FALSE(through(bad_regex).check().is_ok());
  // No filter stays no filter.
  CHECK_FALSE(s.round_trip(scan_request{1, {}}).page.options.filter.has_value());
}

TEST_CASE("hostile bytes fail to load, never crash", "[protocol]") {
  serial s;
  auto bytes = s.save(batch_request{1, every_action()});
  // Every truncation fails.
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    std::vector<char> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    batch_request x;
    CHECK(s.load(cut, x));
  }
  // An action index past the variant's alternatives.
  batch_request one{1, {get("r")}};
  auto b = s.save(one);
  // Layout: u64 version, u64 count (varint in CAF: 1 byte), u8 index ...
  bool changed = false;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b[i] == 0 && i > 8) {  // the first zero after the version is the get's index
      b[i] = 9;
      changed = true;
      break;
    }
  REQUIRE(changed);
  batch_request x;
  CHECK(s.load(b, x));
  // A status code past the last one.
  auto st = s.save(admin_reply{{code::io_error, "m"}});
  st[0] = static_cast<char>(0x7f);
  st[1] = static_cast<char>(0x7f);
  admin_reply ar;
  CHECK(s.load(st, ar));
  // Filter text that does not parse.
  scan_request sr{1, {}};
  sr.page.options.filter = filter(prefix_filter{"AAAA"});
  auto fb = s.save(sr);
  auto at = std::search(fb.begin(), fb.end(), std::begin("AAAA"), std::begin("AAAA") + 4);
  REQUIRE(at != fb.end());
  *(at - 1) = ')';  // PrefixFilter()AAAA'): no longer a filter
  scan_request fx;
  CHECK(s.load(fb, fx));
}

TEST_CASE("a memtable's cells written as a stream are the bytes of a delta of them", "[protocol]") {
  serial z;
  memory_pool pool;
  memtable m(&pool);
  table_schema schema;
  schema.name = "t";
  schema.partitioned = true;
  schema.families = {{family_descriptor{"a", 0, 0}, 1}, {family_descriptor{"b", 0, 1000}, 2}};
  // Rows, qualifiers and values of every length class of the stream's length prefix (one,
  // two and three bytes), binary bytes, versions, a TTL, and families written out of order.
  std::mt19937 rng(7);
  auto bytes_of = [&](std::size_t n) {
    std::string out(n, '\0');
    for (auto& c : out) c = static_cast<char>(rng());
    return out;
  };
  for (std::size_t len : {0, 1, 12, 13, 127, 128, 16383, 16384, 70000}) {
    const std::string row = "r" + std::to_string(len) + bytes_of(len % 5);
    REQUIRE(m.apply(schema, put(row).add("b", bytes_of(len % 130), 7, bytes_of(len)), 100).is_ok());
    REQUIRE(m.apply(schema, put(row).add("a", "q", 1, bytes_of(len)).add("a", "q", 2, "v2"), 100).is_ok());
  }
  REQUIRE(m.apply(schema, put(std::string("\0\xff", 2)).add("a", std::string("\0", 1), 3, "z"), 100).is_ok());

  std::vector<char> streamed;
  {
    caf::binary_serializer sink(*z.sys, streamed);
    REQUIRE_FALSE(write_cells(*z.sys, sink, streamed, m));
  }
  delta_handle copied;
  std::string last;
  REQUIRE(m.copy_cells({}, std::numeric_limits<std::size_t>::max(), *copied.map, last));
  CHECK(copied.map->size() == m.stats().cells);
  CHECK(streamed == z.save(copied));

  // What a restore reads back: every cell, with its expiry.
  delta_handle back;
  REQUIRE_FALSE(z.load(streamed, back));
  CHECK(back.map->size() == copied.map->size());
  CHECK(z.save(back) == streamed);
}
