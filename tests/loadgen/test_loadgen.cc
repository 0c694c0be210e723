// Unit tests of the YCSB load generator's own logic (examples/loadgen).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "engine.h"
#include "histogram.h"
#include "ycsb.h"

using namespace loadgen;

TEST_CASE("keys are 'user' + YCSB's FNV-1a 64 of the record number") {
  // Expected values: the first keys of a YCSB load phase with insertorder=hashed, as YCSB
  // prints them with the `basic` binding ("INSERT usertable user6284781860667377211 ...",
  // then user8517097267634966620, user1820151046732198393), and the same
  // Utils.fnvhash64 re-computed by hand in Python (offset basis 0xCBF29CE484222325,
  // prime 1099511628211, 8 little-endian bytes, 64-bit wrap, then Math.abs).
  CHECK(build_key_name(0) == "user6284781860667377211");
  CHECK(build_key_name(1) == "user8517097267634966620");
  CHECK(build_key_name(2) == "user1820151046732198393");
  CHECK(build_key_name(3) == "user4052466453699787802");
  CHECK(fnvhash64(100) == 879817313296471393LL);
  CHECK(fnvhash64(99999) == 7592201923306675823LL);
  CHECK(build_key_name(42, {false, 1}) == "user42");  // insertorder=ordered
  // zeropadding pads the number; 12 digits is how redis-benchmark names "user__rand_int__".
  CHECK(build_key_name(42, {false, 12}) == "user000000000042");
  CHECK(build_key_name(0, {true, 25}) ==
        "user000000"
        "6284781860667377211");
  CHECK(build_key_name(123456, {false, 3}) == "user123456");  // longer than the padding
  // Always non-negative except Java's Math.abs(Long.MIN_VALUE) corner.
  for (std::int64_t i = 0; i < 100000; ++i) REQUIRE(fnvhash64(i) >= 0);
}

TEST_CASE("java_string_hash is Java's String.hashCode") {
  CHECK(java_string_hash("") == 0);
  CHECK(java_string_hash("a") == 97);
  CHECK(java_string_hash("hello") == 99162322);   // "hello".hashCode()
  CHECK(java_string_hash("user0") == 111578565);  // s[0]*31^(n-1) + ... in int32, by Python
}

TEST_CASE("zeta matches the direct sum and YCSB's ZETAN constant") {
  CHECK(zipfian_generator::zeta(1, 0.99) == Approx(1.0));
  CHECK(zipfian_generator::zeta(2, 0.99) == Approx(1.0 + std::pow(2.0, -0.99)));
  const double z1000 = zipfian_generator::zeta(1000, 0.99);
  CHECK(zipfian_generator::zeta(500, 1000, 0.99, zipfian_generator::zeta(500, 0.99)) == Approx(z1000));
}

TEST_CASE("zipfian: rank 1 has its theoretical share, frequencies fall with rank") {
  const std::int64_t n = 1000;
  zipfian_generator z(0, n - 1);
  rng r(12345);
  const int samples = 400000;
  std::vector<int> freq(n, 0);
  for (int i = 0; i < samples; ++i) {
    const auto v = z.next(r);
    REQUIRE(v >= 0);
    REQUIRE(v < n);
    ++freq[static_cast<std::size_t>(v)];
  }
  const double zeta = zipfian_generator::zeta(n, 0.99);
  // P(rank 1) = 1/zeta(n), P(rank 2) = 2^-theta/zeta(n): YCSB returns those two exactly.
  CHECK(freq[0] / double(samples) == Approx(1 / zeta).epsilon(0.02));
  CHECK(freq[1] / double(samples) == Approx(std::pow(2.0, -0.99) / zeta).epsilon(0.03));
  // Monotone on average: compare sums over successive blocks (single ranks are noisy; the
  // Gray et al. approximation is only asymptotically exact past rank 2).
  int prev = samples;
  for (int b = 0; b < 10; ++b) {
    int sum = 0;
    for (int i = b * 100; i < (b + 1) * 100; ++i) sum += freq[static_cast<std::size_t>(i)];
    CHECK(sum < prev);
    prev = sum;
  }
  CHECK(freq[0] > freq[2]);
  CHECK(freq[2] > freq[10]);
  CHECK(freq[10] > freq[100]);
}

TEST_CASE("zipfian grows its item count incrementally as YCSB does") {
  zipfian_generator z(0, 99);
  rng r(7);
  for (int i = 0; i < 1000; ++i) REQUIRE(z.next(r, 200) < 200);
  CHECK(z.zetan() == Approx(zipfian_generator::zeta(200, 0.99)));
}

TEST_CASE("scrambled zipfian stays in range and scatters the popular items") {
  scrambled_zipfian_generator g(1000, 1999);
  rng r(99);
  std::map<std::int64_t, int> freq;
  for (int i = 0; i < 200000; ++i) {
    const auto v = g.next(r);
    REQUIRE(v >= 1000);
    REQUIRE(v <= 1999);
    ++freq[v];
  }
  // The most popular item is fnvhash64(0) % 1000 + 1000 (the zipfian's rank 1 is 0).
  auto top = std::max_element(freq.begin(), freq.end(), [](auto& a, auto& b) { return a.second < b.second; });
  CHECK(top->first == 1000 + fnvhash64(0) % 1000);
  // Skewed: the top item far above the mean of 200 per item.
  CHECK(top->second > 2000);
  CHECK(freq.size() > 500);
}

TEST_CASE("acknowledged counter: last() is the highest contiguous acknowledgement") {
  acknowledged_counter c(100);
  CHECK(c.last() == 99);
  auto a = c.next(), b = c.next(), d = c.next();
  CHECK(a == 100);
  c.acknowledge(b);
  CHECK(c.last() == 99);  // 100 not yet
  c.acknowledge(a);
  CHECK(c.last() == 101);
  c.acknowledge(d);
  CHECK(c.last() == 102);
}

