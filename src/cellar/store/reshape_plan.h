// store/reshape_plan.h: the new partition bounds of a split or merge of RANGE partitions,
// as one process (store/reshape.cc) and a cluster (cluster/reshaper.h) decide them alike.
//
// A call names what HBase's shell names: `split 't', 'key'` (split_at_key), `split 't/3'`
// and `split 't/3', 'key'` (split_region), `split 't'` (split_all: every partition holding
// two rows or more, at its middle row) and `merge_region` of regions `index` and
// `index + 1` (merge). The plan checks the call against the table's partition rule and
// gives the bounds the table has after it, with the same errors everywhere.
//
// Thread safety: pure functions (`middle` is called on the caller's thread).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/status.h"

namespace cellar::detail {

struct reshape_call {
  enum class kind : std::uint8_t { split_at_key, split_region, split_all, merge };
  kind what = kind::split_at_key;
  std::string table;
  std::uint32_t index = 0;  // split_region, merge
  std::string key;          // split_at_key; split_region (empty: the region's middle row)
  // Not 0: the table incarnation (table_schema::uid) the call was decided in; the call is
  // refused CONFLICT once the table has another (a size-driven split measured a partition
  // that a split, merge or DDL has replaced since).
  std::uint64_t uid = 0;
};

struct reshape_plan {
  std::vector<std::string> bounds;  // the table's RANGE bounds after the call
  std::uint32_t splits = 0;         // partitions split (a merge: 0)
  bool changes = false;             // false: nothing to do (split_all found no partition to split)
};

// Partition `i`'s middle row (the row half of its rows sort before), or none when it holds
// fewer than two rows.
using middle_row_fn = std::function<result<std::optional<std::string>>(std::uint32_t i)>;

// INVALID_ARGUMENT (empty) or TOO_LARGE (longer than a row key) for a split key; OK otherwise.
status check_split_key(const std::string& key);

// Why `schema`'s partitions cannot be split or merged (`what`: "split" or "merge_region"),
// or OK: INVALID_ARGUMENT for a table group without partitions, UNSUPPORTED for KEY (hash)
// partitions, which stay fixed as in OceanBase.
status check_reshapable(const table_schema& schema, std::size_t partitions, std::string_view what);

// The bytes of cells past which a partition of `schema` (with `partitions` partitions)
// splits by itself at its middle row, HBase's size-driven split: the table's MAX_FILESIZE.
// None when its partitions never split by size: no MAX_FILESIZE, SPLIT_ENABLED false,
// SPLIT_POLICY DisabledRegionSplitPolicy, or partitions check_reshapable refuses.
std::optional<std::uint64_t> size_split_limit(const table_schema& schema, std::size_t partitions);

// The plan of `c` on `schema` (with `partitions` partitions). `middle` is asked only for the
// partitions whose middle row the call needs. Errors: those of check_reshapable;
// INVALID_ARGUMENT for a key that is empty, too long, already a bound or outside the region,
// a region that does not exist or has no middle row; CONFLICT when `c.uid` names another
// incarnation than `schema`'s.
result<reshape_plan> plan_reshape(const table_schema& schema, std::size_t partitions, const reshape_call& c,
                                  const middle_row_fn& middle);

}  // namespace cellar::detail
