// Limits, error codes and atomic refusal: every refused request leaves the store as it was.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cellar/cluster_admin.h"
#include "cellar/store.h"
#include "status_checks.h"

namespace {

using cellar::code;
using cellar::family_descriptor;
using cellar::row_result;
using cellar::schema_origin;
using test_util::be64;
using test_util::describe_status;

constexpr std::int64_t kT0 = 1'700'000'000'000;

family_descriptor fam(std::string name, std::uint32_t max_versions = 0,
                      std::size_t max_value = cellar::default_value_bytes) {
  family_descriptor f;
  f.name = std::move(name);
  f.max_versions = max_versions;
  f.max_value_bytes = max_value;
  return f;
}

struct fixture {
  std::shared_ptr<std::atomic<std::int64_t>> now = std::make_shared<std::atomic<std::int64_t>>(kT0);
  std::unique_ptr<cellar::store> store;

  explicit fixture(std::uint64_t memory_limit = 0) {
    cellar::store_options o;
    o.worker_threads = 2;
    o.memory_limit_bytes = memory_limit;
    o.maintenance_interval = std::chrono::milliseconds(0);
    auto n = now;
    o.clock = [n] { return n->load(); };
    auto s = cellar::store::open(std::move(o));
    REQUIRE_OK(s);
    store = std::move(s.value());
  }

  cellar::table make(const std::string& name, std::vector<family_descriptor> fams,
                     cellar::partition_spec p = cellar::partition_spec::single()) {
    cellar::table_descriptor d;
    d.name = name;
    d.partitioning = std::move(p);
    d.families = std::move(fams);
    REQUIRE_OK(store->create_table(d, schema_origin::oceanbase_ddl));
    auto t = store->open_table(name);
    REQUIRE_OK(t);
    return t.value();
  }
};

row_result get_ok(cellar::table& t, const cellar::get& g) {
  auto r = t.get(g);
  REQUIRE_OK(r);
  return r.value();
}

// Every cell of the table, all versions, as "row/f:q@ts=size:prefix".
std::vector<std::string> dump(cellar::table& t) {
  auto sc = t.scan(cellar::scan().all_versions());
  REQUIRE_OK(sc);
  auto all = sc->all();
  REQUIRE_OK(all);
  std::vector<std::string> out;
  for (auto& r : all.value())
    for (auto& c : r.cells)
      out.push_back(c.row + "/" + c.family + ":" + c.qualifier + "@" + std::to_string(c.timestamp) + "=" +
                    std::to_string(c.value.size()) + ":" + c.value.substr(0, 16));
  return out;
}

// Scan errors may surface when the scan is opened or on the first fetch.
cellar::code scan_code(cellar::table& t, const cellar::scan& s) {
  auto sc = t.scan(s);
  if (!sc.is_ok()) return sc.code();
  auto all = sc->all();
  return all.code();
}

}  // namespace

TEST_CASE("cluster administration of a single store is UNSUPPORTED", "[limits]") {
  fixture fx;
  auto admin = cellar::cluster_admin::of(*fx.store);
  REQUIRE_FALSE(admin);
  CHECK(admin.error().code() == code::unsupported);
}

TEST_CASE("row key limits: empty is INVALID_ARGUMENT, above 1024 bytes TOO_LARGE", "[limits]") {
  fixture fx;
  auto t = fx.make("rk", {fam("f")});
  REQUIRE_OK(t.put(cellar::put("keep").add("f", "q", 1, "v")));
  const auto before = dump(t);

  const std::string max_row(cellar::max_row_key_bytes, 'k');
  const std::string long_row(cellar::max_row_key_bytes + 1, 'k');

  REQUIRE_CODE(t.put(cellar::put("").add("f", "q", "v")), code::invalid_argument);
  REQUIRE_CODE(t.put(cellar::put(long_row).add("f", "q", "v")), code::too_large);
  REQUIRE_CODE(t.get(cellar::get("")), code::invalid_argument);
  REQUIRE_CODE(t.get(cellar::get(long_row)), code::too_large);
  REQUIRE_CODE(t.remove(cellar::deletion("")), code::invalid_argument);
  REQUIRE_CODE(t.remove(cellar::deletion(long_row)), code::too_large);
  REQUIRE_CODE(t.increment(cellar::increment("").add("f", "n", 1)), code::invalid_argument);
  REQUIRE_CODE(t.increment(cellar::increment(long_row).add("f", "n", 1)), code::too_large);
  REQUIRE_CODE(t.increment_column_value("", "f", "n", 1), code::invalid_argument);
  REQUIRE_CODE(t.append(cellar::append("").add("f", "s", "x")), code::invalid_argument);
  REQUIRE_CODE(t.append(cellar::append(long_row).add("f", "s", "x")), code::too_large);
  REQUIRE_CODE(t.mutate_row(cellar::row_mutations("").add(cellar::put("").add("f", "q", "v"))), code::invalid_argument);
  REQUIRE_CODE(t.check_and_mutate(
                   cellar::check_and_mutate("", "f", "q").if_not_exists().then(cellar::put("").add("f", "q", "v"))),
               code::invalid_argument);
  REQUIRE(dump(t) == before);

  // Exactly 1024 bytes is fine.
  REQUIRE_OK(t.put(cellar::put(max_row).add("f", "q", 1, "v")));
  REQUIRE(get_ok(t, cellar::get(max_row)).cells.size() == 1);
}

