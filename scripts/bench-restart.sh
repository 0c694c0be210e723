#!/usr/bin/env bash
# Restart and disk against Redis, same core, same records: cellar-server and redis-server
# loaded with RECORDS YCSB records (10 fields of FL bytes) by the load generator; cellar in
# snapshot mode stopped with SIGTERM (its final snapshot), Redis saved to RDB with SAVE.
# Per run and per server: the bytes on disk, and the time from exec to the first answered
# read. cellar runs once per --compression setting; the runs are interleaved with Redis's.
#   scripts/bench-restart.sh [--records 300000] [--field-length 100] [--runs 3]
#                            [--compressions "none snappy zlib"] [--server-cpu 1] [--client-cpu 0]
#                            [--cellar-cpus 1]   # e.g. "0,1" for cellar on both cores
# One line per figure; the medians and ranges go to docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
records=300000 fl=100 runs=3 compressions="none snappy zlib" server_cpu=1 client_cpu=0 cellar_cpus=""
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --field-length) fl=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --compressions) compressions=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --cellar-cpus) cellar_cpus=$2; shift 2 ;;
    *) echo "bench-restart: unknown option $1" >&2; exit 2 ;;
  esac
done
cellar_cpus=${cellar_cpus:-$server_cpu}
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
CELLAR_SERVER=${CELLAR_SERVER:-$root/build/src/tools/cellar-server}
CELLAR_SHELL=${CELLAR_SHELL:-$root/build/src/tools/cellar-shell}
work=$(mktemp -d)
pid=""
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi; }
trap 'stop; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
# Starts cellar on DATA_DIR with COMPRESSION; returns once a read is answered.
start_cellar() {
  port=$(free_port)
  local threads; threads=$(echo "$cellar_cpus" | tr ',' '\n' | wc -l)
  taskset -c "$cellar_cpus" "$CELLAR_SERVER" --listen "127.0.0.1:$port" --data "$1" --compression "$2" \
    --snapshot-interval-ms 0 --log-level warn --event-loops "$threads" --worker-threads "$threads" \
    >"$work/cellar.log" 2>&1 &
  pid=$!
  for _ in $(seq 6000); do
    echo "get 'usertable', 'user0'" | "$CELLAR_SHELL" --connect "127.0.0.1:$port" --quiet >/dev/null 2>&1 && return 0
    sleep 0.01
  done
  cat "$work/cellar.log" >&2; exit 1
}
start_redis() {  # DIR
  port=$(free_port)
  taskset -c "$server_cpu" redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 --dir "$1" \
    --dbfilename dump.rdb --daemonize no >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 6000); do
    [ "$(redis-cli -p "$port" exists user0 2>/dev/null || true)" != "" ] && \
      [ "$(redis-cli -p "$port" info persistence 2>/dev/null | grep -c '^loading:0')" = 1 ] && return 0
    sleep 0.01
  done
  exit 1
}
load() {  # TARGET
  local target="--target cellar-rpc --protocol frames"
  [ "$1" = redis ] && target="--target redis"
  # shellcheck disable=SC2086
  taskset -c "$client_cpu" "$LOADGEN" $target --port "$port" --workload a --phase load --records "$records" \
    --connections 50 --threads 1 --partitioning range:8 --quiet --field-length "$fl" >/dev/null
}
for run in $(seq "$runs"); do
  d="$work/redis"; rm -rf "$d"; mkdir -p "$d"
  start_redis "$d"; load redis; redis-cli -p "$port" save >/dev/null; stop
  t0=$(now); start_redis "$d"; t1=$(now); stop
  printf 'run %d redis          disk %8.1f MB  restart %6.2f s\n' "$run" \
    "$(echo "$(du -sb "$d" | cut -f1) / 1000000" | bc -l)" "$(echo "$t1 - $t0" | bc -l)"
  for c in $compressions; do
    d="$work/cellar-$c"; rm -rf "$d"
    start_cellar "$d" "$c"; load cellar; stop
    t0=$(now); start_cellar "$d" "$c"; t1=$(now); stop
    printf 'run %d cellar %-7s disk %8.1f MB  restart %6.2f s\n' "$run" "$c" \
      "$(echo "$(du -sb "$d" | cut -f1) / 1000000" | bc -l)" "$(echo "$t1 - $t0" | bc -l)"
  done
done
