// store_persist.cc: recovery at open and snapshots (docs/storage.md).
//
// Recovery: read the catalog (durable at every DDL), load each partition's table as of
// the last checkpoint into a fresh memtable, replay the redo log from the snapshot's
// generation on, then spawn the partition actors on the recovered memtables.
//
// Snapshot: rotate the log to generation G, cut every partition (an O(1) swap of its
// change delta, inside the actor, so the cut is point-in-time per partition and atomic
// with respect to its batches), write the deltas to WiredTiger in many small
// transactions, record G, checkpoint. Only the checkpoint makes the snapshot durable,
// so a crash at any point before it leaves the previous snapshot plus the log intact.
// Then the log generations below G are deleted.
#include <spdlog/spdlog.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "persist/codec.h"
#include "persist/free_memory.h"
#include "persist/priority.h"
#include "store_impl.h"

namespace cellar::detail {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

constexpr std::string_view store_key("\0store", 6);
// The layout of the partition tables (docs/storage.md): 2 = cells packed in runs
// (persist/runs.h); 3 = and change tables beside them (persist/wt_home.h). A format 2
// home reads as a format 3 home without change runs, and is marked 3 at open: an older
// cellar would not read the change runs. Homes written before runs (one item per cell, no
// marker) are refused.
constexpr std::string_view format_key("\0format", 7);
constexpr std::uint32_t data_format = 3;
constexpr std::uint32_t oldest_data_format = 2;

// A thread of a snapshot, from its start to its end: named (for top -H and perf), at idle
// priority unless the store hurries its snapshots, and known to hurry_snapshots meanwhile.
class snapshot_thread {
 public:
  explicit snapshot_thread(store_impl& s) : s_(s), tid_(::gettid()) {
    ::pthread_setname_np(::pthread_self(), "cellar-snapshot");
    std::lock_guard lock(s_.snapshot_threads_mutex);
    if (!s_.snapshot_hurry) idle_priority();  // serving threads come first (persist/priority.h)
    s_.snapshot_threads.insert(tid_);
  }
  ~snapshot_thread() {
    std::lock_guard lock(s_.snapshot_threads_mutex);
    s_.snapshot_threads.erase(tid_);
  }
  snapshot_thread(const snapshot_thread&) = delete;
  snapshot_thread& operator=(const snapshot_thread&) = delete;

 private:
  store_impl& s_;
  const pid_t tid_;
};

}  // namespace

void store_impl::hurry_snapshots() {
  std::lock_guard lock(snapshot_threads_mutex);
  snapshot_hurry = true;
  for (pid_t tid : snapshot_threads) normal_priority(tid);
  releaser.hurry();
  if (wt) wt->hurry();
}

bool store_impl::wait_until_idle(int windows, std::chrono::milliseconds window,
                                 const std::function<bool()>& give_up) const {
  for (int idle = 0; idle < windows;) {
    if (give_up()) return false;
    dispatch->seen.store(false, std::memory_order_relaxed);
    std::this_thread::sleep_for(window);
    const bool busy = dispatch->seen.load(std::memory_order_relaxed) ||
                      dispatch->in_flight.load(std::memory_order_relaxed) > 0;
    idle = busy ? 0 : idle + 1;
  }
  return true;
}

namespace {

// Recovery, step 1: the catalog's tables, the store's counters and the data format (a home
// in an older format is marked as this one's, or refused), and the snapshot's generation.
status read_catalog(store_impl& s, std::vector<table_schema>& schemas) {
  wt_home& wt = *s.wt;
  status bad;
  bool counters_seen = false;
  std::optional<std::uint32_t> format;
  auto st = wt.read_catalog([&](std::string_view k, std::string_view v) {
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
      if (!r.u64(s.next_uid) || !r.u32(s.next_family_id)) bad = {code::corruption, "malformed store counters"};
      return;
    }
    auto t = decode_schema(v);
    if (!t) {
      bad = {code::corruption, "catalog entry '" + std::string(k) + "': " + t.error().message()};
      return;
    }
    schemas.push_back(std::move(t.value()));
  });
  if (!st) return st;
  if (!bad) return bad;
  const std::string& dir = s.options.directory;
  if (!format && (counters_seen || !schemas.empty()))
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
    if (auto w = wt.write_catalog({{std::string(format_key), v}}, {}); !w) return w;
  }
  auto gen = wt.get_meta("snapshot_gen");
  if (!gen) return gen.error();
  s.generation = gen.value();
  return status::ok();
}

