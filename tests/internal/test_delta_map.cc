// delta_map: the changes a snapshot writes, with keys and values in an arena. Checked
// against std::map as a model: latest state per key, key order, overwrites that reuse or
// outgrow a key's bytes, erasures, merging an older delta, dropping a key range, moves.
#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "persist/delta_map.h"

using cellar::detail::delta_map;

namespace {

struct model_value {
  std::int64_t expires_at;
  std::string value;
  bool operator==(const model_value&) const = default;
};
using model = std::map<std::string, std::optional<model_value>>;

void require_same(const delta_map& d, const model& m) {
  REQUIRE(d.size() == m.size());
  auto it = d.begin();
  for (const auto& [k, v] : m) {
    REQUIRE(it != d.end());
    CHECK(std::string(it->first) == k);
    CHECK(it->second.present == v.has_value());
    if (v) {
      CHECK(std::string(it->second.value()) == v->value);
      CHECK(it->second.expires_at == v->expires_at);
    }
    ++it;
  }
  CHECK(it == d.end());
}

}  // namespace

TEST_CASE("delta_map keeps the latest state of each key, in key order", "[delta]") {
  delta_map d;
  model m;
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const std::string key = "k" + std::to_string(rng() % 2000);
    if (rng() % 5 == 0) {
      d.erase(key);
      m[key] = std::nullopt;
      continue;
    }
    // Sizes that shrink, stay and grow, up to one above the large-value threshold.
    const std::size_t n = rng() % 7 == 0 ? 16 * 1024 + 1 : rng() % 300;
    const std::string value(n, static_cast<char>('a' + i % 26));
    const std::int64_t exp = static_cast<std::int64_t>(rng());
    d.put(key, exp, value);
    m[key] = model_value{exp, value};
  }
  require_same(d, m);
  auto lb = d.lower_bound("k5");
  REQUIRE(lb != d.end());
  CHECK(std::string(lb->first) == m.lower_bound("k5")->first);
}

TEST_CASE("overwrites that fit reuse a key's bytes; what a growing key leaves behind stays below what it holds",
          "[delta]") {
  delta_map d;
  d.put("key", 1, std::string(100, 'a'));
  const auto after_first = d.arena_bytes();
  for (int i = 0; i < 1000; ++i) d.put("key", i, std::string(100 - i % 50, static_cast<char>('b' + i % 20)));
  CHECK(d.arena_bytes() == after_first);  // 1000 same-or-smaller overwrites: no new bytes
  CHECK(std::string(d.begin()->second.value()) == std::string(100 - 999 % 50, static_cast<char>('b' + 999 % 20)));

  // A value growing one byte at a time to 10000: O(log) moves, not one per write.
  delta_map g;
  std::size_t moves = 0;
  const char* last = nullptr;
  for (std::size_t n = 1; n <= 10000; ++n) {
    g.put("grow", 0, std::string(n, 'x'));
    if (g.begin()->second.data != last) ++moves;
    last = g.begin()->second.data;
  }
  CHECK(moves <= 16);
  CHECK(g.begin()->second.capacity >= 10000);
  CHECK(g.begin()->second.capacity < 2 * 10000);
}

TEST_CASE("merge_older adds an older delta's changes only for keys without a newer one", "[delta]") {
  delta_map older;
  older.put("a", 1, "old-a");
  older.put("b", 2, "old-b");
  older.erase("c");
  older.put("d", 4, "old-d");
  delta_map newer;
  newer.put("b", 20, "new-b");
  newer.erase("d");
  newer.merge_older(older);
  model m{{"a", model_value{1, "old-a"}}, {"b", model_value{20, "new-b"}}, {"c", std::nullopt}, {"d", std::nullopt}};
  require_same(newer, m);
  // The merged bytes belong to `newer`: they survive the older map.
  older.clear();
  require_same(newer, m);
}

