#!/usr/bin/env bash
# YCSB, cellar-server against redis-server, same machine, same run, same load generator
# (examples/loadgen); writes a markdown report (OUT/report.md) and every run's results.
#
#   scripts/bench-ycsb.sh [--duration 20] [--reps 5] [--records 100000] [--connections 50]
#                         [--depth 16] [--server-cpu 1] [--client-cpu 0] [--partitioning range:8]
#                         [--skip-build] [--skip-two-threads] [--skip-memory] [--skip-crosscheck]
#                         [--out build/bench-results/ycsb]
#
# Sections of the report, in the order they run:
# 1. Per core (the headline): each server pinned to the same CPU (taskset -c SERVER_CPU)
#    with one serving thread (cellar-server --event-loops 1 --worker-threads 1; redis-server
#    as it comes, io-threads 1), the load generator alone on CLIENT_CPU with one thread.
#    YCSB C, A, C and A at pipelining depth DEPTH, then E on freshly loaded stores; each
#    `reps` times, cellar and redis alternating (cellar, redis, cellar, redis, ...; every
#    workload once per repetition). Median and min-max of the throughput, the server's CPU
#    per operation (utime + stime from /proc/PID/stat around each run) and the load
#    generator's, p99. RSS of each server before and after loading.
# 2. Memory: RSS after loading with 100-byte and 10-byte values, cellar in memory and with a
#    data directory (after loading, after a snapshot, after a restart), and bytes per cell.
# 3. Two threads: the same workloads with cellar-server's defaults (one event loop per core)
#    against redis-server --io-threads 2, nothing pinned, two load generator threads.
# 4. The redis engine of the load generator against redis-benchmark: HGETALL of uniformly
#    random loaded keys (the load generator with --insert-order ordered --zero-padding 12,
#    redis-benchmark's "user__rand_int__"), 50 connections, -P 1 and -P DEPTH, on the pinned
#    redis-server; the ratio should be within 10%.
#
# Neither server persists in sections 1, 3 and 4 (redis-server --save '' --appendonly no,
# cellar-server --data ''). A run with the defaults takes about 45 minutes; a smoke run:
# scripts/bench-ycsb.sh --skip-build --duration 3 --reps 1 (two to three minutes, most of it
# loading). docs/ycsb.md says what each figure is. Results go to OUT, a directory outside
# the source tree's pages (never under docs/: the figures worth keeping are copied into
# docs/benchmarks.md by hand, with the command; the data files stay with the build).
# LOADGEN, CELLAR_SERVER and CELLAR_SHELL override the binaries (default: ./build/...).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

