// The ZooKeeper client wrapper against a real standalone ZooKeeper.
#include <atomic>

#include "cluster_test.h"

using namespace cellar;
using namespace cellar::cluster;
using namespace zktest;

TEST_CASE("znodes: create, get, set with versions, remove", "[zk]") {
  auto zk = connect(fresh_chroot("crud"));
  auto made = zk->create("/a", "one");
  REQUIRE_OK(made);
  CHECK(*made == "/a");
  REQUIRE_CODE(zk->create("/a", "again"), code::already_exists);
  REQUIRE_CODE(zk->create("/missing/child", "x"), code::not_found);

  auto n = zk->get("/a");
  REQUIRE_OK(n);
  CHECK(n->data == "one");
  CHECK(n->stat.version == 0);
  CHECK(n->stat.ephemeral_owner == 0);

  // Compare-and-set: the write at the read version wins, a second one at it loses.
  auto st = zk->set("/a", "two", n->stat.version);
  REQUIRE_OK(st);
  CHECK(st->version == 1);
  auto lost = zk->set("/a", "three", n->stat.version);
  REQUIRE_CODE(lost, code::conflict);
  CHECK(lost.error().message().find("/a") != std::string::npos);
  CHECK(zk->get("/a")->data == "two");
  REQUIRE_OK(zk->set("/a", "four"));  // any_version
  CHECK(zk->get("/a")->stat.version == 2);

  REQUIRE_OK(zk->create("/a/b", ""));
  REQUIRE_CODE(zk->remove("/a"), code::invalid_argument);  // has children
  REQUIRE_CODE(zk->remove("/a/b", 7), code::conflict);
  REQUIRE_OK(zk->remove("/a/b", 0));
  REQUIRE_OK(zk->remove("/a"));
  REQUIRE_CODE(zk->get("/a"), code::not_found);
  REQUIRE_CODE(zk->remove("/a"), code::not_found);
  auto e = zk->exists("/a");
  REQUIRE_OK(e);
  CHECK_FALSE(e->has_value());
  REQUIRE_CODE(zk->get("no-slash"), code::invalid_argument);
}

TEST_CASE("sync: another session's write is read after it; a bad path or no server fails", "[zk][sync]") {
  const auto chroot = fresh_chroot("sync");
  auto writer = connect(chroot);
  auto reader = connect(chroot);
  REQUIRE_OK(writer->create("/s", "one"));
  REQUIRE_OK(writer->set("/s", "two"));
  REQUIRE_OK(reader->sync("/s"));
  CHECK(reader->get("/s")->data == "two");
  REQUIRE_OK(reader->sync("/"));
  REQUIRE_CODE(reader->sync("no-slash"), code::invalid_argument);
}

TEST_CASE("znodes: binary data, large values and ensure_path", "[zk]") {
  auto zk = connect(fresh_chroot("data"));
  std::string bin("a\0b\xff", 4);
  REQUIRE_OK(zk->create("/bin", bin));
  CHECK(zk->get("/bin")->data == bin);
  std::string big(900 * 1024, 'x');
  big[12345] = 'y';
  REQUIRE_OK(zk->set("/bin", big));
  CHECK(zk->get("/bin")->data == big);
  REQUIRE_OK(zk->set("/bin", ""));
  CHECK(zk->get("/bin")->data.empty());

  REQUIRE_OK(zk->ensure_path("/x/y/z"));
  REQUIRE_OK(zk->ensure_path("/x/y/z"));  // idempotent
  auto kids = zk->children("/x/y");
  REQUIRE_OK(kids);
  CHECK(*kids == std::vector<std::string>{"z"});
}

TEST_CASE("sequential and ephemeral znodes", "[zk]") {
  const auto root = fresh_chroot("seq");
  auto zk = connect(root);
  REQUIRE_OK(zk->ensure_path("/q"));
  auto a = zk->create("/q/n_", "", create_mode::persistent_sequential);
  auto b = zk->create("/q/n_", "", create_mode::ephemeral_sequential);
  REQUIRE_OK(a);
  REQUIRE_OK(b);
  REQUIRE(a->rfind("/q/n_", 0) == 0);
  auto sa = sequence_of(*a), sb = sequence_of(*b);
  REQUIRE(sa.has_value());
  REQUIRE(sb.has_value());
  CHECK(*sb == *sa + 1);
  CHECK_FALSE(sequence_of("n_12").has_value());
  CHECK(sequence_of("n_0000000042") == 42);

  {
    auto owner = connect(root);
    REQUIRE_OK(owner->create("/q/mine", "x", create_mode::ephemeral));
    auto st = zk->exists("/q/mine");
    REQUIRE_OK(st);
    REQUIRE(st->has_value());
    CHECK((*st)->ephemeral_owner == owner->session_id());
    REQUIRE_CODE(owner->create("/q/mine/child", ""), code::invalid_argument);
  }  // closing the session removes its ephemeral nodes at once
  auto gone = zk->exists("/q/mine");
  REQUIRE_OK(gone);
  CHECK_FALSE(gone->has_value());
}

