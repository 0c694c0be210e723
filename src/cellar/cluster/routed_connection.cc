#include "cluster/routed_connection.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <thread>

#include "cellar/names.h"
#include "cluster/layout.h"
#include "cluster/membership.h"
#include "cluster/node_link.h"
#include "cluster/routed_scan.h"
#include "cluster/zk_state.h"
#include "route/router.h"
#include "util/resend.h"

namespace cellar::cluster {

namespace {

class routed_connection final : public connection {
 public:
  routed_connection(std::unique_ptr<zk_client> zk, routed_options o)
      : zk_(std::move(zk)),
        opts_(std::move(o)),
        copts_(opts_.client),
        stale_(std::make_shared<std::atomic<bool>>(true)) {
    copts_.no_forward = true;  // a stale copy answers NOT_OWNER: re-read and send again
  }

  status refresh() {
    if (!stale_->exchange(false)) return status::ok();
    auto mark = [flag = stale_, follow = opts_.follow_watches](const watch_event&) {
      if (follow) flag->store(true);
    };
    auto cat = read_catalog(*zk_, &catalog_, mark);
    auto pm = read_placement(*zk_, mark);
    auto ids = zk_->children(layout::nodes, mark);
    if (!cat || !pm || !ids) {
      stale_->store(true);
      return !cat ? cat.error() : !pm ? pm.error() : ids.error();
    }
    catalog_ = std::move(cat->catalog);
    map_ = std::move(pm->map);
    std::map<std::string, node_info> nodes;
    for (const auto& id : ids.value()) {
      auto z = zk_->get(std::string(layout::nodes) + "/" + id);
      if (!z) continue;  // left meanwhile
      auto n = decode_node_info(z->data);
      if (n) nodes[n->id] = n.value();
    }
    for (auto it = conns_.begin(); it != conns_.end();) {
      auto n = nodes.find(it->first);
      auto o = nodes_.find(it->first);
      if (n == nodes.end() || o == nodes_.end() || n->second.data_address != o->second.data_address)
        it = conns_.erase(it);
      else
        ++it;
    }
    nodes_ = std::move(nodes);
    return status::ok();
  }

  // The connection to `node`, made on first use.
  result<std::shared_ptr<node_link>> to(const std::string& node) {
    if (auto c = conns_.find(node); c != conns_.end()) return c->second;
    auto n = nodes_.find(node);
    if (n == nodes_.end()) return status{code::unavailable, "node '" + node + "' is not a live member of the cluster"};
    auto c = node_link::open(n->second.data_address, copts_);
    if (!c)
      return status{code::unavailable, "node '" + node + "' at " + n->second.data_address +
                                           " cannot be reached: " + c.error().to_string()};
    conns_[node] = c.value();
    return c.value();
  }

  // The node to send partition `o`'s requests to: its owner; for a replicated partition the
  // first of its replicas that can be connected (the preferred leader while it is up; any
  // replica's router follows the leader, cluster/replica_router.h).
  const std::string& serving_node(const partition_owner& o) {
    if (!o.replicated()) return o.node;
    for (const auto& r : o.replicas)
      if (to(r)) return r;
    return o.node;
  }

  // Some node (connected), for calls any node answers.
  result<std::string> any_node() {
    (void)refresh();
    if (!conns_.empty()) return conns_.begin()->first;
    status last{code::unavailable, "no node of the cluster is registered"};
    for (const auto& [id, n] : nodes_) {
      auto c = to(id);
      if (c) return id;
      last = c.error();
    }
    return last;
  }
  result<std::shared_ptr<node_link>> any() {
    auto id = any_node();
    if (!id) return id.error();
    return to(id.value());
  }

  std::vector<op_result> batch(const std::string& table_in, std::vector<batch_op> ops) override {
    const std::string table = canonical_table_name(table_in);  // as the catalog keeps it
    return detail::resend_while_reshaping(std::move(ops), [&](const std::vector<batch_op>& part, int attempt) {
      if (attempt > 0) stale_->store(true);  // the split may have committed: re-read the catalog
      return route_batch(table, part);
    });
  }

