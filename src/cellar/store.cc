// store.cc: the embedded API's store and table (cellar/store.h), over the parts of
// store/store_impl.h.
#include "cellar/store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <semaphore>
#include <set>
#include <thread>
#include <tuple>

#include "catalog/hbase_options.h"
#include "catalog/namespaces.h"
#include "cellar/names.h"
#include "partition/ask.h"
#include "partition/memtable.h"
#include "store/checkpoint_snapshots.h"
#include "store/reshape.h"
#include "store/scheduler_tuning.h"
#include "store/store_impl.h"
#include "util/resend.h"

namespace cellar {

namespace detail {

namespace {

// What a cluster member runs this store with (store/access.h).
class seat_of_store final : public cluster_seat {
 public:
  explicit seat_of_store(store_impl& s) : s_(s) {}
  caf::actor_system& system() override { return *s_.system; }
  catalog_service& catalog() override { return *s_.catalog; }
  const partition_factory& partitions() override { return *s_.partitions; }
  cluster_state& cluster() override { return s_.cluster; }
  store_persistence* persistence() override { return s_.persistence.get(); }
  result<snapshot_stats> snapshot() override { return s_.snapshot(); }
  snapshot_repo& snapshots() override { return *s_.snapshots; }
  std::chrono::milliseconds split_check_interval() override { return s_.options.split_check_interval; }

