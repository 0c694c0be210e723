// partition/rw_lock.h: a reader-writer lock that prefers its writer.
//
// A partition's actor takes it exclusively whenever it touches its memtable; threads that
// read in place (local_partition's try_read_into, try_read_views, try_scan) only ever try
// to take it shared, and read through the actor when they cannot. With a plain mutex, two
// RPC loops reading the same partition at the same instant would push one of them through
// the actor (a thread hand-off) although neither writes. glibc's default rwlock prefers
// readers, so readers arriving one after another could keep the actor waiting; with
// PREFER_WRITER_NONRECURSIVE, a waiting writer makes try_lock_shared fail, so the actor
// waits for at most the reads already running.
#pragma once

#include <pthread.h>

#include <system_error>

namespace cellar::detail {

class rw_lock {
 public:
  rw_lock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    const int rc = pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_rwlock_init");
  }
  ~rw_lock() { pthread_rwlock_destroy(&lock_); }
  rw_lock(const rw_lock&) = delete;
  rw_lock& operator=(const rw_lock&) = delete;

  // Exclusive (Lockable, for std::unique_lock and std::lock_guard).
  void lock() {
    if (const int rc = pthread_rwlock_wrlock(&lock_); rc != 0)
      throw std::system_error(rc, std::generic_category(), "pthread_rwlock_wrlock");
  }
  bool try_lock() { return pthread_rwlock_trywrlock(&lock_) == 0; }
  void unlock() { pthread_rwlock_unlock(&lock_); }

  // Shared (for std::shared_lock).
  void lock_shared() {
    if (const int rc = pthread_rwlock_rdlock(&lock_); rc != 0)
      throw std::system_error(rc, std::generic_category(), "pthread_rwlock_rdlock");
  }
  bool try_lock_shared() { return pthread_rwlock_tryrdlock(&lock_) == 0; }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

}  // namespace cellar::detail
