// store/recovery.cc: a store's state at open (docs/storage.md): the catalog (durable at
// every DDL), each partition's cells as of the last checkpoint, then the redo log from the
// snapshot's generation on, replayed into the partitions' deltas so the next snapshot
// writes them.
#include <spdlog/spdlog.h>

#include <chrono>
#include <set>

#include "partition/memtable.h"
#include "persist/codec.h"
#include "persist/free_memory.h"
#include "store/persistence.h"

namespace cellar::detail {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::string_view store_key("\0store", 6);
// The layout of the partition tables (docs/storage.md): 2 = cells packed in runs
// (persist/runs.h); 3 = and change tables beside them (persist/wt_home.h). A format 2
// home reads as a format 3 home without change runs, and is marked 3 at open: an older
// cellar would not read the change runs. Homes written before runs (one item per cell, no
// marker) are refused.
constexpr std::string_view format_key("\0format", 7);
constexpr std::uint32_t data_format = 3;
constexpr std::uint32_t oldest_data_format = 2;

}  // namespace

// Step 1: the catalog's tables, the store's counters and the data format (a home in an
// older format is marked as this one's, or refused), and the snapshot's generation.
status store_persistence::read_catalog(recovered_catalog& out) {
  status bad;
  bool counters_seen = false;
  std::optional<std::uint32_t> format;
  auto st = wt_->read_catalog([&](std::string_view k, std::string_view v) {
    if (k == format_key) {
      reader r(v);
      std::uint32_t f = 0;
      if (!r.u32(f)) bad = {code::corruption, "malformed format marker"};
      format = f;
      return;
    }
    if (k == store_key) {
      counters_seen = true;
      reader r(v);
      if (!r.u64(out.next_uid) || !r.u32(out.next_family_id)) bad = {code::corruption, "malformed store counters"};
      return;
    }
    if (k.starts_with(namespace_key_prefix)) {
      reader r(v);
      auto& props = out.namespaces[std::string(k.substr(namespace_key_prefix.size()))];
      if (!r.string_map(props) || !r.done()) bad = {code::corruption, "malformed namespace entry"};
      return;
    }
    auto t = decode_schema(v);
    if (!t) {
      bad = {code::corruption, "catalog entry '" + std::string(k) + "': " + t.error().message()};
      return;
    }
    out.schemas.push_back(std::move(t.value()));
  });
  if (!st) return st;
  if (!bad) return bad;
  const std::string& dir = options_.directory;
  if (!format && (counters_seen || !out.schemas.empty()))
    return status{code::unsupported, dir + " was written by an older cellar (one item per cell); this "
                                     "version reads data formats " + std::to_string(oldest_data_format) + " to " +
                                     std::to_string(data_format) + " only"};
  if (format && (*format < oldest_data_format || *format > data_format))
    return status{code::unsupported, dir + " holds data format " + std::to_string(*format) +
                                     "; this version reads data formats " + std::to_string(oldest_data_format) +
                                     " to " + std::to_string(data_format) + " only"};
  if (!format || *format != data_format) {
    std::string v;
    put_u32(v, data_format);
    if (auto s = wt_->write_catalog({{std::string(format_key), v}}, {}); !s) return s;
  }
  auto gen = wt_->get_meta("snapshot_gen");
  if (!gen) return gen.error();
  generation_ = gen.value();
  return status::ok();
}

// Step 2, for partition `p` of `t`: its cells as of the last snapshot into `m` (the base,
// then the change runs since it was last merged, oldest first: each cell's state replaces
// what the base or an older run said). Cells of families the schema no longer has are left
// out and their families added to `stale`.
status store_persistence::load_partition(const table_schema& t, std::uint32_t p, const std::set<std::uint32_t>& families,
                                         memtable& m, std::set<std::uint32_t>& stale) {
  wt_home& wt = *wt_;
  const bool salvage = options_.salvage;
  if (salvage) {
    if (auto sv = wt.salvage_table(partition_uri(t.uid, p)); !sv) return sv;
    ++recovered_.tables_salvaged;
  }
  std::uint64_t n = 0;
  stored_bytes sizes;
  auto st = wt.scan_partition(t.uid, p, [&](std::string_view k, std::string_view v) -> status {
    auto key = decode_cell_key(k);
    reader r(v);
    std::int64_t expires = 0;
    if (!key || !r.i64(expires)) return {code::corruption, "a malformed cell"};
    if (!families.count(key->family)) {
      stale.insert(key->family);
      return status::ok();
    }
    m.load(key->family, cell_key{std::move(key->row), std::move(key->qualifier), key->ts},
           cell_value{short_bytes(r.rest()), expires});
    if (++n % 1'000'000 == 0) spdlog::info("cellar: recovery: table '{}' partition {}: {} cells loaded", t.name, p, n);
    return status::ok();
  }, &sizes.base);
  if (st) {
    if (salvage)
      if (auto sv = wt.salvage_table(changes_uri(t.uid, p)); !sv) return sv;
    st = wt.scan_changes(t.uid, p, [&](std::string_view k, std::string_view v) -> status {
      auto key = decode_cell_key(k);
      if (!key) return {code::corruption, "a malformed cell"};
      if (!families.count(key->family)) {
        stale.insert(key->family);
        return status::ok();
      }
      cell_key ck{std::move(key->row), std::move(key->qualifier), key->ts};
      ++recovered_.change_cells;
      if (v.empty()) {
        m.unload(key->family, ck);
        return status::ok();
      }
      reader r(v);
      std::int64_t expires = 0;
      if (!r.i64(expires)) return {code::corruption, "a malformed cell"};
      m.load(key->family, std::move(ck), cell_value{short_bytes(r.rest()), expires});
      return status::ok();
    }, &sizes.runs);
    absl::MutexLock l(&sizes_mu_);
    sizes_[{t.uid, p}] = sizes;
  }
  if (st.code() == code::corruption && !salvage)
    return status{code::corruption, st.message() + "; the store is not opened: open it with salvage "
                                                   "(store_options::salvage, cellar-server --salvage) to serve "
                                                   "what can still be read of it"};
  if (!st) return st;
  if (salvage)
    spdlog::warn("cellar: salvage: table '{}' partition {} ({}): {} cells kept", t.name, p, wt.file_of(t.uid, p),
                 m.stats().cells);
  // The cells the snapshot holds: the base's, as the change runs left them.
  recovered_.cells_loaded += m.stats().cells;
  return status::ok();
}

