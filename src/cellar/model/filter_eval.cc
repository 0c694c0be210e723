// model/filter_eval.cc: the filter kinds' HBase 2.x behaviour (model/filter_eval.h).
//
// Each node mirrors the HBase class of the same name; comments point out where cellar's
// behaviour needed a choice.
#include "model/filter_eval.h"

#include <algorithm>
#include <random>

#include "util/coding.h"

namespace cellar::detail {

namespace {

// ---- state encoding (between the pages of a scan) ----------------------------------------

bool get_flag(std::string_view& in, bool& b) {
  std::uint64_t v;
  if (!get_varint(in, v) || v > 1) return false;
  b = v == 1;
  return true;
}

bool include_related(filter_rc rc) {
  return rc == filter_rc::include || rc == filter_rc::include_and_next_col ||
         rc == filter_rc::include_and_seek_next_row;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

// The smallest key above every key starting with `p`, or nullopt (p is all 0xFF).
std::optional<std::string> prefix_successor(std::string_view p) {
  std::string s(p);
  while (!s.empty() && static_cast<unsigned char>(s.back()) == 0xFF) s.pop_back();
  if (s.empty()) return std::nullopt;
  s.back() = static_cast<char>(static_cast<unsigned char>(s.back()) + 1);
  return s;
}

row_seek here() { return {}; }
row_seek end() { return {row_seek::what::end, {}, true}; }
row_seek skip_to(std::string_view r, bool inclusive) { return {row_seek::what::skip_to, std::string(r), inclusive}; }

row_seek prefix_seek(std::string_view row, std::string_view prefix, bool reversed) {
  if (starts_with(row, prefix)) return here();
  if (!reversed) return row < prefix ? skip_to(prefix, true) : end();
  if (row < prefix) return end();
  auto succ = prefix_successor(prefix);
  return succ ? skip_to(*succ, false) : here();
}

// Rows r with `r OP v` (bytewise), in scan direction.
row_seek binary_seek(std::string_view row, compare_op op, std::string_view v, bool reversed) {
  const int c = row.compare(v);
  switch (op) {
    case compare_op::equal:
      if (c == 0) return here();
      if (!reversed) return c < 0 ? skip_to(v, true) : end();
      return c > 0 ? skip_to(v, true) : end();
    case compare_op::less:
      if (c < 0) return here();
      return reversed ? skip_to(v, false) : end();
    case compare_op::less_or_equal:
      if (c <= 0) return here();
      return reversed ? skip_to(v, true) : end();
    case compare_op::greater:
      if (c > 0) return here();
      return reversed ? end() : skip_to(v, false);
    case compare_op::greater_or_equal:
      if (c >= 0) return here();
      return reversed ? end() : skip_to(v, true);
    case compare_op::no_op: return end();
    case compare_op::not_equal: return here();
  }
  return here();
}

// Whether a seek target is further along than another, in scan direction.
bool further(const row_seek& a, const row_seek& b, bool reversed) {
  const int c = a.row.compare(b.row);
  if (c != 0) return reversed ? c < 0 : c > 0;
  return !a.inclusive && b.inclusive;
}

cell_hint hint_at_column(const cell_view& c, std::string_view qualifier) {
  return {cell_hint::at::first_on_column, std::string(c.row), std::string(c.family), std::string(qualifier), 0};
}

// ---- the compare filters ----------------------------------------------------------------

class row_node final : public filter_node {
 public:
  row_node(const row_filter& f, bool reversed) : f_(f), reversed_(reversed) {}
  void reset() override { out_ = false; }
  bool filter_row_key(std::string_view row) override {
    if (filtered_out(f_.op, compare_with(f_.cmp, row))) out_ = true;
    return out_;
  }
  filter_rc filter_cell(const cell_view&) override { return out_ ? filter_rc::next_row : filter_rc::include; }
  bool filter_row() override { return out_; }
  row_seek seek(std::string_view row) const override {
    if (f_.cmp.type() == comparator::kind::binary) return binary_seek(row, f_.op, f_.cmp.value(), reversed_);
    if (f_.cmp.type() == comparator::kind::binary_prefix && f_.op == compare_op::equal)
      return prefix_seek(row, f_.cmp.value(), reversed_);
    return here();
  }

 private:
  row_filter f_;
  bool reversed_;
  bool out_ = false;
};

class family_node final : public filter_node {
 public:
  explicit family_node(const family_filter& f) : f_(f) {}
  filter_rc filter_cell(const cell_view& c) override {
    if (!c.family.empty() && filtered_out(f_.op, compare_with(f_.cmp, c.family))) return filter_rc::next_row;
    return filter_rc::include;
  }

 private:
  family_filter f_;
};

class qualifier_node final : public filter_node {
 public:
  explicit qualifier_node(const qualifier_filter& f) : f_(f) {}
  filter_rc filter_cell(const cell_view& c) override {
    if (!c.qualifier.empty() && filtered_out(f_.op, compare_with(f_.cmp, c.qualifier))) return filter_rc::skip;
    return filter_rc::include;
  }

 private:
  qualifier_filter f_;
};

class value_node final : public filter_node {
 public:
  explicit value_node(const value_filter& f) : f_(f) {}
  filter_rc filter_cell(const cell_view& c) override {
    return filtered_out(f_.op, compare_with(f_.cmp, c.value)) ? filter_rc::skip : filter_rc::include;
  }

 private:
  value_filter f_;
};

// ---- row key filters ----------------------------------------------------------------------

class prefix_node final : public filter_node {
 public:
  prefix_node(std::string prefix, bool reversed) : prefix_(std::move(prefix)), reversed_(reversed) {}
  void reset() override { row_out_ = true; }
  bool filter_all_remaining() override { return passed_; }
  bool filter_row_key(std::string_view row) override {
    if (passed_) return true;
    if (row.size() < prefix_.size()) return true;
    const int c = row.compare(0, prefix_.size(), prefix_);
    if ((!reversed_ && c > 0) || (reversed_ && c < 0)) passed_ = true;
    row_out_ = c != 0;
    return row_out_;
  }
  filter_rc filter_cell(const cell_view&) override { return row_out_ ? filter_rc::next_row : filter_rc::include; }
  bool filter_row() override { return row_out_; }
  row_seek seek(std::string_view row) const override { return prefix_seek(row, prefix_, reversed_); }
  void save(std::string& out) const override { put_varint(out, passed_); }
  bool load(std::string_view& in) override { return get_flag(in, passed_); }

 private:
  std::string prefix_;
  bool reversed_;
  bool passed_ = false;
  bool row_out_ = true;
};

class inclusive_stop_node final : public filter_node {
 public:
  inclusive_stop_node(std::string stop, bool reversed) : stop_(std::move(stop)), reversed_(reversed) {}
  bool filter_all_remaining() override { return done_; }
  bool filter_row_key(std::string_view row) override {
    if (done_) return true;
    const int c = row.compare(stop_);
    done_ = reversed_ ? c < 0 : c > 0;
    return done_;
  }
  filter_rc filter_cell(const cell_view&) override { return done_ ? filter_rc::next_row : filter_rc::include; }
  row_seek seek(std::string_view row) const override {
    const int c = row.compare(stop_);
    return (reversed_ ? c >= 0 : c <= 0) ? here() : end();
  }
  void save(std::string& out) const override { put_varint(out, done_); }
  bool load(std::string_view& in) override { return get_flag(in, done_); }

 private:
  std::string stop_;
  bool reversed_;
  bool done_ = false;
};

class random_row_node final : public filter_node {
 public:
  explicit random_row_node(float chance) : chance_(chance), rng_(std::random_device{}()) {}
  void reset() override { out_ = false; }
  bool filter_row_key(std::string_view) override {
    if (chance_ < 0)
      out_ = true;
    else if (chance_ > 1)
      out_ = false;
    else
      out_ = !(std::uniform_real_distribution<float>(0.0f, 1.0f)(rng_) < chance_);
    return out_;
  }
  filter_rc filter_cell(const cell_view&) override { return out_ ? filter_rc::next_row : filter_rc::include; }
  bool has_filter_row() const override { return true; }
  bool filter_row() override { return out_; }

 private:
  float chance_;
  std::minstd_rand rng_;
  bool out_ = false;
};

class page_node final : public filter_node {
 public:
  explicit page_node(std::int64_t size) : size_(size) {}
  bool filter_all_remaining() override { return accepted_ >= size_; }
  bool filter_row_key(std::string_view) override { return filter_all_remaining(); }
  filter_rc filter_cell(const cell_view&) override { return filter_rc::include; }
  bool has_filter_row() const override { return true; }
  bool filter_row() override { return ++accepted_ > size_; }
  void save(std::string& out) const override { put_varint(out, static_cast<std::uint64_t>(accepted_)); }
  bool load(std::string_view& in) override {
    std::uint64_t v;
    if (!get_varint(in, v)) return false;
    accepted_ = static_cast<std::int64_t>(v);
    return true;
  }

 private:
  std::int64_t size_;
  std::int64_t accepted_ = 0;
};

// Rows in any of the ranges, merged where they overlap or touch.
class multi_row_range_node final : public filter_node {
 public:
  multi_row_range_node(std::vector<row_range> ranges, bool reversed)
      : ranges_(merge_row_ranges(std::move(ranges))), reversed_(reversed) {}
  bool filter_all_remaining() override { return done_; }
  bool filter_row_key(std::string_view row) override {
    if (done_) return true;
    auto s = seek(row);
    in_range_ = s.w == row_seek::what::here;
    if (s.w == row_seek::what::end) done_ = true;
    return !in_range_;
  }
  filter_rc filter_cell(const cell_view&) override { return in_range_ ? filter_rc::include : filter_rc::next_row; }
  row_seek seek(std::string_view row) const override {
    // The first range not entirely before `row` (ranges are disjoint and sorted).
    auto it = std::partition_point(ranges_.begin(), ranges_.end(), [&](const row_range& r) { return before(r, row); });
    if (!reversed_) {
      if (it == ranges_.end()) return end();
      if (contains(*it, row)) return here();
      return skip_to(it->start, it->start_inclusive);
    }
    if (it != ranges_.end() && contains(*it, row)) return here();
    if (it == ranges_.begin()) return end();
    --it;  // entirely before `row`, so its stop is bounded
    return skip_to(it->stop, it->stop_inclusive);
  }
  void save(std::string& out) const override { put_varint(out, done_); }
  bool load(std::string_view& in) override { return get_flag(in, done_); }

 private:
  static bool contains(const row_range& r, std::string_view row) {
    const int a = r.start.empty() ? 1 : row.compare(r.start);
    if (a < 0 || (a == 0 && !r.start_inclusive)) return false;
    if (r.stop.empty()) return true;
    const int b = row.compare(r.stop);
    return b < 0 || (b == 0 && r.stop_inclusive);
  }
  // Every row of `r` is below `row`.
  static bool before(const row_range& r, std::string_view row) {
    if (r.stop.empty()) return false;
    const int b = row.compare(r.stop);
    return b > 0 || (b == 0 && !r.stop_inclusive);
  }
  std::vector<row_range> ranges_;
  bool reversed_;
  bool done_ = false;
  bool in_range_ = false;
};

// Mask byte 0: fixed, 1: any byte. A row shorter than a key matches when its bytes match
// (HBase compares the first min(row, key) bytes).
class fuzzy_row_node final : public filter_node {
 public:
  fuzzy_row_node(std::vector<fuzzy_key> keys, bool reversed) : keys_(std::move(keys)), reversed_(reversed) {}
  void reset() override { row_out_ = false; }
  bool filter_all_remaining() override { return done_; }
  filter_rc filter_cell(const cell_view& c) override {
    for (const auto& k : keys_)
      if (satisfies(c.row, k)) return filter_rc::include;
    row_out_ = true;
    return filter_rc::seek_next_using_hint;
  }
  bool filter_row() override { return row_out_; }
  std::optional<cell_hint> next_cell_hint(const cell_view& c) override {
    if (reversed_) return cell_hint{cell_hint::at::first_on_row, {}, {}, {}, 0};  // another row: walk
    auto next = next_candidate(c.row);
    if (!next) {
      done_ = true;
      return std::nullopt;
    }
    return cell_hint{cell_hint::at::first_on_row, std::move(*next), {}, {}, 0};
  }
  row_seek seek(std::string_view row) const override {
    if (reversed_) return here();
    for (const auto& k : keys_)
      if (satisfies(row, k)) return here();
    auto next = next_candidate(row);
    return next ? skip_to(*next, true) : end();
  }
  void save(std::string& out) const override { put_varint(out, done_); }
  bool load(std::string_view& in) override { return get_flag(in, done_); }

 private:
  static bool satisfies(std::string_view row, const fuzzy_key& k) {
    const std::size_t n = std::min(row.size(), k.key.size());
    for (std::size_t i = 0; i < n; ++i)
      if (k.mask[i] == 0 && row[i] != k.key[i]) return false;
    return true;
  }
  std::optional<std::string> next_candidate(std::string_view row) const {
    std::optional<std::string> best;
    for (const auto& k : keys_)
      if (auto n = fuzzy_next_row(row, k); n && (!best || *n < *best)) best = std::move(n);
    return best;
  }

  std::vector<fuzzy_key> keys_;
  bool reversed_;
  bool done_ = false;
  bool row_out_ = false;
};

// ---- column filters -----------------------------------------------------------------------

class column_prefix_node final : public filter_node {
 public:
  explicit column_prefix_node(std::string prefix) : prefix_(std::move(prefix)) {}
  filter_rc filter_cell(const cell_view& c) override {
    const std::string_view q = c.qualifier;
    if (q.size() < prefix_.size()) {
      const int cmp = q.compare(std::string_view(prefix_).substr(0, q.size()));
      return cmp <= 0 ? filter_rc::seek_next_using_hint : filter_rc::next_row;
    }
    const int cmp = q.compare(0, prefix_.size(), prefix_);
    if (cmp < 0) return filter_rc::seek_next_using_hint;
    return cmp > 0 ? filter_rc::next_row : filter_rc::include;
  }
  std::optional<cell_hint> next_cell_hint(const cell_view& c) override { return hint_at_column(c, prefix_); }

 private:
  std::string prefix_;
};

class multiple_column_prefix_node final : public filter_node {
 public:
  explicit multiple_column_prefix_node(std::vector<std::string> prefixes) : sorted_(std::move(prefixes)) {
    std::sort(sorted_.begin(), sorted_.end());
  }
  filter_rc filter_cell(const cell_view& c) override {
    if (sorted_.empty()) return filter_rc::include;
    const std::string_view q = c.qualifier;
    // Prefixes <= q; the largest of them.
    auto up = std::upper_bound(sorted_.begin(), sorted_.end(), q,
                               [](std::string_view a, const std::string& b) { return a < b; });
    if (up == sorted_.begin()) {
      hint_ = sorted_.front();
      return filter_rc::seek_next_using_hint;
    }
    const std::string& largest = *std::prev(up);
    if (starts_with(q, largest)) return filter_rc::include;
    if (up == sorted_.end()) return filter_rc::next_row;
    hint_ = *up;
    return filter_rc::seek_next_using_hint;
  }
  std::optional<cell_hint> next_cell_hint(const cell_view& c) override { return hint_at_column(c, hint_); }

 private:
  std::vector<std::string> sorted_;
  std::string hint_;
};

class column_range_node final : public filter_node {
 public:
  explicit column_range_node(const column_range_filter& f) : f_(f) {}
  filter_rc filter_cell(const cell_view& c) override {
    int cmp_min = 1;
    if (!f_.min.empty()) cmp_min = c.qualifier.compare(f_.min);
    if (cmp_min < 0) return filter_rc::seek_next_using_hint;
    if (!f_.min_inclusive && cmp_min == 0) return filter_rc::next_col;
    if (f_.max.empty()) return filter_rc::include;
    const int cmp_max = c.qualifier.compare(f_.max);
    if ((f_.max_inclusive && cmp_max <= 0) || (!f_.max_inclusive && cmp_max < 0)) return filter_rc::include;
    return filter_rc::next_row;
  }
  std::optional<cell_hint> next_cell_hint(const cell_view& c) override { return hint_at_column(c, f_.min); }

 private:
  column_range_filter f_;
};

class column_count_get_node final : public filter_node {
 public:
  explicit column_count_get_node(std::int32_t limit) : limit_(limit) {}
  void reset() override { count_ = 0; }
  bool filter_all_remaining() override { return count_ > limit_; }
  bool filter_row_key(std::string_view) override { return filter_all_remaining(); }
  filter_rc filter_cell(const cell_view&) override {
    ++count_;
    return filter_all_remaining() ? filter_rc::next_col : filter_rc::include_and_next_col;
  }

 private:
  std::int64_t limit_;
  std::int64_t count_ = 0;
};

class column_pagination_node final : public filter_node {
 public:
  explicit column_pagination_node(const column_pagination_filter& f) : f_(f) {}
  void reset() override { count_ = 0; }
  filter_rc filter_cell(const cell_view& c) override {
    if (f_.column_offset) {
      if (count_ >= f_.limit) return filter_rc::next_row;
      int cmp = 0;
      if (count_ == 0) cmp = c.qualifier.compare(*f_.column_offset);  // only before the first column
      if (cmp < 0) return filter_rc::seek_next_using_hint;
      ++count_;
      return filter_rc::include_and_next_col;
    }
    if (count_ >= static_cast<std::int64_t>(f_.offset) + f_.limit) return filter_rc::next_row;
    const filter_rc rc = count_ < f_.offset ? filter_rc::next_col : filter_rc::include_and_next_col;
    ++count_;
    return rc;
  }
  std::optional<cell_hint> next_cell_hint(const cell_view& c) override {
    return hint_at_column(c, f_.column_offset ? *f_.column_offset : std::string());
  }

 private:
  column_pagination_filter f_;
  std::int64_t count_ = 0;
};

class timestamps_node final : public filter_node {
 public:
  explicit timestamps_node(const timestamps_filter& f) : ts_(f.timestamps), can_hint_(f.can_hint) {
    std::sort(ts_.begin(), ts_.end());
    ts_.erase(std::unique(ts_.begin(), ts_.end()), ts_.end());
  }
  filter_rc filter_cell(const cell_view& c) override {
    if (std::binary_search(ts_.begin(), ts_.end(), c.ts)) return filter_rc::include;
    if (ts_.empty() || c.ts < ts_.front()) return filter_rc::next_col;
    return can_hint_ ? filter_rc::seek_next_using_hint : filter_rc::skip;
  }
  std::optional<cell_hint> next_cell_hint(const cell_view& c) override {
    if (!can_hint_) return std::nullopt;
    auto it = std::lower_bound(ts_.begin(), ts_.end(), c.ts);  // the next wanted timestamp below c.ts
    if (it == ts_.begin())
      return cell_hint{cell_hint::at::last_on_column, std::string(c.row), std::string(c.family),
                       std::string(c.qualifier), 0};
    return cell_hint{cell_hint::at::column_version, std::string(c.row), std::string(c.family), std::string(c.qualifier),
                     *std::prev(it)};
  }

 private:
  std::vector<std::int64_t> ts_;
  bool can_hint_;
};

// ---- whole-row filters --------------------------------------------------------------------

template <class Spec>
class column_value_check_node final : public filter_node {
 public:
  explicit column_value_check_node(const Spec& f) : f_(f) {}
  void reset() override { found_ = matched_ = false; }
  filter_rc filter_cell(const cell_view& c) override {
    if (matched_) return filter_rc::include;
    if (f_.latest_version_only && found_) return filter_rc::next_row;
    if (c.family != f_.family || c.qualifier != f_.qualifier) return filter_rc::include;
    found_ = true;
    if (filtered_out(f_.op, compare_with(f_.cmp, c.value)))
      return f_.latest_version_only ? filter_rc::next_row : filter_rc::include;
    matched_ = true;
    return filter_rc::include;
  }
  bool has_filter_row() const override { return true; }
  bool filter_row() override { return found_ ? !matched_ : f_.filter_if_missing; }
  void filter_row_cells(std::vector<cell>& cells) override {
    if constexpr (std::is_same_v<Spec, single_column_value_exclude_filter>)
      std::erase_if(cells, [&](const cell& x) { return x.family == f_.family && x.qualifier == f_.qualifier; });
  }

 private:
  Spec f_;
  bool found_ = false;
  bool matched_ = false;
};

class column_value_node final : public filter_node {
 public:
  explicit column_value_node(const column_value_filter& f) : f_(f) {}
  void reset() override { found_ = false; }
  filter_rc filter_cell(const cell_view& c) override {
    if (c.family != f_.family || c.qualifier != f_.qualifier) return found_ ? filter_rc::next_row : filter_rc::next_col;
    found_ = true;
    return filtered_out(f_.op, compare_with(f_.cmp, c.value)) ? filter_rc::skip : filter_rc::include;
  }

 private:
  column_value_filter f_;
  bool found_ = false;
};

class dependent_column_node final : public filter_node {
 public:
  explicit dependent_column_node(const dependent_column_filter& f) : f_(f) {}
  void reset() override { stamps_.clear(); }
  filter_rc filter_cell(const cell_view& c) override {
    if (c.family != f_.family || c.qualifier != f_.qualifier) return filter_rc::include;  // decided in filter_row_cells
    if (f_.cmp && filtered_out(f_.op, compare_with(*f_.cmp, c.value))) return filter_rc::skip;
    stamps_.push_back(c.ts);
    return f_.drop_dependent_column ? filter_rc::skip : filter_rc::include;
  }
  void filter_row_cells(std::vector<cell>& cells) override {
    std::erase_if(cells, [&](const cell& x) {
      return std::find(stamps_.begin(), stamps_.end(), x.timestamp) == stamps_.end();
    });
  }
  bool has_filter_row() const override { return true; }

 private:
  dependent_column_filter f_;
  std::vector<std::int64_t> stamps_;
};

class first_key_only_node final : public filter_node {
 public:
  void reset() override { found_ = false; }
  filter_rc filter_cell(const cell_view&) override {
    if (found_) return filter_rc::next_row;
    found_ = true;
    return filter_rc::include;
  }

 private:
  bool found_ = false;
};

class key_only_node final : public filter_node {
 public:
  explicit key_only_node(bool len_as_val) : len_as_val_(len_as_val) {}
  filter_rc filter_cell(const cell_view&) override { return filter_rc::include; }
  void transform_cell(cell& c) override {
    if (!len_as_val_) {
      c.value.clear();
      return;
    }
    const auto n = static_cast<std::uint32_t>(c.value.size());
    c.value = {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n)};
  }

 private:
  bool len_as_val_;
};

// ---- wrappers and lists -------------------------------------------------------------------

class skip_node final : public filter_node {
 public:
  explicit skip_node(std::unique_ptr<filter_node> inner) : inner_(std::move(inner)) {}
  void reset() override {
    inner_->reset();
    out_ = false;
  }
  filter_rc filter_cell(const cell_view& c) override {
    const filter_rc rc = inner_->filter_cell(c);
    out_ = out_ || rc != filter_rc::include;
    return rc;
  }
  void transform_cell(cell& c) override { inner_->transform_cell(c); }
  bool has_filter_row() const override { return true; }
  bool filter_row() override { return out_; }
  void save(std::string& out) const override { inner_->save(out); }
  bool load(std::string_view& in) override { return inner_->load(in); }

