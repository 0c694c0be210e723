// cluster/reshaper.h in one process: three members split and merge a RANGE table's
// partitions, single-copy or replicated as Raft groups, while a writer and a reader run
// through the other nodes; the model (every acknowledged cell) is checked against what the
// nodes read during and after.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cell_model.h"
#include "cellar/connection.h"
#include "cellar/store.h"
#include "cluster/layout.h"
#include "cluster/member.h"
#include "cluster/remote.h"
#include "cluster/zk_state.h"
#include "cluster_test.h"
#include "member_test.h"
#include "partition/protocol.h"

using namespace cellar;

namespace {

using node = zktest::member_node;
using zktest::join_member;
using zktest::model;
using zktest::scan_all;

caf::actor_system_config& with_protocols(caf::actor_system_config& cfg) {
  detail::add_partition_protocol(cfg);
  cluster::add_cluster_protocol(cfg);
  return cfg;
}

// The test speaking to members over their node links, as another node would: a split's
// runner asking for a freeze, a node routing with old partitions.
struct peer_client {
  caf::actor_system_config cfg;
  caf::actor_system sys{with_protocols(cfg)};
  std::shared_ptr<cluster::peer_directory> peers = std::make_shared<cluster::peer_directory>(sys);
  caf::scoped_actor self{sys};

  explicit peer_client(std::vector<cluster::node_info> members) { peers->set_members(std::move(members)); }

  // `m` asked of member `id`: its answer, as `Reply`, or INTERNAL naming what failed.
  template <class Reply, class Message, class Get>
  status ask(const std::string& id, Message m, Get get) {
    auto ep = peers->endpoint(id, std::chrono::seconds(10));
    if (!ep) return ep.error();
    status out{code::internal, "no answer"};
    self->request(*ep, std::chrono::seconds(10), std::move(m))
        .receive([&](Reply& r) { out = get(r); },
                 [&](caf::error& e) {
                   out = {code::internal, sys.render(e)};
                 });
    return out;
  }

  // The freeze step of a split of (table, index) in incarnation `uid` under `hold`.
  status freeze(const std::string& id, const std::string& table, std::uint32_t index, std::uint64_t uid,
                std::uint64_t hold = 0) {
    cluster::node_snapshot f;
    f.step = cluster::node_snapshot::freeze;
    f.table = table;
    f.index = index;
    f.uid = uid;
    f.hold = hold;
    return ask<cluster::node_snapshot_reply>(id, std::move(f), [](cluster::node_snapshot_reply& r) { return r.st; });
  }
};

// A RANGE table of factor 3 (or `factor`) with one bound, created through the first of
// `nodes`, once every one of them has it.
void create_replicated(const std::vector<node*>& nodes, const std::string& name, const std::string& bound,
                       const std::string& factor = "3") {
  table_descriptor d;
  d.name = name;
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::range_bounds({bound});
  d.attributes["REGION_REPLICATION"] = factor;
  REQUIRE_OK(nodes.front()->s->create_table(d, schema_origin::hbase_shell));
  REQUIRE(zktest::eventually([&] {
    for (auto* x : nodes)
      if (!x->s->table_exists(name)) return false;
    return true;
  }));
}

std::string row_of(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "k%04d", i);
  return b;
}

// A put of `row` sent once, as it is answered: table::batch_async does not send again
// what a freeze refuses (RESHAPING), as table::batch does.
status put_once(store& s, const std::string& table, const std::string& row) {
  auto t = s.open_table(table);
  if (!t) return t.error();
  std::promise<status> answer;
  t->batch_async({cellar::put(row).add("f", "q", 1, "v")},
                 [&answer](std::vector<op_result> r) { answer.set_value(r.at(0).st); });
  return answer.get_future().get();
}

// Writes new cells through `c` until told to stop; `acked` is the model of what was
// acknowledged. Every put must succeed: the connection sends again what a split's freeze
// refuses (RESHAPING), so the writer sees a split only as a pause.
struct writer {
  connection& c;
  std::string table;
  std::mutex mu;
  model acked;  // guarded by mu
  std::atomic<bool> stop{false};
  std::atomic<int> slow{0};  // puts that took over 50 ms: held by a freeze
  std::atomic<int> failures{0};
  std::string failure;  // guarded by mu: the first error

