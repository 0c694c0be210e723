#include "cluster/placement.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <tuple>

#include "persist/codec.h"

namespace cellar::cluster {

const partition_owner* placement_map::owner(const partition_ref& p) const {
  auto it = tables.find(p.table);
  if (it == tables.end() || p.index >= it->second.size()) return nullptr;
  return &it->second[p.index];
}

bool partition_owner::holds(std::string_view n) const {
  if (replicas.empty()) return node == n;
  return std::find(replicas.begin(), replicas.end(), n) != replicas.end();
}

std::uint64_t partition_owner::next_replica_id() const {
  std::uint64_t most = replicas.size();
  for (auto id : replica_ids) most = std::max(most, id);
  return most + 1;
}

std::map<std::string, std::uint32_t> placement_map::load() const {
  std::map<std::string, std::uint32_t> out;
  for (const auto& [table, owners] : tables)
    for (const auto& o : owners) {
      if (o.replicas.empty()) ++out[o.node];
      for (const auto& r : o.replicas) ++out[r];
    }
  return out;
}

std::map<std::string, std::uint32_t> placement_map::leaders() const {
  std::map<std::string, std::uint32_t> out;
  for (const auto& [table, owners] : tables)
    for (const auto& o : owners)
      if (o.replicated()) ++out[o.node];
  return out;
}

std::vector<partition_ref> placement_map::partitions_of(std::string_view node) const {
  std::vector<partition_ref> out;
  for (const auto& [table, owners] : tables)
    for (std::uint32_t i = 0; i < owners.size(); ++i)
      if (owners[i].holds(node)) out.push_back({table, i});
  return out;
}

namespace {

std::vector<std::string> unique_sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

result<placement_map> assign_table(const placement_map& m, const std::string& table, std::uint32_t partitions,
                                   const std::vector<std::string>& live_in, std::uint32_t factor) {
  const auto live = unique_sorted(live_in);
  if (live.empty()) return status{code::unavailable, "no live node to place the partitions of '" + table + "' on"};
  placement_map out = remove_table(m, table);
  out.epoch = m.epoch + 1;
  if (factor != 1) {
    auto sets = place_replicas(table, partitions, factor, live, out.load(), out.leaders());
    if (!sets) return sets.error();
    std::vector<partition_owner> owners;
    for (auto& set : *sets) owners.push_back({set.front(), out.epoch, std::move(set)});
    out.tables[table] = std::move(owners);
    return out;
  }
  auto load = out.load();
  std::map<std::string, std::uint32_t> of_table;
  std::vector<partition_owner> owners;
  for (std::uint32_t i = 0; i < partitions; ++i) {
    const std::string* best = nullptr;
    for (const auto& n : live) {
      if (!best) {
        best = &n;
        continue;
      }
      const auto key = std::make_pair(load[n], of_table[n]);
      const auto best_key = std::make_pair(load[*best], of_table[*best]);
      if (key < best_key) best = &n;  // ties keep the smaller id (live is sorted)
    }
    ++load[*best];
    ++of_table[*best];
    owners.push_back({*best, out.epoch, {}});
  }
  out.tables[table] = std::move(owners);
  return out;
}

placement_map remove_table(const placement_map& m, const std::string& table) {
  if (!m.tables.count(table)) return m;
  placement_map out = m;
  out.tables.erase(table);
  ++out.epoch;
  return out;
}

std::vector<planned_move> plan_balance(const placement_map& m, const std::vector<std::string>& live_in) {
  const auto live = unique_sorted(live_in);
  if (live.empty()) return {};
  const std::set<std::string> is_live(live.begin(), live.end());
  // What each live node holds, and per table (partitions on other nodes stay put).
  std::map<std::string, std::vector<partition_ref>> held;
  std::map<std::string, std::map<std::string, std::uint32_t>> per_table;  // node -> table -> count
  std::size_t total = 0;
  for (const auto& n : live) held[n];
  for (const auto& [table, owners] : m.tables)
    for (std::uint32_t i = 0; i < owners.size(); ++i)
      if (!owners[i].replicated() && is_live.count(owners[i].node)) {
        held[owners[i].node].push_back({table, i});
        ++per_table[owners[i].node][table];
        ++total;
      }
  // Shares: the nodes holding the most get the larger ones, so the fewest partitions move.
  const std::size_t q = total / live.size(), r = total % live.size();
  std::vector<std::string> by_load = live;
  std::stable_sort(by_load.begin(), by_load.end(),
                   [&](const std::string& a, const std::string& b) { return held[a].size() > held[b].size(); });
  std::map<std::string, std::size_t> share;
  for (std::size_t i = 0; i < by_load.size(); ++i) share[by_load[i]] = q + (i < r ? 1 : 0);

  std::map<std::string, std::size_t> count;
  for (const auto& n : live) count[n] = held[n].size();
  std::vector<planned_move> moves;
  for (const auto& donor : by_load) {
    while (count[donor] > share[donor]) {
      // Give away a partition of the table the donor has the most of (spreads tables too).
      auto& mine = held[donor];
      auto pick = std::max_element(mine.begin(), mine.end(), [&](const partition_ref& a, const partition_ref& b) {
        const auto ca = per_table[donor][a.table], cb = per_table[donor][b.table];
        return ca != cb ? ca < cb : b < a;  // ties: the first partition in order
      });
      const partition_ref p = *pick;
      mine.erase(pick);
      // To the node short of its share that has the fewest of this table, then the fewest.
      const std::string* to = nullptr;
      for (const auto& n : live) {
        if (count[n] >= share[n]) continue;
        if (!to ||
            std::make_pair(per_table[n][p.table], count[n]) < std::make_pair(per_table[*to][p.table], count[*to]))
          to = &n;
      }
      --count[donor];
      --per_table[donor][p.table];
      ++count[*to];
      ++per_table[*to][p.table];
      moves.push_back({p, donor, *to});
    }
  }
  return moves;
}

namespace {

using counts = std::map<std::string, std::int64_t>;

std::int64_t sum_of_squares(const counts& c) {
  std::int64_t out = 0;
  for (const auto& [n, k] : c) out += k * k;
  return out;
}

// Changes the fronts (preferred leaders) of `sets`, each set a list of live nodes, so that
// `leads` (per live node: the fronts of `sets` plus leaders the sets do not include) is as
// even as the sets allow. One leader at a time moves along a chain of transfers, from a
// node u to a node v leading at least two fewer: u's set gives its lead to a member x,
// x's set to y, ..., to v, so only u and v change. Each such chain lowers the sum of the
// squares of the counts, and when none is left that sum is the least the sets allow: no
// assignment of the fronts has a smaller largest or a larger smallest count. Sources are
// tried from the node leading the most, to the receiver leading the fewest (ties: the
// shortest chain, then node id and set order).
void even_leaders(const std::vector<std::string>& live, counts& leads, std::vector<std::vector<std::string>*>& sets) {
  std::map<std::string, std::vector<std::size_t>> led;  // node -> the sets it is the front of
  for (std::size_t i = 0; i < sets.size(); ++i) led[sets[i]->front()].push_back(i);
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<std::string> order = live;
    std::stable_sort(order.begin(), order.end(),
                     [&](const std::string& a, const std::string& b) { return leads[a] > leads[b]; });
    for (const auto& u : order) {
      // Breadth first from u: a node reached through set s (led by the node before it).
      std::map<std::string, std::pair<std::string, std::size_t>> via;
      std::vector<std::string> queue{u};
      via[u] = {u, 0};
      const std::string* target = nullptr;
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const std::string x = queue[q];
        for (auto s : led[x])
          for (const auto& y : *sets[s]) {
            if (via.count(y)) continue;
            via[y] = {x, s};
            queue.push_back(y);
          }
      }
      for (const auto& v : queue)
        if (leads[v] + 2 <= leads[u] && (!target || leads[v] < leads[*target])) target = &v;
      if (!target) continue;
      const std::string v = *target;
      for (std::string y = v; y != u;) {
        const auto [x, s] = via[y];
        auto& set = *sets[s];
        std::iter_swap(set.begin(), std::find(set.begin(), set.end(), y));
        auto& from = led[x];
        from.erase(std::find(from.begin(), from.end(), s));
        led[y].insert(std::lower_bound(led[y].begin(), led[y].end(), s), s);
        y = x;
      }
      --leads[u];
      ++leads[v];
      changed = true;
      break;
    }
  }
}

// The replica sets as the balancer plans them, and what each live node holds.
struct replica_plan {
  struct part {
    partition_ref ref;
    std::vector<std::string> set;  // as planned so far; the front is the preferred leader
  };
  std::vector<std::string> live;           // sorted
  std::vector<part> parts;                 // the movable partitions: every replica on a live node
  counts reps, leads;                      // per live node, unmovable sets included
  std::map<std::string, counts> of_table;  // node -> table -> replicas
  std::vector<planned_move> moves;

