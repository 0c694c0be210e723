// cellar/env.h: the file system a persistent store goes through.
//
// Every file a store reads or writes goes through one `env`, as LevelDB's Env: the redo
// log, the snapshot writer's own syncs, and WiredTiger's files (the store hands WiredTiger
// a WT_FILE_SYSTEM built on the env, persist/wt_file_system.h). `env::posix()` calls the
// operating system and is the default. A test wraps it to make chosen calls fail (EIO,
// ENOSPC, short writes, failing syncs) and checks what the store then promises
// (tests/persist/fault_env.h, test_faults.cc).
//
// Errors are errno values, 0 for success, as the system calls report them: WiredTiger
// takes errno values, and the store turns them into IO_ERROR statuses naming the file.
//
// Thread safety: an env and its files may be used from several threads at once (reads
// and writes at distinct offsets of one file too, as pread/pwrite). A file's truncate
// and close are never called concurrently with anything else on that file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cellar {

// An open file (or directory, for sync only).
class file {
 public:
  virtual ~file() = default;  // closes, ignoring errors; call close() to see them

  // Reads up to `n` bytes at `offset`; `*got` is what was read: less than `n` only at the
  // end of the file.
  virtual int read(std::uint64_t offset, void* buf, std::size_t n, std::size_t* got) = 0;
  // Writes up to `n` bytes at `offset`; `*put` is what was written, which may be less
  // than `n` without an error (a short write): callers write the rest (write_all).
  virtual int write(std::uint64_t offset, const void* buf, std::size_t n, std::size_t* put) = 0;
  virtual int size(std::uint64_t* out) = 0;
  virtual int truncate(std::uint64_t size) = 0;
  // Makes what was written durable (fdatasync; fsync for a directory: its entries).
  virtual int sync() = 0;
  // Starts writing back what was written, without waiting (a hint: sync_file_range).
  virtual int start_writeback() = 0;
  // An advisory lock of the whole file against other processes (WiredTiger's
  // WiredTiger.lock): EBUSY-like errors when another process holds it.
  virtual int lock(bool on) = 0;
  // Closes; later calls are not allowed.
  virtual int close() = 0;
};

// Writes all `n` bytes at `offset`, continuing after short writes. A write that makes no
// progress is EIO.
int write_all(file& f, std::uint64_t offset, const void* buf, std::size_t n);

struct open_flags {
  bool create = false;     // create the file if it does not exist
  bool exclusive = false;  // with create: EEXIST if it exists
  bool read_only = false;
  bool directory = false;  // a directory, opened to sync its entries
};

class env {
 public:
  virtual ~env() = default;

  // The operating system's files. One shared instance.
  static std::shared_ptr<env> posix();

  virtual int open(const std::string& path, open_flags flags, std::unique_ptr<file>* out) = 0;
  virtual int exists(const std::string& path, bool* out) = 0;
  virtual int file_size(const std::string& path, std::uint64_t* out) = 0;
  virtual int remove(const std::string& path) = 0;
  virtual int rename(const std::string& from, const std::string& to) = 0;
  // The names in `dir` (not "." or ".."), unordered.
  virtual int children(const std::string& dir, std::vector<std::string>* names) = 0;
  // Creates `dir`; 0 if it exists already.
  virtual int create_dir(const std::string& dir) = 0;
  // Makes `dir`'s entries (files created, renamed or removed in it) durable.
  virtual int sync_dir(const std::string& dir);
};

}  // namespace cellar
