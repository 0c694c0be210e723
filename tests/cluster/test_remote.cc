// cluster/remote.h in one process: a remote partition forwarding through the middleman to a
// node endpoint published on loopback, and the endpoint's refusals.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

#include "../support/eventually.h"
#include "cluster/remote.h"
#include "cluster/replica_router.h"
#include "partition/ask.h"

using namespace cellar;
using namespace cellar::cluster;
using namespace std::chrono_literals;
using testsupport::eventually;

namespace {

struct system_with_middleman {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  system_with_middleman() {
    detail::add_partition_protocol(cfg);
    add_cluster_protocol(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

// Publishes an endpoint for node "n1" and returns a peer directory that knows it.
std::shared_ptr<peer_directory> publish(caf::actor_system& sys, const node_endpoint& ep) {
  auto port = sys.middleman().publish(ep, 0, "127.0.0.1", true);
  REQUIRE(port);
  auto peers = std::make_shared<peer_directory>(sys);
  peers->set_members({node_info{"n1", "127.0.0.1:1", "127.0.0.1:" + std::to_string(*port)}});
  return peers;
}

// A get of "row" sent to `p`; its reply comes through the future.
std::future<result<detail::batch_reply>> ask_batch_async(caf::actor_system& sys, const detail::partition_actor& p) {
  auto got = std::make_shared<std::promise<result<detail::batch_reply>>>();
  detail::batch_request req;
  req.ops.push_back(cellar::get("row"));
  detail::ask<detail::batch_reply>(sys, p, req, [got](result<detail::batch_reply> r) { got->set_value(std::move(r)); });
  return got->get_future();
}

detail::batch_reply ask_batch(caf::actor_system& sys, const detail::partition_actor& p) {
  auto r = ask_batch_async(sys, p).get();
  REQUIRE(r.is_ok());
  REQUIRE(r->results.size() == 1);
  return std::move(r.value());
}

}  // namespace

TEST_CASE("an endpoint answers NOT_OWNER, naming the placement epoch, for a partition its node does not own",
          "[remote]") {
  system_with_middleman s;
  endpoint_context ec;
  ec.self = "n1";
  ec.find = [](const std::string&, std::uint32_t, std::uint64_t, detail::partition_ref& out) {
    out = detail::partition_ref{};  // no local partition: another node owns it
    return true;
  };
  ec.describe_owner = [](const std::string&, std::uint32_t) {
    return std::string("the placement map at epoch 7 gives it to node 'n2'");
  };
  auto ep = spawn_node_endpoint(*s.sys, ec);
  auto peers = publish(*s.sys, ep);
  auto p = spawn_remote_partition(*s.sys, peers, "n1", "t", 3, 5s);
  auto r = ask_batch(*s.sys, p);
  INFO(r.results[0].st.to_string());
  CHECK(r.results[0].st.code() == code::not_owner);
  CHECK(r.results[0].st.message().find("partition 3 of 't'") != std::string::npos);
  CHECK(r.results[0].st.message().find("epoch 7") != std::string::npos);
  CHECK(ec.served->load() == 1);
  caf::anon_send_exit(ep, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

TEST_CASE("an endpoint holds a request until its node catches up, then refuses it UNAVAILABLE", "[remote]") {
  system_with_middleman s;
  endpoint_context ec;
  ec.self = "n1";
  ec.find = [](const std::string&, std::uint32_t, std::uint64_t, detail::partition_ref&) { return false; };
  ec.describe_owner = [](const std::string&, std::uint32_t) { return std::string(); };
  ec.catch_up_wait = 50ms;
  auto ep = spawn_node_endpoint(*s.sys, ec);
  auto peers = publish(*s.sys, ep);
  auto p = spawn_remote_partition(*s.sys, peers, "n1", "t", 0, 5s);
  auto r = ask_batch(*s.sys, p);
  INFO(r.results[0].st.to_string());
  CHECK(r.results[0].st.code() == code::unavailable);
  CHECK(r.results[0].st.message().find("has not applied") != std::string::npos);
  caf::anon_send_exit(ep, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

TEST_CASE("a remote partition answers UNAVAILABLE naming its node: not a member, or gone with requests in flight",
          "[remote]") {
  system_with_middleman s;
  SECTION("not a member") {
    auto peers = std::make_shared<peer_directory>(*s.sys);
    auto p = spawn_remote_partition(*s.sys, peers, "n9", "t", 0, 5s);
    auto r = ask_batch(*s.sys, p);
    CHECK(r.results[0].st.code() == code::unavailable);
    CHECK(r.results[0].st.message().find("node 'n9' is not a live member") != std::string::npos);
    caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
  }
  SECTION("a member whose peer address is not host:port") {
    auto peers = std::make_shared<peer_directory>(*s.sys);
    peers->set_members({node_info{"n1", "127.0.0.1:1", "127.0.0.1"}, node_info{"n2", "127.0.0.1:1", "127.0.0.1:0"}});
    for (const char* node : {"n1", "n2"}) {
      auto p = spawn_remote_partition(*s.sys, peers, node, "t", 0, 5s);
      auto r = ask_batch(*s.sys, p);
      INFO(node);
      CHECK(r.results[0].st.code() == code::unavailable);
      CHECK(r.results[0].st.message().find("has no usable peer address") != std::string::npos);
      caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
    }
  }
  SECTION("the endpoint goes while a request waits there") {
    endpoint_context ec;
    ec.self = "n1";
    ec.find = [](const std::string&, std::uint32_t, std::uint64_t, detail::partition_ref&) { return false; };
    ec.describe_owner = [](const std::string&, std::uint32_t) { return std::string(); };
    ec.catch_up_wait = std::chrono::milliseconds(60000);  // it would wait a minute
    auto ep = spawn_node_endpoint(*s.sys, ec);
    auto peers = publish(*s.sys, ep);
    auto p = spawn_remote_partition(*s.sys, peers, "n1", "t", 0, std::chrono::milliseconds(60000));
    auto fut = ask_batch_async(*s.sys, p);
    while (ec.served->load() == 0) std::this_thread::sleep_for(1ms);
    caf::anon_send_exit(ep, caf::exit_reason::kill);
    // Not a timing: without the down handling the answer would come after a minute.
    REQUIRE(fut.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    auto r = fut.get();
    REQUIRE(r.is_ok());
    INFO(r->results[0].st.to_string());
    CHECK(r->results[0].st.code() == code::unavailable);
    CHECK(r->results[0].st.message().find("node 'n1'") != std::string::npos);
    caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
  }
}

namespace {

// A TCP listener on loopback that never accepts: the kernel completes a connect to it, but
// no middleman handshake ever comes back (a node that died between the connect and its
// reply). close() resets the connections waiting in its queue.
struct silent_listener {
  int fd = -1;
  std::uint16_t port = 0;
  silent_listener() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
  }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  ~silent_listener() { close(); }
};

}  // namespace

TEST_CASE("a peer that never completes the middleman's handshake: requests answer UNAVAILABLE within the timeout",
          "[remote]") {
  system_with_middleman s;
  silent_listener l;
  auto peers = std::make_shared<peer_directory>(*s.sys);
  peers->set_members({node_info{"n1", "127.0.0.1:1", "127.0.0.1:" + std::to_string(l.port)}});
  // One CAF worker would be held by a blocking connect; the forward timeout bounds the wait.
  auto p = spawn_remote_partition(*s.sys, peers, "n1", "t", 0, std::chrono::milliseconds(500));
  auto ask_async = [&] { return ask_batch_async(*s.sys, p); };
  auto unavailable_naming_n1 = [](std::future<result<detail::batch_reply>>& f) {
    // Not a timing: without a bound the answer never comes.
    REQUIRE(f.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    auto r = f.get();
    REQUIRE(r.is_ok());
    REQUIRE(r->results.size() == 1);
    INFO(r->results[0].st.to_string());
    CHECK(r->results[0].st.code() == code::unavailable);
    CHECK(r->results[0].st.message().find("node 'n1'") != std::string::npos);
  };
  // Two requests wait for the same connect; both are answered when it times out.
  auto a = ask_async();
  auto b = ask_async();
  unavailable_naming_n1(a);
  unavailable_naming_n1(b);
  // The blocking lookup (the mover's) gives up after its timeout too.
  auto ep = peers->endpoint("n1", std::chrono::milliseconds(300));
  CHECK(ep.code() == code::unavailable);
  // The listener goes (its queued connections are reset): later requests are answered too.
  l.close();
  auto c = ask_async();
  unavailable_naming_n1(c);
  caf::anon_send_exit(p, caf::exit_reason::user_shutdown);
}

namespace {

// A partition that answers its first batch with `first` and every later one with OK, or,
// when `mute`, takes every batch and answers none; it counts the batches and the stops.
detail::partition_actor::behavior_type electing_partition(detail::partition_actor::pointer self, status first,
                                                          std::shared_ptr<std::atomic<int>> batches,
                                                          std::shared_ptr<std::atomic<int>> stops, bool mute) {
  return {
      [self, first, batches, mute](detail::batch_request& r) -> caf::result<detail::batch_reply> {
        if (mute) {
          ++*batches;
          return self->make_response_promise<detail::batch_reply>();  // dropped: never delivered
        }
        detail::batch_reply out;
        out.results.resize(r.ops.size());
        const status st = batches->fetch_add(1) == 0 ? first : status::ok();
        for (auto& x : out.results) x.st = st;
        return out;
      },
      [](detail::scan_request&) { return detail::scan_reply{}; },
      [](detail::adopt_schema_request&) { return detail::admin_reply{}; },
      [](detail::drop_families_request&) { return detail::admin_reply{}; },
      [](detail::reclaim_request&) { return detail::reclaim_reply{}; },
      [](detail::stats_request&) { return detail::stats_reply{}; },
      [](detail::cut_request&) { return detail::cut_reply{}; },
      [](detail::merge_delta_request&) { return detail::admin_reply{}; },
      [stops](detail::stop_request&) {
        ++*stops;
        return detail::admin_reply{};
      },
      [](detail::move_request&) { return detail::move_reply{}; },
      [](detail::handoff_request&) { return detail::admin_reply{}; },
      [](detail::tick_atom) {},
      [](detail::log_synced_atom) {},
  };
}

}  // namespace

TEST_CASE("a replica router answers UNAVAILABLE for the requests its replica took when the replica stops",
          "[remote][replica]") {
  system_with_middleman s;
  auto batches = std::make_shared<std::atomic<int>>(0);
  auto local = s.sys->spawn(electing_partition, status::ok(), batches, std::make_shared<std::atomic<int>>(0), true);
  replica_router_config cfg;
  cfg.table = "t";
  cfg.self = "n1";
  cfg.replicas = {"n1"};
  cfg.local = local;
  // Far longer than the wait below: the answer must come from the replica's stop.
  cfg.forward_timeout = 120s;
  cfg.deadline = 120s;
  auto router = spawn_replica_router(*s.sys, std::make_shared<peer_directory>(*s.sys), cfg);
  auto reply = ask_batch_async(*s.sys, router);
  REQUIRE(eventually([&] { return batches->load() == 1; }, 5s));
  caf::anon_send_exit(local, caf::exit_reason::user_shutdown);
  REQUIRE(reply.wait_for(10s) == std::future_status::ready);
  auto r = reply.get();
  REQUIRE(r.is_ok());
  REQUIRE(r->results.size() == 1);
  INFO(r->results[0].st.to_string());
  CHECK(r->results[0].st.code() == code::unavailable);
  CHECK(r->results[0].st.message().find("node 'n1'") != std::string::npos);
  caf::anon_send(router, detail::stop_request{});
}

TEST_CASE("a replica router stopped while a request waits for a leader answers it before it stops its replica",
          "[remote][replica]") {
  system_with_middleman s;
  auto batches = std::make_shared<std::atomic<int>>(0);
  auto stops = std::make_shared<std::atomic<int>>(0);
  auto local =
      s.sys->spawn(electing_partition, status{code::not_leader, "an election is under way"}, batches, stops, false);
  replica_router_config cfg;
  cfg.table = "t";
  cfg.self = "n1";
  cfg.replicas = {"n1"};
  cfg.local = local;
  cfg.pause = 300ms;
  auto router = spawn_replica_router(*s.sys, std::make_shared<peer_directory>(*s.sys), cfg);
  auto reply = ask_batch_async(*s.sys, router);
  // The first try was answered NOT_LEADER; the retry waits out its pause when the stop comes
  // (a placement replaced the router).
  REQUIRE(eventually([&] { return batches->load() >= 1; }, 5s));
  caf::anon_send(router, detail::stop_request{});
  REQUIRE(reply.wait_for(10s) == std::future_status::ready);
  auto r = reply.get();
  INFO(r.error().to_string());
  REQUIRE(r.is_ok());
  INFO(r->results[0].st.to_string());
  CHECK(r->results[0].st.is_ok());
  CHECK(batches->load() == 2);
  CHECK(eventually([&] { return stops->load() == 1; }, 5s));
  caf::anon_send_exit(local, caf::exit_reason::user_shutdown);
}

TEST_CASE("a replica router sends a write answered NOT_OWNER (a replica that left its node) on to a replica",
          "[remote][replica]") {
  system_with_middleman s;
  auto batches = std::make_shared<std::atomic<int>>(0);
  auto stops = std::make_shared<std::atomic<int>>(0);
  auto local = s.sys->spawn(electing_partition, status{code::not_owner, "node 'n1' does not own partition 0 of 't'"},
                            batches, stops, false);
  replica_router_config cfg;
  cfg.table = "t";
  cfg.self = "n1";
  cfg.replicas = {"n1"};
  cfg.local = local;
  auto router = spawn_replica_router(*s.sys, std::make_shared<peer_directory>(*s.sys), cfg);
  detail::batch_request req;
  req.ops.push_back(cellar::put("row").add("f", "q", "v"));
  std::promise<result<detail::batch_reply>> got;
  detail::ask<detail::batch_reply>(*s.sys, router, req,
                                   [&got](result<detail::batch_reply> r) { got.set_value(std::move(r)); });
  auto r = got.get_future().get();
  REQUIRE(r.is_ok());
  INFO(r->results[0].st.to_string());
  CHECK(r->results[0].st.is_ok());
  CHECK(batches->load() == 2);
  caf::anon_send(router, detail::stop_request{});
  CHECK(eventually([&] { return stops->load() == 1; }, 5s));
  caf::anon_send_exit(local, caf::exit_reason::user_shutdown);
}

TEST_CASE("a replica router's remote replica refuses a request routed for an earlier incarnation of the table",
          "[remote][replica]") {
  system_with_middleman s;
  auto batches = std::make_shared<std::atomic<int>>(0);
  auto stops = std::make_shared<std::atomic<int>>(0);
  // Node n1 runs partition 0 of incarnation 8 (a split replaced incarnation 7), which covers
  // other rows than partition 0 of incarnation 7 did.
  auto newer = s.sys->spawn(electing_partition, status::ok(), batches, stops, false);
  endpoint_context ec;
  ec.self = "n1";
  ec.find = [newer](const std::string&, std::uint32_t i, std::uint64_t, detail::partition_ref& out) {
    out = detail::partition_ref{};
    out.actor = newer;
    out.id = {8, i};
    out.replica_here = true;
    return true;
  };
  ec.describe_owner = [](const std::string&, std::uint32_t) { return std::string(); };
  auto ep = spawn_node_endpoint(*s.sys, ec);
  auto peers = publish(*s.sys, ep);
  // A router of incarnation 7 on node n2, whose replica set is n1 only.
  replica_router_config cfg;
  cfg.table = "t";
  cfg.uid = 7;
  cfg.self = "n2";
  cfg.replicas = {"n1"};
  cfg.forward_timeout = 5s;
  cfg.deadline = 300ms;
  auto router = spawn_replica_router(*s.sys, peers, cfg);
  auto r = ask_batch(*s.sys, router);
  INFO(r.results[0].st.to_string());
  CHECK(r.results[0].st.code() == code::reshaping);
  CHECK(r.results[0].st.message().find("split or merged") != std::string::npos);
  CHECK(batches->load() == 0);  // never served by the newer incarnation's partition
  caf::anon_send(router, detail::stop_request{});
  caf::anon_send_exit(ep, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(newer, caf::exit_reason::user_shutdown);
}
