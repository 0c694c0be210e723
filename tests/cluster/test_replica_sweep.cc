// stale_replica (cluster/replica_host.h): which Raft state a node may delete. It must keep
// anything a placement names for the node, a move is adding, or the node cannot judge yet.
// replica_host::sweep stops a stale replica still running; sweep_view_current
// (cluster/replica_sweep.h) lets a sweep run only on what ZooKeeper holds after a sync.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "../support/eventually.h"
#include "../support/temp_dir.h"
#include "cellar/store.h"
#include "cluster/layout.h"
#include "cluster/replica_host.h"
#include "cluster/replica_sweep.h"
#include "cluster_test.h"
#include "store/access.h"
#include "store/catalog_service.h"

using namespace cellar;
using namespace cellar::cluster;

namespace {

// Table 'rt' (uid 7) with two partitions: 0 on n1, n2, n3; 1 on n2, n3, n4. The catalog has
// given out uids up to 9.
struct sweep_fixture {
  cluster_catalog cat;
  std::vector<partition_owner> owners;
  std::uint64_t applied_uid = 7;
  std::map<std::string, std::string> intents;  // "table.index" -> "FROM TO"
  bool intents_readable = true;

  sweep_fixture() {
    detail::table_schema t;
    t.name = "rt";
    t.uid = 7;
    t.partitioned = true;
    cat.tables["rt"] = t;
    cat.next_uid = 10;
    partition_owner a;
    a.node = "n1";
    a.replicas = {"n1", "n2", "n3"};
    partition_owner b;
    b.node = "n2";
    b.replicas = {"n2", "n3", "n4"};
    owners = {a, b};
  }

  replica_view view(const std::string& self) {
    replica_view v;
    v.self = self;
    v.catalog = &cat;
    v.applied = [this](const std::string& table, std::uint64_t uid) -> const std::vector<partition_owner>* {
      return table == "rt" && uid == applied_uid ? &owners : nullptr;
    };
    v.intent = [this](const std::string& table, std::uint32_t index) -> result<std::string> {
      if (!intents_readable) return status{code::unavailable, "no ZooKeeper"};
      auto it = intents.find(table + "." + std::to_string(index));
      if (it == intents.end()) return status{code::not_found, "no move"};
      return it->second;
    };
    return v;
  }
};

}  // namespace

TEST_CASE("stale_replica: a replica the owners name for this node is kept, one they do not is stale",
          "[cluster][replica_sweep]") {
  sweep_fixture f;
  CHECK(stale_replica(f.view("n1"), 7, 0).empty());
  CHECK(stale_replica(f.view("n4"), 7, 1).empty());
  const auto why = stale_replica(f.view("n4"), 7, 0);
  CHECK_THAT(why, Catch::Contains("does not name node 'n4'") && Catch::Contains("partition 0 of 'rt'"));
  CHECK(!stale_replica(f.view("n1"), 7, 1).empty());
  // A partition beyond the owners applied: not judged.
  CHECK(stale_replica(f.view("n1"), 7, 2).empty());
}

TEST_CASE("stale_replica: a uid the catalog no longer has is stale, one newer than the catalog seen is kept",
          "[cluster][replica_sweep]") {
  sweep_fixture f;
  CHECK_THAT(stale_replica(f.view("n1"), 5, 0), Catch::Contains("uid 5 is no longer in the catalog"));
  CHECK(stale_replica(f.view("n1"), 10, 0).empty());
  CHECK(stale_replica(f.view("n1"), 12, 3).empty());
}

TEST_CASE("stale_replica: the owners not applied to that incarnation yet keep everything", "[cluster][replica_sweep]") {
  sweep_fixture f;
  f.applied_uid = 6;  // the node still runs the table's previous incarnation
  CHECK(stale_replica(f.view("n4"), 7, 0).empty());
  replica_view v = f.view("n4");
  v.applied = nullptr;
  CHECK(stale_replica(v, 7, 0).empty());
  v.catalog = nullptr;
  CHECK(stale_replica(v, 5, 0).empty());
}

TEST_CASE("stale_replica: a move adding a replica on this node keeps its state; another node's move does not",
          "[cluster][replica_sweep]") {
  sweep_fixture f;
  f.intents["rt.0"] = "n3 n4";
  CHECK(stale_replica(f.view("n4"), 7, 0).empty());
  f.intents["rt.0"] = "n3 n14";  // a node whose id ends like this one's
  CHECK(!stale_replica(f.view("n4"), 7, 0).empty());
  f.intents["rt.0"] = "n4 n5";  // a move away from this node
  CHECK(!stale_replica(f.view("n4"), 7, 0).empty());
  f.intents_readable = false;  // ZooKeeper cannot say: keep
  CHECK(stale_replica(f.view("n4"), 7, 0).empty());
}

