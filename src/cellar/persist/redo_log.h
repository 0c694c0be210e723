// persist/redo_log.h: the write-ahead redo log of the `log` and `log-sync` modes.
//
// Partition actors append one record per atomic unit they applied (a batch part, a
// reclamation slice): the physical result of the unit, cell by cell, so replay is
// deterministic and idempotent. One writer thread drains the queue: it writes every
// pending record with one write() and, in log-sync mode, one fdatasync() for all of
// them (group commit) before it runs their acknowledgements. In log mode records are
// acknowledged at once and synced every `sync_interval`.
//
// Files are `log-<generation>` (20 decimal digits) in the store directory. A snapshot
// rotates to a new generation before it cuts the partitions; once the snapshot is
// checkpointed, older generations are deleted. Record layout (docs/storage.md):
//   u32 payload length | u32 crc32c(payload) | payload
//   payload = u64 table uid | u32 partition | redo entries (memtable.h)
//
// Thread safety: append() and rotate() may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cellar/status.h"

namespace cellar::detail {

class redo_log {
 public:
  // Opens (creating) generation `gen` in `dir` for appending.
  static result<std::unique_ptr<redo_log>> open(std::string dir, std::uint64_t gen, bool sync_each,
                                                std::chrono::milliseconds sync_interval);
  ~redo_log();  // drains, syncs and closes

  // Queues a record; `ack` runs once it is as durable as the mode promises (log-sync:
  // on disk; log: queued). `ack` runs on the writer thread or the caller's.
  void append(std::string payload, std::function<void()> ack);
  // Switches to generation `gen` once every record queued so far is written; blocks.
  status rotate(std::uint64_t gen);
  // Deletes files of generations below `gen`.
  void remove_before(std::uint64_t gen);

  std::uint64_t generation() const;
  std::uint64_t syncs() const { return syncs_; }
  std::uint64_t records() const { return records_; }
  std::uint64_t bytes() const { return bytes_; }  // written since open, headers included

  // Reads every record of generations >= `from_gen`, in order. A torn last record of
  // the last file (a crash mid-write: never acknowledged in log-sync mode) ends the log;
  // damage anywhere else is CORRUPTION.
  static status replay(const std::string& dir, std::uint64_t from_gen,
                       const std::function<status(std::string_view payload)>& fn);
  static std::vector<std::uint64_t> generations(const std::string& dir);

 private:
  redo_log() = default;
  void run();
  status open_file(std::uint64_t gen);

  std::string dir_;
  bool sync_each_ = false;
  std::chrono::milliseconds sync_interval_{100};
  int fd_ = -1;
  std::uint64_t gen_ = 0;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable rotated_cv_;
  std::vector<std::pair<std::string, std::function<void()>>> queue_;
  bool stop_ = false;
  std::uint64_t rotate_to_ = 0;  // nonzero: a rotation is requested
  std::uint64_t rotations_done_ = 0;
  status rotate_status_;
  std::atomic<std::uint64_t> syncs_{0};
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::thread writer_;
};

std::string log_file_name(std::uint64_t gen);

}  // namespace cellar::detail
