// replica/storage.h: the persistent state of one replica of a Raft group.
//
// Raft needs, on each replica, four things to survive a restart: the current term, the
// vote cast in it, the log entries and the latest snapshot. A replica_storage keeps them;
// the group's raft_io (replica/actor_io.h) calls it and nothing else does. Two kinds:
//  - memory_storage: kept in memory only. A replica that restarts in the same process
//    (the object outlives it) finds its state again; a process that dies loses it, so
//    the group's data then survives only while a majority of replicas survives.
//  - file_storage: one log file and one snapshot file per group under a directory; every
//    change is written before the call returns, and fsynced first when `sync` is set.
//
// Indices follow Raft: the first entry ever is index 1; entries are contiguous from
// first_index(); a snapshot replaces every entry up to its index.
//
// Thread safety: none; a storage belongs to one replica, which calls it from its actor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"

namespace cellar::replica {

struct log_entry {
  std::uint64_t term = 0;
  std::uint16_t type = 0;  // RAFT_COMMAND, RAFT_BARRIER or RAFT_CHANGE
  std::string data;
  friend bool operator==(const log_entry&, const log_entry&) = default;
};

// What a snapshot is, without its bytes.
struct snapshot_meta {
  std::uint64_t index = 0;    // last entry the snapshot covers
  std::uint64_t term = 0;     // its term
  std::string configuration;  // encode_configuration (replica/wire.h) as of `index`
  std::uint64_t configuration_index = 0;
};

struct snapshot_record : snapshot_meta {
  std::string data;  // the state machine's bytes
};

// Everything a replica finds at start.
struct persisted_state {
  std::uint64_t term = 0;
  std::uint64_t vote = 0;  // 0: no vote in `term`
  std::optional<snapshot_record> snapshot;
  std::uint64_t first_index = 1;  // index of entries[0]
  std::vector<log_entry> entries;
};

class replica_storage {
 public:
  virtual ~replica_storage() = default;

  // The state as last written. IO_ERROR or CORRUPTION when it cannot be read back.
  virtual status load(persisted_state& out) = 0;
  // A new term; clears the vote.
  virtual status set_term(std::uint64_t term) = 0;
  virtual status set_vote(std::uint64_t server) = 0;
  // Appends entries at index last_index() + 1 on.
  virtual status append(const std::vector<log_entry>& entries) = 0;
  // Deletes the entries from `index` on.
  virtual status truncate(std::uint64_t index) = 0;
  // Stores the snapshot `s` whose state machine bytes are `data` as the latest snapshot
  // and deletes the entries it covers except the last `trailing` of them; trailing 0
  // deletes every entry (a snapshot installed from a leader replaces the whole log).
  // `data` is not needed after the call.
  virtual status put_snapshot(const snapshot_meta& s, std::string_view data, unsigned trailing) = 0;
  // The latest snapshot, if any.
  virtual status get_snapshot(std::optional<snapshot_record>& out) = 0;

  // The index of the last entry (or of the snapshot if no entry follows it); 0 if none.
  virtual std::uint64_t last_index() const = 0;
};

// A storage in memory (see above).
class memory_storage final : public replica_storage {
 public:
  status load(persisted_state& out) override;
  status set_term(std::uint64_t term) override;
  status set_vote(std::uint64_t server) override;
  status append(const std::vector<log_entry>& entries) override;
  status truncate(std::uint64_t index) override;
  status put_snapshot(const snapshot_meta& s, std::string_view data, unsigned trailing) override;
  status get_snapshot(std::optional<snapshot_record>& out) override;
  std::uint64_t last_index() const override;

 private:
  persisted_state s_;
};

// A storage in files `<dir>/<name>.raftlog` and `<dir>/<name>.raftsnap` (see above). The
// log file is a sequence of records (u32 length | u32 crc32c | payload); a torn record at
// its end, left by a crash in the middle of a write, is dropped at load. A snapshot is
// written to a new file that replaces the old one by rename, and the log is then rewritten
// without the entries it covers. The snapshot's bytes stay in their file, not in memory:
// load and get_snapshot read them from it.
class file_storage final : public replica_storage {
 public:
  // Opens or creates the files. `sync`: fsync each change before the call returns.
  static result<std::unique_ptr<file_storage>> open(const std::string& dir, const std::string& name, bool sync);
  ~file_storage() override;

  status load(persisted_state& out) override;
  status set_term(std::uint64_t term) override;
  status set_vote(std::uint64_t server) override;
  status append(const std::vector<log_entry>& entries) override;
  status truncate(std::uint64_t index) override;
  status put_snapshot(const snapshot_meta& s, std::string_view data, unsigned trailing) override;
  status get_snapshot(std::optional<snapshot_record>& out) override;
  std::uint64_t last_index() const override;

 private:
  file_storage(std::string dir, std::string name, bool sync)
      : dir_(std::move(dir)), name_(std::move(name)), sync_(sync) {}
  status read_all();
  status write_records(const std::string& bytes);
  status rewrite_log();
  status read_snapshot(std::optional<snapshot_record>& out) const;
  std::string log_path() const;
  std::string snap_path() const;

  std::string dir_, name_;
  bool sync_;
  int fd_ = -1;
  // A copy of what the files hold, so that appends need no reads; but the snapshot's
  // bytes (s_.snapshot->data stays empty).
  persisted_state s_;
  // The snapshot's bytes as open() read them, until the first load takes them or a new
  // snapshot replaces them.
  std::string opened_data_;
};

}  // namespace cellar::replica
