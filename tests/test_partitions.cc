// Partitioned tables: global scan order in both directions, global LIMIT, multi-get order,
// row placement (hash, key prefix, range bounds), truncate and drop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cellar/store.h"
#include "printable.h"
#include "status_checks.h"

namespace {

using cellar::code;
using cellar::family_descriptor;
using cellar::partition_spec;
using cellar::row_result;
using cellar::schema_origin;

using test_util::printable;

family_descriptor fam(std::string name) {
  family_descriptor f;
  f.name = std::move(name);
  return f;
}

struct fixture {
  std::unique_ptr<cellar::store> store;

  fixture() {
    cellar::store_options o;
    o.worker_threads = 2;
    o.maintenance_interval = std::chrono::milliseconds(0);
    o.clock = [] { return std::int64_t{1'700'000'000'000}; };
    auto s = cellar::store::open(std::move(o));
    REQUIRE_OK(s);
    store = std::move(s.value());
  }

  cellar::table make(const std::string& name, partition_spec p) {
    cellar::table_descriptor d;
    d.name = name;
    d.partitioning = std::move(p);
    d.families = {fam("f"), fam("g")};
    REQUIRE_OK(store->create_table(d, schema_origin::oceanbase_ddl));
    auto t = store->open_table(name);
    REQUIRE_OK(t);
    return t.value();
  }

