#include "store/catalog_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "catalog/hbase_options.h"
#include "model/validate.h"
#include "partition/ask.h"
#include "persist/codec.h"

namespace cellar::detail {

namespace {

status table_not_found(std::string_view name) {
  return {code::table_not_found, "table '" + std::string(name) + "' does not exist"};
}

status family_not_found(std::string_view table, std::string_view family) {
  return {code::family_not_found,
          "family '" + std::string(family) + "' does not exist in table '" + std::string(table) + "'"};
}

void sort_families(table_schema& t) {
  std::sort(t.families.begin(), t.families.end(),
            [](const family_schema& a, const family_schema& b) { return a.desc.name < b.desc.name; });
}

// Tells every partition of `rt` its new schema, without waiting: a partition takes it
// before any request that was checked against it (its mailbox is in order).
void adopt(const table_runtime& rt) {
  for (const auto& p : rt.partitions) caf::anon_send(p.actor, adopt_schema_request{*rt.schema});
}

}  // namespace

status table_disabled_error(std::string_view table) {
  return {code::table_disabled, "table '" + std::string(table) + "' is disabled; enable it first"};
}

catalog_service::catalog_service(const partition_factory& partitions, store_persistence* persistence)
    : partitions_(partitions), persistence_(persistence) {
  catalog_.store(std::make_shared<const catalog_map>(), std::memory_order_release);
}

runtime_ptr catalog_service::lookup(std::string_view table) const {
  auto cat = current();
  auto it = cat->find(table);
  if (it == cat->end() && table.starts_with("default:")) it = cat->find(table.substr(8));  // cellar/names.h
  return it == cat->end() ? nullptr : it->second;
}

const runtime_ptr& catalog_service::lookup(std::string_view table, table_lookup_cache& cache) const {
  // The version first: a catalog published after this load bumps it again, so a cache
  // filled from that newer catalog under this older number is refilled next time.
  const auto v = version_.load(std::memory_order_acquire);
  if (v != cache.version || cache.name != table) {
    cache.rt = lookup(table);
    cache.name.assign(table.data(), table.size());
    cache.version = v;
  }
  return cache.rt;
}

// --- the commit path ------------------------------------------------------------------------

void catalog_service::publish(std::shared_ptr<const catalog_map> next) {
  catalog_.store(std::move(next), std::memory_order_release);
  version_.fetch_add(1, std::memory_order_acq_rel);
}

void catalog_service::publish_one(const std::string& name, runtime_ptr rt) {
  auto next = std::make_shared<catalog_map>(*current());
  if (rt)
    (*next)[name] = std::move(rt);
  else
    next->erase(name);
  publish(std::move(next));
}

status catalog_service::write_schema(const table_schema& t) {
  return persistence_->write_schema(t, next_uid_, next_family_id_);
}

runtime_ptr catalog_service::make_runtime(std::shared_ptr<table_schema> schema, const table_runtime* old) {
  schema->version = next_version_++;
  auto rt = std::make_shared<table_runtime>();
  rt->schema = schema;
  if (old && !old->partitions.empty()) {
    rt->partitions = old->partitions;
    adopt(*rt);
  } else if (schema->partitioned) {
    // The partitioning just became known: its partitions start, on recovered cells if any.
    auto recovered = take_recovered(schema->name);
    for (std::uint32_t i = 0; i < schema->partitioning.count(); ++i)
      rt->partitions.push_back(partitions_.start(rt->schema, i, i < recovered.size() ? recovered[i] : nullptr));
  }
  return rt;
}

result<runtime_ptr> catalog_service::commit(std::shared_ptr<table_schema> schema, const table_runtime* old) {
  if (schema->uid == 0) schema->uid = next_uid_++;
  // New partitions need no files: their tables are made when first written
  // (store/persistence.h), so DDL costs one durable catalog write whatever their number.
  if (persistence_ != nullptr)
    if (auto st = write_schema(*schema); !st) return st;
  auto rt = make_runtime(schema, old);
  publish_one(schema->name, rt);
  return rt;
}

void catalog_service::retire(const table_runtime& rt) {
  ask_all<admin_reply>(partitions_.system(), rt, [](std::uint32_t) { return stop_request{}; });
  if (persistence_ == nullptr || !rt.schema->partitioned) return;
  // A recovered table that never started (dropped while a cluster node was away): every
  // partition it may have had here.
  const bool never_started = rt.partitions.empty();
  const std::uint32_t n =
      never_started ? rt.schema->partitioning.count() : static_cast<std::uint32_t>(rt.partitions.size());
  std::vector<std::uint32_t> local;
  for (std::uint32_t i = 0; i < n; ++i)
    if (never_started || rt.partitions[i].local) local.push_back(i);
  persistence_->drop_partitions(rt.schema->uid, local, rt.schema->name);
}

void catalog_service::purge_families(const table_runtime& rt, const std::vector<std::uint32_t>& ids) {
  ask_all<admin_reply>(partitions_.system(), rt, [&](std::uint32_t) { return drop_families_request{ids}; });
  if (persistence_ == nullptr || !rt.schema->partitioned) return;
  for (auto id : ids) persistence_->queue_purge(rt.schema->uid, rt.schema->partitioning.count(), id);
}

void catalog_service::linger(const partition_ref& ref) {
  std::erase_if(lingering_, [](const caf::weak_actor_ptr& w) { return !w.lock(); });
  lingering_.push_back(caf::actor_cast<caf::weak_actor_ptr>(ref.actor));
}

void catalog_service::close() {
  absl::MutexLock lock(&mu_);
  auto cat = current();
  publish(std::make_shared<const catalog_map>());
  for (const auto& [name, rt] : *cat)
    ask_all<admin_reply>(partitions_.system(), *rt, [](std::uint32_t) { return stop_request{}; });
  for (auto& w : lingering_)
    if (auto a = w.lock()) caf::anon_send(caf::actor_cast<partition_actor>(a), stop_request{});
  lingering_.clear();
}

// --- recovery and the cluster's path ---------------------------------------------------------

void catalog_service::restore(recovered_catalog recovered, bool start) {
  absl::MutexLock lock(&mu_);
  for (auto& [name, props] : recovered.namespaces) namespaces_[name] = std::move(props);
  next_uid_ = recovered.next_uid;
  next_family_id_ = recovered.next_family_id;
  recovered_ = {recovered.cells.begin(), recovered.cells.end()};
  auto next = std::make_shared<catalog_map>();
  for (auto& t : recovered.schemas) {
    auto schema = std::make_shared<table_schema>(std::move(t));
    schema->version = next_version_++;
    auto rt = std::make_shared<table_runtime>();
    rt->schema = schema;
    if (schema->partitioned && start) {
      auto cells = take_recovered(schema->name);
      for (std::uint32_t i = 0; i < schema->partitioning.count(); ++i)
        rt->partitions.push_back(partitions_.start(schema, i, i < cells.size() ? cells[i] : nullptr));
    }
    (*next)[schema->name] = std::move(rt);
  }
  if (start) recovered_.clear();
  publish(std::move(next));
}

void catalog_service::persist_cluster_schema(const table_schema& schema) {
  if (persistence_ == nullptr) return;
  if (auto st = write_schema(schema); !st)
    spdlog::error("cellar: persisting the schema of '{}': {}", schema.name, st.to_string());
}

void catalog_service::forget(const std::string& table) {
  drop_recovered(table);
  if (persistence_ != nullptr)
    if (auto st = persistence_->write_catalog({}, {table}); !st)
      spdlog::error("cellar: dropping '{}' from the local catalog: {}", table, st.to_string());
}

std::vector<recovered_cells> catalog_service::take_recovered(const std::string& table) {
  auto it = recovered_.find(table);
  if (it == recovered_.end()) return {};
  auto cells = std::move(it->second);
  recovered_.erase(it);
  return cells;
}

void catalog_service::drop_recovered(const std::string& table) { recovered_.erase(table); }

// --- a store's own DDL -------------------------------------------------------------------------

status catalog_service::create_table(table_descriptor desc, schema_origin origin) {
  if (auto s = check_table_name(desc.name); !s) return s;
  if (auto s = check_partitioning(desc.partitioning); !s) return s;
  if (desc.families.empty()) return {code::invalid_argument, "a table needs at least one column family"};
  for (std::size_t i = 0; i < desc.families.size(); ++i) {
    if (auto s = check_family(desc.families[i]); !s) return s;
    for (std::size_t j = 0; j < i; ++j)
      if (desc.families[j].name == desc.families[i].name)
        return {code::invalid_argument, "family '" + desc.families[i].name + "' is given twice"};
  }
  absl::MutexLock lock(&mu_);
  if (lookup(desc.name)) return {code::already_exists, "table '" + desc.name + "' already exists"};
  if (auto s = check_table_namespace(namespaces_, desc.name, desc.partitioning.count(), usage(namespace_of(desc.name)));
      !s)
    return s;
  auto schema = std::make_shared<table_schema>();
  schema->name = desc.name;
  schema->partitioned = true;
  schema->partitioning = desc.partitioning;
  schema->attributes = std::move(desc.attributes);
  for (auto& f : desc.families) {
    if (f.max_versions == 0 && origin == schema_origin::hbase_shell) f.max_versions = 1;  // R7
    schema->families.push_back({f, next_family_id_++});
  }
  sort_families(*schema);
  return commit(schema, nullptr).error();
}

status catalog_service::create_table_group(std::string name) {
  if (auto s = check_table_name(name); !s) return s;
  absl::MutexLock lock(&mu_);
  if (lookup(name)) return {code::already_exists, "table group '" + name + "' already exists"};
  if (auto s = check_table_namespace(namespaces_, name, 0, usage(namespace_of(name))); !s) return s;
  auto schema = std::make_shared<table_schema>();
  schema->name = name;
  return commit(schema, nullptr).error();
}

status catalog_service::add_family(const std::string& table, family_descriptor family,
                                   const partition_spec& partitioning) {
  if (auto s = check_family(family); !s) return s;
  if (auto s = check_partitioning(partitioning); !s) return s;
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
  if (!old) return table_not_found(table);
  if (old->schema->find(family.name))
    return {code::already_exists, "family '" + family.name + "' already exists in '" + table + "'"};
  // A group whose last family was dropped holds no cells: like OceanBase, it takes a new
  // partition rule with its next family (new partitions, the old ones are retired).
  const bool repartition =
      old->schema->partitioned && old->schema->families.empty() && !(old->schema->partitioning == partitioning);
  if (old->schema->partitioned && !repartition && !(old->schema->partitioning == partitioning))
    return {code::invalid_argument, "the partitioning of '" + table + "$" + family.name +
                                        "' differs from its table group's; all families of a group "
                                        "must share one partition rule"};
  auto schema = std::make_shared<table_schema>(*old->schema);
  schema->partitioned = true;
  schema->partitioning = partitioning;
  schema->families.push_back({std::move(family), next_family_id_++});
  sort_families(*schema);
  if (!repartition) return commit(schema, old.get()).error();
  schema->uid = 0;  // new partitions, new WiredTiger tables
  if (auto rt = commit(schema, nullptr); !rt) return rt.error();
  retire(*old);
  return status::ok();
}

status catalog_service::alter_family(const std::string& table, family_descriptor family) {
  if (auto s = check_family(family); !s) return s;
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
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
  if (!found) schema->families.push_back({std::move(family), next_family_id_++});
  sort_families(*schema);
  return commit(schema, old.get()).error();
}

status catalog_service::drop_family(const std::string& table, const std::string& family, schema_origin origin) {
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
  if (!old) return table_not_found(table);
  const family_schema* f = old->schema->find(family);
  if (!f) return family_not_found(table, family);
  if (auto s = check_family_drop(*old->schema, family, origin); !s) return s;
  const auto id = f->id;
  auto schema = std::make_shared<table_schema>(*old->schema);
  std::erase_if(schema->families, [&](const family_schema& x) { return x.id == id; });
  auto rt = commit(schema, old.get());
  if (!rt) return rt.error();
  purge_families(**rt, {id});
  return status::ok();
}

status catalog_service::drop_table(const std::string& table) {
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
  if (!old) return table_not_found(table);
  if (persistence_ != nullptr)
    if (auto st = persistence_->write_catalog({}, {table}); !st) return st;
  publish_one(table, nullptr);
  retire(*old);
  return status::ok();
}

status catalog_service::renew_partitions(const std::string& table) {
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
  if (!old) return table_not_found(table);
  if (!old->schema->partitioned) return status::ok();  // no partitions, no cells
  auto schema = std::make_shared<table_schema>(*old->schema);
  schema->uid = 0;  // new partitions, new WiredTiger tables
  if (auto rt = commit(schema, nullptr); !rt) return rt.error();
  retire(*old);
  return status::ok();
}

status catalog_service::truncate_table(const std::string& table) {
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
  if (!old) return table_not_found(table);
  // New family ids: the old cells become unreachable at the swap, then are freed.
  auto schema = std::make_shared<table_schema>(*old->schema);
  std::vector<std::uint32_t> old_ids;
  for (auto& f : schema->families) {
    old_ids.push_back(f.id);
    f.id = next_family_id_++;
  }
  auto rt = commit(schema, old.get());
  if (!rt) return rt.error();
  purge_families(**rt, old_ids);
  return status::ok();
}

status catalog_service::truncate_family(const std::string& table, const std::string& family) {
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
  if (!old) return table_not_found(table);
  const family_schema* f = old->schema->find(family);
  if (!f) return family_not_found(table, family);
  // A new family id: the old cells become unreachable at the swap, then are freed (as
  // truncate_table does for every family).
  const std::uint32_t old_id = f->id;
  auto schema = std::make_shared<table_schema>(*old->schema);
  for (auto& x : schema->families)
    if (x.id == old_id) x.id = next_family_id_++;
  auto rt = commit(std::move(schema), old.get());
  if (!rt) return rt.error();
  purge_families(**rt, {old_id});
  return status::ok();
}

status catalog_service::alter_table(const std::string& table, const std::map<std::string, std::string>& set,
                                    const std::vector<std::string>& unset) {
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
  if (!old) return table_not_found(table);
  auto schema = std::make_shared<table_schema>(*old->schema);
  if (auto s = apply_table_attributes(schema->attributes, set, unset); !s) return s;
  return commit(std::move(schema), old.get()).error();
}

status catalog_service::set_disabled(const std::string& table, bool disabled) {
  absl::MutexLock lock(&mu_);
  auto old = lookup(table);
  if (!old) return table_not_found(table);
  if (old->schema->disabled == disabled) return status::ok();  // as HBase's shell: nothing to do
  auto schema = std::make_shared<table_schema>(*old->schema);
  schema->disabled = disabled;
  return commit(std::move(schema), old.get()).error();
}

// --- namespaces ------------------------------------------------------------------------------

namespace_usage catalog_service::usage(std::string_view ns) const {
  std::vector<std::pair<std::string, std::uint32_t>> tables;
  const auto held = current();  // a concurrent change would free a map not held
  for (const auto& [name, rt] : *held)
    tables.emplace_back(name, rt->schema->partitioned ? rt->schema->partitioning.count() : 0);
  return usage_of(ns, tables);
}

status catalog_service::create_namespace(namespace_descriptor ns) {
  absl::MutexLock lock(&mu_);
  if (auto s = check_create_namespace(namespaces_, ns); !s) return s;
  if (persistence_ != nullptr)
    if (auto s = persistence_->write_namespace(ns.name, ns.properties); !s) return s;
  namespaces_[ns.name] = std::move(ns.properties);
  return status::ok();
}

status catalog_service::drop_namespace(const std::string& name) {
  absl::MutexLock lock(&mu_);
  if (auto s = check_drop_namespace(namespaces_, name, usage(name)); !s) return s;
  if (persistence_ != nullptr)
    if (auto s = persistence_->write_namespace(name, {}, true); !s) return s;
  namespaces_.erase(name);
  return status::ok();
}

status catalog_service::alter_namespace(const std::string& name, const std::map<std::string, std::string>& set,
                                        const std::vector<std::string>& unset) {
  absl::MutexLock lock(&mu_);
  std::map<std::string, std::string> props;
  if (auto s = alter_namespace_properties(namespaces_, name, set, unset, props); !s) return s;
  if (persistence_ != nullptr)
    if (auto s = persistence_->write_namespace(name, props); !s) return s;
  namespaces_[name] = std::move(props);
  return status::ok();
}

result<namespace_descriptor> catalog_service::describe_namespace(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = namespaces_.find(name);
  if (it == namespaces_.end()) return status{code::not_found, "namespace '" + name + "' does not exist"};
  return namespace_descriptor{it->first, it->second};
}

std::vector<namespace_descriptor> catalog_service::list_namespaces() {
  absl::MutexLock lock(&mu_);
  std::vector<namespace_descriptor> out;
  for (const auto& [name, props] : namespaces_) out.push_back({name, props});
  return out;
}

void catalog_service::set_namespaces(const namespace_map& all) {
  if (persistence_ != nullptr) {
    for (const auto& [name, props] : namespaces_)
      if (!all.count(name))
        if (auto s = persistence_->write_namespace(name, {}, true); !s)
          spdlog::error("cellar: dropping namespace '{}' from the local catalog: {}", name, s.to_string());
    for (const auto& [name, props] : all) {
      auto it = namespaces_.find(name);
      if (it == namespaces_.end() || it->second != props)
        if (auto s = persistence_->write_namespace(name, props); !s)
          spdlog::error("cellar: persisting namespace '{}': {}", name, s.to_string());
    }
  }
  namespaces_ = all;
}

}  // namespace cellar::detail
