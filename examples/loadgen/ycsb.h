// loadgen/ycsb.h: YCSB's core workload logic, ported from YCSB 0.17 (site.ycsb.*):
// key names (CoreWorkload.buildKeyName with insertorder=hashed), the number generators
// (ZipfianGenerator, ScrambledZipfianGenerator, SkewedLatestGenerator, UniformLongGenerator,
// CounterGenerator, AcknowledgedCounterGenerator) and the operation mix of workloads A to F.
//
// The generators keep YCSB's arithmetic (doubles, the same constants, the same quirks) so
// the request stream has YCSB's distribution; only the random source differs (a seeded
// std::mt19937_64 instead of ThreadLocalRandom), which makes runs and tests reproducible.
//
// Thread safety: generators are per thread, except the insert counter (shared, locked).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace loadgen {

// YCSB Utils.fnvhash64: FNV-1a 64 over the 8 little-endian bytes of `val`, then
// Math.abs of the signed result (Long.MIN_VALUE stays as it is, as in Java).
std::int64_t fnvhash64(std::int64_t val);

// Java's String.hashCode (YCSB's Redis binding scores its index with it).
std::int32_t java_string_hash(const std::string& s);

// How keys are named: YCSB's insertorder (hashed: keynum goes through fnvhash64 first;
// ordered: it does not) and zeropadding (the decimal is padded with zeros to this many
// digits). YCSB's defaults: hashed, 1 (no padding). insertorder=ordered with zeropadding 12
// names keys as redis-benchmark's "user__rand_int__" does ("user000000000042").
struct key_format {
  bool hashed = true;
  int zero_padding = 1;
};

// CoreWorkload.buildKeyName: "user" + zero padding + decimal(keynum or fnvhash64(keynum)).
std::string build_key_name(std::int64_t keynum, key_format f = {});

using rng = std::mt19937_64;

// Uniform double in [0, 1), as Java's nextDouble (53 random bits).
double next_double(rng& r);

// UniformLongGenerator: [lb, ub] inclusive.
class uniform_generator {
 public:
  uniform_generator(std::int64_t lb, std::int64_t ub) : lb_(lb), interval_(ub - lb + 1) {}
  std::int64_t next(rng& r) { return lb_ + static_cast<std::int64_t>(next_double(r) * static_cast<double>(interval_)); }

 private:
  std::int64_t lb_, interval_;
};

// ZipfianGenerator (Gray et al., "Quickly generating billion-record synthetic databases").
// Items min..max; popular items are the low numbers. next(r, itemcount) grows the item
// count incrementally as YCSB's nextLong(itemcount) does (decreases are ignored, as with
// YCSB's default allowitemcountdecrease=false).
class zipfian_generator {
 public:
  static constexpr double zipfian_constant = 0.99;
  zipfian_generator(std::int64_t min, std::int64_t max, double theta = zipfian_constant);
  // With a precomputed zeta(n) (ScrambledZipfianGenerator passes YCSB's ZETAN).
  zipfian_generator(std::int64_t min, std::int64_t max, double theta, double zetan);

  std::int64_t next(rng& r) { return next(r, items_); }
  std::int64_t next(rng& r, std::int64_t itemcount);

  // zeta(n, theta) = sum_{i=1..n} 1/i^theta, and the incremental form from st to n.
  static double zeta(std::int64_t n, double theta);
  static double zeta(std::int64_t st, std::int64_t n, double theta, double initialsum);

  std::int64_t items() const { return items_; }
  double zetan() const { return zetan_; }

 private:
  std::int64_t items_, base_;
  double theta_, zeta2theta_, alpha_, zetan_, eta_;
  std::int64_t countforzeta_;
};

// ScrambledZipfianGenerator: a zipfian over 10^10 items (zeta precomputed as YCSB's ZETAN
// when theta is 0.99), then min + fnvhash64(v) % itemcount, which scatters the popular
// items over the key space.
class scrambled_zipfian_generator {
 public:
  static constexpr double zetan_constant = 26.46902820178302;  // YCSB's ZETAN
  static constexpr std::int64_t item_count = 10000000000LL;    // YCSB's ITEM_COUNT
  scrambled_zipfian_generator(std::int64_t min, std::int64_t max, double theta = zipfian_generator::zipfian_constant);
  std::int64_t next(rng& r);

 private:
  std::int64_t min_, itemcount_;
  zipfian_generator gen_;
};

// AcknowledgedCounterGenerator: hands out insert key numbers; last() is the highest number
// below which every insert has been acknowledged (reads never ask for a key not yet written).
class acknowledged_counter {
 public:
  explicit acknowledged_counter(std::int64_t start) : next_(start), limit_(start - 1) {}
  std::int64_t next() { return next_.fetch_add(1); }
  std::int64_t last() const { return limit_.load(std::memory_order_acquire); }
  void acknowledge(std::int64_t v);

 private:
  std::atomic<std::int64_t> next_;
  std::atomic<std::int64_t> limit_;
  std::mutex mu_;
  std::vector<bool> window_;  // acknowledged numbers above limit_ (index v - limit_ - 1)
};

// SkewedLatestGenerator: the newest records are the most popular (workload D).
class skewed_latest_generator {
 public:
  explicit skewed_latest_generator(const acknowledged_counter& basis);
  std::int64_t next(rng& r);

 private:
  const acknowledged_counter& basis_;
  zipfian_generator zipf_;
};

enum class op_kind : std::uint8_t { read, update, insert, scan, rmw, count_ };
const char* op_name(op_kind k);  // "READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"

enum class distribution : std::uint8_t { zipfian, latest, uniform };

// The properties of YCSB's workloads/workload[a-f] files.
struct workload_spec {
  std::string name;  // "a".."f"
  double read = 0, update = 0, insert = 0, scan = 0, rmw = 0;
  distribution request = distribution::zipfian;
  std::int64_t max_scan_length = 1000;  // YCSB default; workload E sets 100
  std::int64_t min_scan_length = 1;
};

// Workload "a".."f" (case-insensitive); throws std::invalid_argument otherwise.
workload_spec core_workload(const std::string& name);

// Shared across the threads of one run.
struct workload_state {
  workload_state(std::int64_t recordcount, std::int64_t operationcount, const workload_spec& w);
  std::int64_t recordcount;
  std::int64_t key_space_max;              // last key number the zipfian chooser covers
  acknowledged_counter inserts;            // run phase: transactioninsertkeysequence
  std::atomic<std::int64_t> load_next{0};  // load phase: keysequence
};

// One YCSB operation to perform.
struct operation {
  op_kind kind = op_kind::read;
  std::int64_t keynum = 0;
  std::int32_t field = 0;        // update and rmw: the field written (writeallfields=false)
  std::int32_t scan_length = 0;  // scan
};

// Per-thread chooser: CoreWorkload.doTransaction's choice of operation and key.
class op_chooser {
 public:
  op_chooser(const workload_spec& w, workload_state& st, std::uint64_t seed);
  operation next();
  rng& random() { return rng_; }

 private:
  std::int64_t next_keynum();
  workload_spec w_;
  workload_state& st_;
  rng rng_;
  scrambled_zipfian_generator zipf_;
  skewed_latest_generator latest_;
  uniform_generator uniform_keys_;
  uniform_generator fields_{0, 9};
  uniform_generator scan_len_;
};

inline constexpr int field_count = 10;
inline constexpr int field_length = 100;  // YCSB's fieldlength default
std::string field_name(int i);            // "field0".."field9"
// A printable value of `length` bytes (YCSB's RandomByteIterator draws from the same range).
void fill_value(rng& r, std::string& out, int length = field_length);

}  // namespace loadgen