 private:
  std::unique_ptr<filter_node> inner_;
  bool out_ = false;
};

class while_match_node final : public filter_node {
 public:
  explicit while_match_node(std::unique_ptr<filter_node> inner) : inner_(std::move(inner)) {}
  void reset() override { inner_->reset(); }
  bool filter_all_remaining() override { return done_ || inner_->filter_all_remaining(); }
  bool filter_row_key(std::string_view row) override {
    if (filter_all_remaining()) return true;
    const bool v = inner_->filter_row_key(row);
    done_ = done_ || v;
    return v;
  }
  filter_rc filter_cell(const cell_view& c) override {
    const filter_rc rc = inner_->filter_cell(c);
    done_ = done_ || rc != filter_rc::include;
    return rc;
  }
  void transform_cell(cell& c) override { inner_->transform_cell(c); }
  bool has_filter_row() const override { return true; }
  bool filter_row() override {
    const bool v = inner_->filter_row();
    done_ = done_ || v;
    return v;
  }
  void save(std::string& out) const override {
    put_varint(out, done_);
    inner_->save(out);
  }
  bool load(std::string_view& in) override { return get_flag(in, done_) && inner_->load(in); }

 private:
  std::unique_ptr<filter_node> inner_;
  bool done_ = false;
};

class list_node : public filter_node {
 public:
  list_node(std::vector<std::unique_ptr<filter_node>> children, bool reversed)
      : children_(std::move(children)), reversed_(reversed) {}
  void filter_row_cells(std::vector<cell>& cells) override {
    for (auto& c : children_) c->filter_row_cells(cells);
  }
  bool has_filter_row() const override {
    return std::any_of(children_.begin(), children_.end(), [](const auto& c) { return c->has_filter_row(); });
  }
  void save(std::string& out) const override {
    for (const auto& c : children_) c->save(out);
  }
  bool load(std::string_view& in) override {
    for (auto& c : children_)
      if (!c->load(in)) return false;
    return true;
  }

