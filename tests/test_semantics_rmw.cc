// Conformance tests for docs/semantics.md, rules R22..R34 and R48..R50 (read-modify-write,
// scans, atomicity), through the public embedded API only. Each TEST_CASE is named after the
// rule it pins; R1..R20 are in test_semantics.cc.
#include "semantics_fixture.h"

// ---------------------------------------------------------------- read-modify-write

namespace {
bool cam(cellar::table& t, const std::string& row, compare_op op, const std::string& expected,
         const std::string& marker) {
  auto r = t.check_and_mutate(
      cellar::check_and_mutate(row, "f", "c").if_matches(op, expected).then(cellar::put(row).add("f", marker, "1")));
  REQUIRE_OK(r);
  auto applied = get_ok(t, cellar::get(row).column("f", marker)).cells.size() == 1;
  REQUIRE(applied == r.value());  // the mutation ran iff the check passed
  return r.value();
}
}  // namespace

TEST_CASE("R22 checkAndMutate compares compare(expected, current) OP 0", "[R22]") {
  fixture fx;
  auto t = fx.make("r22", {fam("f")});
  put_ok(t, cellar::put("r").add("f", "c", "b"));
  // expected 'a' < current 'b'
  CHECK(cam(t, "r", compare_op::less, "a", "m1"));
  CHECK(cam(t, "r", compare_op::less_or_equal, "a", "m2"));
  CHECK_FALSE(cam(t, "r", compare_op::equal, "a", "m3"));
  CHECK(cam(t, "r", compare_op::not_equal, "a", "m4"));
  CHECK_FALSE(cam(t, "r", compare_op::greater_or_equal, "a", "m5"));
  CHECK_FALSE(cam(t, "r", compare_op::greater, "a", "m6"));
  // expected == current
  CHECK_FALSE(cam(t, "r", compare_op::less, "b", "n1"));
  CHECK(cam(t, "r", compare_op::less_or_equal, "b", "n2"));
  CHECK(cam(t, "r", compare_op::equal, "b", "n3"));
  CHECK_FALSE(cam(t, "r", compare_op::not_equal, "b", "n4"));
  CHECK(cam(t, "r", compare_op::greater_or_equal, "b", "n5"));
  CHECK_FALSE(cam(t, "r", compare_op::greater, "b", "n6"));

  // Unsigned comparison: expected 0x80 > current 0x7f.
  put_ok(t, cellar::put("u").add("f", "c", std::string("\x7f", 1)));
  CHECK(cam(t, "u", compare_op::greater, std::string("\x80", 1), "m1"));
  CHECK_FALSE(cam(t, "u", compare_op::less, std::string("\x80", 1), "m2"));

  // Absent column with a non-null expected value fails for every op.
  for (auto op : {compare_op::less, compare_op::less_or_equal, compare_op::equal, compare_op::not_equal,
                  compare_op::greater_or_equal, compare_op::greater}) {
    CHECK_FALSE(cam(t, "absent", op, "a", "m" + std::to_string(static_cast<int>(op))));
  }

  // Only the newest version is checked.
  put_ok(t, cellar::put("v").add("f", "c", 1, "a"));
  put_ok(t, cellar::put("v").add("f", "c", 2, "b"));
  CHECK_FALSE(cam(t, "v", compare_op::equal, "a", "m1"));
  CHECK(cam(t, "v", compare_op::equal, "b", "m2"));
}

TEST_CASE("R23 checkAndMutate without expected value: absent or empty", "[R23]") {
  fixture fx;
  auto t = fx.make("r23", {fam("f")});
  put_ok(t, cellar::put("empty").add("f", "c", ""));
  put_ok(t, cellar::put("full").add("f", "c", "x"));
  put_ok(t, cellar::put("absent").add("f", "other", "x"));
  auto run = [&](const std::string& row, compare_op op) {
    auto r = t.check_and_mutate(cellar::check_and_mutate(row, "f", "c")
                                    .if_matches(op, "zzz")
                                    .if_not_exists()
                                    .then(cellar::put(row).add("f", "m", "1")));
    REQUIRE_OK(r);
    return r.value();
  };
  CHECK(run("absent", compare_op::greater));
  CHECK(run("empty", compare_op::not_equal));
  CHECK_FALSE(run("full", compare_op::equal));
  CHECK_FALSE(run("full", compare_op::not_equal));
  CHECK(run("nowhere", compare_op::less));
  CHECK(get_ok(t, cellar::get("absent").column("f", "m")).cells.size() == 1);
  CHECK(get_ok(t, cellar::get("empty").column("f", "m")).cells.size() == 1);
  CHECK(get_ok(t, cellar::get("full").column("f", "m")).cells.empty());
  CHECK(get_ok(t, cellar::get("nowhere").column("f", "m")).cells.size() == 1);

  // Newest value empty over an older non-empty one still passes.
  put_ok(t, cellar::put("newest").add("f", "c", 1, "x"));
  put_ok(t, cellar::put("newest").add("f", "c", 2, ""));
  CHECK(run("newest", compare_op::equal));
}

