// cluster/size_splitter.h in one process: three members, each checking every 100 ms the
// partitions it is responsible for, split a table grown past its MAX_FILESIZE by
// themselves, single-copy or replicated as Raft groups; a table whose SPLIT_POLICY is
// DisabledRegionSplitPolicy stays whole; with the checks off, compact through any node
// splits what is past the limit.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cell_model.h"
#include "cellar/connection.h"
#include "cellar/store.h"
#include "cluster/member.h"
#include "cluster/zk_state.h"
#include "cluster_test.h"
#include "member_test.h"

using namespace cellar;

namespace {

constexpr auto check_every = std::chrono::milliseconds(100);
constexpr std::uint64_t max_filesize = 2u << 20;  // the least HBase and cellar accept
constexpr int rows = 300;                         // of 8 KiB: about 3 MiB, one split's worth

using node = zktest::member_node;
using zktest::model;
using zktest::scan_all;

// A member whose store checks its partitions' sizes every `every` (0: only at compact).
node join(const std::string& chroot, const std::string& id,
          std::chrono::milliseconds election = std::chrono::milliseconds(1000),
          std::chrono::milliseconds every = check_every) {
  store_options so;
  so.split_check_interval = every;
  return zktest::join_member(chroot, id, so, election);
}

struct cluster3 {
  node n1, n2, n3;
  std::vector<node*> all() { return {&n1, &n2, &n3}; }
  ~cluster3() {
    for (auto* x : {&n3, &n2, &n1}) x->m.reset();
    for (auto* x : {&n3, &n2, &n1})
      if (x->s) (void)x->s->close();
  }
};

void start(cluster3& c, const std::string& chroot, std::chrono::milliseconds election,
           std::chrono::milliseconds every = check_every) {
  c.n1 = join(chroot, "m1", election, every);
  c.n2 = join(chroot, "m2", election, every);
  c.n3 = join(chroot, "m3", election, every);
  REQUIRE(zktest::eventually([&] { return c.n3.m->report().nodes.size() == 3; }));
}

void create(cluster3& c, const std::string& name, std::map<std::string, std::string> attributes) {
  table_descriptor d;
  d.name = name;
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::single();
  d.attributes = std::move(attributes);
  REQUIRE_OK(c.n1.s->create_table(d, schema_origin::hbase_shell));
  REQUIRE(zktest::eventually([&] {
    for (auto* x : c.all())
      if (!x->s->table_exists(name)) return false;
    return true;
  }));
}

std::string row_of(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "r%04d", i);
  return b;
}

// Puts `rows` rows of 8 KiB through `c`, 20 a batch; every put must succeed (a split's
// freeze holds a batch: the connection sends it again). What was acknowledged.
model fill(connection& c, const std::string& table) {
  model acked;
  const std::string value(8192, 'v');
  for (int from = 0; from < rows; from += 20) {
    std::vector<batch_op> ops;
    for (int i = from; i < from + 20; ++i) ops.push_back(cellar::put(row_of(i)).add("f", "q", 1, value + row_of(i)));
    auto results = c.batch(table, ops);
    REQUIRE(results.size() == ops.size());
    for (std::size_t k = 0; k < ops.size(); ++k) {
      INFO(results[k].st.to_string());
      REQUIRE(results[k].st.is_ok());
      acked[{std::get<cellar::put>(ops[k]).row, "q"}] = value + std::get<cellar::put>(ops[k]).row;
    }
  }
  return acked;
}

std::size_t regions_of(store& s, const std::string& table) {
  auto r = s.list_regions(table);
  return r ? r->size() : 0;
}

// Small cells put through `c` until told to stop; every put must succeed (the connection
// sends again what a split's freeze refuses). `acked` is what was acknowledged.
struct writer {
  connection& c;
  std::string table;
  std::mutex mu;
  model acked;  // guarded by mu
  std::atomic<bool> stop{false};
  std::string failure;  // guarded by mu: the first error

  void run() {
    for (int i = 0; !stop.load(); ++i) {
      const std::string row = row_of((i * 37) % rows), q = "w" + std::to_string(i), v = "v" + std::to_string(i);
      auto st = c.put(table, cellar::put(row).add("f", q, 1, v));
      std::lock_guard lock(mu);
      if (st)
        acked[{row, q}] = v;
      else if (failure.empty())
        failure = st.to_string();
    }
  }
  std::size_t count() {
    std::lock_guard lock(mu);
    return acked.size();
  }
};