records=100000
duration=20
reps=5
connections=50
depth=16
server_cpu=1
client_cpu=0
partitioning=range:8
skip_build=0
two_threads=1
memory=1
crosscheck=1
out=build/bench-results/ycsb
cmdline="scripts/bench-ycsb.sh $*"
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --depth) depth=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --partitioning) partitioning=$2; shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    --skip-two-threads) two_threads=0; shift ;;
    --skip-memory) memory=0; shift ;;
    --skip-crosscheck) crosscheck=0; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "bench-ycsb: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$(realpath -m "$out")/" in
  "$root"/docs/*) echo "bench-ycsb: --out $out is under docs/: results belong in a build directory" >&2; exit 2 ;;
esac

if [ "$skip_build" -eq 0 ]; then
  scripts/setup.sh
  scripts/build.sh
fi
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
CELLAR_SERVER=${CELLAR_SERVER:-$root/build/src/tools/cellar-server}
CELLAR_SHELL=${CELLAR_SHELL:-$root/build/src/tools/cellar-shell}
for b in "$LOADGEN" "$CELLAR_SERVER" "$CELLAR_SHELL"; do
  [ -x "$b" ] || { echo "bench-ycsb: no $b (build it, or drop --skip-build)" >&2; exit 1; }
done
for t in redis-server redis-cli redis-benchmark taskset /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "bench-ycsb: $t is missing (scripts/setup.sh installs it)" >&2; exit 1; }
done

mkdir -p "$out/json"
out=$(cd "$out" && pwd)
runs_tsv=$out/runs.tsv     # section workload target rep ops/s p99_us errors ops server_us/op client_us/op client_util
mem_tsv=$out/memory.tsv    # server config field_length stage rss_kb rss_empty_kb disk_bytes
# depth rep, then ops/s server_us/op client_us/op client_util of the load generator and of
# redis-benchmark, keyspace misses during redis-benchmark
xcheck_tsv=$out/crosscheck.tsv
: >"$runs_tsv"
: >"$mem_tsv"
: >"$xcheck_tsv"
hz=$(getconf CLK_TCK)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d /tmp/bench-ycsb.XXXXXX)

say() { echo "bench-ycsb: [$(date -u +%T), ${SECONDS}s] $*"; }

# ---- servers -------------------------------------------------------------------------------

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# `on CPUS cmd...`: cmd pinned to CPUS (taskset -c), or not pinned when CPUS is empty.
# (In the foreground only: `on ... &` would make $! the subshell's pid, not the command's.)
on() {
  local cpus=$1; shift
  if [ -n "$cpus" ]; then taskset -c "$cpus" "$@"; else "$@"; fi
}
# pin_to CPUS: sets `pin` to the prefix that pins a command (taskset execs it: same pid).
pin_to() {
  pin=(env)
  if [ -n "$1" ]; then pin=(taskset -c "$1"); fi
}

cellar_pid=""; redis_pid=""
stop_cellar() {
  [ -n "$cellar_pid" ] || return 0
  kill "$cellar_pid" 2>/dev/null || true
  wait "$cellar_pid" 2>/dev/null || true
  cellar_pid=""
}
stop_redis() {
  [ -n "$redis_pid" ] || return 0
  kill "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=""
}
cleanup() {
  stop_cellar
  stop_redis
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_cellar CPUS DATA_DIR [flags...]: cellar_pid, cellar_port. DATA_DIR '' = in memory.
start_cellar() {
  local cpus=$1 data=$2; shift 2
  cellar_port=$(free_port)
  : >"$work/cellar.log"
  pin_to "$cpus"
  "${pin[@]}" "$CELLAR_SERVER" --listen "127.0.0.1:$cellar_port" --data "$data" --snapshot-interval-ms 0 \
    --log-level warn "$@" >"$work/cellar.log" 2>&1 &
  cellar_pid=$!
  for _ in $(seq 1200); do  # a restart reads the data directory first
    if grep -q "listening on" "$work/cellar.log"; then
      say "cellar-server on port $cellar_port (pid $cellar_pid${cpus:+, CPU $cpus}${data:+, data $data}) $*"
      return 0
    fi
    kill -0 "$cellar_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$work/cellar.log" >&2
  echo "bench-ycsb: cellar-server did not start" >&2
  exit 1
}

# start_redis CPUS [flags...]: redis_pid, redis_port.
start_redis() {
  local cpus=$1; shift
  redis_port=$(free_port)
  pin_to "$cpus"
  "${pin[@]}" redis-server --save '' --appendonly no --port "$redis_port" --bind 127.0.0.1 --dir "$work" --daemonize no \
    "$@" >"$work/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do
    if redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
      say "redis-server on port $redis_port (pid $redis_pid${cpus:+, CPU $cpus}) $*"
      return 0
    fi
    sleep 0.1
  done
  cat "$work/redis.log" >&2
  echo "bench-ycsb: redis-server did not start" >&2
  exit 1
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# utime + stime of every thread of a process, in clock ticks (the fields after "(comm)").
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

# ---- the load generator --------------------------------------------------------------------

# target_args cellar|redis: the load generator's flags for the server running now.
target_args() {
  case "$1" in
    cellar) echo "--target cellar-rpc --protocol frames --port $cellar_port" ;;
    redis) echo "--target redis --port $redis_port" ;;
  esac
}
pid_of() { if [ "$1" = cellar ]; then echo "$cellar_pid"; else echo "$redis_pid"; fi; }

# load TARGET CPUS THREADS [loadgen flags...]: loads `records` records into the server.
load() {
  local t=$1 cpus=$2 threads=$3; shift 3
  say "loading $records records into $t $*"
  # shellcheck disable=SC2046
  on "$cpus" "$LOADGEN" $(target_args "$t") --workload a --phase load --records "$records" \
    --connections "$connections" --threads "$threads" --partitioning "$partitioning" --quiet \
    --json "$work/load.json" "$@" >/dev/null
}

# measure SECTION NAME TARGET REP CPUS THREADS WORKLOAD DEPTH [loadgen flags...]: one run;
# appends a line to runs.tsv.
measure() {
  local section=$1 name=$2 t=$3 rep=$4 cpus=$5 threads=$6 wl=$7 d=$8; shift 8
  local pid json s0 s1 ops p99 errs total secs lu ls
  pid=$(pid_of "$t")
  json="$out/json/$section-$name-$t-$rep.json"
  say "$section: $name on $t, repetition $rep (${duration}s)"
  s0=$(cpu_ticks "$pid")
  # shellcheck disable=SC2046
  on "$cpus" /usr/bin/time -f "%U %S" -o "$work/lg.time" \
    "$LOADGEN" $(target_args "$t") --workload "$wl" --phase run --records "$records" --depth "$d" \
    --connections "$connections" --threads "$threads" --duration "$duration" --quiet --label "$t" \
    --json "$json" "$@" >/dev/null || echo "bench-ycsb: the run reported errors (see $json)" >&2
  s1=$(cpu_ticks "$pid")
  read -r ops p99 errs total secs <<<"$("$LOADGEN" summary "$json")"
  read -r lu ls <"$work/lg.time"
  awk -v OFS='\t' -v section="$section" -v name="$name" -v t="$t" -v rep="$rep" -v ops="$ops" -v p99="$p99" \
      -v errs="$errs" -v total="$total" -v secs="$secs" -v s0="$s0" -v s1="$s1" -v hz="$hz" -v lu="$lu" -v ls="$ls" \
      'BEGIN { n = total > 0 ? total : 1
               print section, name, t, rep, ops, p99, errs, total, (s1 - s0) / hz * 1e6 / n, (lu + ls) * 1e6 / n,
                     (lu + ls) / secs }' >>"$runs_tsv"
  tail -n 1 "$runs_tsv" | awk -F'\t' '{ printf "  %.0f ops/s, p99 %.0f us, server %.2f us/op, load generator %.2f us/op (%.0f%% of a CPU), %s errors\n", $5, $6, $9, $10, $11 * 100, $7 }'
}

# The YCSB runs of sections 1 and 3: name workload depth.
ycsb_runs=("c c 1" "a a 1" "c-p$depth c $depth" "a-p$depth a $depth")

# ycsb_section SECTION CLIENT_CPUS THREADS CELLAR_CPUS REDIS_CPUS "cellar flags" "redis flags"
ycsb_section() {
  local section=$1 ccpu=$2 threads=$3 cellar_cpus=$4 redis_cpus=$5 cellar_flags=$6 redis_flags=$7
  local t r spec name wl d e0
  # shellcheck disable=SC2086
  start_cellar "$cellar_cpus" "" $cellar_flags
  # shellcheck disable=SC2086
  start_redis "$redis_cpus" $redis_flags
  for t in cellar redis; do
    e0=$(rss_kb "$(pid_of "$t")")
    load "$t" "$ccpu" "$threads"
    sleep 1
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$section" 100 loaded "$(rss_kb "$(pid_of "$t")")" "$e0" 0 >>"$mem_tsv"
  done
  for r in $(seq "$reps"); do
    for spec in "${ycsb_runs[@]}"; do
      read -r name wl d <<<"$spec"
      for t in cellar redis; do measure "$section" "$name" "$t" "$r" "$ccpu" "$threads" "$wl" "$d"; done
    done
  done
  # E inserts: as YCSB's documented sequence, it runs on freshly loaded stores.
  stop_cellar
  stop_redis
  # shellcheck disable=SC2086
  start_cellar "$cellar_cpus" "" $cellar_flags
  # shellcheck disable=SC2086
  start_redis "$redis_cpus" $redis_flags
  for t in cellar redis; do load "$t" "$ccpu" "$threads"; done
  for r in $(seq "$reps"); do
    for t in cellar redis; do measure "$section" e "$t" "$r" "$ccpu" "$threads" e 1; done
  done
  stop_cellar
  stop_redis
}

pinned_cellar="--event-loops 1 --worker-threads 1"

# ---- 1. per core ---------------------------------------------------------------------------
ycsb_section core "$client_cpu" 1 "$server_cpu" "$server_cpu" "$pinned_cellar" ""

# ---- 2. memory -----------------------------------------------------------------------------
if [ "$memory" -eq 1 ]; then
  for fl in 100 10; do
    if [ "$fl" = 10 ]; then  # the 100-byte figures in memory come from section 1
      for t in cellar redis; do
        if [ "$t" = cellar ]; then start_cellar "$server_cpu" "" $pinned_cellar; else start_redis "$server_cpu"; fi
        e0=$(rss_kb "$(pid_of "$t")")
        load "$t" "$client_cpu" 1 --field-length "$fl"
        sleep 1
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" core "$fl" loaded "$(rss_kb "$(pid_of "$t")")" "$e0" 0 >>"$mem_tsv"
        if [ "$t" = cellar ]; then stop_cellar; else stop_redis; fi
      done
    fi
    # cellar with a data directory: after loading, after a snapshot, after a restart.
    data="$work/cellar-data"
    rm -rf "$data"
    # shellcheck disable=SC2086
    start_cellar "$server_cpu" "$data" $pinned_cellar
    e0=$(rss_kb "$cellar_pid")
    load cellar "$client_cpu" 1 --field-length "$fl"
    sleep 1
    printf 'cellar\tdata\t%s\tloaded\t%s\t%s\t%s\n' "$fl" "$(rss_kb "$cellar_pid")" "$e0" "$(du -sb "$data" | cut -f1)" >>"$mem_tsv"
    echo snapshot | "$CELLAR_SHELL" --connect "127.0.0.1:$cellar_port" --quiet >/dev/null
    sleep 1
    printf 'cellar\tdata\t%s\tsnapshot\t%s\t%s\t%s\n' "$fl" "$(rss_kb "$cellar_pid")" "$e0" "$(du -sb "$data" | cut -f1)" >>"$mem_tsv"
    stop_cellar
    # shellcheck disable=SC2086
    start_cellar "$server_cpu" "$data" $pinned_cellar
    sleep 1
    printf 'cellar\tdata\t%s\trestart\t%s\t%s\t%s\n' "$fl" "$(rss_kb "$cellar_pid")" "$e0" "$(du -sb "$data" | cut -f1)" >>"$mem_tsv"
    stop_cellar
    rm -rf "$data"
  done
fi

# ---- 3. two threads ------------------------------------------------------------------------
if [ "$two_threads" -eq 1 ]; then
  ycsb_section two "" 2 "" "" "" "--io-threads 2"
fi

# ---- 4. the redis engine against redis-benchmark -------------------------------------------
if [ "$crosscheck" -eq 1 ]; then
  start_redis "$server_cpu"
  ordered=(--insert-order ordered --zero-padding 12)
  load redis "$client_cpu" 1 "${ordered[@]}"
  misses() { redis-cli -p "$redis_port" info stats | tr -d '\r' | awk -F: '$1 == "keyspace_misses" {print $2}'; }
  for r in $(seq "$reps"); do
    for d in 1 "$depth"; do
      measure xcheck "hgetall-p$d" redis "$r" "$client_cpu" 1 c "$d" "${ordered[@]}" --request-distribution uniform
      read -r lg_ops lg_server lg_client lg_util <<<"$(tail -n 1 "$runs_tsv" | awk -F'\t' '{print $5, $9, $10, $11}')"
      n=$(awk -v o="$lg_ops" -v s="$duration" 'BEGIN { printf "%d", o * s }')
      say "xcheck: redis-benchmark -c $connections -P $d -n $n HGETALL user__rand_int__"
      m0=$(misses)
      s0=$(cpu_ticks "$redis_pid")
      on "$client_cpu" /usr/bin/time -f "%e %U %S" -o "$work/rb.time" \
        redis-benchmark -h 127.0.0.1 -p "$redis_port" -c "$connections" -n "$n" -P "$d" -r "$records" --csv \
        HGETALL user__rand_int__ >"$work/rb.csv"
      s1=$(cpu_ticks "$redis_pid")
      m1=$(misses)
      rb_ops=$(awk -F'"' 'NR == 2 {print $4}' "$work/rb.csv")
      read -r re ru rs <"$work/rb.time"
      read -r rb_server rb_client rb_util <<<"$(awk -v s0="$s0" -v s1="$s1" -v hz="$hz" -v n="$n" -v e="$re" -v u="$ru" \
        -v s="$rs" 'BEGIN { print (s1 - s0) / hz * 1e6 / n, (u + s) * 1e6 / n, (e > 0 ? (u + s) / e : 0) }')"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$d" "$r" "$lg_ops" "$lg_server" "$lg_client" "$lg_util" \
        "$rb_ops" "$rb_server" "$rb_client" "$rb_util" $((m1 - m0)) >>"$xcheck_tsv"
      awk -v a="$lg_ops" -v b="$rb_ops" -v u="$rb_server" -v c="$rb_client" -v f="$rb_util" 'BEGIN {
        printf "  redis-benchmark %.0f ops/s, server %.2f us/op, client %.2f us/op (%.0f%% of a CPU); load generator / redis-benchmark %.2f\n",
               b, u, c, f * 100, a / b }'
    done
  done
  stop_redis
fi

# ---- the report ----------------------------------------------------------------------------
{
  printf '%s=%q\n' records "$records" duration "$duration" reps "$reps" connections "$connections" depth "$depth" \
    server_cpu "$server_cpu" client_cpu "$client_cpu" partitioning "$partitioning" memory "$memory" \
    two_threads "$two_threads" crosscheck "$crosscheck" cmdline "$cmdline" pinned_cellar "$pinned_cellar" \
    started "$started" loadavg_start "$loadavg_start" loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)" \
    cpus "$(nproc)" cpu_model "$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)" kernel "$(uname -r)" \
    redis_version "$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')" \
    cellar_rev "$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' with uncommitted changes')"
} >"$out/params"
scripts/bench-ycsb-report.sh "$out"
