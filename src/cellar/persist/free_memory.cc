#include "persist/free_memory.h"

#include <dlfcn.h>
#include <malloc.h>

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

}  // namespace cellar::detail
