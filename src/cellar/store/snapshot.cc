// store/snapshot.cc: a snapshot of a store's partitions into WiredTiger (the protocol is
// described in store/persistence.h and docs/storage.md).
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "partition/ask.h"
#include "persist/codec.h"
#include "persist/priority.h"
#include "store/persistence.h"

namespace cellar::detail {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

}  // namespace

// A snapshot's cut of one table: each partition's changes since its previous cut.
struct table_cut {
  runtime_ptr rt;
  std::vector<delta_handle> deltas;  // per partition
  std::vector<std::uint64_t> cells;  // per partition: its cells at the cut
};

// A thread of a snapshot, from its start to its end: named (for top -H and perf), at the
// background priority unless the store hurries its snapshots, and known to hurry()
// meanwhile.
class snapshot_thread {
 public:
  explicit snapshot_thread(store_persistence& s) : s_(s), tid_(::gettid()) {
    ::pthread_setname_np(::pthread_self(), "cellar-snapshot");
    absl::MutexLock lock(&s_.threads_mu_);
    if (!s_.hurry_ && s_.options_.idle_background_threads) idle_priority();  // serving threads come first
    s_.snapshot_threads_.insert(tid_);
  }
  ~snapshot_thread() {
    absl::MutexLock lock(&s_.threads_mu_);
    s_.snapshot_threads_.erase(tid_);
  }
  snapshot_thread(const snapshot_thread&) = delete;
  snapshot_thread& operator=(const snapshot_thread&) = delete;

 private:
  store_persistence& s_;
  const pid_t tid_;
};

namespace {

// Cuts every partition: each answers with the changes since its last cut, taken between
// two of its requests, so every cut is point-in-time for its partition.
std::vector<table_cut> cut_partitions(caf::actor_system& system, const catalog_map& tables) {
  std::vector<table_cut> cuts;
  for (const auto& [name, rt] : tables) {
    if (rt->partitions.empty()) continue;
    table_cut c{rt, {}, {}};
    for (auto& r : ask_all<cut_reply>(system, *rt, [](std::uint32_t) { return cut_request{}; })) {
      c.deltas.push_back(r ? std::move(r->delta) : delta_handle{});  // a stopped partition: nothing
      c.cells.push_back(r ? r->cells : 0);
    }
    cuts.push_back(std::move(c));
  }
  return cuts;
}

}  // namespace

bool merge_into_base_now(std::uint64_t run_bytes, std::uint64_t delta_bytes, std::uint64_t base_bytes) {
  return static_cast<double>(run_bytes + delta_bytes) >= merge_fraction * static_cast<double>(base_bytes);
}

// One partition's changes to write, and how.
struct work_item {
  const table_cut* c;
  std::uint32_t partition;
  bool merge;
  std::uint64_t run_bytes;                                  // the partition's change runs before this snapshot
  std::uint64_t base_bytes;                                 // its base's records before this snapshot
  std::shared_ptr<const std::set<std::uint32_t>> families;  // of the schema now
};

