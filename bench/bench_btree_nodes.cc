// bench/bench_btree_nodes.cc: why cellar's B-trees choose their node size
// (util/sized_btree.h) instead of taking absl::btree_map's 256-byte nodes.
//
// For the slot shapes of cellar's three B-trees it builds the same map both ways and reports
// thread CPU time (less disturbed by other processes than wall time) and heap bytes:
//   rows of 10 cells     cell_map::row_cells, 80-byte slots, YCSB's 10 fields per row:
//                        100k rows, then 2M reads of a random whole row
//   delta                delta_map, 64-byte slots: 250k random keys, lookups, an in-order walk
//   row order            cell_map::row_order, 24-byte slots: the same
// Best of 3 repetitions. Not a test: run it by hand (build/bench/bench_btree_nodes).
#include <absl/container/btree_map.h>
#include <malloc.h>
#include <time.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "util/sized_btree.h"

namespace {

template <std::size_t N>
struct pad {
  char b[N];
};

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::size_t heap_bytes() { return mallinfo2().uordblks; }

std::size_t sink = 0;  // keeps the reads from being optimised away

struct column {
  std::string_view qualifier;
  long ts;
  bool operator<(const column& o) const { return qualifier < o.qualifier || (qualifier == o.qualifier && ts > o.ts); }
};

template <class Row>
void rows(const char* name) {
  static const char* fields[10] = {"field0", "field1", "field2", "field3", "field4",
                                   "field5", "field6", "field7", "field8", "field9"};
  const int n = 100000, reads = 2000000;
  double build = 1e9, read = 1e9;
  std::size_t bytes = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto h0 = heap_bytes();
    const double t0 = cpu_seconds();
    std::vector<std::unique_ptr<Row>> v(n);
    for (auto& r : v) {
      r = std::make_unique<Row>();
      for (auto* f : fields) (*r)[column{f, 1}];
    }
    const double t1 = cpu_seconds();
    bytes = heap_bytes() - h0;
    std::mt19937 rng(rep);
    for (int i = 0; i < reads; ++i)
      for (auto& kv : *v[rng() % n]) sink += static_cast<unsigned char>(kv.second.b[0]);
    const double t2 = cpu_seconds();
    build = std::min(build, (t1 - t0) / n * 1e9);
    read = std::min(read, (t2 - t1) / reads * 1e9);
  }
  std::printf("| rows of 10 cells | %s | %.0f ns | %.0f ns | | %.0f |\n", name, build, read,
              static_cast<double>(bytes) / n);
}

template <class Map>
void keyed(const char* shape, const char* name, const std::vector<std::string_view>& keys,
           const std::vector<std::string_view>& probes) {
  double insert = 1e9, find = 1e9, walk = 1e9;
  std::size_t bytes = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto h0 = heap_bytes();
    const double t0 = cpu_seconds();
    auto m = std::make_unique<Map>();
    for (auto k : keys) (*m)[k];
    const double t1 = cpu_seconds();
    bytes = heap_bytes() - h0;
    for (auto k : probes) sink += m->find(k) != m->end();
    const double t2 = cpu_seconds();
    for (auto& kv : *m) sink += kv.first.size();
    const double t3 = cpu_seconds();
    insert = std::min(insert, (t1 - t0) / keys.size() * 1e9);
    find = std::min(find, (t2 - t1) / probes.size() * 1e9);
    walk = std::min(walk, (t3 - t2) / keys.size() * 1e9);
  }
  std::printf("| %s | %s | %.0f ns | %.0f ns | %.1f ns | %.1f |\n", shape, name, insert, find, walk,
              static_cast<double>(bytes) / keys.size());
}

}  // namespace

int main() {
  using cellar::detail::sized_btree_map;
  std::mt19937_64 rng(1);
  std::vector<std::string> owned;
  for (int i = 0; i < 250000; ++i) owned.push_back(std::to_string(rng()) + "-0123456789");
  std::vector<std::string_view> keys(owned.begin(), owned.end()), probes;
  for (std::size_t i = 0; i < keys.size(); ++i) probes.push_back(keys[rng() % keys.size()]);

  std::printf(
      "| map | nodes | insert (rows: build a row) | find (rows: read a row) | in-order walk per key | bytes per key "
      "(row) |\n");
  std::printf("|---|---|--:|--:|--:|--:|\n");
  rows<sized_btree_map<column, pad<56>, std::less<column>, 1024>>("1 KB (cellar)");
  rows<absl::btree_map<column, pad<56>>>("256 B (absl::btree_map)");
  keyed<sized_btree_map<std::string_view, pad<40>, std::less<std::string_view>, 2048>>("delta", "2 KB (cellar)", keys,
                                                                                       probes);
  keyed<absl::btree_map<std::string_view, pad<40>>>("delta", "256 B (absl::btree_map)", keys, probes);
  keyed<sized_btree_map<std::string_view, void*, std::less<std::string_view>, 1024>>("row order", "1 KB (cellar)", keys,
                                                                                     probes);
  keyed<absl::btree_map<std::string_view, void*>>("row order", "256 B (absl::btree_map)", keys, probes);
  std::printf("(checksum %zu)\n", sink % 7);
}
