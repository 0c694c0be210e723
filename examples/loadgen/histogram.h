// loadgen/histogram.h: a log-bucket latency histogram in the manner of HdrHistogram.
//
// Values (nanoseconds) below 2^(P+1) have a bucket each; above, every power of two is
// split into 2^P linear sub-buckets, so a recorded value is known to within 1/2^P of
// itself (P = 7: 0.8 %). Recording is an index computation and an increment; merging is
// a sum; percentiles walk the counts. Up to 2^63 ns fits.
//
// Thread safety: none; keep one per thread and merge.
#pragma once

#include <cstdint>
#include <vector>

namespace loadgen {

class histogram {
 public:
  static constexpr int precision_bits = 7;
  static constexpr std::uint64_t sub_buckets = 1u << precision_bits;  // 128

  histogram();

  void record(std::uint64_t value) { record_n(value, 1); }
  void record_n(std::uint64_t value, std::uint64_t n);
  void merge(const histogram& other);
  void reset();

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  // The value at percentile p (0..100): the highest value equivalent to the bucket holding
  // the ceil(p/100 * count)-th smallest recorded value (at least rank 1), capped at max().
  std::uint64_t percentile(double p) const;

  // Bucket arithmetic, public for tests.
  static std::size_t index_of(std::uint64_t v);
  static std::uint64_t lowest_of(std::size_t index);
  static std::uint64_t highest_of(std::size_t index);
  static std::size_t bucket_count();

  // Non-empty buckets as (highest equivalent value, cumulative count), ascending.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> cumulative() const;

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0, sum_ = 0, min_ = ~0ull, max_ = 0;
};

}  // namespace loadgen