// Recovery, step 2, for partition `p` of `t`: its cells as of the last snapshot into `m`
// (the base, then the change runs since it was last merged, oldest first: each cell's
// state replaces what the base or an older run said). Cells of families the schema no
// longer has are left out and their families added to `stale`.
status load_partition(store_impl& s, const table_schema& t, std::uint32_t p, const std::set<std::uint32_t>& families,
                      memtable& m, std::set<std::uint32_t>& stale) {
  wt_home& wt = *s.wt;
  const bool salvage = s.options.salvage;
  if (salvage) {
    if (auto sv = wt.salvage_table(partition_uri(t.uid, p)); !sv) return sv;
    ++s.recovered.tables_salvaged;
  }
  std::uint64_t n = 0;
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
  });
  if (st) {
    if (salvage)
      if (auto sv = wt.salvage_table(changes_uri(t.uid, p)); !sv) return sv;
    std::uint64_t run_bytes = 0;
    st = wt.scan_changes(t.uid, p, [&](std::string_view k, std::string_view v) -> status {
      auto key = decode_cell_key(k);
      if (!key) return {code::corruption, "a malformed cell"};
      if (!families.count(key->family)) {
        stale.insert(key->family);
        return status::ok();
      }
      cell_key ck{std::move(key->row), std::move(key->qualifier), key->ts};
      ++s.recovered.change_cells;
      if (v.empty()) {
        m.unload(key->family, ck);
        return status::ok();
      }
      reader r(v);
      std::int64_t expires = 0;
      if (!r.i64(expires)) return {code::corruption, "a malformed cell"};
      m.load(key->family, std::move(ck), cell_value{short_bytes(r.rest()), expires});
      return status::ok();
    }, &run_bytes);
    s.change_bytes[{t.uid, p}] = run_bytes;
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
  s.recovered.cells_loaded += m.stats().cells;
  return status::ok();
}

// The recovered memtables of each partitioned table, by uid: its schema, then one per
// partition.
using recovered_tables = std::map<std::uint64_t, std::pair<const table_schema*, std::vector<memtable*>>>;

// Recovery, step 3: the redo log since the snapshot, replayed into `tables`' deltas (the
// next snapshot must hold them), not into a new log. Records of dropped tables and
// families are skipped.
status replay_log(store_impl& s, const recovered_tables& tables) {
  for (auto& [uid, e] : tables)
    for (auto* m : e.second) m->track(true, false);
  log_replay_stats replayed;
  auto st = redo_log::replay(*s.options.env, s.options.directory, s.generation, [&](std::string_view payload) -> status {
    auto header = decode_log_header(payload);
    if (!header) return {code::corruption, "malformed log record header"};
    auto it = tables.find(header->uid);
    if (it == tables.end() || header->partition >= it->second.second.size()) return status::ok();  // dropped table
    memtable& m = *it->second.second[header->partition];
    std::set<std::uint32_t> families;
    for (const auto& f : it->second.first->families) families.insert(f.id);
    ++s.recovered.log_records;
    return for_each_log_entry(header->entries, [&](log_entry& e) {
      if (!families.count(e.key.family)) return;
      std::optional<cell_value> v;
      if (e.present) v = cell_value{short_bytes(e.value), e.expires_at};
      m.replay(e.key.family, cell_key{std::move(e.key.row), std::move(e.key.qualifier), e.key.ts}, std::move(v));
    });
  }, &replayed);
  if (!st) return st;
  s.recovered.log_bytes_dropped = replayed.dropped_bytes;
  s.recovered.log_torn_file = replayed.torn_file;
  return status::ok();
}

