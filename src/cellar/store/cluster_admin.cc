// store/cluster_admin.cc: the public cluster administration, a thin face on the member's hooks
// (store/cluster_state.h) that the store of a cluster node carries.

#include "cellar/cluster_admin.h"

#include <algorithm>

#include "store/access.h"
#include "store/cluster_state.h"

namespace cellar {

using detail::cluster_hooks;
using detail::store_access;

namespace {

std::shared_ptr<cluster_hooks> hooks_of(store& s) { return store_access::seat(s).cluster().hooks(); }

}  // namespace

std::size_t cluster_status::live_count() const {
  return static_cast<std::size_t>(
      std::count_if(nodes.begin(), nodes.end(), [](const cluster_node& n) { return n.live; }));
}

std::size_t cluster_status::down_count() const { return nodes.size() - live_count(); }

result<cluster_admin> cluster_admin::of(store& s) {
  if (!store_access::seat(s).cluster().member())
    return cellar::status{code::unsupported, "cluster administration needs a cluster member (cellar-server --cluster)"};
  return cluster_admin(s);
}

cluster_status cluster_admin::status() const {
  cluster_status out;
  if (auto h = hooks_of(*store_)) {
    out.nodes = h->nodes();
    out.report = h->report();
  }
  return out;
}

cellar::status cluster_admin::move_partition(const std::string& partition, const std::string& node) {
  auto h = hooks_of(*store_);
  if (!h) return {code::unavailable, "this node has not joined its cluster yet"};
  return h->move(partition, node);
}

cellar::status cluster_admin::move_replica(const std::string& partition, const std::string& from,
                                           const std::string& to) {
  auto h = hooks_of(*store_);
  if (!h) return {code::unavailable, "this node has not joined its cluster yet"};
  return h->move_replica(partition, from, to);
}

cellar::status cluster_admin::transfer_leader(const std::string& partition, const std::string& node) {
  auto h = hooks_of(*store_);
  if (!h) return {code::unavailable, "this node has not joined its cluster yet"};
  return h->transfer_leader(partition, node);
}

result<std::uint32_t> cluster_admin::balance() {
  auto h = hooks_of(*store_);
  if (!h) return cellar::status{code::unavailable, "this node has not joined its cluster yet"};
  return h->balance();
}

}  // namespace cellar
