#!/usr/bin/env bash
# Where a server's CPU goes on one YCSB workload: the server
# pinned to CPU 1 with one serving thread (as scripts/bench-ycsb.sh's per-core section),
# 100k records loaded, then one run of the load generator on CPU 0 while the server is
# profiled.
#
#   scripts/profile-ycsb.sh cellar|redis WORKLOAD DEPTH SECONDS perf|callgrind [OUT]
#   e.g. scripts/profile-ycsb.sh cellar c 1 10 callgrind
#
# perf: `perf record -e cpu-clock -g` of the server for the run (OUT/perf.data, by default
# under build/bench-results/profile; cpu-clock because virtual machines often have no
# hardware counters). callgrind: the server under valgrind with instrumentation
# switched on for the run only (OUT/callgrind.out.*), then the user-space instructions
# per operation (total and the ten most expensive functions, inclusive) are printed:
# unlike time, robust to a loaded machine. Prints the run's summary line first
# ('<ops/s> <p99 us> <errors> <operations> <seconds>').
# Environment: SERVER (default build/src/tools/cellar-server), LOADGEN, CALL_GRAPH (perf's
# --call-graph; default fp, frame pointers, which the Debian libraries and cellar's own
# -O3 code mostly lack: "dwarf,16384" gives whole call chains and inclusive shares, at
# 2000 samples a second and some 30 MB of perf.data per second).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${1:?usage: profile-ycsb.sh cellar|redis WORKLOAD DEPTH SECONDS perf|callgrind [OUT]}
wl=${2:?workload}
depth=${3:?depth}
secs=${4:?seconds}
mode=${5:?perf or callgrind}
out=${6:-$root/build/bench-results/profile}
SERVER=${SERVER:-$root/build/src/tools/cellar-server}
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/callgrind.out.*
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
if [ "$target" = redis ]; then
  server=(redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 --daemonize no)
  lg=(--target redis --port "$port")
else
  server=("$SERVER" --listen "127.0.0.1:$port" --data '' --snapshot-interval-ms 0 --log-level warn
          --event-loops 1 --worker-threads 1)
  lg=(--target cellar-rpc --protocol frames --port "$port")
fi
if [ "$mode" = callgrind ]; then
  server=(valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$out/callgrind.out.%p" "${server[@]}")
fi
taskset -c 1 "${server[@]}" >"$out/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 600); do
  if [ "$target" = redis ]; then redis-cli -p "$port" ping >/dev/null 2>&1 && break
  else grep -q "listening on" "$out/server.log" && break; fi
  sleep 0.1
done
common=(--connections 50 --threads 1 --records 100000 --quiet)
taskset -c 0 "$LOADGEN" "${lg[@]}" "${common[@]}" --workload a --phase load --partitioning range:8 >/dev/null
run() {
  taskset -c 0 "$LOADGEN" "${lg[@]}" "${common[@]}" --workload "$wl" --phase run --depth "$depth" \
    --duration "$secs" --json "$out/run.json" >/dev/null
}
if [ "$mode" = callgrind ]; then
  callgrind_control -i on "$pid" >/dev/null
  run
  callgrind_control -i off "$pid" >/dev/null
  callgrind_control -d "$pid" >/dev/null
else
  call_graph=${CALL_GRAPH:-fp}
  freq=4000
  [ "$call_graph" = fp ] || freq=2000
  perf record -e cpu-clock -F "$freq" --call-graph "$call_graph" -p "$pid" -o "$out/perf.data" -- sleep "$secs" >/dev/null 2>&1 &
  perf_pid=$!
  run
  wait "$perf_pid"
fi
summary=$("$LOADGEN" summary "$out/run.json")
echo "$summary"
if [ "$mode" = callgrind ]; then
  ops=$(echo "$summary" | awk '{print $4}')
  dump=$(ls -S "$out"/callgrind.out.* | head -1)  # the dump of the run (the exit's is near empty)
  callgrind_annotate --inclusive=yes "$dump" 2>/dev/null |
    awk -v ops="$ops" -v f="$dump" '
      /PROGRAM TOTALS/ {v=$1; gsub(",","",v); printf "%d user instructions per operation (%s)\n", v/ops, f; n=0; next}
      /^ *[0-9,]+ +\( *[0-9.]+%\) +[^ ]/ && n < 10 {
        v=$1; gsub(",","",v); name=$0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", name)
        printf "%8d  %s\n", v/ops, substr(name,1,120); n++ }'
else
  echo "perf report -i $out/perf.data --no-children --sort dso,sym"
fi
