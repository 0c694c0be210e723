#include "ycsb.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace loadgen {

std::int64_t fnvhash64(std::int64_t val) {
  // YCSB: FNV_OFFSET_BASIS_64 = 0xCBF29CE484222325L, FNV_PRIME_64 = 1099511628211L;
  // 8 rounds of hash ^= (val & 0xff); hash *= prime; val >>= 8 (arithmetic shift).
  std::uint64_t h = 0xCBF29CE484222325ULL;
  std::uint64_t v = static_cast<std::uint64_t>(val);
  for (int i = 0; i < 8; ++i) {
    h ^= v & 0xff;
    h *= 1099511628211ULL;
    v >>= 8;  // the low 8 rounds only ever see the 8 bytes, so >> vs >>> makes no difference
  }
  auto s = static_cast<std::int64_t>(h);
  if (s == std::numeric_limits<std::int64_t>::min()) return s;  // Math.abs(Long.MIN_VALUE)
  return s < 0 ? -s : s;
}

std::int32_t java_string_hash(const std::string& s) {
  std::uint32_t h = 0;
  for (unsigned char c : s) h = 31u * h + c;  // keys are ASCII: one UTF-16 unit per byte
  return static_cast<std::int32_t>(h);
}

std::string build_key_name(std::int64_t keynum, key_format f) {
  if (f.hashed) keynum = fnvhash64(keynum);
  std::string digits = std::to_string(keynum);
  std::string key = "user";
  if (static_cast<int>(digits.size()) < f.zero_padding)
    key.append(static_cast<std::size_t>(f.zero_padding) - digits.size(), '0');
  return key + digits;
}

double next_double(rng& r) { return static_cast<double>(r() >> 11) * 0x1.0p-53; }

// ---- zipfian -----------------------------------------------------------------------------

double zipfian_generator::zeta(std::int64_t n, double theta) { return zeta(0, n, theta, 0); }

double zipfian_generator::zeta(std::int64_t st, std::int64_t n, double theta, double initialsum) {
  double sum = initialsum;
  for (std::int64_t i = st; i < n; ++i) sum += 1 / std::pow(static_cast<double>(i + 1), theta);
  return sum;
}

zipfian_generator::zipfian_generator(std::int64_t min, std::int64_t max, double theta)
    : zipfian_generator(min, max, theta, zeta(max - min + 1, theta)) {}

zipfian_generator::zipfian_generator(std::int64_t min, std::int64_t max, double theta, double zetan)
    : items_(max - min + 1), base_(min), theta_(theta) {
  zeta2theta_ = zeta(2, theta_);
  alpha_ = 1.0 / (1.0 - theta_);
  zetan_ = zetan;
  countforzeta_ = items_;
  eta_ = (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) / (1 - zeta2theta_ / zetan_);
}

std::int64_t zipfian_generator::next(rng& r, std::int64_t itemcount) {
  if (itemcount > countforzeta_) {
    // YCSB recomputes zeta incrementally and keeps `items` in eta (its quirk, kept).
    zetan_ = zeta(countforzeta_, itemcount, theta_, zetan_);
    countforzeta_ = itemcount;
    eta_ = (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) / (1 - zeta2theta_ / zetan_);
  }
  const double u = next_double(r);
  const double uz = u * zetan_;
  if (uz < 1.0) return base_;
  if (uz < 1.0 + std::pow(0.5, theta_)) return base_ + 1;
  return base_ + static_cast<std::int64_t>(static_cast<double>(itemcount) * std::pow(eta_ * u - eta_ + 1, alpha_));
}

scrambled_zipfian_generator::scrambled_zipfian_generator(std::int64_t min, std::int64_t max, double theta)
    : min_(min),
      itemcount_(max - min + 1),
      gen_(theta == zipfian_generator::zipfian_constant ? zipfian_generator(0, item_count, theta, zetan_constant)
                                                        : zipfian_generator(0, item_count, theta)) {}

std::int64_t scrambled_zipfian_generator::next(rng& r) {
  const std::int64_t v = gen_.next(r);
  return min_ + fnvhash64(v) % itemcount_;
}

// ---- counters ------------------------------------------------------------------------------

void acknowledged_counter::acknowledge(std::int64_t v) {
  // YCSB keeps a window of 2^20 acknowledgements; so do we (as a ring).
  constexpr std::size_t window = 1u << 20;
  std::lock_guard l(mu_);
  if (window_.empty()) window_.assign(window, false);
  std::int64_t limit = limit_.load(std::memory_order_relaxed);
  if (v <= limit) return;
  window_[static_cast<std::size_t>(v) % window] = true;
  while (window_[static_cast<std::size_t>(limit + 1) % window]) {
    window_[static_cast<std::size_t>(limit + 1) % window] = false;
    ++limit;
  }
  limit_.store(limit, std::memory_order_release);
}

