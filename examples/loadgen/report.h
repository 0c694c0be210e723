// loadgen/report.h: a run's measurements, their JSON form and the SVG plots.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "histogram.h"
#include "ycsb.h"

namespace loadgen {

inline constexpr std::size_t op_kinds = static_cast<std::size_t>(op_kind::count_);

struct op_stats {
  histogram service;   // from send to answer
  histogram intended;  // from the scheduled start to answer (only with a target rate)
  std::uint64_t errors = 0;
  std::uint64_t rows = 0;  // scans: rows returned
  void merge(const op_stats& o) {
    service.merge(o.service);
    intended.merge(o.intended);
    errors += o.errors;
    rows += o.rows;
  }
};

// One second of the run: per operation, latencies (service time).
struct interval_stats {
  std::array<std::unique_ptr<histogram>, op_kinds> ops;
  histogram& at(op_kind k) {
    auto& p = ops[static_cast<std::size_t>(k)];
    if (!p) p = std::make_unique<histogram>();
    return *p;
  }
};

struct run_stats {
  std::array<op_stats, op_kinds> ops;
  op_stats total;  // every operation once (an rmw's READ and UPDATE halves are in `ops` only)
  std::vector<interval_stats> seconds;
  void merge(run_stats& o);
};

// The percentiles reported and the points of the CDF (HdrHistogram's percentile spectrum).
nlohmann::json summary_json(const histogram& h);
nlohmann::json spectrum_json(const histogram& h);

// Plots from result files (as written by the loadgen): `series` are (label, json) pairs.
// kind "cdf": latency by percentile (log scale both ways, HdrHistogram style);
// kind "time": p50 and p99 latency per second.
std::string svg_plot(const std::string& kind, const std::string& title,
                     const std::vector<std::pair<std::string, nlohmann::json>>& series);

}  // namespace loadgen