TEST_CASE("R24 checkAndMutate applies RowMutations in order; wrong family/row refused", "[R24]") {
  fixture fx;
  auto t = fx.make("r24", {fam("f"), fam("g")});
  const auto T = fx.t();
  put_ok(t, cellar::put("r").add("f", "c1", "11").ttl(5000));
  fx.advance(1);

  auto ok = t.check_and_mutate(cellar::check_and_mutate("r", "f", "c1")
                                   .if_equals("11")
                                   .then(cellar::row_mutations("r")
                                             .add(cellar::put("r").add("f", "c1", "22").add("f", "c2", "33"))
                                             .add(cellar::deletion("r").column("f", "c1"))));
  REQUIRE_OK(ok);
  REQUIRE(ok.value());
  REQUIRE(get_cells(t, cellar::get("r")) == std::vector<std::string>{cs("f:c1", T, "11"), cs("f:c2", T + 1, "33")});
  fx.advance(5000);  // c1's cell TTL is over
  REQUIRE(get_cells(t, cellar::get("r")) == std::vector<std::string>{cs("f:c2", T + 1, "33")});

  put_ok(t, cellar::put("w").add("f", "c1", "11"));
  SECTION("mutation on another family than the checked one") {
    auto bad = t.check_and_mutate(
        cellar::check_and_mutate("w", "f", "c1").if_equals("11").then(cellar::put("w").add("g", "x", "1")));
    REQUIRE(bad.code() == code::invalid_argument);
    auto bad2 = t.check_and_mutate(cellar::check_and_mutate("w", "f", "c1")
                                       .if_equals("11")
                                       .then(cellar::row_mutations("w")
                                                 .add(cellar::put("w").add("f", "c3", "3"))
                                                 .add(cellar::put("w").add("g", "x", "1"))));
    REQUIRE(bad2.code() == code::invalid_argument);
  }
  SECTION("mutation on another row") {
    auto bad = t.check_and_mutate(
        cellar::check_and_mutate("w", "f", "c1").if_equals("11").then(cellar::put("other").add("f", "x", "1")));
    REQUIRE(bad.code() == code::invalid_argument);
    auto bad2 =
        t.check_and_mutate(cellar::check_and_mutate("w", "f", "c1")
                               .if_equals("11")
                               .then(cellar::row_mutations("other").add(cellar::put("other").add("f", "x", "1"))));
    REQUIRE(bad2.code() == code::invalid_argument);
    REQUIRE(get_cells(t, cellar::get("other")).empty());
  }
  // Nothing applied.
  REQUIRE(get_cells(t, cellar::get("w").max_versions(10)) == std::vector<std::string>{cs("f:c1", fx.t(), "11")});

  // A passing check can run a delete.
  put_ok(t, cellar::put("d").add("f", "c1", 1, "x").add("f", "c2", 1, "y"));
  auto del = t.check_and_mutate(
      cellar::check_and_mutate("d", "f", "c1").if_equals("x").then(cellar::deletion("d").columns("f", "c2")));
  REQUIRE_OK(del);
  REQUIRE(del.value());
  REQUIRE(get_cells(t, cellar::get("d")) == std::vector<std::string>{cs("f:c1", 1, "x")});

  // mutate_row applies in order too: put then delete newest leaves the older value.
  put_ok(t, cellar::put("m").add("f", "q", 1, "old"));
  REQUIRE_OK(t.mutate_row(cellar::row_mutations("m")
                              .add(cellar::put("m").add("f", "q", 2, "new"))
                              .add(cellar::deletion("m").column("f", "q"))));
  REQUIRE(get_cells(t, cellar::get("m").max_versions(10)) == std::vector<std::string>{cs("f:q", 1, "old")});
}

