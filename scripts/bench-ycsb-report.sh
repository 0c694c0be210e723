#!/usr/bin/env bash
# Writes OUT/report.md from the results of scripts/bench-ycsb.sh in OUT (params, runs.tsv,
# memory.tsv, crosscheck.tsv); bench-ycsb.sh runs it at its end. Run it again to rewrite
# the report of an earlier run:
#
#   scripts/bench-ycsb-report.sh build/bench-results/ycsb
set -euo pipefail
out=${1:?usage: bench-ycsb-report.sh OUT}
[ -f "$out/params" ] || { echo "bench-ycsb-report: no $out/params (not a bench-ycsb.sh output)" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
case "$(cd "$out" && pwd)/" in
  "$root"/docs/*) echo "bench-ycsb-report: $out is under docs/: results belong in a build directory" >&2; exit 2 ;;
esac
# shellcheck disable=SC1091
. "$out/params"
runs_tsv=$out/runs.tsv
mem_tsv=$out/memory.tsv
xcheck_tsv=$out/crosscheck.tsv

report=$out/report.md
# table SECTION: the YCSB table of a section from runs.tsv.
table() {
  awk -F'\t' -v section="$1" -v depth="$depth" -v conns="$connections" '
    function median(list,   a, n, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function lo(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]; return m }
    function hi(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] > m) m = a[i]; return m }
    function k(v) { return sprintf("%.1f k", v / 1000) }
    function range(list) { return split(list, tmp, " ") > 1 ? sprintf(" (%.1f-%.1f)", lo(list) / 1000, hi(list) / 1000) : "" }
    function urange(list) { return split(list, tmp, " ") > 1 ? sprintf(" (%.2f-%.2f)", lo(list), hi(list)) : "" }
    $1 == section {
      key = $2 SUBSEP $3
      if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }
      ops[key] = ops[key] " " $5; p99[key] = p99[key] " " $6; err[key] += $7
      srv[key] = srv[key] " " $9; cli[key] = cli[key] " " $10; util[key] = util[key] " " $11
      byrep[$2 SUBSEP $3 SUBSEP $4] = $5
      if ($3 == "cellar") reps[$2] = reps[$2] " " $4
    }
    END {
      print "| workload | cellar ops/s | redis ops/s | ratio | cellar server µs/op | redis server µs/op | CPU/op ratio | p99 µs cellar / redis | load generator µs/op (CPU) cellar / redis | errors cellar / redis |"
      print "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
      for (i = 1; i <= n; i++) {
        w = order[i]; c = w SUBSEP "cellar"; r = w SUBSEP "redis"
        d = w; sub(/-p[0-9]+$/, "", d)
        label = toupper(d) (w ~ /-p[0-9]+$/ ? ", depth " substr(w, index(w, "-p") + 2) : ", no pipelining")
        if (d == "e") label = "E (scans), no pipelining"
        # the ratio of each repetition (cellar and redis ran one after the other)
        rl = ""; m = split(reps[w], rr, " ")
        for (j = 1; j <= m; j++) if ((w SUBSEP "redis" SUBSEP rr[j]) in byrep && byrep[w SUBSEP "redis" SUBSEP rr[j]] > 0)
          rl = rl " " byrep[w SUBSEP "cellar" SUBSEP rr[j]] / byrep[w SUBSEP "redis" SUBSEP rr[j]]
        ratio = median(ops[r]) > 0 ? sprintf("%.2fx", median(ops[c]) / median(ops[r])) : "-"
        if (split(rl, tmp, " ") > 1) ratio = ratio sprintf(" (%.2f-%.2f)", lo(rl), hi(rl))
        printf "| %s | %s%s | %s%s | %s | %.2f%s | %.2f%s | %.2fx | %.0f / %.0f | %.2f (%.0f%%) / %.2f (%.0f%%) | %d / %d |\n",
          label, k(median(ops[c])), range(ops[c]), k(median(ops[r])), range(ops[r]), ratio,
          median(srv[c]), urange(srv[c]), median(srv[r]), urange(srv[r]),
          (median(srv[r]) > 0 ? median(srv[c]) / median(srv[r]) : 0),
          median(p99[c]), median(p99[r]), median(cli[c]), median(util[c]) * 100, median(cli[r]), median(util[r]) * 100,
          err[c], err[r]
      }
    }' "$runs_tsv"
}

memory_table() {
  awk -F'\t' -v records="$records" '
    function mb(kb) { return sprintf("%.0f MB", kb / 1024) }
    function per(kb, e0) { return sprintf("%.0f", (kb - e0) * 1024 / (records * 10)) }
    { key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4; rss[key] = $5; e0[key] = $6; disk[key] = $7 }
    END {
      print "| values | redis | cellar in memory | ratio | cellar, data directory: loaded | after a snapshot | after a restart | ratio after restart | data directory on disk |"
      print "|---|--:|--:|--:|--:|--:|--:|--:|--:|"
      for (fl = 100; fl >= 10; fl -= 90) {
        r = "redis" SUBSEP "core" SUBSEP fl SUBSEP "loaded"; c = "cellar" SUBSEP "core" SUBSEP fl SUBSEP "loaded"
        dl = "cellar" SUBSEP "data" SUBSEP fl SUBSEP "loaded"; ds = "cellar" SUBSEP "data" SUBSEP fl SUBSEP "snapshot"
        dr = "cellar" SUBSEP "data" SUBSEP fl SUBSEP "restart"
        if (!(r in rss) && !(dl in rss)) continue
        printf "| %d bytes: RSS | %s | %s | %s | %s | %s | %s | %s | %s |\n", fl,
          (r in rss) ? mb(rss[r]) : "-", (c in rss) ? mb(rss[c]) : "-",
          (r in rss) && (c in rss) ? sprintf("%.2fx", rss[c] / rss[r]) : "-",
          (dl in rss) ? mb(rss[dl]) : "-", (ds in rss) ? mb(rss[ds]) : "-", (dr in rss) ? mb(rss[dr]) : "-",
          (r in rss) && (dr in rss) ? sprintf("%.2fx", rss[dr] / rss[r]) : "-",
          (ds in disk) ? sprintf("%.0f MB", disk[ds] / 1048576) : "-"
        printf "| %d bytes: bytes per cell above the empty server | %s | %s | %s | %s | %s | %s | %s | |\n", fl,
          (r in rss) ? per(rss[r], e0[r]) : "-", (c in rss) ? per(rss[c], e0[c]) : "-",
          ((r in rss) && (c in rss) && rss[r] > e0[r] ? sprintf("%.2fx", (rss[c] - e0[c]) / (rss[r] - e0[r])) : "-"),
          (dl in rss) ? per(rss[dl], e0[dl]) : "-", (ds in rss) ? per(rss[ds], e0[ds]) : "-",
          (dr in rss) ? per(rss[dr], e0[dr]) : "-",
          ((r in rss) && (dr in rss) && rss[r] > e0[r] ? sprintf("%.2fx", (rss[dr] - e0[dr]) / (rss[r] - e0[r])) : "-")
      }
    }' "$mem_tsv"
}

xcheck_table() {
  awk -F'\t' '
    function median(list,   a, n, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function span(list,   a, n, i, lo, hi) {
      n = split(list, a, " "); lo = a[1]; hi = a[1]
      for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
      return n > 1 ? sprintf(" (%.2f-%.2f)", lo, hi) : ""
    }
    { d = $1
      if (!(d in seen)) { seen[d] = 1; order[++n] = d }
      lg[d] = lg[d] " " $3; lgs[d] = lgs[d] " " $4; lgc[d] = lgc[d] " " $5; lgu[d] = lgu[d] " " $6
      rb[d] = rb[d] " " $7; rbs[d] = rbs[d] " " $8; rbc[d] = rbc[d] " " $9; rbu[d] = rbu[d] " " $10
      ratio[d] = ratio[d] " " ($7 > 0 ? $3 / $7 : 0); sratio[d] = sratio[d] " " ($8 > 0 ? $4 / $8 : 0); miss[d] += $11 }
    END {
      print "| pipelining | load generator ops/s | redis-benchmark ops/s | ratio | within 10% | server µs/op, load generator / redis-benchmark | ratio | client µs/op (CPU), load generator / redis-benchmark | keys missed by redis-benchmark |"
      print "|---|--:|--:|--:|--:|--:|--:|--:|--:|"
      for (i = 1; i <= n; i++) {
        d = order[i]; r = median(ratio[d])
        printf "| -P %s | %.1f k | %.1f k | %.2f%s | %s | %.2f / %.2f | %.2f%s | %.2f (%.0f%%) / %.2f (%.0f%%) | %d |\n", d,
          median(lg[d]) / 1000, median(rb[d]) / 1000, r, span(ratio[d]), ((r >= 0.9 && r <= 1.1) ? "yes" : "**no**"),
          median(lgs[d]), median(rbs[d]), median(sratio[d]), span(sratio[d]),
          median(lgc[d]), median(lgu[d]) * 100, median(rbc[d]), median(rbu[d]) * 100, miss[d]
      }
    }' "$xcheck_tsv"
}

{
  echo "# YCSB: cellar against Redis"
  echo
  echo "Written by \`scripts/bench-ycsb.sh\`, started $started: $cpus CPUs ($cpu_model, $kernel),"
  echo "redis-server $redis_version, cellar $cellar_rev. Load average at the start $loadavg_start,"
  echo "at the end $loadavg_end."
  echo
  echo '```sh'
  echo "$cmdline"
  echo '```'
  echo
  echo "$records records of 10 fields (100 bytes each unless said), $connections connections, ${duration} s per run,"
  echo "$reps repetitions: each figure is the median, min-max in brackets. Throughput is operations per"
  echo "second over the run (a scan is one operation); p99 in microseconds from a request's send to"
  echo "its answer. Server µs/op: the server process's CPU time (utime + stime of all its threads,"
  echo "/proc/PID/stat) during the run over the operations done; the load generator's likewise, with"
  echo "the share of a CPU it used (near 100% on one thread: the client may limit the figure)."
  echo "Neither server persists: redis-server \`--save '' --appendonly no\`, cellar-server \`--data ''\`."
  echo
  echo "## Per core"
  echo
  echo "Both servers pinned to CPU $server_cpu (\`taskset -c $server_cpu\`), one serving thread each:"
  echo "\`cellar-server $pinned_cellar\` (one event loop; one CAF worker for the partition actors),"
  echo "\`redis-server\` (io-threads 1). The load generator alone on CPU $client_cpu, one thread"
  echo "(\`taskset -c $client_cpu loadgen --threads 1\`). cellar table \`$partitioning\`, frame protocol."
  echo "Each repetition runs C, A, C and A at depth $depth on cellar then redis; E runs on freshly"
  echo "loaded stores."
  echo
  table core
  echo
  echo "Goals of issue 19, per core: ops/s ratio at least 1.30x on C and A (both depths) and E;"
  echo "server CPU per operation at most 0.77x Redis's."
  echo
  if [ "$memory" -eq 1 ]; then
    echo "## Memory"
    echo
    echo "VmRSS of each server after loading $records records (the same pinned single-core servers),"
    echo "with 100-byte and 10-byte values ($((records * 10)) cells); bytes per cell: (RSS - RSS of the"
    echo "empty server) / cells. The data directory rows: \`cellar-server --data DIR\`, loaded, then a"
    echo "snapshot (\`cellar-shell\` \`snapshot\`), then stopped and started again on the directory."
    echo
    memory_table
    echo
    echo "Goals of issue 19: RSS after loading at most 1.0x redis-server's in memory; with a data"
    echo "directory, after a snapshot and after a restart, at most 1.3x."
    echo
  fi
  if [ "$two_threads" -eq 1 ]; then
    echo "## Two threads"
    echo
    echo "Nothing pinned: cellar-server with its defaults (one event loop per CPU, each on its CPU;"
    echo "half the CPUs for partition actors), \`redis-server --io-threads 2\`, the load generator with"
    echo "two threads."
    echo
    table two
    echo
  fi
  if [ "$crosscheck" -eq 1 ]; then
    echo "## The load generator's Redis engine against redis-benchmark"
    echo
    echo "The pinned redis-server of the per-core section, loaded with keys named as redis-benchmark"
    echo "names them (\`loadgen --insert-order ordered --zero-padding 12\`: user000000000000 ...);"
    echo "HGETALL of uniformly random loaded keys, $connections connections, both clients on CPU $client_cpu:"
    echo "\`loadgen --workload c --request-distribution uniform --depth D\` for ${duration} s, then"
    echo "\`redis-benchmark -c $connections -P D -r $records -n N HGETALL user__rand_int__\` with N the"
    echo "load generator's operations. Keys missed: keyspace_misses of redis-server during redis-benchmark"
    echo "(0: every HGETALL found a record). The ratios should be within 10%; a client near 100% of"
    echo "its CPU limits its figure (redis-benchmark spends more per request: it re-arms epoll for"
    echo "every request, 5 epoll_ctl per HGETALL at -P 1, and at -P D it sends the next D only when all"
    echo "D replies are in), so then compare the server's CPU per operation, which does not depend on"
    echo "the client."
    echo
    xcheck_table
    echo
  fi
} >"$report"
echo "bench-ycsb: wrote $report (runs: $runs_tsv, $mem_tsv; results: $out/json)"
cat "$report"
