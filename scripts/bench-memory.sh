#!/usr/bin/env bash
# The memory rows of scripts/bench-ycsb.sh alone (its section 2, and section 1's in-memory
# loads), same servers, flags and load generator: RSS of redis-server and of cellar-server
# loaded with RECORDS YCSB records of 10 fields of FL bytes; cellar in memory, and with a
# data directory after loading, after a snapshot and after a restart. One line per figure.
#   scripts/bench-memory.sh [--records 100000] [--field-lengths "100 10"] [--server-cpu 1] [--client-cpu 0]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
records=100000 fls="100 10" server_cpu=1 client_cpu=0 partitioning=range:8 connections=50
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --field-lengths) fls=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    *) echo "bench-memory: unknown option $1" >&2; exit 2 ;;
  esac
done
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
CELLAR_SERVER=${CELLAR_SERVER:-$root/build/src/tools/cellar-server}
CELLAR_SHELL=${CELLAR_SHELL:-$root/build/src/tools/cellar-shell}
work=$(mktemp -d)
pid=""
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi; }
trap 'stop; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
start_cellar() {  # DATA_DIR
  port=$(free_port)
  : >"$work/cellar.log"
  taskset -c "$server_cpu" "$CELLAR_SERVER" --listen "127.0.0.1:$port" --data "$1" --snapshot-interval-ms 0 \
    --log-level warn --event-loops 1 --worker-threads 1 >"$work/cellar.log" 2>&1 &
  pid=$!
  for _ in $(seq 1200); do grep -q "listening on" "$work/cellar.log" && return 0; sleep 0.1; done
  cat "$work/cellar.log" >&2; exit 1
}
start_redis() {
  port=$(free_port)
  taskset -c "$server_cpu" redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 --dir "$work" --daemonize no >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  exit 1
}
load() {  # TARGET FL
  local target="--target cellar-rpc --protocol frames"
  [ "$1" = redis ] && target="--target redis"
  # shellcheck disable=SC2086
  taskset -c "$client_cpu" "$LOADGEN" $target --port "$port" --workload a --phase load --records "$records" \
    --connections "$connections" --threads 1 --partitioning "$partitioning" --quiet --field-length "$2" \
    --json "$work/load.json" >/dev/null
}
report() {  # WHAT FL STAGE EMPTY_KB
  local r; r=$(rss_kb "$pid")
  printf '%-7s %4s-byte values  %-18s RSS %7.1f MB  above the empty server %5.0f bytes per cell\n' "$1" "$2" "$3" \
    "$(echo "$r / 1024" | bc -l)" "$(echo "($r - $4) * 1024 / ($records * 10)" | bc -l)"
}
for fl in $fls; do
  start_redis; e0=$(rss_kb "$pid"); load redis "$fl"; sleep 1; report redis "$fl" loaded "$e0"; stop
  start_cellar ""; e0=$(rss_kb "$pid"); load cellar "$fl"; sleep 1; report cellar "$fl" "in memory" "$e0"; stop
  data="$work/data"; rm -rf "$data"
  start_cellar "$data"; e0=$(rss_kb "$pid"); load cellar "$fl"; sleep 1; report cellar "$fl" "data: loaded" "$e0"
  echo snapshot | "$CELLAR_SHELL" --connect "127.0.0.1:$port" --quiet >/dev/null
  sleep 1; report cellar "$fl" "data: snapshot" "$e0"
  stop; start_cellar "$data"; sleep 1; report cellar "$fl" "data: restart" "$e0"
  echo "        data directory: $(du -sm "$data" | cut -f1) MB"
  stop
done
