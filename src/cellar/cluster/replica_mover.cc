#include "cluster/replica_mover.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "cluster/ask_node.h"
#include "cluster/layout.h"
#include "cluster/zk_state.h"
#include "replica/group.h"

namespace cellar::cluster {

namespace {

struct replica_mover {
  cluster_node& node;
  peer_directory& peers;
  caf::actor_system& sys;
  const move_options& o;
  std::string table;
  std::uint64_t uid = 0;
  std::uint32_t index = 0;
  std::string from, to;
  partition_owner owner;  // as the map said when the move began
  std::uint64_t from_id = 0, to_id = 0;
  std::string leader_hint;   // the node whose replica led last
  std::int64_t session = 0;  // the ZooKeeper session that made the intent

  std::string where() const { return "partition " + std::to_string(index) + " of '" + table + "'"; }
  bool cancelled() const { return o.cancelled && o.cancelled(); }

  node_member step(std::uint8_t what, std::uint64_t id = 0, std::string address = {}) const {
    return node_member{table, uid, index, what, id, std::move(address)};
  }

  // One step at node `n`: its answer; UNAVAILABLE, naming the node, if it does not answer
  // within `timeout`, its endpoint goes away first or the move is cancelled: a cancelled
  // move does not wait for a long step such as a catch-up (cluster/ask_node.h).
  node_member_reply ask(const std::string& n, node_member m, std::chrono::milliseconds timeout) {
    auto ep = peers.endpoint(n, o.step_timeout);
    if (!ep) return {ep.error(), {}};
    auto a = ask_node<node_member_reply>(sys, *ep, std::move(m), timeout,
                                         "changing the replicas of " + where() + ": node '" + n + "' ", o.cancelled);
    if (!a.reply) return {a.reply.error(), {}};
    return std::move(*a.reply);
  }

  // The nodes to ask for the leader: the one that led last, then the set and `to`.
  std::vector<std::string> candidates() const {
    std::vector<std::string> out;
    if (!leader_hint.empty()) out.push_back(leader_hint);
    for (const auto& n : owner.replicas)
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    if (std::find(out.begin(), out.end(), to) == out.end()) out.push_back(to);
    return out;
  }

  // Asks `m` (add or remove) of the group's leader, following NOT_LEADER, and again while
  // no leader is known, another change runs or the leader changed mid-way (each change is
  // idempotent), within `budget`.
  status ask_leader(const node_member& m, std::chrono::milliseconds budget) {
    const auto deadline = std::chrono::steady_clock::now() + budget;
    status last{code::unavailable, "no replica of " + where() + " could be asked"};
    std::size_t next = 0;
    while (std::chrono::steady_clock::now() < deadline && !cancelled()) {
      const auto nodes = candidates();
      const std::string n = leader_hint.empty() ? nodes[next++ % nodes.size()] : leader_hint;
      auto r = ask(n, m, o.change_timeout);
      if (r.st) {
        leader_hint = n;
        return status::ok();
      }
      last = r.st;
      const auto named = replica::leader_address_in(r.st);
      if (r.st.code() == code::not_leader && !named.empty() && named != n) {
        leader_hint = named;
        continue;
      }
      leader_hint.clear();
      if (r.st.code() != code::not_leader && r.st.code() != code::unavailable && r.st.code() != code::conflict &&
          r.st.code() != code::not_found)
        return r.st;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // an election or a change under way
    }
    return last;
  }

  // What the leader's configuration says of `from` and `to` (from its report).
  struct survey {
    bool known = false;       // a leader answered
    bool from_in = false;     // `from` is a member
    std::uint64_t stale = 0;  // `to`'s id, when it is a member already (an earlier attempt)
    bool to_voter = false;
  };
  survey look() {
    survey out;
    for (const auto& n : candidates()) {
      auto r = ask(n, step(node_member::report), o.step_timeout);
      if (!r.st || r.report.role != "leader") continue;
      leader_hint = n;
      out.known = true;
      auto members = r.report.peers;
      members.push_back({r.report.leader, r.report.last_index, true});
      for (const auto& p : members) {
        to_id = std::max(to_id, p.who.id + 1);
        if (p.who.address == from && p.who.id == from_id) out.from_in = true;
        if (p.who.address == to) {
          out.stale = p.who.id;
          out.to_voter = p.voter;
        }
      }
      return out;
    }
    return out;
  }

  // Every replica (and `to`'s) prefers `id` as leader; a node that does not answer is skipped.
  void prefer(std::uint64_t id) {
    for (const auto& n : candidates()) (void)ask(n, step(node_member::prefer, id), o.step_timeout);
  }