// Fills `table` (without a MAX_FILESIZE) to about 3 MiB through m2, then sets its
// MAX_FILESIZE to 2 MiB while a writer puts small cells through m3, and waits until the
// table has split by itself, at its middle row, on every node. Then every acknowledged
// cell reads back through every node, in order across the new bound, and each half (about
// 1.5 MiB) stays whole.
void grows_and_splits(cluster3& c, const std::string& table) {
  auto c2 = connect_embedded(*c.n2.s);
  model acked = fill(*c2, table);
  REQUIRE(acked.size() == static_cast<std::size_t>(rows));
  auto c3 = connect_embedded(*c.n3.s);
  writer w{*c3, table};
  std::thread wt([&] { w.run(); });
  REQUIRE(zktest::eventually([&] { return w.count() >= 50; }));
  CHECK(regions_of(*c.n1.s, table) == 1);
  REQUIRE_OK(c.n1.s->alter_table(table, {{"MAX_FILESIZE", std::to_string(max_filesize)}}, {}));
  // Bounded: a round every 100 ms measures it; the split itself takes well under a second.
  const bool split = zktest::eventually(
      [&] {
        for (auto* x : c.all())
          if (regions_of(*x->s, table) != 2) return false;
        return true;
      },
      std::chrono::seconds(30));
  const auto before = w.count();
  const bool more = zktest::eventually([&] { return w.count() >= before + 50; });  // writes go on after it
  w.stop = true;
  wt.join();
  REQUIRE(split);
  REQUIRE(more);
  {
    std::lock_guard lock(w.mu);
    INFO(w.failure);
    CHECK(w.failure.empty());
    acked.insert(w.acked.begin(), w.acked.end());
  }
  auto regions = c.n1.s->list_regions(table);
  REQUIRE_OK(regions);
  REQUIRE(regions->size() == 2);
  const std::string bound = (*regions)[1].start_key;
  CHECK(bound == row_of(rows / 2));  // the middle row
  CHECK((*regions)[0].end_key == bound);
  for (auto* x : c.all()) {
    auto cx = connect_embedded(*x->s);
    auto got = scan_all(*cx, table);
    REQUIRE_OK(got);
    CHECK(got->in_order);
    CHECK(got->cells.size() == acked.size());
    CHECK(got->cells == acked);
    // A row on each side of the bound, read alone.
    for (const auto& r : {row_of(rows / 2 - 1), bound}) {
      auto g = cx->get(table, cellar::get(r));
      REQUIRE_OK(g);
      CHECK_FALSE(g->cells.empty());
      for (const auto& cell : g->cells) CHECK(cell.value == acked.at({r, cell.qualifier}));
    }
  }
  // Each half is under the limit: more rounds split nothing.
  std::this_thread::sleep_for(10 * check_every);
  for (auto* x : c.all()) CHECK(regions_of(*x->s, table) == 2);
}

}  // namespace

TEST_CASE("a single-copy partition grown past MAX_FILESIZE in a cluster splits by itself at its middle row",
          "[member][autosplit]") {
  const auto chroot = zktest::fresh_chroot("autosplit");
  cluster3 c;
  start(c, chroot, std::chrono::milliseconds(1000));
  create(c, "grow", {});
  grows_and_splits(c, "grow");
}

TEST_CASE("a replicated partition grown past MAX_FILESIZE in a cluster splits once by itself", "[member][autosplit]") {
  const auto chroot = zktest::fresh_chroot("autosplit-rep");
  cluster3 c;
  start(c, chroot, std::chrono::milliseconds(300));
  create(c, "grow", {{"REGION_REPLICATION", "3"}});
  auto zk = zktest::connect(chroot);
  auto pl = cluster::read_placement(*zk);
  REQUIRE_OK(pl);
  REQUIRE(pl->map.tables.at("grow").at(0).replicas.size() == 3);
  // Three nodes hold a replica each and measure it alike: one split runs (the leader's),
  // so the table has two partitions, not three or four.
  grows_and_splits(c, "grow");
  pl = cluster::read_placement(*zk);
  REQUIRE_OK(pl);
  REQUIRE(pl->map.tables.at("grow").size() == 2);
  for (const auto& o : pl->map.tables.at("grow"))
    CHECK(std::set<std::string>(o.replicas.begin(), o.replicas.end()).size() == 3);
}

