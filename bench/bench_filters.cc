// bench/bench_filters.cc: the three performance goals of filters.
//
// One process loads --rows rows (default 1,000,000; keys "row%07d", one family, one
// 100-byte value per row, 1 row in 100 a "hit" whose value starts with "HIT") into a
// table of --partitions KEY-hash partitions, then measures, each as the median of --reps
// repetitions:
//
//   1. no-match    a full scan whose filter matches nothing (ValueFilter(=, 'binary:none'))
//                  against the same full scan without a filter.        goal: <= 1.25x
//   2. prefix      PrefixFilter('row00042') (100 rows) against walking every row to find
//                  the same 100 (RowFilter(=, 'regexstring:^row00042'), which cannot seek).
//                                                                      goal: >= 100x faster
//   3. wire        through a cellar-server in this process (loopback, Cap'n Proto RPC scan,
//                  --page results per call): ValueFilter(=, 'binaryprefix:HIT') (1% of the
//                  cells) against fetching every cell and filtering in the client.
//                                                                      goal: >= 5x faster
//
// Output: one markdown table with the two timings, their ratio and the goal. Figures
// belong on a quiet machine (docs/benchmarks.md); with other work running they move a lot.
// Run with --help for every option.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cellar/client.h"
#include "cellar/connection.h"
#include "cellar/store.h"
#include "rpc/server.h"

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
  int rows = 1'000'000;
  int partitions = 8;
  int reps = 3;
  int page = 1000;
  int workers = 0;
};

double seconds_of(const std::function<void()>& f) {
  const auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void die(const std::string& what, const cellar::status& s) {
  std::fprintf(stderr, "bench_filters: %s: %s\n", what.c_str(), s.to_string().c_str());
  std::exit(1);
}

std::string key(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "row%07d", i);
  return b;
}

// Every result of a scan through `next`; returns the number of cells.
template <class Next>
std::size_t drain(Next next) {
  std::size_t cells = 0;
  for (;;) {
    auto page = next();
    if (!page) die("scan", page.error());
    if (page->empty()) return cells;
    for (const auto& r : page.value()) cells += r.cells.size();
  }
}

std::size_t scan_embedded(cellar::table& t, const cellar::scan& s) {
  auto sc = t.scan(s);
  if (!sc) die("scan", sc.error());
  return drain([&] { return sc->next(1000); });
}

std::size_t scan_remote(cellar::connection& c, const cellar::scan& s, int page,
                        const std::function<bool(const cellar::cell&)>& keep = {}) {
  auto st = c.scan("t", s);
  if (!st) die("remote scan", st.error());
  std::size_t kept = 0;
  for (;;) {
    auto p = st.value()->next(static_cast<std::size_t>(page));
    if (!p) die("remote scan", p.error());
    if (p->empty()) return kept;
    for (const auto& r : p.value())
      for (const auto& x : r.cells)
        if (!keep || keep(x)) ++kept;
  }
}

