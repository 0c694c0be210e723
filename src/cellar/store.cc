#include "cellar/store.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <semaphore>
#include <thread>

#include "model/validate.h"
#include "persist/codec.h"
#include "route/router.h"
#include "scheduler_tuning.h"
#include "store_impl.h"

namespace cellar {

namespace detail {

store_impl::store_impl(store_options o, const scheduler_tuning& tuning,
                       const std::function<void(caf::actor_system_config&)>& configure, bool member)
    : options(std::move(o)), cluster_member(member), memory(options.memory_limit_bytes) {
  if (!options.clock)
    options.clock = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  if (!options.env) options.env = env::posix();
  std::size_t threads = options.worker_threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  caf_config = std::make_unique<caf::actor_system_config>();
  caf_config->set("scheduler.max-threads", threads);
  // Idle workers poll their queues `spin_polls` times before they start to sleep: a
  // hand-off to a polling worker costs ~2 us, to a sleeping one 50-100 us (measured in
  // docs/benchmarks.md). After the spin they poll `nap_polls` times 50 us apart, then
  // block until woken or `idle_sleep` passes (scheduler_tuning.h).
  caf_config->set("work-stealing.aggressive-poll-attempts", tuning.spin_polls);
  caf_config->set("work-stealing.moderate-poll-attempts", tuning.nap_polls);
  caf_config->set("work-stealing.relaxed-sleep-duration",
                  caf::timespan(std::chrono::duration_cast<std::chrono::nanoseconds>(tuning.idle_sleep)));
  add_partition_protocol(*caf_config);
  if (configure) configure(*caf_config);
  system = std::make_unique<caf::actor_system>(*caf_config);
  publish_catalog(std::make_shared<const catalog_map>());
}

store_impl::~store_impl() {
  (void)close();
  system.reset();
}

status store_impl::close() {
  if (closed.exchange(true)) return status::ok();
  // Nothing is served any more: a periodic snapshot running now, and the final one, need
  // not leave the CPU to others (a stop waited minutes for them on a busy machine).
  hurry_snapshots();
  if (snapshotter.joinable()) {
    {
      std::lock_guard lock(snapshotter_mutex);
      stopping = true;
    }
    snapshotter_cv.notify_all();
    snapshotter.join();
  }
  // A clean shutdown takes a final snapshot.
  status result;
  if (persistent() && opened)
    if (auto r = snapshot(); !r) {
      result = r.error();
      spdlog::error("cellar: final snapshot failed: {}", result.to_string());
    }
  auto cat = catalog.load();
  publish_catalog(std::make_shared<const catalog_map>());
  for (const auto& [name, rt] : *cat) ask_all<admin_reply>(*system, *rt, [](std::uint32_t) { return stop_request{}; });
  cat.reset();
  {
    std::lock_guard lock(ddl_mutex);
    for (auto& w : lingering)
      if (auto a = w.lock()) caf::anon_send(caf::actor_cast<partition_actor>(a), stop_request{});
    lingering.clear();
  }
  system->await_all_actors_done();
  log.reset();  // drains and syncs
  wt.reset();
  return result;
}

status store_impl::ready() const {
  if (cluster_member && !cluster_joined.load(std::memory_order_acquire))
    return {code::unavailable, "this node has not joined its cluster yet"};
  return status::ok();
}

runtime_ptr store_impl::lookup(std::string_view table) const {
  auto cat = catalog.load(std::memory_order_acquire);
  auto it = cat->find(table);
  return it == cat->end() ? nullptr : it->second;
}

runtime_ptr store_impl::lookup_current(std::string_view table) const {
  auto rt = lookup(table);
  if (rt || !cluster_member || closed) return rt;
  if (auto hooks = cluster.load(); hooks && hooks->catch_up()) rt = lookup(table);
  return rt;
}

const runtime_ptr& store_impl::lookup(std::string_view table, table_lookup_cache& cache) const {
  // The version first: a catalog published after this load bumps it again, so a cache
  // filled from that newer catalog under this older number is refilled next time.
  const auto v = catalog_version.load(std::memory_order_acquire);
  if (v != cache.version || cache.name != table) {
    cache.rt = lookup(table);
    cache.name.assign(table.data(), table.size());
    cache.version = v;
  }
  return cache.rt;
}

void store_impl::publish_catalog(std::shared_ptr<const catalog_map> next) {
  catalog.store(std::move(next), std::memory_order_release);
  catalog_version.fetch_add(1, std::memory_order_acq_rel);
}

namespace {

status table_not_found(std::string_view name) {
  return {code::table_not_found, "table '" + std::string(name) + "' does not exist"};
}

// Checks every action; on the first failure fills every result and returns false.
bool admit(const store_impl& s, const runtime_ptr& rt, std::string_view name, std::vector<batch_op>& ops,
           std::vector<op_result>& results) {
  if (auto not_ready = s.ready(); !not_ready.is_ok()) {  // a cluster member that has not joined
    results.resize(ops.size());
    for (auto& r : results) r.st = not_ready;
    return false;
  }
  if (s.cluster_writes_refused.load(std::memory_order_acquire) &&
      std::any_of(ops.begin(), ops.end(), [](const batch_op& op) { return !std::holds_alternative<get>(op); })) {
    results.resize(ops.size());
    for (auto& r : results)
      r.st = {code::unavailable, "this node lost its ZooKeeper session: it takes no writes until it has rejoined "
                                 "and re-read the placement map"};
    return false;
  }
  status bad;
  std::size_t bad_index = 0;
  if (!rt) {
    bad = s.closed ? status{code::unavailable, "the store is closed"} : table_not_found(name);
  } else if (rt->schema->disabled) {
    bad = table_disabled_error(name);
  } else {
    for (std::size_t i = 0; i < ops.size() && bad.is_ok(); ++i) {
      bad = validate(*rt->schema, ops[i]);
      bad_index = i;
    }
    if (bad.is_ok() && !ops.empty() && rt->partitions.empty())
      bad = {code::family_not_found, "table group '" + std::string(name) + "' has no column family yet"};
  }
  if (bad.is_ok()) return true;
  results.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i)
    results[i].st = (i == bad_index || !rt || rt->schema->disabled) ? bad
                                            : status{code::aborted, "not applied: action #" +
                                                                        std::to_string(bad_index) +
                                                                        " of the batch is invalid (" +
                                                                        bad.to_string() + ")"};
  return false;
}

// Tells every partition of `rt` its new schema, without waiting: a partition takes it
// before any request that was checked against it (its mailbox is in order).
void adopt(const table_runtime& rt) {
  for (const auto& p : rt.partitions) caf::anon_send(p.actor, adopt_schema_request{*rt.schema});
}

}  // namespace

std::optional<std::vector<op_result>> store_impl::run_batch(std::string_view table, std::vector<batch_op> ops,
                                                            const std::shared_ptr<call_order>& order, bool in_place,
                                                            batch_done done) {
  auto rt = lookup_current(table);
  std::vector<op_result> refused;
  if (!admit(*this, rt, table, ops, refused)) return refused;
  return dispatch_batch(context(order, in_place), *rt, std::move(ops), std::move(done));
}

std::vector<std::pair<std::uint32_t, status>> store_impl::not_owned(const table_runtime& rt,
                                                                    const std::vector<batch_op>& ops) {
  std::vector<std::pair<std::uint32_t, status>> out;
  if (!cluster_member || !rt.schema->partitioned || rt.partitions.empty()) return out;
  auto hooks = cluster.load();
  if (!hooks) return out;
  std::map<std::uint32_t, status> refused;  // by partition: one NOT_OWNER each
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    const auto p = partition_of(rt.schema->partitioning, row_of(ops[i]));
    if (p >= rt.partitions.size() || rt.partitions[p].local) continue;
    auto it = refused.find(p);
    if (it == refused.end()) it = refused.emplace(p, hooks->not_owner(rt.schema->name, p)).first;
    out.emplace_back(i, it->second);
  }
  return out;
}

