#include "partition/partition.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>

namespace cellar::detail {

namespace {

// Whether the actions need a unit (begin/commit) to be undone together: more than one, or
// one that does more than a single put or get.
bool needs_unit(const std::vector<batch_op>& ops) {
  if (ops.size() > 1) return true;
  const auto& op = ops.front();
  return !(std::holds_alternative<get>(op) || std::holds_alternative<put>(op));
}

op_result run_one(memtable& mem, const table_schema& schema, const batch_op& op, std::int64_t now) {
  op_result r;
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, get>) {
          r.row = mem.read_row(schema, o.row, o.options, o.exists_only_, now);
        } else if constexpr (std::is_same_v<T, increment> || std::is_same_v<T, append>) {
          auto res = mem.apply(schema, o, now);
          if (res)
            r.row = std::move(res.value());
          else
            r.st = res.error();
        } else if constexpr (std::is_same_v<T, check_and_mutate>) {
          auto res = mem.apply(schema, o, now);
          if (res)
            r.processed = res.value();
          else
            r.st = res.error();
        } else {
          r.st = mem.apply(schema, o, now);
        }
      },
      op);
  return r;
}

bool reads_only(const std::vector<batch_op>& ops) {
  for (const auto& op : ops)
    if (!std::holds_alternative<get>(op)) return false;
  return true;
}

// Tries `take` for a few microseconds before giving up. A partition is held for one
// request at a time (a few microseconds for a row or two), while going through the actor
// costs a thread hand-off. Bounded, so a holder that was preempted costs the caller at most
// the budget (32 tries, 8 pause instructions apart).
template <class Take>
bool try_briefly(Take take) {
  for (int attempt = 0; attempt < 32; ++attempt) {
    if (take()) return true;
#if defined(__x86_64__) || defined(__i386__)
    for (int i = 0; i < 8; ++i) __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  return false;
}

}  // namespace

void fail_all(std::vector<op_result>& results, const status& why) {
  for (auto& r : results) r = op_result{why, {}, false};
}

bool run_actions(memtable& mem, const table_schema& schema, std::vector<batch_op>& ops, std::vector<op_result>& results,
                 std::int64_t now) {
  results.resize(ops.size());
  if (ops.empty()) return true;
  const bool unit = needs_unit(ops);
  if (unit) mem.begin();
  std::size_t failed = ops.size();
  for (std::size_t k = 0; k < ops.size(); ++k) {
    results[k] = run_one(mem, schema, ops[k], now);
    if (!results[k].st.is_ok()) {
      failed = k;
      break;
    }
  }
  if (failed == ops.size()) {
    if (unit) mem.commit();
    return true;
  }
  if (unit) mem.rollback();
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (k == failed) continue;
    results[k] = op_result{};
    results[k].st = {code::aborted, "not applied: action #" + std::to_string(failed) +
                                        " of the same partition failed (" + results[failed].st.to_string() + ")"};
  }
  return false;
}

// --- partition ---------------------------------------------------------------------------

partition::partition(partition_config cfg) : cfg_(std::move(cfg)) {
  if (cfg_.recovered && *cfg_.recovered)
    mem_ = std::move(*cfg_.recovered);
  else
    mem_ = std::make_unique<memtable>(cfg_.memory);
  cfg_.recovered.reset();
  mem_->track(cfg_.track_delta, cfg_.log.enabled());
}

bool partition::stale(std::uint64_t version, std::size_t n, batch_reply& out) const {
  if (version <= schema_version() && cfg_.schema) return false;
  out.results.assign(n, op_result{});
  for (auto& r : out.results)
    r.st = {code::unavailable, "partition " + std::to_string(cfg_.index) + " has not yet adopted schema version " +
                                   std::to_string(version)};
  return true;
}

