#!/usr/bin/env bash
# One server, one load, a sequence of YCSB runs: throughput, p99 and the CPU each side spent
# per operation. For A/B comparisons of server builds (alternate the binaries, compare
# medians); scripts/bench-ycsb.sh makes the recorded side-by-side table.
#
#   scripts/ycsb-one.sh cellar|redis "WORKLOAD DEPTH SECONDS [LOAD GENERATOR FLAGS]" ...
#   e.g. scripts/ycsb-one.sh cellar "c 16 8" "a 16 20" "c 16 8"
#        scripts/ycsb-one.sh redis "c 1 5 --io-uring true" "c 1 5 --io-uring false"
#
# A run's own load generator flags follow its seconds: alternating them against the one
# server is an A/B of the client (the load generator's ways of I/O, `--io-uring`, above).
# E, then A, then E again shows how much updates slow the scans after them:
#   SERVER_CPU=1 CLIENT_CPU=0 THREADS=1 IN_MEMORY=1 SERVER_ARGS="--event-loops 1 --worker-threads 1" \
#     scripts/ycsb-one.sh cellar "e 1 6" "a 16 12" "e 1 6"
#
# Environment: SERVER (cellar-server binary, default build/src/tools/cellar-server),
# SERVER_ARGS (extra cellar-server flags), LOADGEN_ARGS (extra load generator flags, e.g.
# --tls-ca FILE), LOADGEN (default build/examples/loadgen/cellar-loadgen),
# PROTOCOL (cellar: frames, the default, or capnp), IN_MEMORY=1 (cellar without a data
# directory: no snapshots, no delta, as redis-server runs here without persistence),
# SERVER_CPU and CLIENT_CPU (pin the server and the load generator: taskset -c), THREADS
# (load generator threads, default 2), SYSCALLS=1 (count the server's system calls per
# operation with perf stat). 100k records, 50 connections, cellar table range:8, as the
# bench script. Prints one line per run:
#   <workload> d<depth> [flags] ops/s=... p99=...us server_us/op=... loadgen_us/op=... server_rss_mb=... [sys/op=...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:?usage: ycsb-one.sh cellar|redis "wl depth seconds" ...}
shift
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
SERVER=${SERVER:-$root/build/src/tools/cellar-server}
work=$(mktemp -d /tmp/ycsb-one.XXXXXX)
# Pinning prefixes (empty: not pinned).
pin_server=()
[ -n "${SERVER_CPU:-}" ] && pin_server=(taskset -c "$SERVER_CPU")
pin_client=()
[ -n "${CLIENT_CPU:-}" ] && pin_client=(taskset -c "$CLIENT_CPU")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
if [ "$target" = cellar ]; then
  # shellcheck disable=SC2086
  data="$work/data"
  [ "${IN_MEMORY:-0}" = 1 ] && data=""
  "${pin_server[@]}" "$SERVER" --listen "127.0.0.1:$port" --data "$data" --snapshot-interval-ms 0 ${SERVER_ARGS:-} \
    >"$work/server.log" 2>&1 &
  pid=$!
  lg_target="cellar-rpc --protocol ${PROTOCOL:-frames}"
  for _ in $(seq 100); do grep -q "listening on" "$work/server.log" && break; sleep 0.1; done
else
  "${pin_server[@]}" redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 >"$work/server.log" 2>&1 &
  pid=$!
  lg_target=redis
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi
# shellcheck disable=SC2206
common=(--target $lg_target --port "$port" --connections 50 --threads "${THREADS:-2}" --records 100000 --quiet
        ${LOADGEN_ARGS:-})
"${pin_client[@]}" "$LOADGEN" "${common[@]}" --workload a --phase load --partitioning range:8 --json "$work/load.json" >/dev/null
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # utime + stime, in clock ticks
hz=$(getconf CLK_TCK)
for spec in "$@"; do
  read -r wl depth secs flags <<<"$spec"
  s0=$(cpu_of "$pid")
  perf=()
  [ "${SYSCALLS:-0}" = 1 ] && perf=(perf stat -x, -e raw_syscalls:sys_enter -p "$pid" -o "$work/perf.txt" --)
  "${perf[@]}" /usr/bin/time -f "%U %S" -o "$work/lg.time" \
    "${pin_client[@]}" "$LOADGEN" "${common[@]}" --workload "$wl" --phase run --depth "$depth" --duration "$secs" \
    ${flags:-} --json "$work/run.json" >/dev/null
  s1=$(cpu_of "$pid")
  read -r ops p99 _ <<<"$("$LOADGEN" summary "$work/run.json")"
  read -r lu ls < <(tail -n 1 "$work/lg.time")
  calls=""
  [ "${SYSCALLS:-0}" = 1 ] && calls=$(awk -F, '/sys_enter/ {print $1}' "$work/perf.txt")
  rss_kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
  awk -v rss="$rss_kb" -v wl="$wl" -v d="$depth${flags:+ $flags}" -v ops="$ops" -v p99="$p99" -v s0="$s0" -v s1="$s1" -v hz="$hz" \
      -v secs="$secs" -v lu="$lu" -v ls="$ls" -v calls="$calls" 'BEGIN {
    n = ops * secs
    printf "%s d%s ops/s=%.0f p99=%.0fus server_us/op=%.1f loadgen_us/op=%.1f server_rss_mb=%.0f", wl, d, ops, p99,
           (s1 - s0) / hz * 1e6 / n, (lu + ls) * 1e6 / n, rss / 1024
    if (calls != "") printf " sys/op=%.3f", calls / n
    printf "\n" }'
done
