// store/snapshot_files.h: the files of a named snapshot or a bulk load (cellar/backup.h;
// docs/backup.md specifies the bytes), and the set of a store's named snapshots.
//
// A snapshot is a set of files: `manifest`, `schema` (snapshots only) and one
// `part-NNNNN.cells` per partition. A `snapshot_repo` keeps a store's snapshots: in
// DIR/snapshots/NAME/ for a store with a directory (each written into a hidden directory,
// synced, then renamed into place, so a crash leaves a snapshot whole or absent), or in
// memory for a memory-only store.
//
// Thread safety: snapshot_repo's calls may be made from any thread; the free functions
// touch only their arguments.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/backup.h"
#include "cellar/status.h"

namespace cellar::detail {

class delta_map;
class loaded_cells;
struct table_schema;

inline constexpr std::string_view manifest_file = "manifest";
inline constexpr std::string_view schema_file = "schema";
// "part-00007.cells"
std::string part_file_name(std::uint32_t partition);

struct snapshot_manifest {
  std::string kind = "snapshot";  // or "bulkload"
  std::string name;
  std::string table;
  std::int64_t created_unix_ms = 0;
  std::uint32_t partitions = 0;
  std::map<std::uint32_t, std::string> families;  // family id in the cell keys -> name
  struct file {
    std::uint64_t bytes = 0;
    std::uint64_t cells = 0;
    std::uint32_t crc = 0;
  };
  std::map<std::string, file> files;  // by file name
  // A snapshot a store with a directory keeps as WiredTiger checkpoint `checkpoint` of
  // tables `tables` of table `uid` instead of part files (docs/backup.md); `cells`: its
  // cells. Empty for one of files.
  std::string checkpoint;
  std::uint64_t uid = 0;
  std::uint64_t cells = 0;
  std::set<std::string> tables;

