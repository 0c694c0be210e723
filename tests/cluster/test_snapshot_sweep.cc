// The tombstones of deleted named snapshots and a node's sweep of its copies
// (cluster/snapshot_sweep.h), against the test ZooKeeper and a memory-only snapshot
// repository.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/layout.h"
#include "cluster/snapshot_sweep.h"
#include "cluster_test.h"
#include "store/snapshot_files.h"

using namespace cellar;
using namespace cellar::cluster;
using detail::snapshot_manifest;

namespace {

snapshot_manifest manifest_of(const std::string& name, std::int64_t created) {
  snapshot_manifest m;
  m.name = name;
  m.table = "t";
  m.created_unix_ms = created;
  m.partitions = 1;
  m.families[1] = "f";
  m.files["part-00000.cells"] = {3, 1, 7};
  m.files["schema"] = {1, 0, 9};
  return m;
}

// A copy of `m` in `repo`.
void hold(detail::snapshot_repo& repo, const snapshot_manifest& m) {
  REQUIRE_OK(repo.put(m, {{"part-00000.cells", "abc"}, {"schema", "s"}}));
}

bool holds(const detail::snapshot_repo& repo, const std::string& name) { return repo.manifest(name).is_ok(); }

// The tombstone of `name` as ZooKeeper holds it; empty when there is none.
std::vector<tombstone_entry> tombstone(zk_client& zk, const std::string& name) {
  auto z = zk.get(tombstone_znode(name));
  if (!z && z.error().code() == code::not_found) return {};
  REQUIRE_OK(z);
  auto d = decode_tombstone(z->data);
  REQUIRE_OK(d);
  return *d;
}

std::vector<std::string> pending_of(const std::vector<tombstone_entry>& entries, std::int64_t created) {
  for (const auto& e : entries)
    if (e.m.created_unix_ms == created) return e.pending;
  return {};
}

// A ZooKeeper server that lags: reads see the state under `stale` (what the server had
// applied) until a sync, then the state under `current`; writes go to `current`. Records
// each call.
class lagging_zk final : public tombstone_zk {
 public:
  lagging_zk(zk_client& stale, zk_client& current) : stale_(stale), current_(current) {}
  std::vector<std::string> calls;

  status sync(const std::string& path) override {
    calls.push_back("sync");
    synced_ = true;
    return current_.sync(path);
  }
  status ensure_path(const std::string& path) override { return current_.ensure_path(path); }
  result<std::vector<std::string>> children(const std::string& path) override {
    calls.push_back("children " + path);
    return read().children(path);
  }
  result<znode> get(const std::string& path) override {
    calls.push_back("get " + path);
    return read().get(path);
  }
  result<std::optional<znode_stat>> exists(const std::string& path) override {
    calls.push_back("exists " + path);
    return read().exists(path);
  }
  result<std::string> create(const std::string& path, std::string_view data) override {
    return current_.create(path, data);
  }
  result<znode_stat> set(const std::string& path, std::string_view data, std::int32_t version) override {
    return current_.set(path, data, version);
  }
  status remove(const std::string& path, std::int32_t version) override { return current_.remove(path, version); }

 private:
  zk_client& read() { return synced_ ? current_ : stale_; }
  zk_client& stale_;
  zk_client& current_;
  bool synced_ = false;
};

}  // namespace

TEST_CASE("a snapshot tombstone's entries round-trip; a malformed one is refused", "[snapshot_sweep]") {
  std::vector<tombstone_entry> entries{{{"n1", "n2"}, manifest_of("s", 1)}, {{"n3"}, manifest_of("s", 2)}};
  const std::string data = encode_tombstone(entries);
  auto back = decode_tombstone(data);
  REQUIRE_OK(back);
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].pending == std::vector<std::string>{"n1", "n2"});
  CHECK(detail::encode_manifest((*back)[0].m) == detail::encode_manifest(entries[0].m));
  CHECK((*back)[1].pending == std::vector<std::string>{"n3"});
  CHECK(detail::encode_manifest((*back)[1].m) == detail::encode_manifest(entries[1].m));
  REQUIRE_OK(decode_tombstone(""));  // no entries
  CHECK(decode_tombstone(data.substr(0, data.size() - 5)).code() == code::corruption);
  CHECK(decode_tombstone(detail::encode_manifest(entries[0].m)).code() == code::corruption);
}

TEST_CASE("a tombstone goes once no node may still hold a copy of what it records", "[snapshot_sweep]") {
  const auto chroot = zktest::fresh_chroot("tombstones");
  auto zk = zktest::connect(chroot);
  auto calls = tombstone_zk_of(*zk);
  const auto first = manifest_of("s", 1);
  const auto second = manifest_of("s", 2);  // the name taken and deleted again
  REQUIRE_OK(mark_deleted(*calls, first, {"n1", "n2", "n3"}));
  REQUIRE_OK(mark_swept(*calls, first, {"n1", "n3"}));  // they dropped their files
  CHECK(pending_of(tombstone(*zk, "s"), 1) == std::vector<std::string>{"n2"});
  REQUIRE_OK(mark_deleted(*calls, second, {"n2", "n3"}));
  REQUIRE(tombstone(*zk, "s").size() == 2);
  auto pending = pending_in_tombstones(*calls);
  REQUIRE_OK(pending);
  CHECK(*pending == std::set<std::string>{"n2", "n3"});
  // n2 swept the first incarnation: its entry goes, the second's stays.
  REQUIRE_OK(mark_swept(*calls, first, {"n2"}));
  auto left = tombstone(*zk, "s");
  REQUIRE(left.size() == 1);
  CHECK(left[0].m.created_unix_ms == 2);
  REQUIRE_OK(mark_swept(*calls, first, {"n2"}));  // no such entry any more: nothing changes
  CHECK(tombstone(*zk, "s").size() == 1);
  // n3 leaves the cluster (counts as swept), then n2 sweeps: the tombstone goes.
  auto forgot = forget_in_tombstones(*calls, {"n3", "n9"});
  REQUIRE_OK(forgot);
  CHECK(*forgot == 1);
  CHECK(pending_of(tombstone(*zk, "s"), 2) == std::vector<std::string>{"n2"});
  REQUIRE_OK(mark_swept(*calls, second, {"n2"}));
  auto e = zk->exists(tombstone_znode("s"));
  REQUIRE_OK(e);
  CHECK_FALSE(*e);
  // Deleted with every node's drop confirmed at once: no tombstone is left.
  REQUIRE_OK(mark_deleted(*calls, manifest_of("t", 3), {"n1"}));
  REQUIRE_OK(mark_swept(*calls, manifest_of("t", 3), {"n1"}));
  auto names = zk->children(layout::snapshot_deleted);
  REQUIRE_OK(names);
  CHECK(names->empty());
}