  // Steps 2-5 of replica_mover.h; any error leaves the rollback to the caller.
  status change(std::uint64_t stale) {
    if (stale != 0) {
      // A member on `to` that an earlier attempt left: its state may be gone, and a voter
      // must not lose what it acknowledged, so it leaves and `to` joins afresh.
      if (auto st = ask_leader(step(node_member::remove, stale), o.change_timeout); !st) return st;
      (void)ask(to, step(node_member::leave), o.step_timeout);
    }
    // A replica stopping on `to` (left, or dropped by the map) answers CONFLICT until gone.
    node_member_reply j;
    for (int attempt = 0; attempt < 50 && !cancelled(); ++attempt) {
      j = ask(to, step(node_member::join, to_id), o.step_timeout);
      if (j.st.code() != code::conflict) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!j.st) return j.st;
    if (auto st = ask_leader(step(node_member::add, to_id, to), o.change_timeout); !st) return st;
    spdlog::info("cellar: the replica of {} on '{}' (Raft id {}) caught up and votes", where(), to, to_id);
    if (from == owner.node) prefer(to_id);
    return ask_leader(step(node_member::remove, from_id), o.change_timeout);
  }

  void roll_back() {
    if (from == owner.node) prefer(from_id);
    if (auto st = ask_leader(step(node_member::remove, to_id), o.change_timeout); !st)
      spdlog::warn("cellar: rolling back the move of {}: replica {} on '{}' could not be removed from the group: {}",
                   where(), to_id, to, st.to_string());
    (void)ask(to, step(node_member::leave), o.step_timeout);
  }

  // The flip: the new set and the intent's deletion in one multi, compare-and-set on the map.
  status flip(const std::string& intent) {
    auto& zk = node.zookeeper();
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto pl = read_placement(zk);
      if (!pl) return pl.error();
      auto moved = replace_replica(pl->map, {table, index}, from, to, to_id);
      if (!moved) return moved.error();
      if (zk.session_id() != session)
        return status{code::unavailable,
                      "the ZooKeeper session of node '" + node.self().id + "' changed during the move of " + where()};
      auto done = zk.multi({zk_op::check(intent, 0), placement_op(*pl, *moved), zk_op::remove(intent)});
      if (done) return status::ok();
      if (auto now = read_placement(zk); now) {
        const auto* o2 = now->map.owner({table, index});
        if (o2 && o2->holds(to) && !o2->holds(from)) return status::ok();  // committed, its answer lost
      }
      if (done.code() != code::conflict) return done.error();
    }
    return status{code::conflict, "the placement map kept changing during the move of " + where()};
  }
};

// What a hand-run change of a partition's replicas starts from: the placement map as read,
// the table's uid and the partition's owner in that map.
struct move_subject {
  placement_read pl;
  std::uint64_t uid = 0;
  partition_owner owner;
};

result<move_subject> find_subject(cluster_node& node, const std::string& table, std::uint32_t index) {
  auto pl = read_placement(node.zookeeper());
  if (!pl) return pl.error();
  const auto* cs = node.catalog() ? node.catalog()->find(table) : nullptr;
  if (!cs || !pl->map.tables.count(table)) return status{code::table_not_found, "table '" + table + "' does not exist"};
  const auto* owner = pl->map.owner({table, index});
  if (!owner) return status{code::not_found, "table '" + table + "' has no partition " + std::to_string(index)};
  partition_owner copy = *owner;
  return move_subject{std::move(*pl), cs->uid, std::move(copy)};
}

// OK when `node` is a live member of the cluster, else NOT_FOUND naming it.
status check_live(zk_client& zk, const std::string& node) {
  auto live = zk.children(layout::nodes);
  if (!live) return live.error();
  if (std::find(live->begin(), live->end(), node) == live->end())
    return {code::not_found, "node '" + node + "' is not a live member of the cluster"};
  return status::ok();
}

}  // namespace

