// partition/memtable_filter.cc: reads with a filter (memtable::read_row and memtable::scan
// when the request has one).
//
// A row is read the way HBase 2.x's RegionScanner reads it: filterRowKey, then the cells of
// each family in R1 order through the filter (after TTL, MaxVersions, the time range and
// the requested versions, R8; before the per-family limit and offset), then
// filterRowCells / filterRow, then reset. A filter's NEXT_ROW (and a seek hint into
// another row) ends the row for that family only, as in HBase's per-family store scanners;
// filterAllRemaining met at a cell ends that family for the rest of the scan (HBase's
// DONE_SCAN closes the store scanner), met between rows it ends the scan. Rows the filter
// cannot match are jumped over when it can tell (filter_node::seek).
#include <algorithm>
#include <limits>

#include "model/filter_eval.h"
#include "partition/memtable.h"
#include "util/coding.h"

namespace cellar::detail {

namespace {

using row_cells = cell_map::row_ref;
using row_it = cell_map::row_iterator;

struct family_source {
  const family_schema* fam;
  const family_map* map;
  std::vector<std::string_view> qualifiers;  // sorted, distinct; empty: every qualifier
  bool closed = false;                       // ended by filterAllRemaining (DONE_SCAN)
  family_map::const_iterator it;             // forward scans: the first cell of its next row
  row_cells cells;                           // the current row's cells, if it has any here
  std::string_view candidate;                // scans: this family's next row
};

std::uint32_t versions_cap(const family_descriptor& f) {
  return f.max_versions == 0 ? std::numeric_limits<std::uint32_t>::max() : f.max_versions;
}

bool include_related(filter_rc rc) {
  return rc == filter_rc::include || rc == filter_rc::include_and_next_col ||
         rc == filter_rc::include_and_seek_next_row;
}

row_it past_column(const row_cells& cells, std::string_view q) {
  return cells.upper_bound(cell_map::column_view{q, std::numeric_limits<std::int64_t>::min()});
}

// Where a hint within the row points, in `cells`.
row_it hint_position(const row_cells& cells, const cell_hint& h) {
  switch (h.where) {
    case cell_hint::at::first_on_row: return cells.begin();
    case cell_hint::at::first_on_column:
      return cells.lower_bound(cell_map::column_view{h.qualifier, std::numeric_limits<std::int64_t>::max()});
    case cell_hint::at::column_version: return cells.lower_bound(cell_map::column_view{h.qualifier, h.ts});
    case cell_hint::at::last_on_column: return past_column(cells, h.qualifier);
  }
  return cells.end();
}

// One family's cells of `row` through the filter, appended to `out`.
void walk_family(filter_node& f, family_source& src, std::string_view row, const read_options& o, std::int64_t now,
                 std::vector<cell>& out) {
  const row_cells cells = src.cells;
  const family_descriptor& desc = src.fam->desc;
  const std::uint32_t cap = versions_cap(desc);
  const std::uint32_t want = std::min(o.max_versions, cap);
  const auto& sel = src.qualifiers;
  std::size_t next_sel = 0;
  std::int64_t included = 0;  // for the per-family limit and offset (R33), after the filter
  std::string_view column;
  bool in_column = false;
  std::uint32_t rank = 0, taken = 0;

  for (auto it = cells.begin(); it != cells.end();) {
    const std::string_view q = it.qualifier();
    if (!sel.empty()) {
      while (next_sel < sel.size() && sel[next_sel] < q) ++next_sel;
      if (next_sel == sel.size()) return;
      if (sel[next_sel] != q) {
        it = cells.lower_bound(cell_map::column_view{sel[next_sel], std::numeric_limits<std::int64_t>::max()});
        continue;
      }
    }
    if (!in_column || q != column) {
      column = q;
      in_column = true;
      rank = taken = 0;
    }
    const std::int64_t ts = it.ts();
    const cell_ref v = it.value();
    if (cell_ttl_expired(v, now)) {
      ++it;
      continue;
    }
    if (rank >= cap) {  // beyond MaxVersions: invisible, as every older version
      it = past_column(cells, column);
      continue;
    }
    ++rank;
    if (ttl_removes(desc, ts, rank, now)) {  // and every older version (memtable.h)
      it = past_column(cells, column);
      continue;
    }
    if (ts < o.range.min || ts >= o.range.max) {
      ++it;
      continue;
    }
    if (taken >= want) {  // versions are counted before the filter (R8)
      it = past_column(cells, column);
      continue;
    }
    ++taken;
    if (f.filter_all_remaining()) {  // HBase: DONE_SCAN closes this family's scanner
      src.closed = true;
      return;
    }
    const cell_view cv{row, desc.name, q, ts, v.value};
    const filter_rc rc = f.filter_cell(cv);
    if (include_related(rc)) {
      ++included;
      if (o.max_per_family >= 0 && included > o.max_per_family + o.offset_per_family) return;
      if (included > o.offset_per_family) {
        cell c{std::string(row), desc.name, std::string(q), ts, std::string(v.value)};
        if (o.cell_ttls && v.expires_at != latest_timestamp) c.ttl_ms = v.expires_at - ts;
        f.transform_cell(c);
        out.push_back(std::move(c));
      }
    }
    switch (rc) {
      case filter_rc::include:
      case filter_rc::skip: ++it; break;
      case filter_rc::include_and_next_col:
      case filter_rc::next_col: it = past_column(cells, column); break;
      case filter_rc::include_and_seek_next_row:
      case filter_rc::next_row: return;
      case filter_rc::seek_next_using_hint: {
        auto h = f.next_cell_hint(cv);
        if (!h) {
          ++it;
          break;
        }
        if (h->row != row) return;  // another row: this family is done with this one
        if (h->where != cell_hint::at::first_on_row && h->family != desc.name) {
          if (h->family > desc.name) return;
          ++it;
          break;
        }
        auto target = hint_position(cells, *h);
        // Only forward (a hint behind the current cell would loop).
        if (target != cells.end() && !cell_map::column_less{}(it.column(), target.column()))
          ++it;
        else
          it = target;
        break;
      }
    }
  }
}

// Reads `row` under the filter (sources' `cells` set); true when a result came out in `out`.
bool read_filtered_row(filter_node& f, std::string_view row, std::vector<family_source>& srcs, const read_options& o,
                       std::int64_t now, row_result& out) {
  out.row = std::string(row);
  out.cells.clear();
  if (f.filter_row_key(row)) return false;
  for (auto& src : srcs)
    if (!src.closed && src.cells) walk_family(f, src, row, o, now, out.cells);
  const bool was_empty = out.cells.empty();
  if (f.has_filter_row()) {
    f.filter_row_cells(out.cells);
    if (!out.cells.empty() && f.filter_row()) out.cells.clear();
  } else if (!was_empty && f.filter_row()) {
    out.cells.clear();
  }
  out.exists = !out.cells.empty();
  return out.exists;
}

std::vector<std::string_view> sorted_qualifiers(const std::vector<std::string>& qs) {
  std::vector<std::string_view> out(qs.begin(), qs.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Filter state across pages: the closed families' ids, then the filter's own state.
void save_state(const compiled_filter& cf, const std::vector<family_source>& srcs, std::string& out) {
  std::string ids;
  std::size_t closed = 0;
  for (const auto& s : srcs)
    if (s.closed) {
      ++closed;
      put_varint(ids, s.fam->id);
    }
  out.clear();
  out.push_back(static_cast<char>(std::min<std::size_t>(closed, 255)));
  out += ids;
  cf.root->save(out);
}

void load_state(compiled_filter& cf, std::vector<family_source>& srcs, std::string_view in) {
  if (in.empty()) return;
  const auto n = static_cast<unsigned char>(in[0]);
  in.remove_prefix(1);
  std::vector<std::uint32_t> ids;
  for (unsigned i = 0; i < n; ++i) {
    std::uint64_t v = 0;
    if (!get_varint(in, v) || v > UINT32_MAX) return;  // not ours: start afresh
    ids.push_back(static_cast<std::uint32_t>(v));
  }
  if (!cf.root->load(in)) return;
  for (auto& s : srcs) s.closed = std::find(ids.begin(), ids.end(), s.fam->id) != ids.end();
}

}  // namespace

namespace {

// The families a read touches, in name order (R1), with their maps.
template <class Find>
std::vector<family_source> sources(const table_schema& schema, const read_options& o, Find find) {
  std::vector<family_source> out;
  if (o.columns.empty()) {
    for (const auto& f : schema.families)  // sorted by name
      if (auto* m = find(f.id)) out.push_back({&f, m, {}, false, {}, {}, {}});
  } else {
    std::vector<const column_selection::family_columns*> sel;
    for (const auto& fc : o.columns.families) sel.push_back(&fc);
    std::sort(sel.begin(), sel.end(), [](auto* a, auto* b) { return a->family < b->family; });
    for (auto* fc : sel)
      if (const family_schema* f = schema.find(fc->family))
        if (auto* m = find(f->id)) {
          // A family named twice: its selections merge (all qualifiers if either is whole).
          if (!out.empty() && out.back().fam == f) {
            if (out.back().qualifiers.empty() || fc->qualifiers.empty()) {
              out.back().qualifiers.clear();
            } else {
              for (const auto& q : fc->qualifiers) out.back().qualifiers.push_back(q);
              std::sort(out.back().qualifiers.begin(), out.back().qualifiers.end());
              out.back().qualifiers.erase(std::unique(out.back().qualifiers.begin(), out.back().qualifiers.end()),
                                          out.back().qualifiers.end());
            }
            continue;
          }
          out.push_back({f, m, sorted_qualifiers(fc->qualifiers), false, {}, {}, {}});
        }
  }
  return out;
}

}  // namespace

row_result memtable::read_row_filtered(const table_schema& schema, std::string_view row, const read_options& o,
                                       bool exists_only, std::int64_t now) const {
  row_result out;
  out.row = std::string(row);
  auto srcs = sources(schema, o, [this](std::uint32_t id) { return find(id); });
  bool any = false;
  for (auto& s : srcs) {
    s.cells = s.map->cells_of(row);
    any = any || static_cast<bool>(s.cells);
  }
  if (!any) return out;  // HBase's scanner meets no row, so the filter sees none
  auto cf = compile_filter(*o.filter, false);
  read_filtered_row(*cf.root, row, srcs, o, now, out);
  if (exists_only) out.cells.clear();
  return out;
}

scan_page memtable::scan_filtered(const table_schema& schema, const scan_page_request& req, std::int64_t now) const {
  scan_page page;
  const read_options& o = req.options;
  auto srcs = sources(schema, o, [this](std::uint32_t id) -> const family_map* {
    const family_map* m = find(id);
    return m && !m->empty() ? m : nullptr;
  });
  auto cf = compile_filter(*o.filter, req.reversed);
  filter_node& f = *cf.root;
  load_state(cf, srcs, req.filter_state);

  auto before_stop = [&](std::string_view row) {
    if (req.stop.empty()) return true;
    const int c = row.compare(req.stop);
    if (!req.reversed) return req.stop_inclusive ? c <= 0 : c < 0;
    return req.stop_inclusive ? c >= 0 : c > 0;
  };
  auto all_closed = [&] { return std::all_of(srcs.begin(), srcs.end(), [](const auto& s) { return s.closed; }); };
  // Ends the scan for the filter's sake.
  auto filter_done = [&](std::optional<std::string_view> at) {
    page.filter_done = true;
    page.exhausted = true;
    if (at) {
      page.last_row = std::string(*at);
      page.examined_any = true;
    } else if (!page.examined_any && req.from) {
      page.last_row = *req.from;
      page.examined_any = true;
    }
  };
  // As the unfiltered scan, a page examines a bounded number of rows.
  constexpr std::size_t max_examined = 4096;
  std::size_t examined = 0;
  row_result rr;

  // Position: forward scans step an iterator per family; reversed scans look each row up.
  std::optional<std::string> from = req.from;
  bool from_inclusive = req.from_inclusive;
  if (!req.reversed)
    for (auto& s : srcs) s.it = from ? s.map->lower_bound(row_probe{*from, !from_inclusive}) : s.map->begin();

  if (srcs.empty()) {
    page.exhausted = true;
    save_state(cf, srcs, page.filter_state);
    return page;
  }
  while (page.rows.size() < req.max_rows) {
    if (f.filter_all_remaining()) {
      filter_done(std::nullopt);
      break;
    }
    // The next row, and each family's cells of it.
    std::string_view cur;
    bool found = false;
    for (auto& s : srcs) {
      s.cells = {};
      if (s.closed) continue;
      std::string_view cand;
      row_cells cells;
      if (!req.reversed) {
        if (s.it == s.map->end()) continue;
        cand = s.it.row();
        cells = s.it.row_cells_here();
      } else {
        auto it = from ? s.map->lower_bound(row_probe{*from, from_inclusive}) : s.map->end();
        if (it == s.map->begin()) continue;
        --it;
        cand = it.row();
        cells = it.row_cells_here();
      }
      if (!found || (req.reversed ? cand > cur : cand < cur)) {
        cur = cand;
        found = true;
      }
      s.cells = cells;
      s.candidate = cand;
    }
    if (!found || !before_stop(cur)) {
      page.exhausted = true;
      break;
    }
    for (auto& s : srcs)  // only the families holding `cur`
      if (s.cells && s.candidate != cur) s.cells = {};
    const std::string row(cur);

    if (cf.seeks) {
      row_seek sk = f.seek(row);
      if (sk.w == row_seek::what::skip_to) {  // a target not past this row would not move: read it
        const int c = sk.row.compare(row);
        if (req.reversed ? (c > 0 || (c == 0 && sk.inclusive)) : (c < 0 || (c == 0 && sk.inclusive)))
          sk.w = row_seek::what::here;
      }
      if (sk.w == row_seek::what::end) {
        filter_done(row);
        break;
      }
      if (sk.w == row_seek::what::skip_to) {
        if (!req.reversed) {
          for (auto& s : srcs)
            if (!s.closed) s.it = s.map->lower_bound(row_probe{sk.row, !sk.inclusive});
        } else {
          from = std::move(sk.row);
          from_inclusive = sk.inclusive;
        }
        page.last_row = row;
        page.examined_any = true;
        if (++examined >= max_examined) break;
        continue;
      }
    }

    const bool got = read_filtered_row(f, row, srcs, o, now, rr);
    if (!req.reversed) {
      for (auto& s : srcs)
        if (s.it != s.map->end() && s.it.row() == row) s.it = s.it.next_row();
    } else {
      from = row;
      from_inclusive = false;
    }
    f.reset();
    if (got) page.rows.push_back(std::move(rr));
    page.last_row = row;
    page.examined_any = true;
    if (f.filter_all_remaining()) {
      filter_done(std::string_view(row));
      break;
    }
    if (all_closed()) {
      page.exhausted = true;
      break;
    }
    if (++examined >= max_examined) break;
  }
  save_state(cf, srcs, page.filter_state);
  return page;
}

}  // namespace cellar::detail