TEST_CASE("a node's sweep removes its copies of deleted snapshots only, and takes itself out of their tombstones",
          "[snapshot_sweep]") {
  const auto chroot = zktest::fresh_chroot("snapshot-sweep");
  auto zk = zktest::connect(chroot);
  auto calls = tombstone_zk_of(*zk);
  detail::snapshot_repo repo("");
  // Copies: of deleted snapshots ("gone", "gone2": the latter's tombstone does not name this
  // node, which got the copy after the delete was recorded), of one that exists ("named",
  // whose name an earlier incarnation had),
  // of a deleted one being written again ("claimed"), of one whose tombstone records
  // another incarnation ("other"), and of one the cluster has no record of ("unknown").
  for (const char* name : {"gone", "gone2", "named", "claimed", "unknown"}) hold(repo, manifest_of(name, 1));
  hold(repo, manifest_of("other", 1));
  REQUIRE_OK(mark_deleted(*calls, manifest_of("gone", 1), {"n1", "n2"}));
  REQUIRE_OK(mark_deleted(*calls, manifest_of("gone2", 1), {"n2"}));
  REQUIRE_OK(mark_deleted(*calls, manifest_of("named", 0), {"n1"}));  // an incarnation before
  REQUIRE_OK(mark_deleted(*calls, manifest_of("claimed", 1), {"n1"}));
  REQUIRE_OK(mark_deleted(*calls, manifest_of("other", 2), {"n1"}));
  REQUIRE_OK(mark_deleted(*calls, manifest_of("never", 1), {"n1"}));  // a copy this node never got
  REQUIRE_OK(zk->ensure_path(layout::snapshots));
  REQUIRE_OK(zk->create(std::string(layout::snapshots) + "/s_named", "holders n1\n"));
  REQUIRE_OK(zk->ensure_path(layout::snapshot_writes));
  REQUIRE_OK(zk->create(std::string(layout::snapshot_writes) + "/s_claimed", "n3", create_mode::ephemeral));

  REQUIRE_OK(sweep_snapshot_copies(*calls, repo, "n1"));
  CHECK_FALSE(holds(repo, "gone"));
  CHECK_FALSE(holds(repo, "gone2"));
  CHECK(holds(repo, "named"));
  CHECK(holds(repo, "claimed"));
  CHECK(holds(repo, "other"));
  CHECK(holds(repo, "unknown"));
  // n1 is out of every entry whose copy it no longer holds; "claimed" still waits for it.
  CHECK(pending_of(tombstone(*zk, "gone"), 1) == std::vector<std::string>{"n2"});
  CHECK(pending_of(tombstone(*zk, "gone2"), 1) == std::vector<std::string>{"n2"});
  CHECK(tombstone(*zk, "named").empty());
  CHECK(pending_of(tombstone(*zk, "claimed"), 1) == std::vector<std::string>{"n1"});
  CHECK(tombstone(*zk, "other").empty());  // n1 holds another incarnation, not this one
  CHECK(tombstone(*zk, "never").empty());

  // The write ends without a snapshot: the next sweep removes the copy and the tombstone.
  REQUIRE_OK(zk->remove(std::string(layout::snapshot_writes) + "/s_claimed"));
  REQUIRE_OK(sweep_snapshot_copies(*calls, repo, "n1"));
  CHECK_FALSE(holds(repo, "claimed"));
  CHECK(tombstone(*zk, "claimed").empty());
  CHECK(holds(repo, "unknown"));
}

TEST_CASE("a sweep syncs before it reads: a lagging server's view does not hide a tombstone",
          "[snapshot_sweep][sync]") {
  // One ZooKeeper server never lags, so the lag is played: `stale` is what the server this
  // session reads had applied (no tombstone yet), `current` what the ensemble committed.
  auto stale = zktest::connect(zktest::fresh_chroot("sweep-stale"));
  auto current = zktest::connect(zktest::fresh_chroot("sweep-current"));
  auto calls = tombstone_zk_of(*current);
  REQUIRE_OK(mark_deleted(*calls, manifest_of("gone", 1), {"n1"}));
  detail::snapshot_repo repo("");
  hold(repo, manifest_of("gone", 1));
  lagging_zk lagging(*stale, *current);
  REQUIRE_OK(sweep_snapshot_copies(lagging, repo, "n1"));
  CHECK_FALSE(holds(repo, "gone"));
  CHECK(tombstone(*current, "gone").empty());
  REQUIRE_FALSE(lagging.calls.empty());
  CHECK(lagging.calls.front() == "sync");  // before any read
}