TEST_CASE("qualifier above 256 bytes is TOO_LARGE", "[limits]") {
  fixture fx;
  auto t = fx.make("ql", {fam("f")});
  const std::string max_q(cellar::max_qualifier_bytes, 'q');
  const std::string long_q(cellar::max_qualifier_bytes + 1, 'q');
  REQUIRE_CODE(t.put(cellar::put("r").add("f", long_q, "v")), code::too_large);
  // One bad entry refuses the whole put.
  REQUIRE_CODE(t.put(cellar::put("r").add("f", "ok", "v").add("f", long_q, "v")), code::too_large);
  REQUIRE_CODE(t.increment(cellar::increment("r").add("f", long_q, 1)), code::too_large);
  REQUIRE_CODE(t.append(cellar::append("r").add("f", long_q, "x")), code::too_large);
  REQUIRE(dump(t).empty());
  REQUIRE_OK(t.put(cellar::put("r").add("f", max_q, 1, "v")));
  auto r = get_ok(t, cellar::get("r"));
  REQUIRE(r.cells.size() == 1);
  REQUIRE(r.cells[0].qualifier == max_q);
}

TEST_CASE("value above the family's max_value_bytes is TOO_LARGE", "[limits]") {
  fixture fx;
  auto t = fx.make("vl", {fam("f"), fam("blob", 0, cellar::longblob_value_bytes), fam("tiny", 0, 100)});
  const std::string mib(cellar::default_value_bytes, 'v');
  const std::string over(cellar::default_value_bytes + 1, 'v');

  REQUIRE_CODE(t.put(cellar::put("r").add("f", "q", over)), code::too_large);
  REQUIRE_CODE(t.put(cellar::put("r").add("f", "a", "small").add("f", "q", over)), code::too_large);
  REQUIRE_CODE(t.put(cellar::put("r").add("tiny", "q", std::string(101, 'x'))), code::too_large);
  REQUIRE(dump(t).empty());

  REQUIRE_OK(t.put(cellar::put("r").add("f", "q", 1, mib)));
  REQUIRE(get_ok(t, cellar::get("r").column("f", "q")).cells.at(0).value.size() == mib.size());
  REQUIRE_OK(t.put(cellar::put("r").add("tiny", "q", 1, std::string(100, 'x'))));

  // A longblob family accepts 2 MiB.
  const std::string two_mib(2u << 20, 'b');
  REQUIRE_OK(t.put(cellar::put("r").add("blob", "q", 1, two_mib)));
  REQUIRE(get_ok(t, cellar::get("r").column("blob", "q")).cells.at(0).value == two_mib);

  // An append that would grow the value beyond the limit is refused too.
  const auto before = dump(t);
  REQUIRE_CODE(t.append(cellar::append("r").add("tiny", "q", "y")), code::too_large);
  REQUIRE(dump(t) == before);
}

