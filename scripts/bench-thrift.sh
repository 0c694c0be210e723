#!/usr/bin/env bash
# The HBase Thrift gateway against the frames protocol, per core: one in-memory
# cellar-server pinned to one CPU (--event-loops 1 --worker-threads 1) serving both its data
# port (frames) and --thrift-listen (thrift2, buffered+binary), the load generator on the
# other CPU; YCSB C, A and E through each, alternating within each repetition. The gateway
# has one serving thread (--thrift-threads 1), as the frames port has one event loop. The thrift2
# client is synchronous (one request in flight per connection), so both targets run the
# same shape: THREADS load generator threads, one connection each, depth 1. Prints per run
# the throughput and the server's CPU per operation (utime + stime of all its threads,
# /proc/PID/stat), and the medians [min-max] as a Markdown table.
#
#   scripts/bench-thrift.sh [reps] [seconds-per-run]      default 3 reps of 5 s
#   SERVER_CPU=1 CLIENT_CPU=0 THREADS=8 RECORDS=100000 scripts/bench-thrift.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3}
secs=${2:-5}
server_cpu=${SERVER_CPU:-1}
client_cpu=${CLIENT_CPU:-0}
threads=${THREADS:-8}
records=${RECORDS:-100000}
server=$root/build/src/tools/cellar-server
loadgen=$root/build/examples/loadgen/cellar-loadgen
work=$(mktemp -d /tmp/bench-thrift.XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
pid=

taskset -c "$server_cpu" "$server" --data '' --listen 127.0.0.1:0 --thrift-listen 127.0.0.1:0 \
  --event-loops 1 --worker-threads 1 --thrift-threads 1 --log-level warn >"$work/server.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$work/server.out" && break; sleep 0.1; done
frames_port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/server.out")
thrift_port=$(sed -n 's/^thrift2 on .*:\([0-9]*\)$/\1/p' "$work/server.out")
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)

common=(--records "$records" --threads "$threads" --connections "$threads" --depth 1)
taskset -c "$client_cpu" "$loadgen" --target cellar-rpc --port "$frames_port" --workload a --phase load \
  "${common[@]}" >/dev/null

out=$work/runs.txt
for rep in $(seq "$reps"); do
  for w in c a e; do
    for target in frames thrift2; do
      if [ "$target" = frames ]; then args=(--target cellar-rpc --port "$frames_port");
      else args=(--target thrift2 --port "$thrift_port"); fi
      before=$(cpu_ticks)
      line=$(taskset -c "$client_cpu" "$loadgen" "${args[@]}" --workload "$w" --phase run --duration "$secs" \
               "${common[@]}" 2>&1 | grep '^\[run\]')
      after=$(cpu_ticks)
      ops=$(echo "$line" | sed -n 's/^\[run\] \([0-9]*\) ops in \([0-9.]*\) s: \([0-9.]*\) ops\/s.*/\1 \3/p')
      set -- $ops
      us=$(python3 -c "print(round(($after - $before) / $hz * 1e6 / max(1, $1), 1))")
      echo "$w $target $2 $us" | tee -a "$out"
    done
  done
done

python3 - "$out" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    w, target, ops, us = line.split()
    runs.setdefault((w, target), []).append((float(ops), float(us)))
def mr(xs, scale=1.0, fmt="{:.1f}"):
    xs = [x * scale for x in xs]
    return (fmt + " [" + fmt + "-" + fmt + "]").format(statistics.median(xs), min(xs), max(xs))
print("| workload | frames ops/s | thrift2 ops/s | server µs/op frames | server µs/op thrift2 | per core: thrift2 / frames |")
print("|---|--:|--:|--:|--:|--:|")
for w in "cae":
    f, t = runs[(w, "frames")], runs[(w, "thrift2")]
    # per core: each repetition's frames µs/op over its thrift2 µs/op (the two ran back to back)
    ratios = [a[1] / b[1] for a, b in zip(f, t)]
    print(f"| {w.upper()} | {mr([x[0] for x in f], 1e-3, '{:.1f} k')} | {mr([x[0] for x in t], 1e-3, '{:.1f} k')} | "
          f"{mr([x[1] for x in f])} | {mr([x[1] for x in t])} | {mr(ratios, 1.0, '{:.2f}x')} |")
PY