bool partition::run(batch_request& r, batch_reply& out, log_stream::durable_fn durable) {
  if (stale(r.schema_version, r.ops.size(), out)) return false;
  if (cfg_.log.failed() && !reads_only(r.ops)) {
    out.results.resize(r.ops.size());
    fail_all(out.results, cfg_.log.health());
    return false;
  }
  run_actions(*mem_, *cfg_.schema, r.ops, out.results, cfg_.clock());
  bool appended = false;
  if (auto st = cfg_.log.append(*mem_, std::move(durable), &appended); !st) {
    fail_all(out.results, st);
    return false;
  }
  return appended && cfg_.log.acknowledges_after_log();
}

void partition::read(const batch_request& r, batch_reply& out) const {
  if (stale(r.schema_version, r.ops.size(), out)) return;
  const auto now = cfg_.clock();
  out.results.resize(r.ops.size());
  for (std::size_t k = 0; k < r.ops.size(); ++k) {
    const auto& g = std::get<get>(r.ops[k]);
    out.results[k].row = mem_->read_row(*cfg_.schema, g.row, g.options, g.exists_only_, now);
  }
}

void partition::read_into(const std::vector<batch_op>& ops, const std::uint32_t* indices, std::size_t n,
                          std::vector<op_result>& results) const {
  const auto now = cfg_.clock();
  for (std::size_t k = 0; k < n; ++k) {
    const auto& g = std::get<get>(ops[indices[k]]);
    results[indices[k]].row = mem_->read_row(*cfg_.schema, g.row, g.options, g.exists_only_, now);
  }
}

bool partition::read_views(const get& g, std::vector<read_cell_view>& out) const {
  return mem_->read_row_views(*cfg_.schema, g.row, g.options, cfg_.clock(), out);
}

scan_reply partition::scan(const scan_request& r) const {
  scan_reply out;
  if (r.schema_version > schema_version() || !cfg_.schema) {
    out.st = {code::unavailable, "partition " + std::to_string(cfg_.index) + " has not yet adopted schema version " +
                                     std::to_string(r.schema_version)};
    return out;
  }
  out.page = mem_->scan(*cfg_.schema, r.page, cfg_.clock());
  return out;
}

void partition::adopt(table_schema s) {
  if (!cfg_.schema || s.version > cfg_.schema->version)
    cfg_.schema = std::make_shared<const table_schema>(std::move(s));
}

void partition::drop_families(const std::vector<std::uint32_t>& ids) {
  for (auto id : ids) mem_->drop_family(id);
}

std::uint64_t partition::reclaim_all() {
  if (!cfg_.schema) return 0;
  mem_->restart_reclaim();
  const auto n = mem_->reclaim(*cfg_.schema, cfg_.clock(), static_cast<std::size_t>(-1));
  // Reclamation is redone after a restart if its record is lost.
  (void)cfg_.log.append(*mem_, nullptr);
  return n;
}

void partition::reclaim_slice() {
  if (!cfg_.schema) return;
  mem_->reclaim(*cfg_.schema, cfg_.clock(), cfg_.maintenance_slice);
  (void)cfg_.log.append(*mem_, nullptr);
}

delta_handle partition::cut() {
  delta_handle d;
  *d.map = mem_->take_delta();
  d.loaded = mem_->take_loaded();
  return d;
}

void partition::merge(delta_handle older) {
  mem_->merge_delta(older.map ? std::move(*older.map) : delta_map(), std::move(older.loaded));
}

move_reply partition::move(move_request& r) {
  move_reply out;
  switch (r.what) {
    case move_request::track: mem_->start_move_delta(); break;
    case move_request::chunk:
      out.done = mem_->copy_cells(r.after, std::max<std::uint64_t>(r.max_bytes, 1), *out.cells.map, out.last);
      break;
    case move_request::records:
      out.records.reserve(r.max_bytes + r.max_bytes / 8);
      out.done = mem_->copy_records(r.after, std::max<std::uint64_t>(r.max_bytes, 1), out.records, out.last);
      break;
    case move_request::cut:
    case move_request::freeze:
      if (!mem_->tracking_move()) {
        out.st = {code::aborted, "partition " + std::to_string(cfg_.index) + " is not being moved (no move delta)"};
        break;
      }
      *out.cells.map = mem_->take_move_delta();
      if (r.what == move_request::freeze) frozen_ = true;
      break;
    case move_request::abort:
      mem_->stop_move_delta();
      frozen_ = false;
      break;
    case move_request::apply:
      if (r.cells.map) mem_->apply_cells(*r.cells.map);
      break;
    case move_request::load: mem_->load_cells(std::move(r.loaded.cells)); break;
    default: out.st = {code::invalid_argument, "unknown move step " + std::to_string(r.what)};
  }
  return out;
}