TEST_CASE("unknown table is TABLE_NOT_FOUND", "[errors]") {
  fixture fx;
  REQUIRE_CODE(fx.store->open_table("nope"), code::table_not_found);
  REQUIRE_CODE(fx.store->describe("nope"), code::table_not_found);
  REQUIRE_CODE(fx.store->stats("nope"), code::table_not_found);
  REQUIRE_CODE(fx.store->compact("nope"), code::table_not_found);
  REQUIRE_CODE(fx.store->truncate_table("nope"), code::table_not_found);
  REQUIRE_CODE(fx.store->drop_table("nope"), code::table_not_found);
  REQUIRE_CODE(fx.store->alter_family("nope", fam("f")), code::table_not_found);
  REQUIRE_CODE(fx.store->add_family("nope", fam("f"), cellar::partition_spec::single()), code::table_not_found);
  REQUIRE_FALSE(fx.store->table_exists("nope"));
}

TEST_CASE("unknown family is FAMILY_NOT_FOUND and changes nothing", "[errors]") {
  fixture fx;
  auto t = fx.make("uf", {fam("f")});
  REQUIRE_OK(t.put(cellar::put("r").add("f", "q", 1, "v")));
  const auto before = dump(t);

  REQUIRE_CODE(t.put(cellar::put("r").add("nope", "q", "v")), code::family_not_found);
  REQUIRE_CODE(t.put(cellar::put("r2").add("f", "q", "v").add("nope", "q", "v")), code::family_not_found);
  REQUIRE_CODE(t.get(cellar::get("r").family("nope")), code::family_not_found);
  REQUIRE_CODE(t.get(cellar::get("r").column("nope", "q")), code::family_not_found);
  REQUIRE(scan_code(t, cellar::scan().family("nope")) == code::family_not_found);
  REQUIRE(scan_code(t, cellar::scan().column("nope", "q")) == code::family_not_found);
  REQUIRE_CODE(t.remove(cellar::deletion("r").family("nope")), code::family_not_found);
  REQUIRE_CODE(t.remove(cellar::deletion("r").columns("f", "q").family("nope")), code::family_not_found);
  REQUIRE_CODE(t.increment(cellar::increment("r").add("nope", "n", 1)), code::family_not_found);
  REQUIRE_CODE(t.append(cellar::append("r").add("nope", "s", "x")), code::family_not_found);
  REQUIRE_CODE(
      t.check_and_mutate(
          cellar::check_and_mutate("r", "nope", "q").if_not_exists().then(cellar::put("r").add("nope", "q", "v"))),
      code::family_not_found);
  REQUIRE_CODE(t.mutate_row(cellar::row_mutations("r")
                                .add(cellar::put("r").add("f", "x", "v"))
                                .add(cellar::put("r").add("nope", "q", "v"))),
               code::family_not_found);
  REQUIRE_CODE(fx.store->drop_family("uf", "nope"), code::family_not_found);
  REQUIRE_CODE(t.exists(cellar::get("r").family("nope")), code::family_not_found);
  {
    std::vector<cellar::batch_op> ops;
    ops.emplace_back(cellar::put("r3").add("f", "q", 1, "v"));
    ops.emplace_back(cellar::get("r").family("nope"));
    auto res = t.batch(std::move(ops));
    REQUIRE(res.size() == 2);
    CHECK(res[1].st.code() == code::family_not_found);
    CHECK_FALSE(res[0].st.is_ok());
  }
  REQUIRE(dump(t) == before);
}

TEST_CASE("negative timestamps are INVALID_ARGUMENT", "[errors]") {
  fixture fx;
  auto t = fx.make("neg", {fam("f")});
  REQUIRE_OK(t.put(cellar::put("r").add("f", "q", 1, "v")));
  const auto before = dump(t);
  REQUIRE_CODE(t.put(cellar::put("r").add("f", "q", -1, "v")), code::invalid_argument);
  REQUIRE_CODE(t.put(cellar::put("r", -5).add("f", "q", "v")), code::invalid_argument);
  REQUIRE_CODE(t.put(cellar::put("r").add("f", "a", 2, "v").add("f", "q", -1, "v")), code::invalid_argument);
  REQUIRE_CODE(t.remove(cellar::deletion("r").column("f", "q", -1)), code::invalid_argument);
  REQUIRE_CODE(t.remove(cellar::deletion("r", -1)), code::invalid_argument);
  REQUIRE_CODE(t.get(cellar::get("r").range(-1, 5)), code::invalid_argument);
  REQUIRE(dump(t) == before);
}

