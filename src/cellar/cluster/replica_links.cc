#include "cluster/replica_links.h"

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <set>

namespace cellar::cluster {

struct replica_links::state {
  caf::actor_system& sys;
  std::shared_ptr<peer_directory> peers;
  std::chrono::milliseconds timeout;
  absl::Mutex mu;
  std::set<std::string> linking ABSL_GUARDED_BY(mu);  // nodes with a link actor (connecting or connected)
  bool closed ABSL_GUARDED_BY(mu) = false;

  state(caf::actor_system& s, std::shared_ptr<peer_directory> p, std::chrono::milliseconds t)
      : sys(s), peers(std::move(p)), timeout(t) {}

  void unlink(const std::string& node) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    linking.erase(node);
  }
};

namespace {

using links_state = replica_links::state;

// Connects to `node`'s endpoint without blocking, then watches the connection: when the
// endpoint goes (the node died or the connection broke) the directory forgets it.
caf::behavior link_actor(caf::event_based_actor* self, std::shared_ptr<links_state> st, std::string node,
                         peer_directory::location where) {
  self->set_down_handler([self, st, node](const caf::down_msg& d) {
    st->peers->forget(node, d.source);
    st->unlink(node);
    self->quit();
  });
  self->request(self->system().middleman().actor_handle(), st->timeout, caf::connect_atom::value, where.host,
                where.port)
      .then(
          [self, st, node, where](caf::node_id&, caf::strong_actor_ptr& found, std::set<std::string>& interface) {
            auto ep = st->peers->accept(node, where, std::move(found), interface);
            if (!ep) {
              st->unlink(node);
              self->quit();
              return;
            }
            self->monitor(*ep);
          },
          [self, st, node](caf::error&) {
            st->unlink(node);
            self->quit();
          });
  return {[](caf::ok_atom) {}};
}

bool send_via(const std::shared_ptr<links_state>& st, const std::string& node, node_replica m) {
  auto where = st->peers->find(node);
  if (!where) return false;
  if (where->ep) {
    caf::anon_send(where->ep, std::move(m));
    return true;
  }
  {
    absl::MutexLock lock(&st->mu);
    if (st->closed || !st->linking.insert(node).second) return false;
  }
  st->sys.spawn<caf::hidden>(link_actor, st, node, std::move(where.value()));
  return false;
}

class partition_transport final : public replica::transport {
 public:
  partition_transport(std::shared_ptr<links_state> st, std::string table, std::uint32_t index)
      : st_(std::move(st)), table_(std::move(table)), index_(index) {}
  bool deliver(raft_id, const std::string& address, std::string bytes) override {
    return send_via(st_, address, node_replica{table_, index_, std::move(bytes)});
  }

 private:
  std::shared_ptr<links_state> st_;
  std::string table_;
  std::uint32_t index_;
};

}  // namespace

replica_links::replica_links(caf::actor_system& sys, std::shared_ptr<peer_directory> peers,
                             std::chrono::milliseconds connect_timeout)
    : st_(std::make_shared<state>(sys, std::move(peers), connect_timeout)) {}

replica_links::~replica_links() {
  absl::MutexLock lock(&st_->mu);
  st_->closed = true;
}

bool replica_links::send(const std::string& node, node_replica m) { return send_via(st_, node, std::move(m)); }

std::unique_ptr<replica::transport> replica_links::transport_for(std::string table, std::uint32_t index) {
  return std::make_unique<partition_transport>(st_, std::move(table), index);
}

}  // namespace cellar::cluster
