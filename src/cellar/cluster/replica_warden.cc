#include "cluster/replica_warden.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include <absl/time/time.h>

#include "cluster/replica_mover.h"
#include "cluster/snapshot_sweep.h"

namespace cellar::cluster {

replica_warden::replica_warden(cluster_node& node, peer_directory& peers, caf::actor_system& sys,
                               std::chrono::milliseconds dead_node_timeout, move_options moves)
    : node_(node), peers_(peers), sys_(sys), timeout_(dead_node_timeout), moves_(std::move(moves)) {
  moves_.cancelled = [this] { return stopping(); };
  thread_ = std::thread([this] { run(); });
}

replica_warden::~replica_warden() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

std::vector<std::string> replica_warden::notes() const {
  absl::MutexLock lock(&mu_);
  return notes_;
}

bool replica_warden::stopping() const {
  absl::MutexLock lock(&mu_);
  return stop_;
}

void replica_warden::run() {
  // A pass about once a second, sooner for a short timeout.
  const auto period = std::clamp<std::chrono::milliseconds>(timeout_ / 4, std::chrono::milliseconds(100),
                                                            std::chrono::milliseconds(1000));
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      const auto stopped = [this] {
        mu_.AssertHeld();
        return stop_;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopped), absl::FromChrono(period))) return;
    }
    auto notes = pass();
    absl::MutexLock lock(&mu_);
    notes_ = std::move(notes);
  }
}

std::vector<std::string> replica_warden::pass() {
  if (!node_.is_master()) {
    dead_since_.clear();  // a new master starts its clocks afresh
    tombstone_dead_since_.clear();
    return {};
  }
  std::vector<std::string> live;
  for (const auto& m : node_.members()) live.push_back(m.id);
  forget_dead_in_tombstones(live, std::chrono::steady_clock::now());
  auto map = node_.placement();
  if (!map) return {};
  std::set<std::string> holders;
  for (const auto& [table, owners] : map->tables)
    for (const auto& o : owners)
      for (const auto& r : o.replicas) holders.insert(r);
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::string> due;
  for (const auto& h : holders) {
    if (std::find(live.begin(), live.end(), h) != live.end()) continue;
    auto since = dead_since_.emplace(h, now).first->second;
    if (now - since >= timeout_) due.push_back(h);
  }
  for (auto it = dead_since_.begin(); it != dead_since_.end();)
    it = holders.count(it->first) && std::find(live.begin(), live.end(), it->first) == live.end()
             ? std::next(it)
             : dead_since_.erase(it);
  if (due.empty()) return {};

  std::vector<partition_ref> stuck;
  const auto plan = plan_replacements(*map, live, due, &stuck);
  std::vector<std::string> notes;
  for (const auto& p : stuck)
    notes.push_back("partition " + std::to_string(p.index) + " of '" + p.table +
                    "' keeps a replica on a dead node: only " + std::to_string(live.size()) +
                    " live node(s), none outside its replica set");
  const auto is_live = [&](const std::string& n) { return std::find(live.begin(), live.end(), n) != live.end(); };
  for (const auto& mv : plan) {
    if (stopping()) break;
    // A group without a live majority commits no configuration either: it waits for its
    // nodes to return.
    const auto* o = map->owner(mv.partition);
    const auto down = std::count_if(o->replicas.begin(), o->replicas.end(), [&](const auto& n) { return !is_live(n); });
    if (2 * static_cast<std::size_t>(down) >= o->replicas.size()) {
      notes.push_back("partition " + std::to_string(mv.partition.index) + " of '" + mv.partition.table + "' has " +
                      std::to_string(down) + " of its " + std::to_string(o->replicas.size()) +
                      " replicas on dead nodes: without a majority it cannot change its members");
      continue;
    }
    spdlog::info("cellar: node '{}' has been dead over {} s: its replica of partition {} of '{}' goes to '{}'", mv.from,
                 timeout_.count() / 1000.0, mv.partition.index, mv.partition.table, mv.to);
    auto st = run_replica_move(node_, peers_, sys_, mv.partition.table, mv.partition.index, mv.from, mv.to, moves_);
    if (!st) {
      spdlog::warn("cellar: replacing the replica of partition {} of '{}' on dead node '{}': {}", mv.partition.index,
                   mv.partition.table, mv.from, st.to_string());
      notes.push_back("partition " + std::to_string(mv.partition.index) + " of '" + mv.partition.table +
                      "': its replica on dead node '" + mv.from + "' is not replaced yet: " + st.message());
    }
  }
  return notes;
}

void replica_warden::forget_dead_in_tombstones(const std::vector<std::string>& live,
                                               std::chrono::steady_clock::time_point now) {
  auto calls = tombstone_zk_of(node_.zookeeper());
  auto pending = pending_in_tombstones(*calls);
  if (!pending) return;  // ZooKeeper unreachable: the next pass
  std::set<std::string> gone;
  for (const auto& n : *pending) {
    if (std::find(live.begin(), live.end(), n) != live.end()) continue;
    auto since = tombstone_dead_since_.emplace(n, now).first->second;
    if (now - since >= timeout_) gone.insert(n);
  }
  for (auto it = tombstone_dead_since_.begin(); it != tombstone_dead_since_.end();)
    it = pending->count(it->first) && std::find(live.begin(), live.end(), it->first) == live.end()
             ? std::next(it)
             : tombstone_dead_since_.erase(it);
  if (gone.empty()) return;
  if (auto changed = forget_in_tombstones(*calls, gone); !changed)
    spdlog::warn("cellar: the tombstones of deleted snapshots still wait for nodes dead over {} s: {}",
                 timeout_.count() / 1000.0, changed.error().to_string());
  else if (*changed > 0)
    spdlog::info("cellar: {} tombstone(s) of deleted snapshots no longer wait for nodes dead over {} s", *changed,
                 timeout_.count() / 1000.0);
}

}  // namespace cellar::cluster
