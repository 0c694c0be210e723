// scanner.cc: a scan over the partitions of one table group, merged in key order.
//
// Each partition the scan may touch has a cursor: a buffer of rows it served, whether it
// is exhausted, and where to continue (the last row it examined, exclusive). The scanner
// always knows the next row of every live cursor, so picking the smallest (largest when
// reversed) gives the global order. Empty buffers are refilled in parallel, one page per
// partition, before each pick. A page is a scan_request to the partition: read in place
// when the scan's caller allows it and the partition is free (as the dispatcher runs a
// batch, dispatch/dispatch.h), else sent to its actor.
#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <semaphore>

#include "cellar/store.h"
#include "model/filter_eval.h"
#include "model/validate.h"
#include "partition/ask.h"
#include "route/router.h"
#include "store/data_path.h"

namespace cellar {

namespace detail {

struct scan_state {
  struct cursor {
    std::uint32_t partition;
    std::deque<row_result> rows;
    bool exhausted = false;
    std::optional<std::string> from;
    bool from_inclusive = true;
    std::string filter_state;  // the partition's filter state after its last page
  };

  runtime_ptr rt;
  dispatch_context ctx;  // the caller's: where pages may be read
  scan spec;
  std::vector<cursor> cursors;
  std::int64_t rows_out = 0;
  std::int64_t limit = -1;        // rows for the whole scan: scan::limit and a PageFilter's
  std::deque<row_result> pieces;  // the rest of a row split by batch / size

  // Where a filter ended the scan (scan_page::filter_done): no row after `end` in scan
  // direction belongs to it, from any partition; `end_before_all`: no row at all does.
  // The earliest end any partition reports holds.
  std::optional<std::string> end;
  bool end_before_all = false;

  bool beyond_end(const std::string& row) const {
    if (end_before_all) return true;
    if (!end) return false;
    return spec.reversed_ ? row < *end : row > *end;
  }
  void end_at(const cursor& c, const scan_page& page) {
    if (page.examined_any) {
      if (!beyond_end(page.last_row)) end = page.last_row;
    } else if (c.from) {
      // Nothing examined after `from`: the end is there (rows equal to it were taken
      // already or are excluded, as it lives in this partition only).
      if (!beyond_end(*c.from)) end = *c.from;
    } else {
      end_before_all = true;
    }
  }
  // Drops what lies beyond the end: buffered rows, and cursors that could only serve such.
  void apply_end() {
    if (!end && !end_before_all) return;
    for (auto& c : cursors) {
      while (!c.rows.empty() && beyond_end(c.rows.back().row)) c.rows.pop_back();
      if (c.rows.empty() && c.from && beyond_end(*c.from)) c.exhausted = true;
      if (end_before_all) c.exhausted = true;
    }
  }

  // RANGE partitions hold disjoint key ranges in cursor order: only the first live one
  // (in scan direction) can hold the next row, so only it is fetched. Hash partitions
  // interleave: every empty live cursor is fetched at once.
  bool ordered = false;
  bool first_round = true;

  // Whether a live cursor that could hold the next row has no buffered rows.
  bool needs_refill() const {
    for (const auto& c : cursors) {
      if (c.rows.empty() && !c.exhausted) return true;
      if (ordered && !c.exhausted) return false;  // later range cursors wait their turn
    }
    return false;
  }

  // The cursor holding the next row in global order, or null at the end.
  cursor* best_cursor() {
    cursor* best = nullptr;
    for (auto& c : cursors) {
      if (c.rows.empty()) continue;
      if (!best ||
          (spec.reversed_ ? c.rows.front().row > best->rows.front().row : c.rows.front().row < best->rows.front().row))
        best = &c;
    }
    return best;
  }

  // One request for up to `n` results, carried through page fetches. It runs on the
  // caller's thread until it needs pages from actors, then on the worker thread of the
  // partition that answers last. Only one thread touches the scan at a time: the one
  // running `step`, or, while pages are out, the page answers under `mu`.
  struct fetch : std::enable_shared_from_this<fetch> {
    scan_state& st;
    std::size_t n;
    std::vector<row_result> out;
    std::function<void(result<std::vector<row_result>>)> done;
    std::mutex mu;
    std::uint32_t pending = 0;
    status error;

