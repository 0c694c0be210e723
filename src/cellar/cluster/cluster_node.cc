#include "cluster/cluster_node.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include <spdlog/spdlog.h>

#include "cluster/ddl.h"
#include "cluster/layout.h"
#include "cluster/zk_state.h"

namespace cellar::cluster {

struct cluster_node::state : std::enable_shared_from_this<state> {
  cluster_options options;
  cluster_callbacks cb;
  std::unique_ptr<zk_client> zk;
  std::unique_ptr<membership> members;
  std::unique_ptr<master_election> election;
  std::atomic<bool> closed{false};
  std::uint64_t listener = 0;

  mutable std::mutex mutex;
  std::shared_ptr<const cluster_catalog> catalog = std::make_shared<cluster_catalog>();
  std::shared_ptr<const placement_map> placement = std::make_shared<placement_map>();
  bool catalog_reported = false, placement_reported = false;  // event thread
  std::string fence;                                          // the master's election znode while master

  std::weak_ptr<state> weak() { return weak_from_this(); }

  // Event thread: re-reads the catalog and sets the next watch.
  void refresh_catalog() {
    if (closed) return;
    auto w = weak();
    std::shared_ptr<const cluster_catalog> prev;
    {
      std::lock_guard lock(mutex);
      prev = catalog;
    }
    auto got = read_catalog(*zk, prev.get(), [w](const watch_event&) {
      if (auto s = w.lock()) s->refresh_catalog();
    });
    if (!got) {
      spdlog::warn("cellar: reading the cluster catalog: {}", got.error().to_string());
      return;  // read again when the next session starts
    }
    if (catalog_reported && got->catalog.version == prev->version) return;
    auto next = std::make_shared<const cluster_catalog>(std::move(got->catalog));
    {
      std::lock_guard lock(mutex);
      catalog = next;
    }
    catalog_reported = true;
    if (cb.catalog_changed && !closed) cb.catalog_changed(next);
  }

  void refresh_placement() {
    if (closed) return;
    auto w = weak();
    auto got = read_placement(*zk, [w](const watch_event&) {
      if (auto s = w.lock()) s->refresh_placement();
    });
    if (!got) {
      spdlog::warn("cellar: reading the placement map: {}", got.error().to_string());
      return;
    }
    std::shared_ptr<const placement_map> prev;
    {
      std::lock_guard lock(mutex);
      prev = placement;
    }
    if (placement_reported && got->map == *prev) return;
    auto next = std::make_shared<const placement_map>(std::move(got->map));
    {
      std::lock_guard lock(mutex);
      placement = next;
    }
    placement_reported = true;
    if (cb.placement_changed && !closed) cb.placement_changed(next);
  }

  std::string my_fence() const {
    std::lock_guard lock(mutex);
    return fence;
  }

  // The live nodes' ids, read from ZooKeeper now: the master decides on them, and its
  // member list may lag behind (its watch fires after, say, its election watch).
  std::vector<std::string> live_ids() const {
    auto names = zk->children(layout::nodes);
    if (names) return *names;
    std::vector<std::string> ids;
    if (members)
      for (const auto& n : members->members()) ids.push_back(n.id);
    return ids;
  }

  // Event thread, while master: serve waiting DDL requests and watch for more.
  void serve_ddl() {
    if (closed || !election || !election->is_master()) return;
    const std::string f = my_fence();
    if (f.empty()) return;
    auto w = weak();
    if (auto st = zk->ensure_path(layout::ddl_requests); !st) return;
    auto kids = zk->children(layout::ddl_requests, [w](const watch_event&) {
      if (auto s = w.lock()) s->serve_ddl();
    });
    if (!kids) return;
    if (auto st = serve_ddl_requests(*zk, f, [this] { return live_ids(); }); !st)
      spdlog::warn("cellar: serving DDL requests: {}", st.to_string());
  }

  void on_elected(const master_info& me) {
    {
      std::lock_guard lock(mutex);
      fence = me.znode;
    }
    if (cb.mastership_changed && !closed) cb.mastership_changed(true, me.term);
    auto w = weak();
    zk->post([w] {
      if (auto s = w.lock()) s->serve_ddl();
    });
  }

  void on_deposed() {
    {
      std::lock_guard lock(mutex);
      fence.clear();
    }
    if (cb.mastership_changed && !closed) cb.mastership_changed(false, 0);
  }

  void on_session(const session_event& ev) {
    if (closed || ev.state != session_state::connected || !ev.new_session) return;
    refresh_catalog();  // the old session's watches are gone
    refresh_placement();
  }