  static std::size_t position(const part& p, const std::string& n) {
    return static_cast<std::size_t>(std::find(p.set.begin(), p.set.end(), n) - p.set.begin());
  }
  static bool holds(const part& p, const std::string& n) { return position(p, n) < p.set.size(); }

  void move(part& p, std::size_t pos, const std::string& to) {
    const std::string from = p.set[pos];
    moves.push_back({p.ref, from, to});
    --reps[from];
    ++reps[to];
    --of_table[from][p.ref.table];
    ++of_table[to][p.ref.table];
    if (pos == 0) {
      --leads[from];
      ++leads[to];
    }
    p.set[pos] = to;
  }

  // Each live node's share of what `count` sums to: the nodes holding the most take the
  // larger shares, so only their excess moves (ties: the fewest of `other`, then node id).
  counts shares(const counts& count, const counts& other) const {
    std::int64_t total = 0;
    for (const auto& n : live) total += count.at(n);
    const auto n = static_cast<std::int64_t>(live.size());
    const std::int64_t q = total / n, r = total % n;
    std::vector<std::string> by_count = live;
    std::stable_sort(by_count.begin(), by_count.end(), [&](const std::string& a, const std::string& b) {
      return count.at(a) != count.at(b) ? count.at(a) > count.at(b) : other.at(a) < other.at(b);
    });
    counts out;
    for (std::int64_t i = 0; i < n; ++i) out[by_count[static_cast<std::size_t>(i)]] = q + (i < r ? 1 : 0);
    return out;
  }

