#include "cluster/replica_host.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <set>
#include <tuple>

#include "cluster/replica_router.h"
#include "replica/replicated_partition.h"
#include "replica/storage.h"
#include "store/partition_factory.h"

namespace cellar::cluster {

// What holds a replica's actor running: the routers that reach it (and join() until a
// placement takes it over) share one; the last to let go stops it.
struct replica_host::lease {
  caf::actor actor;
  explicit lease(caf::actor a) : actor(std::move(a)) {}
  lease(const lease&) = delete;
  lease& operator=(const lease&) = delete;
  ~lease() { caf::anon_send(actor, detail::stop_request{}); }
};

namespace {

// Deletes the Raft files `<base>.raftlog` and `<base>.raftsnap` (replica/storage.h), and
// what a write cut short by a crash left of their replacements.
void remove_raft_files(const std::string& base) {
  std::error_code ec;
  for (const char* suffix : {".raftlog", ".raftsnap", ".raftlog.tmp", ".raftsnap.tmp"})
    std::filesystem::remove(base + suffix, ec);
}

using part = std::pair<std::uint64_t, std::uint32_t>;  // table uid, partition index

// The table uid and the partition of a replica's files, named `<uid>-<index>.raft...`.
std::optional<part> parse_raft_file(const std::string& name) {
  const auto dash = name.find('-');
  const auto dot = name.find(".raft");
  if (dash == std::string::npos || dot == std::string::npos || dash == 0 || dot <= dash + 1) return std::nullopt;
  part p;
  const char* s = name.data();
  if (std::from_chars(s, s + dash, p.first).ptr != s + dash) return std::nullopt;
  if (std::from_chars(s + dash + 1, s + dot, p.second).ptr != s + dot) return std::nullopt;
  return p;
}

// The partitions with Raft files in `dir` (none when it does not exist).
std::set<part> raft_files_in(const std::string& dir) {
  std::set<part> out;
  std::error_code ec;
  if (dir.empty()) return out;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (auto p = parse_raft_file(it->path().filename().string())) out.insert(*p);
  return out;
}

// The table uid in a group's name (replica_host::group_name).
std::uint64_t uid_of(const std::string& group) {
  std::uint64_t uid = 0;
  const auto hash = group.rfind('#');
  if (hash != std::string::npos) std::from_chars(group.data() + hash + 1, group.data() + group.size(), uid);
  return uid;
}

std::string raft_name(const part& p) { return std::to_string(p.first) + "-" + std::to_string(p.second); }

}  // namespace

// What a replica's actor uses by reference: the actor holds it (replication_config::keep)
// and drops it when it exits; its Raft files go then if the replica left its group.
struct replica_host::home {
  std::unique_ptr<replica::replica_storage> storage;
  std::unique_ptr<replica::transport> net;
  std::shared_ptr<std::atomic<bool>> discard = std::make_shared<std::atomic<bool>>(false);
  std::string files;  // the storage's path without its suffix; empty in memory
  ~home() {
    storage.reset();
    if (!files.empty() && discard->load()) remove_raft_files(files);
  }
};

namespace {

// The storage of partition `index`'s replica and the path of its files (empty in memory).
// `fresh`: delete what an earlier replica left there first.
result<std::unique_ptr<replica::replica_storage>> open_storage(const store_options& o,
                                                               const detail::table_schema& schema, std::uint32_t index,
                                                               bool fresh, std::string& files) {
  if (o.directory.empty() || o.durability == durability::snapshot)
    return std::unique_ptr<replica::replica_storage>(std::make_unique<replica::memory_storage>());
  const std::string dir = o.directory + "/raft";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return status{code::io_error, "cannot create " + dir + ": " + ec.message()};
  const std::string name = std::to_string(schema.uid) + "-" + std::to_string(index);
  files = dir + "/" + name;
  if (fresh) remove_raft_files(files);
  auto f = replica::file_storage::open(dir, name, o.durability == durability::log_sync);
  if (!f) return f.error();
  return std::unique_ptr<replica::replica_storage>(std::move(*f));
}

}  // namespace

replica_host::replica_host(detail::cluster_seat& seat, std::shared_ptr<peer_directory> peers,
                           replica_host_options options)
    : seat_(seat), peers_(peers), opts_(std::move(options)), links_(seat.system(), std::move(peers)) {}

replica_host::~replica_host() {
  std::map<key, std::shared_ptr<lease>> joining;  // released after the lock
  absl::MutexLock lock(&running_->mu);
  joining.swap(running_->joining);
}

std::string replica_host::group_name(const detail::table_schema& schema) { return group_name(schema.name, schema.uid); }

std::string replica_host::group_name(const std::string& table, std::uint64_t uid) {
  return table + "#" + std::to_string(uid);
}

std::shared_ptr<replica_host::lease> replica_host::spawn(const detail::schema_ptr& schema, std::uint32_t index,
                                                         std::uint64_t id, std::uint64_t preferred,
                                                         std::vector<replica::member> members, bool fresh,
                                                         status& why) {
  const std::string group = group_name(*schema);
  const auto& factory = seat_.partitions();
  absl::MutexLock files(&files_mu_);  // until it is registered: sweep() sees it running
  auto h = std::make_shared<home>();
  auto storage = open_storage(factory.options(), *schema, index, fresh, h->files);
  if (!storage) {
    why = storage.error();
    return nullptr;
  }
  h->storage = std::move(*storage);
  h->net = links_.transport_for(group, index);
  replica::replication_config c;
  c.group.id = id;
  c.group.address = opts_.self;
  c.group.election_timeout_ms = opts_.election_timeout_ms;
  c.group.heartbeat_timeout_ms = opts_.heartbeat_timeout_ms;
  c.group.preferred_leader = preferred;  // the set's front: where routed clients send first
  c.members = std::move(members);
  c.storage = h->storage.get();
  c.net = h->net.get();
  auto discard = h->discard;
  c.keep = std::move(h);
  auto actor = caf::actor_cast<caf::actor>(
      replica::spawn_replicated_partition(seat_.system(), factory.replica_config(schema, index), std::move(c)));
  auto held = std::make_shared<lease>(actor);
  {
    absl::MutexLock lock(&running_->mu);
    running_->replicas[{group, index}] = entry{actor, held, id, discard};
  }
  // After the insertion: on a replica that has stopped already, the functor runs at once.
  actor->attach_functor([weak = std::weak_ptr<running>(running_), k = key(group, index), addr = actor.address()] {
    auto r = weak.lock();
    if (!r) return;
    caf::actor gone;  // released after the lock
    absl::MutexLock lock(&r->mu);
    if (auto it = r->replicas.find(k); it != r->replicas.end() && it->second.actor.address() == addr) {
      gone = std::move(it->second.actor);
      r->replicas.erase(it);
    }
  });
  return held;
}

detail::partition_ref replica_host::place(const detail::schema_ptr& schema, std::uint32_t index,
                                          const partition_owner& owner) {
  const auto& replicas = owner.replicas;
  detail::partition_ref ref;
  ref.id = {schema->uid, index};
  replica_router_config rc;
  rc.table = schema->name;
  rc.index = index;
  rc.uid = schema->uid;
  rc.self = opts_.self;
  rc.replicas = replicas;
  rc.forward_timeout = opts_.forward_timeout;
  rc.deadline = opts_.forward_timeout;
  const key k{group_name(*schema), index};
  const auto me = std::find(replicas.begin(), replicas.end(), opts_.self);
  const std::uint64_t preferred = owner.replica_id(0);
  std::shared_ptr<lease> held;
  std::shared_ptr<lease> joined;  // released after the lock
  {
    absl::MutexLock lock(&running_->mu);
    auto it = running_->replicas.find(k);
    if (it != running_->replicas.end()) {
      if (me == replicas.end()) {
        // The placement dropped this node: its replica goes with the last router that
        // holds it, and its state with it.
        it->second.discard->store(true);
      } else if (it->second.id == owner.replica_id(static_cast<std::size_t>(me - replicas.begin()))) {
        held = it->second.shared.lock();
      }
    }
    if (auto j = running_->joining.find(k); j != running_->joining.end() && (held || me == replicas.end())) {
      joined = std::move(j->second);
      running_->joining.erase(j);
    }
  }
  if (me != replicas.end()) {
    ref.replica_here = true;
    if (held) {
      caf::anon_send(held->actor, replica::replica_prefer_atom::value, preferred);
    } else {
      std::vector<replica::member> members;
      // A pristine replica bootstraps the initial configuration, the same on every replica;
      // after a membership change it waits for the leader instead.
      if (owner.replica_ids.empty())
        for (std::size_t i = 0; i < replicas.size(); ++i) members.push_back({i + 1, replicas[i]});
      status why;
      held = spawn(schema, index, owner.replica_id(static_cast<std::size_t>(me - replicas.begin())), preferred,
                   std::move(members), false, why);
      if (!held)
        spdlog::error("cellar: the replica of partition {} of '{}' cannot start: {}", index, schema->name,
                      why.to_string());
    }
    if (held) {
      rc.local = caf::actor_cast<detail::partition_actor>(held->actor);
      rc.local_lease = held;
    }
  }
  ref.actor = spawn_replica_router(seat_.system(), peers_, std::move(rc));
  return ref;
}

status replica_host::join(const detail::schema_ptr& schema, std::uint32_t index, std::uint64_t id) {
  const key k{group_name(*schema), index};
  {
    absl::MutexLock lock(&running_->mu);
    if (auto it = running_->replicas.find(k); it != running_->replicas.end()) {
      if (it->second.id == id && !it->second.discard->load()) return status::ok();
      return {code::conflict, "node '" + opts_.self + "' still runs an earlier replica of partition " +
                                  std::to_string(index) + " of '" + schema->name + "'; try again once it has stopped"};
    }
  }
  status why;
  auto held = spawn(schema, index, id, 0, {}, true, why);
  if (!held) return why;
  absl::MutexLock lock(&running_->mu);
  running_->joining[k] = std::move(held);
  return status::ok();
}

status replica_host::stage(const detail::schema_ptr& schema, std::uint32_t index, const partition_owner& owner) {
  const key k{group_name(*schema), index};
  const auto me = std::find(owner.replicas.begin(), owner.replicas.end(), opts_.self);
  if (me == owner.replicas.end())
    return {code::not_owner, "node '" + opts_.self + "' holds no replica of partition " + std::to_string(index) +
                                 " of '" + schema->name + "'"};
  const std::uint64_t id = owner.replica_id(static_cast<std::size_t>(me - owner.replicas.begin()));
  {
    absl::MutexLock lock(&running_->mu);
    if (auto it = running_->replicas.find(k); it != running_->replicas.end() && running_->joining.count(k))
      return it->second.id == id ? status::ok() : status{code::conflict, "another replica of the group runs here"};
  }
  std::vector<replica::member> members;
  for (std::size_t i = 0; i < owner.replicas.size(); ++i) members.push_back({owner.replica_id(i), owner.replicas[i]});
  status why;
  auto held = spawn(schema, index, id, owner.replica_id(0), std::move(members), true, why);
  if (!held) return why;
  absl::MutexLock lock(&running_->mu);
  running_->joining[k] = std::move(held);
  return status::ok();
}

void replica_host::leave(const std::string& group, std::uint32_t index) {
  std::shared_ptr<lease> gone;  // released after the lock: that stops the replica
  absl::MutexLock lock(&running_->mu);
  auto j = running_->joining.find({group, index});
  if (j == running_->joining.end()) return;
  gone = std::move(j->second);
  running_->joining.erase(j);
  if (auto it = running_->replicas.find({group, index}); it != running_->replicas.end())
    it->second.discard->store(true);
}

std::string replica_host::raft_dir() const {
  const auto& dir = seat_.partitions().options().directory;
  return dir.empty() ? std::string() : dir + "/raft";
}

void replica_host::drop_table(std::uint64_t uid) {
  std::vector<std::shared_ptr<lease>> joined;  // released after the locks: that stops them
  std::vector<caf::actor> stop;
  const std::string dir = raft_dir();
  absl::MutexLock files(&files_mu_);
  std::set<std::uint32_t> runs;
  {
    absl::MutexLock lock(&running_->mu);
    for (auto it = running_->joining.begin(); it != running_->joining.end();) {
      if (uid_of(it->first.first) != uid) {
        ++it;
        continue;
      }
      joined.push_back(std::move(it->second));
      it = running_->joining.erase(it);
    }
    for (auto& [k, e] : running_->replicas) {
      if (uid_of(k.first) != uid) continue;
      // Its state goes when it stops; the routers of the table are stopping too, but an
      // earlier placement's may linger with a client, so it is stopped now.
      e.discard->store(true);
      stop.push_back(e.actor);
      runs.insert(k.second);
    }
  }
  for (const auto& p : raft_files_in(dir)) {
    if (p.first != uid || runs.count(p.second)) continue;
    remove_raft_files(dir + "/" + raft_name(p));
    spdlog::info("cellar: deleted the Raft files {}.* of a dropped table's replica", raft_name(p));
  }
  for (auto& a : stop) caf::anon_send(a, detail::stop_request{});
}

void replica_host::sweep(const std::function<std::string(std::uint64_t, std::uint32_t)>& stale) {
  const std::string dir = raft_dir();
  // What this node holds: its files, and the replicas running but for those join() started
  // (one place() marked to discard included: a router of an earlier placement may keep it
  // running).
  std::set<part> held = raft_files_in(dir);
  {
    absl::MutexLock lock(&running_->mu);
    for (const auto& [k, e] : running_->replicas)
      if (!running_->joining.count(k)) held.insert({uid_of(k.first), k.second});
  }
  std::map<part, std::string> gone;
  for (const auto& p : held)
    if (auto why = stale(p.first, p.second); !why.empty()) gone.emplace(p, std::move(why));
  if (gone.empty()) return;
  std::vector<caf::actor> stop;  // told after the locks
  {
    // Looked at again under the locks: a replica may have started or stopped meanwhile.
    absl::MutexLock files(&files_mu_);
    absl::MutexLock lock(&running_->mu);
    std::set<part> runs;
    for (const auto& [k, e] : running_->replicas) {
      const part p{uid_of(k.first), k.second};
      auto g = gone.find(p);
      if (g == gone.end()) continue;
      runs.insert(p);
      if (running_->joining.count(k)) continue;
      // A router of an earlier placement may still hold it (a client's request in flight, a
      // runtime not released yet): it is told to stop now, and its own actor stops its Raft
      // instance; its Raft state goes as it exits.
      stop.push_back(e.actor);
      if (!e.discard->exchange(true))
        spdlog::info(
            "cellar: the replica {} of partition {} of '{}' is stale ({}): stopping it; its Raft state goes "
            "as it stops",
            raft_name(p), k.second, k.first, g->second);
    }
    for (const auto& [p, why] : gone) {
      if (runs.count(p) || dir.empty()) continue;
      remove_raft_files(dir + "/" + raft_name(p));
      spdlog::info("cellar: deleted the stale Raft files {}.* ({})", raft_name(p), why);
    }
  }
  for (auto& a : stop) caf::anon_send(a, detail::stop_request{});
}

std::string stale_replica(const replica_view& v, std::uint64_t uid, std::uint32_t index) {
  if (v.catalog == nullptr) return {};
  const std::string* table = nullptr;
  for (const auto& [name, schema] : v.catalog->tables)
    if (schema.uid == uid) table = &name;
  if (table == nullptr) {
    // A uid the catalog never gave out is newer than the catalog seen: keep it.
    if (uid >= v.catalog->next_uid) return {};
    return "table uid " + std::to_string(uid) + " is no longer in the catalog";
  }
  const auto* owners = v.applied ? v.applied(*table, uid) : nullptr;
  if (owners == nullptr || index >= owners->size() || (*owners)[index].holds(v.self)) return {};
  // A move adding a replica here runs (a learner catching up, or a voter the map does not
  // name yet): its state is the group's.
  if (!v.intent) return {};
  auto intent = v.intent(*table, index);
  if (intent) {
    if (intent->ends_with(" " + v.self)) return {};
  } else if (intent.code() != code::not_found) {
    return {};
  }
  return "the placement does not name node '" + v.self + "' for partition " + std::to_string(index) + " of '" + *table +
         "'";
}

std::vector<replica_report> replica_host::report(std::chrono::milliseconds timeout) const {
  std::map<key, caf::actor> replicas;
  {
    absl::MutexLock lock(&running_->mu);
    for (const auto& [k, e] : running_->replicas) replicas[k] = e.actor;
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
    out += (i == 0 ? "; " : ", ") + p.who.address + (p.voter ? "" : " (learner)") + " matches " +
           std::to_string(p.match_index) + " (" + std::to_string(behind) + " behind)";
  }
  return out;
}

caf::actor replica_host::replica(const std::string& group, std::uint32_t index) const {
  absl::MutexLock lock(&running_->mu);
  auto it = running_->replicas.find({group, index});
  return it == running_->replicas.end() ? caf::actor{} : it->second.actor;
}

}  // namespace cellar::cluster