 protected:
  std::vector<std::unique_ptr<filter_node>> children_;
  bool reversed_;
};

// FilterListWithAND (HBase 2.x, with HBASE-20565: a cell goes on to the next filter only
// while every filter so far includes it).
class and_node final : public list_node {
 public:
  using list_node::list_node;
  void reset() override {
    for (auto& c : children_) c->reset();
    hinting_.clear();
  }
  bool filter_all_remaining() override {
    return std::any_of(children_.begin(), children_.end(), [](const auto& c) { return c->filter_all_remaining(); });
  }
  bool filter_row_key(std::string_view row) override {
    bool out = false;
    for (auto& c : children_)
      if (c->filter_all_remaining() || c->filter_row_key(row)) out = true;  // every filter sees the row
    return out;
  }
  filter_rc filter_cell(const cell_view& cell) override {
    filter_rc rc = filter_rc::include;
    hinting_.clear();
    for (auto& c : children_) {
      if (c->filter_all_remaining()) return filter_rc::next_row;
      const filter_rc local = c->filter_cell(cell);
      if (local == filter_rc::seek_next_using_hint) hinting_.push_back(c.get());
      rc = merge(rc, local);
      if (!include_related(rc)) return rc;
    }
    return hinting_.empty() ? rc : filter_rc::seek_next_using_hint;
  }
  void transform_cell(cell& x) override {
    for (auto& c : children_) c->transform_cell(x);
  }
  bool filter_row() override {
    for (auto& c : children_)
      if (c->filter_row()) return true;
    return false;
  }
  std::optional<cell_hint> next_cell_hint(const cell_view& cell) override {
    std::optional<cell_hint> best;
    for (auto* c : hinting_) {
      if (c->filter_all_remaining()) continue;
      auto h = c->next_cell_hint(cell);
      if (!h) continue;
      if (!best || compare_hints(*best, *h, reversed_) < 0) best = std::move(h);
    }
    return best;
  }
  row_seek seek(std::string_view row) const override {
    row_seek best = here();
    for (const auto& c : children_) {
      row_seek s = c->seek(row);
      if (s.w == row_seek::what::end) return s;
      if (s.w == row_seek::what::skip_to && (best.w == row_seek::what::here || further(s, best, reversed_)))
        best = std::move(s);
    }
    return best;
  }

