// store/reshape_plan.cc: the bounds a split or merge gives a RANGE table (reshape_plan.h).
#include "store/reshape_plan.h"

#include <algorithm>
#include <cstdlib>

#include "store/reshape.h"

namespace cellar::detail {

namespace {

result<reshape_plan> split_at_key(const table_schema& s, const std::string& key) {
  if (auto st = check_split_key(key); !st) return st;
  reshape_plan out;
  out.bounds = s.partitioning.bounds;
  auto at = std::lower_bound(out.bounds.begin(), out.bounds.end(), key);
  if (at != out.bounds.end() && *at == key)
    return status{code::invalid_argument, "split: '" + key + "' is already the start of a region of '" + s.name + "'"};
  out.bounds.insert(at, key);
  out.splits = 1;
  out.changes = true;
  return out;
}

result<reshape_plan> split_region(const table_schema& s, std::size_t partitions, std::uint32_t index,
                                  const std::string& key_in, const middle_row_fn& middle) {
  if (!key_in.empty())
    if (auto st = check_split_key(key_in); !st) return st;
  const std::string region = "'" + s.name + "/" + std::to_string(index) + "'";
  if (index >= partitions)
    return status{code::invalid_argument, "split: '" + s.name + "' has no region " + std::to_string(index) +
                                              " (it has " + std::to_string(partitions) + ", from 0)"};
  reshape_plan out;
  out.bounds = s.partitioning.bounds;
  auto [lo, hi] = range_of(out.bounds, index);
  std::string key = key_in;
  if (key.empty()) {
    auto mid = middle(index);
    if (!mid) return mid.error();
    if (!mid->has_value())
      return status{code::invalid_argument,
                    "split: region " + region +
                        " holds fewer than two rows, so it has no middle row; give a split key"};
    key = std::move(**mid);
  } else if (key == lo) {
    return status{code::invalid_argument, "split: '" + key + "' is already the start of region " + region};
  } else if (key < lo || (!hi.empty() && key >= hi)) {
    return status{code::invalid_argument, "split: '" + key + "' is outside region " + region +
                                              ", which holds the rows from '" + lo + "' up to " +
                                              (hi.empty() ? std::string("the end") : "'" + hi + "'")};
  }
  out.bounds.insert(out.bounds.begin() + index, std::move(key));
  out.splits = 1;
  out.changes = true;
  return out;
}

result<reshape_plan> split_all(const table_schema& s, std::size_t partitions, const middle_row_fn& middle) {
  const auto& was = s.partitioning.bounds;
  // Partition i's middle row goes between bounds i - 1 and i, so the bounds stay sorted.
  reshape_plan out;
  for (std::uint32_t i = 0; i < partitions; ++i) {
    auto mid = middle(i);
    if (!mid) return mid.error();
    if (mid->has_value()) {
      out.bounds.push_back(std::move(**mid));
      ++out.splits;
    }
    if (i < was.size()) out.bounds.push_back(was[i]);
  }
  out.changes = out.splits > 0;
  return out;
}

result<reshape_plan> merge(const table_schema& s, std::uint32_t index) {
  reshape_plan out;
  out.bounds = s.partitioning.bounds;
  if (index >= out.bounds.size())
    return status{code::invalid_argument, "merge_region: '" + s.name + "' has no regions " + std::to_string(index) +
                                              " and " + std::to_string(index + 1) + " (it has " +
                                              std::to_string(out.bounds.size() + 1) + ")"};
  out.bounds.erase(out.bounds.begin() + index);
  out.changes = true;
  return out;
}

}  // namespace

status check_split_key(const std::string& key) {
  if (key.empty()) return {code::invalid_argument, "split: a split key is needed (a row key, not empty)"};
  if (key.size() > max_row_key_bytes) return {code::too_large, "split: the split key is longer than a row key may be"};
  return status::ok();
}

status check_reshapable(const table_schema& s, std::size_t partitions, std::string_view what) {
  using m = partition_spec::method;
  const auto& p = s.partitioning;
  if (!s.partitioned || partitions == 0)
    return {code::invalid_argument, "table group '" + s.name + "' has no partitions yet; add a family first"};
  if (p.how == m::key || p.how == m::key_prefix)
    return {code::unsupported, std::string(what) + ": table '" + s.name +
                                   "' is KEY (hash) partitioned; its partitions are fixed, as in OceanBase (only "
                                   "RANGE partitions split and merge)"};
  return status::ok();
}

std::optional<std::uint64_t> size_split_limit(const table_schema& s, std::size_t partitions) {
  const auto& attrs = s.attributes;
  auto max = attrs.find("MAX_FILESIZE");
  auto enabled = attrs.find("SPLIT_ENABLED");
  auto policy = attrs.find("SPLIT_POLICY");
  if (max == attrs.end() || (enabled != attrs.end() && enabled->second == "false") ||
      (policy != attrs.end() && policy->second.find("DisabledRegionSplitPolicy") != std::string::npos) ||
      !check_reshapable(s, partitions, "split"))
    return std::nullopt;
  return std::strtoull(max->second.c_str(), nullptr, 10);
}

result<reshape_plan> plan_reshape(const table_schema& s, std::size_t partitions, const reshape_call& c,
                                  const middle_row_fn& middle) {
  using k = reshape_call::kind;
  if (auto st = check_reshapable(s, partitions, c.what == k::merge ? "merge_region" : "split"); !st) return st;
  if (c.uid != 0 && c.uid != s.uid)
    return status{code::conflict, "split: the partitions of '" + s.name +
                                      "' changed since the split was decided (another split, merge or DDL came first)"};
  switch (c.what) {
    case k::split_at_key: return split_at_key(s, c.key);
    case k::split_region: return split_region(s, partitions, c.index, c.key, middle);
    case k::split_all: return split_all(s, partitions, middle);
    case k::merge: return merge(s, c.index);
  }
  return status{code::invalid_argument, "unknown split or merge"};
}

}  // namespace cellar::detail