// Step 3: the redo log since the snapshot, replayed into `tables`' deltas (the next
// snapshot must hold them), not into a new log. Records of dropped tables and families
// are skipped.
status store_persistence::replay_log(
    const std::map<std::uint64_t, std::pair<const table_schema*, std::vector<memtable*>>>& tables) {
  for (auto& [uid, e] : tables)
    for (auto* m : e.second) m->track(true, false);
  log_replay_stats replayed;
  auto st = redo_log::replay(*options_.env, options_.directory, generation_, [&](std::string_view payload) -> status {
    auto header = decode_log_header(payload);
    if (!header) return {code::corruption, "malformed log record header"};
    auto it = tables.find(header->uid);
    if (it == tables.end() || header->partition >= it->second.second.size()) return status::ok();  // dropped table
    memtable& m = *it->second.second[header->partition];
    std::set<std::uint32_t> families;
    for (const auto& f : it->second.first->families) families.insert(f.id);
    ++recovered_.log_records;
    return for_each_log_entry(header->entries, [&](log_entry& e) {
      if (!families.count(e.key.family)) return;
      std::optional<cell_value> v;
      if (e.present) v = cell_value{short_bytes(e.value), e.expires_at};
      m.replay(e.key.family, cell_key{std::move(e.key.row), std::move(e.key.qualifier), e.key.ts}, std::move(v));
    });
  }, &replayed);
  if (!st) return st;
  recovered_.log_bytes_dropped = replayed.dropped_bytes;
  recovered_.log_torn_file = replayed.torn_file;
  return status::ok();
}

result<recovered_catalog> store_persistence::recover() {
  const auto t0 = clock_type::now();
  absl::MutexLock lock(&snapshot_mu_);  // nothing else runs yet; taken for the state it fills
  if (options_.salvage)
    for (const char* uri : {"table:catalog", "table:meta"})
      if (auto s = wt_->salvage_table(uri); !s) return s;

  recovered_catalog out;
  if (auto s = read_catalog(out); !s) return s;

  // The last snapshot.
  std::map<std::uint64_t, std::pair<const table_schema*, std::vector<memtable*>>> by_uid;
  for (const auto& t : out.schemas) {
    if (!t.partitioned) continue;
    std::set<std::uint32_t> families;
    for (const auto& f : t.families) families.insert(f.id);
    auto& cells = out.cells[t.name];
    std::vector<memtable*> raw;
    for (std::uint32_t p = 0; p < t.partitioning.count(); ++p) {
      auto m = std::make_shared<std::unique_ptr<memtable>>(std::make_unique<memtable>(&memory_));
      std::set<std::uint32_t> stale;
      if (auto s = load_partition(t, p, families, **m, stale); !s) return s;
      for (auto f : stale) purges_.push_back({t.uid, t.partitioning.count(), f});
      raw.push_back(m->get());
      cells.push_back(std::move(m));
    }
    by_uid[t.uid] = {&t, std::move(raw)};
  }

  // Every cell read is in the memtables now: WiredTiger's cache of the same pages would
  // be a second copy for as long as nothing evicts it (it is only written from now on).
  if (auto s = wt_->drop_cache(); !s) return s;
  release_free_memory();

  // The log since that snapshot; then a new log after its last generation.
  auto gens = redo_log::generations(*options_.env, options_.directory);
  if (auto s = replay_log(by_uid); !s) return s;
  if (options_.durability != durability::snapshot) {
    std::uint64_t next = generation_ + 1;
    if (!gens.empty()) next = std::max(next, gens.back() + 1);
    auto l = redo_log::open(options_.env, options_.directory, next, options_.durability == durability::log_sync,
                            options_.log_sync_interval);
    if (!l) return l.error();
    log_ = std::move(l.value());
  }
  recovered_.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (recovered_.cells_loaded + recovered_.log_records > 0 || recovered_.log_bytes_dropped > 0)
    spdlog::info("cellar: recovered {} cells from the snapshot and {} log records in {:.2f} s{}",
                 recovered_.cells_loaded, recovered_.log_records, recovered_.seconds,
                 recovered_.log_bytes_dropped == 0
                     ? std::string()
                     : "; dropped a torn log tail of " + std::to_string(recovered_.log_bytes_dropped) + " bytes in " +
                           recovered_.log_torn_file);
  return out;
}

}  // namespace cellar::detail