  status not_master() const {
    auto m = master_election::current(*zk);
    return {code::unavailable, "node '" + options.self.id + "' is not the master" +
                                   (m ? " (the master is '" + m->node_id + "')" : std::string(" (there is none)"))};
  }
};

result<std::unique_ptr<cluster_node>> cluster_node::start(cluster_options options, cluster_callbacks callbacks) {
  if (auto st = check_node_id(options.self.id); !st) return st;
  auto zk = zk_client::open(options.zookeeper);
  if (!zk) return zk.error();
  auto s = std::make_shared<state>();
  s->options = std::move(options);
  s->cb = std::move(callbacks);
  s->zk = std::move(*zk);
  std::weak_ptr<state> w = s;
  s->listener = s->zk->add_session_listener([w](const session_event& ev) {
    if (auto st = w.lock()) st->on_session(ev);
  });
  s->zk->post([w] {
    if (auto st = w.lock()) {
      st->refresh_catalog();
      st->refresh_placement();
    }
  });
  s->zk->barrier();
  auto m = membership::join(
      *s->zk, s->options.self,
      [w](const std::vector<node_info>& v) {
        auto st = w.lock();
        if (st && st->cb.members_changed && !st->closed) st->cb.members_changed(v);
      },
      s->options.wait_for_previous);
  if (!m) return m.error();
  s->members = std::move(*m);
  auto e = master_election::enter(*s->zk, s->options.self.id,
                                  {[w](const master_info& me) {
                                     if (auto st = w.lock()) st->on_elected(me);
                                   },
                                   [w] {
                                     if (auto st = w.lock()) st->on_deposed();
                                   }});
  if (!e) return e.error();
  // The election may call back before enter() returns; serve_ddl needs `election` set.
  auto held = std::make_shared<std::unique_ptr<master_election>>(std::move(*e));
  s->zk->post([w, held] {
    if (auto st = w.lock()) st->election = std::move(*held);
  });
  s->zk->barrier();
  s->zk->post([w] {
    if (auto st = w.lock()) st->serve_ddl();
  });
  return std::unique_ptr<cluster_node>(new cluster_node(std::move(s)));
}

cluster_node::cluster_node(std::shared_ptr<state> st) : st_(std::move(st)) {}

cluster_node::~cluster_node() {
  // The election and the membership are used on the event thread: take them off it there.
  std::unique_ptr<master_election> election;
  std::unique_ptr<membership> members;
  st_->zk->post([&] { election = std::move(st_->election); });
  st_->zk->barrier();
  election.reset();  // withdraws; a master hears deposed (mastership_changed(false)) here
  st_->closed = true;
  st_->zk->post([&] { members = std::move(st_->members); });
  st_->zk->barrier();
  members.reset();
  st_->zk->remove_session_listener(st_->listener);
  st_->zk->barrier();
  st_->zk.reset();
}

const node_info& cluster_node::self() const { return st_->options.self; }
zk_client& cluster_node::zookeeper() { return *st_->zk; }
std::vector<node_info> cluster_node::members() const { return st_->members->members(); }
bool cluster_node::is_master() const { return !st_->my_fence().empty(); }
result<master_info> cluster_node::master() const { return master_election::current(*st_->zk); }

std::shared_ptr<const cluster_catalog> cluster_node::catalog() const {
  std::lock_guard lock(st_->mutex);
  return st_->catalog;
}

std::shared_ptr<const placement_map> cluster_node::placement() const {
  std::lock_guard lock(st_->mutex);
  return st_->placement;
}

result<std::uint64_t> cluster_node::ddl(const ddl_request& r) {
  return submit_ddl(*st_->zk, r, st_->options.ddl_timeout);
}

result<std::uint64_t> cluster_node::move(const partition_ref& p, const std::string& to) {
  auto& zk = *st_->zk;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const std::string fence = st_->my_fence();
    if (fence.empty()) return st_->not_master();
    const auto live = st_->live_ids();
    if (std::find(live.begin(), live.end(), to) == live.end())
      return status{code::not_found, "node '" + to + "' is not a live member of the cluster"};
    auto pl = read_placement(zk);
    if (!pl) return pl.error();
    auto moved = apply_move(pl->map, p, to);
    if (!moved) return moved.error();
    if (moved->epoch == pl->map.epoch) return pl->map.epoch;  // already there
    auto done = zk.multi({zk_op::check(fence, 0), placement_op(*pl, *moved)});
    if (done) {
      spdlog::info("cellar: partition {}/{} moves to '{}' (epoch {})", p.table, p.index, to, moved->epoch);
      return moved->epoch;
    }
    auto f = zk.exists(fence);
    if (!f || !f->has_value()) return st_->not_master();
    if (done.code() != code::conflict && done.code() != code::already_exists) return done.error();
  }
  return status{code::conflict, "the placement map kept changing; try the move again"};
}

result<std::vector<planned_move>> cluster_node::plan_balance() const {
  if (st_->my_fence().empty()) return st_->not_master();
  auto pl = read_placement(*st_->zk);
  if (!pl) return pl.error();
  const auto live = st_->live_ids();
  auto out = cellar::cluster::plan_balance(pl->map, live);
  for (auto& mv : plan_replica_balance(pl->map, live)) out.push_back(std::move(mv));
  return out;
}

}  // namespace cellar::cluster