  // How many more of `p`'s table `to` would hold than `from` (smaller spreads tables more).
  std::int64_t table_gap(const part& p, const std::string& from, const std::string& to) {
    return of_table[to][p.ref.table] - of_table[from][p.ref.table];
  }

  // The leaders as transfers would leave them (even_leaders), the sets' fronts changed to
  // match: the replicas left to move are then the ones no leader needs.
  void transfer_leaders() {
    std::vector<std::vector<std::string>*> sets;
    for (auto& p : parts) sets.push_back(&p.set);
    even_leaders(live, leads, sets);
  }

  void balance_replicas();
  bool relay_replica(const counts& share);
  bool move_leader();
};

// The replicas other than the leaders: one at a time from a node above its share to one
// below it (ties: the table spread, the receiver with the fewest, the first partition, then
// node id). When no such move is open (each set the donor holds has a replica on the
// receiver already), a replica goes to a node at its share that passes one of its own on to
// the receiver.
void replica_plan::balance_replicas() {
  const auto share = shares(reps, leads);
  const auto over = [&](const std::string& n) { return reps[n] > share.at(n); };
  const auto under = [&](const std::string& n) { return reps[n] < share.at(n); };
  for (;;) {
    using key = std::tuple<std::int64_t, std::int64_t>;
    part* best = nullptr;
    std::size_t best_pos = 0;
    key best_key{};
    std::string best_to;
    for (auto& p : parts)
      for (std::size_t pos = 1; pos < p.set.size(); ++pos) {
        if (!over(p.set[pos])) continue;
        for (const auto& b : live) {
          if (!under(b) || holds(p, b)) continue;
          const key k{table_gap(p, p.set[pos], b), reps[b]};
          if (!best || k < best_key) {
            best = &p;
            best_pos = pos;
            best_key = k;
            best_to = b;
          }
        }
      }
    if (best) {
      move(*best, best_pos, best_to);
      continue;
    }
    if (!relay_replica(share)) return;
  }
}

// A replica from a node above its share (A) to one at its share (C) outside its set, and one
// of C's (not a leader) to a node below its share (B) outside that set: the first such pair
// in order; false when there is none.
bool replica_plan::relay_replica(const counts& share) {
  for (auto& p : parts)
    for (std::size_t pos = 1; pos < p.set.size(); ++pos) {
      if (reps[p.set[pos]] <= share.at(p.set[pos])) continue;
      for (const auto& c : live) {
        if (reps[c] != share.at(c) || holds(p, c)) continue;
        for (auto& q : parts) {
          const auto at = position(q, c);
          if (&q == &p || at == 0 || at >= q.set.size()) continue;
          for (const auto& b : live) {
            if (reps[b] >= share.at(b) || holds(q, b)) continue;
            move(p, pos, c);
            move(q, at, b);
            return true;
          }
        }
      }
    }
  return false;
}

// For the leaders that no transfer can even out (the leaders as transfer_leaders left
// them): a leader's replica moves from a node (A) leading at least two more than a node
// outside its set (B) to B, and the replicas are balanced again and the leaders
// transferred again. The cheapest such move goes first: costed in moves, its own plus one
// for each node it leaves a replica short or over (A or B, against their replica shares),
// which a later move evens out (ties: the widest gap in leaders, the table spread, the
// receiver with the fewest replicas, the first partition, then node id). Kept only when
// the leaders end more even and the replicas no less even; false when there is no such
// move or it is not kept.
bool replica_plan::move_leader() {
  const auto rep_share = shares(reps, leads);
  const auto gives = [&](const std::string& n) { return reps[n] <= rep_share.at(n) ? 1 : 0; };
  const auto takes = [&](const std::string& n) { return reps[n] >= rep_share.at(n) ? 1 : 0; };
  using key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t>;
  part* best = nullptr;
  key best_key{};
  std::string best_to;
  for (auto& p : parts) {
    const auto& a = p.set[0];
    for (const auto& b : live) {
      if (leads[a] < leads[b] + 2 || holds(p, b)) continue;
      const key k{1 + gives(a) + takes(b), leads[b] - leads[a], table_gap(p, a, b), reps[b]};
      if (!best || k < best_key) {
        best = &p;
        best_key = k;
        best_to = b;
      }
    }
  }
  if (!best) return false;
  replica_plan before = *this;
  const auto leads_before = sum_of_squares(leads), reps_before = sum_of_squares(reps);
  move(*best, 0, best_to);
  balance_replicas();
  transfer_leaders();
  if (sum_of_squares(leads) < leads_before && sum_of_squares(reps) <= reps_before) return true;
  *this = std::move(before);
  return false;
}

// What plan_leader_transfers and plan_replica_balance start from: the live nodes, each
// with its replicas and preferred leaders, and the sets whose replicas are all live.
replica_plan plan_of(const placement_map& m, const std::vector<std::string>& live_in) {
  replica_plan pl;
  pl.live = unique_sorted(live_in);
  const std::set<std::string> is_live(pl.live.begin(), pl.live.end());
  for (const auto& n : pl.live) pl.reps[n] = pl.leads[n] = 0;
  for (const auto& [table, owners] : m.tables)
    for (std::uint32_t i = 0; i < owners.size(); ++i) {
      const auto& o = owners[i];
      if (!o.replicated()) continue;
      bool all_live = true;
      for (std::size_t k = 0; k < o.replicas.size(); ++k) {
        const auto& n = o.replicas[k];
        if (!is_live.count(n)) {
          all_live = false;
          continue;
        }
        ++pl.reps[n];
        ++pl.of_table[n][table];
        if (k == 0) ++pl.leads[n];
      }
      // A set with a replica on a dead node waits for the warden (replica_warden.h).
      if (all_live) pl.parts.push_back({{table, i}, o.replicas});
    }
  return pl;
}

}  // namespace

