/* jemalloc settings compiled into cellar's programs (jemalloc reads this symbol at start;
 * MALLOC_CONF in the environment still overrides it).
 *
 * thp:always. jemalloc zeroes a reused large extent for calloc by purging it (madvise
 * MADV_DONTNEED) unless transparent huge pages are "always"; the next write to every page
 * then faults, and each fault flushes the TLB of every core running the process (an
 * inter-processor interrupt, which a virtual machine pays dearly). Cap'n Proto allocates
 * every message segment with calloc, so every large reply (a scan page) would take a fault
 * per page. With thp:always jemalloc zeroes with memset and backs its arenas with huge
 * pages where the kernel allows (transparent_hugepage=madvise or always). */
const char *malloc_conf = "thp:always";