  void run() {
    for (int i = 0; !stop.load(); ++i) {
      const std::string row = row_of((i * 37) % 600), q = "w" + std::to_string(i), v = "v" + std::to_string(i);
      const auto t0 = std::chrono::steady_clock::now();
      auto st = c.put(table, cellar::put(row).add("f", q, i + 1, v));
      if (std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(50)) ++slow;
      {
        std::lock_guard lock(mu);
        if (st) {
          acked[{row, q}] = v;
        } else {
          if (failure.empty()) failure = st.to_string();
          ++failures;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  model snapshot() {
    std::lock_guard lock(mu);
    return acked;
  }
};

// Scans through `c` until told to stop: each scan that completes must be in order and hold
// every cell acknowledged before it started.
struct reader {
  connection& c;
  writer& w;
  std::atomic<bool> stop{false};
  std::atomic<int> scans{0};
  std::atomic<int> refused{0};
  std::mutex mu;
  std::vector<std::string> problems;  // guarded by mu

  void run() {
    while (!stop.load()) {
      const model before = w.snapshot();
      auto got = scan_all(c, w.table);
      if (!got) {
        std::lock_guard lock(mu);
        // A scan that pages across a split's commit ends RESHAPING (its partition stopped,
        // or replaced); UNAVAILABLE when the stopped partition was not frozen.
        if (got.code() == code::reshaping || got.code() == code::unavailable)
          ++refused;
        else
          problems.push_back("scan failed: " + got.error().to_string());
        continue;
      }
      ++scans;
      std::lock_guard lock(mu);
      if (!got->in_order) problems.push_back("a scan returned rows out of order or twice");
      for (const auto& [k, v] : before) {
        auto it = got->cells.find(k);
        if (it == got->cells.end() || it->second != v) {
          problems.push_back("a scan missed acknowledged cell " + k.first + "/" + k.second);
          break;
        }
      }
    }
  }
};

std::vector<std::string> bounds_of(store& s, const std::string& table) {
  auto regions = s.list_regions(table);
  REQUIRE_OK(regions);
  std::vector<std::string> out;
  for (const auto& r : *regions) {
    CHECK_FALSE(r.node.empty());  // each region names the node serving it
    if (!r.start_key.empty()) out.push_back(r.start_key);
  }
  return out;
}

}  // namespace

TEST_CASE("split and merge RANGE partitions in a cluster while a writer and a reader run", "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape");
  auto n1 = join_member(chroot, "m1");
  auto n2 = join_member(chroot, "m2");
  auto n3 = join_member(chroot, "m3");
  REQUIRE(zktest::eventually([&] { return n3.m->report().nodes.size() == 3; }));
  table_descriptor d;
  d.name = "rs";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::range_bounds({"k0300"});
  REQUIRE_OK(n1.s->create_table(d, schema_origin::hbase_shell));
  REQUIRE(zktest::eventually([&] { return n2.s->table_exists("rs") && n3.s->table_exists("rs"); }));
  auto c2 = connect_embedded(*n2.s);
  auto c3 = connect_embedded(*n3.s);

  writer w{*c2, "rs"};
  reader r{*c3, w};
  std::thread wt([&] { w.run(); });
  std::thread rt([&] { r.run(); });
  auto wait_writes = [&](std::size_t more) {
    const auto want = w.snapshot().size() + more;
    REQUIRE(zktest::eventually([&] { return w.snapshot().size() >= want; }));
  };
  auto regions_everywhere = [&](std::size_t n) {
    REQUIRE(zktest::eventually([&] {
      for (auto* x : {&n1, &n2, &n3}) {
        auto regions = x->s->list_regions("rs");
        if (!regions || regions->size() != n) return false;
      }
      return true;
    }));
  };

  wait_writes(200);
  // split 'rs', 'k0150': through m1, which may own neither partition.
  REQUIRE_OK(n1.s->split_region("rs", "k0150"));
  CHECK(bounds_of(*n1.s, "rs") == std::vector<std::string>{"k0150", "k0300"});
  regions_everywhere(3);
  wait_writes(100);
  // split 'rs/2': at its middle row, through m2 (the writer's node).
  REQUIRE_OK(n2.s->split_partition("rs", 2, ""));
  auto after_split = bounds_of(*n2.s, "rs");
  REQUIRE(after_split.size() == 3);
  CHECK(after_split[2] > "k0300");
  regions_everywhere(4);
  wait_writes(100);
  // merge_region of regions 0 and 1: k0150 goes.
  REQUIRE_OK(n3.s->merge_regions("rs", 0));
  CHECK(bounds_of(*n3.s, "rs") == std::vector<std::string>{"k0300", after_split[2]});
  regions_everywhere(3);
  wait_writes(100);

  w.stop = true;
  wt.join();
  r.stop = true;
  rt.join();
  INFO("writer: " << w.failure << "; slow puts " << w.slow.load() << "; reader scans " << r.scans.load() << ", refused "
                  << r.refused.load());
  CHECK(w.failures.load() == 0);
  {
    std::lock_guard lock(r.mu);
    for (const auto& p : r.problems) FAIL_CHECK(p);
  }
  CHECK(r.scans.load() > 0);
  // Every node reads exactly the acknowledged cells: nothing lost, nothing doubled.
  const model want = w.snapshot();
  for (auto* x : {&n1, &n2, &n3}) {
    auto c = connect_embedded(*x->s);
    auto got = scan_all(*c, "rs");
    REQUIRE_OK(got);
    CHECK(got->in_order);
    CHECK(got->cells.size() == want.size());
    CHECK(got->cells == want);
  }

  // KEY (hash) partitions stay fixed, with the reason.
  table_descriptor h;
  h.name = "hs";
  h.families.push_back(family_descriptor{"f"});
  h.partitioning = partition_spec::hash(3);
  REQUIRE_OK(n1.s->create_table(h, schema_origin::hbase_shell));
  auto refused = n2.s->split_region("hs", "x");
  CHECK(refused.code() == code::unsupported);
  CHECK(refused.message().find("KEY (hash)") != std::string::npos);
  CHECK(n1.s->merge_regions("hs", 0).code() == code::unsupported);

  for (auto* x : {&n3, &n2, &n1}) x->m.reset();
  for (auto* x : {&n3, &n2, &n1}) REQUIRE_OK(x->s->close());
}

TEST_CASE("after a split, a request routed with the old partitions is refused RESHAPING, not run on new ones",
          "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-uid");
  auto n1 = join_member(chroot, "m1");
  auto n2 = join_member(chroot, "m2");
  REQUIRE(zktest::eventually([&] { return n2.m->report().nodes.size() == 2; }));
  table_descriptor d;
  d.name = "ru";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::range_bounds({"m"});
  REQUIRE_OK(n1.s->create_table(d, schema_origin::hbase_shell));
  REQUIRE(zktest::eventually([&] { return n2.s->table_exists("ru"); }));
  const std::uint64_t old_uid = n1.m->node().catalog()->find("ru")->uid;

  // A move's intent on partition 1: the split is refused and changes nothing (the intent it
  // took on partition 0 goes again, or the split below would be refused too).
  auto zk = zktest::connect(chroot);
  REQUIRE_OK(zk->ensure_path(cluster::layout::moves));
  REQUIRE_OK(zk->create(cluster::layout::move_intent("ru", 1), "m1 m2", cluster::create_mode::ephemeral));
  REQUIRE_CODE(n2.s->split_region("ru", "g"), code::conflict);
  REQUIRE_OK(zk->remove(cluster::layout::move_intent("ru", 1)));
  CHECK(n1.m->node().catalog()->find("ru")->uid == old_uid);
  auto c1 = connect_embedded(*n1.s);
  REQUIRE_OK(c1->put("ru", cellar::put("z").add("f", "q", 1, "before")));  // not left frozen

  REQUIRE_OK(n1.s->split_region("ru", "g"));
  const auto* now = n1.m->node().catalog()->find("ru");
  REQUIRE(now->uid != old_uid);
  const std::uint64_t new_uid = now->uid;
  REQUIRE(zktest::eventually([&] {
    auto r = n2.s->list_regions("ru");
    return r && r->size() == 3;
  }));
  // Old partition 1 held [m, end); new partition 1 holds [g, m). A put of row "z" sent as
  // old partition 1 (as a node that has not applied the split yet would) must not land there.
  auto pl = cluster::read_placement(*zk);
  REQUIRE_OK(pl);
  const std::string owner = pl->map.tables.at("ru")[1].node;
  peer_client peer({cluster::node_info{"m1", "127.0.0.1:1", n1.m->peer_address()},
                    cluster::node_info{"m2", "127.0.0.1:1", n2.m->peer_address()}});
  auto send = [&](std::uint64_t uid) {
    cluster::node_batch b;
    b.table = "ru";
    b.index = 1;
    b.uid = uid;
    b.req.ops.push_back(cellar::put("z").add("f", "q", 2, "routed"));
    return peer.ask<detail::batch_reply>(owner, std::move(b),
                                         [](detail::batch_reply& r) { return r.results.at(0).st; });
  };
  auto refused = send(old_uid);
  CHECK(refused.code() == code::reshaping);
  CHECK(refused.message().find("split or merged") != std::string::npos);
  REQUIRE_OK(send(new_uid));  // routed with the new partitions: [g, m) takes it as asked
  // A split planned with the old incarnation (as a node that read the catalog before this
  // split would) freezes nothing here: the owner refuses the step, and writes go on.
  {
    auto out = peer.freeze(owner, "ru", 1, old_uid);
    CHECK(out.code() == code::unavailable);
    CHECK(out.message().find("another incarnation") != std::string::npos);
    REQUIRE_OK(c1->put("ru", cellar::put("h").add("f", "q", 1, "after")));
  }
  // Row "z" as the table reads it: the value put before the split, from partition 2.
  auto g = c1->get("ru", cellar::get("z"));
  REQUIRE_OK(g);
  REQUIRE(g->cells.size() == 1);
  CHECK(g->cells[0].value == "before");

  for (auto* x : {&n2, &n1}) x->m.reset();
  for (auto* x : {&n2, &n1}) REQUIRE_OK(x->s->close());
}

TEST_CASE("the partitions a split or merge built are on disk: a node restarted reads them", "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-disk");
  const auto base = std::filesystem::temp_directory_path() / ("cellar-reshape-disk-" + std::to_string(getpid()));
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  auto dir_of = [&](const std::string& id) {
    store_options so;
    so.directory = (base / id).string();
    return so;
  };
  auto n1 = join_member(chroot, "m1", dir_of("m1"));
  auto n2 = join_member(chroot, "m2", dir_of("m2"));
  REQUIRE(zktest::eventually([&] { return n2.m->report().nodes.size() == 2; }));
  table_descriptor d;
  d.name = "rd";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::range_bounds({"k0100"});
  REQUIRE_OK(n1.s->create_table(d, schema_origin::hbase_shell));
  REQUIRE(zktest::eventually([&] { return n2.s->table_exists("rd"); }));
  auto c1 = connect_embedded(*n1.s);
  model want;
  auto put_rows = [&](int from, int to, const std::string& v) {
    for (int i = from; i < to; ++i) {
      REQUIRE_OK(c1->put("rd", cellar::put(row_of(i)).add("f", "q", 1, v)));
      want[{row_of(i), "q"}] = v;
    }
  };
  put_rows(0, 200, "a");
  REQUIRE_OK(n2.s->split_region("rd", "k0050"));
  REQUIRE_OK(n1.s->split_table("rd"));  // every partition at its middle row: 6 of them
  // m2 applies it a moment after m1 (a request m1 routes meanwhile waits at m2, up to 5 s,
  // which a loaded machine can pass).
  REQUIRE(zktest::eventually([&] { return bounds_of(*n2.s, "rd").size() == 5; }));
  put_rows(0, 200, "b");  // over the built partitions, into their logs
  REQUIRE_OK(n2.s->merge_regions("rd", 1));
  put_rows(150, 250, "c");
  REQUIRE(zktest::eventually([&] {
    auto r = n2.s->list_regions("rd");
    return r && r->size() == 5;
  }));