bool store_impl::read_views(std::string_view table, table_lookup_cache& cache, const batch_op& op,
                            const std::shared_ptr<call_order>& order, std::vector<read_cell_view>& scratch,
                            local_partition::views_fn use, void* arg) {
  const get* g = std::get_if<get>(&op);
  if (g == nullptr || g->options.filter || g->exists_only_ || !ready().is_ok()) return false;
  const runtime_ptr& rt = lookup(table, cache);
  if (!rt || rt->schema->disabled || rt->partitions.empty() || !validate(*rt->schema, op).is_ok()) return false;
  return read_views_in_place(context(order, true), *rt, *g, scratch, use, arg);
}

bool store_impl::write_in_place(std::string_view table, table_lookup_cache& cache, batch_request& req,
                                const std::shared_ptr<call_order>& order, batch_reply& out) {
  if (req.ops.size() != 1 || std::holds_alternative<get>(req.ops[0])) return false;
  const runtime_ptr& rt = lookup(table, cache);
  // run_batch's own checks; a refusal is left to run_batch, which answers it.
  std::vector<op_result> refused;
  if (!admit(*this, rt, table, req.ops, refused)) return false;
  req.schema_version = rt->schema->version;
  return detail::write_in_place(context(order, true), *rt, req, out);
}

local_partition* store_impl::local_partition_of(std::string_view table, table_lookup_cache& cache, std::string_view row,
                                                std::vector<runtime_ptr>& keep) const {
  const runtime_ptr& rt = lookup(table, cache);
  if (!rt || rt->schema->disabled) return nullptr;
  local_partition* part = detail::local_partition_of(*rt, row);
  if (part != nullptr && (keep.empty() || keep.back() != rt)) keep.push_back(rt);
  return part;
}

