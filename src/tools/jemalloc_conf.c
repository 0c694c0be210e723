/* jemalloc settings compiled into cellar's programs (jemalloc reads this symbol at start;
 * MALLOC_CONF in the environment still overrides it).
 *
 * thp:always. jemalloc zeroes a reused large extent for calloc by purging it
 * (madvise MADV_DONTNEED) unless transparent huge pages are "always"; the next write to
 * every page then faults, and each fault flushes the TLB of every core running the
 * process (an IPI: a VM exit here). Cap'n Proto allocates every message segment with
 * calloc, so each 80 KB scan reply took about 20 faults: 110k faults/s in cellar-server
 * on YCSB E, 10% of its time. With thp:always jemalloc zeroes with memset (perf stat:
 * 442k -> 569 faults in 4 s) and backs its arenas with huge pages where the kernel
 * allows (transparent_hugepage=madvise or always). */
const char *malloc_conf = "thp:always";