// --- local_partition ----------------------------------------------------------------------

local_partition::outcome local_partition::try_run(batch_request& r, batch_reply& out,
                                                  const log_stream::durable_fn& durable) {
  if (reads_only(r.ops)) {
    std::shared_lock<rw_lock> lock(mu_, std::defer_lock);
    if (!try_briefly([&] { return lock.try_lock(); }) || core_ == nullptr) return outcome::declined;
    if (r.schema_version > core_->schema_version()) return outcome::declined;
    core_->read(r, out);
    return outcome::done;
  }
  std::unique_lock<rw_lock> lock(mu_, std::defer_lock);
  if (!try_briefly([&] { return lock.try_lock(); }) || core_ == nullptr) return outcome::declined;
  if (r.schema_version > core_->schema_version() || core_->frozen()) return outcome::declined;
  return core_->run(r, out, durable) ? outcome::after_sync : outcome::done;
}

bool local_partition::try_read_into(std::uint64_t schema_version, const std::vector<batch_op>& ops,
                                    const std::uint32_t* indices, std::size_t n, std::vector<op_result>& results) {
  std::shared_lock<rw_lock> lock(mu_, std::defer_lock);
  if (!try_briefly([&] { return lock.try_lock(); }) || core_ == nullptr) return false;
  if (schema_version > core_->schema_version() || !core_->config().schema) return false;
  core_->read_into(ops, indices, n, results);
  return true;
}

bool local_partition::try_read_views(std::uint64_t schema_version, const get& g, std::vector<read_cell_view>& scratch,
                                     views_fn use, void* arg) {
  std::shared_lock<rw_lock> lock(mu_, std::defer_lock);
  if (!try_briefly([&] { return lock.try_lock(); }) || core_ == nullptr) return false;
  if (schema_version > core_->schema_version() || !core_->config().schema) return false;
  scratch.clear();
  const bool exists = core_->read_views(g, scratch);
  use(arg, exists, scratch);
  return true;
}

void local_partition::prefetch_row(std::string_view row, cell_map::prefetch_step step) {
  std::shared_lock<rw_lock> lock(mu_, std::try_to_lock);
  if (lock.owns_lock() && core_ != nullptr) core_->prefetch_row(row, step);
}

bool local_partition::try_scan(const scan_request& r, scan_reply& out) {
  std::shared_lock<rw_lock> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || core_ == nullptr || r.schema_version > core_->schema_version()) return false;
  out = core_->scan(r);
  return true;
}

// --- the actor ------------------------------------------------------------------------------

// The actor that owns a partition. It holds the local path's lock exclusively while it
// handles a request, so in-place callers only ever see the partition between requests.
class partition_owner final : public partition_actor::base {
 public:
  partition_owner(caf::actor_config& cfg, partition_config pc, std::shared_ptr<local_partition> local)
      : partition_actor::base(cfg), core_(std::move(pc)), local_(std::move(local)) {
    if (local_) {
      std::lock_guard l(local_->mu_);
      local_->core_ = &core_;
    }
  }

  ~partition_owner() override { detach_local(); }

  const char* name() const override { return "cellar.partition"; }

  void on_exit() override { detach_local(); }