TEST_CASE("row mutations on another row are INVALID_ARGUMENT", "[errors]") {
  fixture fx;
  auto t = fx.make("rm", {fam("f")});
  REQUIRE_CODE(t.mutate_row(cellar::row_mutations("a")
                                .add(cellar::put("a").add("f", "q", 1, "v"))
                                .add(cellar::put("b").add("f", "q", 1, "v"))),
               code::invalid_argument);
  REQUIRE_CODE(t.mutate_row(cellar::row_mutations("a").add(cellar::deletion("b"))), code::invalid_argument);
  REQUIRE(dump(t).empty());
}

TEST_CASE("bad time range is INVALID_ARGUMENT", "[errors]") {
  fixture fx;
  auto t = fx.make("tr", {fam("f")});
  REQUIRE_OK(t.put(cellar::put("r").add("f", "q", 7, "v")));
  REQUIRE_CODE(t.get(cellar::get("r").range(10, 5)), code::invalid_argument);
  REQUIRE(scan_code(t, cellar::scan().range(10, 5)) == code::invalid_argument);
  // An empty but well-formed range is fine and matches nothing.
  auto r = t.get(cellar::get("r").range(7, 7));
  REQUIRE_OK(r);
  REQUIRE(r->cells.empty());
}

TEST_CASE("batch with one invalid action is refused whole", "[batch]") {
  fixture fx;
  SECTION("single partition") {
    auto t = fx.make("bi", {fam("f")});
    std::vector<cellar::batch_op> ops;
    ops.emplace_back(cellar::put("a").add("f", "q", 1, "v"));
    ops.emplace_back(cellar::put("b").add("nope", "q", 1, "v"));
    ops.emplace_back(cellar::increment("c").add("f", "n", 1));
    auto res = t.batch(std::move(ops));
    REQUIRE(res.size() == 3);
    CHECK(res[1].st.code() == code::family_not_found);
    for (auto& r : res) CHECK_FALSE(r.st.is_ok());
    REQUIRE(dump(t).empty());
  }
  SECTION("several partitions, too large") {
    auto t = fx.make("bi2", {fam("f")}, cellar::partition_spec::range_bounds({"m"}));
    std::vector<cellar::batch_op> ops;
    ops.emplace_back(cellar::put("a").add("f", "q", 1, "v"));
    ops.emplace_back(cellar::put("z").add("f", "q", 1, "v"));
    ops.emplace_back(cellar::put("n").add("f", std::string(cellar::max_qualifier_bytes + 1, 'q'), 1, "v"));
    auto res = t.batch(std::move(ops));
    REQUIRE(res.size() == 3);
    CHECK(res[2].st.code() == code::too_large);
    for (auto& r : res) CHECK_FALSE(r.st.is_ok());
    REQUIRE(dump(t).empty());
  }
}

TEST_CASE("single-partition batch failing at run time is undone entirely", "[batch]") {
  fixture fx;
  auto t = fx.make("br", {fam("f")});
  REQUIRE_OK(t.put(cellar::put("r1").add("f", "s", 1, "abc")));
  const auto before = dump(t);
  std::vector<cellar::batch_op> ops;
  ops.emplace_back(cellar::put("r1").add("f", "a", 2, "1"));
  ops.emplace_back(cellar::put("r2").add("f", "b", 2, "2"));
  ops.emplace_back(cellar::increment("r1").add("f", "s", 1));
  ops.emplace_back(cellar::put("r3").add("f", "c", 2, "3"));
  auto res = t.batch(std::move(ops));
  REQUIRE(res.size() == 4);
  CHECK(res[0].st.code() == code::aborted);
  CHECK(res[1].st.code() == code::aborted);
  CHECK(res[2].st.code() == code::not_a_long);
  CHECK(res[3].st.code() == code::aborted);
  REQUIRE(dump(t) == before);
}