  // m2 leaves and comes back on its directory; m1 stays.
  n2.m.reset();
  REQUIRE_OK(n2.s->close());
  n2 = join_member(chroot, "m2", dir_of("m2"));
  for (auto* x : {&n1, &n2}) {
    auto c = connect_embedded(*x->s);
    REQUIRE(zktest::eventually([&] {
      auto got = scan_all(*c, "rd");
      return got && got->cells == want;
    }));
    auto got = scan_all(*c, "rd");
    REQUIRE_OK(got);
    CHECK(got->in_order);
    CHECK(got->cells == want);
  }
  CHECK(bounds_of(*n2.s, "rd").size() == 4);

  for (auto* x : {&n2, &n1}) x->m.reset();
  for (auto* x : {&n2, &n1}) REQUIRE_OK(x->s->close());
  std::filesystem::remove_all(base);
}

TEST_CASE("split and merge a table replicated as Raft groups while a writer and a reader run", "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-rep");
  constexpr auto election = std::chrono::milliseconds(300);
  auto n1 = join_member(chroot, "m1", {}, election);
  auto n2 = join_member(chroot, "m2", {}, election);
  auto n3 = join_member(chroot, "m3", {}, election);
  REQUIRE(zktest::eventually([&] { return n3.m->report().nodes.size() == 3; }));
  create_replicated({&n1, &n2, &n3}, "rr", "k0300");
  auto zk = zktest::connect(chroot);
  // Every partition a group of three replicas on distinct nodes, each group with one leader
  // and no replica left of an earlier incarnation.
  auto groups_settled = [&](std::size_t partitions) {
    auto pl = cluster::read_placement(*zk);
    if (!pl || pl->map.tables.at("rr").size() != partitions) return false;
    for (const auto& o : pl->map.tables.at("rr"))
      if (std::set<std::string>(o.replicas.begin(), o.replicas.end()).size() != 3) return false;
    std::map<std::uint32_t, int> replicas, leaders;
    for (auto* x : {&n1, &n2, &n3})
      for (const auto& r : x->m->report().replicas) {
        if (r.table != "rr") continue;
        ++replicas[r.index];
        if (r.status.role == "leader") ++leaders[r.index];
      }
    if (replicas.size() != partitions) return false;
    for (std::uint32_t i = 0; i < partitions; ++i)
      if (replicas[i] != 3 || leaders[i] != 1) return false;
    return true;
  };
  REQUIRE(zktest::eventually([&] { return groups_settled(2); }));
  auto c2 = connect_embedded(*n2.s);
  auto c3 = connect_embedded(*n3.s);

  writer w{*c2, "rr"};
  reader r{*c3, w};
  std::thread wt([&] { w.run(); });
  std::thread rt([&] { r.run(); });
  auto wait_writes = [&](std::size_t more) {
    const auto want = w.snapshot().size() + more;
    REQUIRE(zktest::eventually([&] { return w.snapshot().size() >= want; }));
  };

  wait_writes(150);
  // At a key: the new groups start before the freeze.
  REQUIRE_OK(n1.s->split_region("rr", "k0150"));
  CHECK(bounds_of(*n1.s, "rr") == std::vector<std::string>{"k0150", "k0300"});
  REQUIRE(zktest::eventually([&] { return groups_settled(3); }));
  wait_writes(100);
  // At region 2's middle row: planned from the frozen copy, so the groups start after it.
  REQUIRE_OK(n2.s->split_partition("rr", 2, ""));
  auto after_split = bounds_of(*n2.s, "rr");
  REQUIRE(after_split.size() == 3);
  CHECK(after_split[2] > "k0300");
  REQUIRE(zktest::eventually([&] { return groups_settled(4); }));
  wait_writes(100);
  REQUIRE_OK(n3.s->merge_regions("rr", 1));  // k0300 goes
  CHECK(bounds_of(*n3.s, "rr") == std::vector<std::string>{"k0150", after_split[2]});
  REQUIRE(zktest::eventually([&] { return groups_settled(3); }));
  wait_writes(100);

  w.stop = true;
  wt.join();
  r.stop = true;
  rt.join();
  INFO("writer: " << w.failure << "; slow puts " << w.slow.load() << "; reader scans " << r.scans.load() << ", refused "
                  << r.refused.load());
  CHECK(w.failures.load() == 0);
  {
    std::lock_guard lock(r.mu);
    for (const auto& p : r.problems) FAIL_CHECK(p);
  }
  CHECK(r.scans.load() > 0);
  const model want = w.snapshot();
  for (auto* x : {&n1, &n2, &n3}) {
    auto c = connect_embedded(*x->s);
    auto got = scan_all(*c, "rr");
    REQUIRE_OK(got);
    CHECK(got->in_order);
    CHECK(got->cells == want);
  }

  for (auto* x : {&n3, &n2, &n1}) x->m.reset();
  for (auto* x : {&n3, &n2, &n1}) REQUIRE_OK(x->s->close());
}