    fetch(scan_state& s, std::size_t count, std::function<void(result<std::vector<row_result>>)> d)
        : st(s), n(count), done(std::move(d)) {}

    void step() {
      for (;;) {
        if (out.size() >= n) break;
        if (!st.pieces.empty()) {
          out.push_back(std::move(st.pieces.front()));
          st.pieces.pop_front();
          continue;
        }
        if (st.limit >= 0 && st.rows_out >= st.limit) break;
        st.apply_end();
        if (st.needs_refill()) {
          if (!request_pages()) return;  // out at the partitions: absorb() goes on
          if (!error) break;             // read in place, and failed
          continue;                      // read in place: go on here
        }
        cursor* best = st.best_cursor();
        if (best == nullptr) break;
        if (st.beyond_end(best->rows.front().row)) break;
        row_result r = std::move(best->rows.front());
        best->rows.pop_front();
        ++st.rows_out;
        st.split(std::move(r));
      }
      if (!error) {
        finish(error);
        return;
      }
      finish(std::move(out));
    }

    void finish(result<std::vector<row_result>> r) {
      auto d = std::move(done);
      d(std::move(r));
    }

    // Asks every empty live cursor (range: the first live one) for one page, in parallel:
    // in place where it may, from the partitions' actors otherwise. Returns true if every
    // page was read here (nothing is then pending).
    bool request_pages() {
      std::vector<std::pair<cursor*, scan_request>> out_there;
      bool blocked = false;  // an earlier range cursor still holds rows or is live
      for (auto& c : st.cursors) {
        if (st.ordered && blocked) break;
        if (st.ordered && !c.exhausted) blocked = true;
        if (!c.rows.empty() || c.exhausted) continue;
        scan_request req{st.rt->schema->version, {}};
        auto& rq = req.page;
        rq.from = c.from;
        rq.from_inclusive = c.from_inclusive;
        rq.stop = st.spec.stop;
        rq.stop_inclusive = st.spec.stop_inclusive;
        rq.reversed = st.spec.reversed_;
        rq.options = st.spec.options;
        rq.filter_state = c.filter_state;
        std::int64_t want = st.spec.caching_;
        if (st.limit >= 0) {
          std::int64_t left = std::max<std::int64_t>(1, st.limit - st.rows_out);
          // Hash partitions each hold about 1/n of the rows: the first round asks each for
          // its share and some slack instead of the whole limit; refills ask for the rest.
          if (!st.ordered && st.first_round && st.cursors.size() > 1)
            left = std::min<std::int64_t>(left, left / static_cast<std::int64_t>(st.cursors.size()) * 3 / 2 + 8);
          want = std::min(want, left);
        }
        rq.max_rows = static_cast<std::size_t>(want);
        const auto& ref = st.rt->partitions[c.partition];
        scan_reply page;
        if (st.ctx.in_place && ref.local && st.ctx.order->may_run_now(ref.id, false) &&
            ref.local->try_scan(req, page)) {
          st.ctx.stats->in_place.fetch_add(1, std::memory_order_relaxed);
          if (!page.st) {
            error = page.st;
            return true;
          }
          st.take_page(c, page.page);
          continue;
        }
        out_there.emplace_back(&c, std::move(req));
      }
      st.first_round = false;
      if (out_there.empty()) return true;
      pending = static_cast<std::uint32_t>(out_there.size());
      // From the first send on, the answers may run concurrently: touch nothing of the
      // scan after.
      auto ctx = st.ctx;
      auto rt = st.rt;
      for (auto& [c, req] : out_there) {
        const auto& ref = rt->partitions[c->partition];
        ctx.order->enter(ref.id, false);
        ctx.stats->queued.fetch_add(1, std::memory_order_relaxed);
        ctx.stats->in_flight.fetch_add(1, std::memory_order_relaxed);
        ask<scan_reply>(*ctx.system, ref.actor, std::move(req),
                        [self = shared_from_this(), c = c, order = ctx.order, stats = ctx.stats,
                         id = ref.id](result<scan_reply> r) {
                          order->leave(id, false);
                          stats->in_flight.fetch_sub(1, std::memory_order_relaxed);
                          if (!r) {
                            scan_reply failed;
                            failed.st = r.error();
                            self->absorb(*c, failed);
                          } else {
                            self->absorb(*c, *r);
                          }
                        });
      }
      return false;
    }

