// bench/bench_row_layout.cc: what packing a small row's cells into one block costs the
// operations on it, against keeping them in a B-tree (cell_map::packing).
//
// Two cell_maps, one packed (the default), one with every row a B-tree, each loaded with
// the same --rows YCSB rows (key "user" + a 64-bit hash, 10 fields of --value bytes). Then,
// on each, --ops of each operation on random rows, in the shape the memtable does them:
//   row       a whole row read: every cell's qualifier, timestamp and value copied out
//   column    one column's newest value read (lower_bound in the row)
//   update    one column's only version given a newer timestamp and a new value of its size
//             (memtable::replace_sole_version: newest_of, last_of_column, reserve, replace)
//   scan      --scan consecutive rows read whole from a random start
// Thread CPU time per operation (less disturbed by other processes than wall time), the
// median of --reps repetitions whose layouts alternate (A, B, B, A, ...) so drift hits both
// alike. Not a test: run it by hand (build/bench/bench_row_layout).
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "partition/cell_map.h"

using cellar::detail::cell_map;
using cellar::detail::cell_value;
using cellar::detail::key_view;
using cellar::detail::row_probe;
using cellar::detail::short_bytes;

namespace {

double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct options {
  std::size_t rows = 100000, value = 10, ops = 2000000, scan = 100, reps = 5;
};

std::vector<std::string> make_keys(std::size_t n) {
  std::vector<std::string> keys;
  std::mt19937_64 rng(1);
  for (std::size_t i = 0; i < n; ++i) keys.push_back("user" + std::to_string(rng()));
  return keys;
}

const std::vector<std::string>& fields() {
  static const std::vector<std::string> f = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 10; ++i) v.push_back("field" + std::to_string(i));
    return v;
  }();
  return f;
}

void load(cell_map& m, const std::vector<std::string>& keys, std::size_t value) {
  const std::string v(value, 'v');
  for (const auto& k : keys)
    for (const auto& f : fields()) {
      auto it = m.try_emplace(key_view{k, f, 1700000000000}).first;
      m.assign(it, cell_value{short_bytes(v), INT64_MAX});
    }
}

struct figures {
  double row = 0, column = 0, update = 0, scan = 0;
};

figures run(cell_map& m, const std::vector<std::string>& keys, const options& o, std::int64_t& ts) {
  std::mt19937_64 rng(2);
  std::string out;
  out.reserve(4096);
  std::size_t sink = 0;
  figures f;
  double t = thread_seconds();
  for (std::size_t i = 0; i < o.ops; ++i) {
    auto cells = m.cells_of(keys[rng() % keys.size()]);
    out.clear();
    for (auto it = cells.begin(), end = cells.end(); it != end; ++it) {
      out.append(it.qualifier());
      const auto v = it.value();
      out.append(v.value);
      sink += static_cast<std::size_t>(it.ts() + v.expires_at);
    }
    sink += out.size();
  }
  f.row = (thread_seconds() - t) / static_cast<double>(o.ops);
  t = thread_seconds();
  for (std::size_t i = 0; i < o.ops; ++i) {
    auto cells = m.cells_of(keys[rng() % keys.size()]);
    auto it = cells.lower_bound(cell_map::column_view{fields()[rng() % 10], INT64_MAX});
    if (it != cells.end()) sink += it.value().value.size();
  }
  f.column = (thread_seconds() - t) / static_cast<double>(o.ops);
  const std::string nv(o.value, 'w');
  t = thread_seconds();
  ++ts;
  for (std::size_t i = 0; i < o.ops; ++i) {
    auto it = m.newest_of(keys[rng() % keys.size()], fields()[rng() % 10]);
    if (it == m.end() || !cell_map::last_of_column(it)) continue;
    cell_value v{short_bytes(nv), INT64_MAX};
    m.reserve(it, ts, v);
    m.replace(it, ts, std::move(v));
  }
  f.update = (thread_seconds() - t) / static_cast<double>(o.ops);
  const std::size_t scans = o.ops / o.scan;
  t = thread_seconds();
  for (std::size_t i = 0; i < scans; ++i) {
    std::size_t rows = 0;
    std::string_view last;
    out.clear();
    for (auto it = m.lower_bound(row_probe{keys[rng() % keys.size()], false}); it != m.end(); ++it) {
      if (it.row() != last) {
        if (++rows > o.scan) break;
        last = it.row();
      }
      out.append(it.qualifier());
      out.append(it.value().value);
      if (out.size() > 1 << 20) out.clear();
    }
    sink += out.size();
  }
  f.scan = (thread_seconds() - t) / static_cast<double>(scans);
  if (sink == 42) std::puts("");
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const std::size_t v = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--rows")
      o.rows = v;
    else if (a == "--value")
      o.value = v;
    else if (a == "--ops")
      o.ops = v;
    else if (a == "--scan")
      o.scan = v;
    else if (a == "--reps")
      o.reps = v;
    else {
      std::fprintf(stderr, "usage: bench_row_layout [--rows N] [--value BYTES] [--ops N] [--scan ROWS] [--reps N]\n");
      return 2;
    }
  }
  const auto keys = make_keys(o.rows);
  cell_map packed, tree(cell_map::packing::none());
  load(packed, keys, o.value);
  load(tree, keys, o.value);
  std::int64_t ts_packed = 1700000000000, ts_tree = ts_packed;
  std::vector<figures> fp, ft;
  for (std::size_t r = 0; r < o.reps; ++r) {
    if (r % 2 == 0) {
      fp.push_back(run(packed, keys, o, ts_packed));
      ft.push_back(run(tree, keys, o, ts_tree));
    } else {
      ft.push_back(run(tree, keys, o, ts_tree));
      fp.push_back(run(packed, keys, o, ts_packed));
    }
  }
  auto col = [](const std::vector<figures>& v, double figures::*m) {
    std::vector<double> x;
    for (const auto& f : v) x.push_back(f.*m * 1e9);
    return median(x);
  };
  std::printf("%zu rows of 10 fields of %zu bytes, %zu ops, median of %zu (ns per op, thread CPU)\n", o.rows, o.value,
              o.ops, o.reps);
  std::printf("| operation | B-tree rows | packed rows | packed / B-tree |\n|---|--:|--:|--:|\n");
  const std::pair<const char*, double figures::*> ops[] = {{"row", &figures::row},
                                                           {"column", &figures::column},
                                                           {"update", &figures::update},
                                                           {"scan", &figures::scan}};
  for (const auto& [name, m] : ops) {
    const double a = col(ft, m), b = col(fp, m);
    std::printf("| %s | %.1f | %.1f | %.2fx |\n", name, a, b, b / a);
  }
  return 0;
}
