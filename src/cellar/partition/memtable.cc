#include "partition/memtable.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "persist/codec.h"

namespace cellar::detail {

namespace {

constexpr std::int64_t cell_overhead = 48;  // key/value headers and btree slot, roughly

std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? latest_timestamp : std::numeric_limits<std::int64_t>::min();
  return r;
}

// Effective versions a read may return per column: min(request, family MaxVersions).
std::uint32_t family_cap(const family_descriptor& f) {
  return f.max_versions == 0 ? std::numeric_limits<std::uint32_t>::max() : f.max_versions;
}

// Sorted, de-duplicated qualifiers of a selection entry.
std::vector<std::string_view> sorted_qualifiers(const std::vector<std::string>& qs) {
  std::vector<std::string_view> out(qs.begin(), qs.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Collects the visible cells of one row in one family, in R1 order. Returns false once
// `exists_only` found a cell (the caller may stop).
struct family_reader {
  const family_schema& fam;
  const family_map& map;
  std::string_view row;
  const read_options& o;
  std::int64_t now;
  bool exists_only;
  row_result& out;
  std::int64_t family_seen = 0;  // cells passing versions, counted for offset/limit
  std::int64_t family_emitted = 0;

  bool limit_reached() const { return o.max_per_family >= 0 && family_emitted >= o.max_per_family; }

  // Reads the column run starting at `it`; returns the iterator past the run.
  family_map::const_iterator column(family_map::const_iterator it) {
    const std::string_view q = it->first.qualifier;
    const std::uint32_t cap = family_cap(fam.desc);
    // Time-series families return every version in range (OBKV TS3: MaxVersions may be
    // set on a read but has no effect).
    const std::uint32_t want = fam.desc.kind == family_kind::time_series ? cap : std::min(o.max_versions, cap);
    std::uint32_t rank = 0, taken = 0;
    for (; it != map.end() && it->first.row == row && it->first.qualifier == q; ++it) {
      if (expired(fam.desc, it->first.ts, it->second, now)) continue;
      if (rank >= cap) continue;  // beyond MaxVersions: invisible even before trimming
      ++rank;
      if (it->first.ts < o.range.min || it->first.ts >= o.range.max) continue;
      if (taken >= want) continue;
      ++taken;
      if (family_seen++ < o.offset_per_family) continue;
      if (limit_reached()) continue;
      ++family_emitted;
      out.exists = true;
      if (exists_only) return map.end();
      // The values live on the heap: start loading the next one while this one is copied.
      if (auto nx = std::next(it); nx != map.end()) __builtin_prefetch(nx->second.value.data());
      if (out.cells.capacity() == 0) out.cells.reserve(16);
      out.cells.emplace_back(std::string(row), fam.desc.name, std::string(it->first.qualifier), it->first.ts,
                             it->second.value);
    }
    return it;
  }

  void all_columns() {
    auto it = map.lower_bound(key_view{row, {}, latest_timestamp});
    // Values live on the heap, a cache miss each: start loading the row's first few
    // together rather than one at a time as they are copied (as a scan does).
    if (!exists_only) {
      auto p = it;
      for (int n = 0; n < 32 && p != map.end() && p->first.row == row; ++n, ++p) {
        __builtin_prefetch(p->second.value.data());
        __builtin_prefetch(p->second.value.data() + 64);
      }
    }
    while (it != map.end() && it->first.row == row && !limit_reached()) {
      it = column(it);
      if (exists_only && out.exists) return;
    }
  }

  void some_columns(const std::vector<std::string_view>& qualifiers) {
    for (auto q : qualifiers) {
      if (limit_reached()) return;
      auto it = map.lower_bound(key_view{row, q, latest_timestamp});
      if (it == map.end() || it->first.row != row || it->first.qualifier != q) continue;
      column(it);
      if (exists_only && out.exists) return;
    }
  }
};

}  // namespace

std::int64_t cell_charge(std::size_t row, std::size_t qualifier, std::size_t value) {
  return cell_overhead + static_cast<std::int64_t>(row + qualifier + value);
}

bool expired(const family_descriptor& f, std::int64_t ts, const cell_value& v, std::int64_t now) {
  if (f.ttl_seconds > 0 && ts < now - f.ttl_seconds * 1000) return true;
  return now > v.expires_at;
}

memtable::memtable(std::atomic<std::int64_t>* global_bytes, std::uint64_t limit)
    : global_bytes_(global_bytes), limit_(limit) {}

memtable::~memtable() {
  if (global_bytes_) global_bytes_->fetch_sub(bytes_, std::memory_order_relaxed);
}

family_map* memtable::find(std::uint32_t id) {
  auto it = families_.find(id);
  return it == families_.end() ? nullptr : &it->second;
}

const family_map* memtable::find(std::uint32_t id) const {
  auto it = families_.find(id);
  return it == families_.end() ? nullptr : &it->second;
}

family_map& memtable::ensure(std::uint32_t id) { return families_[id]; }

void memtable::account(std::int64_t delta) {
  bytes_ += delta;
  if (global_bytes_) global_bytes_->fetch_add(delta, std::memory_order_relaxed);
}

status memtable::reserve(std::int64_t bytes) const {
  if (limit_ == 0 || global_bytes_ == nullptr) return status::ok();
  auto used = global_bytes_->load(std::memory_order_relaxed);
  if (used + bytes > static_cast<std::int64_t>(limit_))
    return {code::memory_limit, "memory limit of " + std::to_string(limit_) + " bytes reached (" +
                                    std::to_string(used) + " in use); nothing was written"};
  return status::ok();
}

family_map::iterator memtable::write_cell(std::uint32_t fid, family_map& m, cell_key key, cell_value v) {
  const auto charge = cell_charge(key.row.size(), key.qualifier.size(), v.value.size());
  // One descent: the lower bound is the cell itself or where it goes.
  auto it = m.lower_bound(key);
  const bool exists = it != m.end() && !cell_key_less{}(key, it->first);
  if (track_delta_ || track_redo_) record(fid, key, &v, !exists);
  if (exists) {
    if (in_unit_) undo_.push_back({fid, it->first, it->second});
    account(charge - cell_charge(key.row.size(), key.qualifier.size(), it->second.value.size()));
    it->second = std::move(v);
    return it;
  }
  if (in_unit_) undo_.push_back({fid, key, std::nullopt});
  it = m.emplace_hint(it, std::move(key), std::move(v));
  account(charge);
  ++cells_;
  return it;
}

void memtable::trim_column(const family_schema& f, family_map& m, std::string_view row, std::string_view q,
                           std::int64_t now) {
  if (f.desc.max_versions == 0) return;
  trim_column(f, m, row, q, m.lower_bound(key_view{row, q, latest_timestamp}), now);
}

void memtable::trim_column(const family_schema& f, family_map& m, std::string_view row, std::string_view q,
                           family_map::iterator at, std::int64_t now) {
  // The rule of reads (family_reader::column) and of the background reclaim: a version is
  // out of reach once expired or ranked beyond the family's MaxVersions, in every kind of
  // family (for time series only a read's own max_versions is ignored, TS3).
  if (f.desc.max_versions == 0) return;
  const std::uint32_t cap = family_cap(f.desc);
  // Back from `at` (a cell of the column, or where it starts) to the column's newest cell:
  // no descent from the root, a write has just found its place.
  auto it = at;
  while (it != m.begin()) {
    auto prev = std::prev(it);
    if (prev->first.row != row || prev->first.qualifier != q) break;
    it = prev;
  }
  std::uint32_t rank = 0;
  while (it != m.end() && it->first.row == row && it->first.qualifier == q) {
    if (expired(f.desc, it->first.ts, it->second, now) || rank >= cap) {
      it = erase_cell(f.id, m, it);
      continue;
    }
    ++rank;
    ++it;
  }
}

void memtable::record(std::uint32_t fid, const cell_key& key, const cell_value* v, bool absent_before) {
  // Encoded into a buffer kept for the next write: the redo log and the delta copy it.
  std::string& k = key_scratch_;
  k.clear();
  encode_cell_key(k, fid, key.row, key.qualifier, key.ts);
  if (track_redo_) {
    redo_.push_back(v ? '\1' : '\0');
    put_bytes(redo_, k);
    if (v) {
      put_u64(redo_, static_cast<std::uint64_t>(v->expires_at));
      put_bytes(redo_, v->value);
    }
  }
  if (track_delta_) {
    if (v)
      delta_.put(k, v->expires_at, v->value, absent_before);
    else
      delta_.erase(k);
  }
}

delta_map memtable::take_delta() { return std::move(delta_); }

void memtable::merge_delta(delta_map older) { delta_.merge_older(older); }

void memtable::load(std::uint32_t fid, cell_key key, cell_value v) {
  auto& m = ensure(fid);
  const auto charge = cell_charge(key.row.size(), key.qualifier.size(), v.value.size());
  auto [it, inserted] = m.insert_or_assign(std::move(key), std::move(v));
  (void)it;
  if (inserted) {
    account(charge);
    ++cells_;
  }
}

void memtable::replay(std::uint32_t fid, cell_key key, std::optional<cell_value> v) {
  if (dropped(fid)) return;
  const bool saved_redo = track_redo_;
  track_redo_ = false;
  auto& m = ensure(fid);
  if (v) {
    write_cell(fid, m, std::move(key), std::move(*v));
  } else if (auto it = m.find(key); it != m.end()) {
    erase_cell(fid, m, it);
  }
  track_redo_ = saved_redo;
}

family_map::iterator memtable::erase_cell(std::uint32_t fid, family_map& m, family_map::iterator it) {
  if (track_delta_ || track_redo_) record(fid, it->first, nullptr);
  if (in_unit_) undo_.push_back({fid, it->first, it->second});
  account(-cell_charge(it->first.row.size(), it->first.qualifier.size(), it->second.value.size()));
  --cells_;
  return m.erase(it);
}

void memtable::begin() {
  in_unit_ = true;
  undo_.clear();
  unit_redo_start_ = redo_.size();
}

void memtable::commit() {
  in_unit_ = false;
  undo_.clear();
}

void memtable::rollback() {
  in_unit_ = false;
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
    auto& m = ensure(it->family);
    auto cur = m.find(it->key);
    if (cur != m.end()) {
      account(-cell_charge(cur->first.row.size(), cur->first.qualifier.size(), cur->second.value.size()));
      --cells_;
      m.erase(cur);
    }
    if (track_delta_) {  // the delta holds each key's state now: the restored one
      std::string& k = key_scratch_;
      k.clear();
      encode_cell_key(k, it->family, it->key.row, it->key.qualifier, it->key.ts);
      if (it->old)
        delta_.put(k, it->old->expires_at, it->old->value);
      else
        delta_.erase(k);
    }
    if (it->old) {
      account(cell_charge(it->key.row.size(), it->key.qualifier.size(), it->old->value.size()));
      ++cells_;
      m.emplace(std::move(it->key), std::move(*it->old));
    }
  }
  undo_.clear();
  redo_.resize(unit_redo_start_);  // nothing of an undone unit reaches the log
}

// --- reads ------------------------------------------------------------------------------

row_result memtable::read_row(const table_schema& schema, std::string_view row, const read_options& o,
                              bool exists_only, std::int64_t now) const {
  row_result out;
  out.row = std::string(row);
  auto read_family = [&](const family_schema& fam, const std::vector<std::string>* qualifiers) {
    const family_map* m = find(fam.id);
    if (m == nullptr || m->empty()) return;
    family_reader r{fam, *m, row, o, now, exists_only, out};
    if (qualifiers == nullptr || qualifiers->empty())
      r.all_columns();
    else
      r.some_columns(sorted_qualifiers(*qualifiers));
  };
  if (o.columns.empty()) {
    for (const auto& fam : schema.families) {
      read_family(fam, nullptr);
      if (exists_only && out.exists) break;
    }
  } else {
    // Families in name order (R1), whatever order the request named them in.
    std::vector<const column_selection::family_columns*> sel;
    for (const auto& fc : o.columns.families) sel.push_back(&fc);
    std::sort(sel.begin(), sel.end(), [](auto* a, auto* b) { return a->family < b->family; });
    for (auto* fc : sel) {
      const family_schema* fam = schema.find(fc->family);
      if (fam == nullptr) continue;  // checked before routing
      read_family(*fam, &fc->qualifiers);
      if (exists_only && out.exists) break;
    }
  }
  return out;
}

scan_page memtable::scan(const table_schema& schema, const scan_page_request& req, std::int64_t now) const {
  scan_page page;
  // The maps the scan reads: the selected families, or all.
  std::vector<const family_map*> maps;
  if (req.options.columns.empty()) {
    for (const auto& f : schema.families)
      if (auto* m = find(f.id); m && !m->empty()) maps.push_back(m);
  } else {
    for (const auto& fc : req.options.columns.families)
      if (auto* f = schema.find(fc.family))
        if (auto* m = find(f->id); m && !m->empty()) maps.push_back(m);
  }
  if (maps.empty()) {
    page.exhausted = true;
    return page;
  }

  // The next row at or past `from` in scan direction, over all maps.
  auto next_row = [&](const std::optional<std::string>& from, bool inclusive) -> std::optional<std::string_view> {
    std::optional<std::string_view> best;
    for (auto* m : maps) {
      std::optional<std::string_view> cand;
      if (!req.reversed) {
        auto it = from ? m->lower_bound(row_probe{*from, !inclusive}) : m->begin();
        if (it != m->end()) cand = it->first.row;
      } else {
        auto it = from ? m->lower_bound(row_probe{*from, inclusive}) : m->end();
        if (it != m->begin()) cand = std::prev(it)->first.row;
      }
      if (cand && (!best || (req.reversed ? *cand > *best : *cand < *best))) best = cand;
    }
    return best;
  };
  auto before_stop = [&](std::string_view row) {
    if (req.stop.empty()) return true;
    int c = row.compare(req.stop);
    if (!req.reversed) return req.stop_inclusive ? c <= 0 : c < 0;
    return req.stop_inclusive ? c >= 0 : c > 0;
  };

  // Bound the rows examined per page, so rows hidden by TTL or time ranges cannot keep
  // the partition busy for long.
  constexpr std::size_t max_examined = 4096;

  if (!req.reversed) {
    // Forward: one iterator per family walks its map in step with the others, so each
    // row costs no seek (the qualifier-selected families seek per qualifier).
    struct source {
      const family_schema* fam;
      const family_map* map;
      std::vector<std::string_view> qualifiers;
      family_map::const_iterator it;
    };
    std::vector<source> srcs;
    if (req.options.columns.empty()) {
      for (const auto& f : schema.families)
        if (auto* m = find(f.id); m && !m->empty()) srcs.push_back({&f, m, {}, {}});
    } else {
      std::vector<const column_selection::family_columns*> sel;
      for (const auto& fc : req.options.columns.families) sel.push_back(&fc);
      std::sort(sel.begin(), sel.end(), [](auto* a, auto* b) { return a->family < b->family; });
      for (auto* fc : sel)
        if (auto* f = schema.find(fc->family))
          if (auto* m = find(f->id); m && !m->empty()) srcs.push_back({f, m, sorted_qualifiers(fc->qualifiers), {}});
    }
    for (auto& src : srcs)
      src.it = req.from ? src.map->lower_bound(row_probe{*req.from, !req.from_inclusive}) : src.map->begin();
    std::size_t seen = 0;
    while (page.rows.size() < req.max_rows) {
      std::string_view cur;
      bool any = false;
      for (const auto& src : srcs)
        if (src.it != src.map->end() && (!any || std::string_view(src.it->first.row) < cur)) {
          cur = src.it->first.row;
          any = true;
        }
      if (!any || !before_stop(cur)) {
        page.exhausted = true;
        return page;
      }
      std::string row(cur);
      row_result rr;
      rr.row = row;
      for (auto& src : srcs) {
        if (src.it == src.map->end() || src.it->first.row != row) continue;
        // Values live on the heap, a cache miss each: start loading the row's first few
        // together rather than one at a time as they are copied.
        {
          auto p = src.it;
          for (int n = 0; n < 32 && p != src.map->end() && p->first.row == row; ++n, ++p) {
            __builtin_prefetch(p->second.value.data());
            __builtin_prefetch(p->second.value.data() + 64);
          }
        }
        family_reader r{*src.fam, *src.map, row, req.options, now, false, rr};
        if (src.qualifiers.empty()) {
          auto it = src.it;
          while (it != src.map->end() && it->first.row == row) {
            if (r.limit_reached()) {
              it = src.map->lower_bound(row_probe{row, true});
              break;
            }
            it = r.column(it);
          }
          src.it = it;
        } else {
          r.some_columns(src.qualifiers);
          src.it = src.map->lower_bound(row_probe{row, true});
        }
      }
      if (!rr.cells.empty()) page.rows.push_back(std::move(rr));
      page.last_row = std::move(row);
      page.examined_any = true;
      if (++seen >= max_examined) break;
    }
    return page;
  }
  std::size_t examined = 0;
  std::optional<std::string> from = req.from;
  bool inclusive = req.from_inclusive;
  while (page.rows.size() < req.max_rows) {
    auto row = next_row(from, inclusive);
    if (!row || !before_stop(*row)) {
      page.exhausted = true;
      return page;
    }
    std::string r(*row);
    row_result rr = read_row(schema, r, req.options, false, now);
    if (!rr.cells.empty()) page.rows.push_back(std::move(rr));
    page.last_row = r;
    page.examined_any = true;
    from = std::move(r);
    inclusive = false;
    if (++examined >= max_examined) break;
  }
  return page;
}

// --- writes -----------------------------------------------------------------------------

const std::pair<const cell_key, cell_value>* memtable::newest(const family_schema& f, const family_map& m,
                                                              std::string_view row, std::string_view q,
                                                              std::int64_t now, const time_range* r) const {
  std::uint32_t rank = 0;
  const std::uint32_t cap = family_cap(f.desc);
  for (auto it = m.lower_bound(key_view{row, q, latest_timestamp});
       it != m.end() && it->first.row == row && it->first.qualifier == q; ++it) {
    if (expired(f.desc, it->first.ts, it->second, now)) continue;
    if (rank++ >= cap) return nullptr;
    if (r && (it->first.ts < r->min || it->first.ts >= r->max)) continue;
    return &*it;
  }
  return nullptr;
}

status memtable::apply(const table_schema& schema, const put& p, std::int64_t now) {
  std::int64_t charge = 0;
  for (const auto& e : p.entries) charge += cell_charge(p.row.size(), e.qualifier.size(), e.value.size());
  if (auto s = reserve(charge); !s) return s;
  for (const auto& e : p.entries) {  // check every family before the first write
    const family_schema* f = schema.find(e.family);
    if (f == nullptr || dropped(f->id)) return {code::family_not_found, "family '" + e.family + "' not found"};
  }
  const std::int64_t put_ts = p.timestamp == latest_timestamp ? now : p.timestamp;
  for (const auto& e : p.entries) {
    const family_schema* f = schema.find(e.family);
    const std::int64_t ts = e.timestamp == latest_timestamp ? put_ts : e.timestamp;
    cell_value v{e.value, p.ttl_ms_ ? sat_add(ts, *p.ttl_ms_) : latest_timestamp};
    auto& m = ensure(f->id);
    auto at = write_cell(f->id, m, cell_key{p.row, e.qualifier, ts}, std::move(v));
    trim_column(*f, m, p.row, e.qualifier, at, now);
  }
  return status::ok();
}

void memtable::delete_range(const family_schema& f, family_map& m, std::string_view row,
                            std::optional<std::string_view> qualifier, std::int64_t max_ts,
                            std::optional<std::int64_t> exact_ts) {
  auto it = m.lower_bound(key_view{row, qualifier.value_or(std::string_view{}), latest_timestamp});
  while (it != m.end() && it->first.row == row && (!qualifier || it->first.qualifier == *qualifier)) {
    const auto ts = it->first.ts;
    if (exact_ts ? ts == *exact_ts : ts <= max_ts)
      it = erase_cell(f.id, m, it);
    else
      ++it;
  }
}

status memtable::apply(const table_schema& schema, const deletion& d, std::int64_t now) {
  if (d.entries.empty()) {  // whole row, every family (R15)
    for (const auto& f : schema.families)
      if (auto* m = find(f.id)) delete_range(f, *m, d.row, std::nullopt, d.timestamp, std::nullopt);
    return status::ok();
  }
  for (const auto& e : d.entries) {
    const family_schema* f = schema.find(e.family);
    if (f == nullptr || dropped(f->id)) return {code::family_not_found, "family '" + e.family + "' not found"};
    family_map* m = find(f->id);
    if (m == nullptr) continue;
    using s = deletion::scope;
    switch (e.what) {
      case s::family:
        delete_range(*f, *m, d.row, std::nullopt, e.timestamp, std::nullopt);
        break;
      case s::family_version:
        delete_range(*f, *m, d.row, std::nullopt, latest_timestamp, e.timestamp);
        break;
      case s::column_version:
        delete_range(*f, *m, d.row, e.qualifier, latest_timestamp, e.timestamp);
        break;
      case s::columns:
        delete_range(*f, *m, d.row, e.qualifier, e.timestamp, std::nullopt);
        break;
      case s::column_latest:
        if (f->desc.kind == family_kind::time_series) {
          // OBKV TS4: a column delete removes the qualifier from every row of the key.
          delete_range(*f, *m, d.row, e.qualifier, latest_timestamp, std::nullopt);
          break;
        }
        if (auto* c = newest(*f, *m, d.row, e.qualifier, now, nullptr)) {
          auto it = m->find(c->first);
          erase_cell(f->id, *m, it);
        }
        break;
    }
  }
  return status::ok();
}

namespace {

// Sorts result cells into R1 order (family, qualifier asc, timestamp desc).
void sort_cells(std::vector<cell>& cells) {
  std::sort(cells.begin(), cells.end(), [](const cell& a, const cell& b) {
    if (a.family != b.family) return a.family < b.family;
    if (a.qualifier != b.qualifier) return a.qualifier < b.qualifier;
    return a.timestamp > b.timestamp;
  });
}

}  // namespace

result<row_result> memtable::apply(const table_schema& schema, const increment& inc, std::int64_t now) {
  std::int64_t charge = 0;
  for (const auto& e : inc.entries) charge += cell_charge(inc.row.size(), e.qualifier.size(), 8);
  if (auto s = reserve(charge); !s) return s;
  row_result out;
  out.row = inc.row;
  for (const auto& e : inc.entries) {
    const family_schema* f = schema.find(e.family);
    if (f == nullptr || dropped(f->id)) return status{code::family_not_found, "family '" + e.family + "' not found"};
    auto& m = ensure(f->id);
    std::int64_t value = e.amount;
    std::int64_t ts = now;
    if (auto* c = newest(*f, m, inc.row, e.qualifier, now, nullptr)) {
      if (c->second.value.size() != 8)
        return status{code::not_a_long, "Field is not a long, it's " + std::to_string(c->second.value.size()) +
                                             " bytes wide"};
      value = static_cast<std::int64_t>(static_cast<std::uint64_t>(*to_long(c->second.value)) +
                                        static_cast<std::uint64_t>(e.amount));
      ts = std::max(now, sat_add(c->first.ts, 1));  // a new, newer version (R25, R50)
    }
    std::string bytes = long_bytes(value);
    if (inc.return_results_) out.cells.push_back(cell{inc.row, e.family, e.qualifier, ts, bytes});
    auto at = write_cell(f->id, m, cell_key{inc.row, e.qualifier, ts},
               cell_value{std::move(bytes), inc.ttl_ms_ ? sat_add(ts, *inc.ttl_ms_) : latest_timestamp});
    trim_column(*f, m, inc.row, e.qualifier, at, now);
  }
  out.exists = !out.cells.empty();
  sort_cells(out.cells);
  return out;
}

result<row_result> memtable::apply(const table_schema& schema, const append& app, std::int64_t now) {
  row_result out;
  out.row = app.row;
  for (const auto& e : app.entries) {
    const family_schema* f = schema.find(e.family);
    if (f == nullptr || dropped(f->id)) return status{code::family_not_found, "family '" + e.family + "' not found"};
    auto& m = ensure(f->id);
    std::string value;
    std::int64_t ts = now;
    if (auto* c = newest(*f, m, app.row, e.qualifier, now, nullptr)) {
      value = c->second.value;
      ts = std::max(now, sat_add(c->first.ts, 1));
    }
    value += e.value;
    if (value.size() > f->desc.max_value_bytes)
      return status{code::too_large, "appended value of " + std::to_string(value.size()) +
                                         " bytes exceeds the family limit of " +
                                         std::to_string(f->desc.max_value_bytes)};
    if (auto s = reserve(cell_charge(app.row.size(), e.qualifier.size(), value.size())); !s) return s;
    if (app.return_results_) out.cells.push_back(cell{app.row, e.family, e.qualifier, ts, value});
    auto at = write_cell(f->id, m, cell_key{app.row, e.qualifier, ts},
               cell_value{std::move(value), app.ttl_ms_ ? sat_add(ts, *app.ttl_ms_) : latest_timestamp});
    trim_column(*f, m, app.row, e.qualifier, at, now);
  }
  out.exists = !out.cells.empty();
  sort_cells(out.cells);
  return out;
}

status memtable::apply(const table_schema& schema, const row_mutations& m, std::int64_t now) {
  for (const auto& mu : m.mutations) {
    status s = std::visit([&](const auto& x) { return apply(schema, x, now); }, mu);
    if (!s) return s;
  }
  return status::ok();
}

result<bool> memtable::apply(const table_schema& schema, const check_and_mutate& c, std::int64_t now) {
  const family_schema* f = schema.find(c.family);
  if (f == nullptr || dropped(f->id)) return status{code::family_not_found, "family '" + c.family + "' not found"};
  const family_map* m = find(f->id);
  const auto* cur = m ? newest(*f, *m, c.row, c.qualifier, now, &c.range) : nullptr;
  bool pass;
  if (!c.expected) {
    pass = cur == nullptr || cur->second.value.empty();  // R23
  } else if (cur == nullptr) {
    pass = false;
  } else {
    const int cmp = std::string_view(*c.expected).compare(cur->second.value);  // R22: expected first
    switch (c.op) {
      case compare_op::less: pass = cmp < 0; break;
      case compare_op::less_or_equal: pass = cmp <= 0; break;
      case compare_op::equal: pass = cmp == 0; break;
      case compare_op::not_equal: pass = cmp != 0; break;
      case compare_op::greater_or_equal: pass = cmp >= 0; break;
      case compare_op::greater: pass = cmp > 0; break;
      default: pass = false;
    }
  }
  if (!pass) return false;
  if (auto s = apply(schema, c.mutation, now); !s) return s;
  return true;
}

// --- upkeep -----------------------------------------------------------------------------

std::size_t memtable::reclaim(const table_schema& schema, std::int64_t now, std::size_t budget) {
  std::size_t erased = 0, examined = 0;
  if (schema.families.empty()) return 0;
  // Resume in the family where the last slice stopped (by id order within the schema).
  std::size_t fi = 0;
  while (fi < schema.families.size() && schema.families[fi].id < reclaim_family_) ++fi;
  if (fi == schema.families.size()) {
    fi = 0;
    reclaim_from_.reset();
  }
  const bool saved = in_unit_;
  in_unit_ = false;  // reclamation is not undoable work
  for (std::size_t n = 0; n < schema.families.size() && examined < budget; ++n) {
    const auto& f = schema.families[(fi + n) % schema.families.size()];
    family_map* m = find(f.id);
    if (m == nullptr) {
      reclaim_from_.reset();
      continue;
    }
    const std::uint32_t cap = family_cap(f.desc);
    auto it = reclaim_from_ && reclaim_family_ == f.id ? m->lower_bound(*reclaim_from_) : m->begin();
    reclaim_from_.reset();
    // Version rank within the current column.
    std::string_view row, qual;
    std::uint32_t rank = 0;
    bool started = false;
    while (it != m->end()) {
      if (!started || it->first.row != row || it->first.qualifier != qual) {
        if (examined >= budget) {
          // Stop only at a column boundary, so version ranks stay right next time.
          reclaim_family_ = f.id;
          reclaim_from_ = cell_key{it->first.row, it->first.qualifier, latest_timestamp};
          in_unit_ = saved;
          return erased;
        }
        row = it->first.row;
        qual = it->first.qualifier;
        rank = 0;
        started = true;
      }
      ++examined;
      if (expired(f.desc, it->first.ts, it->second, now) || rank >= cap) {
        // `row`/`qual` view into the erased key: keep copies for the comparison.
        std::string r(row), q(qual);
        it = erase_cell(f.id, *m, it);
        ++erased;
        if (it != m->end() && it->first.row == r && it->first.qualifier == q) {
          row = it->first.row;
          qual = it->first.qualifier;
        } else {
          started = false;
        }
        continue;
      }
      ++rank;
      ++it;
    }
    reclaim_family_ = f.id + 1;
  }
  in_unit_ = saved;
  return erased;
}

void memtable::restart_reclaim() {
  reclaim_family_ = 0;
  reclaim_from_.reset();
}

void memtable::drop_family(std::uint32_t id) {
  dropped_.insert(id);
  // Its pending snapshot changes are moot: the snapshot purges the family's key range.
  delta_.forget(family_prefix(id), family_prefix(id + 1));
  auto it = families_.find(id);
  if (it == families_.end()) return;
  std::int64_t freed = 0;
  for (const auto& [k, v] : it->second) {
    freed += cell_charge(k.row.size(), k.qualifier.size(), v.value.size());
    --cells_;
  }
  account(-freed);
  families_.erase(it);
}

memtable_stats memtable::stats() const {
  return {cells_, static_cast<std::uint64_t>(bytes_)};
}

}  // namespace cellar::detail
