// persist/early_writeback.h: a bulk-loaded partition file written back while its load runs
// (persist/wt_home.cc's bulk loads).
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "cellar/env.h"

namespace cellar::detail {

// Writes back a bulk-loaded file while the load runs, on a handle of our own (through
// the store's env, as WiredTiger's own handle is).
//
// Closing a WiredTiger bulk cursor syncs the file while WiredTiger holds a lock of the
// whole connection, so the snapshot threads' closes would run one after another, each
// waiting on the disk. So the loader syncs the file itself before the close, outside
// WiredTiger's lock, and the close finds only the last page and its checkpoint to sync.
// Durability is unchanged: WiredTiger still syncs at close.
//
// And it syncs while the load runs: every few MB handed to WiredTiger, the kernel is
// asked to start writing them back (sync_file_range SYNC_FILE_RANGE_WRITE) and a thread
// of the load's own calls fdatasync, so that the loader goes on encoding meanwhile
// (write-back alone does not make the final fdatasync cheap on every storage). A sync of
// a loading file that fails is remembered and returned by sync(): the kernel reports a
// write-back error to one sync of a file description only.
class early_writeback {
 public:
  early_writeback(env& e, const std::string& path) {
    open_flags o;
    o.read_only = true;
    if (e.open(path, o, &f_) != 0) f_.reset();
  }
  ~early_writeback() { stop(); }
  early_writeback(const early_writeback&) = delete;
  early_writeback& operator=(const early_writeback&) = delete;

  // `bytes` more were handed to WiredTiger.
  void wrote(std::size_t bytes) {
    pending_ += bytes;
    if (!f_ || pending_ < every) return;
    pending_ = 0;
    f_->start_writeback();  // a hint: a failure shows at sync
    absl::MutexLock l(&mu_);
    requested_ = true;
    if (!syncer_.joinable()) syncer_ = std::thread([this] { run(); });
  }
  // Waits for what has been written so far to reach the disk. Without a file (it could
  // not be opened), nothing to do: WiredTiger's close syncs it all.
  int sync() {
    if (!f_) return 0;
    const int early = stop();
    const int err = f_->sync();
    return early != 0 ? early : err;
  }

 private:
  static constexpr std::size_t every = 4u << 20;

  void run() ABSL_LOCKS_EXCLUDED(mu_) {
    const auto asked = [this] {
      mu_.AssertHeld();
      return stop_ || requested_;
    };
    absl::MutexLock l(&mu_);
    for (;;) {
      mu_.Await(absl::Condition(&asked));
      if (stop_) return;  // the caller's own sync follows
      requested_ = false;
      mu_.Unlock();
      const int err = f_->sync();
      mu_.Lock();
      if (err != 0 && error_ == 0) error_ = err;
    }
  }
  // Stops the syncing thread; the first error it met.
  int stop() ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::MutexLock l(&mu_);
      stop_ = true;
    }
    if (syncer_.joinable()) syncer_.join();
    absl::MutexLock l(&mu_);
    return error_;
  }

  std::unique_ptr<file> f_;
  std::size_t pending_ = 0;
  absl::Mutex mu_;
  bool requested_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int error_ ABSL_GUARDED_BY(mu_) = 0;  // the first error the syncing thread met
  std::thread syncer_;
};

}  // namespace cellar::detail