TEST_CASE("forget drops a key range; clear and moves leave maps that work", "[delta]") {
  delta_map d;
  model m;
  for (int i = 0; i < 100; ++i) {
    const std::string k = (i % 2 ? "f1/" : "f2/") + std::to_string(i);
    d.put(k, i, "v" + std::to_string(i));
    m[k] = model_value{i, "v" + std::to_string(i)};
  }
  d.forget("f1/", "f10");
  for (auto it = m.begin(); it != m.end();) it = it->first.rfind("f1/", 0) == 0 ? m.erase(it) : std::next(it);
  require_same(d, m);

  delta_map moved(std::move(d));
  require_same(moved, m);
  CHECK(d.empty());  // NOLINT(bugprone-use-after-move): a moved-from map is empty and usable
  d.put("again", 1, "fresh");
  CHECK(d.size() == 1);
  // Each map writes only its own blocks: new keys in `moved` leave d's value alone.
  for (int i = 0; i < 50; ++i) {
    const std::string k = "more/" + std::to_string(i);
    moved.put(k, i, "overwrite?");
    m[k] = model_value{i, "overwrite?"};
  }
  CHECK(std::string(d.begin()->second.value()) == "fresh");
  require_same(moved, m);

  delta_map assigned;
  assigned.put("x", 1, "y");
  assigned = std::move(moved);
  require_same(assigned, m);
  assigned.clear();
  CHECK(assigned.empty());
  CHECK(assigned.arena_bytes() == 0);
  assigned.put("z", 2, std::string(70000, 'z'));  // a value bigger than a block
  CHECK(assigned.begin()->second.value().size() == 70000);
}

// Keys are ordered by their first 16 bytes as two words before the rest: keys with zero
// bytes, 0xff bytes, shared prefixes and lengths around 8 and 16 must still come out in
// the bytes' order (a key that is another's prefix first), each found again by its bytes.
TEST_CASE("delta_map orders keys by their bytes across the 16-byte head", "[delta]") {
  delta_map d;
  model m;
  std::mt19937 rng(11);
  const char alphabet[] = {'\0', '\x01', 'a', 'b', '\x7f', '\x80', '\xff'};
  for (int i = 0; i < 30000; ++i) {
    std::string key(rng() % 3 == 0 ? "user0123456789" : "");
    const std::size_t extra = rng() % 24;
    for (std::size_t j = 0; j < extra; ++j) key.push_back(alphabet[rng() % sizeof alphabet]);
    if (rng() % 4 == 0) {
      d.erase(key);
      m[key] = std::nullopt;
    } else {
      const std::string value = std::to_string(i);
      d.put(key, i, value);
      m[key] = model_value{i, value};
    }
  }
  require_same(d, m);
  // Every key is found again (an overwrite lands on the same entry).
  for (const auto& [k, v] : m) d.put(k, 1, "again");
  CHECK(d.size() == m.size());
  for (auto& [k, v] : m) v = model_value{1, "again"};
  require_same(d, m);
  // lower_bound agrees with the model's.
  for (int i = 0; i < 2000; ++i) {
    std::string probe(rng() % 2 == 0 ? "user0123456789" : "");
    const std::size_t extra = rng() % 20;
    for (std::size_t j = 0; j < extra; ++j) probe.push_back(alphabet[rng() % sizeof alphabet]);
    auto want = m.lower_bound(probe);
    auto got = d.lower_bound(probe);
    if (want == m.end()) {
      CHECK(got == d.end());
    } else {
      REQUIRE(got != d.end());
      CHECK(std::string(got->first) == want->first);
    }
  }
}

