// persist/free_memory.h: hands memory the process has freed back to the operating system.
#pragma once

namespace cellar::detail {

// Returns the allocator's free pages to the kernel now, where it can: jemalloc (cellar's
// programs link it: src/tools/jemalloc_conf.c) purges every arena ("arena.<all>.purge"),
// found at run time so that the library does not depend on it; glibc's malloc trims its
// heaps (malloc_trim). Called after a snapshot frees the deltas it wrote and after
// recovery: otherwise the freed pages stay in the process (jemalloc returns them over
// about 10 s, glibc keeps most of them), and its RSS counts them.
void release_free_memory();

}  // namespace cellar::detail
