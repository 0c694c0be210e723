// store/persistence.cc: opening and closing a store's directory, the catalog's durable
// writes, the periodic snapshots and the figures store::info shows. Recovery is in
// store/recovery.cc, snapshots in store/snapshot.cc.
#include "store/persistence.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "dispatch/dispatch.h"
#include "persist/codec.h"
#include "persist/priority.h"

namespace cellar::detail {

result<std::unique_ptr<store_persistence>> store_persistence::open(const store_options& options, memory_pool& memory,
                                                                   caf::actor_system& system,
                                                                   std::shared_ptr<dispatch_stats> activity) {
  // One process at a time: another holder is named, rather than met inside WiredTiger.
  auto held = dir_lock::acquire(options.directory, *options.env);
  if (!held) return held.error();
  std::string compressor = "unknown (" + std::to_string(static_cast<int>(options.compression)) + ")";
  switch (options.compression) {
    case compression::none: compressor = "none"; break;
    case compression::snappy: compressor = "snappy"; break;
    case compression::zlib: compressor = "zlib"; break;
  }
  auto home = wt_home::open(options.directory, options.cache_mb, options.env, options.salvage,
                            options.idle_background_threads, compressor);
  if (!home) return home.error();
  return std::unique_ptr<store_persistence>(new store_persistence(options, memory, system, std::move(activity),
                                                                  std::move(held.value()), std::move(home.value())));
}

store_persistence::store_persistence(const store_options& options, memory_pool& memory, caf::actor_system& system,
                                     std::shared_ptr<dispatch_stats> activity, std::unique_ptr<dir_lock> held,
                                     std::unique_ptr<wt_home> wt)
    : options_(options),
      memory_(memory),
      system_(system),
      activity_(std::move(activity)),
      held_(std::move(held)),
      wt_(std::move(wt)),
      releaser_(options.idle_background_threads) {}

store_persistence::~store_persistence() { close(); }

void store_persistence::close() {
  stop_periodic();
  log_.reset();  // drains and syncs
  wt_.reset();
  held_.reset();
}

void store_persistence::start_periodic(catalog_source tables) {
  if (options_.snapshot_interval.count() <= 0 || periodic_.joinable()) return;
  periodic_ = std::thread([this, tables = std::move(tables)] {
    const auto interval = absl::FromChrono(options_.snapshot_interval);
    absl::MutexLock lock(&periodic_mu_);
    for (;;) {
      // Waits the interval out unless told to stop.
      if (periodic_mu_.AwaitWithTimeout(absl::Condition(&periodic_stop_), interval)) return;
      periodic_mu_.Unlock();
      if (auto r = snapshot(tables); !r) spdlog::error("cellar: periodic snapshot failed: {}", r.error().to_string());
      periodic_mu_.Lock();
    }
  });
}

void store_persistence::stop_periodic() {
  if (!periodic_.joinable()) return;
  {
    absl::MutexLock lock(&periodic_mu_);
    periodic_stop_ = true;
  }
  periodic_.join();
}

void store_persistence::hurry() {
  absl::MutexLock lock(&threads_mu_);
  hurry_ = true;
  for (pid_t tid : snapshot_threads_) normal_priority(tid);
  releaser_.hurry();
  if (wt_) wt_->hurry();
}

// --- what the catalog makes durable -------------------------------------------------------------

void store_persistence::on_snapshot_lock_wait(std::function<void()> f) {
  absl::MutexLock lock(&hook_mu_);
  lock_wait_hook_ = std::move(f);
}

void store_persistence::about_to_wait_for_snapshot_lock() {
  absl::MutexLock lock(&hook_mu_);
  if (lock_wait_hook_) lock_wait_hook_();
}

status store_persistence::reset_partition(std::uint64_t uid, std::uint32_t index) {
  about_to_wait_for_snapshot_lock();
  absl::MutexLock lock(&snapshot_mu_);
  auto st = wt_->drop_partition(uid, index);
  absl::MutexLock l(&sizes_mu_);
  sizes_.erase({uid, index});
  return st;
}

void store_persistence::drop_partitions(std::uint64_t uid, const std::vector<std::uint32_t>& indices,
                                        std::string_view table) {
  if (indices.empty()) return;
  bool keep = false;
  {
    absl::MutexLock lock(&hook_mu_);
    keep = keep_tables_ && keep_tables_(uid);
  }
  about_to_wait_for_snapshot_lock();
  absl::MutexLock lock(&snapshot_mu_);  // no snapshot is writing to its tables
  if (keep) spdlog::info("cellar: the tables of '{}' stay while a named snapshot holds them", table);
  for (auto i : indices) {
    if (!keep)
      if (auto st = wt_->drop_partition(uid, i); !st)
        spdlog::warn("cellar: dropping partition {} of '{}': {}", i, table, st.to_string());
    absl::MutexLock l(&sizes_mu_);
    sizes_.erase({uid, i});
  }
}

status store_persistence::write_catalog(const std::vector<std::pair<std::string, std::string>>& puts,
                                        const std::vector<std::string>& removes) {
  return wt_->write_catalog(puts, removes);
}

status store_persistence::write_schema(const table_schema& t, std::uint64_t next_uid, std::uint32_t next_family_id) {
  std::string counters;
  put_u64(counters, next_uid);
  put_u32(counters, next_family_id);
  return wt_->write_catalog({{t.name, encode_schema(t)}, {std::string("\0store", 6), counters}}, {});
}

status store_persistence::write_namespace(const std::string& name, const std::map<std::string, std::string>& properties,
                                          bool remove) {
  std::string key = std::string(namespace_key_prefix) + name;
  if (remove) return wt_->write_catalog({}, {key});
  std::string v;
  put_string_map(v, properties);
  return wt_->write_catalog({{key, v}}, {});
}

void store_persistence::queue_purge(std::uint64_t uid, std::uint32_t partitions, std::uint32_t family) {
  absl::MutexLock lock(&snapshot_mu_);
  purges_.push_back({uid, partitions, family});
}

status store_persistence::write_copy(std::uint64_t uid, std::uint32_t index, const delta_map& delta) {
  std::uint64_t bytes = 0;
  stored_bytes now;
  {
    absl::MutexLock l(&sizes_mu_);
    if (auto it = sizes_.find({uid, index}); it != sizes_.end()) now = it->second;
  }
  if (auto st = wt_->write_delta(uid, index, delta, &bytes, &now.base); !st) return st;
  if (auto st = wt_->checkpoint(); !st) return st;
  absl::MutexLock l(&sizes_mu_);
  sizes_[{uid, index}] = now;
  return status::ok();
}

void store_persistence::fill_info(store_info& out) const {
  {
    absl::MutexLock lock(&info_mu_);
    out.snapshots = snapshots_taken_;
    out.last_snapshot = last_snapshot_;
    out.last_snapshot_unix_ms = last_snapshot_unix_ms_;
  }
  if (log_) {
    out.log_generation = log_->generation();
    out.log_records = log_->records();
    out.log_bytes = log_->bytes();
    out.log_syncs = log_->syncs();
  }
  out.recovery = recovered_;
}

}  // namespace cellar::detail