  behavior_type make_behavior() override {
    if (core_.config().maintenance_interval.count() > 0)
      delayed_send(this, core_.config().maintenance_interval, tick_atom::value);
    return {
        [this](batch_request& r) -> caf::result<batch_reply> {
          if (stop_) return stopped(r.ops.size());
          if (handed_) return delegate(handed_, std::move(r));
          if (core_.frozen() && (!held_.empty() || !reads_only(r.ops))) {
            // Frozen by a move: held in order until the move ends either way.
            auto rp = make_response_promise<batch_reply>();
            held_.push_back({std::move(r), rp, {}, {}});
            return rp;
          }
          return run_batch(r);
        },
        [this](scan_request& r) -> caf::result<scan_reply> {
          if (stop_) return scan_reply{stopped_status(), {}};
          if (handed_) return delegate(handed_, std::move(r));
          if (core_.frozen() && !held_.empty()) {
            auto rp = make_response_promise<scan_reply>();
            held_.push_back({{}, {}, std::move(r), rp});
            return rp;
          }
          auto lock = hold();
          return core_.scan(r);
        },
        [this](move_request& r) -> move_reply {
          move_reply out;
          {
            auto lock = hold();
            out = core_.move(r);
          }
          if (r.what == move_request::abort) release_held();
          return out;
        },
        [this](handoff_request& r) -> admin_reply {
          // The partition now lives elsewhere: the in-place path declines, and what was
          // held and what comes later goes on to the new owner, in order.
          detach_local();
          handed_ = caf::actor_cast<partition_actor>(r.to);
          auto held = std::move(held_);
          held_.clear();
          for (auto& h : held) {
            if (h.batch)
              h.batch_rp.delegate(handed_, std::move(*h.batch));
            else
              h.scan_rp.delegate(handed_, std::move(*h.scan));
          }
          return {};
        },
        [this](adopt_schema_request& r) -> admin_reply {
          auto lock = hold();
          core_.adopt(std::move(r.schema));
          return {};
        },
        [this](drop_families_request& r) -> admin_reply {
          auto lock = hold();
          core_.drop_families(r.family_ids);
          return {};
        },
        [this](reclaim_request&) -> reclaim_reply {
          auto lock = hold();
          return {core_.reclaim_all()};
        },
        [this](stats_request&) -> stats_reply {
          auto lock = hold();
          return {core_.stats()};
        },
        [this](cut_request&) -> cut_reply {
          auto lock = hold();
          return {core_.cut(), core_.stats().cells};
        },
        [this](merge_delta_request& r) -> admin_reply {
          auto lock = hold();
          core_.merge(std::move(r.delta));
          return {};
        },
        [this](stop_request&) -> caf::result<admin_reply> {
          detach_local();
          for (auto& h : held_) {
            if (h.batch)
              h.batch_rp.deliver(stopped(h.batch->ops.size()));
            else
              h.scan_rp.deliver(scan_reply{stopped_status(), {}});
          }
          held_.clear();
          if (waiting_.empty()) {
            quit();
            return admin_reply{};
          }
          // Replies still waiting for the log go first; then the stop is answered. Requests
          // that arrive meanwhile are refused.
          stop_ = make_response_promise<admin_reply>();
          return *stop_;
        },
        [this](tick_atom) {
          {
            auto lock = hold();
            core_.reclaim_slice();
          }
          delayed_send(this, core_.config().maintenance_interval, tick_atom::value);
        },
        [this](log_synced_atom) {
          sync_->notify_pending.store(false);
          const auto synced = sync_->synced.load();
          while (!waiting_.empty() && waiting_.front().seq <= synced) {
            if (auto why = sync_->failure_of(waiting_.front().seq)) fail_all(waiting_.front().reply.results, *why);
            waiting_.front().rp.deliver(std::move(waiting_.front().reply));
            waiting_.pop_front();
          }
          if (waiting_.empty() && stop_) {
            stop_->deliver(admin_reply{});
            stop_.reset();
            quit();
          }
        },
    };
  }

 private:
  struct sync_state {
    std::atomic<std::uint64_t> synced{0};  // logged records of this partition settled
    std::atomic<bool> notify_pending{false};
    std::mutex mu;
    std::map<std::uint64_t, status> failures;  // records the log failed to make durable