TEST_CASE("R25 increment: 8-byte big-endian, writes a new version", "[R25]") {
  fixture fx;
  auto t = fx.make("r25", {fam("f")});
  const auto ts = fx.t();
  put_ok(t, cellar::put("r").add("f", "q", ts, be64(1)));
  put_ok(t, cellar::put("r").add("f", "q", ts + 10, be64(1)));

  auto r = t.increment(cellar::increment("r").add("f", "q", 1));
  REQUIRE_OK(r);
  REQUIRE(r->cells.size() == 1);
  REQUIRE(r->cells[0].family == "f");
  REQUIRE(r->cells[0].qualifier == "q");
  REQUIRE(from_be64(r->cells[0].value) == 2);
  REQUIRE(r->cells[0].timestamp == ts + 11);  // max(now, newest + 1)

  auto v = t.increment_column_value("r", "f", "q", 1);
  REQUIRE_OK(v);
  REQUIRE(v.value() == 3);
  v = t.increment_column_value("r", "f", "q", 1);
  REQUIRE_OK(v);
  REQUIRE(v.value() == 4);

  // Each increment is a new version.
  REQUIRE(get_cells(t, cellar::get("r").all_versions()) ==
          std::vector<std::string>{cs("f:q", ts + 13, be64(4)), cs("f:q", ts + 12, be64(3)),
                                   cs("f:q", ts + 11, be64(2)), cs("f:q", ts + 10, be64(1)), cs("f:q", ts, be64(1))});

  // Absent cell counts as 0; several columns in one increment; negative amounts.
  auto m = t.increment(cellar::increment("n").add("f", "a", 5).add("f", "b", -3));
  REQUIRE_OK(m);
  REQUIRE(m->cells.size() == 2);
  REQUIRE(from_be64(m->cells[0].value) == 5);
  REQUIRE(from_be64(m->cells[1].value) == -3);
  REQUIRE(get_ok(t, cellar::get("n").column("f", "b")).cells[0].value ==
          std::string("\xff\xff\xff\xff\xff\xff\xff\xfd", 8));

  // Big-endian on the wire.
  put_ok(t, cellar::put("be").add("f", "q", std::string("\0\0\0\0\0\0\x01\x02", 8)));
  REQUIRE_OK(t.increment_column_value("be", "f", "q", 1));
  REQUIRE(get_ok(t, cellar::get("be")).cells[0].value == std::string("\0\0\0\0\0\0\x01\x03", 8));

  // Not 8 bytes: NOT_A_LONG, nothing written.
  put_ok(t, cellar::put("s").add("f", "q", 5, "abc"));
  auto bad = t.increment(cellar::increment("s").add("f", "q", 1));
  REQUIRE(bad.code() == code::not_a_long);
  auto bad2 = t.increment_column_value("s", "f", "q", 1);
  REQUIRE(bad2.code() == code::not_a_long);
  REQUIRE(get_cells(t, cellar::get("s").all_versions()) == std::vector<std::string>{cs("f:q", 5, "abc")});

  // One bad column refuses the whole increment: the good column is not written.
  put_ok(t, cellar::put("mix").add("f", "good", 5, be64(10)).add("f", "bad", 5, "xy"));
  auto mixed = t.increment(cellar::increment("mix").add("f", "good", 1).add("f", "bad", 1));
  REQUIRE(mixed.code() == code::not_a_long);
  REQUIRE(get_cells(t, cellar::get("mix").all_versions()) ==
          std::vector<std::string>{cs("f:bad", 5, "xy"), cs("f:good", 5, be64(10))});
}