 private:
  // The Maximal Step Rule.
  static filter_rc merge(filter_rc rc, filter_rc local) {
    using r = filter_rc;
    if (rc == r::seek_next_using_hint || local == r::seek_next_using_hint) return r::seek_next_using_hint;
    switch (local) {
      case r::include: return rc;
      case r::include_and_next_col:
        if (rc == r::include || rc == r::include_and_next_col) return r::include_and_next_col;
        if (rc == r::include_and_seek_next_row) return r::include_and_seek_next_row;
        if (rc == r::skip || rc == r::next_col) return r::next_col;
        return r::next_row;
      case r::include_and_seek_next_row:
        if (include_related(rc)) return r::include_and_seek_next_row;
        return r::next_row;
      case r::skip:
        if (rc == r::include || rc == r::skip) return r::skip;
        if (rc == r::include_and_next_col || rc == r::next_col) return r::next_col;
        return r::next_row;
      case r::next_col:
        if (rc == r::include_and_seek_next_row || rc == r::next_row) return r::next_row;
        return r::next_col;
      case r::next_row: return r::next_row;
      case r::seek_next_using_hint: return r::seek_next_using_hint;
    }
    return r::next_row;
  }

  std::vector<filter_node*> hinting_;
};

// FilterListWithOR (HBase 2.x, with HBASE-17678: a filter that asked to skip the rest of a
// column or row is not asked again about the cells it skips).
class or_node final : public list_node {
 public:
  or_node(std::vector<std::unique_ptr<filter_node>> children, bool reversed)
      : list_node(std::move(children), reversed), prev_(children_.size()), included_(children_.size(), false) {}
  void reset() override {
    for (std::size_t i = 0; i < children_.size(); ++i) {
      children_[i]->reset();
      included_[i] = false;
      prev_[i].reset();
    }
  }
  bool filter_all_remaining() override {
    return std::all_of(children_.begin(), children_.end(), [](const auto& c) { return c->filter_all_remaining(); });
  }
  bool filter_row_key(std::string_view row) override {
    bool out = true;
    for (auto& c : children_)
      if (!c->filter_all_remaining() && !c->filter_row_key(row)) out = false;  // every filter sees the row
    return out;
  }
  filter_rc filter_cell(const cell_view& cell) override {
    std::optional<filter_rc> rc;
    for (std::size_t i = 0; i < children_.size(); ++i) {
      auto& c = children_[i];
      included_[i] = false;
      if (c->filter_all_remaining()) continue;
      std::optional<filter_rc> local = from_previous(i, cell);
      if (!local) local = c->filter_cell(cell);
      if (*local == filter_rc::include || *local == filter_rc::skip)
        prev_[i].reset();
      else
        prev_[i] =
            previous{*local, std::string(cell.row), std::string(cell.family), std::string(cell.qualifier), cell.ts};
      rc = rc ? merge(*rc, *local) : *local;
      if (include_related(*local)) included_[i] = true;
    }
    return rc.value_or(filter_rc::skip);
  }
  void transform_cell(cell& x) override {
    for (std::size_t i = 0; i < children_.size(); ++i)
      if (included_[i]) children_[i]->transform_cell(x);
  }
  bool filter_row() override {
    for (auto& c : children_)
      if (!c->filter_row()) return false;
    return true;
  }
  std::optional<cell_hint> next_cell_hint(const cell_view& cell) override {
    std::optional<cell_hint> best;
    for (auto& c : children_) {
      if (c->filter_all_remaining()) continue;
      auto h = c->next_cell_hint(cell);
      if (!h) return std::nullopt;
      if (!best || compare_hints(*best, *h, reversed_) > 0) best = std::move(h);
    }
    return best;
  }
  row_seek seek(std::string_view row) const override {
    row_seek best = end();
    for (const auto& c : children_) {
      row_seek s = c->seek(row);
      if (s.w == row_seek::what::here) return s;
      if (s.w == row_seek::what::skip_to && (best.w == row_seek::what::end || further(best, s, reversed_)))
        best = std::move(s);
    }
    return best;
  }