 private:
  store_impl& s_;
};

}  // namespace

store_impl::store_impl(store_options o, const scheduler_tuning& tuning,
                       const std::function<void(caf::actor_system_config&)>& configure, bool member)
    : options(std::move(o)), memory(options.memory_limit_bytes), cluster(member) {
  if (!options.clock)
    options.clock = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  if (!options.env) options.env = env::posix();
  std::size_t threads = options.worker_threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  caf_config = std::make_unique<caf::actor_system_config>();
  caf_config->set("scheduler.max-threads", threads);
  // Idle workers poll their queues `spin_polls` times before they start to sleep (a
  // hand-off to a polling worker is far cheaper than waking a sleeping one), then poll
  // `nap_polls` times 50 us apart, then block until woken or `idle_sleep` passes
  // (store/scheduler_tuning.h).
  caf_config->set("work-stealing.aggressive-poll-attempts", tuning.spin_polls);
  caf_config->set("work-stealing.moderate-poll-attempts", tuning.nap_polls);
  caf_config->set("work-stealing.relaxed-sleep-duration",
                  caf::timespan(std::chrono::duration_cast<std::chrono::nanoseconds>(tuning.idle_sleep)));
  add_partition_protocol(*caf_config);
  if (configure) configure(*caf_config);
  system = std::make_unique<caf::actor_system>(*caf_config);
}

store_impl::~store_impl() {
  (void)close();
  seat.reset();
  data.reset();
  catalog.reset();
  partitions.reset();
  persistence.reset();
  system.reset();
}

result<std::unique_ptr<store>> store_impl::open(store_options options, const scheduler_tuning& tuning,
                                                const std::function<void(caf::actor_system_config&)>& configure,
                                                bool cluster_member) {
  // Recovery always counts its progress here: its log lines read it.
  if (!options.recovery_progress) options.recovery_progress = std::make_shared<recovery_progress>();
  const auto progress = options.recovery_progress;
  // Until the open succeeds, a return is a failure for whoever watches the recovery.
  struct failure_mark {
    recovery_progress& progress;
    bool opened = false;
    ~failure_mark() {
      if (!opened) progress.enter(recovery_progress::phase::failed);
    }
  } mark{*progress};
  if (options.maintenance_slice_cells == 0)
    return status{code::invalid_argument, "maintenance_slice_cells must be at least 1"};
  auto impl = std::make_shared<store_impl>(std::move(options), tuning, configure, cluster_member);
  auto stats = std::make_shared<dispatch_stats>();
  if (!impl->options.directory.empty()) {
    auto p = store_persistence::open(impl->options, impl->memory, *impl->system, stats);
    if (!p) return p.error();
    impl->persistence = std::move(p.value());
  }
  // After the directory is this process's: it clears what a crash left of a snapshot.
  impl->snapshots = std::make_unique<snapshot_repo>(impl->options.directory);
  if (impl->persistence)
    impl->persistence->keep_tables_when(
        [repo = impl->snapshots.get()](std::uint64_t uid) { return holds_tables(*repo, uid); });
  impl->partitions =
      std::make_unique<partition_factory>(*impl->system, impl->options, impl->memory, impl->persistence.get());
  impl->catalog = std::make_unique<catalog_service>(*impl->partitions, impl->persistence.get());
  impl->data = std::make_unique<data_path>(*impl->catalog, impl->cluster, *impl->system, std::move(stats));
  impl->seat = std::make_unique<seat_of_store>(*impl);
  if (impl->persistence) {
    auto recovered = impl->persistence->recover();
    if (!recovered) return recovered.error();
    progress->enter(recovery_progress::phase::done);
    impl->catalog->restore(std::move(recovered.value()), !cluster_member);
    if (!cluster_member)
      impl->persistence->drop_unnamed_tables([s = impl.get()](std::uint64_t uid) { return tables_in_use(*s, uid); });
    impl->opened = true;
    impl->persistence->start_periodic([c = impl->catalog.get()] { return c->current(); });
  } else {
    progress->enter(recovery_progress::phase::done);  // nothing to recover
  }
  mark.opened = true;
  // A cluster member's node splits the partitions it is responsible for (cluster/size_splitter.h).
  if (!cluster_member && impl->options.split_check_interval.count() > 0)
    impl->splitter = std::thread([s = impl.get()] { s->run_split_checks(); });
  return store_access::make(std::move(impl));
}

void store_impl::run_split_checks() {
  split_mu.Lock();
  while (!split_stop) {
    split_mu.AwaitWithTimeout(absl::Condition(&split_stop), absl::Milliseconds(options.split_check_interval.count()));
    if (split_stop) break;
    split_mu.Unlock();
    // Held for the loop: a split publishes a new catalog and would free this one.
    const auto tables = catalog->current();
    for (const auto& [name, rt] : *tables)
      if (auto r = catalog->split_oversized(name); !r)
        spdlog::warn("cellar: splitting '{}' by its MAX_FILESIZE: {}", name, r.error().to_string());
    split_mu.Lock();
  }
  split_mu.Unlock();
}

status store_impl::close() {
  if (closed.exchange(true)) return status::ok();
  {
    absl::MutexLock lock(&split_mu);
    split_stop = true;
  }
  if (splitter.joinable()) splitter.join();
  if (data) data->close();
  status result;
  if (persistence) {
    // Nothing is served any more: a periodic snapshot running now, and the final one, need
    // not leave the CPU to others.
    persistence->hurry();
    persistence->stop_periodic();
    // A clean shutdown takes a final snapshot.
    if (opened)
      if (auto r = snapshot(); !r) {
        result = r.error();
        spdlog::error("cellar: final snapshot failed: {}", result.to_string());
      }
  }
  if (catalog) catalog->close();
  system->await_all_actors_done();
  if (persistence) persistence->close();
  return result;
}

result<snapshot_stats> store_impl::snapshot() {
  if (!persistence) return status{code::unsupported, "a memory-only store (no directory) takes no snapshots"};
  return persistence->snapshot([c = catalog.get()] { return c->current(); });
}

partition_config partition_factory::replica_config(const schema_ptr& schema, std::uint32_t index) const {
  partition_config cfg;
  cfg.schema = schema;
  cfg.index = index;
  cfg.memory = &memory_;
  cfg.clock = options_.clock;
  cfg.maintenance_interval = options_.maintenance_interval;
  cfg.maintenance_slice = options_.maintenance_slice_cells;
  return cfg;
}

partition_ref partition_factory::start(const schema_ptr& schema, std::uint32_t index,
                                       std::shared_ptr<std::unique_ptr<memtable>> recovered) const {
  partition_config cfg = replica_config(schema, index);
  cfg.recovered = std::move(recovered);
  cfg.track_delta = persistence_ != nullptr;
  redo_log* log = persistence_ != nullptr ? persistence_->log() : nullptr;
  if (log != nullptr) cfg.log = log_stream(log, schema->uid, index);
  partition_ref ref;
  ref.local = std::make_shared<local_partition>(log != nullptr);
  ref.id = {schema->uid, index};
  ref.actor = spawn_partition(system_, std::move(cfg), ref.local);
  return ref;
}

data_path& store_access::data(store& s) { return *s.impl_->data; }

cluster_seat& store_access::seat(store& s) { return *s.impl_->seat; }

result<std::unique_ptr<store>> store_access::open_cluster_store(
    store_options options, const scheduler_tuning& tuning,
    const std::function<void(caf::actor_system_config&)>& configure) {
  return store_impl::open(std::move(options), tuning, configure, true);
}

std::unique_ptr<store> store_access::make(std::shared_ptr<store_impl> impl) {
  return std::unique_ptr<store>(new store(std::move(impl)));
}

result<std::unique_ptr<store>> open_store(store_options options, const scheduler_tuning& tuning) {
  return store_impl::open(std::move(options), tuning, {}, false);
}

}  // namespace detail

using namespace detail;

namespace {

status table_not_found(std::string_view name) {
  return {code::table_not_found, "table '" + std::string(name) + "' does not exist"};
}

// A cluster member's DDL goes to its cluster; null when the store applies it itself.
std::shared_ptr<cluster_hooks> cluster_of(const store_impl& s) { return s.cluster.hooks(); }

// A table with replicas needs that many nodes: a store that is no cluster member refuses it
// here (a member's master counts the live nodes).
status check_replication(const store_impl& s, const attribute_map& a) {
  const auto factor = replication_factor(a);
  if (factor == 1 || s.cluster.member()) return status::ok();
  return {code::unavailable, "REGION_REPLICATION => " + std::to_string(factor) + " needs " + std::to_string(factor) +
                                 " nodes of a cluster (cellar-server --cluster); this store is a single node"};
}

}  // namespace

// --- store -----------------------------------------------------------------------------------

result<std::unique_ptr<store>> store::open(store_options options) { return open_store(std::move(options), {}); }

store::store(std::shared_ptr<store_impl> impl) : impl_(std::move(impl)) {}

store::~store() = default;

status store::close() { return impl_->close(); }

const store_options& store::options() const { return impl_->options; }

result<snapshot_stats> store::snapshot() { return impl_->snapshot(); }

recovery_stats store::recovery() const {
  return impl_->persistence ? impl_->persistence->recovered() : recovery_stats{};
}

std::uint64_t store::log_syncs() const { return impl_->persistence ? impl_->persistence->log_syncs() : 0; }

status store::create_table(table_descriptor desc, schema_origin origin) {
  desc.name = canonical_table_name(desc.name);
  if (auto s = check_table_attributes(desc.attributes, impl_->options.durability); !s) return s;
  for (auto& f : desc.families)
    if (auto s = check_family_attributes(f); !s) return s;
  if (auto s = check_replication(*impl_, desc.attributes); !s) return s;
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::create_table;
    c.table = desc.name;
    c.descriptor = std::move(desc);
    c.origin = origin;
    return hooks->ddl(c);
  }
  return impl_->catalog->create_table(std::move(desc), origin);
}