TEST_CASE("multi-partition batch: per-op results, atomic per partition", "[batch]") {
  fixture fx;
  // Partition 0: rows < "m"; partition 1: rows >= "m".
  auto t = fx.make("bm", {fam("f")}, cellar::partition_spec::range_bounds({"m"}));
  REQUIRE_OK(t.put(cellar::put("b").add("f", "s", 1, "abc")));
  REQUIRE_OK(t.put(cellar::put("y").add("f", "n", 1, be64(41))));
  std::vector<cellar::batch_op> ops;
  ops.emplace_back(cellar::put("a").add("f", "q", 2, "A"));   // p0
  ops.emplace_back(cellar::put("n").add("f", "q", 2, "N"));   // p1
  ops.emplace_back(cellar::increment("b").add("f", "s", 1));  // p0, fails
  ops.emplace_back(cellar::increment("y").add("f", "n", 1));  // p1
  ops.emplace_back(cellar::put("c").add("f", "q", 2, "C"));   // p0
  ops.emplace_back(cellar::put("z").add("f", "q", 2, "Z"));   // p1
  auto res = t.batch(std::move(ops));
  REQUIRE(res.size() == 6);
  CHECK(res[0].st.code() == code::aborted);
  CHECK(res[1].st.is_ok());
  CHECK(res[2].st.code() == code::not_a_long);
  CHECK(res[3].st.is_ok());
  CHECK(res[4].st.code() == code::aborted);
  CHECK(res[5].st.is_ok());
  REQUIRE(res[3].row.cells.size() == 1);
  CHECK(res[3].row.cells[0].value == be64(42));

  CHECK(get_ok(t, cellar::get("a")).cells.empty());
  CHECK(get_ok(t, cellar::get("c")).cells.empty());
  CHECK(get_ok(t, cellar::get("b")).cells.at(0).value == "abc");
  CHECK(get_ok(t, cellar::get("n")).cells.at(0).value == "N");
  CHECK(get_ok(t, cellar::get("z")).cells.at(0).value == "Z");
  CHECK(get_ok(t, cellar::get("y")).cells.at(0).value == be64(42));
}

TEST_CASE("batch_async answers like batch", "[batch]") {
  fixture fx;
  auto t = fx.make("ba", {fam("f")}, cellar::partition_spec::hash(3));
  std::vector<cellar::batch_op> ops;
  for (int i = 0; i < 10; ++i) ops.emplace_back(cellar::put("r" + std::to_string(i)).add("f", "q", 1, "v"));
  ops.emplace_back(cellar::get("r3"));
  std::promise<std::vector<cellar::op_result>> p;
  auto f = p.get_future();
  t.batch_async(std::move(ops), [&p](std::vector<cellar::op_result> r) { p.set_value(std::move(r)); });
  REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  auto res = f.get();
  REQUIRE(res.size() == 11);
  for (auto& r : res) CHECK(r.st.is_ok());
  REQUIRE(dump(t).size() == 10);
}

TEST_CASE("memory limit: MEMORY_LIMIT, nothing acknowledged is lost, deletes free room", "[limits][memory]") {
  fixture fx(64 * 1024);
  auto t = fx.make("mem", {fam("f")});
  const std::string value(1024, 'm');
  std::vector<std::string> acked;
  bool hit = false;
  for (int i = 0; i < 1000; ++i) {
    const std::string row = "row" + std::to_string(1000 + i);
    auto st = t.put(cellar::put(row).add("f", "q", 1, value));
    if (st.is_ok()) {
      acked.push_back(row);
      continue;
    }
    INFO(st.to_string());
    REQUIRE(st.code() == code::memory_limit);
    // The refused write left nothing behind.
    REQUIRE(get_ok(t, cellar::get(row)).cells.empty());
    hit = true;
    break;
  }
  REQUIRE(hit);
  REQUIRE(acked.size() >= 10);
  REQUIRE(acked.size() <= 64);

  // Every acknowledged write is readable.
  for (auto& row : acked) {
    auto r = get_ok(t, cellar::get(row));
    REQUIRE(r.cells.size() == 1);
    REQUIRE(r.cells[0].value == value);
  }
  auto st = fx.store->stats("mem");
  REQUIRE_OK(st);
  CHECK(st->cells == acked.size());
  CHECK(st->bytes <= 64 * 1024);

  // A multi-cell put past the limit is refused whole.
  cellar::put big("big");
  for (int k = 0; k < 8; ++k) big.add("f", "q" + std::to_string(k), 1, value);
  REQUIRE_CODE(t.put(big), code::memory_limit);
  REQUIRE(get_ok(t, cellar::get("big")).cells.empty());

  // Deletes still work and free room.
  for (std::size_t i = 0; i < 10; ++i) REQUIRE_OK(t.remove(cellar::deletion(acked[i])));
  for (std::size_t i = 0; i < 10; ++i) REQUIRE(get_ok(t, cellar::get(acked[i])).cells.empty());
  REQUIRE_OK(t.put(cellar::put("after").add("f", "q", 1, value)));
  REQUIRE(get_ok(t, cellar::get("after")).cells.size() == 1);
  for (std::size_t i = 10; i < acked.size(); ++i) REQUIRE(get_ok(t, cellar::get(acked[i])).cells.size() == 1);
}