TEST_CASE("a split of a replicated table that fails after its freeze leaves the table as it was, taking writes",
          "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-rep-undo");
  constexpr auto election = std::chrono::milliseconds(300);
  auto n1 = join_member(chroot, "m1", {}, election);
  auto n2 = join_member(chroot, "m2", {}, election);
  auto n3 = join_member(chroot, "m3", {}, election);
  REQUIRE(zktest::eventually([&] { return n1.m->report().nodes.size() == 3; }));
  create_replicated({&n1, &n2, &n3}, "ru3", "m");
  const std::uint64_t uid = n1.m->node().catalog()->find("ru3")->uid;
  // m3 leaves: each group keeps a majority (and a leader), but three live nodes are needed
  // to place the new groups, so the split fails after the freeze.
  n3.m.reset();
  REQUIRE_OK(n3.s->close());
  auto zk = zktest::connect(chroot);
  REQUIRE(zktest::eventually([&] {
    auto live = zk->children(cluster::layout::nodes);
    return live && live->size() == 2;
  }));
  auto c1 = connect_embedded(*n1.s);
  model want;
  auto put_ok = [&](const std::string& row, const std::string& v) {
    return c1->put("ru3", cellar::put(row).add("f", "q", 1, v)).is_ok();
  };
  for (const std::string row : {"a", "c", "z"}) {
    REQUIRE(zktest::eventually([&] { return put_ok(row, "before"); }));
    want[{row, "q"}] = "before";
  }

  // At region 0's middle row: planned, and placed, after the freeze.
  auto failed = n2.s->split_partition("ru3", 0, "");
  INFO(failed.to_string());
  CHECK(failed.code() == code::unavailable);
  CHECK(n1.m->node().catalog()->find("ru3")->uid == uid);
  // Released through each group's log before the call returned: writes are taken at once.
  for (const std::string row : {"b", "y"}) {
    auto st = c1->put("ru3", cellar::put(row).add("f", "q", 1, "after"));
    INFO(st.to_string());
    CHECK(st.is_ok());
    want[{row, "q"}] = "after";
  }
  auto got = scan_all(*c1, "ru3");
  REQUIRE_OK(got);
  CHECK(got->cells == want);
  CHECK(bounds_of(*n1.s, "ru3") == std::vector<std::string>{"m"});

  for (auto* x : {&n2, &n1}) x->m.reset();
  for (auto* x : {&n2, &n1}) REQUIRE_OK(x->s->close());
}