status store::create_table_group(std::string name) {
  name = canonical_table_name(name);
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::create_table_group;
    c.table = std::move(name);
    return hooks->ddl(c);
  }
  return impl_->catalog->create_table_group(std::move(name));
}

status store::add_family(const std::string& table_in, family_descriptor family, const partition_spec& partitioning) {
  const std::string table = canonical_table_name(table_in);
  if (auto s = check_family_attributes(family); !s) return s;
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::add_family;
    c.table = table;
    c.family = std::move(family);
    c.partitioning = partitioning;
    return hooks->ddl(c);
  }
  return impl_->catalog->add_family(table, std::move(family), partitioning);
}

status store::alter_family(const std::string& table_in, family_descriptor family) {
  const std::string table = canonical_table_name(table_in);
  if (auto s = check_family_attributes(family); !s) return s;
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::alter_family;
    c.table = table;
    c.family = std::move(family);
    return hooks->ddl(c);
  }
  return impl_->catalog->alter_family(table, std::move(family));
}

status store::drop_family(const std::string& table_in, const std::string& family, schema_origin origin) {
  const std::string table = canonical_table_name(table_in);
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::drop_family;
    c.table = table;
    c.family_name = family;
    c.origin = origin;
    return hooks->ddl(c);
  }
  return impl_->catalog->drop_family(table, family, origin);
}

