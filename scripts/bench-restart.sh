#!/usr/bin/env bash
# Restart and disk against Redis, same core, same records: cellar-server and redis-server
# loaded with RECORDS YCSB records (10 fields of FL bytes) by the load generator; cellar in
# snapshot mode stopped with SIGTERM (its final snapshot), Redis saved to RDB with SAVE.
# Per run and per server: the bytes on disk, the time from exec to the first answered
# read, and the time of the save (Redis's SAVE; cellar's SIGTERM to exit, which is its
# final snapshot of everything loaded); for cellar also the recovery time its log reports.
# Each run starts with the disk's sequential write rate (dd, 256 MB, fdatasync), the
# baseline of the snapshot rate. cellar runs once per --compression setting; the runs are
# interleaved with Redis's.
#   scripts/bench-restart.sh [--records 300000] [--field-length 100] [--runs 3]
#                            [--compressions "none snappy zlib"] [--server-cpu 1] [--client-cpu 0]
#                            [--cellar-cpus 1]   # e.g. "0,1" for cellar on both cores, or
#                                                # "1 0,1" for both settings in each run
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
# Sets `stopped` to the seconds from SIGTERM to the server's exit.
timed_stop() { local a; a=$(now); stop; stopped=$(echo "$(now) - $a" | bc -l); }
disk_rate() {  # MB/s of a 256 MB sequential write, synced
  local a b; a=$(now); dd if=/dev/zero of="$work/dd" bs=1M count=256 conv=fdatasync status=none; b=$(now)
  rm -f "$work/dd"; echo "256 * 1.048576 / ($b - $a)" | bc -l
}
trap 'stop; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
# Starts cellar on DATA_DIR with COMPRESSION on the cores $cpus; returns once a read of user0 is answered (with
# a third argument, "fresh": once any call is, the table not existing yet).
start_cellar() {
  local probe="get 'usertable', 'user0'"
  [ "${3:-}" = fresh ] && probe="list"
  port=$(free_port)
  local threads; threads=$(echo "$cpus" | tr ',' '\n' | wc -l)
  taskset -c "$cpus" "$CELLAR_SERVER" --listen "127.0.0.1:$port" --data "$1" --compression "$2" \
    --snapshot-interval-ms 0 --log-level info --event-loops "$threads" --worker-threads "$threads" \
    >"$work/cellar.log" 2>&1 &
  pid=$!
  for _ in $(seq 6000); do
    kill -0 "$pid" 2>/dev/null || break
    echo "$probe" | "$CELLAR_SHELL" --connect "127.0.0.1:$port" --quiet >/dev/null 2>&1 && return 0
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
mb() { echo "$(du -sb "$1" | cut -f1) / 1000000" | bc -l; }
for run in $(seq "$runs"); do
  printf 'run %d disk sequential write %6.0f MB/s\n' "$run" "$(disk_rate)"
  d="$work/redis"; rm -rf "$d"; mkdir -p "$d"
  start_redis "$d"; load redis
  a=$(now); redis-cli -p "$port" save >/dev/null; save=$(echo "$(now) - $a" | bc -l); stop
  t0=$(now); start_redis "$d"; t1=$(now); stop
  printf 'run %d redis          disk %8.1f MB  save %6.2f s  restart %6.2f s\n' "$run" "$(mb "$d")" "$save" \
    "$(echo "$t1 - $t0" | bc -l)"
  for cpus in $cellar_cpus; do
    for c in $compressions; do
      d="$work/cellar-$c"; rm -rf "$d"
      start_cellar "$d" "$c" fresh; load cellar; timed_stop; save=$stopped
      t0=$(now); start_cellar "$d" "$c"; t1=$(now); stop
      recovery=$(sed -n 's/.*recovered .* in \([0-9.]*\) s.*/\1/p' "$work/cellar.log" | tail -1)
      printf 'run %d cellar %-7s cpus %-4s disk %8.1f MB  save %6.2f s  restart %6.2f s  recovery %s s\n' "$run" "$c" \
        "$cpus" "$(mb "$d")" "$save" "$(echo "$t1 - $t0" | bc -l)" "${recovery:-?}"
    done
  done
done
