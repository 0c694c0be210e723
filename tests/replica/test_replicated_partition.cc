// Three replicas of one partition in one process (replica/replicated_partition.h): writes
// are answered by the leader after commit, followers refuse with NOT_LEADER naming the
// leader, the leader's reads see every acknowledged write, a killed leader's successor has
// every acknowledged write (timestamps and counters included), a restarted replica catches
// up, a replica joins and another leaves by membership change, a load larger than one log
// entry is written in one step on every replica (none of it visible before, nor after its
// leader dies midway; a replica restored from a snapshot taken midway gets all of it), and a
// split's freeze through the log holds writes whoever leads.
#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

#include "../support/eventually.h"
#include "replica/replicated_partition.h"

using namespace cellar;
using namespace cellar::detail;
using namespace cellar::replica;

namespace {

constexpr auto wait_limit = std::chrono::seconds(60);

struct group_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  memory_pool pool;
  std::shared_ptr<table_schema> schema = std::make_shared<table_schema>();
  local_transport net;
  std::vector<std::unique_ptr<memory_storage>> storages;
  std::vector<replicated_partition_actor> actors;
  std::vector<member> members;
  std::int64_t clock_ms = 1'000'000;                                 // the same clock for every replica's reads
  unsigned snapshot_threshold = group_options{}.snapshot_threshold;  // for replicas started from now on
  unsigned snapshot_trailing = group_options{}.snapshot_trailing;
  std::size_t load_entry_bytes = replication_config{}.load_entry_bytes;  // likewise
  std::function<bool(std::size_t)> load_may_continue;

  group_fixture() {
    schema->name = "t";
    schema->uid = 7;
    schema->partitioned = true;
    schema->version = 1;
    schema->families = {{family_descriptor{"f", 0, 0}, 1}};
    for (std::uint64_t id = 1; id <= 3; ++id) {
      members.push_back({id, "p0-replica-" + std::to_string(id)});
      storages.push_back(std::make_unique<memory_storage>());
    }
    actors.resize(3);
    for (std::uint64_t id = 1; id <= 3; ++id) start(id);
  }
  ~group_fixture() {
    for (std::uint64_t id = 1; id <= actors.size(); ++id) kill(id);
  }

  // A replica for a new member: started empty, without a configuration of its own.
  std::uint64_t spawn_joiner() {
    const std::uint64_t id = actors.size() + 1;
    members.push_back({id, "p0-replica-" + std::to_string(id)});
    storages.push_back(std::make_unique<memory_storage>());
    actors.emplace_back();
    start(id, true);
    return id;
  }