TEST_CASE("watches fire once, on the event thread, and may call the client", "[zk]") {
  const auto root = fresh_chroot("watch");
  auto zk = connect(root);
  auto other = connect(root);
  REQUIRE_OK(zk->create("/w", "v0"));

  recorder<watch_event> data_events;
  recorder<std::string> reread;
  std::atomic<bool> on_thread{true};
  auto n = zk->get("/w", [&](const watch_event& ev) {
    on_thread = on_thread && zk->on_event_thread();
    data_events.add(ev);
    auto now = zk->get("/w");  // a blocking call inside a callback
    reread.add(now ? now->data : now.error().to_string());
  });
  REQUIRE_OK(n);
  REQUIRE_OK(other->set("/w", "v1"));
  REQUIRE(eventually([&] { return reread.size() == 1; }));
  REQUIRE_OK(other->set("/w", "v2"));  // one-shot: no second event
  zk->barrier();
  REQUIRE_OK(zk->get("/w"));  // v2 is visible to zk, so its (absent) event would be queued
  zk->barrier();
  auto evs = data_events.values();
  REQUIRE(evs.size() == 1);
  CHECK(evs[0].kind == watch_kind::changed);
  CHECK(evs[0].path == "/w");
  CHECK(reread.values()[0] == "v1");
  CHECK(on_thread);

  recorder<watch_event> child_events;
  REQUIRE_OK(zk->children("/w", [&](const watch_event& ev) { child_events.add(ev); }));
  REQUIRE_OK(other->create("/w/c", ""));
  REQUIRE(eventually([&] { return child_events.size() == 1; }));
  CHECK(child_events.values()[0].kind == watch_kind::children);

  recorder<watch_event> exist_events;
  auto e = zk->exists("/later", [&](const watch_event& ev) { exist_events.add(ev); });
  REQUIRE_OK(e);
  CHECK_FALSE(e->has_value());
  REQUIRE_OK(other->create("/later", ""));
  REQUIRE(eventually([&] { return exist_events.size() == 1; }));
  CHECK(exist_events.values()[0].kind == watch_kind::created);
  REQUIRE_OK(zk->exists("/later", [&](const watch_event& ev) { exist_events.add(ev); }));
  REQUIRE_OK(other->remove("/later"));
  REQUIRE(eventually([&] { return exist_events.size() == 2; }));
  CHECK(exist_events.values()[1].kind == watch_kind::deleted);

  // A get on a missing node sets no watch: creating it later fires nothing.
  recorder<watch_event> none;
  REQUIRE_CODE(zk->get("/absent", [&](const watch_event& ev) { none.add(ev); }), code::not_found);
  REQUIRE_OK(other->create("/absent", ""));
  REQUIRE_OK(other->set("/absent", "x"));
  zk->barrier();
  REQUIRE_OK(zk->get("/absent"));
  zk->barrier();
  CHECK(none.size() == 0);
}

TEST_CASE("multi applies every op or none", "[zk]") {
  auto zk = connect(fresh_chroot("multi"));
  REQUIRE_OK(zk->create("/v", "0"));
  auto ok = zk->multi({zk_op::check("/v", 0), zk_op::set("/v", "1", 0),
                       zk_op::create("/s_", "x", create_mode::persistent_sequential), zk_op::create("/plain", "")});
  REQUIRE_OK(ok);
  REQUIRE(ok->size() == 4);
  CHECK((*ok)[1].stat.version == 1);
  CHECK((*ok)[2].created_path.rfind("/s_", 0) == 0);
  CHECK(sequence_of((*ok)[2].created_path).has_value());
  CHECK((*ok)[3].created_path == "/plain");

  // The check fails (version is 1 now): the create before it is not applied either.
  auto bad = zk->multi({zk_op::create("/never", ""), zk_op::check("/v", 0), zk_op::remove("/plain")});
  REQUIRE_CODE(bad, code::conflict);
  CHECK(bad.error().message().find("multi op 1") != std::string::npos);
  CHECK_FALSE(zk->exists("/never")->has_value());
  CHECK(zk->exists("/plain")->has_value());
  auto missing = zk->multi({zk_op::remove("/plain"), zk_op::remove("/nope")});
  REQUIRE_CODE(missing, code::not_found);
  CHECK(zk->exists("/plain")->has_value());
}