std::vector<planned_move> plan_replica_balance(const placement_map& m, const std::vector<std::string>& live) {
  replica_plan pl = plan_of(m, live);
  if (pl.live.empty()) return {};
  // The leaders go where transfers would take them first, so that the replicas that move
  // are ones no leader needs; the transfers themselves are plan_leader_transfers' (on the
  // map these moves leave), and only the leaders they cannot even out move replicas.
  pl.transfer_leaders();
  pl.balance_replicas();
  pl.transfer_leaders();
  for (std::size_t round = 0; round <= pl.parts.size() && pl.move_leader(); ++round) {}
  return std::move(pl.moves);
}

std::vector<planned_move> plan_leader_transfers(const placement_map& m, const std::vector<std::string>& live) {
  replica_plan pl = plan_of(m, live);
  if (pl.live.empty()) return {};
  pl.transfer_leaders();
  // One change per set whose leader differs at the end (a set a chain passed through twice
  // may be back where it was).
  std::vector<planned_move> out;
  for (const auto& p : pl.parts) {
    const auto& was = m.owner(p.ref)->node;
    if (p.set.front() != was) out.push_back({p.ref, was, p.set.front()});
  }
  return out;
}

result<placement_map> apply_move(const placement_map& m, const partition_ref& p, const std::string& to) {
  auto it = m.tables.find(p.table);
  if (it == m.tables.end()) return status{code::table_not_found, "table '" + p.table + "' has no placement"};
  if (p.index >= it->second.size())
    return status{code::invalid_argument, "table '" + p.table + "' has " + std::to_string(it->second.size()) +
                                              " partitions; there is no partition " + std::to_string(p.index)};
  if (to.empty()) return status{code::invalid_argument, "a partition must move to a named node"};
  if (it->second[p.index].replicated())
    return status{code::unsupported,
                  "partition " + std::to_string(p.index) + " of '" + p.table +
                      "' is replicated: its replicas move by Raft membership change, not by apply_move"};
  if (it->second[p.index].node == to) return m;
  placement_map out = m;
  out.epoch = m.epoch + 1;
  out.tables[p.table][p.index] = partition_owner{to, out.epoch, {}};
  return out;
}

