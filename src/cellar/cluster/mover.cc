#include "cluster/mover.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <absl/synchronization/mutex.h>

#include "cluster/ask_node.h"
#include "cluster/layout.h"
#include "cluster/replica_mover.h"
#include "cluster/zk_state.h"

namespace cellar::cluster {

using detail::move_reply;
using detail::move_request;

result<std::pair<std::string, std::uint32_t>> parse_partition_name(const std::string& name) {
  const auto slash = name.rfind('/');
  const auto bad = status{code::invalid_argument, "'" + name +
                                                      "' does not name a partition: write TABLE/INDEX as status "
                                                      "'detailed' shows it (e.g. 'blogtable/3')"};
  if (slash == std::string::npos || slash == 0 || slash + 1 == name.size()) return bad;
  std::uint32_t index = 0;
  for (std::size_t i = slash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || index > 100000000) return bad;
    index = index * 10 + static_cast<std::uint32_t>(name[i] - '0');
  }
  return std::make_pair(name.substr(0, slash), index);
}

namespace {

struct mover {
  cluster_node& node;
  peer_directory& peers;
  caf::actor_system& sys;
  const move_options& o;
  std::string table;
  std::uint32_t index;
  std::string from, to;
  std::int64_t session = 0;       // the ZooKeeper session that made the intent
  std::int64_t intent_czxid = 0;  // and the transaction that made it

  std::string where() const { return "partition " + std::to_string(index) + " of '" + table + "'"; }

  // One step at node `n`: its answer; UNAVAILABLE, naming the node, if it does not answer
  // within the step timeout, its endpoint goes down first (the node died, or the connection
  // to it broke), or the move is cancelled (cluster/ask_node.h).
  result<move_reply> ask(const std::string& n, std::uint8_t step, move_request req = {}) {
    auto ep = peers.endpoint(n, o.step_timeout);
    if (!ep) return ep.error();
    auto a = ask_node<move_reply>(sys, *ep, node_move{table, index, step, std::move(req)}, o.step_timeout,
                                  "moving " + where() + ": node '" + n + "' ", o.cancelled);
    if (a.down) peers.forget(n, ep->address());
    if (a.reply && !a.reply->st) return a.reply->st;
    return std::move(a.reply);
  }

  result<move_reply> source(std::uint8_t what, std::string after = {}) {
    move_request r;
    r.what = what;
    r.after = std::move(after);
    r.max_bytes = o.chunk_bytes;
    return ask(from, node_move::on_source, std::move(r));
  }

  status apply(detail::delta_handle cells) {
    move_request r;
    r.what = move_request::apply;
    r.cells = std::move(cells);
    auto a = ask(to, node_move::apply, std::move(r));
    return a ? status::ok() : a.error();
  }

  // Steps 2-4 of mover.h; any error leaves the abort to the caller.
  status transfer() {
    if (auto p = ask(to, node_move::prepare); !p) return p.error();
    if (auto t = source(move_request::track); !t) return t.error();
    std::string after;
    std::uint64_t cells = 0;
    for (;;) {
      auto c = source(move_request::chunk, after);
      if (!c) return c.error();
      cells += c->cells.map->size();
      if (!c->last.empty()) after = c->last;
      const bool done = c->done;
      if (auto st = apply(std::move(c->cells)); !st) return st;
      if (done) break;
    }
    for (int round = 0; round < o.max_catch_up; ++round) {
      auto d = source(move_request::cut);
      if (!d) return d.error();
      const auto n = d->cells.map->size();
      if (auto st = apply(std::move(d->cells)); !st) return st;
      if (n <= o.small_delta) break;
    }
    // Most of the copy goes to B's files now, so the freeze below waits only for the last
    // delta's.
    if (auto f = ask(to, node_move::finish); !f) return f.error();
    auto last = source(move_request::freeze);
    if (!last) return last.error();
    if (auto st = apply(std::move(last->cells)); !st) return st;
    if (auto f = ask(to, node_move::finish); !f) return f.error();
    spdlog::info("cellar: {} copied from '{}' to '{}' ({} cells, then the changes made meanwhile)", where(), from, to,
                 cells);
    return status::ok();
  }

