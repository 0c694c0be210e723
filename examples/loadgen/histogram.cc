#include "histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace loadgen {

namespace {
constexpr std::uint64_t linear_limit = histogram::sub_buckets * 2;  // values below: one bucket each
}

std::size_t histogram::index_of(std::uint64_t v) {
  if (v < linear_limit) return static_cast<std::size_t>(v);
  const int msb = 63 - std::countl_zero(v);  // >= precision_bits + 1
  const int shift = msb - precision_bits;    // >= 1
  return static_cast<std::size_t>(shift + 1) * sub_buckets + static_cast<std::size_t>((v >> shift) - sub_buckets);
}

std::uint64_t histogram::lowest_of(std::size_t index) {
  if (index < linear_limit) return index;
  const std::size_t shift = index / sub_buckets - 1;
  const std::uint64_t sub = index % sub_buckets + sub_buckets;
  return sub << shift;
}

std::uint64_t histogram::highest_of(std::size_t index) {
  if (index < linear_limit) return index;
  const std::size_t shift = index / sub_buckets - 1;
  const std::uint64_t sub = index % sub_buckets + sub_buckets;
  return ((sub + 1) << shift) - 1;
}

std::size_t histogram::bucket_count() { return index_of(~0ull >> 1) + 1; }

histogram::histogram() : counts_(bucket_count(), 0) {}

void histogram::record_n(std::uint64_t value, std::uint64_t n) {
  value = std::min<std::uint64_t>(value, ~0ull >> 1);
  counts_[index_of(value)] += n;
  count_ += n;
  sum_ += value * n;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void histogram::merge(const histogram& o) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

void histogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = sum_ = max_ = 0;
  min_ = ~0ull;
}

std::uint64_t histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::min(highest_of(i), max_);
  }
  return max_;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> histogram::cumulative() const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (!counts_[i]) continue;
    seen += counts_[i];
    out.emplace_back(std::min(highest_of(i), max_), seen);
  }
  return out;
}

}  // namespace loadgen