result<std::vector<replica_set>> place_replicas(const std::string& table, std::uint32_t partitions,
                                                std::uint32_t factor, const std::vector<std::string>& live_in,
                                                const std::map<std::string, std::uint32_t>& load_in,
                                                const std::map<std::string, std::uint32_t>& leaders_in) {
  if (factor != 1 && factor != 3 && factor != 5) {
    return status{code::invalid_argument,
                  "replication factor " + std::to_string(factor) + " of '" + table + "': must be 1, 3 or 5"};
  }
  const auto live = unique_sorted(live_in);
  if (live.size() < factor) {
    return status{code::unavailable, "'" + table + "' needs " + std::to_string(factor) +
                                         " replicas on distinct nodes but " + std::to_string(live.size()) +
                                         " node(s) are live"};
  }
  std::map<std::string, std::uint32_t> load, leaders;
  for (const auto& n : live) {
    auto l = load_in.find(n);
    load[n] = l == load_in.end() ? 0 : l->second;
    auto d = leaders_in.find(n);
    leaders[n] = d == leaders_in.end() ? 0 : d->second;
  }
  std::vector<replica_set> out;
  for (std::uint32_t i = 0; i < partitions; ++i) {
    // The leader first: among the nodes holding the fewest replicas, the one leading the
    // fewest; then the other members by the fewest replicas.
    std::uint32_t least = ~0u;
    for (const auto& n : live) least = std::min(least, load[n]);
    const std::string* lead = nullptr;
    for (const auto& n : live)
      if (load[n] == least && (!lead || leaders[n] < leaders[*lead])) lead = &n;
    replica_set set{*lead};
    std::vector<std::string> rest;
    for (const auto& n : live)
      if (n != *lead) rest.push_back(n);
    std::stable_sort(rest.begin(), rest.end(),
                     [&](const std::string& a, const std::string& b) { return load[a] < load[b]; });
    set.insert(set.end(), rest.begin(), rest.begin() + (factor - 1));
    for (const auto& n : set) ++load[n];
    ++leaders[set.front()];
    out.push_back(std::move(set));
  }
  return out;
}