TEST_CASE("a table with SPLIT_POLICY DisabledRegionSplitPolicy is not split by size in a cluster",
          "[member][autosplit]") {
  const auto chroot = zktest::fresh_chroot("autosplit-off");
  cluster3 c;
  start(c, chroot, std::chrono::milliseconds(1000));
  const std::string limit = std::to_string(max_filesize);
  create(c, "off", {{"MAX_FILESIZE", limit}, {"SPLIT_POLICY", "DisabledRegionSplitPolicy"}});
  create(c, "on", {{"MAX_FILESIZE", limit}});
  auto c3 = connect_embedded(*c.n3.s);
  const model off = fill(*c3, "off");
  (void)fill(*c3, "on");
  // The checks run: the table without the policy splits.
  REQUIRE(zktest::eventually([&] { return regions_of(*c.n1.s, "on") >= 2; }, std::chrono::seconds(30)));
  std::this_thread::sleep_for(10 * check_every);
  for (auto* x : c.all()) {
    CHECK(regions_of(*x->s, "off") == 1);
    auto cx = connect_embedded(*x->s);
    auto got = scan_all(*cx, "off");
    REQUIRE_OK(got);
    CHECK(got->cells == off);
  }
}

TEST_CASE("compact through any node splits a table's partitions past MAX_FILESIZE in a cluster",
          "[member][autosplit][compact]") {
  const auto chroot = zktest::fresh_chroot("autosplit-compact");
  cluster3 c;
  start(c, chroot, std::chrono::milliseconds(1000), std::chrono::milliseconds(0));  // no periodic check
  const std::string limit = std::to_string(max_filesize);
  create(c, "cp", {{"MAX_FILESIZE", limit}});
  create(c, "wide", {{"MAX_FILESIZE", limit}});
  auto c3 = connect_embedded(*c.n3.s);
  const model acked = fill(*c3, "cp");
  // One row of 300 cells of 8 KiB: past the limit, but a row is never split.
  model wide;
  const std::string value(8192, 'w');
  for (int i = 0; i < rows; ++i) {
    const std::string q = "q" + std::to_string(i);
    REQUIRE_OK(c3->put("wide", cellar::put("row").add("f", q, 1, value)));
    wide[{"row", q}] = value;
  }
  std::this_thread::sleep_for(5 * check_every);
  REQUIRE(regions_of(*c.n1.s, "cp") == 1);  // nothing measures it by itself

  for (const std::string table : {"cp", "wide"}) {
    auto owner = c.n1.s->list_regions(table);
    REQUIRE_OK(owner);
    REQUIRE(owner->at(0).bytes > max_filesize);
  }
  // Through each node in turn: m1 holds neither partition or one of them; either way every
  // partition is measured where it lives.
  REQUIRE_OK(c.n1.s->compact("cp"));
  REQUIRE_OK(c.n1.s->compact("wide"));
  CHECK(regions_of(*c.n1.s, "cp") == 2);  // applied here before compact returned
  CHECK(regions_of(*c.n1.s, "wide") == 1);
  for (auto* x : c.all()) {
    REQUIRE(zktest::eventually([&] { return regions_of(*x->s, "cp") == 2; }));
    auto cx = connect_embedded(*x->s);
    auto got = scan_all(*cx, "cp");
    REQUIRE_OK(got);
    CHECK(got->in_order);
    CHECK(got->cells == acked);
    auto got_wide = scan_all(*cx, "wide");
    REQUIRE_OK(got_wide);
    CHECK(got_wide->cells == wide);
  }
  auto regions = c.n2.s->list_regions("cp");
  REQUIRE_OK(regions);
  CHECK(regions->at(1).start_key == row_of(rows / 2));  // the middle row
  for (const auto& r : *regions) CHECK(r.bytes <= max_filesize);
  // Each half is under the limit: a compact again changes nothing.
  REQUIRE_OK(c.n3.s->compact("cp"));
  CHECK(regions_of(*c.n3.s, "cp") == 2);
}