partition_ref store_impl::start_partition(const schema_ptr& schema, std::uint32_t index,
                                          std::shared_ptr<std::unique_ptr<memtable>> recovered) {
  partition_config cfg;
  cfg.schema = schema;
  cfg.index = index;
  cfg.recovered = std::move(recovered);
  cfg.track_delta = persistent();
  if (log) cfg.log = log_stream(log.get(), schema->uid, index);
  cfg.memory = &memory;
  cfg.clock = options.clock;
  cfg.maintenance_interval = options.maintenance_interval;
  cfg.maintenance_slice = options.maintenance_slice_cells;
  partition_ref ref;
  ref.local = std::make_shared<local_partition>(log != nullptr);
  ref.id = {schema->uid, index};
  ref.actor = spawn_partition(*system, std::move(cfg), ref.local);
  return ref;
}

store_impl& impl_of(store& s) { return *s.impl_; }

}  // namespace detail

using namespace detail;

// --- store: DDL --------------------------------------------------------------------------

result<std::unique_ptr<store>> store::open(store_options options) { return open_store(std::move(options), {}); }

struct detail::store_opener {
  static std::unique_ptr<store> make(std::shared_ptr<store_impl> impl) {
    return std::unique_ptr<store>(new store(std::move(impl)));
  }
};

result<std::unique_ptr<store>> detail::open_store(store_options options, const scheduler_tuning& tuning) {
  return store_impl::open(std::move(options), tuning, {}, false);
}

result<std::unique_ptr<store>> store_impl::open(store_options options, const scheduler_tuning& tuning,
                                                const std::function<void(caf::actor_system_config&)>& configure,
                                                bool cluster_member) {
  if (options.maintenance_slice_cells == 0)
    return status{code::invalid_argument, "maintenance_slice_cells must be at least 1"};
  auto impl = std::make_shared<store_impl>(std::move(options), tuning, configure, cluster_member);
  if (!impl->options.directory.empty())
    if (auto s = impl->recover(); !s) return s;
  return store_opener::make(std::move(impl));
}

result<snapshot_stats> store::snapshot() { return impl_->snapshot(); }

status store::move_partition(const std::string& partition, const std::string& node) {
  if (!impl_->cluster_member) return {code::unsupported, "moving a partition needs a cluster (cellar-server --cluster)"};
  return impl_->cluster.load()->move(partition, node);
}

result<std::uint32_t> store::balance() {
  if (!impl_->cluster_member) return status{code::unsupported, "the balancer needs a cluster (cellar-server --cluster)"};
  return impl_->cluster.load()->balance();
}

recovery_stats store::recovery() const { return impl_->recovered; }

std::uint64_t store::log_syncs() const { return impl_->log ? impl_->log->syncs() : 0; }

store::store(std::shared_ptr<store_impl> impl) : impl_(std::move(impl)) {}

store::~store() = default;

status store::close() { return impl_->close(); }

const store_options& store::options() const { return impl_->options; }

