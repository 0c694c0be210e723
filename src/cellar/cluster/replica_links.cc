#include "cluster/replica_links.h"

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <map>
#include <set>

namespace cellar::cluster {

struct replica_links::state {
  caf::actor_system& sys;
  std::shared_ptr<peer_directory> peers;
  std::chrono::milliseconds timeout;
  // A node's link actor, held here: CAF destroys an actor nothing references, and the link
  // actor is referenced by nothing else once its connect has been answered and its timeout
  // has passed; it would then no longer watch the connection, nor let go of its node.
  struct link {
    std::uint64_t serial = 0;  // which link of the node this is
    caf::actor actor;          // null while it is being spawned
    bool connected = false;    // it handed the directory the endpoint it watches
  };
  absl::Mutex mu;
  std::map<std::string, link> linking ABSL_GUARDED_BY(mu);  // nodes with a link actor (connecting or connected)
  std::uint64_t next_serial ABSL_GUARDED_BY(mu) = 0;
  bool closed ABSL_GUARDED_BY(mu) = false;

  state(caf::actor_system& s, std::shared_ptr<peer_directory> p, std::chrono::milliseconds t)
      : sys(s), peers(std::move(p)), timeout(t) {}

  // Link `serial` of `node` has ended (only if it is still that node's link).
  void unlink(const std::string& node, std::uint64_t serial) ABSL_LOCKS_EXCLUDED(mu) {
    caf::actor gone;  // released after the lock
    absl::MutexLock lock(&mu);
    auto it = linking.find(node);
    if (it == linking.end() || it->second.serial != serial) return;
    gone = std::move(it->second.actor);
    linking.erase(it);
  }

  // Link `serial` of `node` watches the endpoint it gave the directory.
  void connected(const std::string& node, std::uint64_t serial) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    auto it = linking.find(node);
    if (it != linking.end() && it->second.serial == serial) it->second.connected = true;
  }
};

namespace {

using links_state = replica_links::state;

// Connects to `node`'s endpoint without blocking, then watches the connection: when the
// endpoint goes (the node died or the connection broke) the directory forgets it. However it
// ends, the node's next message makes a new link.
caf::behavior link_actor(caf::event_based_actor* self, std::shared_ptr<links_state> st, std::string node,
                         peer_directory::location where, std::uint64_t serial) {
  self->attach_functor([st, node, serial] { st->unlink(node, serial); });
  self->set_down_handler([self, st, node](const caf::down_msg& d) {
    st->peers->forget(node, d.source);
    self->quit();
  });
  self->request(self->system().middleman().actor_handle(), st->timeout, caf::connect_atom::value, where.host,
                where.port)
      .then(
          [self, st, node, where, serial](caf::node_id&, caf::strong_actor_ptr& found,
                                          std::set<std::string>& interface) {
            auto ep = st->peers->accept(node, where, std::move(found), interface);
            if (!ep) {
              self->quit();
              return;
            }
            self->monitor(*ep);
            st->connected(node, serial);
          },
          [self](caf::error&) { self->quit(); });
  return {[](caf::ok_atom) {}};
}

bool send_via(const std::shared_ptr<links_state>& st, const std::string& node, node_replica m) {
  auto where = st->peers->find(node);
  if (!where) return false;
  if (where->ep) {
    caf::anon_send(where->ep, std::move(m));
    return true;
  }
  std::uint64_t serial = 0;
  caf::actor replaced;  // told to stop after the lock
  {
    absl::MutexLock lock(&st->mu);
    if (st->closed) return false;
    if (auto it = st->linking.find(node); it != st->linking.end()) {
      // Still connecting: its connect ends within the timeout, either way.
      if (!it->second.connected) return false;
      // Connected, but the directory let go of that endpoint (the node left the membership
      // or moved): a new link connects to where the node is now.
      replaced = std::move(it->second.actor);
      st->linking.erase(it);
    }
    serial = ++st->next_serial;
    st->linking[node].serial = serial;
  }
  if (replaced) caf::anon_send_exit(replaced, caf::exit_reason::user_shutdown);
  auto actor = st->sys.spawn<caf::hidden>(link_actor, st, node, std::move(where.value()), serial);
  bool stop = false;
  {
    absl::MutexLock lock(&st->mu);
    auto it = st->linking.find(node);
    if (it != st->linking.end() && it->second.serial == serial) {
      if (st->closed)
        st->linking.erase(it);
      else
        it->second.actor = actor;
    }
    stop = st->closed;
  }
  if (stop) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
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
  std::map<std::string, state::link> links;  // stopped after the lock
  {
    absl::MutexLock lock(&st_->mu);
    st_->closed = true;
    links.swap(st_->linking);
  }
  for (auto& [node, l] : links)
    if (l.actor) caf::anon_send_exit(l.actor, caf::exit_reason::user_shutdown);
}

bool replica_links::send(const std::string& node, node_replica m) { return send_via(st_, node, std::move(m)); }

std::unique_ptr<replica::transport> replica_links::transport_for(std::string table, std::uint32_t index) {
  return std::make_unique<partition_transport>(st_, std::move(table), index);
}

}  // namespace cellar::cluster
