// store/reshape_forwarder.cc: the stand-in of a partition a split or merge replaced
// (store/reshape.h): batches go to the new partitions by row, scan pages are served from
// the new partitions that cover the old key range, in scan order, clipped to it.
#include <map>
#include <memory>

#include "route/router.h"
#include "store/reshape.h"

namespace cellar::detail {

std::pair<std::string, std::string> range_of(const std::vector<std::string>& bounds, std::uint32_t i) {
  std::string lo = i == 0 ? std::string() : bounds[i - 1];
  std::string hi = i < bounds.size() ? bounds[i] : std::string();
  return {std::move(lo), std::move(hi)};
}

namespace {

struct forward_state {
  runtime_ptr next;
  std::string lo, hi;  // the old partition's key range
  // The new partitions overlapping [lo, hi), ascending, each with its own range.
  struct target {
    std::uint32_t index;
    std::string lo, hi;
  };
  std::vector<target> targets;
};

// Whether key range [a_lo, a_hi) and [b_lo, b_hi) meet (empty: unbounded).
bool overlaps(const std::string& a_lo, const std::string& a_hi, const std::string& b_lo, const std::string& b_hi) {
  const bool a_before_b = !a_hi.empty() && !b_lo.empty() && a_hi <= b_lo;
  const bool b_before_a = !b_hi.empty() && !a_lo.empty() && b_hi <= a_lo;
  return !a_before_b && !b_before_a;
}

const std::string& max_low(const std::string& a, const std::string& b) { return a < b ? b : a; }
// The smaller upper bound, an empty one being unbounded.
const std::string& min_high(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a < b ? a : b;
}

// Narrows page request `p` to rows in [lo, hi).
void clip(scan_page_request& p, const std::string& lo, const std::string& hi) {
  if (!p.reversed) {
    if (!lo.empty() && (!p.from || *p.from < lo)) {
      p.from = lo;
      p.from_inclusive = true;
    }
    if (!hi.empty() && (p.stop.empty() || p.stop > hi || (p.stop == hi && p.stop_inclusive))) {
      p.stop = hi;
      p.stop_inclusive = false;
    }
  } else {
    if (!hi.empty() && (!p.from || *p.from > hi || (*p.from == hi && p.from_inclusive))) {
      p.from = hi;
      p.from_inclusive = false;
    }
    if (!lo.empty() && (p.stop.empty() || p.stop < lo)) {
      p.stop = lo;
      p.stop_inclusive = true;
    }
  }
}

// Whether target `t` holds nothing at or past the cursor of `p` in scan direction.
bool behind_cursor(const scan_page_request& p, const forward_state::target& t) {
  if (!p.from) return false;
  if (!p.reversed) return !t.hi.empty() && *p.from >= t.hi;
  return !t.lo.empty() && *p.from < t.lo;
}

struct scan_job {
  scan_request req;
  caf::typed_response_promise<scan_reply> rp;
  scan_reply acc;
  std::size_t k = 0;  // the next target, counted in scan direction
};

void scan_step(partition_actor::pointer self, std::shared_ptr<const forward_state> st, std::shared_ptr<scan_job> job) {
  const auto n = st->targets.size();
  const bool rev = job->req.page.reversed;
  while (job->k < n) {
    const auto& t = st->targets[rev ? n - 1 - job->k : job->k];
    if (!behind_cursor(job->req.page, t)) break;
    ++job->k;
  }
  if (job->k >= n) {
    job->acc.page.exhausted = true;
    job->rp.deliver(std::move(job->acc));
    return;
  }
  const auto& t = st->targets[rev ? n - 1 - job->k : job->k];
  scan_request sub = job->req;
  sub.schema_version = st->next->schema->version;
  sub.page.max_rows = job->req.page.max_rows - std::min(job->req.page.max_rows, job->acc.page.rows.size());
  if (sub.page.max_rows == 0) sub.page.max_rows = 1;
  sub.page.filter_state = job->acc.page.filter_state;
  clip(sub.page, max_low(st->lo, t.lo), min_high(st->hi, t.hi));
  self->request(st->next->partitions[t.index].actor, caf::infinite, std::move(sub))
      .then(
          [self, st, job](scan_reply& r) {
            if (!r.st) {
              job->rp.deliver(std::move(r));
              return;
            }
            auto& acc = job->acc.page;
            for (auto& row : r.page.rows) acc.rows.push_back(std::move(row));
            acc.filter_state = std::move(r.page.filter_state);
            if (r.page.examined_any) {
              acc.examined_any = true;
              acc.last_row = r.page.last_row;
            }
            if (r.page.filter_done || !r.page.exhausted) {
              acc.filter_done = r.page.filter_done;
              acc.exhausted = r.page.filter_done;
              job->rp.deliver(std::move(job->acc));
              return;
            }
            ++job->k;
            if (acc.rows.size() >= job->req.page.max_rows) {
              // The page is full; later targets may still hold rows (the scanner asks
              // again after last_row, which skips what is behind it).
              acc.exhausted = job->k >= st->targets.size();
              job->rp.deliver(std::move(job->acc));
              return;
            }
            scan_step(self, st, job);
          },
          [job](caf::error& e) {
            job->rp.deliver(
                scan_reply{status{code::unavailable, "a new partition did not answer: " + caf::to_string(e)}, {}});
          });
}

partition_actor::behavior_type forwarder(partition_actor::pointer self, std::shared_ptr<const forward_state> st) {
  return {
      [self, st](batch_request& r) -> caf::result<batch_reply> {
        auto rp = self->make_response_promise<batch_reply>();
        std::map<std::uint32_t, std::vector<std::size_t>> parts;
        for (std::size_t i = 0; i < r.ops.size(); ++i)
          parts[partition_of(st->next->schema->partitioning, row_of(r.ops[i]))].push_back(i);
        auto out = std::make_shared<batch_reply>();
        out->results.resize(r.ops.size());
        auto left = std::make_shared<std::size_t>(parts.size());
        if (parts.empty()) return batch_reply{};
        for (auto& [p, idx] : parts) {
          batch_request sub{st->next->schema->version, {}};
          for (auto i : idx) sub.ops.push_back(std::move(r.ops[i]));
          auto which = std::make_shared<std::vector<std::size_t>>(std::move(idx));
          self->request(st->next->partitions[p].actor, caf::infinite, std::move(sub))
              .then(
                  [out, left, which, rp](batch_reply& rep) mutable {
                    for (std::size_t k = 0; k < which->size() && k < rep.results.size(); ++k)
                      out->results[(*which)[k]] = std::move(rep.results[k]);
                    if (--*left == 0) rp.deliver(std::move(*out));
                  },
                  [out, left, which, rp](caf::error& e) mutable {
                    for (auto i : *which)
                      out->results[i].st = {code::unavailable, "a new partition did not answer: " + caf::to_string(e)};
                    if (--*left == 0) rp.deliver(std::move(*out));
                  });
        }
        return rp;
      },
      [self, st](scan_request& r) -> caf::result<scan_reply> {
        auto job = std::make_shared<scan_job>();
        job->req = std::move(r);
        job->rp = self->make_response_promise<scan_reply>();
        job->acc.st = status::ok();
        auto rp = job->rp;
        scan_step(self, st, job);
        return rp;
      },
      [](adopt_schema_request&) -> admin_reply { return {}; },
      [](drop_families_request&) -> admin_reply { return {}; },
      [](reclaim_request&) -> reclaim_reply { return {}; },
      [](stats_request&) -> stats_reply { return {}; },
      [](cut_request&) -> cut_reply { return {}; },
      [](merge_delta_request&) -> admin_reply { return {}; },
      [self](stop_request&) -> admin_reply {
        self->quit();
        return {};
      },
      [](move_request&) -> move_reply {
        return {status{code::unsupported, "this partition was split or merged; it is not moved"}, {}, {}, false};
      },
      [](handoff_request&) -> admin_reply { return {}; },
      [](tick_atom) {},
      [](log_synced_atom) {},
  };
}

}  // namespace

partition_actor spawn_reshape_forwarder(caf::actor_system& sys, runtime_ptr next, std::string lo, std::string hi) {
  auto st = std::make_shared<forward_state>();
  const auto& bounds = next->schema->partitioning.bounds;
  for (std::uint32_t i = 0; i < next->partitions.size(); ++i) {
    auto [tlo, thi] = range_of(bounds, i);
    if (overlaps(lo, hi, tlo, thi)) st->targets.push_back({i, std::move(tlo), std::move(thi)});
  }
  st->next = std::move(next);
  st->lo = std::move(lo);
  st->hi = std::move(hi);
  return sys.spawn(forwarder, std::shared_ptr<const forward_state>(st));
}

}  // namespace cellar::detail