 private:
  struct previous {
    filter_rc rc;
    std::string row, family, qualifier;
    std::int64_t ts;
  };

  std::optional<filter_rc> from_previous(std::size_t i, const cell_view& cell) {
    if (!prev_[i]) return std::nullopt;
    const previous& p = *prev_[i];
    switch (p.rc) {
      case filter_rc::seek_next_using_hint: {
        auto h = children_[i]->next_cell_hint(cell_view{p.row, p.family, p.qualifier, p.ts, {}});
        if (h && compare_to_hint(cell, *h, reversed_) < 0) return filter_rc::seek_next_using_hint;
        return std::nullopt;
      }
      case filter_rc::next_col:
      case filter_rc::include_and_next_col:
        if (cell.family == p.family && cell.qualifier == p.qualifier) return filter_rc::next_col;
        return std::nullopt;
      case filter_rc::next_row:
      case filter_rc::include_and_seek_next_row:
        if (cell.family == p.family) return filter_rc::next_row;
        return std::nullopt;
      default: return std::nullopt;
    }
  }

  // The Minimal Step Rule.
  static filter_rc merge(filter_rc rc, filter_rc local) {
    using r = filter_rc;
    switch (local) {
      case r::include: return r::include;
      case r::include_and_next_col:
        if (rc == r::include || rc == r::skip || rc == r::seek_next_using_hint) return r::include;
        return r::include_and_next_col;
      case r::include_and_seek_next_row:
        if (rc == r::include || rc == r::skip || rc == r::seek_next_using_hint) return r::include;
        if (rc == r::include_and_next_col || rc == r::next_col) return r::include_and_next_col;
        return r::include_and_seek_next_row;
      case r::skip:
        if (include_related(rc)) return r::include;
        return r::skip;
      case r::next_col:
        if (rc == r::include) return r::include;
        if (rc == r::next_col || rc == r::next_row) return r::next_col;
        if (rc == r::include_and_next_col || rc == r::include_and_seek_next_row) return r::include_and_next_col;
        return r::skip;
      case r::next_row:
        if (rc == r::skip || rc == r::seek_next_using_hint) return r::skip;
        return rc;
      case r::seek_next_using_hint:
        if (include_related(rc)) return r::include;
        if (rc == r::seek_next_using_hint) return r::seek_next_using_hint;
        return r::skip;
    }
    return r::skip;
  }

