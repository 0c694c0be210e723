// cluster/member.h in one process: a store opened for a cluster serves nothing until it
// has joined; joined alone, it is a cluster of one that applies its own DDL.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <future>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>

#include "cellar/cluster_admin.h"
#include "cellar/connection.h"
#include "cellar/store.h"
#include "cluster/layout.h"
#include "cluster/member.h"
#include "cluster/membership.h"
#include "cluster/mover.h"
#include "cluster/remote.h"
#include "cluster/snapshot_sweep.h"
#include "cluster/zk_state.h"
#include "cluster_test.h"
#include "partition/ask.h"
#include "route/router.h"
#include "store/access.h"
#include "store/catalog_service.h"
#include "store/persistence.h"

using namespace cellar;

namespace {

// A member `id` of the cluster under `chroot` of the shared ZooKeeper, with a 4 s session.
cluster::member_options member_options_for(const std::string& chroot, const std::string& id) {
  cluster::member_options o;
  o.zookeeper.connect = zktest::zk_server::shared().connect(chroot);
  o.zookeeper.session_timeout = std::chrono::milliseconds(4000);
  o.node_id = id;
  o.data_address = "127.0.0.1:1";
  return o;
}

// A node endpoint that takes every move step and never answers it, counting them.
cluster::node_endpoint::behavior_type move_sink(cluster::node_endpoint::pointer self,
                                                std::shared_ptr<std::atomic<int>> steps) {
  return {
      [](cluster::node_batch&) { return detail::batch_reply{}; },
      [](cluster::node_scan&) { return detail::scan_reply{}; },
      [self, steps](cluster::node_move&) -> caf::result<detail::move_reply> {
        ++*steps;
        return self->make_response_promise<detail::move_reply>();  // never answered
      },
      [](cluster::node_member&) { return cluster::node_member_reply{}; },
      [](cluster::node_snapshot&) { return cluster::node_snapshot_reply{}; },
      [](cluster::node_replica&) {},
      [](cluster::catch_up_atom) {},
  };
}

}  // namespace

