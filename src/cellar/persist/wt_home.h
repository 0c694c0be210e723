// persist/wt_home.h: the WiredTiger home of a store directory.
//
// Tables (docs/storage.md):
//   table:catalog      logged; key = table name, value = encoded table schema; the key
//                      "\0store" holds the store's counters. Every change commits with
//                      sync=on, so DDL is durable when it returns.
//   table:meta         not logged; "snapshot_gen" = generation of the last snapshot.
//   table:d<uid>p<i>   not logged; the cells of partition i of table <uid>, keys and
//                      values as in persist/codec.h.
// Tables that are not logged are recovered by WiredTiger to its last checkpoint, and a
// checkpoint is only taken at the end of a snapshot: that is what makes a snapshot
// atomic even when it is written in many transactions.
//
// Thread safety: every method opens its own WiredTiger session, so methods may run on
// any thread; callers serialise snapshot work among themselves.
#pragma once

#include <wiredtiger.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"
#include "partition/memtable.h"

namespace cellar::detail {

class wt_home {
 public:
  static result<std::unique_ptr<wt_home>> open(const std::string& dir, std::size_t cache_mb);
  ~wt_home();  // closes without a checkpoint: callers snapshot first

  // Catalog.
  status read_catalog(const std::function<void(std::string_view key, std::string_view value)>& fn);
  // Writes and erases catalog entries in one durable transaction.
  status write_catalog(const std::vector<std::pair<std::string, std::string>>& puts,
                       const std::vector<std::string>& erases);

  status create_partition(std::uint64_t uid, std::uint32_t partition);
  status drop_partition(std::uint64_t uid, std::uint32_t partition);

  // Snapshot work.
  status write_delta(std::uint64_t uid, std::uint32_t partition, const delta_map& delta, std::uint64_t* bytes);
  status purge_family(std::uint64_t uid, std::uint32_t partition, std::uint32_t family);
  status set_meta(std::string_view key, std::uint64_t value);
  status checkpoint();

  // Recovery.
  result<std::uint64_t> get_meta(std::string_view key);
  status scan_partition(std::uint64_t uid, std::uint32_t partition,
                        const std::function<status(std::string_view key, std::string_view value)>& fn);

 private:
  wt_home() = default;
  WT_CONNECTION* conn_ = nullptr;
  std::string dir_;
};

std::string partition_uri(std::uint64_t uid, std::uint32_t partition);
// Its file in the home is this stem plus ".wt".
std::string partition_file_stem(std::uint64_t uid, std::uint32_t partition);

}  // namespace cellar::detail
