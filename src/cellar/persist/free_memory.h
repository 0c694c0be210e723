// persist/free_memory.h: hands memory the process has freed back to the operating system.
#pragma once

#include <sys/types.h>

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <thread>

namespace cellar::detail {

// Returns the allocator's free pages to the kernel now, where it can: jemalloc (cellar's
// programs link it: src/tools/jemalloc_conf.c) purges every arena ("arena.<all>.purge"),
// found at run time so that the library does not depend on it; glibc's malloc trims its
// heaps (malloc_trim). Called after recovery, and through memory_releaser after a
// snapshot frees the deltas it wrote: otherwise the freed pages stay in the process
// (jemalloc returns them over about 10 s, glibc keeps most of them), and its RSS counts
// them.
void release_free_memory();

// release_free_memory() on a thread of its own, so that the caller does not wait for it:
// after a large snapshot the purge (madvise over the allocator's huge-page arenas, a TLB
// shootdown per range) can take longer than writing the snapshot did. The process's RSS
// falls a moment after the snapshot returns.
//
// Thread safety: request() may be called from any thread.
class memory_releaser {
 public:
  // `idle`: the releaser's thread runs at idle CPU priority until hurry() (persist/priority.h).
  explicit memory_releaser(bool idle = false) : idle_(idle) {}
  // Waits for a release that is running; one only requested is dropped.
  ~memory_releaser();
  memory_releaser(const memory_releaser&) = delete;
  memory_releaser& operator=(const memory_releaser&) = delete;

  // Returns at once. The release starts soon (the thread starts on the first request);
  // a request made while one runs makes it run once more afterwards.
  void request();
  // The releaser's thread, now and from its start, at normal priority (persist/priority.h):
  // for a closing store, whose destructor waits for a release that runs.
  void hurry();

 private:
  void run();
  bool has_work() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || pending_; }

  const bool idle_;
  absl::Mutex mu_;
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool hurry_ ABSL_GUARDED_BY(mu_) = false;
  pid_t tid_ ABSL_GUARDED_BY(mu_) = 0;       // the thread's, once it runs
  std::thread thread_ ABSL_GUARDED_BY(mu_);  // started by the first request
};

}  // namespace cellar::detail