  // The flip: the map and the intent's deletion in one multi, compare-and-set on the map.
  result<std::uint64_t> flip(const std::string& intent) {
    auto& zk = node.zookeeper();
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto pl = read_placement(zk);
      if (!pl) return pl.error();
      auto moved = apply_move(pl->map, {table, index}, to);
      if (!moved) return moved.error();
      // The intent check compares versions only, and a move of the same partition that
      // started after this node's session ended has an intent of version 0 too: a flip in
      // another session than the intent's would take that move's partition.
      if (zk.session_id() != session)
        return status{code::unavailable, "the ZooKeeper session of node '" + node.self().id +
                                             "' changed during the move of " + where() + ": aborted"};
      auto done = zk.multi({zk_op::check(intent, 0), placement_op(*pl, *moved), zk_op::remove(intent)});
      if (done) return moved->epoch;
      auto still = zk.exists(intent);
      if (still && !still->has_value()) {
        // The multi may have committed although its answer was lost (a connection loss):
        // then the map already gives the partition to `to`, and aborting would drop the
        // only copy that now serves.
        if (auto now = read_placement(zk); now) {
          const auto* o = now->map.owner({table, index});
          if (o && o->node == to) return now->map.epoch;
        }
        return status{code::unavailable, "the intent of the move of " + where() + " is gone (the session of node '" +
                                             node.self().id + "' ended): aborted"};
      }
      if (done.code() != code::conflict) return done.error();
    }
    return status{code::conflict, "the placement map kept changing; the move of " + where() + " was aborted"};
  }

  void abort(const std::string& intent) {
    (void)source(move_request::abort);
    (void)ask(to, node_move::drop);
    // Only this move's intent: once its session ended, the intent there may be another move's.
    auto& zk = node.zookeeper();
    if (auto now = zk.exists(intent); now && now->has_value() && (*now)->czxid == intent_czxid)
      (void)zk.remove(intent, (*now)->version);
  }
};

}  // namespace

status run_move(cluster_node& node, peer_directory& peers, caf::actor_system& sys, const std::string& table,
                std::uint32_t index, const std::string& to, const move_options& o) {
  auto& zk = node.zookeeper();
  auto pl = read_placement(zk);
  if (!pl) return pl.error();
  if (!pl->map.tables.count(table)) {
    if (!node.catalog()->find(table)) return {code::table_not_found, "table '" + table + "' does not exist"};
    return {code::not_found, "table '" + table + "' has no partitions to move"};
  }
  const auto* owner = pl->map.owner({table, index});
  if (!owner)
    return {code::not_found, "table '" + table + "' has no partition " + std::to_string(index) + " (it has " +
                                 std::to_string(pl->map.tables.at(table).size()) + ")"};
  auto live = zk.children(layout::nodes);
  if (!live) return live.error();
  auto is_live = [&](const std::string& n) { return std::find(live->begin(), live->end(), n) != live->end(); };
  if (!is_live(to)) return {code::not_found, "node '" + to + "' is not a live member of the cluster"};
  if (owner->replicated()) {
    // Its preferred leader's replica moves, by Raft membership change.
    if (owner->holds(to)) return status::ok();
    return run_replica_move(node, peers, sys, table, index, owner->node, to, o);
  }
  mover m{node, peers, sys, o, table, index, owner->node, to};
  if (m.from == to) return status::ok();
  if (!is_live(m.from))
    return {code::unavailable, m.where() + " is on node '" + m.from + "', which is down: it cannot be moved"};

  if (auto st = zk.ensure_path(layout::moves); !st) return st;
  const std::string intent = layout::move_intent(table, index);
  m.session = zk.session_id();
  auto created = zk.create(intent, m.from + " " + to, create_mode::ephemeral);
  if (!created) {
    if (created.code() == code::already_exists) return {code::conflict, "another move of " + m.where() + " is running"};
    return created.error();
  }
  if (auto made = zk.exists(intent); made && made->has_value()) m.intent_czxid = (*made)->czxid;
  spdlog::info("cellar: moving {} from '{}' to '{}'", m.where(), m.from, to);
  if (auto st = m.transfer(); !st) {
    m.abort(intent);
    spdlog::warn("cellar: the move of {} to '{}' was aborted: {}", m.where(), to, st.to_string());
    return {st.code(), "the move of " + m.where() + " to node '" + to + "' was aborted: " + st.message()};
  }
  auto epoch = m.flip(intent);
  if (!epoch) {
    m.abort(intent);
    return epoch.error();
  }
  spdlog::info("cellar: {} moved from '{}' to '{}' (placement epoch {})", m.where(), m.from, to, *epoch);
  return status::ok();
}

status run_move_from(cluster_node& node, peer_directory& peers, caf::actor_system& sys, const std::string& table,
                     std::uint32_t index, const std::string& from, const std::string& to, const move_options& o) {
  auto pl = read_placement(node.zookeeper());
  if (!pl) return pl.error();
  const auto* owner = pl->map.owner({table, index});
  if (owner && !owner->replicated()) {
    if (owner->node != from)
      return {code::invalid_argument, "node '" + from + "' does not hold partition " + std::to_string(index) + " of '" +
                                          table + "' ('" + owner->node + "' does)"};
    return run_move(node, peers, sys, table, index, to, o);
  }
  // The table, the partition, `from`, `to` and its liveness are checked there, by the map it reads.
  return run_replica_move(node, peers, sys, table, index, from, to, o);
}

