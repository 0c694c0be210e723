// Three cluster nodes against a real ZooKeeper: DDL through the master, the catalog and
// the placement map seen by every node, moves, master failover.
#include <atomic>
#include <thread>

#include "cluster/cluster_node.h"
#include "cluster/ddl.h"
#include "cluster/layout.h"
#include "cluster_test.h"

using namespace cellar;
using namespace cellar::cluster;
using namespace zktest;

namespace {

table_descriptor table(const std::string& name, std::vector<std::string> families, std::uint32_t partitions) {
  table_descriptor d;
  d.name = name;
  d.partitioning = partition_spec::hash(partitions);
  for (auto& f : families) d.families.push_back({f});
  return d;
}

// A node plus what its callbacks reported.
struct test_node {
  std::unique_ptr<cluster_node> node;
  std::atomic<std::uint64_t> catalog_version{0};
  std::atomic<std::uint64_t> placement_epoch{0};
  std::atomic<int> mastership_events{0};
  std::atomic<bool> master_flag{false};

  test_node(const std::string& root, const std::string& id,
            std::chrono::milliseconds session = std::chrono::milliseconds(4000)) {
    cluster_options o;
    o.zookeeper.connect = zk_server::shared().connect(root);
    o.zookeeper.session_timeout = session;
    o.self = {id, id + ":9090", id + ":4242"};
    o.ddl_timeout = std::chrono::seconds(20);
    cluster_callbacks cb;
    cb.catalog_changed = [this](std::shared_ptr<const cluster_catalog> c) { catalog_version = c->version; };
    cb.placement_changed = [this](std::shared_ptr<const placement_map> m) { placement_epoch = m->epoch; };
    cb.mastership_changed = [this](bool m, std::int64_t) {
      master_flag = m;
      ++mastership_events;
    };
    auto n = cluster_node::start(o, cb);
    INFO(describe_status(n));
    REQUIRE(n.is_ok());
    node = std::move(*n);
  }
  cluster_node* operator->() { return node.get(); }
};

std::map<std::string, std::uint32_t> load_of(const placement_map& m) { return m.load(); }

bool within_one(const std::map<std::string, std::uint32_t>& load) {
  std::uint32_t lo = UINT32_MAX, hi = 0;
  for (auto& [n, c] : load) {
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  return load.empty() || hi - lo <= 1;
}

}  // namespace

TEST_CASE("DDL on any node goes through the master and reaches every node", "[cluster]") {
  const auto root = fresh_chroot("ddl");
  test_node n1(root, "n1"), n2(root, "n2"), n3(root, "n3");
  CHECK(n1->is_master());
  CHECK(n1.master_flag);
  CHECK_FALSE(n2->is_master());
  CHECK_FALSE(n3->is_master());
  REQUIRE(eventually([&] { return n3->members().size() == 3; }));
  CHECK(n2->master()->node_id == "n1");

  auto v = n3->ddl(ddl_request::create(table("t", {"f"}, 9), schema_origin::hbase_shell));
  REQUIRE_OK(v);
  CHECK(*v == 1);
  for (auto* n : {&n1, &n2, &n3}) {
    REQUIRE(eventually([&] { return (*n).catalog_version == 1 && (*n).placement_epoch >= 1; }));
    auto c = (*n)->catalog();
    REQUIRE(c->find("t"));
    CHECK(c->find("t")->partitioning.count() == 9);
    auto m = (*n)->placement();
    REQUIRE(m->tables.count("t"));
    CHECK(m->tables.at("t").size() == 9);
    CHECK(load_of(*m) == std::map<std::string, std::uint32_t>{{"n1", 3}, {"n2", 3}, {"n3", 3}});
  }
  // The store's errors come back through the master.
  auto dup = n2->ddl(ddl_request::create(table("t", {"g"}, 2), schema_origin::hbase_shell));
  REQUIRE_CODE(dup, code::already_exists);
  CHECK(dup.error().message().find("'t'") != std::string::npos);
  REQUIRE_CODE(n2->ddl(ddl_request::drop("nope")), code::table_not_found);
  CHECK(n1->catalog()->version == 1);  // refused DDL: nothing changed

  // A family added without new partitions leaves the map alone; a drop removes the table's.
  const auto epoch = n1->placement()->epoch;
  REQUIRE_OK(n1->ddl(ddl_request::add("t", {"g"}, partition_spec::hash(9))));
  REQUIRE(eventually([&] { return n2.catalog_version == 2; }));
  CHECK(n2->catalog()->find("t")->families.size() == 2);
  CHECK(n2->placement()->epoch == epoch);
  REQUIRE_OK(n2->ddl(ddl_request::drop("t")));
  REQUIRE(eventually([&] { return n3.catalog_version == 3 && n3.placement_epoch > epoch; }));
  CHECK_FALSE(n3->catalog()->find("t"));
  CHECK(n3->placement()->tables.empty());
  // Every request was answered and collected.
  CHECK(n1->zookeeper().children(layout::ddl_requests)->empty());
  CHECK(n1->zookeeper().children(layout::ddl_results)->empty());
}

TEST_CASE("of two conflicting DDLs one wins and the other gets a clear error", "[cluster]") {
  const auto root = fresh_chroot("conflict");
  test_node n1(root, "n1"), n2(root, "n2");
  for (int round = 0; round < 3; ++round) {
    const std::string name = "t" + std::to_string(round);
    result<std::uint64_t> r1 = status{code::internal, ""}, r2 = status{code::internal, ""};
    std::thread a([&] { r1 = n1->ddl(ddl_request::create(table(name, {"a"}, 2), schema_origin::hbase_shell)); });
    std::thread b([&] { r2 = n2->ddl(ddl_request::create(table(name, {"b"}, 3), schema_origin::hbase_shell)); });
    a.join();
    b.join();
    INFO(describe_status(r1) << " / " << describe_status(r2));
    CHECK(r1.is_ok() != r2.is_ok());
    const auto& loser = r1.is_ok() ? r2 : r1;
    CHECK(loser.code() == code::already_exists);
    REQUIRE(eventually([&] { return n1->catalog()->find(name) != nullptr; }));
    const auto* t = n1->catalog()->find(name);
    CHECK(t->families.size() == 1);
    CHECK(t->families[0].desc.name == (r1.is_ok() ? "a" : "b"));
  }
  // Two DDLs decided on the same catalog version: the second gets CONFLICT.
  const auto v = n1->catalog()->version;
  auto x = ddl_request::create_group("x");
  x.expected_version = v;
  auto y = ddl_request::create_group("y");
  y.expected_version = v;
  REQUIRE_OK(n1->ddl(x));
  auto lost = n2->ddl(y);
  REQUIRE_CODE(lost, code::conflict);
  REQUIRE(eventually([&] { return n2->catalog()->version == v + 1; }));
  CHECK_FALSE(n2->catalog()->find("y"));
}

TEST_CASE("a DDL nobody serves is withdrawn and reports UNAVAILABLE", "[cluster]") {
  auto zk = connect(fresh_chroot("nomaster"));
  auto r = submit_ddl(*zk, ddl_request::create_group("g"), std::chrono::milliseconds(300));
  REQUIRE_CODE(r, code::unavailable);
  CHECK(r.error().message().find("nothing changed") != std::string::npos);
  CHECK(zk->children(layout::ddl_requests)->empty());
  // On the event thread it refuses instead of deadlocking.
  result<std::uint64_t> inside = status{code::internal, ""};
  zk->post([&] { inside = submit_ddl(*zk, ddl_request::create_group("g")); });
  zk->barrier();
  REQUIRE_CODE(inside, code::invalid_argument);
}

TEST_CASE("when the master goes, another node takes over and DDL still works", "[cluster]") {
  const auto root = fresh_chroot("failover");
  auto n1 = std::make_unique<test_node>(root, "n1");
  test_node n2(root, "n2"), n3(root, "n3");
  REQUIRE_OK((*n1)->ddl(ddl_request::create(table("t", {"f"}, 6), schema_origin::hbase_shell)));
  n1.reset();  // the master leaves
  REQUIRE(eventually([&] { return n2->is_master(); }));
  CHECK(n2.master_flag);
  auto v = n3->ddl(ddl_request::create(table("u", {"f"}, 4), schema_origin::hbase_shell));
  REQUIRE_OK(v);
  CHECK(*v == 2);
  REQUIRE(eventually([&] { return n3->placement()->tables.count("u") == 1; }));
  // n1 is gone: the new table lives on n2 and n3 only; n1 keeps its partitions of t.
  for (const auto& o : n3->placement()->tables.at("u")) CHECK(o.node != "n1");
  CHECK(n3->placement()->partitions_of("n1").size() == 2);

  // The master's session expires: it steps down, n3 takes over, n2 comes back as a follower.
  const auto old_session = n2->zookeeper().session_id();
  REQUIRE_OK(n2->zookeeper().expire_session_for_testing());
  REQUIRE(eventually([&] { return n3->is_master(); }));
  // (Calls fail with UNAVAILABLE until n2's new session is up.)
  REQUIRE(eventually([&] { return n2->zookeeper().connected() && n2->zookeeper().session_id() != old_session; }));
  REQUIRE(eventually([&] { return n2->members().size() == 2 && !n2->is_master(); }));
  REQUIRE_OK(n2->ddl(ddl_request::drop("u")));
  // n2 re-read the catalog in its new session and keeps watching it.
  REQUIRE(eventually([&] { return n2->catalog()->version == 3 && !n2->catalog()->find("u"); }));
}

TEST_CASE("the master moves partitions and balances a joining node", "[cluster]") {
  const auto root = fresh_chroot("moves");
  test_node n1(root, "n1"), n2(root, "n2");
  REQUIRE_OK(n2->ddl(ddl_request::create(table("t", {"f"}, 8), schema_origin::hbase_shell)));
  REQUIRE(eventually([&] { return n1->placement()->tables.count("t") == 1; }));
  const auto epoch = n1->placement()->epoch;

  auto refused = n2->move({"t", 0}, "n1");
  REQUIRE_CODE(refused, code::unavailable);
  CHECK(refused.error().message().find("'n1'") != std::string::npos);  // names the master
  REQUIRE_CODE(n1->move({"t", 0}, "ghost"), code::not_found);
  REQUIRE_CODE(n1->move({"t", 99}, "n2"), code::invalid_argument);

  const std::string from = n1->placement()->owner({"t", 0})->node;
  const std::string to = from == "n1" ? "n2" : "n1";
  auto moved = n1->move({"t", 0}, to);
  REQUIRE_OK(moved);
  CHECK(*moved == epoch + 1);
  REQUIRE(eventually([&] { return n2.placement_epoch == epoch + 1; }));
  CHECK(*n2->placement()->owner({"t", 0}) == partition_owner{to, epoch + 1});

  test_node n3(root, "n3");
  REQUIRE(eventually([&] { return n1->members().size() == 3; }));
  auto plan = n1->plan_balance();
  REQUIRE_OK(plan);
  CHECK(plan->size() == 2);  // 8 partitions over 3 nodes: n3 gets 2 (or 3 with one node at 3)
  for (const auto& mv : *plan) {
    CHECK(mv.to == "n3");
    REQUIRE_OK(n1->move(mv.partition, mv.to));
  }
  REQUIRE(eventually([&] { return n3->placement()->partitions_of("n3").size() == 2; }));
  CHECK(within_one(n3->placement()->load()));
  REQUIRE_CODE(n3->plan_balance(), code::unavailable);
}