  snapshot_info info() const;
};

// A manifest of snapshot `name` of `schema`'s table, with no file yet; the ids of the
// table's families into `families`.
snapshot_manifest manifest_of(const std::string& name, std::int64_t now, const table_schema& schema,
                              std::uint32_t partitions, std::set<std::uint32_t>& families);

std::string encode_manifest(const snapshot_manifest& m);
// CORRUPTION naming what is wrong.
result<snapshot_manifest> decode_manifest(std::string_view text);

// A cell file: the present cells of `cells` (erased ones are skipped) whose family is in
// `families` (empty: all), in key order. Counts them into *count.
std::string encode_cells(const delta_map& cells, const std::set<std::uint32_t>& families, std::uint64_t* count);
// The cells of `lc` keyed with the table's family ids, in a map of their own: what a
// partition takes through its Raft group or from another node (a loaded_cells refers to a
// file of this node). Skips a malformed key (a checked file has none).
std::shared_ptr<delta_map> to_cells(const loaded_cells& lc);
// A partition copied in pieces of cell file records (partition/protocol.h:
// move_request::records): `chunks` in key order, each after the one before, and the
// `changes` made since the first was copied (a present entry replaces or adds its cell, an
// erased one removes it; null: none).
struct record_chunks {
  std::vector<std::string_view> chunks;  // held by the caller
  std::shared_ptr<const delta_map> changes;
};
// The cell file of `cells` (the bytes encode_cells makes of the chunks' cells with the
// changes applied) as pieces to write one after another: the header (unless `header` is
// false: the records alone), runs of the chunks' own bytes, and the records of the
// changes, which `scratch` holds. The pieces view `cells` and `scratch`. Chunks not in key
// order after all are merged first (then the records are one piece). Counts the cells
// into *count. CORRUPTION if a chunk's records are malformed.
result<std::vector<std::string_view>> cell_file_pieces(const record_chunks& cells,
                                                       const std::set<std::uint32_t>& families, std::uint64_t* count,
                                                       std::deque<std::string>& scratch, bool header = true);

// The start of a cell file; its cells follow as records (persist/loaded_cells.h:
// append_cell_record).
std::string cell_file_header();
// Calls `each` for every cell of a cell file, in file order; stops at its first error.
// CORRUPTION for a malformed file.
status for_each_cell(
    std::string_view file,
    const std::function<status(std::string_view key, std::int64_t expires_at, std::string_view value)>& each);

// A file's bytes, read-only: a mapping of the file, or a string that holds them. `data`
// stays valid while `owner` lives.
struct file_bytes {
  std::shared_ptr<const void> owner;
  std::string_view data;
};
// The records of a cell file (after its magic); CORRUPTION if it is not one.
result<std::string_view> cell_records(std::string_view file);

// Checks the name of a snapshot: check_name's rules, and no leading '.'.
status check_snapshot_name(std::string_view name);

// A directory's snapshot files, written in steps by a writer that makes its files one at a
// time: a new (or empty) directory, each file, then the manifest last (a directory without
// one is not a snapshot). `durable`: each file and the directory synced (off for a bulk
// load's staging files, which the store reads once and which are checked by their CRCs
// anyway). read_file_checked verifies size and CRC against `m`.
status create_snapshot_dir(const std::string& dir);
status write_snapshot_file(const std::string& dir, const std::string& file, std::string_view data, bool durable);
status write_snapshot_manifest(const std::string& dir, const snapshot_manifest& m, bool durable);
result<snapshot_manifest> read_manifest_dir(const std::string& dir);
result<std::string> read_file_checked(const std::string& dir, const snapshot_manifest& m, const std::string& file);
// As read_file_checked, without copying the file: it is mapped.
result<file_bytes> map_file_checked(const std::string& dir, const snapshot_manifest& m, const std::string& file);
// Reads and checks every file `m` names (CORRUPTION for the first that fails).
status verify_dir(const std::string& dir, const snapshot_manifest& m);

// The files of a snapshot being written (snapshot_repo::put_streamed): bytes appended to
// each file as they come, several files at once, and a file read back and replaced for a
// second pass. One thread at a time.
class snapshot_writer {
 public:
  virtual ~snapshot_writer() = default;
  // Appends `data` to `file` (made on first use).
  virtual status append(const std::string& file, std::string_view data) = 0;
  // What `file` holds so far; valid until `file` is appended to or replaced.
  virtual result<file_bytes> contents(const std::string& file) = 0;
  // `file` from now on holds `pieces`, one after another (they may view its contents).
  virtual status replace(const std::string& file, const std::vector<std::string_view>& pieces) = 0;
};

// Runs `write` with a writer of files in directory `dir` (which exists): a file it appends
// to starts empty; the files are synced and closed when it returns. The first error.
status write_dir_files(const std::string& dir, const std::function<status(snapshot_writer&)>& write);

// A partition's cell file written through a snapshot_writer as its chunks of records
// come (move_request::records: in key order, each after the one before), then made the
// partition's state at its cut: read back and written again with the changes applied
// when there are any, or when a chunk did not come after the one before. Keeps the
// file's size, cells and CRC as a manifest records them.
class cell_file_writer {
 public:
  // `w` and `families` (the cells kept: the table's family ids) must outlive it.
  cell_file_writer(snapshot_writer& w, std::string file, const std::set<std::uint32_t>& families)
      : w_(&w), file_(std::move(file)), families_(&families) {}
  // The file's header.
  status begin();
  // A chunk: its records and the last key it copied.
  status add(std::string_view records, const std::string& last_key);
  // The changes since the first chunk was copied (null: none). CORRUPTION if what was
  // written does not read back as a cell file.
  status finish(const std::shared_ptr<const delta_map>& changes);
  const snapshot_manifest::file& written() const { return f_; }

 private:
  status append(const std::vector<std::string_view>& pieces);