TEST_CASE("R26 concurrent increments lose no update", "[R26][concurrency]") {
  fixture fx;
  auto t = fx.make("r26", {fam("f")}, schema_origin::hbase_shell);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 500;
  std::vector<std::vector<std::int64_t>> seen(kThreads);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto mine = t;
      for (int k = 0; k < kPerThread; ++k) {
        auto v = mine.increment_column_value("counter", "f", "n", 1);
        if (!v.is_ok()) {
          errors.fetch_add(1);
          continue;
        }
        seen[static_cast<std::size_t>(i)].push_back(v.value());
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(errors.load() == 0);
  auto r = get_ok(t, cellar::get("counter"));
  REQUIRE(r.cells.size() == 1);
  REQUIRE(from_be64(r.cells[0].value) == kThreads * kPerThread);
  // Every increment saw a distinct value 1..N.
  std::set<std::int64_t> all;
  for (auto& v : seen) all.insert(v.begin(), v.end());
  REQUIRE(all.size() == static_cast<std::size_t>(kThreads * kPerThread));
  REQUIRE(*all.begin() == 1);
  REQUIRE(*all.rbegin() == kThreads * kPerThread);
}

TEST_CASE("R27 append concatenates, absent = appended bytes", "[R27]") {
  fixture fx;
  auto t = fx.make("r27", {fam("f")});
  const auto T = fx.t();
  put_ok(t, cellar::put("r").add("f", "q", "value"));
  fx.advance(1);
  auto r = t.append(cellar::append("r").add("f", "q", "_append"));
  REQUIRE_OK(r);
  REQUIRE(cells_of(r.value()) == std::vector<std::string>{cs("f:q", T + 1, "value_append")});
  REQUIRE(get_cells(t, cellar::get("r")) == std::vector<std::string>{cs("f:q", T + 1, "value_append")});
  // A new version; the old one stays.
  REQUIRE(get_cells(t, cellar::get("r").all_versions()) ==
          std::vector<std::string>{cs("f:q", T + 1, "value_append"), cs("f:q", T, "value")});

  auto a = t.append(cellar::append("absent").add("f", "q", "_append"));
  REQUIRE_OK(a);
  REQUIRE(get_cells(t, cellar::get("absent")) == std::vector<std::string>{cs("f:q", T + 1, "_append")});
}

TEST_CASE("R28 increment/append return results unless asked not to", "[R28]") {
  fixture fx;
  auto t = fx.make("r28", {fam("f")});
  auto i1 = t.increment(cellar::increment("r").add("f", "n", 2));
  REQUIRE_OK(i1);
  REQUIRE(i1->cells.size() == 1);
  REQUIRE(from_be64(i1->cells[0].value) == 2);
  fx.advance(1);
  auto i2 = t.increment(cellar::increment("r").add("f", "n", 3).return_results(false));
  REQUIRE_OK(i2);
  REQUIRE(i2->cells.empty());
  REQUIRE(from_be64(get_ok(t, cellar::get("r").column("f", "n")).cells.at(0).value) == 5);

  // Returned cells are in R1 order, whatever the order of the request.
  auto i3 = t.increment(cellar::increment("o").add("f", "z", 1).add("f", "a", 2));
  REQUIRE_OK(i3);
  REQUIRE(i3->cells.size() == 2);
  CHECK(i3->cells[0].qualifier == "a");
  CHECK(i3->cells[1].qualifier == "z");

  auto a1 = t.append(cellar::append("r").add("f", "s", "ab"));
  REQUIRE_OK(a1);
  REQUIRE(a1->cells.size() == 1);
  REQUIRE(a1->cells[0].value == "ab");
  fx.advance(1);
  auto a2 = t.append(cellar::append("r").add("f", "s", "cd").return_results(false));
  REQUIRE_OK(a2);
  REQUIRE(a2->cells.empty());
  REQUIRE(get_ok(t, cellar::get("r").column("f", "s")).cells.at(0).value == "abcd");
}

// ---------------------------------------------------------------- scans

namespace {
cellar::table abcd(fixture& fx, const std::string& name) {
  auto t = fx.make(name, {fam("f")});
  for (const char* r : {"a", "b", "c", "d"}) put_ok(t, cellar::put(r).add("f", "q", 1, r));
  return t;
}
}  // namespace

TEST_CASE("R29 scan bounds: start inclusive, stop exclusive", "[R29]") {
  fixture fx;
  auto t = abcd(fx, "r29");
  using V = std::vector<std::string>;
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("b").stop_row("d"))) == V{"b", "c"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("b").stop_row("d", true))) == V{"b", "c", "d"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("b", false).stop_row("d"))) == V{"c"});
  REQUIRE(rows_of(scan_all(t, cellar::scan())) == V{"a", "b", "c", "d"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("b"))) == V{"b", "c", "d"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().stop_row("c"))) == V{"a", "b"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("bb").stop_row("zz"))) == V{"c", "d"});
  // Scan(r, r): pinned.
  REQUIRE(scan_all(t, cellar::scan().start_row("b").stop_row("b")).empty());
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("b").stop_row("b", true))) == V{"b"});
  REQUIRE(scan_all(t, cellar::scan().start_row("b", false).stop_row("b", true)).empty());
  REQUIRE(scan_all(t, cellar::scan().start_row("b").stop_row("b").reversed()).empty());
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("b").stop_row("b", true).reversed())) == V{"b"});
}

