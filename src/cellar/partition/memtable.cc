#include "partition/memtable.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <absl/container/inlined_vector.h>

#include "persist/codec.h"

namespace cellar::detail {

namespace {

std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? latest_timestamp : std::numeric_limits<std::int64_t>::min();
  return r;
}

// Effective versions a read may return per column: min(request, family MaxVersions).
std::uint32_t family_cap(const family_descriptor& f) {
  return f.max_versions == 0 ? std::numeric_limits<std::uint32_t>::max() : f.max_versions;
}

cell_key owned(const key_view& k) { return cell_key{k.row, k.qualifier, k.ts}; }

// Sorted, de-duplicated qualifiers of a selection entry.
std::vector<std::string_view> sorted_qualifiers(const std::vector<std::string>& qs) {
  std::vector<std::string_view> out(qs.begin(), qs.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

inline bool same_bytes(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// Where family_reader puts the cells it reads: copies into a row_result, or views
// (memtable::read_row_views).
struct into_row {
  row_result& r;
  bool ttls = false;  // fill cell::ttl_ms
  bool& exists() { return r.exists; }
  void add(std::string_view row, const std::string& family, std::string_view q, std::int64_t ts, std::string_view value,
           std::int64_t expires_at) {
    if (r.cells.capacity() == 0) r.cells.reserve(16);
    r.cells.push_back(cell{std::string(row), family, std::string(q), ts, std::string(value)});
    if (ttls && expires_at != latest_timestamp) r.cells.back().ttl_ms = expires_at - ts;
  }
};

struct into_views {
  std::vector<read_cell_view>& cells;
  bool found = false;
  bool& exists() { return found; }
  void add(std::string_view, const std::string& family, std::string_view q, std::int64_t ts, std::string_view value,
           std::int64_t) {
    cells.push_back(read_cell_view{&family, q, ts, value});
  }
};

// Collects the visible cells of one row in one family, in R1 order, from the row's cells
// (cell_map::row_cells: by qualifier, newest first). Returns early once `exists_only`
// found a cell.
template <class Out>
struct family_reader {
  using cells_t = cell_map::row_ref;
  using cell_it = cell_map::row_iterator;
  const family_schema& fam;
  std::string_view row;
  const read_options& o;
  std::int64_t now;
  bool exists_only;
  Out& out;
  std::int64_t family_seen = 0;  // cells passing versions, counted for offset/limit
  std::int64_t family_emitted = 0;
  // Versions per column: those the family keeps visible (MaxVersions), and those the read
  // takes of them. Time-series families return every version in range unless the read
  // asked for a number of versions (OBKV TS3 returns them all without setMaxVersions).
  // Set once per row and family: a row of one-version columns reads a column per cell.
  const std::uint32_t cap = family_cap(fam.desc);
  const std::uint32_t want =
      fam.desc.kind == family_kind::time_series && !o.max_versions_given ? cap : std::min(o.max_versions, cap);

  bool limit_reached() const { return o.max_per_family >= 0 && family_emitted >= o.max_per_family; }

  // Reads the column run starting at `it`; returns the iterator past the run.
  cell_it column(cell_it it, cell_it end) {
    const std::string_view q = it.qualifier();
    std::uint32_t rank = 0, taken = 0;
    // The run's first cell is of the column by definition; the others are compared inline
    // (std::string_view's == would be an out-of-line call per cell).
    for (bool first = true; it != end && (first || same_bytes(it.qualifier(), q)); ++it, first = false) {
      const std::int64_t ts = it.ts();
      const cell_ref v = it.value();
      if (cell_ttl_expired(v, now)) continue;
      if (rank >= cap) continue;  // beyond MaxVersions: invisible even before trimming
      ++rank;
      if (ttl_removes(fam.desc, ts, rank, now)) continue;
      if (ts < o.range.min || ts >= o.range.max) continue;
      if (taken >= want) continue;
      ++taken;
      if (family_seen++ < o.offset_per_family) continue;
      if (limit_reached()) continue;
      ++family_emitted;
      out.exists() = true;
      if (exists_only) return end;
      out.add(row, fam.desc.name, q, ts, v.value, v.expires_at);
    }
    return it;
  }

  void all_columns(const cells_t& cells) {
    // A B-tree row's values over 12 bytes live on the heap, a cache miss each: start
    // loading the row's first few together rather than one at a time as they are copied
    // (as a scan does). A packed row's values are in its block.
    if (!exists_only && cells.tree() != nullptr) {
      int n = 0;
      for (auto p = cells.begin(); n < 32 && p != cells.end(); ++n, ++p) {
        __builtin_prefetch(p.value().value.data());
        __builtin_prefetch(p.value().value.data() + 64);
      }
    }
    const auto end = cells.end();
    for (auto it = cells.begin(); it != end && !limit_reached();) {
      it = column(it, end);
      if (exists_only && out.exists()) return;
    }
  }

  void some_columns(const cells_t& cells, const std::vector<std::string_view>& qualifiers) {
    const auto end = cells.end();
    for (auto q : qualifiers) {
      if (limit_reached()) return;
      auto it = cells.lower_bound(cell_map::column_view{q, latest_timestamp});
      if (it == end || it.qualifier() != q) continue;
      column(it, end);
      if (exists_only && out.exists()) return;
    }
  }
};

}  // namespace

std::int64_t cell_charge(std::size_t qualifier, std::size_t value) {
  return family_map::tree_cell_bytes(qualifier, value);
}

memtable::memtable(memory_pool* pool) : account_(pool) {}

memtable::~memtable() = default;

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
  ++changes_;
  account_.charge(delta);
}

status memtable::reserve(std::int64_t bytes) const { return account_.reserve(bytes); }

family_map::iterator memtable::write_cell(std::uint32_t fid, family_map& m, const key_view& key, cell_value v,
                                          std::string_view encoded, family_map::row_hint* hint) {
  // The row by hash, then one descent inside it: the cell itself or a new one there.
  auto [it, inserted] = hint ? m.try_emplace(key, *hint) : m.try_emplace(key);
  try {
    m.reserve(it, key.ts, v);  // the change below cannot fail
    if (track_delta_ || track_redo_ || move_delta_) record(fid, key, &v, inserted, encoded);
    if (in_unit_) undo_.push_back({fid, owned(key), inserted ? std::nullopt : std::optional(it.value().owned())});
  } catch (...) {
    if (inserted) m.erase(it);  // nothing half-written
    account(m.take_bytes_change());
    throw;
  }
  m.replace(it, key.ts, std::move(v));
  account(m.take_bytes_change());
  if (inserted) ++cells_;
  return it;
}

bool memtable::replace_sole_version(const family_schema& f, family_map& m, const key_view& key, cell_value& v,
                                    std::int64_t now) {
  // The new cell is the column's newest version (rank 1) once written.
  if (f.desc.max_versions != 1 || cell_ttl_expired(v, now) || ttl_removes(f.desc, key.ts, 1, now)) return false;
  auto it = m.newest_of(key.row, key.qualifier);
  // The column's newest cell: its only one if no other of the column follows it.
  if (it == m.end() || it.ts() >= key.ts || !family_map::last_of_column(it)) return false;
  // Every record before the change: if one throws, the cell is as it was.
  // The change below cannot fail once reserved. The old cell's key is read after the
  // reserve, which may move the row's bytes.
  m.reserve(it, key.ts, v);
  const key_view old_key = it.key();
  if (track_delta_ || track_redo_ || move_delta_) {
    record(f.id, key, &v, true);
    record(f.id, old_key, nullptr);
  }
  if (in_unit_) {
    undo_.push_back({f.id, owned(key), std::nullopt});
    undo_.push_back({f.id, owned(old_key), it.value().owned()});
  }
  m.replace(it, key.ts, std::move(v));  // same size: the old block keeps its place
  account(m.take_bytes_change());
  return true;
}

void memtable::trim_column(const family_schema& f, family_map& m, std::string_view row, std::string_view q,
                           family_map::iterator at, std::int64_t now) {
  // The rule of reads (family_reader::column) and of the background reclaim (memtable.h):
  // a version is out of reach once past its cell TTL, ranked beyond the family's
  // MaxVersions, or past the family TTL beyond MIN_VERSIONS, in every kind of family (for
  // time series a read's max_versions applies only when given, TS3).
  if (f.desc.max_versions == 0) return;
  const std::uint32_t cap = family_cap(f.desc);
  // Back from `at` (a cell of the column, or where it starts) to the column's newest cell:
  // no descent from the root, a write has just found its place.
  auto it = at;
  while (it != m.begin()) {
    auto prev = std::prev(it);
    if (prev.row() != row || prev.qualifier() != q) break;
    it = prev;
  }
  std::uint32_t rank = 0;
  while (it != m.end() && it.row() == row && it.qualifier() == q) {
    if (cell_ttl_expired(it.value(), now) || rank >= cap || ttl_removes(f.desc, it.ts(), rank + 1, now)) {
      it = erase_cell(f.id, m, it);
      continue;
    }
    ++rank;
    ++it;
  }
}

void memtable::record(std::uint32_t fid, const key_view& key, const cell_value* v, bool absent_before,
                      std::string_view encoded) {
  // Encoded into a buffer kept for the next write: the redo log and the delta copy it.
  std::string_view k = encoded;
  if (k.empty()) {
    key_scratch_.clear();
    encode_cell_key(key_scratch_, fid, key.row, key.qualifier, key.ts);
    k = key_scratch_;
  }
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
  if (move_delta_) {
    if (v)
      move_delta_->put(k, v->expires_at, v->value);
    else
      move_delta_->erase(k);
  }
}

delta_map memtable::take_move_delta() {
  if (!move_delta_) return {};
  delta_map out = std::move(*move_delta_);
  *move_delta_ = delta_map();
  return out;
}

bool memtable::copy_cells(const std::string& after, std::size_t max_bytes, delta_map& out, std::string& last) const {
  return copy_after(after, max_bytes, last, [&out](std::string_view key, std::int64_t expires_at, std::string_view v) {
    out.put(key, expires_at, v);
  });
}

bool memtable::copy_records(const std::string& after, std::size_t max_bytes, std::string& out,
                            std::string& last) const {
  return copy_after(after, max_bytes, last, [&out](std::string_view key, std::int64_t expires_at, std::string_view v) {
    append_cell_record(out, key, expires_at, v);
  });
}

bool memtable::copy_after(const std::string& after, std::size_t max_bytes, std::string& last,
                          absl::FunctionRef<void(std::string_view, std::int64_t, std::string_view)> emit) const {
  std::vector<std::uint32_t> ids;
  for (const auto& [id, m] : families_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  std::optional<decoded_key> from;
  if (!after.empty()) from = decode_cell_key(after);
  std::size_t bytes = 0;
  std::string k;
  for (auto id : ids) {
    if (from && id < from->family) continue;
    const auto& m = families_.at(id);
    auto it = m.begin();
    if (from && id == from->family) {
      it = m.lower_bound(key_view{from->row, from->qualifier, from->ts});
      if (it != m.end() && it.row() == from->row && it.qualifier() == from->qualifier && it.ts() == from->ts) ++it;
    }
    for (; it != m.end(); ++it) {
      if (bytes >= max_bytes) return false;
      k.clear();
      encode_cell_key(k, id, it.row(), it.qualifier(), it.ts());
      emit(k, it.value().expires_at, it.value().value);
      bytes += k.size() + it.value().value.size();
      last = k;
    }
  }
  return true;
}

void memtable::visit_cells(
    absl::FunctionRef<void(std::string_view key, std::int64_t expires_at, std::string_view value)> fn) const {
  std::vector<std::uint32_t> ids;
  for (const auto& [id, m] : families_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  std::string k;
  for (auto id : ids) {
    const auto& m = families_.at(id);
    for (auto it = m.begin(); it != m.end(); ++it) {
      k.clear();
      encode_cell_key(k, id, it.row(), it.qualifier(), it.ts());
      const auto& v = it.value();
      fn(k, v.expires_at, v.value);
    }
  }
}

void memtable::apply_cells(const delta_map& cells) {
  for (auto it = cells.begin(); it != cells.end(); ++it) {
    auto key = decode_cell_key(it->first.bytes);
    if (!key) continue;
    cell_key ck{std::move(key->row), std::move(key->qualifier), key->ts};
    if (it->second.present)
      replay(key->family, std::move(ck), cell_value{short_bytes(it->second.value()), it->second.expires_at});
    else
      replay(key->family, std::move(ck), std::nullopt);
  }
}

delta_map memtable::take_delta() { return std::move(delta_); }

void memtable::merge_delta(delta_map older, std::vector<loaded_layer> older_loaded) {
  // `older` goes under the changes recorded before this memtable's first load, if any.
  (loaded_.empty() ? delta_ : *loaded_.front().before).merge_older(older);
  if (older_loaded.empty()) return;
  for (auto& l : loaded_) older_loaded.push_back(std::move(l));
  loaded_ = std::move(older_loaded);
}

void memtable::load(std::uint32_t fid, cell_key key, cell_value v) {
  auto& m = ensure(fid);
  auto [it, inserted] = m.try_emplace(key_view{key.row, key.qualifier, key.ts});
  m.assign(it, std::move(v));
  account(m.take_bytes_change());
  if (inserted) ++cells_;
}

void memtable::unload(std::uint32_t fid, const cell_key& key) {
  auto* m = find(fid);
  if (!m) return;
  auto it = m->find(key_view{key.row, key.qualifier, key.ts});
  if (it == m->end()) return;
  --cells_;
  m->erase(it);
  account(m->take_bytes_change());
}

void memtable::replay(std::uint32_t fid, cell_key key, std::optional<cell_value> v) {
  if (dropped(fid)) return;
  const bool saved_redo = track_redo_;
  track_redo_ = false;
  auto& m = ensure(fid);
  const key_view k{key.row, key.qualifier, key.ts};
  if (v) {
    write_cell(fid, m, k, std::move(*v));
  } else if (auto it = m.find(k); it != m.end()) {
    erase_cell(fid, m, it);
  }
  track_redo_ = saved_redo;
}

family_map::iterator memtable::erase_cell(std::uint32_t fid, family_map& m, family_map::iterator it) {
  if (track_delta_ || track_redo_ || move_delta_) record(fid, it.key(), nullptr);
  if (in_unit_) undo_.push_back({fid, owned(it.key()), it.value().owned()});
  --cells_;
  auto next = m.erase(it);
  account(m.take_bytes_change());
  return next;
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
    const key_view k{it->key.row, it->key.qualifier, it->key.ts};
    auto cur = m.find(k);
    if (cur != m.end()) {
      --cells_;
      m.erase(cur);
      account(m.take_bytes_change());
    }
    if (track_delta_ || move_delta_) {  // the deltas hold each key's state now: the restored one
      std::string& k = key_scratch_;
      k.clear();
      encode_cell_key(k, it->family, it->key.row, it->key.qualifier, it->key.ts);
      for (delta_map* d : {track_delta_ ? &delta_ : nullptr, move_delta_.get()}) {
        if (!d) continue;
        if (it->old)
          d->put(k, it->old->expires_at, it->old->value);
        else
          d->erase(k);
      }
    }
    if (it->old) {
      ++cells_;
      auto restored = m.try_emplace(k).first;
      m.assign(restored, std::move(*it->old));
      account(m.take_bytes_change());
    }
  }
  undo_.clear();
  redo_.resize(unit_redo_start_);  // nothing of an undone unit reaches the log
}

// --- reads ------------------------------------------------------------------------------

template <class Out>
void memtable::read_row_into(const table_schema& schema, std::string_view row, const read_options& o, bool exists_only,
                             std::int64_t now, Out& out) const {
  auto read_family = [&](const family_schema& fam, const std::vector<std::string>* qualifiers) {
    const family_map* m = find(fam.id);
    if (m == nullptr) return;
    const auto cells = m->cells_of(row);
    if (!cells) return;
    family_reader<Out> r{fam, row, o, now, exists_only, out};
    if (qualifiers == nullptr || qualifiers->empty())
      r.all_columns(cells);
    else
      r.some_columns(cells, sorted_qualifiers(*qualifiers));
  };
  if (o.columns.empty()) {
    for (const auto& fam : schema.families) {
      read_family(fam, nullptr);
      if (exists_only && out.exists()) break;
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
      if (exists_only && out.exists()) break;
    }
  }
}

row_result memtable::read_row(const table_schema& schema, std::string_view row, const read_options& o, bool exists_only,
                              std::int64_t now) const {
  if (o.filter) return read_row_filtered(schema, row, o, exists_only, now);
  row_result out;
  out.row = std::string(row);
  into_row into{out, o.cell_ttls};  // a reversed scan reads its rows here
  read_row_into(schema, row, o, exists_only, now, into);
  return out;
}

bool memtable::read_row_views(const table_schema& schema, std::string_view row, const read_options& o, std::int64_t now,
                              std::vector<read_cell_view>& out) const {
  into_views into{out};
  read_row_into(schema, row, o, false, now, into);
  return into.found;
}

scan_page memtable::scan(const table_schema& schema, const scan_page_request& req, std::int64_t now) const {
  if (req.options.filter) return scan_filtered(schema, req, now);
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
        if (it != m->end()) cand = it.row();
      } else {
        auto it = from ? m->lower_bound(row_probe{*from, inclusive}) : m->end();
        if (it != m->begin()) cand = std::prev(it).row();
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
    // row costs no seek (the qualifier-selected families seek per qualifier, in the row).
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
        if (src.it != src.map->end() && (!any || src.it.row() < cur)) {
          cur = src.it.row();
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
        if (src.it == src.map->end() || src.it.row() != row) continue;
        // src.it is the row's first cell: read the row's cells, then go on to the next row.
        into_row into{rr, req.options.cell_ttls};
        family_reader<into_row> r{*src.fam, row, req.options, now, false, into};
        if (src.qualifiers.empty())
          r.all_columns(src.it.row_cells_here());
        else
          r.some_columns(src.it.row_cells_here(), src.qualifiers);
        src.it = src.it.next_row();
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

family_map::iterator memtable::newest(const family_schema& f, const family_map& m, std::string_view row,
                                      std::string_view q, std::int64_t now, const time_range* r) const {
  std::uint32_t rank = 0;
  const std::uint32_t cap = family_cap(f.desc);
  for (auto it = m.lower_bound(key_view{row, q, latest_timestamp});
       it != m.end() && it.row() == row && it.qualifier() == q; ++it) {
    if (cell_ttl_expired(it.value(), now)) continue;
    if (rank++ >= cap) return m.end();
    if (ttl_removes(f.desc, it.ts(), rank, now)) return m.end();  // and every older version
    if (r && (it.ts() < r->min || it.ts() >= r->max)) continue;
    return it;
  }
  return m.end();
}

status memtable::apply(const table_schema& schema, const put& p, std::int64_t now) {
  std::int64_t charge = 0;
  for (const auto& e : p.entries) charge += cell_charge(e.qualifier.size(), e.value.size());
  if (auto s = reserve(charge); !s) return s;
  // Every family is found, and checked, before the first write; found once.
  absl::InlinedVector<const family_schema*, 16> families;
  families.reserve(p.entries.size());
  for (const auto& e : p.entries) {
    const family_schema* f = schema.find(e.family);
    if (f == nullptr || dropped(f->id)) return {code::family_not_found, "family '" + e.family + "' not found"};
    families.push_back(f);
  }
  const std::int64_t put_ts = p.timestamp == latest_timestamp ? now : p.timestamp;
  for (std::size_t i = 0; i < p.entries.size(); ++i) {
    const auto& e = p.entries[i];
    const family_schema* f = families[i];
    const std::int64_t ts = e.timestamp == latest_timestamp ? put_ts : e.timestamp;
    cell_value v{e.value, p.ttl_ms_ ? sat_add(ts, *p.ttl_ms_) : latest_timestamp};
    auto& m = ensure(f->id);
    const key_view key{p.row, e.qualifier, ts};
    if (replace_sole_version(*f, m, key, v, now)) continue;
    auto at = write_cell(f->id, m, key, std::move(v));
    trim_column(*f, m, p.row, e.qualifier, at, now);
  }
  return status::ok();
}

void memtable::delete_range(const family_schema& f, family_map& m, std::string_view row,
                            std::optional<std::string_view> qualifier, std::int64_t max_ts,
                            std::optional<std::int64_t> exact_ts) {
  auto it = m.lower_bound(key_view{row, qualifier.value_or(std::string_view{}), latest_timestamp});
  while (it != m.end() && it.row() == row && (!qualifier || it.qualifier() == *qualifier)) {
    const auto ts = it.ts();
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
      case s::family: delete_range(*f, *m, d.row, std::nullopt, e.timestamp, std::nullopt); break;
      case s::family_version: delete_range(*f, *m, d.row, std::nullopt, latest_timestamp, e.timestamp); break;
      case s::column_version: delete_range(*f, *m, d.row, e.qualifier, latest_timestamp, e.timestamp); break;
      case s::columns: delete_range(*f, *m, d.row, e.qualifier, e.timestamp, std::nullopt); break;
      case s::column_latest:
        if (f->desc.kind == family_kind::time_series) {
          // OBKV TS4: a column delete removes the qualifier from every row of the key.
          delete_range(*f, *m, d.row, e.qualifier, latest_timestamp, std::nullopt);
          break;
        }
        if (auto c = newest(*f, *m, d.row, e.qualifier, now, nullptr); c != m->end()) erase_cell(f->id, *m, c);
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
  for (const auto& e : inc.entries) charge += cell_charge(e.qualifier.size(), 8);
  if (auto s = reserve(charge); !s) return s;
  row_result out;
  out.row = inc.row;
  for (const auto& e : inc.entries) {
    const family_schema* f = schema.find(e.family);
    if (f == nullptr || dropped(f->id)) return status{code::family_not_found, "family '" + e.family + "' not found"};
    auto& m = ensure(f->id);
    std::int64_t value = e.amount;
    std::int64_t ts = now;
    if (auto c = newest(*f, m, inc.row, e.qualifier, now, nullptr); c != m.end()) {
      const std::string_view old = c.value().value;
      if (old.size() != 8)
        return status{code::not_a_long, "Field is not a long, it's " + std::to_string(old.size()) + " bytes wide"};
      value =
          static_cast<std::int64_t>(static_cast<std::uint64_t>(*to_long(old)) + static_cast<std::uint64_t>(e.amount));
      ts = std::max(now, sat_add(c.ts(), 1));  // a new, newer version (R25, R50)
    }
    std::string bytes = long_bytes(value);
    if (inc.return_results_) out.cells.push_back(cell{inc.row, e.family, e.qualifier, ts, bytes});
    auto at = write_cell(f->id, m, key_view{inc.row, e.qualifier, ts},
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
    if (auto c = newest(*f, m, app.row, e.qualifier, now, nullptr); c != m.end()) {
      value = std::string(c.value().value);
      ts = std::max(now, sat_add(c.ts(), 1));
    }
    value += e.value;
    if (value.size() > f->desc.max_value_bytes)
      return status{code::too_large, "appended value of " + std::to_string(value.size()) +
                                         " bytes exceeds the family limit of " +
                                         std::to_string(f->desc.max_value_bytes)};
    if (auto s = reserve(cell_charge(e.qualifier.size(), value.size())); !s) return s;
    if (app.return_results_) out.cells.push_back(cell{app.row, e.family, e.qualifier, ts, value});
    auto at = write_cell(f->id, m, key_view{app.row, e.qualifier, ts},
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
  if (c.filter) {  // HBase 2.4 ifMatches(filter): a get of the row with the filter finds a cell
    read_options o;
    o.range = c.range;
    o.filter = c.filter;
    if (read_row(schema, c.row, o, false, now).cells.empty()) return false;
    if (auto s = apply(schema, c.mutation, now); !s) return s;
    return true;
  }
  const family_schema* f = schema.find(c.family);
  if (f == nullptr || dropped(f->id)) return status{code::family_not_found, "family '" + c.family + "' not found"};
  const family_map* m = find(f->id);
  std::optional<std::string_view> cur;  // the newest value in range, if any
  if (m != nullptr)
    if (auto it = newest(*f, *m, c.row, c.qualifier, now, &c.range); it != m->end()) cur = it.value().value;
  bool pass;
  if (!c.expected) {
    pass = !cur || cur->empty();  // R23
  } else if (!cur) {
    pass = false;
  } else {
    const int cmp = std::string_view(*c.expected).compare(*cur);  // R22: expected first
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

std::vector<memtable::reclaim_rule> memtable::reclaim_rules(const table_schema& schema) {
  std::vector<reclaim_rule> out;
  out.reserve(schema.families.size());
  for (const auto& f : schema.families)
    out.push_back({f.id, f.desc.max_versions, f.desc.min_versions, f.desc.ttl_seconds});
  return out;
}

void memtable::end_reclaim_pass(const table_schema& schema) {
  if (!pass_started_) return;
  pass_started_ = false;
  // A family TTL expires cells as time passes: such a store is never settled.
  for (const auto& f : schema.families)
    if (f.desc.ttl_seconds > 0) return;
  if (changes_ != pass_changes_ || pass_saw_expiry_) return;
  settled_ = true;
  settled_changes_ = changes_;
  settled_rules_ = reclaim_rules(schema);
}

std::size_t memtable::reclaim(const table_schema& schema, std::int64_t now, std::size_t budget) {
  std::size_t erased = 0, examined = 0;
  if (schema.families.empty()) return 0;
  // Nothing to do until a cell changes or the families' rules do (see settled_).
  if (settled_ && changes_ == settled_changes_ && settled_rules_ == reclaim_rules(schema)) return 0;
  settled_ = false;
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
    const std::size_t index = (fi + n) % schema.families.size();
    const auto& f = schema.families[index];
    if (index == 0 && !reclaim_from_) {  // a pass over every family starts
      pass_started_ = true;
      pass_changes_ = changes_;
      pass_saw_expiry_ = false;
    }
    family_map* m = find(f.id);
    if (m == nullptr) {
      reclaim_from_.reset();
      if (index + 1 == schema.families.size()) end_reclaim_pass(schema);
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
      if (!started || it.row() != row || it.qualifier() != qual) {
        if (examined >= budget) {
          // Stop only at a column boundary, so version ranks stay right next time.
          reclaim_family_ = f.id;
          reclaim_from_ = cell_key{it.row(), it.qualifier(), latest_timestamp};
          in_unit_ = saved;
          return erased;
        }
        row = it.row();
        qual = it.qualifier();
        rank = 0;
        started = true;
      }
      ++examined;
      ++reclaim_examined_;
      if (it.value().expires_at != latest_timestamp) pass_saw_expiry_ = true;
      if (cell_ttl_expired(it.value(), now) || rank >= cap || ttl_removes(f.desc, it.ts(), rank + 1, now)) {
        // `row`/`qual` view into the erased key: keep copies for the comparison.
        std::string r(row), q(qual);
        it = erase_cell(f.id, *m, it);
        ++erased;
        if (it != m->end() && it.row() == r && it.qualifier() == q) {
          row = it.row();
          qual = it.qualifier();
        } else {
          started = false;
        }
        continue;
      }
      ++rank;
      ++it;
    }
    reclaim_family_ = f.id + 1;
    if (index + 1 == schema.families.size()) end_reclaim_pass(schema);
  }
  in_unit_ = saved;
  return erased;
}

void memtable::restart_reclaim() {
  reclaim_family_ = 0;
  reclaim_from_.reset();
  pass_started_ = false;
  settled_ = false;
}

void memtable::drop_family(std::uint32_t id) {
  dropped_.insert(id);
  // Its pending snapshot changes are moot: the snapshot purges the family's key range.
  delta_.forget(family_prefix(id), family_prefix(id + 1));
  auto it = families_.find(id);
  if (it == families_.end()) return;
  family_map& m = it->second;
  cells_ -= m.size();
  account(m.take_bytes_change());  // all it holds is charged: return it
  account(-m.bytes());
  families_.erase(it);
}

std::int64_t memtable::bytes_recounted() const {
  std::int64_t b = 0;
  for (const auto& [id, m] : families_) b += m.bytes_recounted();
  return b;
}

memtable_stats memtable::stats() const { return {cells_, static_cast<std::uint64_t>(account_.held())}; }

}  // namespace cellar::detail