  std::vector<std::optional<previous>> prev_;
  std::vector<bool> included_;
};

// ---- compiling ---------------------------------------------------------------------------

std::unique_ptr<filter_node> build(const filter& f, bool reversed) {
  return std::visit(
      [&](const auto& x) -> std::unique_ptr<filter_node> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, row_filter>)
          return std::make_unique<row_node>(x, reversed);
        else if constexpr (std::is_same_v<T, family_filter>)
          return std::make_unique<family_node>(x);
        else if constexpr (std::is_same_v<T, qualifier_filter>)
          return std::make_unique<qualifier_node>(x);
        else if constexpr (std::is_same_v<T, value_filter>)
          return std::make_unique<value_node>(x);
        else if constexpr (std::is_same_v<T, prefix_filter>)
          return std::make_unique<prefix_node>(x.prefix, reversed);
        else if constexpr (std::is_same_v<T, column_prefix_filter>)
          return std::make_unique<column_prefix_node>(x.prefix);
        else if constexpr (std::is_same_v<T, multiple_column_prefix_filter>)
          return std::make_unique<multiple_column_prefix_node>(x.prefixes);
        else if constexpr (std::is_same_v<T, column_range_filter>)
          return std::make_unique<column_range_node>(x);
        else if constexpr (std::is_same_v<T, column_count_get_filter>)
          return std::make_unique<column_count_get_node>(x.limit);
        else if constexpr (std::is_same_v<T, column_pagination_filter>)
          return std::make_unique<column_pagination_node>(x);
        else if constexpr (std::is_same_v<T, page_filter>)
          return std::make_unique<page_node>(x.page_size);
        else if constexpr (std::is_same_v<T, single_column_value_filter> ||
                           std::is_same_v<T, single_column_value_exclude_filter>)
          return std::make_unique<column_value_check_node<T>>(x);
        else if constexpr (std::is_same_v<T, column_value_filter>)
          return std::make_unique<column_value_node>(x);
        else if constexpr (std::is_same_v<T, dependent_column_filter>)
          return std::make_unique<dependent_column_node>(x);
        else if constexpr (std::is_same_v<T, first_key_only_filter>)
          return std::make_unique<first_key_only_node>();
        else if constexpr (std::is_same_v<T, key_only_filter>)
          return std::make_unique<key_only_node>(x.len_as_val);
        else if constexpr (std::is_same_v<T, inclusive_stop_filter>)
          return std::make_unique<inclusive_stop_node>(x.stop_row, reversed);
        else if constexpr (std::is_same_v<T, timestamps_filter>)
          return std::make_unique<timestamps_node>(x);
        else if constexpr (std::is_same_v<T, random_row_filter>)
          return std::make_unique<random_row_node>(x.chance);
        else if constexpr (std::is_same_v<T, skip_filter>)
          return std::make_unique<skip_node>(build(x.inner, reversed));
        else if constexpr (std::is_same_v<T, while_match_filter>)
          return std::make_unique<while_match_node>(build(x.inner, reversed));
        else if constexpr (std::is_same_v<T, filter_list>) {
          std::vector<std::unique_ptr<filter_node>> children;
          for (const auto& c : x.filters) children.push_back(build(c, reversed));
          if (x.operation == filter_list::op::must_pass_all)
            return std::make_unique<and_node>(std::move(children), reversed);
          return std::make_unique<or_node>(std::move(children), reversed);
        } else if constexpr (std::is_same_v<T, multi_row_range_filter>)
          return std::make_unique<multi_row_range_node>(x.ranges, reversed);
        else
          return std::make_unique<fuzzy_row_node>(x.keys, reversed);
      },
      f.body());
}