TEST_CASE("DDL errors", "[ddl]") {
  fixture fx;
  fx.make("t", {fam("f")});
  cellar::table_descriptor d;
  d.name = "t";
  d.families = {fam("f")};
  REQUIRE_CODE(fx.store->create_table(d, schema_origin::hbase_shell), code::already_exists);
  REQUIRE_CODE(fx.store->drop_table("unknown"), code::table_not_found);
  REQUIRE_CODE(fx.store->create_table_group("t"), code::already_exists);

  REQUIRE_OK(fx.store->create_table_group("g"));
  REQUIRE_CODE(fx.store->create_table_group("g"), code::already_exists);
  REQUIRE_OK(fx.store->add_family("g", fam("f1"), cellar::partition_spec::hash(3)));
  REQUIRE_CODE(fx.store->add_family("g", fam("f2"), cellar::partition_spec::hash(5)), code::invalid_argument);
  REQUIRE_CODE(fx.store->add_family("g", fam("f2"), cellar::partition_spec::range_bounds({"m"})),
               code::invalid_argument);
  REQUIRE_CODE(fx.store->add_family("g", fam("f1"), cellar::partition_spec::hash(3)), code::already_exists);
  REQUIRE_OK(fx.store->add_family("g", fam("f2"), cellar::partition_spec::hash(3)));

  auto desc = fx.store->describe("g");
  REQUIRE_OK(desc);
  REQUIRE(desc->partitioning == cellar::partition_spec::hash(3));
  REQUIRE(desc->families.size() == 2);
  REQUIRE(desc->families[0].name == "f1");
  REQUIRE(desc->families[1].name == "f2");

  // The table group works with its families.
  auto t = fx.store->open_table("g");
  REQUIRE_OK(t);
  REQUIRE_OK(t->put(cellar::put("r").add("f1", "q", 1, "a").add("f2", "q", 1, "b")));
  REQUIRE(get_ok(t.value(), cellar::get("r")).cells.size() == 2);
}

TEST_CASE("alter_family and drop_family", "[ddl]") {
  fixture fx;
  auto t = fx.make("alt", {fam("f")});
  const auto T = fx.now->load();
  REQUIRE_OK(t.put(cellar::put("r").add("f", "q", T - 5000, "old").add("f", "p", T, "new")));
  REQUIRE(get_ok(t, cellar::get("r")).cells.size() == 2);

  // A family TTL set by alter applies at once.
  auto f = fam("f");
  f.ttl_seconds = 3;
  REQUIRE_OK(fx.store->alter_family("alt", f));
  auto r = get_ok(t, cellar::get("r"));
  REQUIRE(r.cells.size() == 1);
  REQUIRE(r.cells[0].qualifier == "p");
  auto d = fx.store->describe("alt");
  REQUIRE_OK(d);
  REQUIRE(d->families.at(0).ttl_seconds == 3);

  // alter adds a missing family.
  REQUIRE_CODE(t.put(cellar::put("r").add("h", "q", 1, "v")), code::family_not_found);
  REQUIRE_OK(fx.store->alter_family("alt", fam("h")));
  REQUIRE_OK(t.put(cellar::put("r").add("h", "q", 1, "v")));
  REQUIRE(get_ok(t, cellar::get("r").family("h")).cells.size() == 1);

  // drop_family removes it and its cells.
  REQUIRE_OK(fx.store->drop_family("alt", "h"));
  REQUIRE_CODE(t.put(cellar::put("r").add("h", "q", 1, "v")), code::family_not_found);
  REQUIRE_CODE(t.get(cellar::get("r").family("h")), code::family_not_found);
  REQUIRE(get_ok(t, cellar::get("r")).cells.size() == 1);
  REQUIRE_OK(fx.store->alter_family("alt", fam("h")));
  REQUIRE(get_ok(t, cellar::get("r").family("h")).cells.empty());
}

