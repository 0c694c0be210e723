// Named snapshots in a real cluster: the test ZooKeeper plus three cellar-server processes
// (cluster/snapshot_service.h; docs/backup.md, "In a cluster"). One cluster serves every
// step, in order: a snapshot of a single-copy table under a writer, its clone, a restore
// through another node, a damaged snapshot refused, list and delete through two nodes,
// then a replicated (factor 3) table restored (its leaders on nodes whose copies are
// damaged fetch intact ones) and read after one node is killed, and that node's copy of a
// snapshot deleted while it was down removed when it comes back.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cellar/client.h"
#include "cluster/node_link.h"
#include "cluster/snapshot_sweep.h"
#include "servers_test.h"

using namespace cellar;
using namespace clustertest;

namespace {

// row -> "family:qualifier" -> value
using table_cells = std::map<std::string, std::map<std::string, std::string>>;

// A thin client of one node. An RPC connection keeps an event loop on the thread that made
// it, one per thread, so each node's connection lives on a link thread of its own.
class node_client {
 public:
  explicit node_client(testproc::server& s) {
    auto l = cluster::node_link::open(s.address(), rpc::client_options{});
    INFO(s.address() << ": " << (l.is_ok() ? std::string("connected") : l.error().to_string()));
    REQUIRE(l.is_ok());
    link_ = std::move(*l);
  }
  // f(connection&) on the link's thread.
  template <class F>
  auto operator()(F f) {
    return link_->call([&](std::unique_ptr<connection>& c) { return f(*c); });
  }

 private:
  std::shared_ptr<cluster::node_link> link_;
};

table_cells read_all(connection& c, const std::string& table) {
  table_cells out;
  auto st = c.scan(table, cellar::scan());
  INFO("scan of '" << table << "': " << (st.is_ok() ? std::string("ok") : st.error().to_string()));
  REQUIRE(st.is_ok());
  for (;;) {
    auto page = (*st)->next(500);
    INFO((page.is_ok() ? std::string("ok") : page.error().to_string()));
    REQUIRE(page.is_ok());
    if (page->empty()) return out;
    for (const auto& r : *page)
      for (const auto& cell : r.cells) out[r.row][cell.family + ":" + cell.qualifier] = cell.value;
  }
}

// read_all once it succeeds: after a node is killed, each partition it led answers once
// another replica leads (the replica router follows it within its forward timeout).
table_cells read_when_served(connection& c, const std::string& table) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto st = c.scan(table, cellar::scan());
    if (!st.is_ok()) continue;
    table_cells out;
    bool whole = true;
    for (;;) {
      auto page = (*st)->next(500);
      if (!page.is_ok()) {
        whole = false;
        break;
      }
      if (page->empty()) break;
      for (const auto& r : *page)
        for (const auto& cell : r.cells) out[r.row][cell.family + ":" + cell.qualifier] = cell.value;
    }
    if (whole) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  FAIL("no whole scan of '" << table << "'");
  return {};
}

std::set<std::string> names_of(const result<std::vector<snapshot_info>>& l) {
  INFO((l.is_ok() ? std::string("ok") : l.error().to_string()));
  REQUIRE(l.is_ok());
  std::set<std::string> out;
  for (const auto& s : *l) out.insert(s.name);
  return out;
}

// Flips a byte in the middle of file `file` of snapshot `name` in the copy of each node of
// `nodes`; returns how many copies it damaged.
int damage(cluster3& c, const std::string& name, const std::string& file, std::vector<int> nodes = {1, 2, 3}) {
  int damaged = 0;
  for (int i : nodes) {
    const std::string path = c.data_dir(i) + "/snapshots/" + name + "/" + file;
    if (!std::filesystem::exists(path)) continue;
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    REQUIRE(bytes.size() > 16);
    bytes[bytes.size() / 2] ^= 0x55;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    ++damaged;
  }
  return damaged;
}

// The writer's rows: w<i> with three cells in one batch (all of them or none in a cut).
std::string writer_row(int i) { return "w" + std::to_string(100000 + i); }

}  // namespace

