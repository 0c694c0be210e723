#include "cluster/routed_scan.h"

#include <algorithm>
#include <deque>
#include <future>
#include <optional>
#include <utility>

#include "model/filter_eval.h"
#include "rpc/scoped_scan.h"

namespace cellar::cluster {

namespace {

// A node's stream of the scan, with the rows it gave that the merge has not passed on.
struct source {
  std::string node;
  std::shared_ptr<node_link> link;
  std::unique_ptr<rpc::scoped_stream> s;  // touched on the link's thread only; null once over
  std::deque<row_result> rows;
  bool over = false;                    // nothing more comes from s
  std::optional<std::string> last_row;  // the last row s gave
};

// What one refill of a node's stream brought.
struct fetched {
  result<std::vector<row_result>> rows = std::vector<row_result>{};
  bool over = false;
  std::optional<scan_end> end;  // when over: where a filter ended the node's stream
};

status at_node(const status& s, const std::string& node) { return {s.code(), "node '" + node + "': " + s.message()}; }

class merged_stream final : public row_stream {
 public:
  merged_stream(const cellar::scan& spec, std::vector<source> sources)
      : reversed_(spec.reversed_), sources_(std::move(sources)) {
    limit_ = spec.limit_;
    if (spec.options.filter)
      if (auto page_limit = detail::filter_row_limit(*spec.options.filter))
        limit_ = limit_ < 0 ? *page_limit : std::min(limit_, *page_limit);
    page_ = static_cast<std::size_t>(std::clamp<std::int64_t>(spec.caching_ > 0 ? spec.caching_ : 100, 1, 10000));
  }

  ~merged_stream() override {
    for (auto& src : sources_) close(src);
  }

  result<std::vector<row_result>> next(std::size_t n) override {
    std::vector<row_result> out;
    while (out.size() < n) {
      if (current_ != nullptr) {  // the rest of a row split by batch / size: same stream
        source& src = *current_;
        if (src.rows.empty() && !src.over) {
          if (auto st = refill({&src}); !st) return st;
        }
        if (src.rows.empty()) {  // the stream ended inside a row (not sent by a server)
          current_ = nullptr;
          continue;
        }
        take(src, out);
        continue;
      }
      if (limit_ >= 0 && rows_out_ >= limit_) break;
      // Every live stream needs its next row before the pick: refill the empty ones.
      std::vector<source*> empty;
      for (auto& src : sources_)
        if (src.rows.empty() && !src.over) empty.push_back(&src);
      if (!empty.empty()) {
        if (auto st = refill(std::move(empty)); !st) return st;
        continue;
      }
      apply_end();
      source* best = nullptr;
      for (auto& src : sources_) {
        if (src.rows.empty()) continue;
        if (best == nullptr ||
            (reversed_ ? src.rows.front().row > best->rows.front().row : src.rows.front().row < best->rows.front().row))
          best = &src;
      }
      if (best == nullptr || beyond_end(best->rows.front().row)) break;
      ++rows_out_;
      take(*best, out);
    }
    return out;
  }

 private:
  bool beyond_end(const std::string& row) const {
    if (end_before_all_) return true;
    if (!end_) return false;
    return reversed_ ? row < *end_ : row > *end_;
  }

  // A stream's filter end: the earliest of all holds.
  void take_end(const scan_end& e) {
    if (e.before_all)
      end_before_all_ = true;
    else if (!beyond_end(e.row))
      end_ = e.row;
  }

  // Drops the buffered rows beyond the end, and stops the streams that can only give such
  // (rows come in scan order: after one beyond the end, all are).
  void apply_end() {
    if (!end_ && !end_before_all_) return;
    for (auto& src : sources_) {
      while (!src.rows.empty() && beyond_end(src.rows.back().row)) src.rows.pop_back();
      if (end_before_all_ || (src.rows.empty() && src.last_row && beyond_end(*src.last_row))) close(src);
    }
  }