TEST_CASE("latest generator favours the newest records and follows inserts") {
  acknowledged_counter c(1000);  // records 0..999 loaded
  skewed_latest_generator g(c);
  rng r(5);
  int newest = 0;
  for (int i = 0; i < 100000; ++i) {
    const auto v = g.next(r);
    REQUIRE(v >= 0);
    REQUIRE(v <= 999);
    if (v >= 990) ++newest;
  }
  CHECK(newest > 30000);  // the newest 1% of records take a large share
  for (int i = 0; i < 500; ++i) c.acknowledge(c.next());
  CHECK(c.last() == 1499);
  bool saw_new = false;
  for (int i = 0; i < 10000; ++i) {
    const auto v = g.next(r);
    REQUIRE(v <= 1499);
    saw_new |= v > 999;
  }
  CHECK(saw_new);
}

TEST_CASE("operation mix follows the workload's proportions") {
  auto w = core_workload("a");
  workload_state st(1000, 100000, w);
  op_chooser ch(w, st, 3);
  int reads = 0, updates = 0;
  for (int i = 0; i < 100000; ++i) {
    auto op = ch.next();
    REQUIRE(op.keynum < 1000);
    if (op.kind == op_kind::read) ++reads;
    if (op.kind == op_kind::update) ++updates;
    REQUIRE(op.field >= 0);
    REQUIRE(op.field < 10);
  }
  CHECK(reads + updates == 100000);
  CHECK(reads / 100000.0 == Approx(0.5).margin(0.01));
  auto e = core_workload("E");
  workload_state se(1000, 1000, e);
  op_chooser ce(e, se, 4);
  for (int i = 0; i < 10000; ++i) {
    auto op = ce.next();
    if (op.kind == op_kind::scan) {
      REQUIRE(op.scan_length >= 1);
      REQUIRE(op.scan_length <= 100);
    } else {
      REQUIRE(op.kind == op_kind::insert);
      se.inserts.acknowledge(op.keynum);
    }
  }
  CHECK_THROWS(core_workload("g"));
}

TEST_CASE("requestdistribution=uniform draws every loaded record about equally") {
  auto w = core_workload("c");
  w.request = distribution::uniform;  // loadgen --request-distribution uniform
  workload_state st(100, 100000, w);
  op_chooser ch(w, st, 5);
  std::vector<int> hits(100, 0);
  for (int i = 0; i < 100000; ++i) {
    auto op = ch.next();
    REQUIRE(op.keynum >= 0);
    REQUIRE(op.keynum < 100);
    ++hits[static_cast<std::size_t>(op.keynum)];
  }
  // 1000 expected each; a zipfian draw would give record 0 about a tenth of all.
  CHECK(*std::min_element(hits.begin(), hits.end()) > 850);
  CHECK(*std::max_element(hits.begin(), hits.end()) < 1150);
}

TEST_CASE("values have YCSB's fieldlength, printable bytes") {
  for (int length : {1, 10, 100, 9000}) {
    value_pool pool(7, length, 16);
    rng r(1);
    for (int i = 0; i < 50; ++i) {
      const auto& v = pool.pick(r);
      REQUIRE(v.size() == static_cast<std::size_t>(length));
      for (char c : v) REQUIRE((c >= ' ' && c < ' ' + 95));
    }
  }
}

TEST_CASE("histogram buckets are contiguous and within 1/128 of their values") {
  CHECK(histogram::index_of(0) == 0);
  CHECK(histogram::index_of(255) == 255);
  CHECK(histogram::index_of(256) == 256);
  for (std::size_t i = 1; i < histogram::bucket_count(); ++i)
    REQUIRE(histogram::lowest_of(i) == histogram::highest_of(i - 1) + 1);
  std::mt19937_64 r(1);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t v = r() >> (r() % 60 + 1);
    const auto idx = histogram::index_of(v);
    REQUIRE(histogram::lowest_of(idx) <= v);
    REQUIRE(histogram::highest_of(idx) >= v);
    REQUIRE(double(histogram::highest_of(idx) - histogram::lowest_of(idx)) <= double(v) / 128.0 + 1);
  }
}

TEST_CASE("histogram percentiles agree with a sorted-vector reference") {
  std::mt19937_64 r(42);
  std::lognormal_distribution<double> lat(std::log(200000.0), 1.0);  // ~200 us median, long tail
  histogram h;
  std::vector<std::uint64_t> ref;
  for (int i = 0; i < 200000; ++i) {
    const auto v = static_cast<std::uint64_t>(lat(r));
    h.record(v);
    ref.push_back(v);
  }
  std::sort(ref.begin(), ref.end());
  for (double p : {1.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * double(ref.size())));
    const auto expected = ref[std::max<std::size_t>(rank, 1) - 1];
    const auto got = h.percentile(p);
    INFO("p" << p << " expected " << expected << " got " << got);
    CHECK(got >= expected);
    CHECK(double(got) <= double(expected) * (1 + 1.0 / 128) + 1);
  }
  CHECK(h.count() == ref.size());
  CHECK(h.min() == ref.front());
  CHECK(h.max() == ref.back());
  double sum = 0;
  for (auto v : ref) sum += double(v);
  CHECK(h.mean() == Approx(sum / double(ref.size())));

  histogram a, b;
  for (std::size_t i = 0; i < ref.size(); ++i) (i % 2 ? a : b).record(ref[i]);
  a.merge(b);
  CHECK(a.percentile(99) == h.percentile(99));
  CHECK(histogram().percentile(50) == 0);
}