status run_replica_move(cluster_node& node, peer_directory& peers, caf::actor_system& sys, const std::string& table,
                        std::uint32_t index, const std::string& from, const std::string& to, const move_options& o) {
  auto& zk = node.zookeeper();
  auto subject = find_subject(node, table, index);
  if (!subject) return subject.error();
  const partition_owner* owner = &subject->owner;
  replica_mover m{node, peers, sys, o, table, subject->uid, index, from, to, *owner};
  if (!owner->replicated()) return {code::invalid_argument, m.where() + " is not replicated"};
  const auto at = std::find(owner->replicas.begin(), owner->replicas.end(), from);
  if (at == owner->replicas.end())
    return {code::invalid_argument, "node '" + from + "' holds no replica of " + m.where()};
  if (owner->holds(to))
    return {code::invalid_argument, "node '" + to + "' holds a replica of " + m.where() + " already"};
  if (auto st = check_live(zk, to); !st) return st;
  m.from_id = owner->replica_id(static_cast<std::size_t>(at - owner->replicas.begin()));

  if (auto st = zk.ensure_path(layout::moves); !st) return st;
  const std::string intent = layout::move_intent(table, index);
  m.session = zk.session_id();
  auto created = zk.create(intent, from + " " + to, create_mode::ephemeral);
  if (!created) {
    if (created.code() == code::already_exists) return {code::conflict, "another move of " + m.where() + " is running"};
    return created.error();
  }
  std::int64_t czxid = 0;
  if (auto made = zk.exists(intent); made && made->has_value()) czxid = (*made)->czxid;
  const auto drop_intent = [&] {
    if (auto now = zk.exists(intent); now && now->has_value() && (*now)->czxid == czxid)
      (void)zk.remove(intent, (*now)->version);
  };
  m.to_id = owner->next_replica_id();
  const auto seen = m.look();
  status st;
  if (seen.known && seen.stale != 0 && seen.to_voter && !seen.from_in) {
    // An earlier run of this move changed the group but could not write the map: finish it.
    m.to_id = seen.stale;
    spdlog::info("cellar: the replica of {} moved from '{}' to '{}' in its group already: writing the map", m.where(),
                 from, to);
  } else {
    spdlog::info("cellar: moving the replica of {} from '{}' to '{}' (Raft id {}) by membership change", m.where(),
                 from, to, m.to_id);
    st = m.change(seen.stale);
  }
  if (st) {
    // `from` has left the group: rolling back now would leave it a replica short. Running
    // the same move again finishes it (each step finds itself done).
    if (st = m.flip(intent); !st) {
      drop_intent();
      spdlog::error(
          "cellar: the replica of {} moved from '{}' to '{}' in its group, but the map could not be "
          "written: {}",
          m.where(), from, to, st.to_string());
      return {code::unavailable, "the replica of " + m.where() + " moved from '" + from + "' to '" + to +
                                     "' in its Raft group, but the placement map could not be written (" +
                                     st.message() + "): run the move again to finish it"};
    }
  } else {
    m.roll_back();
    drop_intent();
    spdlog::warn("cellar: the move of the replica of {} to '{}' was rolled back: {}", m.where(), to, st.to_string());
    return {code::unavailable, "the move of the replica of " + m.where() + " from '" + from + "' to '" + to +
                                   "' was rolled back: " + st.message()};
  }
  spdlog::info("cellar: the replica of {} moved from '{}' to '{}'", m.where(), from, to);
  return status::ok();
}

status run_leader_transfer(cluster_node& node, peer_directory& peers, caf::actor_system& sys, const std::string& table,
                           std::uint32_t index, const std::string& to, const move_options& o) {
  auto& zk = node.zookeeper();
  auto subject = find_subject(node, table, index);
  if (!subject) return subject.error();
  const partition_owner* owner = &subject->owner;
  replica_mover m{node, peers, sys, o, table, subject->uid, index, owner->node, to, *owner};
  if (auto checked = prefer_replica(subject->pl.map, {table, index}, to); !checked) return checked.error();
  if (auto st = check_live(zk, to); !st) return st;
  if (owner->node != to) {
    // The move intent keeps a move of the partition from running meanwhile, and this change
    // from running during one.
    if (auto st = zk.ensure_path(layout::moves); !st) return st;
    const std::string intent = layout::move_intent(table, index);
    const auto session = zk.session_id();
    auto created = zk.create(intent, owner->node + " " + to, create_mode::ephemeral);
    if (!created) {
      if (created.code() == code::already_exists)
        return {code::conflict, "a move of " + m.where() + " is running; transfer its leader once it is done"};
      return created.error();
    }
    std::int64_t czxid = 0;
    if (auto made = zk.exists(intent); made && made->has_value()) czxid = (*made)->czxid;
    status st{code::conflict, "the placement map kept changing during the leader transfer of " + m.where()};
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto now = read_placement(zk);
      if (!now) {
        st = now.error();
        break;
      }
      auto moved = prefer_replica(now->map, {table, index}, to);
      if (!moved) {
        st = moved.error();
        break;
      }
      if (moved->epoch == now->map.epoch) {  // `to` is first already
        st = status::ok();
        break;
      }
      if (zk.session_id() != session) {
        st = {code::unavailable, "the ZooKeeper session of node '" + node.self().id +
                                     "' changed during the leader transfer of " + m.where()};
        break;
      }
      auto done = zk.multi({zk_op::check(intent, 0), placement_op(*now, *moved), zk_op::remove(intent)});
      if (done) {
        st = status::ok();
        break;
      }
      if (auto again = read_placement(zk); again) {
        const auto* o2 = again->map.owner({table, index});
        if (o2 && o2->node == to) {  // committed, its answer lost
          st = status::ok();
          break;
        }
      }
      if (done.code() != code::conflict) {
        st = done.error();
        break;
      }
    }
    if (auto left = zk.exists(intent); left && left->has_value() && (*left)->czxid == czxid)
      (void)zk.remove(intent, (*left)->version);
    if (!st) return st;
    spdlog::info("cellar: '{}' is the preferred leader of {} (it was '{}')", to, m.where(), owner->node);
  }
  if (!o.await_leader) return status::ok();
  // Every node applies the map and tells its replica; the leader hands over once the log of
  // `to`'s replica matches its own.
  const auto until = std::chrono::steady_clock::now() + o.step_timeout;
  while (std::chrono::steady_clock::now() < until && !m.cancelled()) {
    auto r = m.ask(to, m.step(node_member::report), o.step_timeout);
    if (r.st && r.report.role == "leader") return status::ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a handover under way
  }
  spdlog::info("cellar: the replica of {} on '{}' does not lead yet; it will once its log matches the leader's",
               m.where(), to);
  return status::ok();
}

}  // namespace cellar::cluster
