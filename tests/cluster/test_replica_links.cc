// A partition's Raft group across three nodes of one process, each node an actor system of
// its own with CAF's middleman on loopback: the replicas' messages go through the node
// endpoints and their connections (cluster/replica_links.h, cluster/remote.h). A leader is
// elected, writes are acknowledged after commit, a node that goes away entirely is
// replaced as leader with no acknowledged write lost, and it catches up when it comes back
// on a new port. A node's link to another is made again after the other died, however long
// the link had lasted, and after the other left the membership and came back.
#include <catch2/catch.hpp>

#include <absl/synchronization/mutex.h>

#include <chrono>
#include <memory>
#include <thread>

#include "../support/eventually.h"
#include "cluster/remote.h"
#include "cluster/replica_links.h"
#include "replica/replicated_partition.h"

using namespace cellar;
using namespace cellar::cluster;
using namespace cellar::replica;
using namespace std::chrono_literals;

namespace {

constexpr auto wait_limit = std::chrono::seconds(60);

// The replica an endpoint hands messages to, set once the replica is spawned.
struct replica_slot {
  absl::Mutex mu;
  caf::actor a ABSL_GUARDED_BY(mu);
  void set(caf::actor x) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock l(&mu);
    a = std::move(x);
  }
  caf::actor get() ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock l(&mu);
    return a;
  }
};

struct node {
  std::string id;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<peer_directory> peers;
  std::unique_ptr<replica_links> links;
  std::unique_ptr<replica::transport> net;
  std::shared_ptr<replica_slot> slot = std::make_shared<replica_slot>();
  node_endpoint ep;
  replicated_partition_actor replica;
  std::string peer_address;

  explicit node(std::string name, std::chrono::milliseconds connect_timeout = 2s) : id(std::move(name)) {
    detail::add_partition_protocol(cfg);
    add_cluster_protocol(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    peers = std::make_shared<peer_directory>(*sys);
    links = std::make_unique<replica_links>(*sys, peers, connect_timeout);
    endpoint_context ec;
    ec.self = id;
    ec.find = [](const std::string&, std::uint32_t, std::uint64_t, detail::partition_ref&) { return false; };
    ec.describe_owner = [](const std::string&, std::uint32_t) { return std::string(); };
    ec.replica = [slot = slot](const std::string& table, std::uint32_t index) {
      return table == "t" && index == 0 ? slot->get() : caf::actor{};
    };
    ep = spawn_node_endpoint(*sys, ec);
    auto port = sys->middleman().publish(ep, 0, "127.0.0.1", true);
    REQUIRE(port);
    peer_address = "127.0.0.1:" + std::to_string(*port);
  }

  void stop() {
    caf::scoped_actor self{*sys};
    for (caf::actor a : {caf::actor_cast<caf::actor>(replica), caf::actor_cast<caf::actor>(ep)}) {
      if (!a) continue;
      self->monitor(a);
      self->send_exit(a, caf::exit_reason::kill);
      self->receive([](const caf::down_msg&) {});
    }
  }
  ~node() {
    stop();
    links.reset();
    peers.reset();
  }
};

struct three_nodes {
  std::shared_ptr<detail::table_schema> schema = std::make_shared<detail::table_schema>();
  detail::memory_pool pool;
  std::vector<std::unique_ptr<memory_storage>> storages;
  std::vector<std::unique_ptr<node>> nodes;  // index id - 1
  std::vector<member> members;

  three_nodes() {
    schema->name = "t";
    schema->uid = 7;
    schema->partitioned = true;
    schema->version = 1;
    schema->families = {{family_descriptor{"f", 0, 0}, 1}};
    for (int i = 1; i <= 3; ++i) {
      storages.push_back(std::make_unique<memory_storage>());
      nodes.push_back(std::make_unique<node>("n" + std::to_string(i)));
      members.push_back({static_cast<std::uint64_t>(i), "n" + std::to_string(i)});
    }
    share_addresses();
    for (std::uint64_t id = 1; id <= 3; ++id) start_replica(id);
  }

  // Every node's directory learns every node's peer address (ZooKeeper's job in a cluster).
  void share_addresses() {
    std::vector<node_info> infos;
    for (auto& n : nodes)
      if (n) infos.push_back({n->id, "127.0.0.1:1", n->peer_address});
    for (auto& n : nodes)
      if (n) n->peers->set_members(infos);
  }

  void start_replica(std::uint64_t id) {
    auto& n = *nodes[id - 1];
    detail::partition_config pc;
    pc.schema = schema;
    pc.memory = &pool;
    pc.clock = [] { return std::int64_t{1'000'000}; };
    replication_config rc;
    rc.group.id = id;
    rc.group.address = n.id;
    rc.group.election_timeout_ms = 400;
    rc.group.heartbeat_timeout_ms = 40;
    rc.members = members;
    rc.storage = storages[id - 1].get();
    n.net = n.links->transport_for("t", 0);
    rc.net = n.net.get();
    n.replica = spawn_replicated_partition(*n.sys, pc, rc);
    n.slot->set(caf::actor_cast<caf::actor>(n.replica));
  }

