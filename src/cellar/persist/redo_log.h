// persist/redo_log.h: the write-ahead redo log of the `log` and `log-sync` modes.
//
// Partition actors append one record per atomic unit they applied (a batch part, a
// reclamation slice): the physical result of the unit, cell by cell, so replay is
// deterministic and idempotent. One writer thread drains the queue: it writes every
// pending record with one write and, in log-sync mode, one sync for all of them (group
// commit) before it runs their acknowledgements. In log mode a record is acknowledged once
// that write has handed it to the OS (so a process crash loses no acknowledged record), and
// the file is synced every `sync_interval`. Files go through the store's env (cellar/env.h).
//
// Failure: the first write or sync that fails puts the log in a failed state (as
// LevelDB's background error): the records of that write are acknowledged with the error
// (IO_ERROR naming the file), every later append is refused with it at once, and
// health() reports it, so partitions refuse writes before applying them. The file is cut
// back to its last whole record when the disk allows. A snapshot that rotates to a new
// file and then completes makes everything in memory durable without the failed file:
// clear_failure() then lets writes in again.
//
// Files are `log-<generation>` (20 decimal digits) in the store directory. A snapshot
// rotates to a new generation before it cuts the partitions; once the snapshot is
// checkpointed, older generations are deleted. Record layout (docs/storage.md):
//   u32 payload length | u32 crc32c(payload) | payload
//   payload = u64 table uid | u32 partition | redo entries (memtable.h)
//
// Thread safety: append(), health() and rotate() may be called from any thread.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cellar/env.h"
#include "cellar/status.h"
#include "persist/codec.h"

namespace cellar::detail {

// What a replay read.
struct log_replay_stats {
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;          // of whole records
  std::uint64_t dropped_bytes = 0;  // of a torn tail, not replayed
  std::string torn_file;            // the file that ended in it, if any
  std::uint64_t torn_offset = 0;    // where the torn record began
};

class redo_log {
 public:
  using ack_fn = std::function<void(const status&)>;

  // Opens (creating) generation `gen` in `dir` for appending.
  static result<std::unique_ptr<redo_log>> open(std::shared_ptr<env> e, std::string dir, std::uint64_t gen,
                                                bool sync_each, std::chrono::milliseconds sync_interval);
  ~redo_log();  // drains, syncs and closes

  // Queues a record and returns OK; `ack` (may be empty) then runs once with the outcome:
  // OK once the record is as durable as the mode promises (log-sync: on disk; log: written
  // to the file, in the OS's hands), or the failure of the write or sync that took it;
  // always on the writer thread. If the log has failed already, returns that failure: nothing
  // is queued and `ack` is not called.
  [[nodiscard]] status append(std::string payload, ack_fn ack);
  // OK, or the failure that stopped the log (IO_ERROR naming the file and the call).
  status health() const;
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // A snapshot that rotated to `gen` has completed: a failure in an earlier generation
  // no longer matters, and writes are taken again.
  void clear_failure(std::uint64_t gen);
  // Switches to generation `gen` once every record queued so far is written; blocks.
  status rotate(std::uint64_t gen);
  // Deletes files of generations below `gen`.
  void remove_before(std::uint64_t gen);

  std::uint64_t generation() const;
  std::uint64_t syncs() const { return syncs_; }
  std::uint64_t records() const { return records_; }
  std::uint64_t bytes() const { return bytes_; }  // written since open, headers included

  // Reads every record of generations >= `from_gen`, in order. A torn last record of
  // the last file that holds any bytes (a crash mid-write: never acknowledged in
  // log-sync mode) ends the log and is counted in `stats`; damage anywhere else is
  // CORRUPTION naming the file and offset.
  static status replay(env& e, const std::string& dir, std::uint64_t from_gen,
                       const std::function<status(std::string_view payload)>& fn, log_replay_stats* stats);
  // The same over one file's bytes (`path` names it in messages); `last` says whether a
  // torn tail may end it.
  static status replay_bytes(std::string_view data, const std::string& path, bool last,
                             const std::function<status(std::string_view payload)>& fn, log_replay_stats* stats);
  static std::vector<std::uint64_t> generations(env& e, const std::string& dir);

 private:
  redo_log() = default;
  void run();
  status open_file(std::uint64_t gen) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  status write_batch(const std::string& buf);
  status sync_file();
  void fail(const status& s);

  std::shared_ptr<env> env_;
  std::string dir_;
  bool sync_each_ = false;
  std::chrono::milliseconds sync_interval_{100};
  // The open file, its name and its size (bytes of whole records): written by open_file,
  // which runs before the writer thread starts and then only on it; read by the writer
  // thread alone, and by the destructor after it has joined.
  std::unique_ptr<file> file_;
  std::string path_;
  std::uint64_t size_ = 0;

  mutable absl::Mutex mu_;
  absl::CondVar cv_;          // the writer waits for records, a rotation or the stop
  absl::CondVar rotated_cv_;  // rotate() waits for the writer to switch files
  std::uint64_t gen_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::pair<std::string, ack_fn>> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::uint64_t rotate_to_ ABSL_GUARDED_BY(mu_) = 0;  // nonzero: a rotation is requested
  std::uint64_t rotations_done_ ABSL_GUARDED_BY(mu_) = 0;
  status rotate_status_ ABSL_GUARDED_BY(mu_);
  status failure_ ABSL_GUARDED_BY(mu_);
  std::uint64_t failed_gen_ ABSL_GUARDED_BY(mu_) = 0;  // the generation that failed
  std::atomic<bool> failed_{false};
  std::atomic<std::uint64_t> syncs_{0};
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::thread writer_;
};

std::string log_file_name(std::uint64_t gen);

// A log record's payload, decoded: the table and partition it belongs to, then entries.
struct log_entry {
  decoded_key key;
  bool present = false;  // false: the cell was erased
  std::int64_t expires_at = 0;
  std::string_view value;
};
struct log_payload_header {
  std::uint64_t uid = 0;
  std::uint32_t partition = 0;
  std::string_view entries;
};
std::optional<log_payload_header> decode_log_header(std::string_view payload);
// Calls fn for each entry of `entries`, in order; CORRUPTION if one is malformed.
status for_each_log_entry(std::string_view entries, const std::function<void(log_entry&)>& fn);

}  // namespace cellar::detail