namespace {

// An alter may restate a table's REGION_REPLICATION, never change it.
status check_replication_kept(store& s, const std::string& table, const attribute_map& set,
                              const std::vector<std::string>& unset) {
  const bool named = set.count("REGION_REPLICATION") || std::count(unset.begin(), unset.end(), "REGION_REPLICATION");
  if (!named) return status::ok();
  auto d = s.describe(table);
  if (!d) return status::ok();  // the alter itself names the error
  attribute_map after = d->attributes;
  for (const auto& u : unset) after.erase(u);
  for (const auto& [k, v] : set) after[k] = v;
  if (replication_factor(after) == replication_factor(d->attributes)) return status::ok();
  return {code::unsupported,
          "REGION_REPLICATION is fixed when the table is created: changing the number of a "
          "partition's replicas (a Raft membership change) is not supported"};
}

}  // namespace

status store::alter_table(const std::string& table_in, const std::map<std::string, std::string>& set,
                          const std::vector<std::string>& unset) {
  const std::string table = canonical_table_name(table_in);
  // The values in their shown form before the change goes anywhere (a cluster's master
  // keeps what this node sends).
  auto checked = set;
  if (auto s = check_table_attributes(checked, impl_->options.durability); !s) return s;
  if (auto st = check_replication_kept(*this, table, checked, unset); !st) return st;
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::alter_table;
    c.table = table;
    c.set_attributes = std::move(checked);
    c.unset_attributes = unset;
    return hooks->ddl(c);
  }
  return impl_->catalog->alter_table(table, checked, unset);
}

status store::drop_table(const std::string& table_in) {
  const std::string table = canonical_table_name(table_in);
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::drop_table;
    c.table = table;
    return hooks->ddl(c);
  }
  return impl_->catalog->drop_table(table);
}

status store::truncate_table(const std::string& table_in) {
  const std::string table = canonical_table_name(table_in);
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::truncate_table;
    c.table = table;
    return hooks->ddl(c);
  }
  return impl_->catalog->truncate_table(table);
}

status store::truncate_family(const std::string& table_in, const std::string& family) {
  const std::string table = canonical_table_name(table_in);
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::truncate_family;
    c.table = table;
    c.family_name = family;
    return hooks->ddl(c);
  }
  return impl_->catalog->truncate_family(table, family);
}

status store::disable_table(const std::string& table_in) {
  const std::string table = canonical_table_name(table_in);
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::disable_table;
    c.table = table;
    return hooks->ddl(c);
  }
  return impl_->catalog->set_disabled(table, true);
}

status store::enable_table(const std::string& table_in) {
  const std::string table = canonical_table_name(table_in);
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::enable_table;
    c.table = table;
    return hooks->ddl(c);
  }
  return impl_->catalog->set_disabled(table, false);
}

result<bool> store::is_table_enabled(const std::string& table_in) const {
  const std::string table = canonical_table_name(table_in);
  auto rt = impl_->data->lookup_current(table);
  if (!rt) return table_not_found(table);
  return !rt->schema->disabled;
}