  cellar::table_stats stats(const std::string& name) {
    auto st = store->stats(name);
    REQUIRE_OK(st);
    return st.value();
  }
};

// "row|f:q=v" per cell.
std::vector<std::string> flatten(const std::vector<row_result>& rs) {
  std::vector<std::string> out;
  for (auto& r : rs)
    for (auto& c : r.cells) {
      out.push_back(printable(c.row) + "|" + c.family + ":" + c.qualifier + "=" + printable(c.value));
    }
  return out;
}

std::vector<std::string> rows_of(const std::vector<row_result>& rs) {
  std::vector<std::string> out;
  for (auto& r : rs) out.push_back(printable(r.row));
  return out;
}

// Model: row -> ("f:q" -> value); std::string compares bytes as unsigned char.
using model_t = std::map<std::string, std::map<std::string, std::string>>;

std::vector<std::string> model_row_cells(const std::string& row, const std::map<std::string, std::string>& cols) {
  std::vector<std::string> out;
  for (auto& [fq, v] : cols) out.push_back(printable(row) + "|" + fq + "=" + printable(v));
  return out;
}

struct scan_case {
  std::string start, stop;
  bool start_incl = true, stop_incl = false, reversed = false;
  std::int64_t limit = -1;
  std::int64_t caching = 256;
  std::int64_t batch = -1;
  std::int64_t max_result_size = -1;
  bool allow_partial = false;
  // 0: every family; 1: family f; 2: family g; 3: columns f:a and g:b.
  int selection = 0;
};

bool selected(const scan_case& c, const std::string& fq) {
  switch (c.selection) {
    case 1: return fq.rfind("f:", 0) == 0;
    case 2: return fq.rfind("g:", 0) == 0;
    case 3: return fq == "f:a" || fq == "g:b";
    default: return true;
  }
}

std::string describe(const scan_case& c) {
  return "start='" + printable(c.start) + "'" + (c.start_incl ? "[incl]" : "[excl]") + " stop='" + printable(c.stop) +
         "'" + (c.stop_incl ? "[incl]" : "[excl]") + (c.reversed ? " reversed" : "") +
         " limit=" + std::to_string(c.limit) + " caching=" + std::to_string(c.caching) +
         " batch=" + std::to_string(c.batch) + " max_result_size=" + std::to_string(c.max_result_size) +
         (c.allow_partial ? " partial" : "") + " selection=" + std::to_string(c.selection);
}

std::vector<std::string> model_scan(const model_t& m, const scan_case& c, std::vector<std::string>* rows) {
  std::vector<std::string> out;
  std::int64_t n = 0;
  auto take = [&](const std::string& k, const std::map<std::string, std::string>& all_cols) {
    std::map<std::string, std::string> cols;
    for (auto& [fq, v] : all_cols)
      if (selected(c, fq)) cols[fq] = v;
    if (cols.empty()) return;  // rows without a selected cell are not returned
    if (c.limit >= 0 && n >= c.limit) return;
    ++n;
    rows->push_back(printable(k));
    for (auto& s : model_row_cells(k, cols)) out.push_back(s);
  };
  if (!c.reversed) {
    for (auto& [k, cols] : m) {
      bool after_start = c.start.empty() || k > c.start || (k == c.start && c.start_incl);
      bool before_stop = c.stop.empty() || k < c.stop || (k == c.stop && c.stop_incl);
      if (after_start && before_stop) take(k, cols);
    }
  } else {
    for (auto it = m.rbegin(); it != m.rend(); ++it) {
      const auto& k = it->first;
      bool below_start = c.start.empty() || k < c.start || (k == c.start && c.start_incl);
      bool above_stop = c.stop.empty() || k > c.stop || (k == c.stop && c.stop_incl);
      if (below_start && above_stop) take(k, it->second);
    }
  }
  return out;
}

const std::string kAlphabet = std::string("abcmnz") + std::string("\x00\x7f\x80\xff", 4);

std::string random_key(std::mt19937& rng) {
  std::uniform_int_distribution<int> len(1, 4);
  std::uniform_int_distribution<std::size_t> ch(0, kAlphabet.size() - 1);
  std::string k;
  int n = len(rng);
  for (int i = 0; i < n; ++i) k += kAlphabet[ch(rng)];
  return k;
}

int in_place_pages = 0;  // fetch mode 3 calls answered on the calling thread

std::vector<row_result> run_scan(cellar::table& t, const scan_case& c, int fetch_mode) {
  cellar::scan s;
  if (!c.start.empty()) s.start_row(c.start, c.start_incl);
  if (!c.stop.empty()) s.stop_row(c.stop, c.stop_incl);
  s.reversed(c.reversed).limit(c.limit).caching(c.caching).batch(c.batch);
  s.max_result_size(c.max_result_size).allow_partial_results(c.allow_partial);
  if (c.selection == 1) s.family("f");
  if (c.selection == 2) s.family("g");
  if (c.selection == 3) s.column("f", "a").column("g", "b");
  auto sc = t.scan(s);
  REQUIRE_OK(sc);
  std::vector<row_result> out;
  if (fetch_mode == 0) {
    auto all = sc->all();
    REQUIRE_OK(all);
    out = std::move(all.value());
  } else if (fetch_mode == 1) {
    for (int guard = 0; guard < 100000; ++guard) {
      auto r = sc->next();
      REQUIRE_OK(r);
      if (!r->has_value()) break;
      out.push_back(std::move(**r));
    }
  } else if (fetch_mode == 3) {
    // Pages read in place on this thread when their partitions are free (as the RPC server
    // reads a scan's first page): the same results as through the partitions' actors.
    for (int guard = 0; guard < 100000; ++guard) {
      std::promise<cellar::result<std::vector<row_result>>> p;
      auto f = p.get_future();
      bool here = false;
      const auto caller = std::this_thread::get_id();
      sc->next_async(5, [&](cellar::result<std::vector<row_result>> r) {
        here = std::this_thread::get_id() == caller;
        p.set_value(std::move(r));
      });
      auto r = f.get();
      if (here) ++in_place_pages;
      REQUIRE_OK(r);
      const bool end = r->size() < 5;
      for (auto& x : r.value()) out.push_back(std::move(x));
      if (end) break;
    }
  } else {
    for (int guard = 0; guard < 100000; ++guard) {
      auto r = sc->next(7);
      REQUIRE_OK(r);
      const bool end = r->size() < 7;
      for (auto& x : r.value()) out.push_back(std::move(x));
      if (end) break;
    }
  }
  return out;
}

void check_against_model(cellar::table& t, const model_t& m, std::mt19937& rng, int scans) {
  std::vector<std::string> keys;
  for (auto& kv : m) keys.push_back(kv.first);
  auto bound = [&]() -> std::string {
    int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    if (kind < 2) return "";
    if (kind < 6 && !keys.empty()) return keys[std::uniform_int_distribution<std::size_t>(0, keys.size() - 1)(rng)];
    return random_key(rng);
  };
  std::bernoulli_distribution coin(0.5);
  for (int i = 0; i < scans; ++i) {
    scan_case c;
    c.reversed = coin(rng);
    c.start = bound();
    c.stop = bound();
    // Mostly well-ordered bounds so that scans return rows.
    if (!c.start.empty() && !c.stop.empty() && std::uniform_int_distribution<int>(0, 9)(rng) < 8) {
      if (!c.reversed && c.start > c.stop) std::swap(c.start, c.stop);
      if (c.reversed && c.start < c.stop) std::swap(c.start, c.stop);
    }
    c.start_incl = coin(rng);
    c.stop_incl = coin(rng);
    c.limit = coin(rng) ? -1 : std::uniform_int_distribution<std::int64_t>(0, 40)(rng);
    c.caching = std::uniform_int_distribution<std::int64_t>(1, 64)(rng);
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0)
      c.batch = std::uniform_int_distribution<std::int64_t>(1, 2)(rng);
    if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) {
      c.max_result_size = std::uniform_int_distribution<int>(0, 1)(rng) ? 1 : 60;
      c.allow_partial = coin(rng);
    }
    c.selection = std::uniform_int_distribution<int>(0, 5)(rng);
    if (c.selection > 3) c.selection = 0;
    const int mode = std::uniform_int_distribution<int>(0, 3)(rng);
    // Skip start > stop for forward scans (start < stop for reversed): not a rule in scope.
    if (!c.start.empty() && !c.stop.empty() && ((!c.reversed && c.start > c.stop) || (c.reversed && c.start < c.stop)))
      continue;
    INFO("scan " << i << ": " << describe(c) << " mode=" << mode);
    std::vector<std::string> want_rows;
    auto want = model_scan(m, c, &want_rows);
    auto got = run_scan(t, c, mode);
    // With batch or partial results, one row may come as several consecutive results.
    const bool split = c.batch > 0 || (c.allow_partial && c.max_result_size > 0);
    std::vector<std::string> got_rows;
    for (std::size_t j = 0; j < got.size(); ++j) {
      CHECK_FALSE(got[j].cells.empty());
      if (c.batch > 0) CHECK(got[j].cells.size() <= static_cast<std::size_t>(c.batch));
      if (split) {
        CHECK(got[j].partial == (j + 1 < got.size() && got[j + 1].row == got[j].row));
      } else {
        CHECK_FALSE(got[j].partial);
      }
      if (!split || j == 0 || got[j - 1].row != got[j].row) got_rows.push_back(printable(got[j].row));
    }
    REQUIRE(got_rows == want_rows);
    REQUIRE(flatten(got) == want);
  }
}

