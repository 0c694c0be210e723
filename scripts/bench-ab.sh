#!/usr/bin/env bash
# Interleaved A/B runs of cellar-server flag sets (and Redis), pinned as the per-core section
# of scripts/bench-ycsb.sh: each server on SERVER_CPU with one serving thread
# (--event-loops 1 --worker-threads 1), the load generator alone on CLIENT_CPU with one
# thread, 50 connections, 100k records, in memory. Each repetition starts every
# configuration in turn, loads it and runs every spec; one line per run with the
# throughput, the server's CPU per operation (/proc/PID/stat) and its system calls per
# operation (perf stat -e raw_syscalls:sys_enter on the server's process).
#
#   scripts/bench-ab.sh
#   CONFIGS="off=--io-uring false;on=--io-uring true;redis" SPECS="c 1,a 1,c 16" REPS=5 SECS=6 scripts/bench-ab.sh
#
# CONFIGS: `name=cellar-server flags` entries separated by ';', and `redis` for
# redis-server; SERVER and LOADGEN override the binaries (default ./build/...).
# Prints: name workload depth ops/s cpu_us/op sys/op p99.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SERVER=${SERVER:-$root/build/src/tools/cellar-server}
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
REPS=${REPS:-5}
SECS=${SECS:-6}
SPECS=${SPECS:-"c 1,a 1,c 16"}
CONFIGS=${CONFIGS:-"off=--io-uring false;on=--io-uring true;redis"}
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
command -v perf >/dev/null || { echo "bench-ab: needs perf (apt-get install linux-perf)"; exit 1; }

run_config() {
  local name=$1 args=$2 port w pid target
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  w=$(mktemp -d /tmp/bench-ab.XXXXXX)
  if [ "$name" = redis ]; then
    taskset -c "$SERVER_CPU" redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 >"$w/server.log" 2>&1 &
    pid=$!
    target=redis
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  else
    # shellcheck disable=SC2086
    taskset -c "$SERVER_CPU" "$SERVER" --listen "127.0.0.1:$port" --data '' --event-loops 1 --worker-threads 1 $args \
      >"$w/server.log" 2>&1 &
    pid=$!
    target="cellar-rpc --protocol frames"
    for _ in $(seq 100); do grep -q "listening on" "$w/server.log" && break; sleep 0.1; done
  fi
  # shellcheck disable=SC2206
  local common=(--target $target --port "$port" --connections 50 --threads 1 --records 100000 --quiet)
  taskset -c "$CLIENT_CPU" "$LOADGEN" "${common[@]}" --workload a --phase load --partitioning range:8 \
    --json "$w/load.json" >/dev/null
  local spec wl depth c0 c1 ops p99 calls
  IFS=, read -ra specs <<<"$SPECS"
  for spec in "${specs[@]}"; do
    read -r wl depth <<<"$spec"
    c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    perf stat -x, -e raw_syscalls:sys_enter -p "$pid" -o "$w/perf.txt" -- taskset -c "$CLIENT_CPU" "$LOADGEN" \
      "${common[@]}" --workload "$wl" --phase run --depth "$depth" --duration "$SECS" --json "$w/run.json" >/dev/null
    c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    read -r ops p99 _ <<<"$("$LOADGEN" summary "$w/run.json")"
    calls=$(awk -F, '/sys_enter/ {print $1}' "$w/perf.txt")
    awk -v name="$name" -v wl="$wl" -v d="$depth" -v ops="$ops" -v secs="$SECS" -v c0="$c0" -v c1="$c1" \
        -v calls="$calls" -v p99="$p99" -v hz="$(getconf CLK_TCK)" 'BEGIN { n = ops * secs
      printf "%s %s d%s ops/s=%.0f cpu_us/op=%.2f sys/op=%.3f p99=%.0f\n", name, wl, d, ops, (c1 - c0) / hz * 1e6 / n,
             calls / n, p99 }'
  done
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$w"
}

IFS=';' read -ra configs <<<"$CONFIGS"
for _ in $(seq "$REPS"); do
  for c in "${configs[@]}"; do
    if [ "$c" = redis ]; then run_config redis ""; else run_config "${c%%=*}" "${c#*=}"; fi
  done
done