namespace {

// The partitions of `cuts` with changes, each with how it is written; counts the changes
// into out.changes. `sizes`: each partition's change runs and base so far.
std::vector<work_item> plan_writes(const std::map<std::pair<std::uint64_t, std::uint32_t>, stored_bytes>& sizes,
                                   const std::vector<table_cut>& cuts, snapshot_stats& out) {
  std::vector<work_item> work;
  for (auto& c : cuts) {
    auto families = std::make_shared<std::set<std::uint32_t>>();
    for (const auto& f : c.rt->schema->families) families->insert(f.id);
    for (std::uint32_t i = 0; i < c.rt->partitions.size(); ++i) {
      const delta_handle& d = c.deltas[i];
      std::uint64_t bytes = d.map->arena_bytes();
      out.changes += d.map->size();
      for (const auto& l : d.loaded) {
        out.changes += l.before->size() + (l.cells ? l.cells->cells() : 0);
        bytes += l.before->arena_bytes() + (l.cells ? l.cells->records().size() : 0);
      }
      if (d.map->empty() && d.loaded.empty()) continue;
      stored_bytes now;
      if (auto it = sizes.find({c.rt->schema->uid, i}); it != sizes.end()) now = it->second;
      const bool merge = merge_into_base_now(now.runs, bytes, now.base);
      work.push_back({&c, i, merge, now.runs, now.base, families});
    }
  }
  return work;
}

// The changes of `w` merged into its base: its change runs, oldest first, then `delta` (its
// cut's) on top, written as one delta. Cells of families dropped since are left out (their ids
// are never used again). Adds the delta's bytes to `bytes`; updates base_bytes as
// wt_home::write_delta does.
status merge_into_base(wt_home& wt, const work_item& w, const delta_map& delta, std::uint64_t& bytes,
                       std::uint64_t& base_bytes) {
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
  for (const auto& [key, change] : delta) {
    if (change.present) {
      all.put(key, change.expires_at, change.value());
      bytes += std::string_view(key).size() + 8 + change.size;
    } else {
      all.erase(key);
    }
  }
  std::uint64_t ignored = 0;
  if (st = wt.write_delta(uid, w.partition, all, &ignored, &base_bytes); !st) return st;
  // In the same checkpoint as the merge: a crash before it keeps base and runs as they
  // were, after it finds the merged base and no runs.
  return wt.clear_changes(uid, w.partition);
}

}  // namespace

// The writing of a snapshot's changes: writer threads, each taking whole partitions
// (WiredTiger sessions are per thread; partitions are separate tables, so writers never
// contend on a page).
class snapshot_writers {
 public:
  snapshot_writers(store_persistence& s, std::vector<work_item> work, std::uint64_t generation)
      : s_(s), work_(std::move(work)), generation_(generation), new_sizes_(work_.size()) {}

  // Writes every item with up to `threads` writers (0: one per core); the first error.
  status run(std::size_t threads) {
    // One per core by default; all but the first only while nothing is being served.
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = std::min(threads, work_.size());
    std::vector<std::thread> all;
    for (std::size_t t = 0; t < threads; ++t) all.emplace_back([this, t] { writer(t > 0); });
    for (auto& t : all) t.join();
    absl::MutexLock lock(&error_mu_);
    return error_;
  }
  std::uint64_t written() const { return written_; }
  std::uint32_t writers() const { return writers_; }
  std::uint32_t merged() const { return merged_; }
  // After a successful run: (uid, partition) -> bytes of its change runs and base.
  std::vector<std::pair<std::pair<std::uint64_t, std::uint32_t>, stored_bytes>> sizes() const {
    std::vector<std::pair<std::pair<std::uint64_t, std::uint32_t>, stored_bytes>> out;
    for (std::size_t k = 0; k < work_.size(); ++k)
      out.push_back({{work_[k].c->rt->schema->uid, work_[k].partition}, new_sizes_[k]});
    return out;
  }

 private:
  // One partition's changes, written as plan_writes decided. A bulk load (a partition's
  // first snapshot) may be left in *pending, its file not yet synced (wt_home.h).
  status write_partition(std::size_t k, wt_home::pending_load_ptr* pending) {
    const auto& w = work_[k];
    const std::uint64_t uid = w.c->rt->schema->uid;
    const delta_handle& cut = w.c->deltas[w.partition];
    std::uint64_t b = 0;
    status st;
    stored_bytes& now = new_sizes_[k];
    now = {w.run_bytes, w.base_bytes};
    if (write_loaded(w, cut, &b, &now.base, pending, &st)) {
      ++merged_;
      written_ += b;
      return st;
    }
    // Bulk loads that cannot go straight into an empty base become one delta.
    delta_map materialized;
    if (!cut.loaded.empty()) materialized = materialize(cut.loaded, *cut.map);
    const delta_map& delta = cut.loaded.empty() ? *cut.map : materialized;
    if (!w.merge) {
      std::uint64_t run_bytes = 0;
      st = s_.wt_->write_changes(uid, w.partition, generation_, delta, &b, &run_bytes);
      now.runs += run_bytes;
    } else {
      ++merged_;
      now.runs = 0;
      st = w.run_bytes == 0 ? s_.wt_->write_delta(uid, w.partition, delta, &b, &now.base, pending)
                            : merge_into_base(*s_.wt_, w, delta, b, now.base);
    }
    written_ += b;
    return st;
  }