namespace {

bool raft_log_exists(const std::string& dir, std::uint64_t uid, std::uint32_t index) {
  return std::filesystem::exists(dir + "/raft/" + std::to_string(uid) + "-" + std::to_string(index) + ".raftlog");
}

}  // namespace

TEST_CASE(
    "sweep: a stale replica a router still holds is stopped and its Raft files go; one join() started and one "
    "not stale stay",
    "[cluster][replica_sweep]") {
  testsupport::temp_dir dir("cellar-sweep");
  store_options so;
  so.directory = dir.path;
  so.durability = durability::log;
  auto opened = store::open(so);
  REQUIRE_OK(opened);
  auto& s = **opened;
  table_descriptor d;
  d.name = "rt";
  d.families.push_back(family_descriptor{"f"});
  d.partitioning = partition_spec::hash(3);
  REQUIRE_OK(s.create_table(d, schema_origin::oceanbase_ddl));
  auto& seat = detail::store_access::seat(s);
  const auto schema = seat.catalog().lookup("rt")->schema;
  const auto uid = schema->uid;
  {
    replica_host_options ro;
    ro.self = "n1";
    replica_host host(seat, std::make_shared<peer_directory>(seat.system()), ro);
    partition_owner owner;
    owner.node = "n1";
    owner.replicas = {"n1", "n2", "n3"};
    // Partitions 0 and 1 as a placement gave them, each held by its router; 2 as a move adds it.
    const auto router0 = host.place(schema, 0, owner);
    const auto router1 = host.place(schema, 1, owner);
    REQUIRE_OK(host.join(schema, 2, 4));
    for (std::uint32_t i = 0; i < 3; ++i)
      REQUIRE(testsupport::eventually([&] { return raft_log_exists(dir.path, uid, i); }));
    const auto group = replica_host::group_name(*schema);
    const auto stale = host.replica(group, 0);
    REQUIRE(stale);
    caf::scoped_actor self{seat.system()};
    self->monitor(stale);

    // Partition 0 and 2 stale, 1 not: 0 stops although its router still holds it.
    host.sweep([&](std::uint64_t u, std::uint32_t index) -> std::string {
      return u == uid && index != 1 ? "the placement does not name node 'n1'" : "";
    });
    bool down = false;
    self->receive([&](caf::down_msg&) { down = true; }, caf::after(std::chrono::seconds(20)) >> [] {});
    CHECK(down);
    CHECK(testsupport::eventually([&] { return !raft_log_exists(dir.path, uid, 0); }));
    CHECK(testsupport::eventually([&] { return !host.replica(group, 0); }));
    CHECK(host.replica(group, 1));
    CHECK(host.replica(group, 2));
    CHECK(raft_log_exists(dir.path, uid, 1));
    CHECK(raft_log_exists(dir.path, uid, 2));
  }
  REQUIRE_OK(s.close());
}

TEST_CASE("sweep_view_current: after a sync, a sweep runs only on the catalog and placement ZooKeeper holds",
          "[cluster][replica_sweep][sync]") {
  const auto chroot = zktest::fresh_chroot("sweep-view");
  auto zk = zktest::connect(chroot);
  auto other = zktest::connect(chroot);
  cluster_catalog applied;  // no DDL yet: version 0, as ZooKeeper has none
  placement_map m;
  m.epoch = 3;
  REQUIRE_OK(other->create(layout::placement, encode_placement(m)));
  REQUIRE_OK(sweep_view_current(*zk, applied, 3));
  // Another session writes a newer map: this one sees it, not the map it applied.
  m.epoch = 4;
  REQUIRE_OK(other->set(layout::placement, encode_placement(m)));
  auto older = sweep_view_current(*zk, applied, 3);
  REQUIRE_CODE(older, code::conflict);
  CHECK_THAT(older.message(), Catch::Contains("epoch 4") && Catch::Contains("applied 3"));
  REQUIRE_OK(sweep_view_current(*zk, applied, 4));
  applied.version = 2;  // a catalog ZooKeeper does not hold
  REQUIRE_CODE(sweep_view_current(*zk, applied, 4), code::conflict);
}
