#include "cluster/replica_host.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "cluster/replica_router.h"
#include "replica/replicated_partition.h"
#include "replica/storage.h"
#include "store/partition_factory.h"

namespace cellar::cluster {

namespace {

// What a replica's actor uses by reference: the actor holds it (replication_config::keep).
struct replica_home {
  std::unique_ptr<replica::replica_storage> storage;
  std::unique_ptr<replica::transport> net;
};

result<std::unique_ptr<replica::replica_storage>> open_storage(const store_options& o, const detail::table_schema& schema,
                                                               std::uint32_t index) {
  if (o.directory.empty() || o.durability == durability::snapshot)
    return std::unique_ptr<replica::replica_storage>(std::make_unique<replica::memory_storage>());
  const std::string dir = o.directory + "/raft";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return status{code::io_error, "cannot create " + dir + ": " + ec.message()};
  auto f = replica::file_storage::open(dir, std::to_string(schema.uid) + "-" + std::to_string(index),
                                       o.durability == durability::log_sync);
  if (!f) return f.error();
  return std::unique_ptr<replica::replica_storage>(std::move(*f));
}

}  // namespace

replica_host::replica_host(detail::cluster_seat& seat, std::shared_ptr<peer_directory> peers,
                           replica_host_options options)
    : seat_(seat), peers_(peers), opts_(std::move(options)), links_(seat.system(), std::move(peers)) {}

std::string replica_host::group_name(const detail::table_schema& schema) {
  return schema.name + "#" + std::to_string(schema.uid);
}

detail::partition_ref replica_host::place(const detail::schema_ptr& schema, std::uint32_t index,
                                          const std::vector<std::string>& replicas) {
  detail::partition_ref ref;
  ref.id = {schema->uid, index};
  replica_router_config rc;
  rc.table = schema->name;
  rc.index = index;
  rc.self = opts_.self;
  rc.replicas = replicas;
  rc.forward_timeout = opts_.forward_timeout;
  rc.deadline = opts_.forward_timeout;
  const std::string group = group_name(*schema);
  auto me = std::find(replicas.begin(), replicas.end(), opts_.self);
  if (me != replicas.end()) {
    ref.replica_here = true;
    const auto& factory = seat_.partitions();
    auto storage = open_storage(factory.options(), *schema, index);
    if (!storage) {
      spdlog::error("cellar: the replica of partition {} of '{}' cannot start: {}", index, schema->name,
                    storage.error().to_string());
    } else {
      auto home = std::make_shared<replica_home>();
      home->storage = std::move(*storage);
      home->net = links_.transport_for(group, index);
      replica::replication_config c;
      c.group.id = static_cast<std::uint64_t>(me - replicas.begin()) + 1;
      c.group.address = opts_.self;
      c.group.election_timeout_ms = opts_.election_timeout_ms;
      c.group.heartbeat_timeout_ms = opts_.heartbeat_timeout_ms;
      c.group.preferred_leader = 1;  // replicas.front(): where routed clients send first
      for (std::size_t i = 0; i < replicas.size(); ++i) c.members.push_back({i + 1, replicas[i]});
      c.storage = home->storage.get();
      c.net = home->net.get();
      c.keep = std::move(home);
      auto actor = caf::actor_cast<caf::actor>(
          replica::spawn_replicated_partition(seat_.system(), factory.replica_config(schema, index), std::move(c)));
      rc.local = caf::actor_cast<detail::partition_actor>(actor);
      {
        absl::MutexLock lock(&running_->mu);
        running_->replicas[{group, index}] = actor;
      }
      // After the insertion: on a replica that has stopped already, the functor runs at once.
      actor->attach_functor([weak = std::weak_ptr<running>(running_), key = std::make_pair(group, index),
                             addr = actor.address()] {
        auto r = weak.lock();
        if (!r) return;
        caf::actor gone;  // released after the lock
        absl::MutexLock lock(&r->mu);
        if (auto it = r->replicas.find(key); it != r->replicas.end() && it->second.address() == addr) {
          gone = std::move(it->second);
          r->replicas.erase(it);
        }
      });
    }
  }
  ref.actor = spawn_replica_router(seat_.system(), peers_, std::move(rc));
  return ref;
}

std::vector<replica_report> replica_host::report(std::chrono::milliseconds timeout) const {
  std::map<std::pair<std::string, std::uint32_t>, caf::actor> replicas;
  {
    absl::MutexLock lock(&running_->mu);
    replicas = running_->replicas;
  }
  std::vector<replica_report> out;
  caf::scoped_actor self{seat_.system()};
  for (const auto& [key, actor] : replicas) {
    replica_report r;
    r.table = key.first.substr(0, key.first.rfind('#'));
    r.index = key.second;
    r.status.role = "unreachable";
    self->request(actor, timeout, replica::replica_status_atom::value)
        .receive([&](replica::group_status& s) { r.status = std::move(s); }, [](caf::error&) {});
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const replica_report& a, const replica_report& b) {
    return std::tie(a.table, a.index) < std::tie(b.table, b.index);
  });
  return out;
}

std::string format_replica(const replica_report& r) {
  const auto& s = r.status;
  std::string out = r.table + "/" + std::to_string(r.index) + " " + s.role;
  if (s.role == "unreachable" || s.role == "stopped") return out;
  if (s.role == "follower") out += " of " + (s.leader.id == 0 ? std::string("(none known)") : s.leader.address);
  out += ", term " + std::to_string(s.term) + ", log " + std::to_string(s.last_index) + ", committed " +
         std::to_string(s.commit_index) + ", applied " + std::to_string(s.last_applied);
  for (std::size_t i = 0; i < s.peers.size(); ++i) {
    const auto& p = s.peers[i];
    const auto behind = s.last_index > p.match_index ? s.last_index - p.match_index : 0;
    out += (i == 0 ? "; " : ", ") + p.who.address + " matches " + std::to_string(p.match_index) + " (" +
           std::to_string(behind) + " behind)";
  }
  return out;
}

caf::actor replica_host::replica(const std::string& group, std::uint32_t index) const {
  absl::MutexLock lock(&running_->mu);
  auto it = running_->replicas.find({group, index});
  return it == running_->replicas.end() ? caf::actor{} : it->second;
}

}  // namespace cellar::cluster
