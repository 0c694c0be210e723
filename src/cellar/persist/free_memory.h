// persist/free_memory.h: hands memory the process has freed back to the operating system.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <mutex>
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

// release_free_memory() on a thread of its own at idle priority, so that the caller does
// not wait for it. After a snapshot of a fresh 1M-cell store the purge took 0.25-0.9 s on
// the 2-core VMs (madvise over jemalloc's huge-page arenas: a TLB shootdown per range),
// longer than writing the snapshot; the snapshot call now returns without it, and the
// process's RSS falls a moment later.
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

  const bool idle_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool pending_ = false;  // guarded by mu_
  bool stop_ = false;     // guarded by mu_
  bool hurry_ = false;    // guarded by mu_
  pid_t tid_ = 0;         // the thread's, once it runs; guarded by mu_
  std::thread thread_;    // started by the first request, under mu_
};

}  // namespace cellar::detail