TEST_CASE("code_name gives stable upper-case names", "[errors]") {
  using cellar::code_name;
  CHECK(code_name(code::ok) == "OK");
  CHECK(code_name(code::table_not_found) == "TABLE_NOT_FOUND");
  CHECK(code_name(code::family_not_found) == "FAMILY_NOT_FOUND");
  CHECK(code_name(code::invalid_argument) == "INVALID_ARGUMENT");
  CHECK(code_name(code::too_large) == "TOO_LARGE");
  CHECK(code_name(code::unsupported) == "UNSUPPORTED");
  CHECK(code_name(code::memory_limit) == "MEMORY_LIMIT");
  CHECK(code_name(code::already_exists) == "ALREADY_EXISTS");
  CHECK(code_name(code::not_a_long) == "NOT_A_LONG");
  CHECK(code_name(code::aborted) == "ABORTED");
  CHECK(code_name(code::io_error) == "IO_ERROR");
  CHECK(code_name(code::corruption) == "CORRUPTION");
  CHECK(code_name(code::internal) == "INTERNAL");
  CHECK(code_name(code::permission_denied) == "PERMISSION_DENIED");
  CHECK(code_name(code::unavailable) == "UNAVAILABLE");
  CHECK(code_name(code::table_disabled) == "TABLE_DISABLED");
  CHECK(code_name(code::not_found) == "NOT_FOUND");
  CHECK(code_name(code::conflict) == "CONFLICT");
  CHECK(code_name(code::not_owner) == "NOT_OWNER");
  CHECK(code_name(code::table_read_only) == "TABLE_READ_ONLY");
  CHECK(code_name(code::not_leader) == "NOT_LEADER");
  CHECK(code_name(code::table_not_disabled) == "TABLE_NOT_DISABLED");
  CHECK(code_name(code::reshaping) == "RESHAPING");
  // Stable numbers (wire contract).
  CHECK(static_cast<int>(code::table_not_found) == 1);
  CHECK(static_cast<int>(code::not_a_long) == 8);
  CHECK(static_cast<int>(code::unavailable) == 14);
  CHECK(static_cast<int>(code::table_disabled) == 15);
  CHECK(static_cast<int>(code::not_found) == 16);
  CHECK(static_cast<int>(code::conflict) == 17);
  CHECK(static_cast<int>(code::not_owner) == 18);
  CHECK(static_cast<int>(code::table_read_only) == 19);
  CHECK(static_cast<int>(code::not_leader) == 20);
  CHECK(static_cast<int>(code::table_not_disabled) == 21);
  CHECK(static_cast<int>(code::reshaping) == 22);
  CHECK(cellar::last_code == code::reshaping);

  fixture fx;
  auto r = fx.store->open_table("missing_table");
  REQUIRE(r.code() == code::table_not_found);
  CHECK(r.error().to_string().rfind("TABLE_NOT_FOUND", 0) == 0);
  CHECK_FALSE(r.error().message().empty());
  CHECK(cellar::status::ok().is_ok());
}

TEST_CASE("a table group whose last family was dropped takes a new partition rule", "[ddl]") {
  using namespace cellar;
  auto s = store::open({}).value();
  REQUIRE(s->create_table_group("g").is_ok());
  REQUIRE(s->add_family("g", {"f"}, partition_spec::hash(3)).is_ok());
  auto t = s->open_table("g").value();
  REQUIRE(t.put(put("r").add("f", "q", "v")).is_ok());
  // While a family lives, the rule is fixed.
  CHECK(s->add_family("g", {"h"}, partition_spec::hash(5)).code() == code::invalid_argument);
  // OceanBase's DROP TABLE g$f may drop a group's last family; HBase's alter may not.
  CHECK(s->drop_family("g", "f").code() == code::invalid_argument);
  REQUIRE(s->drop_family("g", "f", schema_origin::oceanbase_ddl).is_ok());
  REQUIRE(s->add_family("g", {"f"}, partition_spec::hash(5)).is_ok());
  auto d = s->describe("g").value();
  CHECK(d.partitioning == partition_spec::hash(5));
  CHECK(s->stats("g").value().cells_per_partition.size() == 5);
  auto t2 = s->open_table("g").value();
  CHECK(t2.get(get("r")).value().cells.empty());  // the old cells went with the old family
  REQUIRE(t2.put(put("r").add("f", "q", "w")).is_ok());
  CHECK(t2.get(get("r")).value().cells.at(0).value == "w");
}