TEST_CASE("R30 reversed scan: start is the higher key", "[R30]") {
  fixture fx;
  auto t = abcd(fx, "r30");
  using V = std::vector<std::string>;
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("c").stop_row("a").reversed())) == V{"c", "b"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().reversed())) == V{"d", "c", "b", "a"});
  // Non-existent start row.
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("cc").stop_row("a").reversed())) == V{"c", "b"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("c").stop_row("a", true).reversed())) == V{"c", "b", "a"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("c", false).reversed())) == V{"b", "a"});
  // Like PageFilter(2): two rows.
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("d").stop_row("a").reversed().limit(2))) == V{"d", "c"});

  // Cells inside a row keep R1 order.
  put_ok(t, cellar::put("c").add("f", "a", 2, "x").add("f", "a", 1, "y").add("f", "z", 1, "z"));
  auto rs = scan_all(t, cellar::scan().start_row("c").stop_row("b").reversed().max_versions(10));
  REQUIRE(rs.size() == 1);
  REQUIRE(cells_of(rs[0]) ==
          std::vector<std::string>{cs("f:a", 2, "x"), cs("f:a", 1, "y"), cs("f:q", 1, "c"), cs("f:z", 1, "z")});
}

namespace {
// Row getKey1 of OBKV testFilter: abc v1@t3,v2@t2,v1@t1; def v2@t7,v1@t6,v2@t5,v1@t4.
void fill_getkey(cellar::table& t) {
  put_ok(t, cellar::put("getKey1")
                .add("f", "abc", 3, "value1")
                .add("f", "abc", 2, "value2")
                .add("f", "abc", 1, "value1")
                .add("f", "def", 7, "value2")
                .add("f", "def", 6, "value1")
                .add("f", "def", 5, "value2")
                .add("f", "def", 4, "value1"));
  put_ok(t, cellar::put("getKey2").add("f", "abc", 1, "value1").add("f", "def", 1, "value2"));
}
}  // namespace

TEST_CASE("R31 scan batch splits rows into results of at most n cells", "[R31]") {
  fixture fx;
  auto t = fx.make("r31", {fam("f")});
  fill_getkey(t);
  auto rs = scan_all(t, cellar::scan().max_versions(10).batch(3));
  REQUIRE(rs.size() == 4);
  std::vector<std::size_t> sizes;
  std::vector<bool> partial;
  for (auto& r : rs) {
    sizes.push_back(r.cells.size());
    partial.push_back(r.partial);
  }
  REQUIRE(sizes == std::vector<std::size_t>{3, 3, 1, 2});
  REQUIRE(partial == std::vector<bool>{true, true, false, false});
  REQUIRE(rows_of(rs) == std::vector<std::string>{"getKey1", "getKey1", "getKey1", "getKey2"});
  // The pieces, concatenated, are the row.
  std::vector<std::string> joined;
  for (int i = 0; i < 3; ++i)
    for (auto& c : cells_of(rs[static_cast<std::size_t>(i)])) joined.push_back(c);
  REQUIRE(joined == get_cells(t, cellar::get("getKey1").max_versions(10)));
}

