// store/recovery.cc: a store's state at open (docs/storage.md): the catalog (durable at
// every DDL), each partition's cells as of the last checkpoint, then the redo log from the
// snapshot's generation on, replayed into the partitions' deltas so the next snapshot
// writes them.
#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

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
// Each reading thread holds a WiredTiger session, and a connection opens at most
// session_max of them (persist/wt_home.cc), its own threads' and the store's among them.
constexpr std::size_t max_recovery_threads = 64;
// WiredTiger's cache while partitions are read (recover).
constexpr std::size_t recovery_cache_mb = 32;

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
    return status{code::unsupported, dir +
                                         " was written by an older cellar (one item per cell); this "
                                         "version reads data formats " +
                                         std::to_string(oldest_data_format) + " to " + std::to_string(data_format) +
                                         " only"};
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

// One partition to read at open, and what reading it found.
struct partition_load {
  const table_schema* t = nullptr;
  std::uint32_t p = 0;
  const std::set<std::uint32_t>* families = nullptr;  // the schema's now
  memtable* m = nullptr;
  // Found:
  status st;
  bool salvaged = false;
  std::uint64_t change_cells = 0;
  stored_bytes sizes;
  std::set<std::uint32_t> stale;  // families in the files that the schema no longer has
};

namespace {

// Adds to the shared count of cells read every few thousand cells, so that progress costs
// no contention.
class progress_count {
 public:
  explicit progress_count(recovery_progress& total) : total_(total) {}
  ~progress_count() { total_.add_cells(n_); }
  void one() {
    if (++n_ == 4096) {
      total_.add_cells(n_);
      n_ = 0;
    }
  }

