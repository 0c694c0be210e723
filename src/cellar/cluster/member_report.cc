// cluster/member_report.cc: what a cluster member reports of the cluster (member.h:
// cluster_report, format_report; the shell's `status 'detailed'`).
#include "cluster/member_state.h"

namespace cellar::cluster {

cluster_report member::report() const { return st_->full_report(); }

std::string member::state::report() const { return format_report(full_report()); }

cluster_report member::state::full_report() const {
  auto r = make_report();
  if (replicas) r.replicas = replicas->report(std::chrono::seconds(2));
  if (warden) r.replication_notes = warden->notes();
  return r;
}

std::vector<cellar::cluster_node> member::state::nodes() const {
  std::vector<cellar::cluster_node> out;
  for (const auto& n : make_report().nodes)
    out.push_back({n.node.id, n.live ? n.node.data_address : std::string(), n.live});
  return out;
}

std::string member::state::owner_of(const std::string& table, std::uint32_t index) const {
  absl::MutexLock lock(&mu);
  if (!map) return {};
  auto it = map->tables.find(table);
  if (it == map->tables.end() || index >= it->second.size()) return {};
  return it->second[index].node;
}

result<std::pair<std::uint64_t, std::uint64_t>> member::state::partition_stats(const std::string& table,
                                                                               std::uint32_t index) {
  std::vector<std::string> holders;
  {
    absl::MutexLock lock(&mu);
    const partition_owner* o = map ? map->owner({table, index}) : nullptr;
    if (o) holders = o->replicated() ? o->replicas : std::vector<std::string>{o->node};
  }
  if (holders.empty())
    return status{code::unavailable,
                  "the placement map has no partition " + std::to_string(index) + " of '" + table + "' yet"};
  node_snapshot m;
  m.step = node_snapshot::stats;
  m.table = table;
  m.index = index;
  // Any replica's counts will do: each holds the partition's cells.
  status last;
  for (const auto& h : holders) {
    auto r = snaps->ask(h, m);
    if (r) return std::make_pair(r->cells_held, r->bytes_held);
    last = r.error();
  }
  return last;
}

cluster_report member::state::make_report() const {
  cluster_report r;
  r.self = opts.node_id;
  if (auto use = gate.enter(opts.node_id); use)
    if (auto m = (*use)->master()) r.master = m->node_id;
  absl::MutexLock lock(&mu);
  r.catalog_version = applied;
  r.forwarded_here = served ? served->load(std::memory_order_relaxed) : 0;
  r.not_owner_answers = refused.load(std::memory_order_relaxed);
  std::map<std::string, node_report> nodes;
  for (const auto& m : members) {
    auto& n = nodes[m.id];
    n.node = m;
    n.live = true;
  }
  if (map) {
    r.placement_epoch = map->epoch;
    for (const auto& [table, owners] : map->tables)
      for (std::uint32_t i = 0; i < owners.size(); ++i) {
        // A replicated partition is listed on each node holding a replica, marked '*' on
        // the one that should lead.
        std::vector<std::string> holders = owners[i].replicas;
        if (holders.empty()) holders.push_back(owners[i].node);
        for (const auto& h : holders) {
          auto& n = nodes[h];
          n.node.id = h;
          n.partitions.push_back(table + "/" + std::to_string(i) +
                                 (owners[i].replicated() && h == owners[i].node ? "*" : ""));
        }
      }
  }
  for (auto& [id, n] : nodes) {
    n.master = id == r.master;
    r.nodes.push_back(std::move(n));
  }
  return r;
}

std::string format_report(const cluster_report& r) {
  std::string out = "cluster: " + std::to_string(r.nodes.size()) + " nodes, master " +
                    (r.master.empty() ? std::string("(none)") : r.master) + ", catalog version " +
                    std::to_string(r.catalog_version) + ", placement epoch " + std::to_string(r.placement_epoch) +
                    " (seen from " + r.self + ", which served " + std::to_string(r.forwarded_here) +
                    " forwarded requests and answered " + std::to_string(r.not_owner_answers) + " NOT_OWNER)\n";
  for (const auto& n : r.nodes) {
    out += "  " + n.node.id + (n.master ? " (master)" : "") + (n.live ? "" : " DOWN") +
           (n.node.data_address.empty() ? "" : " " + n.node.data_address) + ": " + std::to_string(n.partitions.size()) +
           " partitions";
    if (!n.partitions.empty()) {
      out += " [";
      for (std::size_t i = 0; i < n.partitions.size(); ++i) out += (i ? " " : "") + n.partitions[i];
      out += "]";
    }
    out += "\n";
  }
  for (const auto& n : r.replication_notes) out += "replication: " + n + "\n";
  if (!r.replicas.empty()) {
    out += "replicas on " + r.self + ":\n";
    for (const auto& rep : r.replicas) out += "  " + format_replica(rep) + "\n";
  }
  return out;
}

}  // namespace cellar::cluster
