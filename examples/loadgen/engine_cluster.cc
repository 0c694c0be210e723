// The cluster target's setup (--cluster ZK[/chroot]): creates the YCSB table through the
// cluster (its DDL goes to the master) and reads where each partition lives, so that the
// frames engine (engine_cellar_frames.cc) sends every request straight to the node that
// owns its row, by the router the nodes use (route/router.h).
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include "cluster/layout.h"
#include "cluster/membership.h"
#include "cluster/routed_connection.h"
#include "cluster/zk_state.h"
#include "engine.h"
#include "route/router.h"
#include "ycsb.h"

namespace loadgen {

void prepare_cellar_cluster(target_options& o, const std::string& zookeeper, bool recreate) {
  namespace cl = cellar::cluster;
  cl::routed_options ro;
  ro.zookeeper.connect = zookeeper;
  ro.client.token = o.token;
  ro.client.tls_ca = o.tls_ca;
  auto c = cl::connect_routed(ro);
  if (!c) throw std::runtime_error("cannot connect to the cluster at " + zookeeper + ": " + c.error().to_string());
  auto& conn = *c.value();
  auto tables = conn.list_tables();
  if (!tables) throw std::runtime_error("list tables: " + tables.error().to_string());
  bool exists = false;
  for (auto& t : tables.value()) exists |= t == o.table;
  if (exists && recreate)
    if (auto s = conn.drop_table(o.table); !s) throw std::runtime_error("drop table: " + s.to_string());
  if (!exists || recreate)
    if (auto s = conn.create_table(ycsb_table(o), cellar::schema_origin::hbase_shell); !s)
      throw std::runtime_error("create table: " + s.to_string());

  // The table's partition rule, its placement and the nodes' addresses. The DDL above
  // committed the table and its placement in one multi(), so both are there now.
  auto zk = cl::zk_client::open(ro.zookeeper);
  if (!zk) throw std::runtime_error("ZooKeeper at " + zookeeper + ": " + zk.error().to_string());
  auto cat = cl::read_catalog(*zk.value(), nullptr);
  auto pm = cl::read_placement(*zk.value());
  auto ids = zk.value()->children(cl::layout::nodes);
  if (!cat || !pm || !ids)
    throw std::runtime_error("reading the cluster: " + (!cat  ? cat.error()
                                                        : !pm ? pm.error()
                                                              : ids.error())
                                                           .to_string());
  const auto* schema = cat->catalog.find(o.table);
  auto owners = pm->map.tables.find(o.table);
  if (!schema || !schema->partitioned || owners == pm->map.tables.end() ||
      owners->second.size() != schema->partitioning.count())
    throw std::runtime_error("table '" + o.table + "' has no placement in the cluster");
  std::map<std::string, std::string> address;  // node id -> data address
  for (const auto& id : ids.value()) {
    auto z = zk.value()->get(std::string(cl::layout::nodes) + "/" + id);
    if (!z) continue;
    auto n = cl::decode_node_info(z->data);
    if (n) address[n->id] = n->data_address;
  }
  auto route = std::make_shared<cluster_route>();
  route->spec = schema->partitioning;
  std::map<std::string, std::uint32_t> index;  // node id -> position in route->addresses
  for (const auto& owner : owners->second) {
    auto a = address.find(owner.node);
    if (a == address.end()) throw std::runtime_error("node '" + owner.node + "' is not a live member of the cluster");
    auto [it, added] = index.emplace(owner.node, static_cast<std::uint32_t>(route->addresses.size()));
    if (added) route->addresses.push_back(a->second);
    route->owner.push_back(it->second);
  }
  o.route = std::move(route);

  // A node applies a new table when it sees the catalog change in ZooKeeper; until then
  // it answers the table's requests with an error, and under load that can take a moment.
  // Wait (up to 30 s) until a read in every partition is answered by its owner.
  if (!exists || recreate) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (std::uint32_t p = 0; p < schema->partitioning.count(); ++p) {
      // One of the workload's own keys in partition p (they spread over hash and range
      // partitions alike); none in the first million: nothing of the run goes there.
      std::string key;
      for (std::int64_t k = 0; key.empty() && k < 1000000; ++k)
        if (auto name = build_key_name(k, o.keys); cellar::detail::partition_of(schema->partitioning, name) == p)
          key = std::move(name);
      while (!key.empty()) {
        auto r = conn.batch(o.table, {cellar::get(key)});
        if (r.size() == 1 && r[0].st.is_ok()) break;
        if (std::chrono::steady_clock::now() > deadline)
          throw std::runtime_error("partition " + std::to_string(p) + " of '" + o.table +
                                   "' is not served 30 s after its creation: " +
                                   (r.empty() ? std::string("no result") : r[0].st.to_string()));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
}

}  // namespace loadgen
