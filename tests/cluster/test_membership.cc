// Membership (ephemeral node znodes) and master election against a real ZooKeeper.
#include <atomic>

#include "cluster/election.h"
#include "cluster/membership.h"
#include "cluster_test.h"

using namespace cellar;
using namespace cellar::cluster;
using namespace zktest;

namespace {

node_info node(const std::string& id) { return {id, id + ".example:9090", id + ".example:4242"}; }

std::vector<std::string> ids(const std::vector<node_info>& v) {
  std::vector<std::string> out;
  for (const auto& n : v) out.push_back(n.id);
  return out;
}

using id_list = std::vector<std::string>;

}  // namespace

TEST_CASE("node entries round-trip; bad ids and bytes are refused", "[membership]") {
  auto n = node("n1");
  auto back = decode_node_info(encode_node_info(n));
  REQUIRE_OK(back);
  CHECK(*back == n);
  REQUIRE_CODE(decode_node_info("junk"), code::corruption);
  REQUIRE_CODE(decode_node_info(encode_node_info(n) + "x"), code::corruption);
  CHECK(check_node_id("node-1.a_b"));
  REQUIRE_CODE(check_node_id(""), code::invalid_argument);
  REQUIRE_CODE(check_node_id(".."), code::invalid_argument);
  REQUIRE_CODE(check_node_id("a/b"), code::invalid_argument);
}

TEST_CASE("members see each other join and leave", "[membership]") {
  const auto root = fresh_chroot("members");
  auto zk1 = connect(root), zk2 = connect(root), zk3 = connect(root);
  recorder<id_list> seen;
  auto watcher = membership::observe(*zk3, [&](const std::vector<node_info>& m) { seen.add(ids(m)); });
  REQUIRE_OK(watcher);
  CHECK(seen.values() == std::vector<id_list>{{}});  // the first call comes before observe() returns

  auto m1 = membership::join(*zk1, node("n1"), nullptr);
  REQUIRE_OK(m1);
  CHECK((*m1)->registered());
  auto m2 = membership::join(*zk2, node("n2"), nullptr);
  REQUIRE_OK(m2);
  REQUIRE(eventually([&] { return (*watcher)->members().size() == 2; }));
  auto members = (*watcher)->members();
  CHECK(members[0] == node("n1"));
  CHECK(members[1] == node("n2"));
  REQUIRE(eventually([&] { return (*m1)->members().size() == 2; }));

  REQUIRE_CODE(membership::join(*zk3, node("bad id"), nullptr), code::invalid_argument);
  // The id is held by a live session: refused once the wait is over.
  auto dup = membership::join(*zk3, node("n1"), nullptr, std::chrono::milliseconds(200));
  REQUIRE_CODE(dup, code::already_exists);
  CHECK(dup.error().message().find("n1") != std::string::npos);

  m1->reset();  // leaving removes the znode at once
  REQUIRE(eventually([&] { return ids((*watcher)->members()) == id_list{"n2"}; }));
  auto listed = membership::list(*zk1);
  REQUIRE_OK(listed);
  CHECK(ids(*listed) == id_list{"n2"});
  auto v = seen.values();
  CHECK(v.back() == id_list{"n2"});
}

TEST_CASE("a killed node leaves the list when its session times out", "[membership][kill]") {
  const auto root = fresh_chroot("killed");
  auto zk = connect(root);
  auto watcher = membership::observe(*zk, nullptr);
  REQUIRE_OK(watcher);
  member_process child(zk_server::shared().connect(root), "doomed", 1000);
  REQUIRE(eventually([&] { return ids((*watcher)->members()) == id_list{"doomed"}; }));
  const auto t0 = std::chrono::steady_clock::now();
  child.kill();
  REQUIRE(eventually([&] { return (*watcher)->members().empty(); }));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  WARN("a SIGKILLed node left the member list after " << ms.count() << " ms (session timeout 1000 ms)");

  // Restarted at once with the same id, a node waits for its previous session to go.
  member_process again(zk_server::shared().connect(root), "doomed", 1000);
  again.kill();
  auto zk2 = connect(root);
  auto back = membership::join(*zk2, node("doomed"), nullptr, std::chrono::seconds(20));
  REQUIRE_OK(back);
  REQUIRE(eventually([&] { return (*watcher)->members() == std::vector<node_info>{node("doomed")}; }));
}

TEST_CASE("a node registers again after its session expired", "[membership][session]") {
  const auto root = fresh_chroot("rejoin");
  auto zk = connect(root), other = connect(root);
  auto m = membership::join(*zk, node("n1"), nullptr);
  REQUIRE_OK(m);
  recorder<id_list> seen;
  auto watcher = membership::observe(*other, [&](const std::vector<node_info>& v) { seen.add(ids(v)); });
  REQUIRE_OK(watcher);
  const auto old_session = zk->session_id();
  REQUIRE_OK(zk->expire_session_for_testing());
  REQUIRE(eventually([&] {
    auto st = other->exists("/nodes/n1");
    return zk->session_id() != old_session && st && st->has_value() && (*st)->ephemeral_owner == zk->session_id();
  }));
  // The znode shows before the callback that created it marks the membership registered.
  CHECK(eventually([&] { return (*m)->registered(); }));
  REQUIRE(eventually([&] { return seen.size() >= 1 && seen.values().back() == id_list{"n1"}; }));
}