namespace {

// The owner of `p` in `m`, a replicated partition (`where` names it in the errors).
result<const partition_owner*> replicated_owner(const placement_map& m, const partition_ref& p,
                                                const std::string& where) {
  auto it = m.tables.find(p.table);
  if (it == m.tables.end()) return status{code::table_not_found, "table '" + p.table + "' has no placement"};
  if (p.index >= it->second.size()) return status{code::invalid_argument, "there is no " + where};
  const auto& o = it->second[p.index];
  if (!o.replicated()) return status{code::invalid_argument, where + " is not replicated"};
  return &o;
}

}  // namespace

result<placement_map> replace_replica(const placement_map& m, const partition_ref& p, const std::string& from,
                                      const std::string& to, std::uint64_t to_id) {
  const std::string where = "partition " + std::to_string(p.index) + " of '" + p.table + "'";
  auto found = replicated_owner(m, p, where);
  if (!found) return found.error();
  const auto& o = **found;
  auto at = std::find(o.replicas.begin(), o.replicas.end(), from);
  if (at == o.replicas.end()) return status{code::invalid_argument, "node '" + from + "' holds no replica of " + where};
  if (o.holds(to)) return status{code::invalid_argument, "node '" + to + "' holds a replica of " + where + " already"};
  placement_map out = m;
  out.epoch = m.epoch + 1;
  auto& n = out.tables[p.table][p.index];
  const auto pos = static_cast<std::size_t>(at - o.replicas.begin());
  if (n.replica_ids.empty())
    for (std::size_t i = 0; i < n.replicas.size(); ++i) n.replica_ids.push_back(i + 1);
  n.replicas[pos] = to;
  n.replica_ids[pos] = to_id;
  n.node = n.replicas.front();
  n.epoch = out.epoch;
  return out;
}

result<placement_map> prefer_replica(const placement_map& m, const partition_ref& p, const std::string& to) {
  const std::string where = "partition " + std::to_string(p.index) + " of '" + p.table + "'";
  auto found = replicated_owner(m, p, where);
  if (!found) return found.error();
  const auto& o = **found;
  auto at = std::find(o.replicas.begin(), o.replicas.end(), to);
  if (at == o.replicas.end())
    return status{code::invalid_argument, "node '" + to + "' holds no replica of " + where + " (move one there first)"};
  if (at == o.replicas.begin()) return m;
  placement_map out = m;
  out.epoch = m.epoch + 1;
  auto& n = out.tables[p.table][p.index];
  const auto pos = static_cast<std::size_t>(at - o.replicas.begin());
  // The ids go with their nodes: the initial configuration's ids are by position.
  if (n.replica_ids.empty())
    for (std::size_t i = 0; i < n.replicas.size(); ++i) n.replica_ids.push_back(i + 1);
  std::rotate(n.replicas.begin(), n.replicas.begin() + static_cast<std::ptrdiff_t>(pos),
              n.replicas.begin() + static_cast<std::ptrdiff_t>(pos) + 1);
  std::rotate(n.replica_ids.begin(), n.replica_ids.begin() + static_cast<std::ptrdiff_t>(pos),
              n.replica_ids.begin() + static_cast<std::ptrdiff_t>(pos) + 1);
  n.node = to;
  n.epoch = out.epoch;
  return out;
}

namespace {

// A flow network small enough for adjacency lists and breadth-first augmenting paths.
struct flow_net {
  struct edge {
    std::size_t to;
    std::int64_t cap;
  };
  std::vector<edge> edges;  // edge i and its reverse i ^ 1
  std::vector<std::vector<std::size_t>> out;
  explicit flow_net(std::size_t n) : out(n) {}
  std::size_t add(std::size_t a, std::size_t b, std::int64_t cap) {
    out[a].push_back(edges.size());
    edges.push_back({b, cap});
    out[b].push_back(edges.size());
    edges.push_back({a, 0});
    return edges.size() - 2;
  }
  std::int64_t max_flow(std::size_t s, std::size_t t) {
    std::int64_t total = 0;
    for (;;) {
      std::vector<std::size_t> via(out.size(), SIZE_MAX);
      std::vector<std::size_t> queue{s};
      via[s] = 0;
      for (std::size_t q = 0; q < queue.size() && via[t] == SIZE_MAX; ++q)
        for (auto e : out[queue[q]])
          if (edges[e].cap > 0 && via[edges[e].to] == SIZE_MAX && edges[e].to != s) {
            via[edges[e].to] = e;
            queue.push_back(edges[e].to);
          }
      if (via[t] == SIZE_MAX) return total;
      for (std::size_t v = t; v != s; v = edges[via[v] ^ 1].to) {
        edges[via[v]].cap -= 1;
        edges[via[v] ^ 1].cap += 1;
      }
      ++total;
    }
  }
};

}  // namespace