status store::create_namespace(namespace_descriptor ns) {
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::create_namespace;
    c.ns = std::move(ns);
    return hooks->ddl(c);
  }
  return impl_->catalog->create_namespace(std::move(ns));
}

status store::drop_namespace(const std::string& name) {
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::drop_namespace;
    c.ns.name = name;
    return hooks->ddl(c);
  }
  return impl_->catalog->drop_namespace(name);
}

status store::alter_namespace(const std::string& name, const std::map<std::string, std::string>& set,
                              const std::vector<std::string>& unset) {
  if (auto hooks = cluster_of(*impl_)) {
    ddl_call c;
    c.what = ddl_call::kind::alter_namespace;
    c.ns.name = name;
    c.set_attributes = set;
    c.unset_attributes = unset;
    return hooks->ddl(c);
  }
  return impl_->catalog->alter_namespace(name, set, unset);
}

result<namespace_descriptor> store::describe_namespace(const std::string& name) const {
  return impl_->catalog->describe_namespace(name);
}

std::vector<namespace_descriptor> store::list_namespaces() const { return impl_->catalog->list_namespaces(); }

result<std::vector<std::string>> store::list_namespace_tables(const std::string& name) const {
  if (auto d = impl_->catalog->describe_namespace(name); !d) return d.error();
  std::vector<std::string> out;
  const auto cat = impl_->catalog->current();
  for (const auto& [t, rt] : *cat)
    if (namespace_of(t) == name) out.push_back(t);
  return out;
}

result<table_descriptor> store::describe(const std::string& table_in) const {
  const std::string table = canonical_table_name(table_in);
  auto rt = impl_->data->lookup_current(table);
  if (!rt) return table_not_found(table);
  return rt->schema->descriptor();
}

std::vector<std::string> store::list_tables() const {
  std::vector<std::string> out;
  const auto cat = impl_->catalog->current();  // held: a DDL publishing a new map leaves this one alive
  for (const auto& [name, rt] : *cat) out.push_back(name);
  return out;
}

bool store::table_exists(const std::string& table) const { return impl_->data->lookup_current(table) != nullptr; }

result<table> store::open_table(const std::string& name) {
  if (!impl_->data->lookup_current(name)) return table_not_found(name);
  return table(impl_, canonical_table_name(name));
}

result<table_stats> store::stats(const std::string& table_in) {
  const std::string table = canonical_table_name(table_in);
  auto rt = impl_->catalog->lookup(table);
  if (!rt) return table_not_found(table);
  table_stats out;
  out.table = table;
  for (auto& r : ask_all<stats_reply>(*impl_->system, *rt, [](std::uint32_t) { return stats_request{}; })) {
    if (!r) return r.error();
    out.cells += r->stats.cells;
    out.bytes += r->stats.bytes;
    out.cells_per_partition.push_back(r->stats.cells);
  }
  return out;
}