// Writes ~n random rows (1-3 cells over two families) with multi-row puts.
void fill_random(cellar::table& t, model_t& m, std::mt19937& rng, int n) {
  std::vector<cellar::put> puts;
  for (int i = 0; i < n; ++i) {
    auto k = random_key(rng);
    cellar::put p(k);
    int cells = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int c = 0; c < cells; ++c) {
      std::string f = std::bernoulli_distribution(0.5)(rng) ? "f" : "g";
      std::string q = std::string(1, static_cast<char>('a' + std::uniform_int_distribution<int>(0, 4)(rng)));
      std::string v = "v" + std::to_string(i) + "_" + std::to_string(c);
      p.add(f, q, 1, v);
      m[k][f + ":" + q] = v;  // same coordinates: the last write wins (R3)
    }
    puts.push_back(std::move(p));
    if (puts.size() == 25) {
      REQUIRE_OK(t.put(puts));
      puts.clear();
    }
  }
  if (!puts.empty()) REQUIRE_OK(t.put(puts));
}

std::uint64_t model_cells(const model_t& m) {
  std::uint64_t n = 0;
  for (auto& kv : m) n += kv.second.size();
  return n;
}

void model_test(fixture& fx, const std::string& name, partition_spec spec, std::uint32_t seed) {
  auto t = fx.make(name, spec);
  std::mt19937 rng(seed);
  model_t m;
  fill_random(t, m, rng, 400);
  INFO("table " << name << ", " << m.size() << " rows");

  auto st = fx.stats(name);
  REQUIRE(st.cells_per_partition.size() == spec.count());
  REQUIRE(st.cells == model_cells(m));
  REQUIRE(std::accumulate(st.cells_per_partition.begin(), st.cells_per_partition.end(), std::uint64_t{0}) == st.cells);

  in_place_pages = 0;
  check_against_model(t, m, rng, 150);
  CHECK(in_place_pages > 0);  // nothing else runs: most in-place fetches find their partitions free

  // Multi-get: results in request order, present and absent rows mixed.
  std::vector<std::string> keys;
  for (auto& kv : m) keys.push_back(kv.first);
  std::vector<cellar::get> gets;
  std::vector<std::string> asked;
  for (int i = 0; i < 60; ++i) {
    std::string k = std::bernoulli_distribution(0.7)(rng)
                        ? keys[std::uniform_int_distribution<std::size_t>(0, keys.size() - 1)(rng)]
                        : random_key(rng);
    asked.push_back(k);
    gets.emplace_back(k);
  }
  auto mg = t.get(gets);
  REQUIRE_OK(mg);
  REQUIRE(mg->size() == asked.size());
  for (std::size_t i = 0; i < asked.size(); ++i) {
    INFO("get " << i << " row " << printable(asked[i]));
    auto it = m.find(asked[i]);
    const auto& r = mg.value()[i];
    if (it == m.end()) {
      CHECK(r.cells.empty());
      CHECK_FALSE(r.exists);
    } else {
      CHECK(r.row == asked[i]);
      CHECK(r.exists);
      CHECK(flatten({r}) == model_row_cells(it->first, it->second));
    }
  }

  // Delete a third of the rows and compare again.
  std::vector<std::string> victims;
  for (std::size_t i = 0; i < keys.size(); i += 3) victims.push_back(keys[i]);
  for (auto& k : victims) {
    REQUIRE_OK(t.remove(cellar::deletion(k)));
    m.erase(k);
  }
  REQUIRE(fx.stats(name).cells == model_cells(m));
  check_against_model(t, m, rng, 100);
}

}  // namespace