  void take(source& src, std::vector<row_result>& out) {
    out.push_back(std::move(src.rows.front()));
    src.rows.pop_front();
    current_ = out.back().partial ? &src : nullptr;
  }

  // One page from each of `todo`, in parallel on their links.
  status refill(std::vector<source*> todo) {
    std::size_t want = page_;
    if (limit_ >= 0)
      want = std::min<std::size_t>(want, static_cast<std::size_t>(std::max<std::int64_t>(1, limit_ - rows_out_)));
    std::vector<std::future<fetched>> asked;
    asked.reserve(todo.size());
    for (auto* src : todo)
      asked.push_back(src->link->post([src, want](std::unique_ptr<connection>&) {
        fetched f;
        f.rows = src->s->next(want);
        f.over = !f.rows || f.rows->empty() || src->s->over();
        if (f.over) {
          if (f.rows) f.end = src->s->filter_end();
          src->s.reset();  // on its thread; the server's scanner goes with it
        }
        return f;
      }));
    status error;
    for (std::size_t i = 0; i < todo.size(); ++i) {
      auto f = asked[i].get();
      source& src = *todo[i];
      if (f.over) src.over = true;
      if (!f.rows) {
        if (error) error = at_node(f.rows.error(), src.node);
        continue;
      }
      if (!f.rows->empty()) src.last_row = f.rows->back().row;
      for (auto& r : *f.rows) src.rows.push_back(std::move(r));
      if (f.end) take_end(*f.end);
    }
    return error;
  }

  // Releases a stream (on its link's thread); its buffered rows stay.
  void close(source& src) {
    src.over = true;
    if (!src.s) return;
    src.link->call([&src](std::unique_ptr<connection>&) {
      src.s.reset();
      return 0;
    });
  }

  bool reversed_;
  std::vector<source> sources_;  // not resized: current_ points into it
  std::int64_t limit_ = -1;      // rows for the whole scan: scan::limit and a PageFilter's
  std::int64_t rows_out_ = 0;
  std::size_t page_ = 256;          // results asked of a stream per refill
  source* current_ = nullptr;       // the stream whose row was split and is not finished
  std::optional<std::string> end_;  // the earliest filter end: no row beyond it
  bool end_before_all_ = false;     // a filter ended the scan before every row
};

}  // namespace

result<std::unique_ptr<row_stream>> open_routed_scan(const std::string& table, const cellar::scan& s,
                                                     std::vector<scan_part> parts, std::string* failed_node) {
  using opened = result<std::unique_ptr<rpc::scoped_stream>>;
  std::vector<std::future<opened>> asked;
  asked.reserve(parts.size());
  for (auto& part : parts) {
    detail::scan_scope scope;
    scope.partitions = part.partitions;
    scope.no_forward = true;
    asked.push_back(part.link->post([&table, &s, scope = std::move(scope)](std::unique_ptr<connection>& c) -> opened {
      return rpc::scan_scoped(*c, table, s, scope);
    }));
  }
  std::vector<source> sources(parts.size());
  std::optional<std::pair<std::size_t, status>> failed;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto r = asked[i].get();
    sources[i].node = parts[i].node;
    sources[i].link = parts[i].link;
    if (r) {
      sources[i].s = std::move(r.value());
      continue;
    }
    // NOT_OWNER first: the caller re-reads the map for it, which may explain the others.
    if (!failed || (r.code() == code::not_owner && failed->second.code() != code::not_owner))
      failed.emplace(i, r.error());
  }
  if (failed) {
    for (auto& src : sources)
      if (src.s)
        src.link->call([&src](std::unique_ptr<connection>&) {
          src.s.reset();
          return 0;
        });
    if (failed_node != nullptr) *failed_node = parts[failed->first].node;
    return failed->second;
  }
  if (sources.size() == 1)
    return std::unique_ptr<row_stream>(new linked_stream(std::move(sources[0].link), std::move(sources[0].s)));
  return std::unique_ptr<row_stream>(new merged_stream(s, std::move(sources)));
}

}  // namespace cellar::cluster