TEST_CASE("a replicated partition frozen by a split whose runner died takes writes again once its intent goes",
          "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-rep-guard");
  constexpr auto election = std::chrono::milliseconds(300);
  auto n1 = join_member(chroot, "m1", {}, election);
  auto n2 = join_member(chroot, "m2", {}, election);
  auto n3 = join_member(chroot, "m3", {}, election);
  REQUIRE(zktest::eventually([&] { return n1.m->report().nodes.size() == 3; }));
  create_replicated({&n1, &n2, &n3}, "rg", "m");
  auto c1 = connect_embedded(*n1.s);
  auto put = [&](const std::string& row) { return c1->put("rg", cellar::put(row).add("f", "q", 1, "v")); };
  REQUIRE(zktest::eventually([&] { return put("a").is_ok() && put("z").is_ok(); }));

  // The split's runner: its intent on partition 0 (this test's session), and the freeze
  // asked of each node in turn until the group's leader takes it.
  auto zk = zktest::connect(chroot);
  const auto intent = cluster::layout::move_intent("rg", 0);
  REQUIRE_OK(zk->ensure_path(cluster::layout::moves));
  REQUIRE_OK(zk->create(intent, "reshape test", cluster::create_mode::ephemeral));
  auto seen = zk->exists(intent);
  REQUIRE_OK(seen);
  REQUIRE(seen->has_value());
  peer_client peer({cluster::node_info{"m1", "127.0.0.1:1", n1.m->peer_address()},
                    cluster::node_info{"m2", "127.0.0.1:1", n2.m->peer_address()},
                    cluster::node_info{"m3", "127.0.0.1:1", n3.m->peer_address()}});
  const std::uint64_t uid = n1.m->node().catalog()->find("rg")->uid;
  const auto hold = static_cast<std::uint64_t>((*seen)->czxid);
  auto freeze_at = [&](const std::string& id) { return peer.freeze(id, "rg", 0, uid, hold); };
  REQUIRE(zktest::eventually([&] {
    for (const char* id : {"m1", "m2", "m3"})
      if (freeze_at(id).is_ok()) return true;
    return false;
  }));
  auto refused = put_once(*n1.s, "rg", "a");
  CHECK(refused.code() == code::reshaping);
  CHECK(refused.message().find("frozen") != std::string::npos);
  CHECK(put("z").is_ok());  // partition 1 was not frozen
  // A put through the connection is sent again while the freeze lasts: it waits.
  auto waiting = std::async(std::launch::async, [&] { return put("a"); });
  CHECK(waiting.wait_for(std::chrono::milliseconds(500)) == std::future_status::timeout);

  // The runner dies before its commit: its intent goes, and the node that served the freeze
  // releases the partition through the group's log; the waiting put then succeeds.
  REQUIRE_OK(zk->remove(intent));
  REQUIRE(waiting.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  CHECK(waiting.get().is_ok());

  for (auto* x : {&n3, &n2, &n1}) x->m.reset();
  for (auto* x : {&n3, &n2, &n1}) REQUIRE_OK(x->s->close());
}