 private:
  recovery_progress& total_;
  std::uint64_t n_ = 0;
};

// The cores this process may run on (its affinity), at least one.
std::size_t cores_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

// Step 2, for one partition: its cells as of the last snapshot into job.m (the base, then
// the change runs since it was last merged, oldest first: each cell's state replaces what
// the base or an older run said). Cells of families the schema no longer has are left out
// and their families noted in job.stale.
status store_persistence::load_partition(partition_load& job, recovery_progress& progress) {
  wt_home& wt = *wt_;
  const table_schema& t = *job.t;
  const std::uint32_t p = job.p;
  const auto& families = *job.families;
  memtable& m = *job.m;
  const bool salvage = options_.salvage;
  // A partition never written has no tables (persist/wt_home.h): nothing to salvage.
  if (salvage)
    if (auto sv = wt.salvage_table(partition_uri(t.uid, p), &job.salvaged); !sv) return sv;
  progress_count count(progress);
  // Keys are decoded into views of the run (the scratch strings hold a row or qualifier
  // only when it has an escaped zero byte), and the base's cells, in key order, are
  // appended to their family's map (memtable::bulk_loader).
  memtable::bulk_loader loader(m);
  key_parts key;
  std::string row_scratch, qualifier_scratch;
  std::uint32_t known_family = 0;
  bool family_kept = false;  // known_family is one of the schema's
  auto keep = [&](std::uint32_t family) {
    if (family != known_family || !family_kept) {
      known_family = family;
      family_kept = families.count(family) != 0;
      if (!family_kept) job.stale.insert(family);
    }
    return family_kept;
  };
  auto st = wt.scan_partition(
      t.uid, p,
      [&](std::string_view k, std::string_view v) -> status {
        reader r(v);
        std::int64_t expires = 0;
        if (!decode_cell_key(k, key, row_scratch, qualifier_scratch) || !r.i64(expires))
          return {code::corruption, "a malformed cell"};
        if (!keep(key.family)) return status::ok();
        loader.load(key.family, key_view{key.row, key.qualifier, key.ts}, r.rest(), expires);
        count.one();
        return status::ok();
      },
      &job.sizes.base);
  loader.flush();  // the base's cells counted before a change run erases any
  if (st) {
    if (salvage)
      if (auto sv = wt.salvage_table(changes_uri(t.uid, p)); !sv) return sv;
    st = wt.scan_changes(
        t.uid, p,
        [&](std::string_view k, std::string_view v) -> status {
          if (!decode_cell_key(k, key, row_scratch, qualifier_scratch)) return {code::corruption, "a malformed cell"};
          if (!keep(key.family)) return status::ok();
          ++job.change_cells;
          count.one();
          if (v.empty()) {
            m.unload(key.family, cell_key{key_bytes(key.row), key_bytes(key.qualifier), key.ts});
            return status::ok();
          }
          reader r(v);
          std::int64_t expires = 0;
          if (!r.i64(expires)) return {code::corruption, "a malformed cell"};
          loader.load(key.family, key_view{key.row, key.qualifier, key.ts}, r.rest(), expires);
          return status::ok();
        },
        &job.sizes.runs);
  }
  loader.flush();
  if (st.code() == code::corruption && !salvage)
    return status{code::corruption, st.message() +
                                        "; the store is not opened: open it with salvage "
                                        "(store_options::salvage, cellar-server --salvage) to serve "
                                        "what can still be read of it"};
  if (!st) return st;
  if (salvage)
    spdlog::warn("cellar: salvage: table '{}' partition {} ({}): {} cells kept", t.name, p, wt.file_of(t.uid, p),
                 m.stats().cells);
  return status::ok();
}

// Step 2 for every partition: each thread takes whole partitions (WiredTiger sessions are
// per call, partitions separate tables and memtables, so readers share nothing but the
// progress). After the first failure no partition is started; the error of the first
// failed partition, in `jobs` order, is returned. Progress is logged every few seconds
// while it runs.
status store_persistence::load_partitions(std::vector<partition_load>& jobs) {
  if (jobs.empty()) return status::ok();
  std::size_t threads = options_.recovery_threads != 0 ? options_.recovery_threads : cores_available();
  threads = std::clamp<std::size_t>(threads, 1, std::min(jobs.size(), max_recovery_threads));
  recovered_.threads = static_cast<std::uint32_t>(threads);
  recovered_.partitions = static_cast<std::uint32_t>(jobs.size());
  recovery_progress& progress = *options_.recovery_progress;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  absl::Mutex mu;
  std::size_t running = threads;  // guarded by mu
  bool all_done = false;          // guarded by mu: running reached 0
  auto reader = [&] {
    ::pthread_setname_np(::pthread_self(), "cellar-recover");
    while (!failed.load(std::memory_order_relaxed)) {
      const std::size_t k = next.fetch_add(1);
      if (k >= jobs.size()) break;
      jobs[k].st = load_partition(jobs[k], progress);
      if (!jobs[k].st) failed = true;
      progress.partition_read(jobs[k].sizes.base + jobs[k].sizes.runs);
    }
    absl::MutexLock l(&mu);
    all_done = --running == 0;
  };
  std::vector<std::thread> all;
  for (std::size_t i = 0; i < threads; ++i) all.emplace_back(reader);
  {
    absl::MutexLock l(&mu);
    while (!mu.AwaitWithTimeout(absl::Condition(&all_done), absl::Seconds(2))) {
      const auto f = progress.read();
      spdlog::info("cellar: recovery: {} of {} partitions read, {} cells ({:.0f} cells/s, {} threads)",
                   f.partitions_done, f.partitions_total, f.cells, static_cast<double>(f.cells) / f.seconds, threads);
    }
  }
  for (auto& t : all) t.join();
  if (!failed) return status::ok();
  // A damaged page stops WiredTiger, and with it the reads of other partitions running
  // then: the partition WiredTiger names is the one to report.
  const std::string damage = wt_->damage_reported();
  for (auto& j : jobs) {
    if (j.st || damage.empty()) continue;
    for (const auto& uri : {partition_uri(j.t->uid, j.p), changes_uri(j.t->uid, j.p)})
      for (const char* before : {":", " ", "/"})
        if (damage.find(before + uri.substr(6) + ".wt") != std::string::npos) return j.st;
  }
  for (auto& j : jobs)
    if (!j.st) return j.st;
  return status::ok();
}

// Step 3: the redo log since the snapshot, replayed into `tables`' deltas (the next
// snapshot must hold them), not into a new log. Records of dropped tables and families
// are skipped.
status store_persistence::replay_log(
    const std::map<std::uint64_t, std::pair<const table_schema*, std::vector<memtable*>>>& tables) {
  for (auto& [uid, e] : tables)
    for (auto* m : e.second) m->track(true, false);
  recovery_progress& progress = *options_.recovery_progress;
  progress.enter(recovery_progress::phase::replaying_log);
  log_replay_stats replayed;
  auto st = redo_log::replay(
      *options_.env, options_.directory, generation_,
      [&](std::string_view payload) -> status {
        auto header = decode_log_header(payload);
        if (!header) return {code::corruption, "malformed log record header"};
        auto it = tables.find(header->uid);
        if (it == tables.end() || header->partition >= it->second.second.size()) return status::ok();  // dropped table
        memtable& m = *it->second.second[header->partition];
        std::set<std::uint32_t> families;
        for (const auto& f : it->second.first->families) families.insert(f.id);
        ++recovered_.log_records;
        progress.log_record(payload.size());
        return for_each_log_entry(header->entries, [&](log_entry& e) {
          if (!families.count(e.key.family)) return;
          std::optional<cell_value> v;
          if (e.present) v = cell_value{short_bytes(e.value), e.expires_at};
          m.replay(e.key.family, cell_key{std::move(e.key.row), std::move(e.key.qualifier), e.key.ts}, std::move(v));
        });
      },
      &replayed);
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

  // The last snapshot: every partition's memtable made here, filled by load_partitions.
  std::map<std::uint64_t, std::pair<const table_schema*, std::vector<memtable*>>> by_uid;
  std::map<std::uint64_t, std::set<std::uint32_t>> families_of;
  std::vector<partition_load> jobs;
  for (const auto& t : out.schemas) {
    if (!t.partitioned) continue;
    auto& families = families_of[t.uid];
    for (const auto& f : t.families) families.insert(f.id);
    auto& cells = out.cells[t.name];
    std::vector<memtable*> raw;
    for (std::uint32_t p = 0; p < t.partitioning.count(); ++p) {
      auto m = std::make_shared<std::unique_ptr<memtable>>(std::make_unique<memtable>(&memory_));
      partition_load job;
      job.t = &t;
      job.p = p;
      job.families = &families;
      job.m = m->get();
      jobs.push_back(std::move(job));
      raw.push_back(m->get());
      cells.push_back(std::move(m));
    }
    by_uid[t.uid] = {&t, std::move(raw)};
  }
  options_.recovery_progress->begin(static_cast<std::uint32_t>(jobs.size()));
  // Each page is read once: a small cache makes WiredTiger evict the pages read and read
  // the next into the memory they freed, instead of faulting in fresh memory up to the
  // cache's size (drop_cache below brings the configured size back).
  if (auto s = wt_->set_cache_size(recovery_cache_mb); !s) return s;
  if (auto s = load_partitions(jobs); !s) return s;
  for (auto& j : jobs) {
    recovered_.tables_salvaged += j.salvaged ? 1 : 0;
    recovered_.change_cells += j.change_cells;
    // The cells the snapshot holds: the base's, as the change runs left them.
    recovered_.cells_loaded += j.m->stats().cells;
    for (auto f : j.stale) purges_.push_back({j.t->uid, j.t->partitioning.count(), f});
    absl::MutexLock l(&sizes_mu_);
    sizes_[{j.t->uid, j.p}] = j.sizes;
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
    spdlog::info(
        "cellar: recovered {} cells from the snapshot ({} partitions, {} threads) and {} log records in {:.2f} s{}",
        recovered_.cells_loaded, recovered_.partitions, recovered_.threads, recovered_.log_records, recovered_.seconds,
        recovered_.log_bytes_dropped == 0
            ? std::string()
            : "; dropped a torn log tail of " + std::to_string(recovered_.log_bytes_dropped) + " bytes in " +
                  recovered_.log_torn_file);
  return out;
}

}  // namespace cellar::detail