  // A membership change asked of replica `id`: its answer.
  status change(std::uint64_t id, caf::message msg) {
    caf::scoped_actor self{sys};
    status out{code::internal, "no answer"};
    self->request(caf::actor_cast<caf::actor>(actors[id - 1]), wait_limit, std::move(msg))
        .receive([&](admin_reply& r) { out = r.st; }, [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  }

  void start(std::uint64_t id, bool joining = false) {
    partition_config pc;
    pc.schema = schema;
    pc.memory = &pool;
    pc.clock = [this] { return clock_ms; };
    replication_config rc;
    rc.group.id = id;
    rc.group.address = members[id - 1].address;
    rc.group.election_timeout_ms = 400;
    rc.group.heartbeat_timeout_ms = 40;
    rc.group.snapshot_threshold = snapshot_threshold;
    rc.group.snapshot_trailing = snapshot_trailing;
    rc.load_entry_bytes = load_entry_bytes;
    rc.load_may_continue = load_may_continue;
    if (!joining) rc.members = std::vector<member>(members.begin(), members.begin() + 3);
    rc.storage = storages[id - 1].get();
    rc.net = &net;
    actors[id - 1] = spawn_replicated_partition(sys, pc, rc);
    net.add(id, caf::actor_cast<caf::actor>(actors[id - 1]));
  }

  void kill(std::uint64_t id) {
    auto& a = actors[id - 1];
    if (!a) return;
    net.remove(id);
    caf::scoped_actor self{sys};
    self->monitor(a);
    self->send_exit(a, caf::exit_reason::kill);
    self->receive([](const caf::down_msg&) {});
    a = nullptr;
  }

  batch_reply ask(std::uint64_t id, std::vector<batch_op> ops) {
    caf::scoped_actor self{sys};
    batch_reply out;
    self->request(actors[id - 1], wait_limit, batch_request{schema->version, std::move(ops)})
        .receive([&](batch_reply& r) { out = std::move(r); }, [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  }

  group_status status_of(std::uint64_t id) {
    caf::scoped_actor self{sys};
    group_status out;
    self->request(actors[id - 1], wait_limit, replica_status_atom::value)
        .receive([&](group_status& s) { out = std::move(s); }, [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  }

  memtable_stats stats(std::uint64_t id) {
    caf::scoped_actor self{sys};
    memtable_stats out;
    self->request(actors[id - 1], wait_limit, stats_request{})
        .receive([&](stats_reply& r) { out = r.stats; }, [&](caf::error& e) { FAIL(sys.render(e)); });
    return out;
  }

  // The replica, other than `not_id`, that answers a read: the leader. Polls until one
  // does (an election takes up to two election timeouts), within a bound.
  std::uint64_t leader(std::uint64_t not_id = 0) {
    const auto deadline = std::chrono::steady_clock::now() + wait_limit;
    while (std::chrono::steady_clock::now() < deadline) {
      for (std::uint64_t id = 1; id <= actors.size(); ++id) {
        if (id == not_id || !actors[id - 1]) continue;
        auto r = ask(id, {get("probe")});
        if (r.results.at(0).st.is_ok()) return id;
        REQUIRE((r.results[0].st.code() == code::not_leader || r.results[0].st.code() == code::unavailable));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("no leader elected");
    return 0;
  }
};

std::string value_of(const op_result& r) { return r.row.cells.empty() ? "" : r.row.cells[0].value; }

}  // namespace

TEST_CASE("a replicated partition: leader writes after commit, followers refuse, failover keeps every write",
          "[replica]") {
  group_fixture g;
  auto l = g.leader();

  for (int i = 0; i < 20; ++i) {
    auto r = g.ask(l, {put("r" + std::to_string(i)).add("f", "q", "v" + std::to_string(i))});
    REQUIRE(r.results.size() == 1);
    CHECK(r.results[0].st.is_ok());
  }
  auto inc = g.ask(l, {increment("n").add("f", "c", 5)});
  REQUIRE(inc.results[0].st.is_ok());
  auto first = g.ask(l, {get("r0")});
  REQUIRE(first.results[0].row.cells.size() == 1);
  const auto ts = first.results[0].row.cells[0].timestamp;
  CHECK(ts == g.clock_ms);  // stamped by the leader when it proposed the write

  // Followers refuse writes and reads, naming the leader.
  std::uint64_t f = l == 1 ? 2 : 1;
  auto refused = g.ask(f, {put("x").add("f", "q", "no")});
  CHECK(refused.results[0].st.code() == code::not_leader);
  CHECK(refused.results[0].st.message().find("leader " + std::to_string(l)) != std::string::npos);
  CHECK(refused.results[0].st.message().find("partition 0 of 't'") != std::string::npos);
  CHECK(g.ask(f, {get("r0")}).results[0].st.code() == code::not_leader);

  // The leader dies. The writes were acknowledged after commit, so its successor has them
  // all, with the timestamps the old leader gave them, and the counter goes on from 5.
  g.clock_ms += 1000;  // later writes get later timestamps
  g.kill(l);
  auto l2 = g.leader(l);
  CHECK(l2 != l);
  for (int i = 0; i < 20; ++i) {
    auto r = g.ask(l2, {get("r" + std::to_string(i))});
    REQUIRE(r.results[0].st.is_ok());
    CHECK(value_of(r.results[0]) == "v" + std::to_string(i));
  }
  auto again = g.ask(l2, {get("r0")});
  CHECK(again.results[0].row.cells.at(0).timestamp == ts);
  auto inc2 = g.ask(l2, {increment("n").add("f", "c", 2)});
  REQUIRE(inc2.results[0].st.is_ok());
  auto n = g.ask(l2, {get("n")});
  REQUIRE(n.results[0].row.cells.size() == 1);
  std::string seven(8, '\0');
  seven[7] = 7;
  CHECK(n.results[0].row.cells[0].value == seven);
  for (int i = 20; i < 30; ++i) {
    CHECK(g.ask(l2, {put("r" + std::to_string(i)).add("f", "q", "v" + std::to_string(i))}).results[0].st.is_ok());
  }

  // The old leader comes back and catches up to the same cells.
  g.start(l);
  auto want = g.stats(l2).cells;
  CHECK(testsupport::eventually([&] { return g.stats(l).cells == want; }, wait_limit));
}

TEST_CASE("a replicated partition with 2 of 3 replicas dead refuses writes at once, and works when a majority returns",
          "[replica]") {
  group_fixture g;
  auto l = g.leader();
  REQUIRE(g.ask(l, {put("a").add("f", "q", "1")}).results.at(0).st.is_ok());
  std::uint64_t others[2];
  int k = 0;
  for (std::uint64_t id = 1; id <= 3; ++id)
    if (id != l) others[k++] = id;
  g.kill(others[0]);
  g.kill(others[1]);
  // The leader steps down once it has not heard from a majority for an election timeout;
  // until then a write waits for its commit, then fails (leadership lost). Either way
  // every write is answered, none hangs, and it names the partition.
  for (int i = 0; i < 5; ++i) {
    auto r = g.ask(l, {put("b" + std::to_string(i)).add("f", "q", "x")});
    const auto c = r.results.at(0).st.code();
    INFO(r.results[0].st.to_string());
    CHECK((c == code::not_leader || c == code::unavailable));
    CHECK(r.results[0].st.message().find("partition 0 of 't'") != std::string::npos);
  }
  // A majority again: a leader is elected and the first write is there.
  g.start(others[0]);
  auto l2 = g.leader();
  auto a = g.ask(l2, {get("a")});
  REQUIRE(a.results.at(0).st.is_ok());
  CHECK(value_of(a.results[0]) == "1");
  CHECK(g.ask(l2, {put("c").add("f", "q", "2")}).results.at(0).st.is_ok());
}

TEST_CASE("a replica reports its role, term, log positions and, on the leader, each follower's progress", "[replica]") {
  group_fixture g;
  auto l = g.leader();
  for (int i = 0; i < 10; ++i)
    REQUIRE(g.ask(l, {put("r" + std::to_string(i)).add("f", "q", "v")}).results.at(0).st.is_ok());

  auto lead = g.status_of(l);
  CHECK(lead.role == "leader");
  CHECK(lead.term >= 1);
  CHECK(lead.leader.id == l);
  CHECK(lead.last_index >= 10);  // ten writes (plus the configuration and barrier entries)
  CHECK(lead.commit_index == lead.last_index);
  CHECK(lead.last_applied == lead.commit_index);
  REQUIRE(lead.peers.size() == 2);
  for (const auto& p : lead.peers) {
    CHECK(p.who.id != l);
    CHECK(p.who.address == g.members[p.who.id - 1].address);
  }
  // Every follower catches up: the leader sees it match its whole log, and the follower
  // applies what the leader committed.
  CHECK(testsupport::eventually(
      [&] {
        auto s = g.status_of(l);
        return s.peers.size() == 2 && s.peers[0].match_index == s.last_index && s.peers[1].match_index == s.last_index;
      },
      wait_limit));
  const auto f = l == 1 ? 2 : 1;
  CHECK(testsupport::eventually([&] { return g.status_of(f).last_applied == lead.commit_index; }, wait_limit));
  auto follower = g.status_of(f);
  CHECK(follower.role == "follower");
  CHECK(follower.term == lead.term);
  CHECK(follower.leader.id == l);
  CHECK(follower.peers.empty());

  // A follower that is down falls behind in the leader's report by the writes it missed.
  const std::uint64_t down = l == 3 ? 2 : 3;
  g.kill(down);
  const auto before = g.status_of(l).last_index;
  for (int i = 0; i < 5; ++i)
    REQUIRE(g.ask(l, {put("s" + std::to_string(i)).add("f", "q", "v")}).results.at(0).st.is_ok());
  auto after = g.status_of(l);
  CHECK(after.last_index >= before + 5);
  for (const auto& p : after.peers)
    if (p.who.id == down) CHECK(p.match_index <= before);
}

TEST_CASE(
    "a replicated partition's membership: a joiner starts empty, is added through the leader and gets every "
    "cell; the leader removed hands over first",
    "[replica]") {
  group_fixture g;
  auto l = g.leader();
  for (int i = 0; i < 30; ++i)
    REQUIRE(g.ask(l, {put("r" + std::to_string(i)).add("f", "q", "v" + std::to_string(i))}).results.at(0).st.is_ok());

  // The joiner makes no configuration of its own: an empty log, no leader, until added.
  const auto j = g.spawn_joiner();
  auto alone = g.status_of(j);
  CHECK(alone.last_index == 0);
  CHECK(alone.leader.id == 0);
  const auto address = g.members[j - 1].address;
  // A follower refuses the change, naming the leader; the leader adds it.
  const std::uint64_t f = l == 1 ? 2 : 1;
  auto refused = g.change(f, caf::make_message(replica_add_atom::value, j, address));
  CHECK(refused.code() == code::not_leader);
  CHECK(refused.message().find("partition 0 of 't'") != std::string::npos);
  auto added = g.change(l, caf::make_message(replica_add_atom::value, j, address));
  INFO(added.to_string());
  REQUIRE(added.is_ok());
  auto lead = g.status_of(l);
  bool voter = false;
  for (const auto& p : lead.peers)
    if (p.who.id == j) voter = p.voter;
  CHECK(voter);
  CHECK(testsupport::eventually([&] { return g.stats(j).cells == g.stats(l).cells; }, wait_limit));

  // The leader is removed: it hands leadership over and answers NOT_LEADER naming the new
  // leader, which removes it.
  auto handed = g.change(l, caf::make_message(replica_remove_atom::value, l));
  REQUIRE(handed.code() == code::not_leader);
  const auto l2 = g.leader(l);
  CHECK(l2 != l);
  auto removed = g.change(l2, caf::make_message(replica_remove_atom::value, l));
  INFO(removed.to_string());
  REQUIRE(removed.is_ok());
  g.kill(l);

  // Another original replica dies: the joiner and the last original are the majority.
  const std::uint64_t other = [&] {
    for (std::uint64_t id = 1; id <= 3; ++id)
      if (id != l && id != l2) return id;
    return std::uint64_t{0};
  }();
  g.kill(other);
  const auto l3 = g.leader();
  REQUIRE(g.ask(l3, {put("late").add("f", "q", "x")}).results.at(0).st.is_ok());
  for (int i = 0; i < 30; ++i) {
    auto r = g.ask(l3, {get("r" + std::to_string(i))});
    REQUIRE(r.results.at(0).st.is_ok());
    CHECK(value_of(r.results[0]) == "v" + std::to_string(i));
  }
}

namespace {

// Version 2 of the fixture's schema: family 'g' added.
table_schema with_family_g(const group_fixture& g) {
  table_schema v2 = *g.schema;
  v2.version = 2;
  v2.families.push_back({family_descriptor{"g", 0, 0}, 2});
  return v2;
}

// Replica `id`'s node tells it of schema `s`.
void adopt(group_fixture& g, std::uint64_t id, const table_schema& s) {
  caf::scoped_actor self{g.sys};
  self->request(g.actors[id - 1], wait_limit, adopt_schema_request{s})
      .receive([](admin_reply&) {}, [&](caf::error& e) { FAIL(g.sys.render(e)); });
}

}  // namespace

TEST_CASE("a schema change reaches every replica through the log, also one never told of it directly", "[replica]") {
  group_fixture g;
  const auto l = g.leader();
  REQUIRE(g.ask(l, {put("before").add("f", "q", "1")}).results.at(0).st.is_ok());

  // Version 2 adds family 'g'; only the leader's node tells its replica (the others' nodes
  // have not caught up with the catalog yet).
  adopt(g, l, with_family_g(g));
  const auto ask_v2 = [&](std::uint64_t id, std::vector<batch_op> ops) {
    caf::scoped_actor self{g.sys};
    batch_reply out;
    self->request(g.actors[id - 1], wait_limit, batch_request{2, std::move(ops)})
        .receive([&](batch_reply& r) { out = std::move(r); }, [&](caf::error& e) { FAIL(g.sys.render(e)); });
    return out;
  };
  // The leader takes version-2 writes once the change is committed.
  CHECK(testsupport::eventually([&] { return ask_v2(l, {put("r0").add("g", "q", "g0")}).results.at(0).st.is_ok(); },
                                wait_limit));
  for (int i = 1; i < 10; ++i)
    REQUIRE(ask_v2(l, {put("r" + std::to_string(i)).add("g", "q", "g" + std::to_string(i))}).results.at(0).st.is_ok());

  // Every replica applied those writes with family 'g': after the leader dies, its
  // successor, never told of version 2 directly, serves them.
  const auto want = g.stats(l).cells;
  for (std::uint64_t id = 1; id <= 3; ++id)
    CHECK(testsupport::eventually([&] { return g.stats(id).cells == want; }, wait_limit));
  g.kill(l);
  const auto l2 = g.leader(l);
  for (int i = 0; i < 10; ++i) {
    auto r = ask_v2(l2, {get("r" + std::to_string(i))});
    REQUIRE(r.results.at(0).st.is_ok());
    CHECK(value_of(r.results[0]) == "g" + std::to_string(i));
  }
  CHECK(ask_v2(l2, {put("after").add("g", "q", "x")}).results.at(0).st.is_ok());
}

TEST_CASE("a write routed with a schema version the leader has not applied yet waits for it, then runs", "[replica]") {
  group_fixture g;
  const auto l = g.leader();
  REQUIRE(g.ask(l, {put("before").add("f", "q", "1")}).results.at(0).st.is_ok());
  // Its node routed it with version 2 before telling the replica (the adopt comes after).
  auto early = std::async(std::launch::async, [&] {
    caf::scoped_actor self{g.sys};
    batch_reply out;
    self->request(g.actors[l - 1], wait_limit, batch_request{2, {put("early").add("g", "q", "v2")}})
        .receive([&](batch_reply& r) { out = std::move(r); }, [&](caf::error& e) { FAIL(g.sys.render(e)); });
    return out;
  });
  CHECK(early.wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout);  // waiting, not refused
  adopt(g, l, with_family_g(g));
  REQUIRE(early.wait_for(wait_limit) == std::future_status::ready);
  const auto r = early.get();
  INFO(r.results.at(0).st.to_string());
  CHECK(r.results.at(0).st.is_ok());
  auto got = g.ask(l, {get("early")});
  REQUIRE(got.results.at(0).st.is_ok());
  CHECK(value_of(got.results[0]) == "v2");
}

TEST_CASE("a replica that missed a schema change and the entries after it catches up by snapshot, schema included",
          "[replica]") {
  group_fixture g;
  g.snapshot_threshold = 8;
  g.snapshot_trailing = 2;
  for (std::uint64_t id = 1; id <= 3; ++id) {
    g.kill(id);
    g.start(id);
  }
  const auto l = g.leader();
  const std::uint64_t away = l == 3 ? 2 : 3;
  g.kill(away);

  // Version 2 adds family 'g' while `away` is down; enough writes follow for the others to
  // snapshot and drop the entries it missed, the schema entry among them.
  table_schema v2 = *g.schema;
  v2.version = 2;
  v2.families.push_back({family_descriptor{"g", 0, 0}, 2});
  for (std::uint64_t id = 1; id <= 3; ++id) {
    if (id == away) continue;
    caf::scoped_actor self{g.sys};
    self->request(g.actors[id - 1], wait_limit, adopt_schema_request{v2})
        .receive([](admin_reply&) {}, [&](caf::error& e) { FAIL(g.sys.render(e)); });
  }
  const auto ask_v2 = [&](std::uint64_t id, std::vector<batch_op> ops) {
    caf::scoped_actor self{g.sys};
    batch_reply out;
    self->request(g.actors[id - 1], wait_limit, batch_request{2, std::move(ops)})
        .receive([&](batch_reply& r) { out = std::move(r); }, [&](caf::error& e) { FAIL(g.sys.render(e)); });
    return out;
  };
  CHECK(testsupport::eventually([&] { return ask_v2(l, {put("r0").add("g", "q", "g0")}).results.at(0).st.is_ok(); },
                                wait_limit));
  for (int i = 1; i < 40; ++i)
    REQUIRE(ask_v2(l, {put("r" + std::to_string(i)).add("g", "q", "g" + std::to_string(i))}).results.at(0).st.is_ok());

  // `away` returns with the old schema and gets the snapshot: the same cells, and version 2
  // (a replica checks a request's schema version before its role: one without version 2
  // would answer UNAVAILABLE, a follower with it NOT_LEADER).
  g.start(away);
  const auto want = g.stats(l).cells;
  CHECK(testsupport::eventually([&] { return g.stats(away).cells == want; }, wait_limit));
  const auto probe = ask_v2(away, {put("probe").add("g", "q", "x")}).results.at(0).st;
  CHECK(probe.code() == code::not_leader);
  INFO(probe.to_string());
}

namespace {

// Rows l000.. with one cell each, as a restore or bulk load hands them to a partition.
delta_handle load_cells(group_fixture& g, int rows) {
  memtable m(&g.pool);
  std::vector<batch_op> ops;
  for (int i = 0; i < rows; ++i) {
    char row[16];
    std::snprintf(row, sizeof row, "l%03d", i);
    ops.push_back(put(row).add("f", "q", std::string(100, static_cast<char>('a' + i % 26))));
  }
  std::vector<op_result> results;
  REQUIRE(run_actions(m, *g.schema, ops, results, g.clock_ms));
  delta_handle out;
  std::string last;
  REQUIRE(m.copy_cells({}, std::numeric_limits<std::size_t>::max(), *out.map, last));
  REQUIRE(out.map->size() == static_cast<std::size_t>(rows));
  return out;
}

// How many of rows l000.. replica `a` serves in one read (-1: it refused). Usable off the
// test's thread (no assertions).
int visible(caf::actor_system& sys, const replicated_partition_actor& a, int rows) {
  std::vector<batch_op> ops;
  for (int i = 0; i < rows; ++i) {
    char row[16];
    std::snprintf(row, sizeof row, "l%03d", i);
    ops.push_back(get(row));
  }
  caf::scoped_actor self{sys};
  int n = 0;
  self->request(a, wait_limit, batch_request{1, std::move(ops)})
      .receive(
          [&](batch_reply& r) {
            for (const auto& x : r.results) {
              if (!x.st.is_ok()) n = -1;
              if (n >= 0 && !x.row.cells.empty()) ++n;
            }
          },
          [&](caf::error&) { n = -1; });
  return n;
}

// move_request::apply of `cells` at replica `a`, answered on another thread: its status
// (UNAVAILABLE when the replica died first).
std::future<status> load_async(caf::actor_system& sys, replicated_partition_actor a, delta_handle cells) {
  return std::async(std::launch::async, [&sys, a, cells] {
    caf::scoped_actor self{sys};
    status out{code::internal, "no answer"};
    move_request r;
    r.what = move_request::apply;
    r.cells = cells;
    self->request(a, wait_limit, std::move(r))
        .receive([&](move_reply& rep) { out = rep.st; },
                 [&](caf::error& e) {
                   out = status{code::unavailable, sys.render(e)};
                 });
    return out;
  });
}

// Holds a staged load on its leader once `hold_at` parts are committed (load_may_continue).
struct load_hold {
  std::atomic<std::size_t> hold_at{std::numeric_limits<std::size_t>::max()};
  std::atomic<bool> holding{false};

  void install(group_fixture& g, std::size_t entry_bytes) {
    g.load_entry_bytes = entry_bytes;
    g.load_may_continue = [this](std::size_t committed) {
      if (committed < hold_at) return true;
      holding = true;
      return false;
    };
    for (std::uint64_t id = 1; id <= 3; ++id) {
      g.kill(id);
      g.start(id);
    }
  }
  void release() { hold_at = std::numeric_limits<std::size_t>::max(); }
};

}  // namespace

TEST_CASE("a load larger than one log entry is staged on every replica, then written in one step", "[replica][load]") {
  load_hold hold;  // outlives the replicas, which call it
  group_fixture g;
  hold.install(g, 2048);
  const auto l = g.leader();
  constexpr int rows = 300;  // about 20 parts of 2 KiB
  const auto cells = load_cells(g, rows);

  SECTION("readers see none of its rows, then all") {
    hold.hold_at = 5;
    std::atomic<bool> stop{false};
    std::atomic<int> reads{0}, partial{0}, refused{0};
    std::thread reader([&] {
      const auto a = g.actors[l - 1];
      while (!stop) {
        const int n = visible(g.sys, a, rows);
        if (n < 0) ++refused;
        if (n > 0 && n < rows) ++partial;
        ++reads;
      }
    });
    auto done = load_async(g.sys, g.actors[l - 1], cells);
    REQUIRE(testsupport::eventually([&] { return hold.holding.load(); }, wait_limit));
    // Five parts committed (and applied on the leader), nothing written anywhere.
    for (std::uint64_t id = 1; id <= 3; ++id) CHECK(g.stats(id).cells == 0);
    CHECK(visible(g.sys, g.actors[l - 1], rows) == 0);
    hold.release();
    REQUIRE(done.wait_for(wait_limit) == std::future_status::ready);
    const auto st = done.get();
    INFO(st.to_string());
    CHECK(st.is_ok());
    stop = true;
    reader.join();
    CHECK(reads > 0);
    CHECK(refused == 0);
    CHECK(partial == 0);
    CHECK(visible(g.sys, g.actors[l - 1], rows) == rows);
    for (std::uint64_t id = 1; id <= 3; ++id)
      CHECK(testsupport::eventually([&] { return g.stats(id).cells == rows; }, wait_limit));
  }

  SECTION("a leader killed midway leaves none of it on the next, whose caller may load it again") {
    hold.hold_at = 8;
    auto done = load_async(g.sys, g.actors[l - 1], cells);
    REQUIRE(testsupport::eventually([&] { return hold.holding.load(); }, wait_limit));
    g.kill(l);
    REQUIRE(done.wait_for(wait_limit) == std::future_status::ready);
    const auto st = done.get();
    INFO(st.to_string());
    CHECK((st.code() == code::unavailable || st.code() == code::not_leader));
    hold.release();
    const auto next = g.leader(l);
    CHECK(visible(g.sys, g.actors[next - 1], rows) == 0);
    for (std::uint64_t id = 1; id <= 3; ++id)
      if (id != l) CHECK(g.stats(id).cells == 0);
    // Sent again, whole, to the new leader: every row.
    auto again = load_async(g.sys, g.actors[next - 1], cells);
    REQUIRE(again.wait_for(wait_limit) == std::future_status::ready);
    CHECK(again.get().is_ok());
    CHECK(visible(g.sys, g.actors[next - 1], rows) == rows);
  }
}

TEST_CASE("a replica restored from a Raft snapshot taken midway through a load writes all of it", "[replica][load]") {
  load_hold hold;
  group_fixture g;
  g.snapshot_threshold = 8;
  g.snapshot_trailing = 2;
  hold.install(g, 1024);
  const auto l = g.leader();
  const std::uint64_t away = l == 3 ? 2 : 3;
  g.kill(away);
  constexpr int rows = 400;  // about 50 parts of 1 KiB
  const auto cells = load_cells(g, rows);

  // The other two commit 40 parts, snapshotting as they go (the entries `away` missed are
  // dropped: it can only catch up from a snapshot, which holds staged parts).
  hold.hold_at = 40;
  auto done = load_async(g.sys, g.actors[l - 1], cells);
  REQUIRE(testsupport::eventually([&] { return hold.holding.load(); }, wait_limit));
  g.start(away);
  const auto applied = g.status_of(l).commit_index;
  REQUIRE(testsupport::eventually([&] { return g.status_of(away).last_applied >= applied; }, wait_limit));
  CHECK(g.stats(away).cells == 0);

  hold.release();
  REQUIRE(done.wait_for(wait_limit) == std::future_status::ready);
  CHECK(done.get().is_ok());
  CHECK(testsupport::eventually([&] { return g.stats(away).cells == rows; }, wait_limit));
  // Led by `away`, the partition serves exactly the loaded rows.
  {
    caf::scoped_actor self{g.sys};
    self->send(g.actors[l - 1], replica_prefer_atom::value, away);
  }
  REQUIRE(testsupport::eventually([&] { return visible(g.sys, g.actors[away - 1], rows) >= 0; }, wait_limit));
  for (int i = 0; i < rows; i += 37) {
    char row[16];
    std::snprintf(row, sizeof row, "l%03d", i);
    const auto r = g.ask(away, {get(row)});
    REQUIRE(r.results.at(0).st.is_ok());
    CHECK(value_of(r.results[0]) == std::string(100, static_cast<char>('a' + i % 26)));
  }
  CHECK(g.stats(away).cells == rows);
}

TEST_CASE("a freeze through the log holds whoever leads: writes refused RESHAPING until the release",
          "[replica][freeze]") {
  group_fixture g;
  const auto l = g.leader();
  for (int i = 0; i < 10; ++i)
    REQUIRE(g.ask(l, {put("r" + std::to_string(i)).add("f", "q", "v")}).results.at(0).st.is_ok());
  auto step = [&](std::uint64_t id, std::uint8_t what, std::uint64_t hold = 7) {
    caf::scoped_actor self{g.sys};
    move_reply out;
    out.st = {code::internal, "no answer"};
    move_request r;
    r.what = what;
    r.max_bytes = hold;
    self->request(g.actors[id - 1], wait_limit, std::move(r))
        .receive([&](move_reply& rep) { out = std::move(rep); },
                 [&](caf::error& e) {
                   out.st = status{code::unavailable, g.sys.render(e)};
                 });
    return out;
  };
  const std::uint64_t follower = l == 1 ? 2 : 1;
  CHECK(step(follower, move_request::freeze).st.code() == code::not_leader);
  auto frozen = step(l, move_request::freeze);
  REQUIRE(frozen.st.is_ok());
  CHECK(frozen.cells.map->size() == 10);  // every cell written before the freeze
  auto refused = g.ask(l, {put("late").add("f", "q", "no")});
  CHECK(refused.results.at(0).st.code() == code::reshaping);
  CHECK(refused.results[0].st.message().find("frozen") != std::string::npos);
  CHECK(g.ask(l, {get("r0")}).results.at(0).st.is_ok());  // reads go on

  // The leader dies: the freeze is in the log, so its successor refuses writes too.
  g.kill(l);
  const auto l2 = g.leader(l);
  CHECK(g.ask(l2, {put("late").add("f", "q", "no")}).results.at(0).st.code() == code::reshaping);
  auto again = step(l2, move_request::freeze);  // a freeze asked again answers the same cells
  REQUIRE(again.st.is_ok());
  CHECK(again.cells.map->size() == 10);
  // A release of another hold (a split that gave up earlier) leaves this freeze alone.
  REQUIRE(step(l2, move_request::abort, 3).st.is_ok());
  CHECK(g.ask(l2, {put("late").add("f", "q", "no")}).results.at(0).st.code() == code::reshaping);
  REQUIRE(step(l2, move_request::abort).st.is_ok());
  CHECK(g.ask(l2, {put("after").add("f", "q", "yes")}).results.at(0).st.is_ok());
  CHECK(g.ask(l2, {get("late")}).results.at(0).row.cells.empty());
  g.start(l);
  const auto want = g.stats(l2).cells;
  CHECK(testsupport::eventually([&] { return g.stats(l).cells == want; }, wait_limit));
}

TEST_CASE("writes that come while a writes entry is in flight wait for it and share the next entry",
          "[replica][batching]") {
  group_fixture g;
  auto l = g.leader();
  REQUIRE(g.ask(l, {put("warm").add("f", "q", "v")}).results[0].st.is_ok());
  const auto before = g.status_of(l).last_index;

  // The leader is cut off, so its first entry cannot commit; the writes after it come one
  // at a time, each on its own turn of the leader's mailbox, well inside the election
  // timeout (the followers keep the leader).
  g.net.isolate(l);
  constexpr int n = 6;
  std::vector<std::future<batch_reply>> writes;
  for (int i = 0; i < n; ++i) {
    writes.push_back(std::async(std::launch::async, [&g, l, i] {
      return g.ask(l, {put("b" + std::to_string(i)).add("f", "q", "v" + std::to_string(i))});
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
  const auto proposed = g.status_of(l).last_index - before;
  g.net.heal(l);
  for (auto& w : writes) CHECK(w.get().results.at(0).st.is_ok());
  // One entry for the first write; the other n - 1 wait for it and go together.
  CHECK(proposed == 1);
  CHECK(g.status_of(l).last_index - before <= 3);  // and one more for them (libraft may add a barrier)
  for (int i = 0; i < n; ++i)
    CHECK(value_of(g.ask(l, {get("b" + std::to_string(i))}).results[0]) == "v" + std::to_string(i));
}
