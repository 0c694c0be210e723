// persist/runs.h: runs, the WiredTiger values that hold a partition's cells.
//
// A partition table does not hold one WiredTiger item per cell: it holds runs of
// consecutive cells of one family, about `run_target_bytes` each. A run's WiredTiger key
// is the encoded key (persist/codec.h) of its first cell when it was written; it holds
// every stored cell from that key up to the next run's key, and never cells of two
// families. WiredTiger's cost is mostly per item: a snapshot rewriting every cell of a
// 1M-cell store took 4.5 s with one item per cell, 2.0 s with runs (docs/storage.md).
//
// Run value: a sequence of cells, each
//   varint key length | encoded cell key | varint stored length | stored value
// where the stored value is the cell value of persist/codec.h (i64 expires_at, then the
// value bytes). Keys ascend strictly within a run.
//
// A change run (the table of a partition's changes since its base was last merged:
// persist/wt_home.h) has the same layout, and its stored value may also be empty: the
// cell was erased.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "cellar/status.h"

namespace cellar::detail {

// A run is closed once it reaches this many bytes; a rewritten run smaller than a
// quarter of it takes in the run after it.
inline constexpr std::size_t run_target_bytes = 4096;

// Appends one cell to a run (stored = i64 expires_at followed by the value bytes).
void append_run_cell(std::string& run, std::string_view key, std::int64_t expires_at, std::string_view value);
void append_run_cell(std::string& run, std::string_view key, std::string_view stored);

// Reads the cells of a run in order. next() returns false at the end and on damage;
// tell them apart with ok(). A run whose keys do not ascend is damaged.
class run_reader {
 public:
  // `erasures`: a change run, whose cells may be erased (an empty stored value).
  explicit run_reader(std::string_view run, bool erasures = false) : in_(run), erasures_(erasures) {}
  bool next(std::string_view& key, std::string_view& stored);
  bool ok() const { return ok_; }

 private:
  std::string_view in_;
  std::string_view last_;
  bool ok_ = true;
  bool first_ = true;
  bool erasures_ = false;
};

// Recovery's reading of one stored run: calls fn(key, stored) for each cell of the run
// `run` stored under the WiredTiger key `run_key`, after checking what the format
// promises: at least one cell, keys ascending, the first at or after `run_key`, every one
// of `run_key`'s family. CORRUPTION ("malformed run: ...") if not; fn's error stops it.
status for_each_run_cell(std::string_view run_key, std::string_view run,
                         const std::function<status(std::string_view key, std::string_view stored)>& fn);

// The same for a change run stored under `table_key` = u64 big-endian generation, then
// the encoded key of its first cell; an empty `stored` is an erased cell. *generation
// gets the run's generation.
status for_each_change_cell(std::string_view table_key, std::string_view run, std::uint64_t* generation,
                            const std::function<status(std::string_view key, std::string_view stored)>& fn);

}  // namespace cellar::detail