namespace {

// Builds a runtime for a new schema of `name`, reusing `old`'s partitions, starting them
// when the partitioning just became known. Caller holds ddl_mutex.
runtime_ptr make_runtime(store_impl& s, std::shared_ptr<table_schema> schema, const table_runtime* old) {
  schema->version = s.next_version++;
  auto rt = std::make_shared<table_runtime>();
  rt->schema = schema;
  if (old && !old->partitions.empty()) {
    rt->partitions = old->partitions;
    adopt(*rt);
  } else if (schema->partitioned) {
    auto rec = s.recovered_mem.find(schema->name);
    for (std::uint32_t i = 0; i < schema->partitioning.count(); ++i)
      rt->partitions.push_back(s.start_partition(
          rt->schema, i, rec != s.recovered_mem.end() && i < rec->second.size() ? rec->second[i] : nullptr));
    if (rec != s.recovered_mem.end()) s.recovered_mem.erase(rec);
  }
  return rt;
}

void publish(store_impl& s, const std::string& name, runtime_ptr rt) {
  auto next = std::make_shared<catalog_map>(*s.catalog.load());
  if (rt)
    (*next)[name] = std::move(rt);
  else
    next->erase(name);
  s.publish_catalog(std::move(next));
}

void sort_families(table_schema& t) {
  std::sort(t.families.begin(), t.families.end(),
            [](const family_schema& a, const family_schema& b) { return a.desc.name < b.desc.name; });
}

// Makes a schema change durable (WiredTiger tables for new partitions, then the catalog
// entry), then publishes it. Nothing is published when persisting fails. Caller holds
// ddl_mutex.
result<runtime_ptr> commit(store_impl& s, std::shared_ptr<table_schema> schema, const table_runtime* old) {
  if (schema->uid == 0) schema->uid = s.next_uid++;
  if (s.persistent()) {
    const bool new_partitions = schema->partitioned && (old == nullptr || old->partitions.empty());
    if (new_partitions)
      for (std::uint32_t i = 0; i < schema->partitioning.count(); ++i)
        if (auto st = s.wt->create_partition(schema->uid, i); !st) return st;
    if (auto st = s.persist_schema(*schema); !st) return st;
  }
  auto rt = make_runtime(s, schema, old);
  publish(s, schema->name, rt);
  return rt;
}

// Stops a runtime's partition actors and drops their WiredTiger tables (a dropped table
// group, or a group that took a new partition rule). Caller holds ddl_mutex.
void retire(store_impl& s, const table_runtime& old) {
  ask_all<admin_reply>(*s.system, old, [](std::uint32_t) { return stop_request{}; });
  if (!s.persistent() || !old.schema->partitioned) return;
  std::lock_guard snap(s.snapshot_mutex);  // no snapshot is writing to its tables
  for (std::uint32_t i = 0; i < old.schema->partitioning.count(); ++i)
    if (auto st = s.wt->drop_partition(old.schema->uid, i); !st)
      spdlog::warn("cellar: dropping partition {} of '{}': {}", i, old.schema->name, st.to_string());
}

}  // namespace

status store_impl::persist_schema(const table_schema& t) {
  std::string counters;
  put_u64(counters, next_uid);
  put_u32(counters, next_family_id);
  return wt->write_catalog({{t.name, encode_schema(t)}, {std::string("\0store", 6), counters}}, {});
}

result<runtime_ptr> detail::commit_schema(store_impl& s, std::shared_ptr<table_schema> schema, const table_runtime* old) {
  return commit(s, std::move(schema), old);
}

void detail::drop_family_cells(store_impl& s, const table_runtime& rt, const std::vector<std::uint32_t>& ids) {
  ask_all<admin_reply>(*s.system, rt, [&](std::uint32_t) { return drop_families_request{ids}; });
  if (!s.persistent() || !rt.schema->partitioned) return;
  std::lock_guard snap(s.snapshot_mutex);
  for (auto id : ids) s.purges.push_back({rt.schema->uid, rt.schema->partitioning.count(), id});
}