TEST_CASE("global scan order matches a model: single partition", "[partitions][model]") {
  fixture fx;
  model_test(fx, "single", partition_spec::single(), 11);
}

TEST_CASE("global scan order matches a model: KEY (hash) partitions", "[partitions][model]") {
  fixture fx;
  model_test(fx, "hashed", partition_spec::hash(7), 22);
}

TEST_CASE("global scan order matches a model: KEY prefix partitions", "[partitions][model]") {
  fixture fx;
  model_test(fx, "prefixed", partition_spec::hash_prefix(5, 1), 33);
}

TEST_CASE("global scan order matches a model: RANGE COLUMNS partitions", "[partitions][model]") {
  fixture fx;
  model_test(fx, "ranged",
             partition_spec::range_bounds({std::string("\x00", 1) + "x", "b", "m", "z", std::string("\x80", 1)}), 44);
}

TEST_CASE("scans stay globally ordered while rows are being written", "[partitions][concurrency]") {
  fixture fx;
  auto t = fx.make("live", partition_spec::hash(5));
  std::set<std::string> initial;
  for (int i = 0; i < 300; i += 2) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "k%05d", i);
    initial.insert(buf);
    REQUIRE_OK(t.put(cellar::put(buf).add("f", "q", 1, "v")));
  }
  std::atomic<bool> done{false};
  std::atomic<int> write_errors{0};
  std::thread writer([&] {
    auto w = t;
    for (int i = 1; i < 300; i += 2) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "k%05d", i);
      if (!w.put(cellar::put(buf).add("f", "q", 1, "v")).is_ok()) write_errors.fetch_add(1);
    }
    done = true;
  });
  int scans = 0;
  while (!done.load() || scans < 3) {
    ++scans;
    const bool reversed = scans % 2 == 0;
    auto sc = t.scan(cellar::scan().reversed(reversed).caching(7));
    REQUIRE_OK(sc);
    auto all = sc->all();
    REQUIRE_OK(all);
    std::vector<std::string> rows;
    for (auto& r : all.value()) rows.push_back(r.row);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      INFO("scan " << scans << (reversed ? " reversed" : "") << " at " << i);
      REQUIRE((reversed ? rows[i - 1] > rows[i] : rows[i - 1] < rows[i]));
    }
    // Rows that existed before the scan started are all there.
    std::set<std::string> got(rows.begin(), rows.end());
    for (auto& k : initial) {
      INFO("missing " << k);
      REQUIRE(got.count(k) == 1);
    }
  }
  writer.join();
  REQUIRE(write_errors.load() == 0);
  auto sc = t.scan(cellar::scan());
  REQUIRE_OK(sc);
  auto all = sc->all();
  REQUIRE_OK(all);
  REQUIRE(all->size() == 300);
}