// Recovery, step 4: the catalog of `schemas` published, each partitioned table's partition
// actors started on its recovered memtables (a cluster member starts the partitions its
// cluster gives it (cluster/member.h), on the cells kept in recovered_mem).
void start_recovered(store_impl& s, std::vector<table_schema> schemas) {
  std::lock_guard lock(s.ddl_mutex);
  auto next = std::make_shared<catalog_map>();
  for (auto& t : schemas) {
    auto schema = std::make_shared<table_schema>(std::move(t));
    schema->version = s.next_version++;
    auto rt = std::make_shared<table_runtime>();
    rt->schema = schema;
    if (schema->partitioned && !s.cluster_member) {
      auto& mems = s.recovered_mem[schema->name];
      for (std::uint32_t i = 0; i < schema->partitioning.count(); ++i)
        rt->partitions.push_back(s.start_partition(schema, i, mems[i]));
    }
    (*next)[schema->name] = std::move(rt);
  }
  if (!s.cluster_member) s.recovered_mem.clear();
  s.publish_catalog(std::move(next));
}

}  // namespace

status store_impl::recover() {
  const auto t0 = clock_type::now();
  auto home = wt_home::open(options.directory, options.cache_mb, options.env, options.salvage);
  if (!home) return home.error();
  wt = std::move(home.value());
  if (options.salvage)
    for (const char* uri : {"table:catalog", "table:meta"})
      if (auto s = wt->salvage_table(uri); !s) return s;

  std::vector<table_schema> schemas;
  if (auto s = read_catalog(*this, schemas); !s) return s;

  // The last snapshot.
  recovered_tables by_uid;
  for (const auto& t : schemas) {
    if (!t.partitioned) continue;
    std::set<std::uint32_t> families;
    for (const auto& f : t.families) families.insert(f.id);
    auto& mems = recovered_mem[t.name];
    std::vector<memtable*> raw;
    for (std::uint32_t p = 0; p < t.partitioning.count(); ++p) {
      auto m = std::make_shared<std::unique_ptr<memtable>>(std::make_unique<memtable>(&memory));
      std::set<std::uint32_t> stale;
      if (auto s = load_partition(*this, t, p, families, **m, stale); !s) return s;
      for (auto f : stale) purges.push_back({t.uid, t.partitioning.count(), f});
      raw.push_back(m->get());
      mems.push_back(std::move(m));
    }
    by_uid[t.uid] = {&t, std::move(raw)};
  }

  // Every cell read is in the memtables now: WiredTiger's cache of the same pages would
  // be a second copy for as long as nothing evicts it (it is only written from now on).
  if (auto s = wt->drop_cache(); !s) return s;
  release_free_memory();

  // The log since that snapshot; then a new log after its last generation.
  auto gens = redo_log::generations(*options.env, options.directory);
  if (auto s = replay_log(*this, by_uid); !s) return s;
  if (options.durability != durability::snapshot) {
    std::uint64_t next = generation + 1;
    if (!gens.empty()) next = std::max(next, gens.back() + 1);
    auto l = redo_log::open(options.env, options.directory, next, options.durability == durability::log_sync,
                            options.log_sync_interval);
    if (!l) return l.error();
    log = std::move(l.value());
  }
  start_recovered(*this, std::move(schemas));
  opened = true;
  recovered.seconds = seconds_since(t0);
  if (recovered.cells_loaded + recovered.log_records > 0 || recovered.log_bytes_dropped > 0)
    spdlog::info("cellar: recovered {} cells from the snapshot and {} log records in {:.2f} s{}",
                 recovered.cells_loaded, recovered.log_records, recovered.seconds,
                 recovered.log_bytes_dropped == 0
                     ? std::string()
                     : "; dropped a torn log tail of " + std::to_string(recovered.log_bytes_dropped) + " bytes in " +
                           recovered.log_torn_file);

  if (options.snapshot_interval.count() > 0)
    snapshotter = std::thread([this] {
      std::unique_lock lock(snapshotter_mutex);
      while (!snapshotter_cv.wait_for(lock, options.snapshot_interval, [this] { return stopping; })) {
        lock.unlock();
        if (auto r = snapshot(); !r) spdlog::error("cellar: periodic snapshot failed: {}", r.error().to_string());
        lock.lock();
      }
    });
  return status::ok();
}