TEST_CASE("a chroot is created and confines every path", "[zk]") {
  const auto root = fresh_chroot("chroot") + "/deeper";
  auto zk = connect(root);
  REQUIRE_OK(zk->create("/inside", "x"));
  auto top = connect("");
  auto n = top->get(root + "/inside");
  REQUIRE_OK(n);
  CHECK(n->data == "x");
  auto kids = zk->children("/");
  REQUIRE_OK(kids);
  CHECK(*kids == std::vector<std::string>{"inside"});
}

TEST_CASE("open reports what is wrong with the address", "[zk]") {
  zk_options o;
  o.connect = "";
  REQUIRE_CODE(zk_client::open(o), code::invalid_argument);
  o.connect = zk_server::shared().address() + "/trailing/";
  REQUIRE_CODE(zk_client::open(o), code::invalid_argument);
  o.connect = "127.0.0.1:" + std::to_string(free_port());  // nothing listens there
  o.connect_timeout = std::chrono::milliseconds(500);
  auto r = zk_client::open(o);
  REQUIRE_CODE(r, code::unavailable);
  CHECK(r.error().message().find(o.connect) != std::string::npos);
}

TEST_CASE("an expired session is replaced by a new one; its ephemeral nodes are gone", "[zk][session]") {
  const auto root = fresh_chroot("expire");
  auto zk = connect(root);
  auto observer = connect(root);
  recorder<session_event> events;
  zk->add_session_listener([&](const session_event& ev) { events.add(ev); });
  REQUIRE_OK(zk->create("/eph", "", create_mode::ephemeral));
  recorder<watch_event> watch;
  REQUIRE_OK(zk->get("/eph", [&](const watch_event& ev) { watch.add(ev); }));
  const auto old_session = zk->session_id();

  REQUIRE_OK(zk->expire_session_for_testing());
  REQUIRE(eventually([&] {
    auto v = events.values();
    return !v.empty() && v.back().state == session_state::connected && v.back().new_session;
  }));
  // The old connection may see the session move away and come back before the expiry.
  auto v = events.values();
  REQUIRE(v.size() >= 2);
  CHECK(v[v.size() - 2].state == session_state::expired);
  CHECK(v[v.size() - 2].session_id == old_session);
  CHECK(v.back().session_id != old_session);
  CHECK(zk->session_id() == v.back().session_id);
  CHECK(zk->connected());

  CHECK_FALSE(observer->exists("/eph")->has_value());
  // The old session's watches do not fire once the expiry is seen. Only if the old
  // connection got the session back just before it was closed does it hear the deletion
  // of its own ephemeral node (true, and before the expiry).
  const auto fired = watch.values();
  CHECK(fired.size() <= 1);
  for (const auto& ev : fired) CHECK(ev.kind == watch_kind::deleted);
  // The new session works. Its events come one at a time in ZooKeeper's order, so once a
  // watch set after the deletion has heard a later change, a live old watch would have
  // heard the deletion already.
  REQUIRE_OK(zk->create("/eph", "", create_mode::ephemeral));
  recorder<watch_event> later;
  REQUIRE_OK(zk->exists("/later", [&](const watch_event& ev) { later.add(ev); }));
  REQUIRE_OK(zk->remove("/eph"));
  REQUIRE_OK(zk->create("/later", ""));
  REQUIRE(eventually([&] { return later.size() == 1; }));
  CHECK(later.values()[0].kind == watch_kind::created);
  CHECK(watch.size() == fired.size());  // the old watch is gone
}

TEST_CASE("a server restart disconnects and resumes the same session", "[zk][session]") {
  zk_server server;  // its own server: this test stops it
  zk_options o;
  o.connect = server.connect("/restart");
  o.session_timeout = std::chrono::milliseconds(8000);
  auto zk = zk_client::open(o);
  REQUIRE_OK(zk);
  auto& c = **zk;
  recorder<session_event> events;
  c.add_session_listener([&](const session_event& ev) { events.add(ev); });
  REQUIRE_OK(c.create("/eph", "", create_mode::ephemeral));
  const auto session = c.session_id();

  server.stop();
  REQUIRE(eventually([&] { return events.size() >= 1; }));
  CHECK(events.values()[0].state == session_state::disconnected);
  CHECK_FALSE(c.connected());
  REQUIRE_CODE(c.get("/eph"), code::unavailable);
  REQUIRE_CODE(c.sync("/eph"), code::unavailable);  // a sync reaches a server, or fails

  server.start();
  REQUIRE(eventually([&] { return events.values().back().state == session_state::connected; }));
  auto v = events.values();
  CHECK(c.connected());
  CHECK_FALSE(v.back().new_session);
  CHECK(c.session_id() == session);
  CHECK(c.exists("/eph")->has_value());
  REQUIRE_OK(c.sync("/eph"));
}
