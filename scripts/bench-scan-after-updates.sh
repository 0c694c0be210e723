#!/usr/bin/env bash
# YCSB E on a fresh load, then A at depth 16, then E again, on one cellar-server pinned as
# the per-core section of scripts/bench-ycsb.sh (CPU 1, one serving thread; the load
# generator alone on CPU 0, 50 connections, 100k records, in memory): how much A's
# updates slow the scans that follow. Run it with two builds in turn to compare them.
#
#   scripts/bench-scan-after-updates.sh [SERVER]      (default ./build/src/tools/cellar-server)
#
# Prints one line: E fresh, A's throughput, E after A (ops/s), and the server's RSS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SERVER=${1:-$root/build/src/tools/cellar-server}
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
out=$(mktemp -d /tmp/bench-scan-after-updates.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
taskset -c 1 "$SERVER" --listen "127.0.0.1:$port" --data '' --snapshot-interval-ms 0 --log-level warn \
  --event-loops 1 --worker-threads 1 >"$out/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 600); do grep -q "listening on" "$out/server.log" && break; sleep 0.1; done
lg=(--target cellar-rpc --protocol frames --port "$port" --connections 50 --threads 1 --records 100000 --quiet)
taskset -c 0 "$LOADGEN" "${lg[@]}" --workload a --phase load --partitioning range:8 >/dev/null
run() {  # workload depth seconds
  taskset -c 0 "$LOADGEN" "${lg[@]}" --workload "$1" --phase run --depth "$2" --duration "$3" --json "$out/r.json" >/dev/null
  "$LOADGEN" summary "$out/r.json" | awk '{printf "%.1f k", $1 / 1000}'
}
e1=$(run e 1 6)
a=$(run a 16 12)
e2=$(run e 1 6)
echo "$(basename "$SERVER"): E fresh $e1, A depth 16 $a, E after A $e2; RSS $(awk '/VmRSS/ {printf "%.0f MB", $2 / 1024}' "/proc/$pid/status")"