TEST_CASE(
    "named snapshots in a cluster: taken under writes, listed, cloned, restored, refused when damaged, "
    "deleted; a factor-3 table restored through its Raft groups",
    "[snapshots]") {
  cluster3 c({"--durability", "log", "--election-timeout-ms", "400"});
  auto made = shell(c.node(1), "create 't1', 'f'\ncreate 't3', 'f', {REGION_REPLICATION => 3}\n");
  REQUIRE(lines(made.out) == std::vector<std::string>{"{\"ok\":true}", "{\"ok\":true}"});
  node_client n1(c.node(1)), n2(c.node(2)), n3(c.node(3));
  n1([&](connection& x) { return preload(x, "t1", 300); });
  // Row "big": f:a and f:z with columns of 8 MB between them in key order, so that a copy
  // takes them in different chunks (1 MB each); a second writer sets both to the same
  // value in one put, and a consistent cut has them equal.
  {
    cellar::put big("big");
    big.add("f", "a", "0").add("f", "z", "0");
    for (int m = 0; m < 32; ++m) big.add("f", "m" + std::to_string(100 + m), std::string(256 << 10, 'm'));
    REQUIRE_OK(n1([&](connection& x) { return x.put("t1", big); }));
  }

  // --- a snapshot of t1 through n1 while a writer writes through n2 -------------------------
  std::atomic<bool> stop{false};
  std::atomic<int> acked{0};     // rows w0 .. w<acked-1> are acknowledged
  std::atomic<int> started{-1};  // the writer's last batch started
  std::atomic<bool> writer_failed{false};
  std::thread writer([&] {
    auto w = rpc::connect(c.node(2).address());
    if (!w.is_ok()) {
      writer_failed = true;
      return;
    }
    for (int i = 0; !stop.load(); ++i) {
      started.store(i);
      const auto row = writer_row(i);
      auto r = (*w)->batch("t1", {cellar::put(row).add("f", "a", "1").add("f", "b", "2").add("f", "c", "3")});
      if (!r[0].st.is_ok()) {
        writer_failed = true;
        break;
      }
      acked.store(i + 1);
    }
  });
  std::atomic<int> big_acked{0};
  std::thread big_writer([&] {
    auto w = rpc::connect(c.node(3).address());
    if (!w.is_ok()) {
      writer_failed = true;
      return;
    }
    for (int i = 1; !stop.load(); ++i) {
      const auto v = std::to_string(i);
      if (!(*w)->batch("t1", {cellar::put("big").add("f", "a", v).add("f", "z", v)})[0].st.is_ok()) {
        writer_failed = true;
        break;
      }
      big_acked.store(i);
    }
  });
  while ((acked.load() < 20 || big_acked.load() < 20) && !writer_failed) std::this_thread::yield();
  const int big_before = big_acked.load();
  const int acked_before = acked.load();
  REQUIRE_OK(n1([&](connection& x) { return x.snapshot_table("t1", "s1"); }));
  const int started_after = started.load() + 1;  // no batch from here on is in the snapshot
  while (acked.load() < started_after + 20 && !writer_failed) std::this_thread::yield();
  stop = true;
  writer.join();
  big_writer.join();
  REQUIRE_FALSE(writer_failed);
  REQUIRE(acked.load() >= started_after + 20);

  // Writes after the snapshot: a changed row, a deleted one, a new one.
  REQUIRE_OK(n3([&](connection& x) { return x.put("t1", cellar::put("r000").add("f", "q", "changed")); }));
  REQUIRE(n3([&](connection& x) { return x.batch("t1", {cellar::deletion("r001")}); })[0].st.is_ok());
  REQUIRE_OK(n3([&](connection& x) { return x.put("t1", cellar::put("after").add("f", "q", "x")); }));

  // The same name again is refused, through any node.
  REQUIRE_CODE(n2([&](connection& x) { return x.snapshot_table("t1", "s1"); }), code::already_exists);

  // --- list through two nodes -------------------------------------------------------------
  CHECK(names_of(n1([&](connection& x) { return x.list_snapshots("", ""); })) == std::set<std::string>{"s1"});
  CHECK(names_of(n2([&](connection& x) { return x.list_snapshots("t1", ""); })) == std::set<std::string>{"s1"});
  CHECK(names_of(n2([&](connection& x) { return x.list_snapshots("t3", ""); })).empty());

  // The routed client (cellar-shell --cluster) reaches them too.
  {
    auto r = testproc::run({CELLAR_SHELL, "--cluster", c.zk_connect()},
                           "snapshot 't1', 'sr'\nlist_snapshots\ndelete_snapshot 'sr'\nlist_snapshots 'sr'\n");
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("UNSUPPORTED") == std::string::npos);
    CHECK(r.out.find("sr") != std::string::npos);
    CHECK(r.out.find("s1") != std::string::npos);
    CHECK(names_of(n1([&](connection& x) { return x.list_snapshots("", ""); })) == std::set<std::string>{"s1"});
  }

  // --- a clone through n3: the snapshot's cells ---------------------------------------------
  REQUIRE_OK(n3([&](connection& x) { return x.clone_snapshot("s1", "c1"); }));
  const table_cells snap = n1([&](connection& x) { return read_all(x, "c1"); });
  {
    // Every row acknowledged before the snapshot, none started after it, each writer row
    // whole, and the later writes absent.
    for (int i = 0; i < acked_before; ++i) CHECK(snap.count(writer_row(i)) == 1);
    for (int i = started_after; i < acked.load(); ++i) CHECK(snap.count(writer_row(i)) == 0);
    for (const auto& [row, cells] : snap)
      if (row[0] == 'w') CHECK(cells.size() == 3);
    CHECK(snap.at("big").at("f:a") == snap.at("big").at("f:z"));
    CHECK(std::stoi(snap.at("big").at("f:a")) >= big_before);
    CHECK(snap.at("r000").at("f:q") == "vr000");
    CHECK(snap.count("r001") == 1);
    CHECK(snap.count("after") == 0);
    int preloaded = 0;
    for (const auto& [row, cells] : snap) preloaded += row[0] == 'r';
    CHECK(preloaded == 300);
  }
  // The clone is a table of its own: writes to one do not reach the other.
  REQUIRE_OK(n2([&](connection& x) { return x.put("c1", cellar::put("r002").add("f", "q", "clone only")); }));
  CHECK(n3([&](connection& x) { return read_all(x, "t1"); }).at("r002").at("f:q") == "vr002");
  REQUIRE_OK(n2([&](connection& x) { return x.put("t1", cellar::put("r003").add("f", "q", "source only")); }));
  CHECK(n3([&](connection& x) { return read_all(x, "c1"); }).at("r003").at("f:q") == "vr003");
  CHECK(n3([&](connection& x) { return read_all(x, "c1"); }).at("r002").at("f:q") == "clone only");

  // --- restore through n2: the table has exactly the snapshot's cells -----------------------
  REQUIRE_CODE(n2([&](connection& x) { return x.restore_snapshot("s1"); }), code::table_not_disabled);
  REQUIRE_OK(n1([&](connection& x) { return x.disable_table("t1"); }));
  REQUIRE_OK(n2([&](connection& x) { return x.restore_snapshot("s1"); }));
  REQUIRE_OK(n1([&](connection& x) { return x.enable_table("t1"); }));
  CHECK(n3([&](connection& x) { return read_all(x, "t1"); }) == snap);
  CHECK(n1([&](connection& x) { return read_all(x, "t1"); }) == snap);

  // --- a copy damaged on the serving node only: the file comes from another holder ------
  REQUIRE(damage(c, "s1", "part-00001.cells", {1}) == 1);
  REQUIRE_OK(n1([&](connection& x) { return x.clone_snapshot("s1", "c3"); }));
  CHECK(n2([&](connection& x) { return read_all(x, "c3"); }) == snap);

  // --- copies damaged on every node but the serving one: an owner whose copy is damaged
  // fetches its part file from a node holding an intact one, the others load their own ---
  REQUIRE_OK(n1([&](connection& x) { return x.snapshot_table("t1", "s3"); }));
  for (const char* file : {"part-00000.cells", "part-00002.cells", "part-00003.cells", "part-00004.cells"})
    REQUIRE(damage(c, "s3", file, {2, 3}) == 2);
  REQUIRE_OK(n1([&](connection& x) { return x.clone_snapshot("s3", "c4"); }));
  CHECK(n3([&](connection& x) { return read_all(x, "c4"); }) == snap);
  REQUIRE_OK(n1([&](connection& x) { return x.delete_snapshot("s3"); }));

  // --- a damaged snapshot is refused, with nothing changed ----------------------------------
  REQUIRE_OK(n1([&](connection& x) { return x.put("t1", cellar::put("later").add("f", "q", "kept")); }));
  REQUIRE_OK(n1([&](connection& x) { return x.snapshot_table("t1", "s2"); }));
  REQUIRE_OK(n1([&](connection& x) { return x.put("t1", cellar::put("later2").add("f", "q", "kept too")); }));
  const table_cells before = n2([&](connection& x) { return read_all(x, "t1"); });
  REQUIRE(damage(c, "s2", "part-00002.cells") >= 2);  // every holder's copy (two at least)
  REQUIRE_OK(n1([&](connection& x) { return x.disable_table("t1"); }));
  REQUIRE_CODE(n3([&](connection& x) { return x.restore_snapshot("s2"); }), code::corruption);
  REQUIRE_CODE(n3([&](connection& x) { return x.clone_snapshot("s2", "c2"); }), code::corruption);
  auto enabled = n1([&](connection& x) { return x.is_table_enabled("t1"); });
  REQUIRE(enabled.is_ok());
  CHECK_FALSE(*enabled);  // still disabled: the restore changed nothing
  REQUIRE_OK(n1([&](connection& x) { return x.enable_table("t1"); }));
  CHECK(n2([&](connection& x) { return read_all(x, "t1"); }) == before);
  auto tables = n2([&](connection& x) { return x.list_tables(); });
  REQUIRE(tables.is_ok());
  CHECK(std::count(tables->begin(), tables->end(), std::string("c2")) == 0);

  // --- delete through n2, seen through n1 and n3 ---------------------------------------------
  CHECK(names_of(n3([&](connection& x) { return x.list_snapshots("", ""); })) == std::set<std::string>{"s1", "s2"});
  REQUIRE_OK(n2([&](connection& x) { return x.delete_snapshot("s2"); }));
  CHECK(names_of(n1([&](connection& x) { return x.list_snapshots("", ""); })) == std::set<std::string>{"s1"});
  CHECK(names_of(n3([&](connection& x) { return x.list_snapshots("", ""); })) == std::set<std::string>{"s1"});
  REQUIRE_CODE(n1([&](connection& x) { return x.delete_snapshot("s2"); }), code::not_found);
  for (int i = 1; i <= 3; ++i) CHECK_FALSE(std::filesystem::exists(c.data_dir(i) + "/snapshots/s2"));
  // The name is free again.
  REQUIRE_OK(n3([&](connection& x) { return x.snapshot_table("t1", "s2"); }));
  CHECK(names_of(n2([&](connection& x) { return x.list_snapshots("", "s.*"); })) == std::set<std::string>{"s1", "s2"});

  // --- what a node that dies midway leaves ---------------------------------------------------
  {
    // A session of its own stands in for a node: its move intent on a partition makes a
    // snapshot fail CONFLICT, its claim on a name ALREADY_EXISTS, and neither leaves a
    // snapshot behind. The intent is on the last of t1's 6 partitions, so the files of the
    // others were handed to the nodes before the copy failed: no node keeps them.
    auto zk = c.zk();
    REQUIRE(zk->create(cluster::layout::move_intent("t1", 5), "snapshot", cluster::create_mode::ephemeral).is_ok());
    REQUIRE_CODE(n2([&](connection& x) { return x.snapshot_table("t1", "sd"); }), code::conflict);
    REQUIRE(zk->remove(cluster::layout::move_intent("t1", 5)).is_ok());
    for (int i = 1; i <= 3; ++i)
      for (const auto& e : std::filesystem::directory_iterator(c.data_dir(i) + "/snapshots"))
        CHECK(e.path().filename().string().find("sd") == std::string::npos);
    REQUIRE(zk->create(std::string(cluster::layout::snapshot_writes) + "/s_sd", "n9", cluster::create_mode::ephemeral)
                .is_ok());
    REQUIRE_CODE(n2([&](connection& x) { return x.snapshot_table("t1", "sd"); }), code::already_exists);
    CHECK(names_of(n3([&](connection& x) { return x.list_snapshots("", "sd"); })).empty());
  }  // the "node" is gone, and its claim with its session
  REQUIRE_OK(n2([&](connection& x) { return x.snapshot_table("t1", "sd"); }));
  {
    // Files no znode names (a node died after writing them, before the znode) are never
    // listed, and a later snapshot of the name replaces them.
    REQUIRE(c.zk()->remove(std::string(cluster::layout::snapshots) + "/s_sd").is_ok());
    CHECK(names_of(n1([&](connection& x) { return x.list_snapshots("", "sd"); })).empty());
    auto text = [](const std::string& path) {
      std::ifstream in(path, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::string leftover = text(c.data_dir(1) + "/snapshots/sd/manifest");
    CHECK_FALSE(leftover.empty());
    REQUIRE_OK(n3([&](connection& x) { return x.put("t1", cellar::put("sd-only").add("f", "q", "1")); }));
    REQUIRE_OK(n3([&](connection& x) { return x.snapshot_table("t1", "sd"); }));
    CHECK(text(c.data_dir(1) + "/snapshots/sd/manifest") != leftover);  // replaced on every node
    CHECK(text(c.data_dir(2) + "/snapshots/sd/manifest") != leftover);
    REQUIRE_OK(n1([&](connection& x) { return x.clone_snapshot("sd", "csd"); }));
    CHECK(n2([&](connection& x) { return read_all(x, "csd"); }) ==
          n2([&](connection& x) { return read_all(x, "t1"); }));
    REQUIRE_OK(n1([&](connection& x) { return x.delete_snapshot("sd"); }));
  }

  // --- export, import and bulk load through the cluster ------------------------------------
  {
    testsupport::made_dir out("cellar-snapshot-export");
    const std::string dir = out.path + "/s1";
    REQUIRE_OK(n2([&](connection& x) { return x.export_snapshot("s1", dir); }));
    REQUIRE(shell(c.node(1), "create 'bl', 'f'\n").exit_code == 0);
    auto loaded = n3([&](connection& x) { return x.bulk_load("bl", dir); });
    INFO((loaded.is_ok() ? std::string("ok") : loaded.error().to_string()));
    REQUIRE(loaded.is_ok());
    CHECK(n1([&](connection& x) { return read_all(x, "bl"); }) == snap);
    // Imported through one node, listed through another.
    REQUIRE_OK(n1([&](connection& x) { return x.delete_snapshot("s1"); }));
    auto imported = n3([&](connection& x) { return x.import_snapshot(dir); });
    REQUIRE(imported.is_ok());
    CHECK(names_of(n2([&](connection& x) { return x.list_snapshots("t1", ""); })) == std::set<std::string>{"s1", "s2"});
  }

  // --- factor 3: restored through the Raft groups --------------------------------------------
  n1([&](connection& x) { return preload(x, "t3", 200); });
  REQUIRE_OK(n2([&](connection& x) { return x.snapshot_table("t3", "s3"); }));
  const table_cells snap3 = n1([&](connection& x) { return read_all(x, "t3"); });
  REQUIRE(snap3.size() == 200);
  for (int i = 0; i < 200; i += 2)
    REQUIRE_OK(n3([&](connection& x) { return x.put("t3", cellar::put(row_name(i)).add("f", "q", "changed")); }));
  REQUIRE_OK(n3([&](connection& x) { return x.put("t3", cellar::put("after").add("f", "q", "x")); }));
  // Every part file damaged on nodes 2 and 3, so the leaders there fetch theirs from node 1.
  int parts3 = 0;
  for (const auto& e : std::filesystem::directory_iterator(c.data_dir(2) + "/snapshots/s3"))
    if (e.path().extension() == ".cells") {
      REQUIRE(damage(c, "s3", e.path().filename().string(), {2, 3}) == 2);
      ++parts3;
    }
  REQUIRE(parts3 >= 3);
  REQUIRE_OK(n1([&](connection& x) { return x.disable_table("t3"); }));
  REQUIRE_OK(n1([&](connection& x) { return x.restore_snapshot("s3"); }));
  REQUIRE_OK(n1([&](connection& x) { return x.enable_table("t3"); }));
  CHECK(n2([&](connection& x) { return read_all(x, "t3"); }) == snap3);
  // Every replica took the restored cells: with node 1 (the preferred leader of a third of
  // the partitions, and the node that ran the restore) gone, the other two serve them.
  c.kill9(1);
  CHECK(n2([&](connection& x) { return read_when_served(x, "t3"); }) == snap3);
  CHECK(n3([&](connection& x) { return read_when_served(x, "t3"); }) == snap3);

  // --- a holder down while a snapshot is deleted ---------------------------------------------
  // Node 1 keeps its copy of s3 while it is down; back, it removes that copy as it joins
  // (the cluster recorded s3 as deleted), and keeps its copies of the snapshots that exist,
  // of one being written and of one the cluster never had.
  const std::string snaps1 = c.data_dir(1) + "/snapshots/";
  REQUIRE_OK(n2([&](connection& x) { return x.delete_snapshot("s3"); }));
  CHECK(std::filesystem::exists(snaps1 + "s3/manifest"));
  REQUIRE(std::filesystem::exists(snaps1 + "s2/manifest"));
  // Copies of s2 under other names: "sw", being written, and "sa", which the cluster never
  // had (as a store's own snapshot from before it joined): both stay.
  for (const char* name : {"sw", "sa"}) {
    std::filesystem::copy(snaps1 + "s2", snaps1 + name);
    std::ifstream in(snaps1 + name + "/manifest", std::ios::binary);
    std::string text(std::istreambuf_iterator<char>(in), {});
    const auto at = text.find("\nname s2\n");
    REQUIRE(at != std::string::npos);
    text.replace(at, 9, std::string("\nname ") + name + "\n");
    std::ofstream(snaps1 + name + "/manifest", std::ios::binary | std::ios::trunc) << text;
  }
  auto claimant = c.zk();
  REQUIRE(
      claimant->create(std::string(cluster::layout::snapshot_writes) + "/s_sw", "n9", cluster::create_mode::ephemeral)
          .is_ok());
  {
    // The tombstone of s3 waits for node 1 only: the live nodes dropped their copies.
    auto z = c.zk()->get(cluster::tombstone_znode("s3"));
    REQUIRE(z.is_ok());
    auto entries = cluster::decode_tombstone(z->data);
    REQUIRE(entries.is_ok());
    REQUIRE(entries->size() == 1);
    CHECK((*entries)[0].pending == std::vector<std::string>{"n1"});
  }
  c.start(1);  // returns once it listens, after its join
  CHECK_FALSE(std::filesystem::exists(snaps1 + "s3"));
  {
    // Node 1 swept: no node may hold a copy of a deleted snapshot, so no tombstone is left
    // (of s3, nor of the snapshots deleted while every node was up).
    auto left = c.zk()->children(cluster::layout::snapshot_deleted);
    REQUIRE(left.is_ok());
    CHECK(left->empty());
  }
  CHECK(std::filesystem::exists(snaps1 + "s1/manifest"));
  CHECK(std::filesystem::exists(snaps1 + "s2/manifest"));
  CHECK(std::filesystem::exists(snaps1 + "sw/manifest"));
  CHECK(std::filesystem::exists(snaps1 + "sa/manifest"));
  CHECK(names_of(n2([&](connection& x) { return x.list_snapshots("", ""); })) == std::set<std::string>{"s1", "s2"});
}