TEST_CASE("a member store refuses data and DDL until it has joined, then serves the cluster's tables", "[member]") {
  // A directory that holds a table of its own (written as a single store).
  const auto dir =
      (std::filesystem::temp_directory_path() / ("cellar-member-test-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(dir);
  store_options so;
  so.directory = dir;
  table_descriptor own;
  own.name = "local_only";
  own.families.push_back(family_descriptor{"f"});
  {
    auto single = store::open(so);
    REQUIRE(single.is_ok());
    REQUIRE_OK((*single)->create_table(own, schema_origin::oceanbase_ddl));
    REQUIRE_OK((*single)->close());
  }
  auto opened = cluster::member::open_store(so);
  REQUIRE(opened.is_ok());
  auto& s = *opened.value();
  auto conn = connect_embedded(s);
  table_descriptor d;
  d.name = "mt";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(3);

  auto early = s.create_table(d, schema_origin::oceanbase_ddl);
  CHECK(early.code() == code::unavailable);
  CHECK(early.message().find("not joined") != std::string::npos);
  auto early_put = conn->put("local_only", cellar::put("r").add("f", "q", "v"));
  CHECK(early_put.code() == code::unavailable);
  CHECK(early_put.message().find("not joined") != std::string::npos);
  CHECK(conn->scan("local_only", cellar::scan()).code() == code::unavailable);

  auto m = cluster::member::join(s, member_options_for(zktest::fresh_chroot("member"), "m1"));
  INFO(zktest::describe_status(m));
  REQUIRE(m.is_ok());
  // The cluster's catalog rules: a table it does not have is dropped from this node.
  CHECK_FALSE(s.table_exists("local_only"));

  REQUIRE_OK(s.create_table(d, schema_origin::oceanbase_ddl));
  // The DDL went through the master (this node) into ZooKeeper's catalog, and back.
  CHECK((*m)->applied_version() >= 1);
  CHECK((*m)->node().catalog()->find("mt") != nullptr);
  REQUIRE_OK(conn->put("mt", cellar::put("r").add("f", "q", "v")));
  auto g = conn->get("mt", cellar::get("r"));
  REQUIRE_OK(g);
  REQUIRE(g->cells.size() == 1);
  CHECK(g->cells[0].value == "v");
  CHECK(s.create_table(d, schema_origin::oceanbase_ddl).code() == code::already_exists);
  // disable and enable are cluster DDL: applied here before they return.
  REQUIRE_OK(s.disable_table("mt"));
  CHECK(conn->get("mt", cellar::get("r")).code() == code::table_disabled);
  CHECK_FALSE(s.is_table_enabled("mt").value());
  REQUIRE_OK(s.enable_table("mt"));
  REQUIRE_OK(conn->get("mt", cellar::get("r")));

  auto rep = (*m)->report();
  REQUIRE(rep.nodes.size() == 1);
  CHECK(rep.master == "m1");
  CHECK(rep.nodes[0].partitions.size() == 3);
  CHECK(s.info().cluster.find("m1 (master)") != std::string::npos);

  REQUIRE_OK(s.drop_table("mt"));
  CHECK_FALSE(s.table_exists("mt"));

  m.value().reset();  // left the cluster
  CHECK(s.create_table(d, schema_origin::oceanbase_ddl).code() == code::unavailable);
  REQUIRE_OK(s.close());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a member whose ZooKeeper session expired refuses writes until it has re-read the placement map",
          "[member][expiry]") {
  auto opened = cluster::member::open_store(store_options{});
  REQUIRE(opened.is_ok());
  auto& s = *opened.value();
  auto conn = connect_embedded(s);
  auto m = cluster::member::join(s, member_options_for(zktest::fresh_chroot("member-expiry"), "m1"));
  INFO(zktest::describe_status(m));
  REQUIRE(m.is_ok());
  table_descriptor d;
  d.name = "et";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(2);
  REQUIRE_OK(s.create_table(d, schema_origin::oceanbase_ddl));
  REQUIRE_OK(conn->put("et", cellar::put("r").add("f", "q", "v")));

  // A session listener registered after the member's: when it runs, the member has seen
  // the event (listeners run in order, on the ZooKeeper event thread). It writes and reads
  // right then.
  struct seen_event {
    cluster::session_state state;
    bool new_session;
    status put;
    bool read_ok;
  };
  std::mutex mu;
  std::vector<seen_event> seen;
  auto& zk = (*m)->node().zookeeper();
  const auto listener = zk.add_session_listener([&](const cluster::session_event& ev) {
    auto put = conn->put("et", cellar::put("during").add("f", "q", "x"));
    auto got = conn->get("et", cellar::get("r"));
    std::lock_guard lock(mu);
    seen.push_back({ev.state, ev.new_session, put, got.is_ok() && got->cells.size() == 1});
  });
  REQUIRE_OK(zk.expire_session_for_testing());
  auto saw = [&](cluster::session_state st, bool fresh) {
    std::lock_guard lock(mu);
    for (auto& e : seen)
      if (e.state == st && (st != cluster::session_state::connected || e.new_session == fresh)) return true;
    return false;
  };
  REQUIRE(zktest::eventually([&] { return saw(cluster::session_state::connected, true); }));
  zk.remove_session_listener(listener);
  {
    std::lock_guard lock(mu);
    bool refused = false;
    for (auto& e : seen) {
      INFO(static_cast<int>(e.state) << " " << e.new_session << " " << e.put.to_string());
      if (e.state == cluster::session_state::connected && e.new_session) {
        CHECK(e.put.is_ok());  // back, with the map read again: writes are taken
      } else if (e.state != cluster::session_state::connected) {
        CHECK(e.put.code() == code::unavailable);
        CHECK(e.put.message().find("ZooKeeper session") != std::string::npos);
        refused = true;
      }
      CHECK(e.read_ok);  // reads are served throughout
    }
    CHECK(refused);  // the expiry was seen, and writes were refused then
  }
  REQUIRE_OK(conn->put("et", cellar::put("after").add("f", "q", "y")));
  m.value().reset();
  REQUIRE_OK(s.close());
}

namespace {

struct joined_node {
  std::unique_ptr<store> s;
  std::unique_ptr<cluster::member> m;
};

joined_node join_node(const std::string& chroot, const std::string& id, store_options so = {}) {
  joined_node n;
  auto opened = cluster::member::open_store(so);
  REQUIRE(opened.is_ok());
  n.s = std::move(opened).value();
  auto m = cluster::member::join(*n.s, member_options_for(chroot, id));
  INFO(zktest::describe_status(m));
  REQUIRE(m.is_ok());
  n.m = std::move(m).value();
  return n;
}

// Nodes m1 and m2 under a fresh chroot, each seeing the other and table `table` (family
// f, `partitions` hash partitions, created through m1).
struct two_nodes {
  std::string chroot;
  joined_node n1, n2;
  table_descriptor d;
};

// Nodes m1 (the master: it joins first) and m2, opened with `m2_options`, under a fresh
// chroot, each seeing the other.
two_nodes join_two(const std::string& chroot_name, store_options m2_options = {}) {
  two_nodes t;
  t.chroot = zktest::fresh_chroot(chroot_name);
  t.n1 = join_node(t.chroot, "m1");
  t.n2 = join_node(t.chroot, "m2", std::move(m2_options));
  REQUIRE(zktest::eventually([&] { return t.n1.m->report().nodes.size() == 2 && t.n2.m->report().nodes.size() == 2; }));
  return t;
}

two_nodes two_nodes_with(const std::string& chroot_name, const std::string& table, std::uint32_t partitions,
                         store_options m2_options = {}) {
  auto t = join_two(chroot_name, std::move(m2_options));
  t.d.name = table;
  t.d.families.push_back(family_descriptor{"f"});
  t.d.partitioning = partition_spec::hash(partitions);
  REQUIRE_OK(t.n1.s->create_table(t.d, schema_origin::oceanbase_ddl));
  REQUIRE(zktest::eventually([&] { return t.n2.s->table_exists(table); }));
  return t;
}

// Every member leaves, in the order given, then every store closes in that order.
void shut_down(std::initializer_list<joined_node*> nodes) {
  for (auto* n : nodes) n->m.reset();
  for (auto* n : nodes) REQUIRE_OK(n->s->close());
}

// A row key ("r<i>") that falls in partition `p`.
std::string row_in(const partition_spec& spec, std::uint32_t p) {
  for (int i = 0;; ++i)
    if (auto row = "r" + std::to_string(i); detail::partition_of(spec, row) == p) return row;
}

// An actor system of the test's own that speaks the node-to-node protocol (to send steps
// to the members as a mover would).
struct peer_system {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  peer_system() {
    detail::add_partition_protocol(cfg);
    cluster::add_cluster_protocol(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

}  // namespace

TEST_CASE("a move whose mover dies before the flip: the source runs what it held, the target drops its copy",
          "[member][moves]") {
  auto t = two_nodes_with("member-mover-dies", "gt", 4);
  const auto& chroot = t.chroot;
  auto& n1 = t.n1;
  auto& n2 = t.n2;
  const auto& d = t.d;
  auto conn = connect_embedded(*n1.s);

  // A partition of m1 and a row in it.
  auto zk = zktest::connect(chroot);
  auto before = cluster::read_placement(*zk);
  REQUIRE(before.is_ok());
  const std::uint32_t p = zktest::first_partition_on(before->map, "gt", "m1");
  const std::string row = row_in(d.partitioning, p);
  REQUIRE_OK(conn->put("gt", cellar::put(row).add("f", "q", "before")));

  // The mover: an intent in its own session, then the steps up to the freeze, as run_move
  // sends them (m2 prepares a copy, m1 tracks, copies and freezes).
  auto mover_zk = zktest::connect(chroot);
  REQUIRE_OK(mover_zk->ensure_path(cluster::layout::moves));
  REQUIRE_OK(mover_zk->create(cluster::layout::move_intent("gt", p), "m1 m2", cluster::create_mode::ephemeral));
  peer_system ps;
  auto& sys = *ps.sys;
  auto peers = std::make_shared<cluster::peer_directory>(sys);
  peers->set_members({cluster::node_info{"m1", "127.0.0.1:1", n1.m->peer_address()},
                      cluster::node_info{"m2", "127.0.0.1:1", n2.m->peer_address()}});
  caf::scoped_actor self{sys};
  auto step = [&](const std::string& node, std::uint8_t what, std::uint8_t source_step = 0) {
    auto ep = peers->endpoint(node, std::chrono::seconds(10));
    REQUIRE(ep.is_ok());
    cluster::node_move m{"gt", p, what, {}};
    m.req.what = source_step;
    m.req.max_bytes = 1 << 20;
    status out = status{code::unavailable, "no answer"};
    self->request(*ep, std::chrono::seconds(10), std::move(m))
        .receive([&](detail::move_reply& r) { out = r.st; },
                 [&](caf::error& e) {
                   out = {code::internal, sys.render(e)};
                 });
    return out;
  };
  REQUIRE_OK(step("m2", cluster::node_move::prepare));
  REQUIRE_OK(step("m1", cluster::node_move::on_source, detail::move_request::track));
  REQUIRE_OK(step("m1", cluster::node_move::on_source, detail::move_request::chunk));
  REQUIRE_OK(step("m1", cluster::node_move::on_source, detail::move_request::freeze));
  // m2 has a copy being built: applying to it works.
  REQUIRE_OK(step("m2", cluster::node_move::apply, detail::move_request::apply));

  // Frozen: a write to the partition is held.
  auto held = std::async(std::launch::async, [&] { return conn->put("gt", cellar::put(row).add("f", "q", "held")); });
  REQUIRE(held.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);

  // The mover dies: its session ends and its intent goes.
  mover_zk.reset();
  REQUIRE(held.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  REQUIRE_OK(held.get());
  auto g = conn->get("gt", cellar::get(row));
  REQUIRE_OK(g);
  REQUIRE(g->cells.size() == 1);
  CHECK(g->cells[0].value == "held");
  REQUIRE_OK(conn->put("gt", cellar::put(row).add("f", "q", "after")));
  // m2 dropped its copy.
  REQUIRE(zktest::eventually(
      [&] { return step("m2", cluster::node_move::apply, detail::move_request::apply).code() == code::not_found; }));
  // Nothing moved.
  auto after = cluster::read_placement(*zk);
  REQUIRE(after.is_ok());
  CHECK(after->map.epoch == before->map.epoch);
  CHECK(after->map.tables.at("gt")[p].node == "m1");

  // A move that starts afterwards runs to its end: the guards of the dead one are gone.
  REQUIRE_OK(cluster_admin::of(*n2.s)->move_partition("gt/" + std::to_string(p), "m2"));
  // Both nodes are live members, each with the address it serves on.
  auto seen = cluster_admin::of(*n1.s)->status();
  CHECK(seen.live_count() == 2);
  CHECK(seen.down_count() == 0);
  for (const auto& node : seen.nodes) {
    CHECK((node.id == "m1" || node.id == "m2"));
    CHECK(node.live);
    CHECK_FALSE(node.address.empty());
  }
  CHECK(seen.report.find("m2") != std::string::npos);
  auto moved = cluster::read_placement(*zk);
  REQUIRE(moved.is_ok());
  CHECK(moved->map.tables.at("gt")[p].node == "m2");
  auto g2 = conn->get("gt", cellar::get(row));
  REQUIRE_OK(g2);
  REQUIRE(g2->cells.size() == 1);
  CHECK(g2->cells[0].value == "after");

  shut_down({&n2, &n1});
}

TEST_CASE("a runtime loaded just before a move still reaches the partition after the flip", "[member][moves]") {
  // A client looks its table up, then sends: a move that flips in between must not leave it
  // with a stopped actor. The runtimes below are such a client's, held across the move.
  auto t = two_nodes_with("member-stale-runtime", "st", 4);
  const auto& chroot = t.chroot;
  auto& n1 = t.n1;
  auto& n2 = t.n2;
  const auto& d = t.d;
  auto zk = zktest::connect(chroot);
  auto before = cluster::read_placement(*zk);
  REQUIRE(before.is_ok());
  const std::uint32_t p = zktest::first_partition_on(before->map, "st", "m1");
  const std::string row = row_in(d.partitioning, p);
  auto conn = connect_embedded(*n1.s);
  REQUIRE_OK(conn->put("st", cellar::put(row).add("f", "q", "v")));

  auto& s1 = detail::store_access::seat(*n1.s);
  auto& s2 = detail::store_access::seat(*n2.s);
  const auto old1 = s1.catalog().lookup("st");  // the partition is local here
  const auto old2 = s2.catalog().lookup("st");  // a forwarder to m1 here
  REQUIRE(old1);
  REQUIRE(old2);
  REQUIRE(old1->partitions[p].local);
  REQUIRE_FALSE(old2->partitions[p].local);

  REQUIRE_OK(cluster_admin::of(*n2.s)->move_partition("st/" + std::to_string(p), "m2"));
  // Both nodes have published runtimes that name other actors for the partition.
  REQUIRE(zktest::eventually([&] {
    auto a = s1.catalog().lookup("st"), b = s2.catalog().lookup("st");
    return a && b && !a->partitions[p].local && b->partitions[p].local;
  }));

  auto get_through = [&](detail::cluster_seat& s, const detail::runtime_ptr& rt) {
    // Shared: should the wait below fail, the answer may still come after this returns.
    auto got = std::make_shared<std::promise<result<detail::batch_reply>>>();
    auto fut = got->get_future();
    detail::batch_request req;
    req.schema_version = rt->schema->version;
    req.ops.push_back(cellar::get(row));
    detail::ask<detail::batch_reply>(s.system(), rt->partitions[p].actor, req,
                                     [got](result<detail::batch_reply> r) { got->set_value(std::move(r)); });
    REQUIRE(fut.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    return fut.get();
  };
  for (auto* which : {&old1, &old2}) {
    auto& s = which == &old1 ? s1 : s2;
    auto r = get_through(s, *which);
    INFO((which == &old1 ? "m1's old runtime: " : "m2's old runtime: ") + (!r ? r.error().to_string()
                                                                           : r->results.empty()
                                                                               ? std::string("no result")
                                                                               : r->results[0].st.to_string()));
    REQUIRE(r.is_ok());
    REQUIRE(r->results.size() == 1);
    REQUIRE(r->results[0].st.is_ok());
    REQUIRE(r->results[0].row.cells.size() == 1);
    CHECK(r->results[0].row.cells[0].value == "v");
  }

  shut_down({&n2, &n1});
}

TEST_CASE("a scan paging through a partition that moves reads every row once", "[member][moves]") {
  // The scan holds the runtime it started with: its later pages go to the partition's old
  // actor, which passes them on to the new owner (dispatch.h: stop_when_released).
  auto t = two_nodes_with("member-scan-move", "sm", 2);
  const auto& chroot = t.chroot;
  auto& n1 = t.n1;
  auto& n2 = t.n2;
  auto c1 = connect_embedded(*n1.s);
  auto c2 = connect_embedded(*n2.s);
  std::set<std::string> all;
  for (int i = 0; i < 200; ++i) {
    const std::string row = "r" + std::to_string(1000 + i);
    REQUIRE_OK(c1->put("sm", cellar::put(row).add("f", "q", "v")));
    all.insert(row);
  }
  auto zk = zktest::connect(chroot);

  for (auto* conn : {&c1, &c2}) {
    INFO((conn == &c1 ? "through m1" : "through m2"));
    auto pl = cluster::read_placement(*zk);
    REQUIRE(pl.is_ok());
    const std::string from = pl->map.tables.at("sm")[0].node, to = from == "m1" ? "m2" : "m1";
    auto sc = (*conn)->scan("sm", cellar::scan().caching(7));
    REQUIRE_OK(sc);
    std::set<std::string> seen;
    std::size_t rows = 0;
    auto take = [&](std::size_t n) {
      auto page = (*sc)->next(n);
      REQUIRE_OK(page);
      for (const auto& r : *page) {
        seen.insert(r.row);
        ++rows;
      }
      return page->size();
    };
    REQUIRE(take(20) == 20);
    // Partition 0 moves between pages.
    REQUIRE_OK(cluster_admin::of(*(conn == &c1 ? n1 : n2).s)->move_partition("sm/0", to));
    while (take(13) > 0) {}
    CHECK(rows == all.size());
    CHECK(seen == all);
  }

  shut_down({&n2, &n1});
}

TEST_CASE("a move whose target dies mid-step fails at once, not after the step timeout", "[member][moves]") {
  const auto chroot = zktest::fresh_chroot("member-target-dies");
  auto n1 = join_node(chroot, "m1");
  table_descriptor d;
  d.name = "dt";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(2);
  REQUIRE_OK(n1.s->create_table(d, schema_origin::oceanbase_ddl));
  auto conn = connect_embedded(*n1.s);
  REQUIRE_OK(conn->put("dt", cellar::put("r1").add("f", "q", "v")));

  // The target: a node whose endpoint takes a move's first step and never answers, in an
  // actor system of its own (its "process").
  peer_system fake_process;
  auto& fake_sys = fake_process.sys;
  auto steps = std::make_shared<std::atomic<int>>(0);
  auto fake_ep = fake_sys->spawn(move_sink, steps);
  auto port = fake_sys->middleman().publish(fake_ep, 0, "127.0.0.1", true);
  REQUIRE(port);
  const cluster::node_info fake{"fake", "127.0.0.1:1", "127.0.0.1:" + std::to_string(*port)};
  auto fake_zk = zktest::connect(chroot);
  auto fake_member = cluster::membership::join(*fake_zk, fake, nullptr);
  REQUIRE_OK(fake_member);

  peer_system ps;
  auto& sys = *ps.sys;
  cluster::peer_directory peers{sys};
  peers.set_members({cluster::node_info{"m1", "127.0.0.1:1", n1.m->peer_address()}, fake});
  cluster::move_options o;
  o.step_timeout = std::chrono::seconds(120);  // not what ends the move below
  auto move =
      std::async(std::launch::async, [&] { return cluster::run_move(n1.m->node(), peers, sys, "dt", 0, "fake", o); });
  REQUIRE(zktest::eventually([&] { return steps->load() == 1; }));

  // The target's process dies: its connections close.
  caf::anon_send_exit(fake_ep, caf::exit_reason::kill);
  fake_ep = nullptr;
  fake_sys.reset();
  REQUIRE(move.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  auto st = move.get();
  INFO(st.to_string());
  CHECK(st.code() == code::unavailable);
  CHECK(st.message().find("node 'fake'") != std::string::npos);
  // Aborted: the partition still serves on m1, writes included.
  REQUIRE_OK(conn->put("dt", cellar::put("r1").add("f", "q", "w")));
  auto g = conn->get("dt", cellar::get("r1"));
  REQUIRE_OK(g);
  REQUIRE(g->cells.size() == 1);
  CHECK(g->cells[0].value == "w");

  fake_member->reset();
  n1.m.reset();
  REQUIRE_OK(n1.s->close());
}

TEST_CASE("a member leaving while an admin move waits for another node ends the move before it goes",
          "[member][moves]") {
  const auto chroot = zktest::fresh_chroot("member-leaves-mid-move");
  auto n1 = join_node(chroot, "m1");
  table_descriptor d;
  d.name = "lt";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(2);
  REQUIRE_OK(n1.s->create_table(d, schema_origin::oceanbase_ddl));

  // The target: a member whose endpoint takes a move's first step and never answers.
  peer_system fake_process;
  auto steps = std::make_shared<std::atomic<int>>(0);
  auto fake_ep = fake_process.sys->spawn(move_sink, steps);
  auto port = fake_process.sys->middleman().publish(fake_ep, 0, "127.0.0.1", true);
  REQUIRE(port);
  auto fake_zk = zktest::connect(chroot);
  auto fake_member =
      cluster::membership::join(*fake_zk,
                                cluster::node_info{"fake", "127.0.0.1:1", "127.0.0.1:" + std::to_string(*port)},
                                nullptr);
  REQUIRE_OK(fake_member);
  REQUIRE(zktest::eventually([&] { return n1.m->report().nodes.size() == 2; }));

  // The move runs through the store's admin interface, as the shell's `move` does.
  auto admin = cluster_admin::of(*n1.s);
  REQUIRE_OK(admin);
  auto move = std::async(std::launch::async, [&] { return admin->move_partition("lt/0", "fake"); });
  REQUIRE(zktest::eventually([&] { return steps->load() == 1; }));

  // The member leaves while the move waits for the target's answer: once it has gone, the
  // move has ended (it used the member's node, which is gone too).
  n1.m.reset();
  REQUIRE(move.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  auto st = move.get();
  INFO(st.to_string());
  CHECK(st.code() == code::unavailable);
  // Later admin calls are refused, not run on the node that went.
  CHECK(admin->move_partition("lt/1", "fake").code() == code::unavailable);

  caf::anon_send_exit(fake_ep, caf::exit_reason::kill);
  fake_member->reset();
  REQUIRE_OK(n1.s->close());
}

TEST_CASE("the balancer runs its moves side by side, one per source node", "[member][moves]") {
  auto t = two_nodes_with("member-balance", "bt", 6);
  const auto& chroot = t.chroot;
  auto& n1 = t.n1;
  auto& n2 = t.n2;
  auto conn = connect_embedded(*n1.s);
  for (int i = 0; i < 60; ++i)
    REQUIRE_OK(conn->put("bt", cellar::put("r" + std::to_string(i)).add("f", "q", "v" + std::to_string(i))));

  auto n3 = join_node(chroot, "m3");
  REQUIRE(zktest::eventually([&] { return n1.m->report().nodes.size() == 3 && n3.s->table_exists("bt"); }));
  peer_system ps;
  auto& sys = *ps.sys;
  cluster::peer_directory peers{sys};
  peers.set_members({cluster::node_info{"m1", "127.0.0.1:1", n1.m->peer_address()},
                     cluster::node_info{"m2", "127.0.0.1:1", n2.m->peer_address()},
                     cluster::node_info{"m3", "127.0.0.1:1", n3.m->peer_address()}});
  // 3 + 3 over three nodes: one move from each of m1 and m2 to m3, at the same time.
  cluster::balance_stats stats;
  auto moved = cluster::run_balance(n1.m->node(), peers, sys, {}, &stats);
  REQUIRE_OK(moved);
  CHECK(*moved == 2);
  CHECK(stats.most_at_once == 2);
  auto zk = zktest::connect(chroot);
  auto pl = cluster::read_placement(*zk);
  REQUIRE(pl.is_ok());
  std::map<std::string, int> per_node;
  for (const auto& o : pl->map.tables.at("bt")) ++per_node[o.node];
  CHECK(per_node == std::map<std::string, int>{{"m1", 2}, {"m2", 2}, {"m3", 2}});
  // Every row is still there, through a node that holds some of them and one that did not.
  auto conn3 = connect_embedded(*n3.s);
  for (auto* c : {&conn, &conn3})
    for (int i = 0; i < 60; ++i) {
      auto g = (*c)->get("bt", cellar::get("r" + std::to_string(i)));
      REQUIRE_OK(g);
      REQUIRE(g->cells.size() == 1);
      CHECK(g->cells[0].value == "v" + std::to_string(i));
    }
  // A second run finds nothing to move.
  cluster::balance_stats again;
  auto none = cluster::run_balance(n1.m->node(), peers, sys, {}, &again);
  REQUIRE_OK(none);
  CHECK(*none == 0);

  shut_down({&n3, &n2, &n1});
}

TEST_CASE("a move's steps on the target's files wait for a snapshot without holding a CAF worker", "[member][moves]") {
  // m2 keeps files and has one CAF worker. A snapshot holds the snapshot lock while it
  // waits for every partition's cut, which needs a worker; the test holds that lock as a
  // snapshot would, sends m2 a prepare step (which takes the lock) and asks one of m2's
  // partitions for its stats: with the step on the worker, the partition cannot answer.
  const auto dir =
      (std::filesystem::temp_directory_path() / ("cellar-member-worker-" + std::to_string(getpid()))).string();
  std::filesystem::remove_all(dir);
  store_options so;
  so.directory = dir;
  so.worker_threads = 1;
  so.snapshot_interval = std::chrono::milliseconds(0);
  auto t = two_nodes_with("member-step-worker", "wk", 4, so);
  auto zk = zktest::connect(t.chroot);
  auto pl = cluster::read_placement(*zk);
  REQUIRE(pl.is_ok());
  const std::uint32_t on_m1 = zktest::first_partition_on(pl->map, "wk", "m1");
  const std::uint32_t on_m2 = zktest::first_partition_on(pl->map, "wk", "m2");

  peer_system ps;
  auto peers = std::make_shared<cluster::peer_directory>(*ps.sys);
  peers->set_members({cluster::node_info{"m2", "127.0.0.1:1", t.n2.m->peer_address()}});
  auto ep = peers->endpoint("m2", std::chrono::seconds(10));
  REQUIRE(ep.is_ok());
  auto& seat = detail::store_access::seat(*t.n2.s);
  auto rt = seat.catalog().lookup("wk");
  REQUIRE(rt);
  REQUIRE(rt->partitions[on_m2].local);

  REQUIRE(seat.persistence() != nullptr);
  std::promise<void> step_waits;
  std::once_flag told;
  seat.persistence()->on_snapshot_lock_wait([&] { std::call_once(told, [&] { step_waits.set_value(); }); });
  absl::Mutex& snapshots = seat.persistence()->snapshot_lock();
  snapshots.Lock();  // as a long snapshot would
  auto prepared = std::async(std::launch::async, [&] {
    caf::scoped_actor self{*ps.sys};
    status out{code::unavailable, "no answer"};
    self->request(*ep, std::chrono::seconds(30), cluster::node_move{"wk", on_m1, cluster::node_move::prepare, {}})
        .receive([&](detail::move_reply& r) { out = r.st; },
                 [&](caf::error& e) {
                   out = {code::internal, ps.sys->render(e)};
                 });
    return out;
  });
  // Once the step has reached the lock, the thread it runs on waits there, whichever it is.
  const bool step_reached = step_waits.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  std::promise<result<detail::stats_reply>> stats;
  detail::ask<detail::stats_reply>(seat.system(), rt->partitions[on_m2].actor, detail::stats_request{},
                                   [&](result<detail::stats_reply> r) { stats.set_value(std::move(r)); });
  auto answered = stats.get_future();
  // Not a timing: with the step holding the only worker, no answer comes while the lock is
  // held (a real snapshot would hold it until that answer: for ever).
  const bool partition_answered = answered.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  snapshots.Unlock();
  CHECK(step_reached);
  CHECK(partition_answered);
  REQUIRE(prepared.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  REQUIRE_OK(prepared.get());  // it ran once the lock was free
  if (partition_answered) CHECK(answered.get().is_ok());
  seat.persistence()->on_snapshot_lock_wait(nullptr);

  caf::scoped_actor self{*ps.sys};
  self->request(*ep, std::chrono::seconds(30), cluster::node_move{"wk", on_m1, cluster::node_move::drop, {}})
      .receive([](detail::move_reply& r) { CHECK(r.st.is_ok()); },
               [](caf::error&) { FAIL("the drop step got no answer"); });
  shut_down({&t.n2, &t.n1});
  std::filesystem::remove_all(dir);
}

TEST_CASE("a table another node just created is found on a node that has not applied it yet", "[member]") {
  // m1 (the master) creates a table while m2's ZooKeeper event thread, where m2 applies
  // catalogs, is held busy: m2 does not know the table yet. A request that names it waits
  // until m2 has caught up instead of answering TABLE_NOT_FOUND.
  auto t = join_two("member-catch-up");
  REQUIRE(t.n1.m->report().master == "m1");
  std::promise<void> release;
  auto held = release.get_future().share();
  std::promise<void> holding;
  t.n2.m->node().zookeeper().post([held, &holding] {
    holding.set_value();
    held.wait();
  });
  holding.get_future().wait();
  table_descriptor d;
  d.name = "cu";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(2);
  REQUIRE_OK(t.n1.s->create_table(d, schema_origin::oceanbase_ddl));

  auto read = std::async(std::launch::async, [&] { return connect_embedded(*t.n2.s)->get("cu", cellar::get("r")); });
  // Still held: the read waits for m2 to catch up rather than failing.
  CHECK(read.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
  release.set_value();
  REQUIRE(read.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  auto g = read.get();
  REQUIRE_OK(g);  // found (not TABLE_NOT_FOUND); the row is not there yet
  CHECK(g->cells.empty());
  // And the table serves through m2 from now on.
  auto conn2 = connect_embedded(*t.n2.s);
  for (const char* row : {"a", "b", "c", "d"}) REQUIRE_OK(conn2->put("cu", cellar::put(row).add("f", "q", row)));
  auto back = connect_embedded(*t.n1.s)->get("cu", cellar::get("c"));
  REQUIRE_OK(back);
  REQUIRE(back->cells.size() == 1);
  CHECK(back->cells[0].value == "c");
  // A table that exists nowhere is still TABLE_NOT_FOUND, after one look at ZooKeeper.
  CHECK(connect_embedded(*t.n2.s)->get("nosuch", cellar::get("r")).code() == code::table_not_found);
  CHECK_FALSE(t.n2.s->table_exists("nosuch"));
  shut_down({&t.n2, &t.n1});
}

TEST_CASE("a table another node just enabled or disabled is seen so on a node that has not applied it yet",
          "[member][disable]") {
  // As above, for disable and enable: m2, its event thread held busy, still has the table
  // in the state before the DDL. A read of a table just enabled waits until m2 has caught
  // up instead of answering TABLE_DISABLED, and a restore of a table just disabled instead
  // of answering TABLE_NOT_DISABLED.
  auto t = join_two("member-enable-catch-up");
  REQUIRE(t.n1.m->report().master == "m1");
  table_descriptor d;
  d.name = "ed";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(2);
  REQUIRE_OK(t.n1.s->create_table(d, schema_origin::oceanbase_ddl));
  REQUIRE(zktest::eventually([&] { return t.n2.s->table_exists("ed"); }));
  REQUIRE_OK(connect_embedded(*t.n1.s)->put("ed", cellar::put("r").add("f", "q", "v")));
  REQUIRE_OK(t.n1.s->snapshot("ed", "eds"));
  // Runs `ddl` through m1 while m2's event thread is held, then `call` through m2: it must
  // wait for m2 to catch up (still running while held), then answer as the DDL left it.
  auto while_m2_behind = [&](auto ddl, auto call) {
    std::promise<void> release;
    auto held = release.get_future().share();
    std::promise<void> holding;
    t.n2.m->node().zookeeper().post([held, &holding] {
      holding.set_value();
      held.wait();
    });
    holding.get_future().wait();
    REQUIRE_OK(ddl());
    auto answer = std::async(std::launch::async, call);
    CHECK(answer.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);
    release.set_value();
    REQUIRE(answer.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    return answer.get();
  };
  REQUIRE_OK(t.n1.s->disable_table("ed"));
  REQUIRE(zktest::eventually([&] {
    auto e = t.n2.s->is_table_enabled("ed");
    return e.is_ok() && !*e;
  }));
  auto g = while_m2_behind([&] { return t.n1.s->enable_table("ed"); },
                           [&] { return connect_embedded(*t.n2.s)->get("ed", cellar::get("r")); });
  REQUIRE_OK(g);  // not TABLE_DISABLED
  REQUIRE(g->cells.size() == 1);
  CHECK(g->cells[0].value == "v");
  REQUIRE_OK(connect_embedded(*t.n1.s)->put("ed", cellar::put("r").add("f", "q", "changed")));
  REQUIRE_OK(while_m2_behind([&] { return t.n1.s->disable_table("ed"); },
                             [&] { return t.n2.s->restore_snapshot("eds"); }));  // not TABLE_NOT_DISABLED
  REQUIRE_OK(t.n1.s->enable_table("ed"));
  auto back = connect_embedded(*t.n2.s)->get("ed", cellar::get("r"));
  REQUIRE_OK(back);
  REQUIRE(back->cells.size() == 1);
  CHECK(back->cells[0].value == "v");
  shut_down({&t.n2, &t.n1});
}

TEST_CASE("a node sweeps its copies of deleted snapshots when its ZooKeeper session is established anew",
          "[member][snapshots][expiry]") {
  auto t = two_nodes_with("member-snapshot-session", "ss", 2);
  REQUIRE_OK(connect_embedded(*t.n1.s)->put("ss", cellar::put("r").add("f", "q", "v")));
  REQUIRE_OK(t.n1.s->snapshot("ss", "gone"));
  REQUIRE_OK(t.n1.s->snapshot("ss", "kept"));
  auto& repo2 = detail::store_access::seat(*t.n2.s).snapshots();
  auto gone = repo2.manifest("gone");
  REQUIRE_OK(gone);
  REQUIRE_OK(repo2.manifest("kept"));
  // "gone" is deleted while m2 is cut off, so that no drop reaches it: its znode goes and
  // its tombstone names m2 as the node that may still hold a copy.
  auto zk = zktest::connect(t.chroot);
  REQUIRE_OK(zk->remove(std::string(cluster::layout::snapshots) + "/s_gone"));
  auto calls = cluster::tombstone_zk_of(*zk);
  REQUIRE_OK(cluster::mark_deleted(*calls, *gone, {"m2"}));
  REQUIRE_OK(repo2.manifest("gone"));  // nothing has told m2 yet

  REQUIRE_OK(t.n2.m->node().zookeeper().expire_session_for_testing());
  // The new session's sweep removes the copy, keeps the snapshot that exists, and takes m2
  // out of the tombstone, its last pending node: the tombstone goes.
  CHECK(zktest::eventually([&] { return repo2.manifest("gone").code() == code::not_found; }));
  REQUIRE_OK(repo2.manifest("kept"));
  CHECK(zktest::eventually([&] {
    auto e = zk->exists(cluster::tombstone_znode("gone"));
    return e.is_ok() && !*e;
  }));
  auto listed = t.n2.s->list_snapshots();
  REQUIRE_OK(listed);
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].name == "kept");
  shut_down({&t.n2, &t.n1});
}

TEST_CASE("the master takes a node dead past the dead-node timeout out of the snapshot tombstones",
          "[member][snapshots]") {
  const auto chroot = zktest::fresh_chroot("member-tombstone-dead");
  auto opened = cluster::member::open_store(store_options{});
  REQUIRE(opened.is_ok());
  auto& s = *opened.value();
  auto o = member_options_for(chroot, "m1");
  o.dead_node_timeout = std::chrono::milliseconds(500);
  auto m = cluster::member::join(s, o);
  INFO(zktest::describe_status(m));
  REQUIRE(m.is_ok());
  // Tombstones written after m1's join sweep: one waits for m9 only (a node that is not
  // live), one for m9 and m1 (live).
  auto zk = zktest::connect(chroot);
  auto calls = cluster::tombstone_zk_of(*zk);
  detail::snapshot_manifest a;
  a.table = "t";
  a.partitions = 1;
  a.files = {{"schema", {}}, {"part-00000.cells", {}}};
  auto b = a;
  a.name = "a";
  b.name = "b";
  REQUIRE_OK(cluster::mark_deleted(*calls, a, {"m9"}));
  REQUIRE_OK(cluster::mark_deleted(*calls, b, {"m1", "m9"}));
  CHECK(zktest::eventually([&] {
    auto e = zk->exists(cluster::tombstone_znode("a"));
    return e.is_ok() && !*e;
  }));
  // A live node is never forgotten.
  const auto pending_b = [&] {
    auto left = zk->get(cluster::tombstone_znode("b"));
    auto entries =
        left ? cluster::decode_tombstone(left->data) : result<std::vector<cluster::tombstone_entry>>(left.error());
    return entries && entries->size() == 1 ? (*entries)[0].pending : std::vector<std::string>{};
  };
  CHECK(zktest::eventually([&] { return pending_b() == std::vector<std::string>{"m1"}; }));
  m.value().reset();
  REQUIRE_OK(s.close());
}

TEST_CASE("list_regions through any node counts every partition's cells where it lives", "[member][regions]") {
  auto t = two_nodes_with("member-regions", "lr", 4);
  auto conn = connect_embedded(*t.n1.s);
  // Partition p gets p + 1 rows, one cell each.
  std::vector<std::uint64_t> rows(4, 0);
  for (int i = 0; rows[0] < 1 || rows[1] < 2 || rows[2] < 3 || rows[3] < 4; ++i) {
    const std::string row = "r" + std::to_string(i);
    const auto p = detail::partition_of(t.d.partitioning, row);
    if (rows[p] == p + 1) continue;
    REQUIRE_OK(conn->put("lr", cellar::put(row).add("f", "q", "v")));
    ++rows[p];
  }
  auto zk = zktest::connect(t.chroot);
  auto placement = cluster::read_placement(*zk);
  REQUIRE_OK(placement);
  for (auto* s : {t.n1.s.get(), t.n2.s.get()}) {
    auto regions = s->list_regions("lr");
    REQUIRE_OK(regions);
    REQUIRE(regions->size() == 4);
    for (const auto& r : *regions) {
      INFO("partition " << r.index << " on " << r.node);
      CHECK(r.node == placement->map.tables.at("lr")[r.index].node);
      CHECK(r.cells == rows[r.index]);
      CHECK(r.bytes > 0);
    }
  }
  // Both nodes hold partitions, so each listing asked the other node.
  CHECK(zktest::first_partition_on(placement->map, "lr", "m1") < 4);
  CHECK(zktest::first_partition_on(placement->map, "lr", "m2") < 4);
  shut_down({&t.n2, &t.n1});
}