status store::create_table(table_descriptor desc, schema_origin origin) {
  if (auto hooks = impl_->cluster.load()) {
    ddl_call c;
    c.what = ddl_call::kind::create_table;
    c.table = desc.name;
    c.descriptor = std::move(desc);
    c.origin = origin;
    return hooks->ddl(c);
  }
  if (auto s = check_name("table", desc.name); !s) return s;
  if (auto s = check_partitioning(desc.partitioning); !s) return s;
  if (desc.families.empty()) return {code::invalid_argument, "a table needs at least one column family"};
  for (std::size_t i = 0; i < desc.families.size(); ++i) {
    if (auto s = check_family(desc.families[i]); !s) return s;
    for (std::size_t j = 0; j < i; ++j)
      if (desc.families[j].name == desc.families[i].name)
        return {code::invalid_argument, "family '" + desc.families[i].name + "' is given twice"};
  }
  std::lock_guard lock(impl_->ddl_mutex);
  if (impl_->lookup(desc.name))
    return {code::already_exists, "table '" + desc.name + "' already exists"};
  auto schema = std::make_shared<table_schema>();
  schema->name = desc.name;
  schema->partitioned = true;
  schema->partitioning = desc.partitioning;
  for (auto& f : desc.families) {
    if (f.max_versions == 0 && origin == schema_origin::hbase_shell) f.max_versions = 1;  // R7
    schema->families.push_back({f, impl_->next_family_id++});
  }
  sort_families(*schema);
  return commit(*impl_, schema, nullptr).error();
}

status store::create_table_group(std::string name) {
  if (auto hooks = impl_->cluster.load()) {
    ddl_call c;
    c.what = ddl_call::kind::create_table_group;
    c.table = std::move(name);
    return hooks->ddl(c);
  }
  if (auto s = check_name("table group", name); !s) return s;
  std::lock_guard lock(impl_->ddl_mutex);
  if (impl_->lookup(name)) return {code::already_exists, "table group '" + name + "' already exists"};
  auto schema = std::make_shared<table_schema>();
  schema->name = name;
  return commit(*impl_, schema, nullptr).error();
}

status store::add_family(const std::string& table, family_descriptor family, const partition_spec& partitioning) {
  if (auto hooks = impl_->cluster.load()) {
    ddl_call c;
    c.what = ddl_call::kind::add_family;
    c.table = table;
    c.family = std::move(family);
    c.partitioning = partitioning;
    return hooks->ddl(c);
  }
  if (auto s = check_family(family); !s) return s;
  if (auto s = check_partitioning(partitioning); !s) return s;
  std::lock_guard lock(impl_->ddl_mutex);
  auto old = impl_->lookup(table);
  if (!old) return table_not_found(table);
  if (old->schema->find(family.name))
    return {code::already_exists, "family '" + family.name + "' already exists in '" + table + "'"};
  // A group whose last family was dropped holds no cells: like OceanBase, it takes a new
  // partition rule with its next family (new partitions, the old ones are retired).
  const bool repartition = old->schema->partitioned && old->schema->families.empty() &&
                           !(old->schema->partitioning == partitioning);
  if (old->schema->partitioned && !repartition && !(old->schema->partitioning == partitioning))
    return {code::invalid_argument, "the partitioning of '" + table + "$" + family.name +
                                        "' differs from its table group's; all families of a group "
                                        "must share one partition rule"};
  auto schema = std::make_shared<table_schema>(*old->schema);
  schema->partitioned = true;
  schema->partitioning = partitioning;
  schema->families.push_back({std::move(family), impl_->next_family_id++});
  sort_families(*schema);
  if (!repartition) return commit(*impl_, schema, old.get()).error();
  schema->uid = 0;  // new partitions, new WiredTiger tables
  if (auto rt = commit(*impl_, schema, nullptr); !rt) return rt.error();
  retire(*impl_, *old);
  return status::ok();
}

status store::alter_family(const std::string& table, family_descriptor family) {
  if (auto hooks = impl_->cluster.load()) {
    ddl_call c;
    c.what = ddl_call::kind::alter_family;
    c.table = table;
    c.family = std::move(family);
    return hooks->ddl(c);
  }
  if (auto s = check_family(family); !s) return s;
  std::lock_guard lock(impl_->ddl_mutex);
  auto old = impl_->lookup(table);
  if (!old) return table_not_found(table);
  if (!old->schema->partitioned)
    return {code::invalid_argument, "table group '" + table + "' has no partitioning yet; add a family first"};
  auto schema = std::make_shared<table_schema>(*old->schema);
  bool found = false;
  for (auto& f : schema->families)
    if (f.desc.name == family.name) {
      f.desc = family;
      found = true;
    }
  if (!found) schema->families.push_back({std::move(family), impl_->next_family_id++});
  sort_families(*schema);
  return commit(*impl_, schema, old.get()).error();
}