TEST_CASE("a frozen replicated partition whose group has no leader is released once a majority is back",
          "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-rep-lost");
  const auto base = std::filesystem::temp_directory_path() / ("cellar-reshape-lost-" + std::to_string(getpid()));
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  const std::vector<std::string> ids{"m1", "m2", "m3"};
  constexpr auto election = std::chrono::milliseconds(300);
  constexpr auto leader_wait = std::chrono::milliseconds(400);
  auto start = [&](std::size_t i) {
    store_options so;
    so.directory = (base / ids[i]).string();
    so.durability = durability::log;
    return join_member(chroot, ids[i], so, election, leader_wait);
  };
  std::vector<node> n;
  for (std::size_t i = 0; i < 3; ++i) n.push_back(start(i));
  REQUIRE(zktest::eventually([&] { return n[0].m->report().nodes.size() == 3; }));
  create_replicated({&n[0], &n[1], &n[2]}, "rl", "m");
  {
    auto c = connect_embedded(*n[0].s);
    REQUIRE(zktest::eventually([&] { return c->put("rl", cellar::put("a").add("f", "q", 1, "v")).is_ok(); }));
  }

  // A split's runner (this test's session) freezes partition 0 at its group's leader.
  auto zk = zktest::connect(chroot);
  const auto intent = cluster::layout::move_intent("rl", 0);
  REQUIRE_OK(zk->ensure_path(cluster::layout::moves));
  REQUIRE_OK(zk->create(intent, "reshape test", cluster::create_mode::ephemeral));
  auto seen = zk->exists(intent);
  REQUIRE_OK(seen);
  REQUIRE(seen->has_value());
  std::vector<cluster::node_info> infos;
  for (std::size_t i = 0; i < 3; ++i) infos.push_back({ids[i], "127.0.0.1:1", n[i].m->peer_address()});
  peer_client peer(infos);
  const std::uint64_t uid = n[0].m->node().catalog()->find("rl")->uid;
  const auto hold = static_cast<std::uint64_t>((*seen)->czxid);
  auto freeze_at = [&](std::size_t i) { return peer.freeze(ids[i], "rl", 0, uid, hold); };
  std::size_t x = 3;  // the node that served the freeze: it releases the partition
  REQUIRE(zktest::eventually([&] {
    for (std::size_t i = 0; i < 3; ++i)
      if (freeze_at(i).is_ok()) x = i;
    return x < 3;
  }));
  auto put_a = [&] { return put_once(*n[x].s, "rl", "a"); };
  CHECK(put_a().code() == code::reshaping);

  // The other two nodes go, so the group has no leader; the runner dies. The release finds
  // no leader for many times its leader wait, then the two come back on their directories.
  for (std::size_t i = 0; i < 3; ++i)
    if (i != x) {
      n[i].m.reset();
      REQUIRE_OK(n[i].s->close());
    }
  // x's replica steps down first, so no release can enter the log before the two are back.
  REQUIRE(zktest::eventually([&] {
    for (const auto& r : n[x].m->report().replicas)
      if (r.table == "rl" && r.index == 0 && r.status.role == "leader") return false;
    return true;
  }));
  REQUIRE_OK(zk->remove(intent));
  std::this_thread::sleep_for(leader_wait * 6);
  for (std::size_t i = 0; i < 3; ++i)
    if (i != x) n[i] = start(i);
  CHECK(zktest::eventually([&] { return put_a().is_ok(); }));

  for (auto& y : n) y.m.reset();
  for (auto& y : n) REQUIRE_OK(y.s->close());
  std::filesystem::remove_all(base);
}