std::vector<planned_move> plan_replacements(const placement_map& m, const std::vector<std::string>& live_in,
                                            const std::vector<std::string>& dead, std::vector<partition_ref>* stuck) {
  const auto live = unique_sorted(live_in);
  const auto is_dead = [&](const std::string& n) { return std::find(dead.begin(), dead.end(), n) != dead.end(); };
  struct part {
    partition_ref ref;
    const partition_owner* owner;
    std::vector<std::size_t> slots;     // positions of dead replicas
    std::vector<std::size_t> eligible;  // indices into `live` of nodes outside the set
  };
  std::vector<part> parts;
  std::size_t wanted = 0;
  for (const auto& [table, owners] : m.tables)
    for (std::uint32_t i = 0; i < owners.size(); ++i) {
      const auto& o = owners[i];
      part p{{table, i}, &o, {}, {}};
      for (std::size_t k = 0; k < o.replicas.size(); ++k)
        if (is_dead(o.replicas[k])) p.slots.push_back(k);
      if (p.slots.empty()) continue;
      for (std::size_t n = 0; n < live.size(); ++n)
        if (!o.holds(live[n])) p.eligible.push_back(n);
      if (p.eligible.size() < p.slots.size() && stuck) stuck->push_back(p.ref);
      wanted += std::min(p.slots.size(), p.eligible.size());
      parts.push_back(std::move(p));
    }
  // The lowest ceiling on any live node's replicas that lets every replaceable replica find
  // a node outside its set (a maximum flow: partitions -> eligible nodes -> ceiling).
  auto load = m.load();
  std::int64_t base_total = 0, ceiling = 0;
  for (const auto& n : live) {
    base_total += load[n];
    ceiling = std::max<std::int64_t>(ceiling, load[n]);
  }
  if (!live.empty())
    ceiling = std::max<std::int64_t>(ceiling, (base_total + static_cast<std::int64_t>(wanted) + live.size() - 1) /
                                                  static_cast<std::int64_t>(live.size()));
  const std::size_t source = 0, sink = 1, first_part = 2, first_node = 2 + parts.size();
  for (;; ++ceiling) {
    flow_net f(first_node + live.size());
    std::vector<std::vector<std::size_t>> picks(parts.size());  // edge ids, per partition
    for (std::size_t p = 0; p < parts.size(); ++p) {
      f.add(source, first_part + p,
            static_cast<std::int64_t>(std::min(parts[p].slots.size(), parts[p].eligible.size())));
      for (auto n : parts[p].eligible) picks[p].push_back(f.add(first_part + p, first_node + n, 1));
    }
    for (std::size_t n = 0; n < live.size(); ++n) f.add(first_node + n, sink, ceiling - load[live[n]]);
    if (f.max_flow(source, sink) < static_cast<std::int64_t>(wanted)) continue;
    auto leaders = m.leaders();
    std::vector<planned_move> out;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      std::vector<std::string> chosen;
      for (std::size_t e = 0; e < picks[p].size(); ++e)
        if (f.edges[picks[p][e]].cap == 0) chosen.push_back(live[parts[p].eligible[e]]);
      // The preferred leader's replacement: the chosen node leading the fewest.
      std::stable_sort(chosen.begin(), chosen.end(),
                       [&](const std::string& a, const std::string& b) { return leaders[a] < leaders[b]; });
      for (std::size_t k = 0; k < chosen.size(); ++k) {
        const auto slot = parts[p].slots[k];
        if (slot == 0) ++leaders[chosen[k]];
        out.push_back({parts[p].ref, parts[p].owner->replicas[slot], chosen[k]});
      }
    }
    return out;
  }
}