namespace {

// A snapshot's cut of one table: each partition's changes since its previous cut.
struct cut {
  runtime_ptr rt;
  std::vector<delta_handle> deltas;  // per partition
};

// Cuts every partition: each answers with the changes since its last cut, taken between
// two of its requests, so every cut is point-in-time for its partition.
std::vector<cut> cut_partitions(store_impl& s) {
  std::vector<cut> cuts;
  auto cat = s.catalog.load();
  for (const auto& [name, rt] : *cat) {
    if (rt->partitions.empty()) continue;
    cut c{rt, {}};
    for (auto& r : ask_all<cut_reply>(*s.system, *rt, [](std::uint32_t) { return cut_request{}; }))
      c.deltas.push_back(r ? std::move(r->delta) : delta_handle{});  // a stopped partition: nothing
    cuts.push_back(std::move(c));
  }
  return cuts;
}

// Where a partition's changes go (docs/storage.md): into change runs appended to its
// change table, so an incremental snapshot writes about the bytes of its changes; or,
// merged with the runs written so far, into its base, once the runs and this delta would
// reach `merge_fraction` of the base's file (or the base is empty: a first snapshot is a
// bulk load). Merging rewrites the base's pages the changes fall in (for scattered
// changes, all of them), so each changed byte costs about 1 + 1 / merge_fraction written
// bytes amortised, and recovery reads at most 1 + merge_fraction times the base.
constexpr double merge_fraction = 0.5;

// One partition's changes to write, and how.
struct work_item {
  const cut* c;
  std::uint32_t partition;
  bool merge;
  std::uint64_t run_bytes;                                  // the partition's change runs before this snapshot
  std::shared_ptr<const std::set<std::uint32_t>> families;  // of the schema now
};

// The partitions of `cuts` with changes, each with how it is written; counts the changes
// into out.changes.
std::vector<work_item> plan_writes(store_impl& s, const std::vector<cut>& cuts, snapshot_stats& out) {
  std::vector<work_item> work;
  for (auto& c : cuts) {
    auto families = std::make_shared<std::set<std::uint32_t>>();
    for (const auto& f : c.rt->schema->families) families->insert(f.id);
    for (std::uint32_t i = 0; i < c.rt->partitions.size(); ++i) {
      out.changes += c.deltas[i].map->size();
      if (c.deltas[i].map->empty()) continue;
      const std::uint64_t uid = c.rt->schema->uid;
      const std::uint64_t runs = s.change_bytes[{uid, i}];
      const double base = static_cast<double>(s.wt->base_file_bytes(uid, i));
      const bool merge = static_cast<double>(runs + c.deltas[i].map->arena_bytes()) >= merge_fraction * base;
      work.push_back({&c, i, merge, runs, families});
    }
  }
  return work;
}

// The changes of `w` merged into its base: its change runs, oldest first, then its delta
// on top, written as one delta. Cells of families dropped since are left out (their ids
// are never used again). Adds the delta's bytes to `bytes`.
status merge_into_base(wt_home& wt, const work_item& w, std::uint64_t& bytes) {
  const std::uint64_t uid = w.c->rt->schema->uid;
  delta_map all;
  auto st = wt.scan_changes(uid, w.partition, [&](std::string_view key, std::string_view stored) -> status {
    reader r(key);
    std::uint32_t family = 0;
    if (!r.u32(family) || !w.families->count(family)) return status::ok();
    if (stored.empty()) {
      all.erase(key);
      return status::ok();
    }
    reader v(stored);
    std::int64_t expires = 0;
    if (!v.i64(expires)) return {code::corruption, "a malformed cell"};
    all.put(key, expires, v.rest());
    return status::ok();
  });
  if (!st) return st;
  for (const auto& [key, change] : *w.c->deltas[w.partition].map) {
    if (change.present) {
      all.put(key, change.expires_at, change.value());
      bytes += std::string_view(key).size() + 8 + change.size;
    } else {
      all.erase(key);
    }
  }
  std::uint64_t ignored = 0;
  if (st = wt.write_delta(uid, w.partition, all, &ignored); !st) return st;
  // In the same checkpoint as the merge: a crash before it keeps base and runs as they
  // were, after it finds the merged base and no runs.
  return wt.clear_changes(uid, w.partition);
}

// The writing of a snapshot's changes: writer threads, each taking whole partitions
// (WiredTiger sessions are per thread; partitions are separate tables, so writers never
// contend on a page).
class snapshot_writers {
 public:
  snapshot_writers(store_impl& s, std::vector<work_item> work, std::uint64_t generation)
      : s_(s), work_(std::move(work)), generation_(generation), new_change_bytes_(work_.size()) {}

