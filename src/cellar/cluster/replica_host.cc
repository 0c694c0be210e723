#include "cluster/replica_host.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

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
      for (std::size_t i = 0; i < replicas.size(); ++i) c.members.push_back({i + 1, replicas[i]});
      c.storage = home->storage.get();
      c.net = home->net.get();
      c.keep = std::move(home);
      auto actor = caf::actor_cast<caf::actor>(
          replica::spawn_replicated_partition(seat_.system(), factory.replica_config(schema, index), std::move(c)));
      rc.local = caf::actor_cast<detail::partition_actor>(actor);
      absl::MutexLock lock(&mu_);
      replicas_[{group, index}] = actor;
    }
  }
  ref.actor = spawn_replica_router(seat_.system(), peers_, std::move(rc));
  return ref;
}

caf::actor replica_host::replica(const std::string& group, std::uint32_t index) const {
  absl::MutexLock lock(&mu_);
  auto it = replicas_.find({group, index});
  return it == replicas_.end() ? caf::actor{} : it->second;
}

}  // namespace cellar::cluster