namespace {

struct candidate {
  std::unique_ptr<zk_client> zk;
  std::unique_ptr<master_election> election;
  std::atomic<int> elected{0}, deposed{0};
  std::atomic<std::int64_t> last_term{0};

  candidate(const std::string& root, const std::string& id) : zk(connect(root)) {
    auto e = master_election::enter(*zk, id,
                                    {[this](const master_info& me) {
                                       last_term = me.term;
                                       ++elected;
                                     },
                                     [this] { ++deposed; }});
    REQUIRE_OK(e);
    election = std::move(*e);
  }
};

}  // namespace

TEST_CASE("the lowest candidate is master; the next takes over when it withdraws", "[election]") {
  const auto root = fresh_chroot("elect");
  auto observer = connect(root);
  REQUIRE_CODE(master_election::current(*observer), code::not_found);
  candidate a(root, "a"), b(root, "b"), c(root, "c");
  CHECK(a.election->is_master());
  CHECK(a.elected == 1);  // enter() returns after the first check
  CHECK_FALSE(b.election->is_master());
  CHECK_FALSE(c.election->is_master());
  CHECK(b.elected == 0);
  auto cur = master_election::current(*observer);
  REQUIRE_OK(cur);
  CHECK(cur->node_id == "a");
  CHECK(cur->term == a.election->term());
  CHECK(cur->znode == a.election->fence_path());
  const auto term_a = a.election->term();

  a.election.reset();
  CHECK(a.deposed == 1);  // before the destructor returned
  REQUIRE(eventually([&] { return b.election->is_master(); }));
  CHECK(eventually([&] { return b.elected == 1; }));  // the callback runs just after the flag
  CHECK(b.last_term > term_a);
  CHECK_FALSE(c.election->is_master());
  CHECK(master_election::current(*observer)->node_id == "b");
  // c watches b only: b leaving makes c master.
  b.election.reset();
  REQUIRE(eventually([&] { return c.election->is_master(); }));
  CHECK(eventually([&] { return c.elected == 1; }));
}

TEST_CASE("a killed master is replaced within the session timeout", "[election][kill]") {
  const auto root = fresh_chroot("killmaster");
  member_process old_master(zk_server::shared().connect(root), "old", 1000);
  candidate b(root, "b");
  CHECK_FALSE(b.election->is_master());
  auto observer = connect(root);
  CHECK(master_election::current(*observer)->node_id == "old");
  const auto t0 = std::chrono::steady_clock::now();
  old_master.kill();
  REQUIRE(eventually([&] { return b.election->is_master(); }));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  WARN("a SIGKILLed master was replaced after " << ms.count() << " ms (session timeout 1000 ms)");
  CHECK(master_election::current(*observer)->node_id == "b");
}

TEST_CASE("a master whose session expires steps down and comes back as a candidate", "[election][session]") {
  const auto root = fresh_chroot("expiremaster");
  candidate a(root, "a"), b(root, "b");
  REQUIRE(a.election->is_master());
  const auto fence = a.election->fence_path();
  REQUIRE_OK(a.zk->expire_session_for_testing());
  REQUIRE(eventually([&] { return b.election->is_master(); }));
  // (The way the test expires a session may let a win it back for a moment first, so a
  // may hear elected/deposed more than once on the way.)
  REQUIRE(eventually([&] { return !a.election->fence_path().empty() && a.election->fence_path() != fence; }));
  // The callbacks run just after the state changes: their counts catch up a moment later.
  CHECK(eventually([&] { return a.deposed == a.elected; }));
  CHECK_FALSE(a.election->is_master());
  // The deposed master's fence no longer holds: a multi guarded by it fails.
  auto fenced = b.zk->multi({zk_op::check(fence, 0), zk_op::create("/x", "")});
  REQUIRE_CODE(fenced, code::not_found);
  // a is now the candidate after b.
  b.election.reset();
  REQUIRE(eventually([&] { return a.election->is_master(); }));
  CHECK(eventually([&] { return a.elected == a.deposed + 1; }));
}

TEST_CASE("a master steps down while disconnected and resumes in the same session", "[election][session]") {
  zk_server server;
  zk_options o;
  o.connect = server.connect("/disc");
  o.session_timeout = std::chrono::milliseconds(10000);
  auto zk = zk_client::open(o);
  REQUIRE_OK(zk);
  std::atomic<int> elected{0}, deposed{0};
  auto e = master_election::enter(**zk, "a", {[&](const master_info&) { ++elected; }, [&] { ++deposed; }});
  REQUIRE_OK(e);
  REQUIRE((*e)->is_master());
  const auto term = (*e)->term();
  server.stop();
  REQUIRE(eventually([&] { return deposed == 1; }));
  CHECK_FALSE((*e)->is_master());
  CHECK((*e)->term() == 0);
  server.start();
  REQUIRE(eventually([&] { return elected == 2; }));
  CHECK((*e)->is_master());
  CHECK((*e)->term() == term);
}