namespace {

// The changes of preferred leader that plan_leader_transfers() finds on the map now, one
// after the other; how many ran.
result<std::uint32_t> balance_leaders(cluster_node& node, peer_directory& peers, caf::actor_system& sys,
                                      const move_options& o) {
  auto& zk = node.zookeeper();
  auto pl = read_placement(zk);
  if (!pl) return pl.error();
  auto live = zk.children(layout::nodes);
  if (!live) return live.error();
  move_options quick = o;
  quick.await_leader = false;  // the handovers run side by side, on the replicas' nodes
  const auto plan = plan_leader_transfers(pl->map, *live);
  std::uint32_t done = 0;
  for (const auto& t : plan) {
    if (auto st = run_leader_transfer(node, peers, sys, t.partition.table, t.partition.index, t.to, quick); !st)
      return status{st.code(), st.message() + " (the balancer had changed " + std::to_string(done) + " of its " +
                                   std::to_string(plan.size()) + " preferred leaders)"};
    ++done;
  }
  return done;
}

}  // namespace

result<std::uint32_t> run_balance(cluster_node& node, peer_directory& peers, caf::actor_system& sys,
                                  const move_options& o, balance_stats* stats) {
  auto& zk = node.zookeeper();
  auto pl = read_placement(zk);
  if (!pl) return pl.error();
  auto live = zk.children(layout::nodes);
  if (!live) return live.error();
  struct balance_move {
    planned_move mv;
    bool replica = false;  // one replica of a replicated partition (run_replica_move)
  };
  std::deque<balance_move> todo;
  for (auto& mv : plan_balance(pl->map, *live)) todo.push_back({std::move(mv), false});
  for (auto& mv : plan_replica_balance(pl->map, *live)) todo.push_back({std::move(mv), true});
  const std::size_t planned = todo.size();

  // Up to o.parallel_moves at once, one per source node, and the moves of one partition
  // one after the other in the plan's order (a partition may move twice, the second move
  // planned on the set the first leaves); after a failure none starts.
  struct slots {
    absl::Mutex mu;
    std::set<std::string> sources ABSL_GUARDED_BY(mu);       // the source nodes of the moves running
    std::set<partition_ref> partitions ABSL_GUARDED_BY(mu);  // and their partitions
    std::uint32_t running ABSL_GUARDED_BY(mu) = 0;
    std::uint32_t done ABSL_GUARDED_BY(mu) = 0;
    std::optional<status> failed ABSL_GUARDED_BY(mu);
  } sl;
  std::vector<std::thread> threads;
  const std::uint32_t most = std::max<std::uint32_t>(1, o.parallel_moves);
  // The first move of `todo` that may start now, or todo.end().
  const auto startable = [&] {
    sl.mu.AssertHeld();
    std::set<partition_ref> earlier;  // the partitions of the moves before it
    for (auto it = todo.begin(); it != todo.end(); ++it) {
      const auto& mv = it->mv;
      if (!sl.sources.count(mv.from) && !sl.partitions.count(mv.partition) && !earlier.count(mv.partition)) return it;
      earlier.insert(mv.partition);
    }
    return todo.end();
  };
  // A move may start (one of `todo` is startable and a slot is free), or none will.
  const auto can_start = [&] {
    sl.mu.AssertHeld();
    if (sl.failed || todo.empty()) return true;
    return sl.running < most && startable() != todo.end();
  };
  const auto all_ended = [&] {
    sl.mu.AssertHeld();
    return sl.running == 0;
  };
  sl.mu.Lock();
  while (true) {
    sl.mu.Await(absl::Condition(&can_start));
    if (sl.failed || todo.empty()) break;
    auto next = startable();
    balance_move bm = std::move(*next);
    todo.erase(next);
    sl.sources.insert(bm.mv.from);
    sl.partitions.insert(bm.mv.partition);
    ++sl.running;
    if (stats) stats->most_at_once = std::max(stats->most_at_once, sl.running);
    threads.emplace_back([&, bm = std::move(bm)] {
      const auto& mv = bm.mv;
      auto st = bm.replica
                    ? run_replica_move(node, peers, sys, mv.partition.table, mv.partition.index, mv.from, mv.to, o)
                    : run_move(node, peers, sys, mv.partition.table, mv.partition.index, mv.to, o);
      absl::MutexLock l(&sl.mu);
      sl.sources.erase(mv.from);
      sl.partitions.erase(mv.partition);
      --sl.running;
      if (st)
        ++sl.done;
      else if (!sl.failed)
        sl.failed = st;
    });
  }
  sl.mu.Await(absl::Condition(&all_ended));
  const std::uint32_t done = sl.done;
  const std::optional<status> failed = sl.failed;
  sl.mu.Unlock();
  for (auto& t : threads) t.join();
  if (failed)
    return status{failed->code(), failed->message() + " (the balancer had done " + std::to_string(done) + " of its " +
                                      std::to_string(planned) + " moves)"};
  auto leaders = balance_leaders(node, peers, sys, o);
  if (!leaders) return leaders.error();
  return done + *leaders;
}

}  // namespace cellar::cluster