TEST_CASE("R32 max_result_size keeps rows whole unless partial results are allowed", "[R32]") {
  fixture fx;
  auto t = fx.make("r32", {fam("f")});
  cellar::put p("row");
  for (int i = 0; i < 7; ++i) p.add("f", "q" + std::to_string(i), 1, std::string(16, 'a' + static_cast<char>(i)));
  put_ok(t, p);

  auto whole = scan_all(t, cellar::scan().max_result_size(10));
  REQUIRE(whole.size() == 1);
  REQUIRE(whole[0].cells.size() == 7);
  REQUIRE_FALSE(whole[0].partial);

  // Several rows: each comes whole, one result per row.
  put_ok(t, cellar::put("row2").add("f", "a", 1, std::string(16, 'x')).add("f", "b", 1, std::string(16, 'y')));
  put_ok(t, cellar::put("row3").add("f", "a", 1, std::string(16, 'z')).add("f", "b", 1, std::string(16, 'w')));
  auto rows = scan_all(t, cellar::scan().max_result_size(10));
  REQUIRE(rows_of(rows) == std::vector<std::string>{"row", "row2", "row3"});
  REQUIRE(rows[1].cells.size() == 2);
  REQUIRE(rows[2].cells.size() == 2);

  auto parts = scan_all(t, cellar::scan().stop_row("row2").max_result_size(10).allow_partial_results());
  REQUIRE(parts.size() == 7);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    INFO("result " << i);
    CHECK(parts[i].row == "row");
    CHECK(parts[i].cells.size() == 1);
    CHECK(parts[i].partial == (i + 1 < parts.size()));
    CHECK(parts[i].cells[0].qualifier == "q" + std::to_string(i));
  }

  // Larger limits pack more cells per partial result: never more results for a larger
  // limit, the pieces always rebuild the row, and a limit above the row's size keeps it whole.
  std::size_t previous = parts.size();
  for (std::int64_t limit : {40, 80, 160, 1 << 20}) {
    INFO("max_result_size " << limit);
    auto rs = scan_all(t, cellar::scan().stop_row("row2").max_result_size(limit).allow_partial_results());
    REQUIRE(!rs.empty());
    REQUIRE(rs.size() <= previous);
    previous = rs.size();
    std::vector<std::string> joined;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      CHECK(rs[i].partial == (i + 1 < rs.size()));
      for (auto& c : cells_of(rs[i])) joined.push_back(c);
    }
    CHECK(joined == cells_of(whole[0]));
  }
  REQUIRE(previous == 1);
}

TEST_CASE("R33 per-family limit and offset count versions", "[R33]") {
  fixture fx;
  auto t = fx.make("r33", {fam("f"), fam("g")});
  fill_getkey(t);
  auto rs = scan_all(t, cellar::scan().max_versions(10).offset_per_family(1).max_per_family(2));
  std::size_t total = 0;
  for (auto& r : rs) total += r.cells.size();
  REQUIRE(total == 3);
  REQUIRE(get_cells(t, cellar::get("getKey1").max_versions(10).offset_per_family(1).max_per_family(2)) ==
          std::vector<std::string>{cs("f:abc", 2, "value2"), cs("f:abc", 1, "value1")});
  REQUIRE(get_cells(t, cellar::get("getKey2").max_versions(10).offset_per_family(1).max_per_family(2)) ==
          std::vector<std::string>{cs("f:def", 1, "value2")});

  // The limit applies per family.
  put_ok(t, cellar::put("two").add("f", "a", 1, "1").add("f", "b", 1, "2").add("g", "a", 1, "3").add("g", "b", 1, "4"));
  REQUIRE(get_cells(t, cellar::get("two").max_per_family(1)) ==
          std::vector<std::string>{cs("f:a", 1, "1"), cs("g:a", 1, "3")});
  REQUIRE(get_cells(t, cellar::get("two").offset_per_family(1)) ==
          std::vector<std::string>{cs("f:b", 1, "2"), cs("g:b", 1, "4")});
}

TEST_CASE("R34 scan limit caps the number of rows", "[R34]") {
  fixture fx;
  auto t = fx.make("r34", {fam("f")});
  for (const char* r : {"a", "b", "c", "d", "e"}) put_ok(t, cellar::put(r).add("f", "q", 1, r).add("f", "p", 1, r));
  using V = std::vector<std::string>;
  REQUIRE(rows_of(scan_all(t, cellar::scan().limit(3))) == V{"a", "b", "c"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().limit(2).reversed())) == V{"e", "d"});
  REQUIRE(rows_of(scan_all(t, cellar::scan().limit(10))).size() == 5);
  REQUIRE(rows_of(scan_all(t, cellar::scan().start_row("b").limit(2).caching(1))) == V{"b", "c"});
  // Rows, not cells, and not results: batch splits do not count extra rows.
  auto rs = scan_all(t, cellar::scan().limit(2).batch(1));
  REQUIRE(rows_of(rs) == V{"a", "a", "b", "b"});
}