  detail::batch_reply ask(std::uint64_t id, std::vector<batch_op> ops) {
    auto& n = *nodes[id - 1];
    caf::scoped_actor self{*n.sys};
    detail::batch_reply out;
    self->request(n.replica, wait_limit, detail::batch_request{schema->version, std::move(ops)})
        .receive([&](detail::batch_reply& r) { out = std::move(r); }, [&](caf::error& e) { FAIL(n.sys->render(e)); });
    return out;
  }

  std::uint64_t cells(std::uint64_t id) {
    auto& n = *nodes[id - 1];
    caf::scoped_actor self{*n.sys};
    std::uint64_t out = 0;
    self->request(n.replica, wait_limit, detail::stats_request{})
        .receive([&](detail::stats_reply& r) { out = r.stats.cells; }, [&](caf::error& e) { FAIL(n.sys->render(e)); });
    return out;
  }

  // The node whose replica answers a read (the leader), polled within a bound.
  std::uint64_t leader() {
    const auto deadline = std::chrono::steady_clock::now() + wait_limit;
    while (std::chrono::steady_clock::now() < deadline) {
      for (std::uint64_t id = 1; id <= 3; ++id) {
        if (!nodes[id - 1]) continue;
        if (ask(id, {get("probe")}).results.at(0).st.is_ok()) return id;
      }
      std::this_thread::sleep_for(20ms);
    }
    FAIL("no leader elected");
    return 0;
  }
};

// The directory of `from` knows `to` at its current peer address (ZooKeeper's job in a
// cluster), or, with `to` null, that the node left the membership.
void tell_members(node& from, const std::string& to_id, const node* to) {
  std::vector<node_info> infos{{from.id, "127.0.0.1:1", from.peer_address}};
  if (to) infos.push_back({to_id, "127.0.0.1:1", to->peer_address});
  from.peers->set_members(infos);
}

// A Raft message for partition ("t", 0), which the receiving endpoint drops (no replica).
node_replica probe() { return node_replica{"t", 0, "x"}; }

std::string value_of(const op_result& r) { return r.row.cells.empty() ? "" : r.row.cells[0].value; }

}  // namespace

TEST_CASE("a partition's replicas on three nodes: messages over the node links, failover, catch-up", "[replica]") {
  three_nodes c;
  auto l = c.leader();
  for (int i = 0; i < 10; ++i) {
    auto r = c.ask(l, {put("r" + std::to_string(i)).add("f", "q", "v" + std::to_string(i))});
    REQUIRE(r.results.at(0).st.is_ok());
  }
  std::uint64_t f = l == 1 ? 2 : 1;
  auto refused = c.ask(f, {put("x").add("f", "q", "no")});
  CHECK(refused.results.at(0).st.code() == code::not_leader);
  CHECK(refused.results[0].st.message().find(" at n" + std::to_string(l)) != std::string::npos);

  // The leader's node goes away entirely: actors, endpoint, connections.
  c.nodes[l - 1].reset();
  auto l2 = c.leader();
  CHECK(l2 != l);
  for (int i = 0; i < 10; ++i) {
    auto r = c.ask(l2, {get("r" + std::to_string(i))});
    REQUIRE(r.results.at(0).st.is_ok());
    CHECK(value_of(r.results[0]) == "v" + std::to_string(i));
  }
  for (int i = 10; i < 15; ++i) {
    CHECK(c.ask(l2, {put("r" + std::to_string(i)).add("f", "q", "v" + std::to_string(i))}).results.at(0).st.is_ok());
  }

  // It comes back on a new port, from its replica's storage, and catches up.
  c.nodes[l - 1] = std::make_unique<node>("n" + std::to_string(l));
  c.share_addresses();
  c.start_replica(l);
  const auto want = c.cells(l2);
  CHECK(want == 15);
  CHECK(testsupport::eventually([&] { return c.cells(l) == want; }, wait_limit));
}

TEST_CASE("a node link watches its connection for longer than the connect timeout: a peer that dies is reached again",
          "[replica]") {
  node a("a", 100ms);
  auto b = std::make_unique<node>("b");
  tell_members(a, "b", b.get());
  REQUIRE(testsupport::eventually([&] { return a.links->send("b", probe()); }));
  // Many times the connect's timeout: the link still watches the connection it made.
  std::this_thread::sleep_for(1s);

  // b goes away entirely: the broken connection is forgotten, not used on.
  b.reset();
  CHECK(testsupport::eventually(
      [&] {
        auto w = a.peers->find("b");
        return w && !w->ep;
      },
      10s));
  // It comes back on a new port: its messages go there.
  tell_members(a, "b", nullptr);
  b = std::make_unique<node>("b");
  tell_members(a, "b", b.get());
  CHECK(testsupport::eventually([&] { return a.links->send("b", probe()); }, 10s));
}

TEST_CASE("a node link the directory let go of (the peer left the membership and is back) is made again", "[replica]") {
  node a("a"), b("b");
  tell_members(a, "b", &b);
  REQUIRE(testsupport::eventually([&] { return a.links->send("b", probe()); }));
  // Its ZooKeeper node goes and comes back at the same address; its endpoint never stopped.
  tell_members(a, "b", nullptr);
  CHECK_FALSE(a.links->send("b", probe()));
  tell_members(a, "b", &b);
  CHECK(testsupport::eventually([&] { return a.links->send("b", probe()); }, 10s));
}