namespace {
// Format 2 adds each partition's replica set, format 3 its replicas' Raft ids (written only
// when some partition has them); formats 1 and 2 are still read.
constexpr std::uint32_t placement_format = 3;

bool has_replica_ids(const placement_map& m) {
  for (const auto& [table, owners] : m.tables)
    for (const auto& o : owners)
      if (!o.replica_ids.empty()) return true;
  return false;
}
}  // namespace

std::string encode_placement(const placement_map& m) {
  std::map<std::string, std::uint32_t> index;
  std::vector<std::string> names;
  for (const auto& [table, owners] : m.tables)
    for (const auto& o : owners) {
      if (index.emplace(o.node, 0).second) names.push_back(o.node);
      for (const auto& r : o.replicas)
        if (index.emplace(r, 0).second) names.push_back(r);
    }
  std::sort(names.begin(), names.end());
  for (std::uint32_t i = 0; i < names.size(); ++i) index[names[i]] = i;
  std::string out;
  const std::uint32_t format = has_replica_ids(m) ? placement_format : 2;
  detail::put_u32(out, format);
  detail::put_u64(out, m.epoch);
  detail::put_u32(out, static_cast<std::uint32_t>(names.size()));
  for (const auto& n : names) detail::put_bytes(out, n);
  detail::put_u32(out, static_cast<std::uint32_t>(m.tables.size()));
  for (const auto& [table, owners] : m.tables) {
    detail::put_bytes(out, table);
    detail::put_u32(out, static_cast<std::uint32_t>(owners.size()));
    for (const auto& o : owners) {
      detail::put_u32(out, index[o.node]);
      detail::put_u64(out, o.epoch);
      detail::put_u32(out, static_cast<std::uint32_t>(o.replicas.size()));
      for (const auto& r : o.replicas) detail::put_u32(out, index[r]);
      if (format >= 3) {
        detail::put_u32(out, static_cast<std::uint32_t>(o.replica_ids.size()));
        for (auto id : o.replica_ids) detail::put_u64(out, id);
      }
    }
  }
  return out;
}

result<placement_map> decode_placement(std::string_view bytes) {
  const status bad{code::corruption, "malformed placement map"};
  detail::reader r(bytes);
  placement_map m;
  std::uint32_t format = 0, nnodes = 0, ntables = 0;
  if (!r.u32(format) || format < 1 || format > placement_format || !r.u64(m.epoch) || !r.u32(nnodes)) return bad;
  std::vector<std::string> names(nnodes);
  for (auto& n : names)
    if (!r.bytes(n)) return bad;
  if (!r.u32(ntables)) return bad;
  for (std::uint32_t t = 0; t < ntables; ++t) {
    std::string table;
    std::uint32_t n = 0;
    if (!r.bytes(table) || !r.u32(n)) return bad;
    std::vector<partition_owner> owners(n);
    for (auto& o : owners) {
      std::uint32_t idx = 0;
      if (!r.u32(idx) || idx >= names.size() || !r.u64(o.epoch)) return bad;
      o.node = names[idx];
      std::uint32_t nreplicas = 0;
      if (format >= 2 && !r.u32(nreplicas)) return bad;
      if (nreplicas > names.size()) return bad;
      for (std::uint32_t k = 0; k < nreplicas; ++k) {
        if (!r.u32(idx) || idx >= names.size()) return bad;
        o.replicas.push_back(names[idx]);
      }
      if (o.replicated() && o.replicas.front() != o.node) return bad;
      std::uint32_t nids = 0;
      if (format >= 3 && !r.u32(nids)) return bad;
      if (nids != 0 && nids != nreplicas) return bad;
      o.replica_ids.resize(nids);
      for (auto& id : o.replica_ids)
        if (!r.u64(id) || id == 0) return bad;
    }
    m.tables[std::move(table)] = std::move(owners);
  }
  if (!r.done()) return bad;
  return m;
}

}  // namespace cellar::cluster