// The write pattern of an update: a column's new version, then the erasure of the old one,
// which sorts right after it (slot() places it from the last entry, without a descent).
// Interleaved with keys elsewhere, the map must stay the model's.
TEST_CASE("delta_map places a key that follows the last one touched", "[delta]") {
  delta_map d;
  model m;
  std::mt19937 rng(5);
  auto key = [](int row, int version) {
    char b[32];
    std::snprintf(b, sizeof b, "row%06d/q/%08d", row, 99999999 - version);  // newer first
    return std::string(b);
  };
  std::vector<int> version(500, 0);
  for (int i = 0; i < 20000; ++i) {
    const int row = static_cast<int>(rng() % version.size());
    const int v = ++version[static_cast<std::size_t>(row)];
    const std::string value = std::to_string(i);
    d.put(key(row, v), i, value);
    m[key(row, v)] = model_value{i, value};
    if (v > 1) {
      d.erase(key(row, v - 1));
      m[key(row, v - 1)] = std::nullopt;
    }
    if (rng() % 3 == 0) {  // a key somewhere else, before or after
      const std::string other = "a" + std::to_string(rng() % 1000);
      d.put(other, i, value);
      m[other] = model_value{i, value};
    }
  }
  require_same(d, m);
  // Moves, merges and forgetting a range leave no stale position behind.
  delta_map moved(std::move(d));
  moved.put(key(3, 1000000), 1, "x");
  m[key(3, 1000000)] = model_value{1, "x"};
  moved.forget("a", "b");
  for (auto it = m.begin(); it != m.end();) it = it->first.rfind("a", 0) == 0 ? m.erase(it) : std::next(it);
  moved.put(key(4, 1000000), 2, "y");
  m[key(4, 1000000)] = model_value{2, "y"};
  moved.erase(key(4, 999999));
  m[key(4, 999999)] = std::nullopt;
  require_same(moved, m);
}

// A key put while the memtable did not hold it is fresh: erasing it again drops its entry
// instead of keeping a tombstone. The invariant that matters: the files' state at the last
// cut, with the delta applied, is the memtable's state; also when a cut fails and is merged
// back into the delta at a random later point.
TEST_CASE("delta_map: fresh keys leave no tombstone, and the files still end up right", "[delta]") {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    std::set<std::string> files, mem;
    for (int i = 0; i < 40; ++i)
      if (rng() % 2) files.insert("k" + std::to_string(i));
    mem = files;
    delta_map d;
    std::optional<delta_map> failed;  // a cut whose write failed, not merged back yet
    auto apply = [](const delta_map& delta, std::set<std::string>& to) {
      for (const auto& [k, c] : delta) {
        if (c.present)
          to.insert(std::string(k));
        else
          to.erase(std::string(k));
      }
    };
    for (int step = 0; step < 400; ++step) {
      const std::string k = "k" + std::to_string(rng() % 40);
      switch (rng() % 10) {
        case 0: {  // a cut: written, or failed and kept to merge back later
          delta_map cut(std::move(d));
          if (failed) {  // the store merges a failed cut back before the next one
            cut.merge_older(*failed);
            failed.reset();
          }
          if (rng() % 2)
            apply(cut, files);
          else
            failed.emplace(std::move(cut));
          break;
        }
        case 1:
          if (failed) {
            d.merge_older(*failed);
            failed.reset();
          }
          break;
        default:
          if (rng() % 3 == 0 && mem.count(k)) {
            d.erase(k);
            mem.erase(k);
          } else {
            d.put(k, 0, "v", mem.count(k) == 0);
            mem.insert(k);
          }
      }
    }
    if (failed) d.merge_older(*failed);
    apply(d, files);
    REQUIRE(files == mem);
  }
  // The tombstones a fresh key saves.
  delta_map d;
  d.put("a", 0, "v", true);
  d.erase("a");
  CHECK(d.empty());
  d.put("b", 0, "v", false);  // the files may hold b
  d.erase("b");
  REQUIRE(d.size() == 1);
  CHECK(!d.begin()->second.present);
  d.put("b", 0, "w", true);  // an entry exists: it stays not fresh
  d.erase("b");
  CHECK(d.size() == 1);
}