  // Writes every item with up to `threads` writers (0: one per core); the first error.
  status run(std::size_t threads) {
    // One per core by default; all but the first only while nothing is being served.
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = std::min(threads, work_.size());
    std::vector<std::thread> all;
    for (std::size_t t = 0; t < threads; ++t) all.emplace_back([this, t] { writer(t > 0); });
    for (auto& t : all) t.join();
    return error_;
  }
  std::uint64_t written() const { return written_; }
  std::uint32_t writers() const { return writers_; }
  std::uint32_t merged() const { return merged_; }
  // After a successful run: (uid, partition) -> bytes of its change runs.
  std::vector<std::pair<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t>> change_bytes() const {
    std::vector<std::pair<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t>> out;
    for (std::size_t k = 0; k < work_.size(); ++k)
      out.push_back({{work_[k].c->rt->schema->uid, work_[k].partition}, new_change_bytes_[k]});
    return out;
  }

 private:
  // One partition's changes, written as plan_writes decided. A bulk load (a partition's
  // first snapshot) may be left in *pending, its file not yet synced (wt_home.h).
  status write_partition(std::size_t k, wt_home::pending_load_ptr* pending) {
    const auto& w = work_[k];
    const std::uint64_t uid = w.c->rt->schema->uid;
    const delta_map& delta = *w.c->deltas[w.partition].map;
    std::uint64_t b = 0;
    status st;
    if (!w.merge) {
      std::uint64_t run_bytes = 0;
      st = s_.wt->write_changes(uid, w.partition, generation_, delta, &b, &run_bytes);
      new_change_bytes_[k] = w.run_bytes + run_bytes;
    } else {
      ++merged_;
      new_change_bytes_[k] = 0;
      st = w.run_bytes == 0 ? s_.wt->write_delta(uid, w.partition, delta, &b, pending)
                            : merge_into_base(*s_.wt, w, b);
    }
    written_ += b;
    return st;
  }

  // The first writer always works. The others are helpers: they take a partition only
  // after `idle_windows` consecutive windows of 1 ms in which no data call came and none
  // was in flight at the end. (A put loop stalls for several ms at times during a
  // snapshot; with only "no call came", helpers took partitions under it.) On the 2-core
  // bench machine a second thread writing next to a put loop raised put p99 during a
  // full-store snapshot past 2x (2.05-2.36x in three runs, against 1.71-1.99x with one),
  // while with nothing to serve it made the snapshot 1.4x faster (docs/benchmarks.md,
  // fourth session).
  //
  // A writer finishes its last bulk load only after it has encoded the next partition:
  // the disk writes one file while the core encodes the next. Finishing each load at
  // once left both cores idle while they waited for their syncs (a fresh 1M-cell,
  // 4-partition store: 0.04 s of sync after each 0.05 s of encoding).
  void writer(bool helper) {
    constexpr int idle_windows = 3;
    snapshot_thread me(s_);
    bool wrote = false;
    wt_home::pending_load_ptr pending;
    for (;;) {
      if (helper && !s_.wait_until_idle(idle_windows, std::chrono::milliseconds(1),
                                        [&] { return next_.load() >= work_.size(); }))
        break;
      const std::size_t k = next_.fetch_add(1);
      if (k >= work_.size()) break;
      if (!wrote) {
        wrote = true;
        ++writers_;
      }
      wt_home::pending_load_ptr load;
      record(write_partition(k, &load));
      if (pending) record(s_.wt->finish_load(std::move(pending)));
      pending = std::move(load);
      // The deltas are kept until the checkpoint: a failed one can stop WiredTiger, which
      // is then reopened at the last snapshot without what was written here (wt_home.h).
    }
    if (pending) record(s_.wt->finish_load(std::move(pending)));
  }
  void record(status s) {
    if (s) return;
    std::lock_guard l(error_mutex_);
    error_ = std::move(s);
  }