TEST_CASE("hash partitions spread rows", "[partitions][placement]") {
  fixture fx;
  auto t = fx.make("spread", partition_spec::hash(7));
  for (int i = 0; i < 700; ++i) REQUIRE_OK(t.put(cellar::put("user" + std::to_string(i)).add("f", "q", 1, "v")));
  auto st = fx.stats("spread");
  REQUIRE(st.cells == 700);
  REQUIRE(st.cells_per_partition.size() == 7);
  for (auto c : st.cells_per_partition) {
    CHECK(c > 40);  // expected 100 each
    CHECK(c < 200);
  }
  // Placement is a function of the key: rewriting the same rows changes nothing.
  for (int i = 0; i < 700; ++i) REQUIRE_OK(t.put(cellar::put("user" + std::to_string(i)).add("f", "q", 1, "w")));
  REQUIRE(fx.stats("spread").cells_per_partition == st.cells_per_partition);
}

TEST_CASE("key-prefix partitions keep a prefix in one partition", "[partitions][placement]") {
  fixture fx;
  auto t = fx.make("kp", partition_spec::hash_prefix(5, 2));
  for (int i = 0; i < 20; ++i) REQUIRE_OK(t.put(cellar::put("aa" + std::to_string(i)).add("f", "q", 1, "v")));
  auto st = fx.stats("kp");
  REQUIRE(st.cells_per_partition.size() == 5);
  REQUIRE(std::count(st.cells_per_partition.begin(), st.cells_per_partition.end(), 20u) == 1);
  REQUIRE(std::count(st.cells_per_partition.begin(), st.cells_per_partition.end(), 0u) == 4);
  // Prefix scan returns them in order.
  auto sc = t.scan(cellar::scan().start_row("aa").stop_row("ab"));
  REQUIRE_OK(sc);
  auto all = sc->all();
  REQUIRE_OK(all);
  REQUIRE(all->size() == 20);
  REQUIRE(
      std::is_sorted(all->begin(), all->end(), [](const row_result& a, const row_result& b) { return a.row < b.row; }));
}

