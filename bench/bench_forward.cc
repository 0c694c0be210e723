// bench_forward: the cost of a forwarded request against a direct one, on a running cluster.
//
//   build/bench/bench_forward ZK_HOST:PORT[/chroot] [ops=2000]
//
// Creates (if missing) the table 'bench_forward' with one family, reads the placement, and
// connects to one node A with the plain RPC client. Then, one request at a time (latency,
// not throughput): single-row puts and gets of rows that A owns (direct) and of rows that
// another node owns (A forwards them over CAF's middleman), interleaved in rounds so that
// machine noise hits both alike. Prints the median and p99 of each, in microseconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cellar/client.h"
#include "cluster/membership.h"
#include "cluster/zk_state.h"
#include "route/router.h"

using namespace cellar;
using clk = std::chrono::steady_clock;

namespace {

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_forward ZK_HOST:PORT[/chroot] [ops]\n");
    return 2;
  }
  const int ops = argc > 2 ? std::atoi(argv[2]) : 2000;
  cluster::zk_options zo;
  zo.connect = argv[1];
  auto zk = cluster::zk_client::open(zo);
  if (!zk) return std::fprintf(stderr, "%s\n", zk.error().to_string().c_str()), 1;
  auto members = cluster::membership::list(**zk);
  if (!members || members->size() < 2) return std::fprintf(stderr, "need a cluster of 2+ nodes\n"), 1;
  const auto& a = members->front();
  auto conn = rpc::connect(a.data_address);
  if (!conn) return std::fprintf(stderr, "%s\n", conn.error().to_string().c_str()), 1;
  table_descriptor d;
  d.name = "bench_forward";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(6);
  if (auto s = (*conn)->create_table(d, schema_origin::oceanbase_ddl); !s && s.code() != code::already_exists)
    return std::fprintf(stderr, "%s\n", s.to_string().c_str()), 1;
  auto desc = (*conn)->describe("bench_forward");
  auto pm = cluster::read_placement(**zk);
  if (!desc || !pm) return std::fprintf(stderr, "cannot read the table or the placement\n"), 1;
  const auto& owners = pm->map.tables.at("bench_forward");
  std::vector<std::string> mine, theirs;
  for (int i = 0; mine.size() < 64 || theirs.size() < 64; ++i) {
    auto row = "row" + std::to_string(i);
    (owners[detail::partition_of(desc->partitioning, row)].node == a.id ? mine : theirs).push_back(row);
  }
  std::vector<double> put_direct, put_fwd, get_direct, get_fwd;
  auto timed = [](auto f) {
    auto t0 = clk::now();
    f();
    return std::chrono::duration<double, std::micro>(clk::now() - t0).count();
  };
  const std::string value(100, 'v');
  for (int i = 0; i < ops; ++i) {
    const auto& m = mine[static_cast<std::size_t>(i) % mine.size()];
    const auto& t = theirs[static_cast<std::size_t>(i) % theirs.size()];
    put_direct.push_back(timed([&] { (void)(*conn)->put("bench_forward", cellar::put(m).add("f", "q", value)); }));
    put_fwd.push_back(timed([&] { (void)(*conn)->put("bench_forward", cellar::put(t).add("f", "q", value)); }));
    get_direct.push_back(timed([&] { (void)(*conn)->get("bench_forward", cellar::get(m)); }));
    get_fwd.push_back(timed([&] { (void)(*conn)->get("bench_forward", cellar::get(t)); }));
  }
  std::printf("node %s, %d of each (us)   median      p99\n", a.id.c_str(), ops);
  std::printf("put direct                 %8.1f %8.1f\n", pct(put_direct, 0.5), pct(put_direct, 0.99));
  std::printf("put forwarded              %8.1f %8.1f\n", pct(put_fwd, 0.5), pct(put_fwd, 0.99));
  std::printf("get direct                 %8.1f %8.1f\n", pct(get_direct, 0.5), pct(get_direct, 0.99));
  std::printf("get forwarded              %8.1f %8.1f\n", pct(get_fwd, 0.5), pct(get_fwd, 0.99));
  return 0;
}