  store_impl& s_;
  const std::vector<work_item> work_;
  const std::uint64_t generation_;
  std::vector<std::uint64_t> new_change_bytes_;  // per item; each written by its writer only
  std::atomic<std::size_t> next_{0};
  std::atomic<std::uint64_t> written_{0};
  std::atomic<std::uint32_t> merged_{0};
  std::atomic<std::uint32_t> writers_{0};
  std::mutex error_mutex_;
  status error_;  // guarded by error_mutex_
};

// The end of a snapshot, at the snapshot threads' CPU priority: the purges of dropped
// families, the generation recorded, the checkpoint that makes it all durable; then the
// deltas of `cuts` freed there (a few arena blocks each: partition/delta_map.h).
status finish_snapshot(store_impl& s, std::vector<cut>& cuts, std::uint64_t generation) {
  status finish;
  std::thread finisher([&] {
    snapshot_thread me(s);
    for (const auto& p : s.purges)
      for (std::uint32_t i = 0; i < p.partitions; ++i)
        if (auto st = s.wt->purge_family(p.uid, i, p.family); !st && st.code() != code::io_error) {
          finish = st;
          return;
        }
    if (auto st = s.wt->set_meta("snapshot_gen", generation); !st) {
      finish = st;
      return;
    }
    finish = s.wt->checkpoint();
    if (finish) {
      for (auto& c : cuts)
        for (auto& d : c.deltas)
          if (d.map) d.map->clear();
      s.releaser.request();
    }
  });
  finisher.join();
  return finish;
}

}  // namespace

result<snapshot_stats> store_impl::snapshot() {
  if (!persistent()) return status{code::unsupported, "a memory-only store (no directory) takes no snapshots"};
  std::lock_guard lock(snapshot_mutex);
  // A snapshot that failed earlier may have left WiredTiger stopped and not reopened.
  if (wt->stopped())
    if (auto s = wt->reopen(); !s) return status{code::io_error, "snapshot: " + s.message()};
  const auto t0 = clock_type::now();
  snapshot_stats out;
  out.generation = generation + 1;
  if (log) {
    out.generation = std::max(out.generation, log->generation() + 1);
    if (auto s = log->rotate(out.generation); !s) return s;
  }
  auto cuts = cut_partitions(*this);
  out.cut_seconds = seconds_since(t0);

  // On failure every delta goes back to its partition, so the next snapshot writes it
  // again; the previous snapshot stays the recovery point. A failed sync stops WiredTiger
  // for good: it is reopened at that snapshot, here or by the next attempt.
  auto failed = [&](const status& why) -> status {
    for (auto& c : cuts)
      for (std::uint32_t i = 0; i < c.rt->partitions.size(); ++i)
        caf::anon_send(c.rt->partitions[i].actor, merge_delta_request{std::move(c.deltas[i])});
    if (!wt->stopped()) return why;
    auto reopened = wt->reopen();
    return status{code::io_error, "snapshot failed: " + why.message() + "; WiredTiger stopped" +
                                      (reopened ? " and was reopened at the last snapshot"
                                                : " and could not be reopened (" + reopened.message() + ")") +
                                      "; the next snapshot writes everything since"};
  };
  snapshot_writers writers(*this, plan_writes(*this, cuts, out), out.generation);
  const auto t_write = clock_type::now();
  if (auto s = writers.run(options.snapshot_threads); !s) return failed(s);
  out.write_seconds = seconds_since(t_write);
  out.bytes = writers.written();
  out.writers = writers.writers();
  out.merged_partitions = writers.merged();

  const auto t_finish = clock_type::now();
  if (auto s = finish_snapshot(*this, cuts, out.generation); !s) return failed(s);
  out.finish_seconds = seconds_since(t_finish);
  purges.clear();
  for (const auto& [key, bytes] : writers.change_bytes()) change_bytes[key] = bytes;
  generation = out.generation;
  if (log) {
    log->remove_before(generation);
    // Everything a failed log missed is in this snapshot: take writes again.
    log->clear_failure(generation);
  }
  out.seconds = seconds_since(t0);
  {
    std::lock_guard l(info_mutex);
    last_snapshot = out;
    last_snapshot_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch()).count();
    ++snapshots_taken;
  }
  return out;
}

}  // namespace cellar::detail