struct row {
  std::string what, with, without;
  double a, b, goal;
  bool lower_is_better;  // a / b <= goal, else b / a >= goal
};

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> int {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (a == "--rows")
      o.rows = next();
    else if (a == "--partitions")
      o.partitions = next();
    else if (a == "--reps")
      o.reps = next();
    else if (a == "--page")
      o.page = next();
    else if (a == "--workers")
      o.workers = next();
    else {
      std::printf(
          "usage: bench_filters [--rows N (1000000)] [--partitions P (8)] [--reps R (3)]\n"
          "                     [--page ROWS per remote call (1000)] [--workers CAF threads (0: one per core)]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (o.rows < 10'000) o.rows = 10'000;  // the prefix case needs rows row0004200..99

  cellar::store_options so;
  so.worker_threads = static_cast<std::size_t>(o.workers);
  auto opened = cellar::store::open(so);
  if (!opened) die("open", opened.error());
  auto& store = *opened.value();
  cellar::table_descriptor d;
  d.name = "t";
  d.partitioning = cellar::partition_spec::hash(static_cast<std::uint32_t>(o.partitions));
  cellar::family_descriptor f;
  f.name = "f";
  d.families = {f};
  if (auto s = store.create_table(d, cellar::schema_origin::hbase_shell); !s) die("create", s);
  auto t = store.open_table("t");
  if (!t) die("open table", t.error());

  std::fprintf(stderr, "loading %d rows...\n", o.rows);
  std::vector<cellar::put> batch;
  for (int i = 0; i < o.rows; ++i) {
    std::string v = (i % 100 == 7 ? "HIT" : "miss") + std::string(100, 'x');
    v.resize(100);
    batch.push_back(cellar::put(key(i), 1).add("f", "q", std::move(v)));
    if (batch.size() == 10'000 || i + 1 == o.rows) {
      if (auto s = t->put(batch); !s) die("load", s);
      batch.clear();
    }
  }

  std::vector<row> out;
  // 1. A filter that matches nothing against no filter.
  {
    const auto none = cellar::scan().caching(1000);
    const auto nomatch = cellar::scan().caching(1000).filter(
        cellar::value_filter{cellar::compare_op::equal, cellar::comparator::binary("none")});
    std::vector<double> with, without;
    for (int r = 0; r < o.reps; ++r) {
      std::size_t n = 0, m = 0;
      without.push_back(seconds_of([&] { n = scan_embedded(*t, none); }));
      with.push_back(seconds_of([&] { m = scan_embedded(*t, nomatch); }));
      if (n != static_cast<std::size_t>(o.rows) || m != 0) {
        std::fprintf(stderr, "bench_filters: wrong answers (%zu, %zu)\n", n, m);
        return 1;
      }
    }
    out.push_back({"full scan, filter matching nothing vs no filter", "ValueFilter(=, binary:none)", "no filter",
                   median(with), median(without), 1.25, true});
  }
  // 2. PrefixFilter (seeks) against a filter that must walk every row to find the same rows.
  {
    const auto prefix = cellar::scan().filter(cellar::prefix_filter{"row00042"});
    const auto walk = cellar::scan().caching(1000).filter(
        cellar::row_filter{cellar::compare_op::equal, cellar::comparator::regex("^row00042")});
    std::vector<double> with, without;
    for (int r = 0; r < o.reps; ++r) {
      std::size_t n = 0, m = 0;
      with.push_back(seconds_of([&] { n = scan_embedded(*t, prefix); }));
      without.push_back(seconds_of([&] { m = scan_embedded(*t, walk); }));
      if (n != 100 || m != 100) {
        std::fprintf(stderr, "bench_filters: wrong answers (%zu, %zu)\n", n, m);
        return 1;
      }
    }
    out.push_back({"100 of the rows by prefix: seek vs walk", "PrefixFilter('row00042')",
                   "RowFilter(=, regexstring:^row00042)", median(with), median(without), 100, false});
  }
  // 3. Over the wire: a 1% ValueFilter in the server against every cell to the client.
  {
    cellar::rpc::server_options srv;
    srv.port = 0;
    auto server = cellar::rpc::server::start(store, srv);
    if (!server) die("server", server.error());
    auto c = cellar::rpc::connect("127.0.0.1:" + std::to_string(server.value()->port()));
    if (!c) die("connect", c.error());
    const auto hits = cellar::scan().caching(o.page).filter(
        cellar::value_filter{cellar::compare_op::equal, cellar::comparator::binary_prefix("HIT")});
    const auto all = cellar::scan().caching(o.page);
    auto is_hit = [](const cellar::cell& x) { return x.value.compare(0, 3, "HIT") == 0; };
    std::vector<double> with, without;
    for (int r = 0; r < o.reps; ++r) {
      std::size_t n = 0, m = 0;
      with.push_back(seconds_of([&] { n = scan_remote(*c.value(), hits, o.page); }));
      without.push_back(seconds_of([&] { m = scan_remote(*c.value(), all, o.page, is_hit); }));
      if (n != m || n != static_cast<std::size_t>(o.rows / 100)) {
        std::fprintf(stderr, "bench_filters: wrong answers (%zu, %zu)\n", n, m);
        return 1;
      }
    }
    out.push_back({"1% of the cells over the wire: filter in the server vs in the client",
                   "ValueFilter(=, binaryprefix:HIT)", "every cell, filtered in the client", median(with),
                   median(without), 5, false});
  }

  std::printf("rows: %d, partitions: %d, reps: %d (medians)\n\n", o.rows, o.partitions, o.reps);
  std::printf("| goal | with | seconds | against | seconds | ratio | target | met |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : out) {
    const double ratio = r.lower_is_better ? r.a / r.b : r.b / r.a;
    const bool met = r.lower_is_better ? ratio <= r.goal : ratio >= r.goal;
    std::printf("| %s | %s | %.4f | %s | %.4f | %.2fx | %s%.2fx | %s |\n", r.what.c_str(), r.with.c_str(), r.a,
                r.without.c_str(), r.b, ratio, r.lower_is_better ? "<= " : ">= ", r.goal, met ? "yes" : "no");
  }
  return 0;
}