result<std::vector<region_info>> store::list_regions(const std::string& table_in) {
  const std::string table = canonical_table_name(table_in);
  auto rt = impl_->catalog->lookup(table);
  if (!rt) return table_not_found(table);
  const auto& p = rt->schema->partitioning;
  auto hooks = cluster_of(*impl_);
  std::vector<region_info> out;
  auto stats = ask_all<stats_reply>(*impl_->system, *rt, [](std::uint32_t) { return stats_request{}; });
  for (std::uint32_t i = 0; i < stats.size(); ++i) {
    if (!stats[i]) return stats[i].error();
    region_info r;
    r.index = i;
    if (p.how == partition_spec::method::range) std::tie(r.start_key, r.end_key) = range_of(p.bounds, i);
    if (hooks) r.node = hooks->owner_of(table, i);
    r.cells = stats[i]->stats.cells;
    r.bytes = stats[i]->stats.bytes;
    // A partition another node holds answers nothing here: its counts come from that node.
    if (hooks && !rt->partitions[i].local && !rt->partitions[i].replica_here) {
      auto there = hooks->partition_stats(table, i);
      if (!there) return there.error();
      std::tie(r.cells, r.bytes) = *there;
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// A split or merge: in a cluster through the cluster (cluster/reshaper.h), else here.
result<std::uint32_t> reshape_in(store_impl& s, detail::reshape_call c) {
  c.table = canonical_table_name(c.table);
  if (auto hooks = cluster_of(s)) return hooks->reshape(c);
  return s.catalog->reshape_by(c);
}

}  // namespace

status store::split_region(const std::string& table, const std::string& key) {
  if (auto s = detail::check_split_key(key); !s) return s;
  return reshape_in(*impl_, {detail::reshape_call::kind::split_at_key, table, 0, key}).error();
}

status store::split_partition(const std::string& table, std::uint32_t index, const std::string& key) {
  if (!key.empty())
    if (auto s = detail::check_split_key(key); !s) return s;
  return reshape_in(*impl_, {detail::reshape_call::kind::split_region, table, index, key}).error();
}

result<std::uint32_t> store::split_table(const std::string& table) {
  return reshape_in(*impl_, {detail::reshape_call::kind::split_all, table, 0, {}});
}

status store::merge_regions(const std::string& table, std::uint32_t index) {
  return reshape_in(*impl_, {detail::reshape_call::kind::merge, table, index, {}}).error();
}

namespace {

// Every partition of `table` measured where it lives (list_regions); the last one past the
// limit is split at its middle row through the cluster, so the indices before it stay as
// measured, until none is. A region of one row (INVALID_ARGUMENT: no middle row) is passed
// over, known by its start key, which a split elsewhere does not change; a CONFLICT (another
// change came first) is measured again.
status split_oversized_in_cluster(store& s, store_impl& impl, cluster_hooks& hooks, const std::string& table) {
  std::set<std::string> one_row;
  for (int round = 0; round < 64; ++round) {
    auto rt = impl.catalog->lookup(table);
    if (!rt) return status::ok();
    const auto limit = detail::size_split_limit(*rt->schema, rt->partitions.size());
    if (!limit) return status::ok();
    auto regions = s.list_regions(table);
    if (!regions) return regions.error();
    const region_info* big = nullptr;
    for (auto r = regions->rbegin(); r != regions->rend() && !big; ++r)
      if (r->bytes > *limit && !one_row.count(r->start_key)) big = &*r;
    if (!big) return status::ok();
    detail::reshape_call c{detail::reshape_call::kind::split_region, table, big->index, {}};
    c.uid = rt->schema->uid;
    auto split = hooks.reshape(c);
    if (!split && split.code() == code::invalid_argument)
      one_row.insert(big->start_key);
    else if (!split && split.code() != code::conflict)
      return split.error();
  }
  return status::ok();
}

}  // namespace

status store::compact(const std::string& table_in) {
  const std::string table = canonical_table_name(table_in);
  auto rt = impl_->catalog->lookup(table);
  if (!rt) return table_not_found(table);
  for (auto& r : ask_all<reclaim_reply>(*impl_->system, *rt, [](std::uint32_t) { return reclaim_request{}; }))
    if (!r) return r.error();
  if (auto hooks = cluster_of(*impl_)) return split_oversized_in_cluster(*this, *impl_, *hooks, table);
  return impl_->catalog->split_oversized(table).error();
}

store_info store::info() const {
  const auto& s = *impl_;
  store_info out;
  out.directory = s.options.directory;
  out.durability = s.options.durability;
  out.memory_used_bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, s.memory.used()));
  out.memory_limit_bytes = s.options.memory_limit_bytes;
  if (s.persistence) s.persistence->fill_info(out);
  if (auto c = s.cluster.hooks()) {
    out.cluster = c->report();
    for (const auto& n : c->nodes()) {
      if (n.live)
        out.cluster_live_nodes.push_back(n.id + (n.address.empty() ? "" : " " + n.address));
      else
        out.cluster_down_nodes.push_back(n.id);
    }
  }
  return out;
}

