// store/persistence_named.cc: named snapshots kept as WiredTiger checkpoints of a table's
// partition tables (store/persistence.h, docs/backup.md).
#include <spdlog/spdlog.h>

#include <map>

#include "persist/codec.h"
#include "persist/delta_map.h"
#include "store/persistence.h"

namespace cellar::detail {

namespace {

// A stored cell value (persist/codec.h): its expiry, then its bytes.
status split_stored(std::string_view stored, std::int64_t* expires, std::string_view* value) {
  reader v(stored);
  if (!v.i64(*expires)) return {code::corruption, "a malformed cell"};
  *value = v.rest();
  return status::ok();
}

}  // namespace

result<store_persistence::named_cut> store_persistence::snapshot_named(const catalog_source& tables, std::uint64_t uid,
                                                                       std::uint32_t partitions,
                                                                       const std::string& checkpoint) {
  absl::MutexLock lock(&snapshot_mu_);
  named_cut out;
  if (auto r = snapshot_locked(tables, uid, &out.cells); !r) return r.error();
  out.cells.resize(partitions);
  // No snapshot writes between the checkpoint that ended this one and this: the named
  // checkpoint holds exactly the cuts just written.
  std::vector<std::string> uris;
  for (std::uint32_t i = 0; i < partitions; ++i) {
    uris.push_back(partition_uri(uid, i));
    uris.push_back(changes_uri(uid, i));
  }
  auto taken = wt_->take_named_checkpoint(checkpoint, uris);
  if (!taken) return taken.error();
  out.tables = std::move(*taken);
  return out;
}

status store_persistence::read_named(std::uint64_t uid, std::uint32_t index, const std::string& checkpoint,
                                     const std::set<std::string>& tables, const cell_fn& fn) {
  // The change runs, oldest first, applied to one another; then merged with the base as it
  // is read, both in key order, so only the changes are held in memory.
  delta_map changes;
  if (tables.count(changes_uri(uid, index))) {
    auto st = wt_->scan_changes(
        uid, index,
        [&](std::string_view key, std::string_view stored) -> status {
          if (stored.empty()) {
            changes.erase(key);
            return status::ok();
          }
          std::int64_t expires = 0;
          std::string_view value;
          if (auto s = split_stored(stored, &expires, &value); !s) return s;
          changes.put(key, expires, value);
          return status::ok();
        },
        nullptr, checkpoint);
    if (!st) return st;
  }
  auto next = changes.begin();
  // The changes before `key` (all of them when `key` is null).
  auto changes_before = [&](const std::string_view* key) -> status {
    for (; next != changes.end() && (!key || std::string_view(next->first) < *key); ++next)
      if (next->second.present)
        if (auto st = fn(next->first, next->second.expires_at, next->second.value()); !st) return st;
    return status::ok();
  };
  if (tables.count(partition_uri(uid, index))) {
    auto st = wt_->scan_partition(
        uid, index,
        [&](std::string_view key, std::string_view stored) -> status {
          if (auto s = changes_before(&key); !s) return s;
          if (next != changes.end() && std::string_view(next->first) == key) {
            const auto& c = next->second;
            ++next;
            return c.present ? fn(key, c.expires_at, c.value()) : status::ok();
          }
          std::int64_t expires = 0;
          std::string_view value;
          if (auto s = split_stored(stored, &expires, &value); !s) return s;
          return fn(key, expires, value);
        },
        nullptr, checkpoint);
    if (!st) return st;
  }
  return changes_before(nullptr);
}

std::shared_ptr<void> store_persistence::hold_named(const std::string& checkpoint) {
  absl::MutexLock lock(&named_mu_);
  ++named_readers_[checkpoint];
  return std::shared_ptr<void>(nullptr, [this, checkpoint](void*) {
    absl::MutexLock l(&named_mu_);
    if (--named_readers_[checkpoint] == 0) named_readers_.erase(checkpoint);
  });
}

status store_persistence::drop_named(const std::string& checkpoint, const std::vector<std::string>& tables) {
  absl::MutexLock held(&named_mu_);
  if (named_readers_.count(checkpoint)) return {code::conflict, "checkpoint " + checkpoint + " is being read"};
  absl::MutexLock lock(&snapshot_mu_);
  return wt_->drop_named_checkpoint(checkpoint, tables);
}

void store_persistence::drop_unnamed_tables(const std::function<bool(std::uint64_t uid)>& keep) {
  auto tables = wt_->partition_tables();
  if (!tables) {
    spdlog::warn("cellar: listing the partition tables: {}", tables.error().to_string());
    return;
  }
  std::map<std::uint64_t, std::vector<std::uint32_t>> unnamed;
  for (const auto& [uid, partition] : *tables)
    if (!keep(uid)) unnamed[uid].push_back(partition);
  for (const auto& [uid, partitions] : unnamed) {
    spdlog::info("cellar: dropping {} partition tables of table incarnation {}, which nothing names", partitions.size(),
                 uid);
    drop_partitions(uid, partitions, "incarnation " + std::to_string(uid));
  }
}

void store_persistence::keep_tables_when(std::function<bool(std::uint64_t uid)> keep) {
  absl::MutexLock lock(&hook_mu_);
  keep_tables_ = std::move(keep);
}

}  // namespace cellar::detail
