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

status store_impl::recover() {
  const auto t0 = clock_type::now();
  auto home = wt_home::open(options.directory, options.cache_mb, options.env, options.salvage);
  if (!home) return home.error();
  wt = std::move(home.value());
  if (options.salvage)
    for (const char* uri : {"table:catalog", "table:meta"})
      if (auto s = wt->salvage_table(uri); !s) return s;

  // Catalog.
  std::vector<table_schema> schemas;
  status bad;
  bool counters_seen = false;
  std::optional<std::uint32_t> format;
  auto st = wt->read_catalog([&](std::string_view k, std::string_view v) {
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
      if (!r.u64(next_uid) || !r.u32(next_family_id)) bad = {code::corruption, "malformed store counters"};
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
  if (!format && (counters_seen || !schemas.empty()))
    return status{code::unsupported, options.directory + " was written by an older cellar (one item per cell); this "
                                     "version reads data formats " + std::to_string(oldest_data_format) + " to " +
                                     std::to_string(data_format) + " only"};
  if (format && (*format < oldest_data_format || *format > data_format))
    return status{code::unsupported, options.directory + " holds data format " + std::to_string(*format) +
                                     "; this version reads data formats " + std::to_string(oldest_data_format) +
                                     " to " + std::to_string(data_format) + " only"};
  if (!format || *format != data_format) {
    std::string v;
    put_u32(v, data_format);
    if (auto s = wt->write_catalog({{std::string(format_key), v}}, {}); !s) return s;
  }
  auto gen = wt->get_meta("snapshot_gen");
  if (!gen) return gen.error();
  generation = gen.value();

  // Last snapshot.
  std::map<std::uint64_t, std::pair<const table_schema*, std::vector<memtable*>>> by_uid;
  for (const auto& t : schemas) {
    if (!t.partitioned) continue;
    std::set<std::uint32_t> families;
    for (const auto& f : t.families) families.insert(f.id);
    auto& mems = recovered_mem[t.name];
    std::vector<memtable*> raw;
    for (std::uint32_t p = 0; p < t.partitioning.count(); ++p) {
      auto m = std::make_shared<std::unique_ptr<memtable>>(
          std::make_unique<memtable>(&memory));
      std::set<std::uint32_t> stale;
      std::uint64_t n = 0;
      if (options.salvage) {
        if (auto s = wt->salvage_table(partition_uri(t.uid, p)); !s) return s;
        ++recovered.tables_salvaged;
      }
      auto s = wt->scan_partition(t.uid, p, [&](std::string_view k, std::string_view v) -> status {
        auto key = decode_cell_key(k);
        reader r(v);
        std::int64_t expires = 0;
        if (!key || !r.i64(expires)) return {code::corruption, "a malformed cell"};
        if (!families.count(key->family)) {
          stale.insert(key->family);
          return status::ok();
        }
        (*m)->load(key->family, cell_key{std::move(key->row), std::move(key->qualifier), key->ts},
                   cell_value{short_bytes(r.rest()), expires});
        if (++n % 1'000'000 == 0)
          spdlog::info("cellar: recovery: table '{}' partition {}: {} cells loaded", t.name, p, n);
        return status::ok();
      });
      // Then the change runs of the snapshots since the base was last merged, oldest
      // first: each cell's state replaces what the base (or an older run) said.
      if (s) {
        if (options.salvage)
          if (auto sv = wt->salvage_table(changes_uri(t.uid, p)); !sv) return sv;
        std::uint64_t run_bytes = 0;
        s = wt->scan_changes(t.uid, p, [&](std::string_view k, std::string_view v) -> status {
          auto key = decode_cell_key(k);
          if (!key) return {code::corruption, "a malformed cell"};
          if (!families.count(key->family)) {
            stale.insert(key->family);
            return status::ok();
          }
          cell_key ck{std::move(key->row), std::move(key->qualifier), key->ts};
          ++recovered.change_cells;
          if (v.empty()) {
            (*m)->unload(key->family, ck);
            return status::ok();
          }
          reader r(v);
          std::int64_t expires = 0;
          if (!r.i64(expires)) return {code::corruption, "a malformed cell"};
          (*m)->load(key->family, std::move(ck), cell_value{short_bytes(r.rest()), expires});
          return status::ok();
        }, &run_bytes);
        change_bytes[{t.uid, p}] = run_bytes;
      }
      if (s.code() == code::corruption && !options.salvage)
        return status{code::corruption, s.message() + "; the store is not opened: open it with salvage "
                                                      "(store_options::salvage, cellar-server --salvage) to serve "
                                                      "what can still be read of it"};
      if (!s) return s;
      if (options.salvage)
        spdlog::warn("cellar: salvage: table '{}' partition {} ({}): {} cells kept", t.name, p,
                     wt->file_of(t.uid, p), (*m)->stats().cells);
      // The cells the snapshot holds: the base's, as the change runs left them.
      recovered.cells_loaded += (*m)->stats().cells;
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

  // The log since that snapshot. Replayed changes go into the deltas (the next snapshot
  // must hold them), not into a new log.
  for (auto& [uid, e] : by_uid)
    for (auto* m : e.second) m->track(true, false);
  env& files = *options.env;
  auto gens = redo_log::generations(files, options.directory);
  log_replay_stats replayed;
  st = redo_log::replay(files, options.directory, generation, [&](std::string_view payload) -> status {
    auto header = decode_log_header(payload);
    if (!header) return {code::corruption, "malformed log record header"};
    auto it = by_uid.find(header->uid);
    if (it == by_uid.end() || header->partition >= it->second.second.size()) return status::ok();  // dropped table
    memtable& m = *it->second.second[header->partition];
    std::set<std::uint32_t> families;
    for (const auto& f : it->second.first->families) families.insert(f.id);
    ++recovered.log_records;
    return for_each_log_entry(header->entries, [&](log_entry& e) {
      if (!families.count(e.key.family)) return;
      std::optional<cell_value> v;
      if (e.present) v = cell_value{short_bytes(e.value), e.expires_at};
      m.replay(e.key.family, cell_key{std::move(e.key.row), std::move(e.key.qualifier), e.key.ts}, std::move(v));
    });
  }, &replayed);
  if (!st) return st;
  recovered.log_bytes_dropped = replayed.dropped_bytes;
  recovered.log_torn_file = replayed.torn_file;

  // Spawn the actors on what was recovered.
  if (options.durability != durability::snapshot) {
    std::uint64_t next = generation + 1;
    if (!gens.empty()) next = std::max(next, gens.back() + 1);
    auto l = redo_log::open(options.env, options.directory, next, options.durability == durability::log_sync,
                            options.log_sync_interval);
    if (!l) return l.error();
    log = std::move(l.value());
  }
  {
    std::lock_guard lock(ddl_mutex);
    auto next = std::make_shared<catalog_map>();
    for (auto& t : schemas) {
      auto schema = std::make_shared<table_schema>(std::move(t));
      schema->version = next_version++;
      auto rt = std::make_shared<table_runtime>();
      rt->schema = schema;
      // A cluster member starts the partitions its cluster gives it (cluster/member.h),
      // on the recovered cells kept in recovered_mem.
      if (schema->partitioned && !cluster_member) {
        auto& mems = recovered_mem[schema->name];
        for (std::uint32_t i = 0; i < schema->partitioning.count(); ++i)
          rt->partitions.push_back(start_partition(schema, i, mems[i]));
      }
      (*next)[schema->name] = std::move(rt);
    }
    if (!cluster_member) recovered_mem.clear();
    publish_catalog(std::move(next));
  }
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

  // Cut every partition: each answers with the changes since its last cut, taken between
  // two of its requests, so every cut is point-in-time for its partition.
  struct cut {
    runtime_ptr rt;
    std::vector<delta_handle> deltas;  // per partition
  };
  std::vector<cut> cuts;
  {
    auto cat = catalog.load();
    for (const auto& [name, rt] : *cat) {
      if (rt->partitions.empty()) continue;
      cut c{rt, {}};
      for (auto& r : ask_all<cut_reply>(*system, *rt, [](std::uint32_t) { return cut_request{}; }))
        c.deltas.push_back(r ? std::move(r->delta) : delta_handle{});  // a stopped partition: nothing
      cuts.push_back(std::move(c));
    }
  }
  out.cut_seconds = seconds_since(t0);

  // Write them. On failure every delta goes back to its partition, so the next snapshot
  // writes it again; the previous snapshot stays the recovery point. A failed sync stops
  // WiredTiger for good: it is reopened at that snapshot, here or by the next attempt.
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
  // Writer threads, each taking whole partitions (WiredTiger sessions are
  // per thread; partitions are separate tables, so writers never contend on a page).
  //
  // Where a partition's changes go (docs/storage.md): into change runs appended to its
  // change table, so an incremental snapshot writes about the bytes of its changes; or,
  // merged with the runs written so far, into its base, once the runs and this delta
  // would reach `merge_fraction` of the base's file (or the base is empty: a first
  // snapshot is a bulk load). Merging rewrites the base's pages the changes fall in
  // (for scattered changes, all of them), so each changed byte costs about 1 + 1 /
  // merge_fraction written bytes amortised, and recovery reads at most 1 +
  // merge_fraction times the base.
  constexpr double merge_fraction = 0.5;
  // (uid, partition) -> bytes of its change runs once this snapshot is complete.
  std::vector<std::pair<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t>> pending_change_bytes;
  {
    struct work_item {
      const cut* c;
      std::uint32_t partition;
      bool merge;
      std::uint64_t run_bytes;  // the partition's change runs before this snapshot
      std::shared_ptr<const std::set<std::uint32_t>> families;  // of the schema now
    };
    std::vector<work_item> work;
    for (auto& c : cuts) {
      auto families = std::make_shared<std::set<std::uint32_t>>();
      for (const auto& f : c.rt->schema->families) families->insert(f.id);
      for (std::uint32_t i = 0; i < c.rt->partitions.size(); ++i) {
        out.changes += c.deltas[i].map->size();
        if (c.deltas[i].map->empty()) continue;
        const std::uint64_t uid = c.rt->schema->uid;
        const std::uint64_t runs = change_bytes[{uid, i}];
        const double base = static_cast<double>(wt->base_file_bytes(uid, i));
        const bool merge = static_cast<double>(runs + c.deltas[i].map->arena_bytes()) >= merge_fraction * base;
        work.push_back({&c, i, merge, runs, families});
      }
    }
    std::vector<std::uint64_t> new_change_bytes(work.size());
    std::atomic<std::size_t> next{0};
    std::atomic<std::uint64_t> written{0};
    std::atomic<std::uint32_t> merged{0};
    std::mutex error_mutex;
    status error;
    // One partition's changes, written as above. A bulk load (a partition's first
    // snapshot) may be left in *pending, its file not yet synced (wt_home.h).
    auto write_partition = [&](std::size_t k, wt_home::pending_load_ptr* pending) -> status {
      const auto& w = work[k];
      const std::uint64_t uid = w.c->rt->schema->uid;
      const delta_map& delta = *w.c->deltas[w.partition].map;
      std::uint64_t b = 0;
      if (!w.merge) {
        std::uint64_t run_bytes = 0;
        auto st = wt->write_changes(uid, w.partition, out.generation, delta, &b, &run_bytes);
        written += b;
        new_change_bytes[k] = w.run_bytes + run_bytes;
        return st;
      }
      ++merged;
      new_change_bytes[k] = 0;
      if (w.run_bytes == 0) {
        auto st = wt->write_delta(uid, w.partition, delta, &b, pending);
        written += b;
        return st;
      }
      // The runs, oldest first, then this delta on top: one delta to merge. Cells of
      // families dropped since are left out (their ids are never used again).
      delta_map all;
      auto st = wt->scan_changes(uid, w.partition, [&](std::string_view key, std::string_view stored) -> status {
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
      for (const auto& [key, change] : delta) {
        if (change.present) {
          all.put(key, change.expires_at, change.value());
          b += std::string_view(key).size() + 8 + change.size;
        } else {
          all.erase(key);
        }
      }
      written += b;
      std::uint64_t ignored = 0;
      if (st = wt->write_delta(uid, w.partition, all, &ignored); !st) return st;
      // In the same checkpoint as the merge: a crash before it keeps base and runs as
      // they were, after it finds the merged base and no runs.
      return wt->clear_changes(uid, w.partition);
    };
    // The first writer always works. The others are helpers: they take a partition only
    // after `idle_windows` consecutive windows of 1 ms in which no data call came and none
    // was in flight at the end. (A put loop stalls for several ms at times during a
    // snapshot; with only "no call came", helpers took partitions under it.) On the 2-core
    // bench machine a second thread writing next to a put loop raised put p99 during a
    // full-store snapshot past 2x (2.05-2.36x in three runs, against 1.71-1.99x with one),
    // while with nothing to serve it made the snapshot 1.4x faster (docs/benchmarks.md,
    // fourth session).
    constexpr int idle_windows = 3;
    std::atomic<std::uint32_t> writers{0};
    //
    // A writer finishes its last bulk load only after it has encoded the next partition:
    // the disk writes one file while the core encodes the next. Finishing each load at
    // once left both cores idle while they waited for their syncs (a fresh 1M-cell,
    // 4-partition store: 0.04 s of sync after each 0.05 s of encoding).
    auto writer = [&](bool helper) {
      snapshot_thread me(*this);
      bool wrote = false;
      wt_home::pending_load_ptr pending;
      auto record = [&](status s) {
        if (s) return;
        std::lock_guard l(error_mutex);
        error = std::move(s);
      };
      for (;;) {
        if (helper && !wait_until_idle(idle_windows, std::chrono::milliseconds(1),
                                       [&] { return next.load() >= work.size(); }))
          break;
        const std::size_t k = next.fetch_add(1);
        if (k >= work.size()) break;
        if (!wrote) {
          wrote = true;
          ++writers;
        }
        wt_home::pending_load_ptr load;
        record(write_partition(k, &load));
        if (pending) record(wt->finish_load(std::move(pending)));
        pending = std::move(load);
        // The deltas are kept until the checkpoint: a failed one can stop WiredTiger,
        // which is then reopened at the last snapshot without what was written here
        // (wt_home.h).
      }
      if (pending) record(wt->finish_load(std::move(pending)));
    };
    std::size_t n = options.snapshot_threads;
    // One per core by default; all but the first only while nothing is being served.
    if (n == 0) n = std::max(1u, std::thread::hardware_concurrency());
    n = std::min(n, work.size());
    std::vector<std::thread> threads;
    const auto t_write = clock_type::now();
    for (std::size_t t = 0; t < n; ++t) threads.emplace_back(writer, t > 0);
    for (auto& t : threads) t.join();
    out.write_seconds = seconds_since(t_write);
    out.bytes = written;
    out.writers = writers;
    out.merged_partitions = merged;
    if (!error) return failed(error);
    for (std::size_t k = 0; k < work.size(); ++k)
      pending_change_bytes.push_back({{work[k].c->rt->schema->uid, work[k].partition}, new_change_bytes[k]});
  }
  // Purge, record the generation and checkpoint, also at the lower CPU priority; then
  // free the deltas there (a few arena blocks each: partition/delta_map.h).
  status finish;
  const auto t_finish = clock_type::now();
  std::thread finisher([&] {
    snapshot_thread me(*this);
    for (const auto& p : purges)
      for (std::uint32_t i = 0; i < p.partitions; ++i)
        if (auto s = wt->purge_family(p.uid, i, p.family); !s && s.code() != code::io_error) {
          finish = s;
          return;
        }
    if (auto s = wt->set_meta("snapshot_gen", out.generation); !s) {
      finish = s;
      return;
    }
    finish = wt->checkpoint();
    if (finish) {
      for (auto& c : cuts)
        for (auto& d : c.deltas)
          if (d.map) d.map->clear();
      releaser.request();
    }
  });
  finisher.join();
  out.finish_seconds = seconds_since(t_finish);
  if (!finish) return failed(finish);
  purges.clear();
  for (const auto& [key, bytes] : pending_change_bytes) change_bytes[key] = bytes;
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