    // A page arrived (or its partition stopped): buffer its rows; the last answer goes on.
    void absorb(cursor& c, scan_reply& page) {
      {
        std::lock_guard l(mu);
        if (!page.st)
          error = page.st;
        else
          st.take_page(c, page.page);
        if (--pending != 0) return;
      }
      if (!error) {
        finish(error);
        return;
      }
      step();
    }
  };

  // Buffers a page's rows in its cursor and moves the cursor on; a page on which the
  // filter ended the scan sets the scan's end.
  void take_page(cursor& c, scan_page& page) {
    for (auto& r : page.rows) c.rows.push_back(std::move(r));
    c.filter_state = std::move(page.filter_state);
    if (page.filter_done) end_at(c, page);
    if (page.exhausted) {
      c.exhausted = true;
    } else if (page.examined_any) {
      c.from = page.last_row;
      c.from_inclusive = false;
    }
  }

  // Splits a row into results per `batch` (R31) or, with partial results allowed, per
  // `max_result_size` (R32).
  void split(row_result row) {
    const bool by_count = spec.batch_ > 0;
    const bool by_size = !by_count && spec.allow_partial_ && spec.max_result_size_ > 0;
    if (!by_count && !by_size) {
      pieces.push_back(std::move(row));
      return;
    }
    row_result cur;
    std::int64_t size = 0;
    auto flush = [&] {
      cur.row = row.row;
      cur.exists = true;
      cur.partial = true;
      pieces.push_back(std::move(cur));
      cur = row_result{};
      size = 0;
    };
    for (auto& c : row.cells) {
      size += static_cast<std::int64_t>(c.row.size() + c.family.size() + c.qualifier.size() + c.value.size() + 8);
      cur.cells.push_back(std::move(c));
      if (by_count ? static_cast<std::int64_t>(cur.cells.size()) >= spec.batch_ : size >= spec.max_result_size_)
        flush();
    }
    if (!cur.cells.empty()) flush();
    if (!pieces.empty()) pieces.back().partial = false;
  }
};

}  // namespace detail

using namespace detail;

namespace detail {

// The partitions of `rt` a scan over [low, high] visits (none when `empty`), limited to
// `scope`'s; errors: INVALID_ARGUMENT for a partition `rt` does not have, NOT_OWNER
// (no_forward) for one this cluster member does not own.
result<std::vector<std::uint32_t>> data_path::scan_partitions(const table_runtime& rt, std::string_view low,
                                                              std::string_view high, bool empty,
                                                              const scan_scope& scope) {
  const auto count = rt.schema->partitioning.count();
  std::vector<bool> named(count, scope.partitions.empty());
  for (auto p : scope.partitions) {
    if (p >= count)
      return status{code::invalid_argument, "table '" + rt.schema->name + "' has no partition " + std::to_string(p) +
                                                " (it has " + std::to_string(count) + ")"};
    named[p] = true;
  }
  std::vector<std::uint32_t> out;
  if (rt.partitions.empty() || empty) return out;  // no family yet, or an empty interval
  for (auto p : partitions_for_range(rt.schema->partitioning, low, high))
    if (p < named.size() && named[p]) out.push_back(p);
  if (!scope.no_forward || !cluster_.member()) return out;
  auto hooks = cluster_.hooks();
  if (!hooks) return out;
  // One NOT_OWNER per partition another node owns (each is counted); the first answers.
  std::optional<status> refused;
  std::size_t more = 0;
  for (auto p : out) {
    if (p >= rt.partitions.size() || rt.partitions[p].local || rt.partitions[p].replica_here) continue;
    auto s = hooks->not_owner(rt.schema->name, p);
    if (!refused)
      refused = std::move(s);
    else
      ++more;
  }
  if (!refused) return out;
  if (more == 0) return *refused;
  return status{code::not_owner,
                refused->message() + " (and " + std::to_string(more) + " more partitions of the scan)"};
}

result<scanner> data_path::open_scan(std::string_view table, const cellar::scan& s,
                                     const std::shared_ptr<call_order>& order, const scan_scope& scope) {
  stats_->note();
  if (auto st = cluster_.ready(); !st) return st;
  auto rt = lookup_current(table);
  if (!rt) return missing(table);
  if (rt->schema->disabled) return table_disabled_error(table);
  if (auto st = validate(*rt->schema, s); !st) return st;
  auto state = std::make_unique<scan_state>();
  state->rt = rt;
  state->ctx = context(order, true);
  state->spec = s;
  state->limit = s.limit_;
  if (s.options.filter)
    if (auto page_limit = filter_row_limit(*s.options.filter))
      state->limit = state->limit < 0 ? *page_limit : std::min(state->limit, *page_limit);
  const std::string& low = s.reversed_ ? s.stop : s.start;
  const std::string& high = s.reversed_ ? s.start : s.stop;
  state->ordered = rt->schema->partitioning.how == partition_spec::method::range;
  // An empty interval (start past stop in scan direction) visits no partition.
  bool empty = false;
  if (!s.start.empty() && !s.stop.empty()) {
    const int c = s.start.compare(s.stop);
    empty = s.reversed_ ? c < 0 : c > 0;
  }
  auto visit = scan_partitions(*rt, low, high, empty, scope);
  if (!visit) return visit.error();
  for (auto p : visit.value()) {
    scan_state::cursor c;
    c.partition = p;
    if (!s.start.empty()) {
      c.from = s.start;
      c.from_inclusive = s.start_inclusive;
    }
    state->cursors.push_back(std::move(c));
  }
  // A reversed scan of range partitions visits them from the highest.
  if (state->ordered && s.reversed_) std::reverse(state->cursors.begin(), state->cursors.end());
  return scanner(std::move(state));
}

}  // namespace detail

scanner::scanner(std::unique_ptr<scan_state> st) : st_(std::move(st)) {}
scanner::scanner(scanner&&) noexcept = default;
scanner& scanner::operator=(scanner&&) noexcept = default;
scanner::~scanner() = default;

void scanner::next_async(std::size_t n, std::function<void(result<std::vector<row_result>>)> done) {
  std::make_shared<scan_state::fetch>(*st_, n, std::move(done))->step();
}

std::optional<scan_end> scanner::filter_end() const {
  if (st_->end_before_all) return scan_end{{}, true};
  if (st_->end) return scan_end{*st_->end, false};
  return std::nullopt;
}

bool scanner::finished() const {
  if (!st_->pieces.empty()) return false;
  if (st_->limit >= 0 && st_->rows_out >= st_->limit) return true;
  for (const auto& c : st_->cursors)
    if (!c.rows.empty() || !c.exhausted) return false;
  return true;
}

result<std::vector<row_result>> scanner::next(std::size_t n) {
  // Rows already buffered need no other thread.
  if (st_->pieces.size() >= n) {
    std::vector<row_result> out;
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(std::move(st_->pieces.front()));
      st_->pieces.pop_front();
    }
    return out;
  }
  struct box {
    std::binary_semaphore ready{0};
    std::optional<result<std::vector<row_result>>> r;
  };
  auto b = std::make_shared<box>();
  next_async(n, [b](result<std::vector<row_result>> r) {
    b->r.emplace(std::move(r));
    b->ready.release();
  });
  b->ready.acquire();
  return std::move(*b->r);
}

result<std::optional<row_result>> scanner::next() {
  auto r = next(1);
  if (!r) return r.error();
  if (r->empty()) return std::optional<row_result>{};
  return std::optional<row_result>{std::move(r->front())};
}

result<std::vector<row_result>> scanner::all() { return next(static_cast<std::size_t>(-1)); }

}  // namespace cellar