skewed_latest_generator::skewed_latest_generator(const acknowledged_counter& basis)
    : basis_(basis), zipf_(0, std::max<std::int64_t>(1, basis.last()) - 1) {}

std::int64_t skewed_latest_generator::next(rng& r) {
  const std::int64_t max = basis_.last();
  return max - zipf_.next(r, max);
}

// ---- workloads -----------------------------------------------------------------------------

const char* op_name(op_kind k) {
  switch (k) {
    case op_kind::read: return "READ";
    case op_kind::update: return "UPDATE";
    case op_kind::insert: return "INSERT";
    case op_kind::scan: return "SCAN";
    case op_kind::rmw: return "READ-MODIFY-WRITE";
    default: return "?";
  }
}

workload_spec core_workload(const std::string& name) {
  workload_spec w;
  std::string n;
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  w.name = n;
  // YCSB workloads/workloada .. workloadf
  if (n == "a") {
    w.read = 0.5;
    w.update = 0.5;
  } else if (n == "b") {
    w.read = 0.95;
    w.update = 0.05;
  } else if (n == "c") {
    w.read = 1.0;
  } else if (n == "d") {
    w.read = 0.95;
    w.insert = 0.05;
    w.request = distribution::latest;
  } else if (n == "e") {
    w.scan = 0.95;
    w.insert = 0.05;
    w.max_scan_length = 100;
  } else if (n == "f") {
    w.read = 0.5;
    w.rmw = 0.5;
  } else
    throw std::invalid_argument("unknown workload '" + name + "' (a to f)");
  return w;
}

workload_state::workload_state(std::int64_t rc, std::int64_t operationcount, const workload_spec& w)
    : recordcount(rc), inserts(rc) {
  // CoreWorkload: expectednewkeys = (int)(opcount * insertproportion * 2.0)
  const auto expected_new = static_cast<std::int64_t>(static_cast<double>(operationcount) * w.insert * 2.0);
  key_space_max = rc + expected_new;  // ScrambledZipfianGenerator(0, insertcount + expectednewkeys)
}

op_chooser::op_chooser(const workload_spec& w, workload_state& st, std::uint64_t seed)
    : w_(w),
      st_(st),
      rng_(seed),
      zipf_(0, st.key_space_max),
      latest_(st.inserts),
      uniform_keys_(0, st.recordcount - 1),
      scan_len_(w.min_scan_length, w.max_scan_length) {}

std::int64_t op_chooser::next_keynum() {
  // CoreWorkload.nextKeynum: redraw while the key is beyond the last acknowledged insert.
  std::int64_t k;
  const std::int64_t last = st_.inserts.last();
  switch (w_.request) {
    case distribution::latest: return latest_.next(rng_);
    case distribution::uniform:
      do k = uniform_keys_.next(rng_);
      while (k > last);
      return k;
    default:
      do k = zipf_.next(rng_);
      while (k > last);
      return k;
  }
}

operation op_chooser::next() {
  // DiscreteGenerator: one uniform draw against the cumulative weights, in YCSB's order
  // (READ, UPDATE, INSERT, SCAN, READMODIFYWRITE).
  operation op;
  double u = next_double(rng_) * (w_.read + w_.update + w_.insert + w_.scan + w_.rmw);
  const double weights[] = {w_.read, w_.update, w_.insert, w_.scan, w_.rmw};
  int i = 0;
  for (; i < 4; ++i) {
    if (u < weights[i]) break;
    u -= weights[i];
  }
  while (weights[i] == 0 && i > 0) --i;  // rounding at the top end
  op.kind = static_cast<op_kind>(i);
  switch (op.kind) {
    case op_kind::insert: op.keynum = st_.inserts.next(); break;
    case op_kind::scan:
      op.keynum = next_keynum();
      op.scan_length = static_cast<std::int32_t>(scan_len_.next(rng_));
      break;
    default:
      op.keynum = next_keynum();
      op.field = static_cast<std::int32_t>(fields_.next(rng_));
      break;
  }
  return op;
}

std::string field_name(int i) { return "field" + std::to_string(i); }

void fill_value(rng& r, std::string& out, int length) {
  // RandomByteIterator: bytes in ' ' + [0, 95)
  out.resize(static_cast<std::size_t>(length));
  std::uint64_t bits = 0;
  for (int i = 0; i < length; ++i) {
    if (i % 8 == 0) bits = r();
    out[static_cast<std::size_t>(i)] = static_cast<char>(' ' + (bits & 0xff) % 95);
    bits >>= 8;
  }
}

}  // namespace loadgen
