// scanner.cc: a scan over the partitions of one table group, merged in key order.
//
// Each partition the scan may touch has a cursor: a buffer of rows it served, whether it
// is exhausted, and where to continue (the last row it examined, exclusive). The scanner
// always knows the next row of every live cursor, so picking the smallest (largest when
// reversed) gives the global order. Empty buffers are refilled in parallel, one page per
// partition, before each pick.
#include <algorithm>
#include <deque>

#include "cellar/store.h"
#include "model/validate.h"
#include "route/router.h"
#include "store_impl.h"

namespace cellar {

namespace detail {

struct scan_state {
  struct cursor {
    std::uint32_t partition;
    std::deque<row_result> rows;
    bool exhausted = false;
    std::optional<std::string> from;
    bool from_inclusive = true;
  };

  runtime_ptr rt;
  scan spec;
  std::vector<cursor> cursors;
  std::int64_t rows_out = 0;
  std::deque<row_result> pieces;  // the rest of a row split by batch / size

  // RANGE partitions hold disjoint key ranges in cursor order: only the first live one
  // (in scan direction) can hold the next row, so only it is fetched. Hash partitions
  // interleave: every empty live cursor is fetched at once.
  bool ordered = false;
  bool first_round = true;

  // Fills the empty live cursors with one page each, in parallel.
  status refill() {
    std::vector<std::pair<cursor*, scan_part_ptr>> inflight;
    bool blocked = false;  // an earlier range cursor still holds rows or is live
    for (auto& c : cursors) {
      if (ordered && blocked) break;
      if (ordered && !c.exhausted) blocked = true;
      if (!c.rows.empty() || c.exhausted) continue;
      auto part = std::make_shared<scan_part>();
      part->schema = rt->schema;
      auto& rq = part->request;
      rq.from = c.from;
      rq.from_inclusive = c.from_inclusive;
      rq.stop = spec.stop;
      rq.stop_inclusive = spec.stop_inclusive;
      rq.reversed = spec.reversed_;
      rq.options = spec.options;
      std::int64_t want = spec.caching_;
      if (spec.limit_ >= 0) {
        std::int64_t left = std::max<std::int64_t>(1, spec.limit_ - rows_out);
        // Hash partitions each hold about 1/n of the rows: the first round asks each for
        // its share and some slack instead of the whole limit; refills ask for the rest.
        if (!ordered && first_round && cursors.size() > 1)
          left = std::min<std::int64_t>(left, left / static_cast<std::int64_t>(cursors.size()) * 3 / 2 + 8);
        want = std::min(want, left);
      }
      rq.max_rows = static_cast<std::size_t>(want);
      inflight.emplace_back(&c, part);
      caf::anon_send(rt->partitions[c.partition], part);
    }
    first_round = false;
    status result;
    for (auto& [c, part] : inflight) {
      part->finished.wait();
      if (!part->st) {
        result = part->st;
        continue;
      }
      for (auto& r : part->page.rows) c->rows.push_back(std::move(r));
      if (part->page.exhausted) {
        c->exhausted = true;
      } else if (part->page.examined_any) {
        c->from = part->page.last_row;
        c->from_inclusive = false;
      }
    }
    return result;
  }

  // The next whole row in global order, or nullopt at the end.
  result<std::optional<row_result>> next_row() {
    if (spec.limit_ >= 0 && rows_out >= spec.limit_) return std::optional<row_result>{};
    for (;;) {
      bool need = false;
      for (auto& c : cursors) {
        if (c.rows.empty() && !c.exhausted) need = true;
        if (ordered && !c.exhausted) break;  // later range cursors wait their turn
      }
      if (!need) break;
      if (auto s = refill(); !s) return s;
    }
    cursor* best = nullptr;
    for (auto& c : cursors) {
      if (c.rows.empty()) continue;
      if (!best || (spec.reversed_ ? c.rows.front().row > best->rows.front().row
                                   : c.rows.front().row < best->rows.front().row))
        best = &c;
    }
    if (!best) return std::optional<row_result>{};
    row_result r = std::move(best->rows.front());
    best->rows.pop_front();
    ++rows_out;
    return std::optional<row_result>{std::move(r)};
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

result<scanner> table::scan(const cellar::scan& s) {
  auto rt = store_->lookup(name_);
  if (!rt)
    return store_->closed ? status{code::unavailable, "the store is closed"}
                          : status{code::table_not_found, "table '" + name_ + "' does not exist"};
  if (auto st = validate(*rt->schema, s); !st) return st;
  auto state = std::make_unique<scan_state>();
  state->rt = rt;
  state->spec = s;
  const std::string& low = s.reversed_ ? s.stop : s.start;
  const std::string& high = s.reversed_ ? s.start : s.stop;
  state->ordered = rt->schema->partitioning.how == partition_spec::method::range;
  if (!rt->partitions.empty())
    for (auto p : partitions_for_range(rt->schema->partitioning, low, high)) {
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
  // An empty interval (start past stop in scan direction) yields nothing.
  if (!s.start.empty() && !s.stop.empty()) {
    const int c = s.start.compare(s.stop);
    const bool empty = s.reversed_ ? c < 0 : c > 0;
    if (empty) state->cursors.clear();
  }
  return scanner(std::move(state));
}

scanner::scanner(std::unique_ptr<scan_state> st) : st_(std::move(st)) {}
scanner::scanner(scanner&&) noexcept = default;
scanner& scanner::operator=(scanner&&) noexcept = default;
scanner::~scanner() = default;

result<std::optional<row_result>> scanner::next() {
  if (st_->pieces.empty()) {
    auto r = st_->next_row();
    if (!r) return r.error();
    if (!r.value()) return std::optional<row_result>{};
    st_->split(std::move(*r.value()));
  }
  row_result out = std::move(st_->pieces.front());
  st_->pieces.pop_front();
  return std::optional<row_result>{std::move(out)};
}

result<std::vector<row_result>> scanner::next(std::size_t n) {
  std::vector<row_result> out;
  while (out.size() < n) {
    auto r = next();
    if (!r) return r.error();
    if (!r.value()) break;
    out.push_back(std::move(*r.value()));
  }
  return out;
}

result<std::vector<row_result>> scanner::all() { return next(static_cast<std::size_t>(-1)); }

}  // namespace cellar