// ---------------------------------------------------------------- atomicity

TEST_CASE("R48 a multi-family row put is never observed half-applied", "[R48][concurrency]") {
  fixture fx;
  auto t = fx.make("r48", {fam("f"), fam("g")}, schema_origin::hbase_shell);
  constexpr int kCells = 16;
  constexpr int kPuts = 300;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0}, reads{0}, write_errors{0};
  std::string first_bad;

  auto check_row = [&](const row_result& r) {
    if (r.cells.empty()) return true;
    if (r.cells.size() != 2 * kCells) return false;
    for (auto& c : r.cells)
      if (c.value != r.cells[0].value) return false;
    return true;
  };

  std::thread writer([&] {
    auto w = t;
    for (int i = 0; i < kPuts; ++i) {
      cellar::put p("row");
      for (int k = 0; k < kCells; ++k) {
        p.add("f", "q" + std::to_string(k), std::to_string(i));
        p.add("g", "q" + std::to_string(k), std::to_string(i));
      }
      if (!w.put(p).is_ok()) write_errors.fetch_add(1);
      fx.advance(1);
    }
    done = true;
  });
  std::thread getter([&] {
    auto rd = t;
    while (!done.load() || reads.load() < 50) {
      auto r = rd.get(cellar::get("row"));
      reads.fetch_add(1);
      if (!r.is_ok() || !check_row(r.value())) {
        if (bad.fetch_add(1) == 0 && r.is_ok()) first_bad = std::to_string(r->cells.size()) + " cells";
      }
    }
  });
  std::thread scanner([&] {
    auto rd = t;
    int n = 0;
    while (!done.load() || n < 50) {
      ++n;
      auto sc = rd.scan(cellar::scan());
      if (!sc.is_ok()) {
        bad.fetch_add(1);
        continue;
      }
      auto all = sc->all();
      if (!all.is_ok() || all->size() > 1) {
        bad.fetch_add(1);
        continue;
      }
      for (auto& r : all.value())
        if (!check_row(r)) bad.fetch_add(1);
    }
  });
  writer.join();
  getter.join();
  scanner.join();
  INFO(first_bad);
  REQUIRE(write_errors.load() == 0);
  REQUIRE(bad.load() == 0);
  REQUIRE(reads.load() >= 50);
  auto last = get_ok(t, cellar::get("row"));
  REQUIRE(last.cells.size() == 2 * kCells);
  REQUIRE(last.cells[0].value == std::to_string(kPuts - 1));
}

TEST_CASE("R48 rows of one partition change together (store contract)", "[R48][concurrency]") {
  // store.h: operations on rows of one partition are atomic together, and a multi-get
  // reads the rows of one partition together.
  fixture fx;
  auto t = fx.make("r48b", {fam("f"), fam("g")}, schema_origin::hbase_shell);
  constexpr int kBatches = 300;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0}, reads{0}, write_errors{0};
  std::thread writer([&] {
    auto w = t;
    for (int i = 0; i < kBatches; ++i) {
      std::vector<cellar::batch_op> ops;
      ops.emplace_back(cellar::put("r1").add("f", "q", std::to_string(i)).add("g", "q", std::to_string(i)));
      ops.emplace_back(cellar::put("r2").add("f", "q", std::to_string(i)));
      ops.emplace_back(cellar::put("r3").add("g", "q", std::to_string(i)));
      for (auto& r : w.batch(std::move(ops)))
        if (!r.st.is_ok()) write_errors.fetch_add(1);
      fx.advance(1);
    }
    done = true;
  });
  std::thread reader([&] {
    auto rd = t;
    while (!done.load() || reads.load() < 50) {
      auto rs = rd.get(std::vector<cellar::get>{cellar::get("r1"), cellar::get("r2"), cellar::get("r3")});
      reads.fetch_add(1);
      if (!rs.is_ok() || rs->size() != 3) {
        bad.fetch_add(1);
        continue;
      }
      std::set<std::string> values;
      std::size_t cells = 0;
      for (auto& r : rs.value())
        for (auto& c : r.cells) {
          values.insert(c.value);
          ++cells;
        }
      if (!(cells == 0 || (cells == 4 && values.size() == 1))) bad.fetch_add(1);
    }
  });
  writer.join();
  reader.join();
  REQUIRE(write_errors.load() == 0);
  REQUIRE(bad.load() == 0);
  REQUIRE(reads.load() >= 50);
}