  snapshot_writer* w_;
  std::string file_;
  const std::set<std::uint32_t>* families_;
  snapshot_manifest::file f_;
  std::string last_;         // the last key copied
  bool disordered_ = false;  // a chunk did not come after the one before
};

class snapshot_repo {
 public:
  // `store_dir` empty: memory only.
  explicit snapshot_repo(std::string store_dir);

  // Adds a snapshot. ALREADY_EXISTS if the name is taken (or being written).
  status put(const snapshot_manifest& m, const std::map<std::string, std::string>& files);
  // Adds a snapshot a file at a time, for a writer that receives its files one by one (a
  // cluster's, cluster/snapshot_service.h): begin_staged starts (again) an empty set for
  // `name`, dropping a snapshot of that name this repo holds (the caller knows it is a
  // leftover); stage writes `data` into staged file `file` at `offset` (0 starts the
  // file again; any other offset must be its size so far: the pieces come in order);
  // commit_staged syncs the staged files and adds the snapshot `m` of them, as put does
  // (ALREADY_EXISTS if the name is taken meanwhile).
  status begin_staged(const std::string& name);
  status stage(const std::string& name, const std::string& file, std::string_view data, std::uint64_t offset = 0);
  status commit_staged(const snapshot_manifest& m);
  // Runs `write` with a writer of files staged for `name` (begin_staged first): a file it
  // appends to starts empty; the files are synced when `write` returns OK.
  status write_staged(const std::string& name, const std::function<status(snapshot_writer&)>& write);
  // Drops the files staged for `name`, if any (a write that was cut short).
  void abandon_staged(const std::string& name);
  // Up to `max` bytes of file `file` of snapshot `name` from `offset` (fewer at its end),
  // of the snapshot kept or, with `staged`, of the one being staged; unchecked (the caller
  // checks the whole file). NOT_FOUND when there is no such file.
  result<std::string> read_piece(const std::string& name, const std::string& file, std::uint64_t offset,
                                 std::uint64_t max, bool staged) const;
  // Adds snapshot `name` whose files `make` writes through the writer it is given, as their
  // bytes come (in a store with a directory, straight to the files, so they are never in
  // memory whole); `make` returns the snapshot's manifest, naming `name` and those files.
  // ALREADY_EXISTS if the name is taken (or being written); the name is held from the
  // start; the files are synced before the manifest is written; nothing is left behind
  // when `make` or a write fails.
  status put_streamed(const std::string& name, const std::function<result<snapshot_manifest>(snapshot_writer&)>& make);
  // Adds a snapshot by copying the files of `dir` (checked first).
  status put_from_dir(const snapshot_manifest& m, const std::string& dir);
  result<snapshot_manifest> manifest(const std::string& name) const;
  // A file of snapshot `name`, checked against its manifest.
  result<std::string> read(const std::string& name, const std::string& file) const;
  // As read, without copying a file of a store with a directory (it is mapped).
  result<file_bytes> map(const std::string& name, const std::string& file) const;
  status verify(const std::string& name) const;
  result<std::vector<snapshot_manifest>> list() const;
  status remove(const std::string& name);

 private:
  std::string root() const { return dir_ + "/snapshots"; }
  std::string path(const std::string& name) const { return root() + "/" + name; }
  status claim(const std::string& name);
  void release(const std::string& name);
  // Makes the snapshot written in `tmp` (given status `written`) snapshot `name`: renamed
  // into place and the repository's directory synced, or `tmp` removed on any failure.
  status publish(const std::string& tmp, const std::string& name, status written);

  const std::string dir_;
  mutable absl::Mutex mu_;
  std::set<std::string> writing_ ABSL_GUARDED_BY(mu_);  // names being written now
  struct held {
    snapshot_manifest m;
    std::map<std::string, std::string> files;
  };
  std::map<std::string, held> memory_ ABSL_GUARDED_BY(mu_);  // a memory-only store's
  // A memory-only store's staged files, by snapshot name (a store with a directory stages
  // them in `.new-NAME`).
  std::map<std::string, std::map<std::string, std::string>> staged_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cellar::detail
