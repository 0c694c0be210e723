// persist/dir_lock.h: one process at a time in a store directory.
//
// A store's directory is held by the process that opened it, until it closes: the holder
// keeps an exclusive flock(2) on `<dir>/cellar.lock` and has written its pid there, so
// that another process opening the directory (an embedded shell while a server runs, a
// second server) is told who holds it, instead of failing inside WiredTiger. The kernel
// drops the lock when the holder's process ends, however it ends; the file stays (an old
// pid in it means nothing once the lock is free). flock rather than fcntl: fcntl's locks
// belong to the process, so a second open in the same process would be granted the lock
// and its close would drop the first one's.
//
// Thread safety: a dir_lock is a plain owned handle.
#pragma once

#include <memory>
#include <string>

#include "cellar/env.h"
#include "cellar/status.h"

namespace cellar::detail {

class dir_lock {
 public:
  // Creates `dir` through `e` when it is missing, then takes its lock. Errors: IO_ERROR
  // "the store directory D is in use by another process (pid N)" (the holder's pid as it
  // wrote it; "this process" when it is this one), or naming what the system refused.
  static result<std::unique_ptr<dir_lock>> acquire(const std::string& dir, env& e);
  ~dir_lock();  // releases the lock
  dir_lock(const dir_lock&) = delete;
  dir_lock& operator=(const dir_lock&) = delete;

 private:
  explicit dir_lock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace cellar::detail
