#include "persist/free_memory.h"

#include "persist/priority.h"

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <cstddef>

namespace cellar::detail {

void release_free_memory() {
  using mallctl_fn = int (*)(const char*, void*, std::size_t*, void*, std::size_t);
  // jemalloc's MALLCTL_ARENAS_ALL is 4096.
  if (auto* mallctl = reinterpret_cast<mallctl_fn>(::dlsym(RTLD_DEFAULT, "mallctl"))) {
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return;
  }
  ::malloc_trim(0);
}

memory_releaser::~memory_releaser() {
  std::thread t;
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    t = std::move(thread_);
  }
  if (t.joinable()) t.join();
}

void memory_releaser::request() {
  absl::MutexLock lock(&mu_);
  pending_ = true;
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void memory_releaser::hurry() {
  absl::MutexLock lock(&mu_);
  hurry_ = true;
  if (tid_ != 0) normal_priority(tid_);
}

void memory_releaser::run() {
  ::pthread_setname_np(::pthread_self(), "cellar-release");
  absl::MutexLock lock(&mu_);
  tid_ = ::gettid();
  if (idle_ && !hurry_) idle_priority();
  for (;;) {
    mu_.Await(absl::Condition(this, &memory_releaser::has_work));
    if (stop_) return;
    pending_ = false;
    mu_.Unlock();
    release_free_memory();
    mu_.Lock();
  }
}

}  // namespace cellar::detail