status store::drop_family(const std::string& table, const std::string& family) {
  if (auto hooks = impl_->cluster.load()) {
    ddl_call c;
    c.what = ddl_call::kind::drop_family;
    c.table = table;
    c.family_name = family;
    return hooks->ddl(c);
  }
  std::lock_guard lock(impl_->ddl_mutex);
  auto old = impl_->lookup(table);
  if (!old) return table_not_found(table);
  const family_schema* f = old->schema->find(family);
  if (!f) return {code::family_not_found, "family '" + family + "' does not exist in table '" + table + "'"};
  const auto id = f->id;
  auto schema = std::make_shared<table_schema>(*old->schema);
  schema->families.erase(std::remove_if(schema->families.begin(), schema->families.end(),
                                        [&](const family_schema& x) { return x.id == id; }),
                         schema->families.end());
  auto rt = commit(*impl_, schema, old.get());
  if (!rt) return rt.error();
  drop_family_cells(*impl_, **rt, {id});
  return status::ok();
}

status store::drop_table(const std::string& table) {
  if (auto hooks = impl_->cluster.load()) {
    ddl_call c;
    c.what = ddl_call::kind::drop_table;
    c.table = table;
    return hooks->ddl(c);
  }
  std::lock_guard lock(impl_->ddl_mutex);
  auto old = impl_->lookup(table);
  if (!old) return table_not_found(table);
  if (impl_->persistent())
    if (auto st = impl_->wt->write_catalog({}, {table}); !st) return st;
  publish(*impl_, table, nullptr);
  retire(*impl_, *old);
  return status::ok();
}

status store::truncate_table(const std::string& table) {
  if (auto hooks = impl_->cluster.load()) {
    ddl_call c;
    c.what = ddl_call::kind::truncate_table;
    c.table = table;
    return hooks->ddl(c);
  }
  std::lock_guard lock(impl_->ddl_mutex);
  auto old = impl_->lookup(table);
  if (!old) return table_not_found(table);
  // New family ids: the old cells become unreachable at the swap, then are freed.
  auto schema = std::make_shared<table_schema>(*old->schema);
  std::vector<std::uint32_t> old_ids;
  for (auto& f : schema->families) {
    old_ids.push_back(f.id);
    f.id = impl_->next_family_id++;
  }
  auto rt = commit(*impl_, schema, old.get());
  if (!rt) return rt.error();
  drop_family_cells(*impl_, **rt, old_ids);
  return status::ok();
}

result<table_descriptor> store::describe(const std::string& table) const {
  auto rt = impl_->lookup_current(table);
  if (!rt) return table_not_found(table);
  return rt->schema->descriptor();
}

std::vector<std::string> store::list_tables() const {
  std::vector<std::string> out;
  // The map stays alive while we read it: `*catalog.load()` in the range-for would not
  // keep the shared_ptr (a DDL publishing a new map could free it meanwhile).
  const auto cat = impl_->catalog.load();
  for (const auto& [name, rt] : *cat) out.push_back(name);
  return out;
}

bool store::table_exists(const std::string& table) const { return impl_->lookup_current(table) != nullptr; }

result<table> store::open_table(const std::string& name) {
  if (!impl_->lookup_current(name)) return table_not_found(name);
  return table(impl_, name);
}

result<table_stats> store::stats(const std::string& table) {
  auto rt = impl_->lookup(table);
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

status store::compact(const std::string& table) {
  auto rt = impl_->lookup(table);
  if (!rt) return table_not_found(table);
  for (auto& r : ask_all<reclaim_reply>(*impl_->system, *rt, [](std::uint32_t) { return reclaim_request{}; }))
    if (!r) return r.error();
  return status::ok();
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
  auto w = std::make_shared<waiting_batch>();
  auto now = store_->run_batch(name_, std::move(ops), store_->embedded_order, true, [w](std::vector<op_result> r) {
    w->results = std::move(r);
    w->ready.release();
  });
  if (now) return std::move(*now);
  w->ready.acquire();
  return std::move(w->results);
}

void table::batch_async(std::vector<batch_op> ops, std::function<void(std::vector<op_result>)> done) {
  auto now = store_->run_batch(name_, std::move(ops), store_->embedded_order, false, done);
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

result<bool> table::check_and_mutate(const cellar::check_and_mutate& c) {
  auto r = batch({c});
  if (!r[0].st) return r[0].st;
  return r[0].processed;
}

}  // namespace cellar