    // The failure of record `seq`, taken out, if it had one.
    std::optional<status> failure_of(std::uint64_t seq) {
      std::lock_guard l(mu);
      auto it = failures.find(seq);
      if (it == failures.end()) return std::nullopt;
      auto st = std::move(it->second);
      failures.erase(it);
      return st;
    }
  };
  struct waiting_reply {
    std::uint64_t seq;
    caf::typed_response_promise<batch_reply> rp;
    batch_reply reply;
  };

  // Runs a batch now (the actor's usual path).
  caf::result<batch_reply> run_batch(batch_request& r) {
    batch_reply out;
    auto lock = hold();
    if (!core_.run(r, out, durable_callback())) return out;
    // Logged: answered once the record is in the log (log_synced_atom).
    auto rp = make_response_promise<batch_reply>();
    waiting_.push_back({logged_, rp, std::move(out)});
    return rp;
  }

  // A move was aborted: what a freeze held runs now, in order.
  void release_held() {
    auto held = std::move(held_);
    held_.clear();
    for (auto& h : held) {
      if (h.scan) {
        auto lock = hold();
        h.scan_rp.deliver(core_.scan(*h.scan));
        continue;
      }
      batch_reply out;
      auto lock = hold();
      if (!core_.run(*h.batch, out, durable_callback())) {
        h.batch_rp.deliver(std::move(out));
        continue;
      }
      waiting_.push_back({logged_, h.batch_rp, std::move(out)});
    }
  }

  // A partition frozen by a split, merge or move stops once it is replaced: what reaches
  // it then was not applied and belongs to its successor, so it is sent again.
  status stopped_status() const {
    if (core_.frozen())
      return {code::reshaping, "the partition was frozen by a split, merge or move and has stopped: send it again"};
    return {code::unavailable, "the partition is stopping"};
  }
  batch_reply stopped(std::size_t n) const {
    batch_reply out;
    out.results.resize(n);
    for (auto& r : out.results) r.st = stopped_status();
    return out;
  }

  std::unique_lock<rw_lock> hold() {
    return local_ ? std::unique_lock<rw_lock>(local_->mu_) : std::unique_lock<rw_lock>();
  }

  void detach_local() {
    if (!local_) return;
    std::lock_guard l(local_->mu_);
    local_->core_ = nullptr;
  }

  // For the next logged record: marks it settled (written; in log-sync, on disk) and,
  // unless a notice is already on its way, tells this actor (from the log's writer thread).
  log_stream::durable_fn durable_callback() {
    if (!core_.config().log.acknowledges_after_log()) return nullptr;
    const auto seq = ++logged_;
    return [sync = sync_, seq, self = caf::actor_cast<partition_actor>(this)](const status& st) {
      if (!st) {
        std::lock_guard l(sync->mu);
        sync->failures.emplace(seq, st);
      }
      auto prev = sync->synced.load();
      while (prev < seq && !sync->synced.compare_exchange_weak(prev, seq)) {}
      if (!sync->notify_pending.exchange(true)) caf::anon_send(self, log_synced_atom::value);
    };
  }

  partition core_;
  std::shared_ptr<local_partition> local_;
  std::shared_ptr<sync_state> sync_ = std::make_shared<sync_state>();
  std::uint64_t logged_ = 0;
  std::deque<waiting_reply> waiting_;
  std::optional<caf::typed_response_promise<admin_reply>> stop_;
  // A request held while a move froze the partition (one of the two is set).
  struct held_request {
    std::optional<batch_request> batch;
    caf::typed_response_promise<batch_reply> batch_rp;
    std::optional<scan_request> scan;
    caf::typed_response_promise<scan_reply> scan_rp;
  };
  std::deque<held_request> held_;
  partition_actor handed_;  // set by a handoff: the new owner's forwarder
};

partition_actor spawn_partition(caf::actor_system& sys, partition_config cfg, std::shared_ptr<local_partition> local) {
  return sys.spawn<partition_owner>(std::move(cfg), std::move(local));
}

}  // namespace cellar::detail