TEST_CASE("the Raft groups a split of a replicated table built keep their files: a node restarted rejoins them",
          "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-rep-disk");
  const auto base = std::filesystem::temp_directory_path() / ("cellar-reshape-rep-" + std::to_string(getpid()));
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  auto dir_of = [&](const std::string& id) {
    store_options so;
    so.directory = (base / id).string();
    so.durability = durability::log;
    return so;
  };
  constexpr auto election = std::chrono::milliseconds(300);
  auto n1 = join_member(chroot, "m1", dir_of("m1"), election);
  auto n2 = join_member(chroot, "m2", dir_of("m2"), election);
  auto n3 = join_member(chroot, "m3", dir_of("m3"), election);
  REQUIRE(zktest::eventually([&] { return n1.m->report().nodes.size() == 3; }));
  create_replicated({&n1, &n2, &n3}, "rk", "k0100");
  auto c1 = connect_embedded(*n1.s);
  model want;
  auto put_rows = [&](int from, int to, const std::string& v) {
    for (int i = from; i < to; ++i) {
      REQUIRE(zktest::eventually([&] { return c1->put("rk", cellar::put(row_of(i)).add("f", "q", 1, v)).is_ok(); }));
      want[{row_of(i), "q"}] = v;
    }
  };
  put_rows(0, 200, "a");
  REQUIRE_OK(n2.s->split_region("rk", "k0050"));
  put_rows(0, 200, "b");  // into the new groups' logs
  const std::uint64_t uid = n1.m->node().catalog()->find("rk")->uid;
  for (std::uint32_t j = 0; j < 3; ++j)
    CHECK(std::filesystem::exists(base / "m2" / "raft" / (std::to_string(uid) + "-" + std::to_string(j) + ".raftlog")));

  // m2 leaves and comes back on its directory: its replicas resume from their Raft files.
  n2.m.reset();
  REQUIRE_OK(n2.s->close());
  n2 = join_member(chroot, "m2", dir_of("m2"), election);
  for (auto* x : {&n1, &n2}) {
    auto c = connect_embedded(*x->s);
    REQUIRE(zktest::eventually([&] {
      auto got = scan_all(*c, "rk");
      return got && got->cells == want;
    }));
  }
  // m2 runs its replica of each new group again.
  REQUIRE(zktest::eventually([&] {
    std::set<std::uint32_t> held;
    for (const auto& r : n2.m->report().replicas)
      if (r.table == "rk" && (r.status.role == "leader" || r.status.role == "follower")) held.insert(r.index);
    return held.size() == 3;
  }));
  // m3 leaves: every write now needs m2's replica to commit.
  n3.m.reset();
  REQUIRE_OK(n3.s->close());
  put_rows(150, 250, "c");
  auto c2 = connect_embedded(*n2.s);
  REQUIRE(zktest::eventually([&] {
    auto got = scan_all(*c2, "rk");
    return got && got->cells == want;
  }));
  CHECK(bounds_of(*n2.s, "rk") == std::vector<std::string>{"k0050", "k0100"});

  for (auto* x : {&n2, &n1}) x->m.reset();
  for (auto* x : {&n2, &n1}) REQUIRE_OK(x->s->close());
  std::filesystem::remove_all(base);
}

