#!/usr/bin/env bash
# The load generator's two ways of I/O against one server: `--io-uring true` (each loop
# turn's reads and sends in one io_uring_enter, examples/loadgen/uring_io.h) and `false`
# (a recv(2) and a send(2) per connection), alternating, against one server pinned as the
# per-core section of scripts/bench-ycsb.sh (CPU 1, one serving thread; the load generator
# alone on CPU 0, one thread, 50 connections, 100k records, in memory). One line per run:
# throughput, the load generator's CPU per operation (/usr/bin/time) and the server's
# (/proc/PID/stat), to check that the client's way of I/O gives neither server an edge.
#
#   scripts/bench-loadgen-io.sh cellar|redis WORKLOAD DEPTH SECONDS REPS
#   e.g. scripts/bench-loadgen-io.sh redis c 1 5 4
#
# SERVER and LOADGEN override the binaries (default ./build/...).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:?usage: bench-loadgen-io.sh cellar|redis WORKLOAD DEPTH SECONDS REPS}
wl=${2:?workload}
depth=${3:?depth}
secs=${4:?seconds}
reps=${5:?repetitions}
SERVER=${SERVER:-$root/build/src/tools/cellar-server}
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
out=$(mktemp -d /tmp/bench-loadgen-io.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
if [ "$target" = redis ]; then
  server=(redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 --daemonize no)
  lg=(--target redis --port "$port")
else
  server=("$SERVER" --listen "127.0.0.1:$port" --data '' --snapshot-interval-ms 0 --log-level warn
          --event-loops 1 --worker-threads 1)
  lg=(--target cellar-rpc --protocol frames --port "$port")
fi
taskset -c 1 "${server[@]}" >"$out/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 600); do
  if [ "$target" = redis ]; then redis-cli -p "$port" ping >/dev/null 2>&1 && break
  else grep -q "listening on" "$out/server.log" && break; fi
  sleep 0.1
done
common=(--connections 50 --threads 1 --records 100000 --quiet)
taskset -c 0 "$LOADGEN" "${lg[@]}" "${common[@]}" --workload a --phase load --partitioning range:8 >/dev/null
ticks=$(getconf CLK_TCK)
for _ in $(seq "$reps"); do
  for io in true false; do
    read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    /usr/bin/time -f "%U %S" -o "$out/time" taskset -c 0 "$LOADGEN" "${lg[@]}" "${common[@]}" --io-uring "$io" \
      --workload "$wl" --phase run --depth "$depth" --duration "$secs" --json "$out/run.json" >/dev/null
    read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
    read -r rate ops < <("$LOADGEN" summary "$out/run.json" | awk '{print $1, $4}')
    read -r lu ls < "$out/time"
    python3 -c "
rate, ops, lu, ls = $rate, $ops, $lu, $ls
server = ($u1 - $u0 + $s1 - $s0) / $ticks
print(f'$target $wl d$depth io_uring=$io: {rate / 1000:.1f} k ops/s  load generator {1e6 * (lu + ls) / ops:.2f} us/op  server {1e6 * server / ops:.2f} us/op')"
  done
done
