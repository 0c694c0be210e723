// persist/priority.h: background threads at idle CPU priority, and back.
//
// Snapshot threads, WiredTiger's own threads and the memory releaser run only when a core
// is otherwise idle (SCHED_IDLE, or nice 10 where that is refused), so that serving comes
// first. A closing store serves nothing, and waiting for an idle core there would hold
// close() up for as long as the machine stays busy (its final snapshot; a free() blocked
// on a malloc lock that an idle thread holds): close() raises them back with
// normal_priority.
#pragma once

#include <sched.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

namespace cellar::detail {

// Thread `tid` (0: the caller) at idle priority.
inline void idle_priority(pid_t tid = 0) {
  sched_param p{};
  if (::sched_setscheduler(tid, SCHED_IDLE, &p) != 0)
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(tid == 0 ? ::gettid() : tid), 10);
}

// Thread `tid` back at the default policy and nice 0. Best effort: raising a thread's
// priority may need CAP_SYS_NICE or a RLIMIT_NICE that allows it.
inline void normal_priority(pid_t tid) {
  sched_param p{};
  ::sched_setscheduler(tid, SCHED_OTHER, &p);
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 0);
}

}  // namespace cellar::detail