  std::vector<op_result> route_batch(const std::string& table, const std::vector<batch_op>& ops) {
    const auto n = static_cast<std::uint32_t>(ops.size());
    std::vector<op_result> out(n);
    std::vector<std::uint32_t> todo(n);
    for (std::uint32_t i = 0; i < n; ++i) todo[i] = i;
    // Each round sends the actions still to do to the owners the copy names; the actions a
    // node answers NOT_OWNER for (its copy or ours is stale) go again after a re-read.
    for (int round = 0;; ++round) {
      (void)refresh();
      send_round(table, ops, todo, out);
      std::vector<std::uint32_t> again;
      for (auto i : todo)
        if (out[i].st.code() == code::not_owner) again.push_back(i);
      if (again.empty()) break;
      if (round >= opts_.not_owner_retries) {
        for (auto i : again)
          out[i].st = {code::not_owner, out[i].st.message() + " (still after " + std::to_string(round) +
                                            " re-reads of the placement map)"};
        break;
      }
      stale_->store(true);
      // A node whose copy is behind ours needs a moment to apply the map: wait a little
      // longer each round (the first re-read is at once).
      if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5 << round, 500)));
      todo = std::move(again);
    }
    return out;
  }

  // Sends ops[todo] to their owners (one part per node, in parallel), results into out.
  void send_round(const std::string& table, const std::vector<batch_op>& ops, const std::vector<std::uint32_t>& todo,
                  std::vector<op_result>& out) {
    const auto* schema = catalog_.find(table);
    auto owners = map_.tables.find(table);
    std::map<std::string, std::vector<std::uint32_t>> by_node;
    if (!schema || !schema->partitioned || owners == map_.tables.end() ||
        owners->second.size() != schema->partitioning.count()) {
      // Not routable here (unknown table, no family yet): a node answers as it would.
      auto c = any_node();
      if (!c) {
        for (auto i : todo) out[i].st = c.error();
        return;
      }
      by_node[c.value()] = todo;
    } else {
      // Split by owner node, keeping batch order within each part.
      for (auto i : todo)
        by_node[serving_node(owners->second[detail::partition_of(schema->partitioning, row_of(ops[i]))])].push_back(i);
    }
    std::vector<std::pair<const std::string*, std::future<std::vector<op_result>>>> sent;
    for (auto& [node, indices] : by_node) {
      auto c = to(node);
      if (!c) {
        for (auto i : indices) out[i].st = c.error();
        continue;
      }
      std::vector<batch_op> part;
      part.reserve(indices.size());
      for (auto i : indices) part.push_back(ops[i]);
      if (by_node.size() == 1) {  // one node: on its link's thread, no future to wait on
        auto r = c.value()->call([&](std::unique_ptr<connection>& x) { return x->batch(table, std::move(part)); });
        for (std::size_t k = 0; k < indices.size() && k < r.size(); ++k) out[indices[k]] = std::move(r[k]);
        after_part(node, r);
        return;
      }
      sent.emplace_back(&node,
                        c.value()->post([&table, part = std::move(part)](std::unique_ptr<connection>& x) mutable {
                          return x->batch(table, std::move(part));
                        }));
    }
    for (auto& [node, fut] : sent) {
      auto r = fut.get();
      const auto& indices = by_node[*node];
      for (std::size_t k = 0; k < indices.size() && k < r.size(); ++k) out[indices[k]] = std::move(r[k]);
      after_part(*node, r);
    }
  }

  // A part answered UNAVAILABLE may mean the connection broke: make it again next time.
  void after_part(const std::string& node, const std::vector<op_result>& r) {
    if (!r.empty() && r.front().st.code() == code::unavailable) {
      conns_.erase(node);
      stale_->store(true);
    }
  }

  // A scan: one stream per owner node of the partitions it touches, merged here
  // (cluster/routed_scan.h); reopened after a re-read of the map when a node answers
  // NOT_OWNER, as batches are sent again.
  result<std::unique_ptr<row_stream>> scan(const std::string& table_in, const cellar::scan& s) override {
    const std::string table = canonical_table_name(table_in);
    for (int round = 0;; ++round) {
      (void)refresh();
      auto parts = scan_parts(table, s);
      if (!parts) return parts.error();
      std::string failed;
      auto r = parts->empty() ? scan_any(table, s) : open_routed_scan(table, s, std::move(parts.value()), &failed);
      // RESHAPING: opened with partitions a split or merge has just replaced (nothing read).
      if (r || (r.code() != code::not_owner && r.code() != code::reshaping)) {
        if (!r && r.code() == code::unavailable && !failed.empty()) {  // the connection may have broken
          conns_.erase(failed);
          stale_->store(true);
        }
        return r;
      }
      if (round >= opts_.not_owner_retries)
        return status{code::not_owner, r.error().message() + " (still after " + std::to_string(round) +
                                           " re-reads of the placement map)"};
      stale_->store(true);
      if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5 << round, 500)));
    }
  }

  // The owner nodes of the partitions `s` may touch, each with its partitions (connected);
  // empty when the copy cannot route the table (unknown here, no family yet).
  result<std::vector<scan_part>> scan_parts(const std::string& table, const cellar::scan& s) {
    std::vector<scan_part> parts;
    const auto* schema = catalog_.find(table);
    auto owners = map_.tables.find(table);
    if (!schema || !schema->partitioned || owners == map_.tables.end() ||
        owners->second.size() != schema->partitioning.count())
      return parts;
    const std::string& low = s.reversed_ ? s.stop : s.start;
    const std::string& high = s.reversed_ ? s.start : s.stop;
    std::map<std::string, std::vector<std::uint32_t>> by_node;
    for (auto p : detail::partitions_for_range(schema->partitioning, low, high))
      by_node[serving_node(owners->second[p])].push_back(p);
    // No partition at all (an empty range): partition 0's owner checks the scan and, its
    // range missing partition 0, answers it with no row.
    if (by_node.empty()) by_node[serving_node(owners->second.at(0))].push_back(0);
    for (auto& [node, partitions] : by_node) {
      auto c = to(node);
      if (!c) return c.error();
      parts.push_back({node, std::move(c.value()), std::move(partitions)});
    }
    return parts;
  }

  // A scan the copy cannot route: one node answers it as it would any client.
  result<std::unique_ptr<row_stream>> scan_any(const std::string& table, const cellar::scan& s) {
    auto c = any();
    if (!c) return c.error();
    auto r = c.value()->call([&](std::unique_ptr<connection>& x) { return x->scan(table, s); });
    if (!r) return r.error();
    return std::unique_ptr<row_stream>(new linked_stream(std::move(c.value()), std::move(r.value())));
  }

  template <class F>
  auto on_any(F f) -> decltype(f(std::declval<connection&>())) {
    auto c = any();
    if (!c) return c.error();
    return c.value()->call([&](std::unique_ptr<connection>& x) { return f(*x); });
  }
  template <class F>
  status ddl_on_any(F f) {
    auto s = on_any(std::move(f));
    stale_->store(true);
    return s;
  }

  status ddl(std::string_view statements) override {
    return ddl_on_any([&](connection& c) { return c.ddl(statements); });
  }
  status create_table(const table_descriptor& d, schema_origin origin) override {
    return ddl_on_any([&](connection& c) { return c.create_table(d, origin); });
  }
  status alter_family(const std::string& table, const family_descriptor& f) override {
    return ddl_on_any([&](connection& c) { return c.alter_family(table, f); });
  }
  status drop_family(const std::string& table, const std::string& family) override {
    return ddl_on_any([&](connection& c) { return c.drop_family(table, family); });
  }
  status drop_table(const std::string& table) override {
    return ddl_on_any([&](connection& c) { return c.drop_table(table); });
  }
  status truncate_table(const std::string& table) override {
    return ddl_on_any([&](connection& c) { return c.truncate_table(table); });
  }
  status disable_table(const std::string& table) override {
    return ddl_on_any([&](connection& c) { return c.disable_table(table); });
  }
  status enable_table(const std::string& table) override {
    return ddl_on_any([&](connection& c) { return c.enable_table(table); });
  }
  status alter_table(const std::string& table, const std::map<std::string, std::string>& set,
                     const std::vector<std::string>& unset) override {
    return ddl_on_any([&](connection& c) { return c.alter_table(table, set, unset); });
  }
  status create_namespace(const namespace_descriptor& ns) override {
    return ddl_on_any([&](connection& c) { return c.create_namespace(ns); });
  }
  status drop_namespace(const std::string& name) override {
    return ddl_on_any([&](connection& c) { return c.drop_namespace(name); });
  }
  status alter_namespace(const std::string& name, const std::map<std::string, std::string>& set,
                         const std::vector<std::string>& unset) override {
    return ddl_on_any([&](connection& c) { return c.alter_namespace(name, set, unset); });
  }
  result<namespace_descriptor> describe_namespace(const std::string& name) override {
    return on_any([&](connection& c) { return c.describe_namespace(name); });
  }
  result<std::vector<namespace_descriptor>> list_namespaces() override {
    return on_any([&](connection& c) { return c.list_namespaces(); });
  }
  result<std::vector<std::string>> list_namespace_tables(const std::string& name) override {
    return on_any([&](connection& c) { return c.list_namespace_tables(name); });
  }
  result<std::vector<region_info>> list_regions(const std::string& table) override {
    return on_any([&](connection& c) { return c.list_regions(table); });
  }
  status split_region(const std::string& table, const std::string& key) override {
    return ddl_on_any([&](connection& c) { return c.split_region(table, key); });
  }
  status split_partition(const std::string& table, std::uint32_t index, const std::string& key) override {
    return ddl_on_any([&](connection& c) { return c.split_partition(table, index, key); });
  }
  result<std::uint32_t> split_table(const std::string& table) override {
    auto r = on_any([&](connection& c) { return c.split_table(table); });
    stale_->store(true);  // a DDL, as ddl_on_any marks one
    return r;
  }
  status merge_regions(const std::string& table, std::uint32_t index) override {
    return ddl_on_any([&](connection& c) { return c.merge_regions(table, index); });
  }
  result<bool> is_table_enabled(const std::string& table) override {
    return on_any([&](connection& c) { return c.is_table_enabled(table); });
  }
  result<std::vector<std::string>> list_tables() override {
    return on_any([&](connection& c) { return c.list_tables(); });
  }
  result<table_descriptor> describe(const std::string& table) override {
    return on_any([&](connection& c) { return c.describe(table); });
  }
  result<snapshot_stats> snapshot() override {
    return on_any([&](connection& c) { return c.snapshot(); });
  }
  // Named snapshots: any node serves them for the whole cluster (cluster/snapshot_service.h);
  // a restore or a clone changes the catalog, so the routing is read again afterwards.
  status snapshot_table(const std::string& table, const std::string& name) override {
    return on_any([&](connection& c) { return c.snapshot_table(table, name); });
  }
  result<std::vector<snapshot_info>> list_snapshots(const std::string& table_regex,
                                                    const std::string& name_regex) override {
    return on_any([&](connection& c) { return c.list_snapshots(table_regex, name_regex); });
  }
  status delete_snapshot(const std::string& name) override {
    return on_any([&](connection& c) { return c.delete_snapshot(name); });
  }
  status restore_snapshot(const std::string& name) override {
    return ddl_on_any([&](connection& c) { return c.restore_snapshot(name); });
  }
  status clone_snapshot(const std::string& name, const std::string& table) override {
    return ddl_on_any([&](connection& c) { return c.clone_snapshot(name, table); });
  }
  status export_snapshot(const std::string& name, const std::string& dir) override {
    return on_any([&](connection& c) { return c.export_snapshot(name, dir); });
  }
  result<snapshot_info> import_snapshot(const std::string& dir) override {
    return on_any([&](connection& c) { return c.import_snapshot(dir); });
  }
  result<bulk_load_stats> bulk_load(const std::string& table, const std::string& dir) override {
    return on_any([&](connection& c) { return c.bulk_load(table, dir); });
  }
  result<table_stats> stats(const std::string& table) override {
    return on_any([&](connection& c) { return c.stats(table); });
  }
  result<store_summary> summary() override {
    return on_any([&](connection& c) { return c.summary(); });
  }

 private:
  std::unique_ptr<zk_client> zk_;
  routed_options opts_;
  rpc::client_options copts_;
  std::shared_ptr<std::atomic<bool>> stale_;  // set by the watches (ZooKeeper's event thread)
  cluster_catalog catalog_;
  placement_map map_;
  std::map<std::string, node_info> nodes_;
  // Streams of open scans hold their link too: dropping one here closes it once they are gone.
  std::map<std::string, std::shared_ptr<node_link>> conns_;
};

}  // namespace

result<std::unique_ptr<connection>> connect_routed(routed_options o) {
  auto zk = zk_client::open(o.zookeeper);
  if (!zk) return zk.error();
  auto c = std::make_unique<routed_connection>(std::move(zk.value()), std::move(o));
  if (auto s = c->refresh(); !s) return s;
  if (auto a = c->any(); !a) return a.error();
  return std::unique_ptr<connection>(std::move(c));
}

}  // namespace cellar::cluster