TEST_CASE("R49 batches report one result per action, in order", "[R49]") {
  // Partial-failure semantics across nodes are not asserted (see limits tests for
  // cellar's per-partition atomicity); only the per-action outcome contract.
  fixture fx;
  auto t = fx.make("r49", {fam("f")});
  put_ok(t, cellar::put("pre").add("f", "q", 1, "v"));
  put_ok(t, cellar::put("cnt").add("f", "n", 1, be64(10)));
  std::vector<cellar::batch_op> ops;
  ops.emplace_back(cellar::put("a").add("f", "q", 1, "A"));
  ops.emplace_back(cellar::get("pre"));
  ops.emplace_back(cellar::increment("cnt").add("f", "n", 5));
  ops.emplace_back(
      cellar::check_and_mutate("pre", "f", "q").if_equals("v").then(cellar::put("pre").add("f", "m", 1, "M")));
  ops.emplace_back(
      cellar::check_and_mutate("pre", "f", "q").if_equals("nope").then(cellar::put("pre").add("f", "x", 1, "X")));
  ops.emplace_back(cellar::deletion("a").column("f", "q", 1));
  ops.emplace_back(cellar::append("app").add("f", "s", "zz"));
  auto res = t.batch(std::move(ops));
  REQUIRE(res.size() == 7);
  for (std::size_t i = 0; i < res.size(); ++i) {
    INFO("action " << i << ": " << res[i].st.to_string());
    CHECK(res[i].st.is_ok());
  }
  CHECK(cells_of(res[1].row) == std::vector<std::string>{cs("f:q", 1, "v")});
  REQUIRE(res[2].row.cells.size() == 1);
  CHECK(from_be64(res[2].row.cells[0].value) == 15);
  CHECK(res[3].processed);
  CHECK_FALSE(res[4].processed);
  REQUIRE(res[6].row.cells.size() == 1);
  CHECK(res[6].row.cells[0].value == "zz");
  // Applied in order: the put of "a" then its deletion.
  CHECK(get_cells(t, cellar::get("a")).empty());
  CHECK(get_cells(t, cellar::get("pre")) == std::vector<std::string>{cs("f:m", 1, "M"), cs("f:q", 1, "v")});
}

TEST_CASE("R50 increment results never decrease for a reader", "[R50][concurrency]") {
  fixture fx;
  auto t = fx.make("r50", {fam("f")}, schema_origin::hbase_shell);
  constexpr int kWriters = 2;
  constexpr int kPerWriter = 1000;
  std::atomic<int> writers_done{0};
  std::atomic<int> decreases{0}, errors{0}, observations{0};

  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&] {
      auto h = t;
      for (int k = 0; k < kPerWriter; ++k)
        if (!h.increment_column_value("c", "f", "n", 1).is_ok()) errors.fetch_add(1);
      writers_done.fetch_add(1);
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto h = t;
      std::int64_t last = 0;
      int n = 0;
      while (writers_done.load() < kWriters || n < 20) {
        ++n;
        std::int64_t v = 0;
        if (r == 0) {
          auto g = h.get(cellar::get("c"));
          if (!g.is_ok()) {
            errors.fetch_add(1);
            continue;
          }
          if (g->cells.empty()) continue;
          if (g->cells[0].value.size() != 8) {
            errors.fetch_add(1);
            continue;
          }
          std::uint64_t u = 0;
          for (unsigned char ch : g->cells[0].value) u = (u << 8) | ch;
          v = static_cast<std::int64_t>(u);
        } else {
          // A reader that itself increments by 0 also observes a monotone counter.
          auto g = h.increment_column_value("c", "f", "n", 0);
          if (!g.is_ok()) {
            errors.fetch_add(1);
            continue;
          }
          v = g.value();
        }
        if (v < last) decreases.fetch_add(1);
        last = v;
        observations.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(errors.load() == 0);
  REQUIRE(decreases.load() == 0);
  REQUIRE(observations.load() > 0);
  auto v = t.increment_column_value("c", "f", "n", 0);
  REQUIRE_OK(v);
  REQUIRE(v.value() == kWriters * kPerWriter);
}
