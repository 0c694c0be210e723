// Time-series families (OBKV rules TS1 to TS5 in docs/semantics.md): the cells of one
// key and timestamp come back per qualifier, reads return every version, deletes work
// per R14, and what OBKV refuses is refused with UNSUPPORTED.
#include <catch2/catch.hpp>

#include "cellar/store.h"

using namespace cellar;

namespace {

struct fixture {
  std::unique_ptr<store> s = store::open({}).value();
  fixture() {
    family_descriptor ts{"f"};
    ts.kind = family_kind::time_series;
    REQUIRE(s->create_table_group("m").is_ok());
    REQUIRE(s->add_family("m", ts, partition_spec::hash(3)).is_ok());
    family_descriptor ts2{"g"};
    ts2.kind = family_kind::time_series;
    REQUIRE(s->add_family("m", ts2, partition_spec::hash(3)).is_ok());
  }
  table t() { return s->open_table("m").value(); }
};

std::vector<std::string> show(const row_result& r) {
  std::vector<std::string> out;
  for (const auto& c : r.cells) out.push_back(c.qualifier + "@" + std::to_string(c.timestamp) + "=" + c.value);
  return out;
}

}  // namespace

TEST_CASE("TS1/TS2: one put of several qualifiers reads back per qualifier; newest write wins", "[ts]") {
  fixture fx;
  auto t = fx.t();
  REQUIRE(t.put(put("k").add("f", "q1", 100, "v1").add("f", "q2", 100, "v2")).is_ok());
  CHECK(show(t.get(get("k").family("f")).value()) == std::vector<std::string>{"q1@100=v1", "q2@100=v2"});
  REQUIRE(t.put(put("k").add("f", "q1", 100, "v1b")).is_ok());
  CHECK(show(t.get(get("k").family("f")).value()) == std::vector<std::string>{"q1@100=v1b", "q2@100=v2"});
}

TEST_CASE("TS3: a get returns every version without max versions; an explicit max versions or a timestamp picks",
          "[ts]") {
  fixture fx;
  auto t = fx.t();
  REQUIRE(t.put(put("k").add("f", "q", 100, "a")).is_ok());
  REQUIRE(t.put(put("k").add("f", "q", 101, "b")).is_ok());
  CHECK(show(t.get(get("k").column("f", "q")).value()) == std::vector<std::string>{"q@101=b", "q@100=a"});
  // Given explicitly, max versions is honoured (the HBase shell's VERSIONS => 1).
  CHECK(show(t.get(get("k").column("f", "q").max_versions(1)).value()) == std::vector<std::string>{"q@101=b"});
  CHECK(show(t.get(get("k").column("f", "q").max_versions(5)).value()).size() == 2);
  CHECK(show(t.get(get("k").column("f", "q").timestamp(101)).value()) == std::vector<std::string>{"q@101=b"});
  auto sc = t.scan(scan().family("f")).value().all().value();
  REQUIRE(sc.size() == 1);
  CHECK(sc[0].cells.size() == 2);
  auto one = t.scan(scan().family("f").max_versions(1)).value().all().value();
  REQUIRE(one.size() == 1);
  CHECK(show(one[0]) == std::vector<std::string>{"q@101=b"});
}

TEST_CASE("TS4: column deletes remove every version of the qualifier; family deletes follow R14", "[ts]") {
  fixture fx;
  auto t = fx.t();
  for (std::int64_t ts : {100, 101, 102})
    REQUIRE(t.put(put("k").add("f", "q1", ts, "x").add("f", "q2", ts, "y")).is_ok());
  REQUIRE(t.remove(deletion("k").column("f", "q1")).is_ok());
  CHECK(show(t.get(get("k").family("f")).value()) == std::vector<std::string>{"q2@102=y", "q2@101=y", "q2@100=y"});
  REQUIRE(t.remove(deletion("k").family("f", 101)).is_ok());
  CHECK(show(t.get(get("k").family("f")).value()) == std::vector<std::string>{"q2@102=y"});
  CHECK(t.remove(deletion("k").family("f").family("g")).code() == code::unsupported);
  CHECK(t.remove(deletion("k")).code() == code::unsupported);  // both families of the group
}

TEST_CASE("TS5: what OBKV refuses on time-series families is UNSUPPORTED and changes nothing", "[ts]") {
  fixture fx;
  auto t = fx.t();
  REQUIRE(t.put(put("k").add("f", "q", 100, "v")).is_ok());
  CHECK(t.put(put("k").add("f", "q", 1, "a").add("g", "q", 1, "b")).code() == code::unsupported);
  CHECK(t.put(put("k").add("f", "q", 1, "a").ttl(1000)).code() == code::unsupported);
  CHECK(t.get(get("k")).code() == code::unsupported);  // two families
  CHECK(t.exists(get("k").family("f")).code() == code::unsupported);
  CHECK(t.get(get("k").family("f").max_per_family(1)).code() == code::unsupported);
  CHECK(t.get(get("k").family("f").offset_per_family(1)).code() == code::unsupported);
  CHECK(t.scan(scan().family("f").reversed()).code() == code::unsupported);
  CHECK(t.scan(scan().family("f").limit(1)).code() == code::unsupported);
  CHECK(t.scan(scan().family("f").batch(1)).code() == code::unsupported);
  CHECK(t.scan(scan().family("f").max_result_size(10).allow_partial_results()).code() == code::unsupported);
  CHECK(t.increment(increment("k").add("f", "n", 1)).code() == code::unsupported);
  CHECK(t.append(append("k").add("f", "q", "x")).code() == code::unsupported);
  CHECK(t.check_and_mutate(check_and_mutate("k", "f", "q").if_equals("v").then(put("k").add("f", "q", "w"))).code() ==
        code::unsupported);
  CHECK(show(t.get(get("k").family("f")).value()) == std::vector<std::string>{"q@100=v"});
}
