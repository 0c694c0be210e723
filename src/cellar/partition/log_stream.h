// partition/log_stream.h: one partition's stream of records in its node's redo log.
//
// A partition that logs (durability log or log-sync) is given a log_stream when it starts:
// the node's redo log (persist/redo_log.h), the partition's identity (table uid and
// partition number, which head every record so that recovery hands each record back to its
// partition), and whether a write is acknowledged only once on disk. The node's partitions
// share one log file and one writer thread, so one fsync covers the writes of every
// partition (group commit); each record still belongs to exactly one partition, and the
// records of one partition are in the log in the order it applied them, because only the
// partition's owner (its actor, or a caller holding it in place) appends them.
//
// Thread safety: append is called by whoever holds the partition; the redo log is
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "partition/memtable.h"
#include "persist/redo_log.h"

namespace cellar::detail {

class log_stream {
 public:
  log_stream() = default;  // no log
  log_stream(redo_log* log, std::uint64_t table_uid, std::uint32_t partition)
      : log_(log), uid_(table_uid), partition_(partition) {}

  bool enabled() const { return log_ != nullptr; }
  // A write is acknowledged only once its record is in the log file: in the OS's hands
  // (log) or on disk (log-sync).
  bool acknowledges_after_log() const { return log_ != nullptr; }

  // Called once a record's fate is known: OK once written (log) or on disk (log-sync), or
  // the failure of the write or sync that took it (IO_ERROR naming the file).
  using durable_fn = std::function<void(const status&)>;

  // Whether the log refuses writes now (a write or sync failed, redo_log.h): a partition
  // then refuses writes before applying them, with health().
  bool failed() const { return log_ != nullptr && log_->failed(); }
  status health() const { return log_ != nullptr ? log_->health() : status::ok(); }

  // Appends what `mem` recorded since the last append, if anything, and clears it. Sets
  // `appended` when a record was queued; `durable` then runs once with the record's fate,
  // on the log's writer thread. Returns the log's failure when it refused the record:
  // nothing was queued and `durable` never runs.
  status append(memtable& mem, durable_fn durable, bool* appended = nullptr) {
    if (appended) *appended = false;
    if (log_ == nullptr || mem.redo().empty()) return status::ok();
    auto st = log_->append(record(mem, uid_, partition_), std::move(durable));
    if (st && appended) *appended = true;
    return st;
  }
  // The record of what `mem` changed since its redo was last taken: u64 table uid | u32
  // partition | redo entries (docs/storage.md); clears the redo.
  static std::string record(memtable& mem, std::uint64_t table_uid, std::uint32_t partition);

 private:
  redo_log* log_ = nullptr;
  std::uint64_t uid_ = 0;
  std::uint32_t partition_ = 0;
};

}  // namespace cellar::detail