TEST_CASE("a replicated partition of over 4 MiB splits: each new group is filled in parts, nothing lost",
          "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-rep-big");
  // Not the 300 ms of the smaller tests: a replica busy with a Raft snapshot or a fill of
  // several MiB misses heartbeats for longer on a slow machine (ThreadSanitizer's, say), and
  // the leadership churn then outlasts the split's wait for a leader.
  constexpr auto election = std::chrono::milliseconds(1000);
  auto n1 = join_member(chroot, "m1", {}, election);
  auto n2 = join_member(chroot, "m2", {}, election);
  auto n3 = join_member(chroot, "m3", {}, election);
  REQUIRE(zktest::eventually([&] { return n3.m->report().nodes.size() == 3; }));
  create_replicated({&n1, &n2, &n3}, "rb", "m");
  // About 10 MiB in partition 0 ([, m)): each half of the split passes the 4 MiB a fill
  // entry holds (replication_config::load_entry_bytes), so it goes as a staged load.
  auto c1 = connect_embedded(*n1.s);
  model want;
  const std::string value(8192, 'b');
  constexpr int rows = 1200;
  for (int from = 0; from < rows; from += 20) {
    std::vector<batch_op> ops;
    for (int i = from; i < from + 20; ++i) {
      const std::string v = value + std::to_string(i);
      ops.push_back(cellar::put(row_of(i)).add("f", "q", 1, v));
      want[{row_of(i), "q"}] = v;
    }
    for (const auto& r : c1->batch("rb", std::move(ops))) REQUIRE_OK(r.st);
  }
  // n2 reports its own replica's bytes, which a follower still applying the last entries
  // of a loaded machine reports short for a moment.
  REQUIRE(zktest::eventually([&] {
    auto before = n2.s->list_regions("rb");
    return before.is_ok() && before->at(0).bytes > 8u << 20;
  }));

  REQUIRE_OK(n2.s->split_region("rb", row_of(rows / 2)));
  CHECK(bounds_of(*n2.s, "rb") == std::vector<std::string>{row_of(rows / 2), "m"});
  for (auto* x : {&n1, &n2, &n3}) {
    REQUIRE(zktest::eventually([&] {
      auto r = x->s->list_regions("rb");
      return r && r->size() == 3;
    }));
    // Each new group holds its half (a follower's replica, which a node counts when it has
    // one, may apply the fill a moment after the commit).
    std::string sizes;
    const bool halves = zktest::eventually([&] {
      auto r = x->s->list_regions("rb");
      if (!r) return false;
      sizes.clear();
      for (const auto& region : *r) sizes += std::to_string(region.bytes) + " ";
      return r->at(0).bytes > 4u << 20 && r->at(1).bytes > 4u << 20;
    });
    INFO("node " << (x == &n1 ? 1 : x == &n2 ? 2 : 3) << ", bytes of its regions: " << sizes);
    CHECK(halves);
    auto c = connect_embedded(*x->s);
    auto got = scan_all(*c, "rb");
    REQUIRE_OK(got);
    CHECK(got->in_order);
    CHECK(got->cells.size() == want.size());
    CHECK(got->cells == want);
  }

  for (auto* x : {&n3, &n2, &n1}) x->m.reset();
  for (auto* x : {&n3, &n2, &n1}) REQUIRE_OK(x->s->close());
}

TEST_CASE("a table replicated on five nodes splits into groups of five", "[member][reshape]") {
  const auto chroot = zktest::fresh_chroot("reshape-rep5");
  constexpr auto election = std::chrono::milliseconds(300);
  std::vector<node> n;
  for (int i = 1; i <= 5; ++i) n.push_back(join_member(chroot, "m" + std::to_string(i), {}, election));
  REQUIRE(zktest::eventually([&] { return n[4].m->report().nodes.size() == 5; }));
  std::vector<node*> all;
  for (auto& x : n) all.push_back(&x);
  create_replicated(all, "r5", "m", "5");
  auto c1 = connect_embedded(*n[0].s);
  model want;
  for (int i = 0; i < 200; ++i) {
    const std::string v = "v" + std::to_string(i);
    REQUIRE(zktest::eventually([&] { return c1->put("r5", cellar::put(row_of(i)).add("f", "q", 1, v)).is_ok(); }));
    want[{row_of(i), "q"}] = v;
  }

  REQUIRE_OK(n[2].s->split_region("r5", row_of(100)));
  CHECK(bounds_of(*n[2].s, "r5") == std::vector<std::string>{row_of(100), "m"});
  // Each of the three partitions a group of five replicas on distinct nodes with one leader.
  auto zk = zktest::connect(chroot);
  CHECK(zktest::eventually([&] {
    auto pl = cluster::read_placement(*zk);
    if (!pl || pl->map.tables.at("r5").size() != 3) return false;
    for (const auto& o : pl->map.tables.at("r5"))
      if (std::set<std::string>(o.replicas.begin(), o.replicas.end()).size() != 5) return false;
    std::map<std::uint32_t, int> replicas, leaders;
    for (auto& x : n)
      for (const auto& r : x.m->report().replicas) {
        if (r.table != "r5") continue;
        ++replicas[r.index];
        if (r.status.role == "leader") ++leaders[r.index];
      }
    for (std::uint32_t i = 0; i < 3; ++i)
      if (replicas[i] != 5 || leaders[i] != 1) return false;
    return replicas.size() == 3;
  }));
  for (auto& x : n) {
    auto c = connect_embedded(*x.s);
    auto got = scan_all(*c, "r5");
    REQUIRE_OK(got);
    CHECK(got->in_order);
    CHECK(got->cells == want);
  }
  for (auto it = n.rbegin(); it != n.rend(); ++it) it->m.reset();
  for (auto it = n.rbegin(); it != n.rend(); ++it) REQUIRE_OK(it->s->close());
}