// --- table ---------------------------------------------------------------------------------

table::table(std::shared_ptr<store_impl> s, std::string name) : store_(std::move(s)), name_(std::move(name)) {}

const std::string& table::name() const { return name_; }

namespace {

// Waits for one batch answered from another thread.
struct waiting_batch {
  std::binary_semaphore ready{0};
  std::vector<op_result> results;
};

}  // namespace

std::vector<op_result> table::batch(std::vector<batch_op> ops) {
  auto& data = *store_->data;
  if (!data.cluster_member()) return batch_once(std::move(ops));
  // One node hands what a split held to the new partitions: only a member answers RESHAPING.
  return detail::resend_while_reshaping(std::move(ops),
                                        [this](const std::vector<batch_op>& part, int) { return batch_once(part); });
}

std::vector<op_result> table::batch_once(std::vector<batch_op> ops) {
  auto w = std::make_shared<waiting_batch>();
  auto& data = *store_->data;
  auto now = data.run_batch(name_, std::move(ops), data.embedded_order(), true, [w](std::vector<op_result> r) {
    w->results = std::move(r);
    w->ready.release();
  });
  if (now) return std::move(*now);
  w->ready.acquire();
  return std::move(w->results);
}

void table::batch_async(std::vector<batch_op> ops, std::function<void(std::vector<op_result>)> done) {
  auto& data = *store_->data;
  auto now = data.run_batch(name_, std::move(ops), data.embedded_order(), false, done);
  if (now) done(std::move(*now));
}

namespace {

result<row_result> single_row(std::vector<op_result> r) {
  if (!r[0].st) return r[0].st;
  return std::move(r[0].row);
}

}  // namespace

result<row_result> table::get(const cellar::get& g) { return single_row(batch({g})); }

result<bool> table::exists(const cellar::get& g) {
  cellar::get e = g;
  e.exists_only();
  auto r = batch({std::move(e)});
  if (!r[0].st) return r[0].st;
  return r[0].row.exists;
}

result<std::vector<row_result>> table::get(const std::vector<cellar::get>& gets) {
  std::vector<batch_op> ops(gets.begin(), gets.end());
  auto r = batch(std::move(ops));
  std::vector<row_result> out;
  out.reserve(r.size());
  for (auto& x : r) {
    if (!x.st) return x.st;
    out.push_back(std::move(x.row));
  }
  return out;
}

status table::put(const cellar::put& p) { return batch({p})[0].st; }

status table::put(const std::vector<cellar::put>& puts) {
  std::vector<batch_op> ops(puts.begin(), puts.end());
  for (auto& r : batch(std::move(ops)))
    if (!r.st) return r.st;
  return status::ok();
}

status table::remove(const cellar::deletion& d) { return batch({d})[0].st; }

result<row_result> table::increment(const cellar::increment& inc) { return single_row(batch({inc})); }

result<std::int64_t> table::increment_column_value(std::string row, std::string family, std::string qualifier,
                                                   std::int64_t amount) {
  cellar::increment inc(std::move(row));
  inc.add(std::move(family), std::move(qualifier), amount);
  auto r = increment(inc);
  if (!r) return r.error();
  return *to_long(r->cells.at(0).value);  // increments always write 8 bytes
}

result<row_result> table::append(const cellar::append& app) { return single_row(batch({app})); }

status table::mutate_row(const row_mutations& m) { return batch({m})[0].st; }

result<scanner> table::scan(const cellar::scan& s) {
  auto& data = *store_->data;
  return data.open_scan(name_, s, data.embedded_order());
}

result<bool> table::check_and_mutate(const cellar::check_and_mutate& c) {
  auto r = batch({c});
  if (!r[0].st) return r[0].st;
  return r[0].processed;
}

}  // namespace cellar