  // A partition whose cut is one bulk load and nothing else, into an empty base: its
  // cells go from their records into the base (wt_home::write_cells), of the families of
  // the schema now. Returns whether that was the case and done (then *st is its status).
  bool write_loaded(const work_item& w, const delta_handle& cut, std::uint64_t* bytes, std::uint64_t* base_bytes,
                    wt_home::pending_load_ptr* pending, status* st) {
    if (!w.merge || w.run_bytes != 0 || w.base_bytes != 0 || !cut.map->empty() || cut.loaded.size() != 1 ||
        !cut.loaded[0].before->empty() || !cut.loaded[0].cells)
      return false;
    const loaded_cells& cells = *cut.loaded[0].cells;
    const auto& families = *w.families;
    auto source = [&](const wt_home::cell_visitor& visit) {
      return visit_cells(
          cells, [&](std::uint32_t id) { return families.count(id) != 0; }, visit);
    };
    bool written = false;
    *st = s_.wt_->write_cells(w.c->rt->schema->uid, w.partition, source, bytes, base_bytes, pending, &written);
    return !st->is_ok() || written;
  }

  // The first writer always works. The others are helpers: they take a partition only
  // after `idle_windows` consecutive windows of 1 ms in which no data call came and none
  // was in flight at the end, so that a snapshot of a busy store costs its serving threads
  // one core at most, while one of an idle store uses them all.
  //
  // A writer finishes its last bulk load only after it has encoded the next partition:
  // the disk writes one file while the core encodes the next.
  void writer(bool helper) {
    constexpr int idle_windows = 3;
    snapshot_thread me(s_);
    bool wrote = false;
    wt_home::pending_load_ptr pending;
    for (;;) {
      if (helper && !wait_until_idle(*s_.activity_, idle_windows, std::chrono::milliseconds(1),
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
      if (pending) record(s_.wt_->finish_load(std::move(pending)));
      pending = std::move(load);
      // The deltas are kept until the checkpoint: a failed one can stop WiredTiger, which
      // is then reopened at the last snapshot without what was written here (wt_home.h).
    }
    if (pending) record(s_.wt_->finish_load(std::move(pending)));
  }
  void record(status s) {
    if (s) return;
    absl::MutexLock lock(&error_mu_);
    error_ = std::move(s);
  }

  store_persistence& s_;
  const std::vector<work_item> work_;
  const std::uint64_t generation_;
  std::vector<stored_bytes> new_sizes_;  // per item; each written by its writer only
  std::atomic<std::size_t> next_{0};
  std::atomic<std::uint64_t> written_{0};
  std::atomic<std::uint32_t> merged_{0};
  std::atomic<std::uint32_t> writers_{0};
  absl::Mutex error_mu_;
  status error_ ABSL_GUARDED_BY(error_mu_);
};

status store_persistence::finish_snapshot(std::vector<table_cut>& cuts, std::uint64_t generation) {
  // On a snapshot thread, at its priority: the purges of dropped families, the generation
  // recorded, the checkpoint that makes it all durable; then the deltas freed there (a few
  // arena blocks each: persist/delta_map.h).
  status finish;
  std::thread finisher([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {  // runs while the caller holds snapshot_mu_
    snapshot_thread me(*this);
    for (const auto& p : purges_)
      for (std::uint32_t i = 0; i < p.partitions; ++i)
        if (auto st = wt_->purge_family(p.uid, i, p.family); !st && st.code() != code::io_error) {
          finish = st;
          return;
        }
    if (auto st = wt_->set_meta("snapshot_gen", generation); !st) {
      finish = st;
      return;
    }
    finish = wt_->checkpoint();
    if (finish) {
      for (auto& c : cuts)
        for (auto& d : c.deltas) {
          if (d.map) d.map->clear();
          d.loaded.clear();  // unmaps the loads' files
        }
      releaser_.request();
    }
  });
  finisher.join();
  return finish;
}

result<snapshot_stats> store_persistence::snapshot(const catalog_source& catalog) {
  absl::MutexLock lock(&snapshot_mu_);
  return snapshot_locked(catalog, 0, nullptr);
}

result<snapshot_stats> store_persistence::snapshot_locked(const catalog_source& catalog, std::uint64_t uid,
                                                          std::vector<std::uint64_t>* cells) {
  // Asked for under the lock: a drop that finished before it is not in it (persistence.h).
  const std::shared_ptr<const catalog_map> tables = catalog();
  // A snapshot that failed earlier may have left WiredTiger stopped and not reopened.
  if (wt_->stopped())
    if (auto s = wt_->reopen(); !s) return status{code::io_error, "snapshot: " + s.message()};
  const auto t0 = clock_type::now();
  snapshot_stats out;
  out.generation = generation_ + 1;
  if (log_) {
    out.generation = std::max(out.generation, log_->generation() + 1);
    if (auto s = log_->rotate(out.generation); !s) return s;
  }
  auto cuts = cut_partitions(system_, *tables);
  out.cut_seconds = seconds_since(t0);
  if (cells)
    for (const auto& c : cuts)
      if (c.rt->schema->uid == uid) *cells = c.cells;

  // On failure every delta goes back to its partition, so the next snapshot writes it
  // again; the previous snapshot stays the recovery point. A failed sync stops WiredTiger
  // for good: it is reopened at that snapshot, here or by the next attempt.
  auto failed = [&](const status& why) ABSL_NO_THREAD_SAFETY_ANALYSIS -> status {
    for (auto& c : cuts)
      for (std::uint32_t i = 0; i < c.rt->partitions.size(); ++i)
        caf::anon_send(c.rt->partitions[i].actor, merge_delta_request{std::move(c.deltas[i])});
    if (!wt_->stopped()) return why;
    auto reopened = wt_->reopen();
    return status{code::io_error, "snapshot failed: " + why.message() + "; WiredTiger stopped" +
                                      (reopened ? " and was reopened at the last snapshot"
                                                : " and could not be reopened (" + reopened.message() + ")") +
                                      "; the next snapshot writes everything since"};
  };
  std::vector<work_item> work;
  {
    absl::MutexLock l(&sizes_mu_);
    work = plan_writes(sizes_, cuts, out);
  }
  snapshot_writers writers(*this, std::move(work), out.generation);
  const auto t_write = clock_type::now();
  if (auto s = writers.run(options_.snapshot_threads); !s) return failed(s);
  out.write_seconds = seconds_since(t_write);
  out.bytes = writers.written();
  out.writers = writers.writers();
  out.merged_partitions = writers.merged();

  const auto t_finish = clock_type::now();
  if (auto s = finish_snapshot(cuts, out.generation); !s) return failed(s);
  out.finish_seconds = seconds_since(t_finish);
  purges_.clear();
  {
    absl::MutexLock l(&sizes_mu_);
    for (const auto& [key, bytes] : writers.sizes()) sizes_[key] = bytes;
  }
  generation_ = out.generation;
  if (log_) {
    log_->remove_before(generation_);
    // Everything a failed log missed is in this snapshot: take writes again.
    log_->clear_failure(generation_);
  }
  out.seconds = seconds_since(t0);
  {
    absl::MutexLock l(&info_mu_);
    last_snapshot_ = out;
    last_snapshot_unix_ms_ =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    ++snapshots_taken_;
  }
  return out;
}

}  // namespace cellar::detail