TEST_CASE("range partitions place rows by bounds; a row equal to a bound goes to the next partition",
          "[partitions][placement]") {
  fixture fx;
  auto t = fx.make("rp", partition_spec::range_bounds({"d", "h", "p"}));
  for (const char* r : {"a", "d", "g", "h", "p", "z"}) REQUIRE_OK(t.put(cellar::put(r).add("f", "q", 1, r)));
  auto st = fx.stats("rp");
  REQUIRE(st.cells_per_partition == std::vector<std::uint64_t>{1, 2, 1, 2});
  // Limit holds for the whole scan, across partitions, in both directions.
  auto fwd = t.scan(cellar::scan().start_row("c").limit(3).caching(1));
  REQUIRE_OK(fwd);
  auto f = fwd->all();
  REQUIRE_OK(f);
  REQUIRE(rows_of(f.value()) == std::vector<std::string>{"d", "g", "h"});
  // Multi-get answers in request order, duplicates and absent rows included.
  auto mg = t.get(std::vector<cellar::get>{cellar::get("z"), cellar::get("a"), cellar::get("zz"), cellar::get("a"),
                                           cellar::get("h")});
  REQUIRE_OK(mg);
  REQUIRE(mg->size() == 5);
  CHECK(mg.value()[0].cells.at(0).value == "z");
  CHECK(mg.value()[1].cells.at(0).value == "a");
  CHECK(mg.value()[2].cells.empty());
  CHECK(mg.value()[3].cells.at(0).value == "a");
  CHECK(mg.value()[4].cells.at(0).value == "h");
  auto rev = t.scan(cellar::scan().start_row("o").reversed().limit(3).caching(1));
  REQUIRE_OK(rev);
  auto r = rev->all();
  REQUIRE_OK(r);
  REQUIRE(rows_of(r.value()) == std::vector<std::string>{"h", "g", "d"});
}

TEST_CASE("truncate_table empties and keeps the schema", "[partitions][ddl]") {
  fixture fx;
  auto t = fx.make("tr", partition_spec::hash(3));
  for (int i = 0; i < 50; ++i) REQUIRE_OK(t.put(cellar::put("r" + std::to_string(i)).add("f", "q", 1, "v")));
  REQUIRE(fx.stats("tr").cells == 50);
  auto before = fx.store->describe("tr");
  REQUIRE_OK(before);
  REQUIRE_OK(fx.store->truncate_table("tr"));
  auto st = fx.stats("tr");
  REQUIRE(st.cells == 0);
  REQUIRE(st.cells_per_partition == std::vector<std::uint64_t>{0, 0, 0});
  auto sc = t.scan(cellar::scan());
  REQUIRE_OK(sc);
  auto all = sc->all();
  REQUIRE_OK(all);
  REQUIRE(all->empty());
  auto g = t.get(cellar::get("r1"));
  REQUIRE_OK(g);
  REQUIRE(g->cells.empty());
  auto after = fx.store->describe("tr");
  REQUIRE_OK(after);
  REQUIRE(after.value() == before.value());
  REQUIRE_OK(t.put(cellar::put("again").add("f", "q", 1, "v")));
  REQUIRE(fx.stats("tr").cells == 1);
}

TEST_CASE("drop_table then open_table is TABLE_NOT_FOUND", "[partitions][ddl]") {
  fixture fx;
  auto t = fx.make("dr", partition_spec::range_bounds({"m"}));
  REQUIRE_OK(t.put(cellar::put("a").add("f", "q", 1, "v")));
  auto names = fx.store->list_tables();
  REQUIRE(std::find(names.begin(), names.end(), "dr") != names.end());
  REQUIRE_OK(fx.store->drop_table("dr"));
  REQUIRE(fx.store->open_table("dr").code() == code::table_not_found);
  REQUIRE_FALSE(fx.store->table_exists("dr"));
  names = fx.store->list_tables();
  REQUIRE(std::find(names.begin(), names.end(), "dr") == names.end());
  // An old handle now refuses.
  REQUIRE(t.get(cellar::get("a")).code() == code::table_not_found);
  REQUIRE(t.put(cellar::put("b").add("f", "q", 1, "v")).code() == code::table_not_found);
  // The name can be reused; the new table is empty.
  auto t2 = fx.make("dr", partition_spec::hash(3));
  auto g = t2.get(cellar::get("a"));
  REQUIRE_OK(g);
  REQUIRE(g->cells.empty());
}