// Whether seek() can say more than `here`.
bool can_seek(const filter& f) {
  return std::visit(
      [](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, prefix_filter> || std::is_same_v<T, inclusive_stop_filter> ||
                      std::is_same_v<T, multi_row_range_filter> || std::is_same_v<T, fuzzy_row_filter>) {
          return true;
        } else if constexpr (std::is_same_v<T, row_filter>) {
          return (x.cmp.type() == comparator::kind::binary && x.op != compare_op::not_equal) ||
                 (x.cmp.type() == comparator::kind::binary_prefix && x.op == compare_op::equal);
        } else if constexpr (std::is_same_v<T, filter_list>) {
          if (x.operation == filter_list::op::must_pass_all)
            return std::any_of(x.filters.begin(), x.filters.end(), can_seek);
          return std::all_of(x.filters.begin(), x.filters.end(), can_seek);
        } else {
          return false;
        }
      },
      f.body());
}

bool has_while_match(const filter& f) {
  return std::visit(
      [](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, while_match_filter>)
          return true;
        else if constexpr (std::is_same_v<T, skip_filter>)
          return has_while_match(x.inner);
        else if constexpr (std::is_same_v<T, filter_list>)
          return std::any_of(x.filters.begin(), x.filters.end(), has_while_match);
        else
          return false;
      },
      f.body());
}

}  // namespace

compiled_filter compile_filter(const filter& f, bool reversed) {
  return {build(f, reversed), can_seek(f) && !has_while_match(f)};
}

}  // namespace cellar::detail
