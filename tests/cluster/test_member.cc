// cluster/member.h in one process: a store opened for a cluster serves nothing until it
// has joined; joined alone, it is a cluster of one that applies its own DDL.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "cellar/connection.h"
#include "cellar/store.h"
#include "cluster/member.h"
#include "cluster_test.h"

using namespace cellar;

TEST_CASE("a member store refuses data and DDL until it has joined, then serves the cluster's tables", "[member]") {
  // A directory that holds a table of its own (written as a single store).
  const auto dir = (std::filesystem::temp_directory_path() / ("cellar-member-test-" + std::to_string(getpid()))).string();
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

  cluster::member_options o;
  o.zookeeper.connect = zktest::zk_server::shared().connect(zktest::fresh_chroot("member"));
  o.zookeeper.session_timeout = std::chrono::milliseconds(4000);
  o.node_id = "m1";
  o.data_address = "127.0.0.1:1";
  auto m = cluster::member::join(s, o);
  INFO(zktest::describe(m));
  REQUIRE(m.is_ok());
  // The cluster's catalog rules: a table it does not have is dropped from this node.
  CHECK_FALSE(s.table_exists("local_only"));

  REQUIRE_OK(s.create_table(d, schema_origin::oceanbase_ddl));
  // The DDL went through the master (this node) into ZooKeeper's catalog, and back.
  CHECK((*m)->applied_version() >= 1);
  CHECK((*m)->node().catalog()->find("mt") != nullptr);
  REQUIRE_OK(conn->put("mt", cellar::put("r").add("f", "q", "v")));
  auto g = conn->get("mt", cellar::get("r"));
  REQUIRE(g.is_ok());
  REQUIRE(g->cells.size() == 1);
  CHECK(g->cells[0].value == "v");
  CHECK(s.create_table(d, schema_origin::oceanbase_ddl).code() == code::already_exists);
  // Not cluster DDL yet.
  CHECK(s.disable_table("mt").code() == code::unsupported);

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
  cluster::member_options o;
  o.zookeeper.connect = zktest::zk_server::shared().connect(zktest::fresh_chroot("member-expiry"));
  o.zookeeper.session_timeout = std::chrono::milliseconds(4000);
  o.node_id = "m1";
  o.data_address = "127.0.0.1:1";
  auto m = cluster::member::join(s, o);
  INFO(zktest::describe(m));
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
