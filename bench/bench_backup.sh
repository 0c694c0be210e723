#!/usr/bin/env bash
# bench_backup.sh: cellar-admin's bulk load and import against row-by-row puts (the load
# generator's YCSB load phase over the frames protocol), the rate of an export against the
# disk's sequential write rate, and the time and bytes of a named snapshot.
# docs/benchmarks.md ("Bulk load, import, export and named snapshots") has the figures.
#
#   bench/bench_backup.sh [--records N] [--runs R] [--build DIR] [--cpu C]
#
# The row-by-row load and the bulk load alternate R times (default 3), each on a fresh
# server; their rows give the median and the range [min, max] of the R runs. The named
# snapshot, export and import are timed once, on the last run's table.
# Every server is started here on 127.0.0.1 with a fresh data directory under a temporary
# directory, pinned with the load generator or cellar-admin to CPU C (default 0) so all
# three loads use the same core. Records are YCSB's: key "user" + FNV-1a hash of the
# record number, ten 100-byte fields field0..field9 in family "family", table "usertable"
# with 8 hash partitions.
set -euo pipefail

records=100000
runs=3
build=build
cpu=0
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "bench_backup: unknown option $1" >&2; exit 2 ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
server=$root/$build/src/tools/cellar-server
shell=$root/$build/src/tools/cellar-shell
admin=$root/$build/src/tools/cellar-admin
loadgen=$root/$build/examples/loadgen/cellar-loadgen
for b in "$server" "$shell" "$admin" "$loadgen"; do
  [ -x "$b" ] || { echo "bench_backup: $b is missing (build it first)" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/cellar-bench-backup.XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
on() { taskset -c "$cpu" "$@"; }
now() { date +%s.%N; }

# start: a fresh cellar-server; sets pid and port.
start() {
  rm -rf "$work/data"
  # taskset directly, not through on(): a backgrounded function is a subshell, and $! would
  # be its pid, not the server's.
  taskset -c "$cpu" "$server" --listen 127.0.0.1:0 --data "$work/data" --snapshot-interval-ms 0 >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do
    port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/server.log" | head -n 1)
    [ -n "$port" ] && return 0
    sleep 0.05
  done
  echo "bench_backup: the server did not start" >&2; cat "$work/server.log" >&2; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
create() { echo "create 'usertable', {NAME => 'family', VERSIONS => 1}" | "$shell" --connect "127.0.0.1:$port" --partitions 8 --quiet >/dev/null; }

echo "generating $records YCSB records" >&2
python3 - "$records" "$work/in.tsv" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(1)
letters = "abcdefghijklmnopqrstuvwxyz0123456789"
def fnv(v):
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= v & 0xff
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
        v >>= 8
    return h if h < 1 << 63 else (1 << 64) - h
pool = ["".join(rng.choice(letters) for _ in range(100)) for _ in range(1000)]
with open(path, "w") as out:
    for i in range(n):
        fields = [pool[(i * 10 + k) % len(pool)] for k in range(10)]
        out.write("user%d\t%s\n" % (fnv(i), "\t".join(fields)))
PY
columns=HBASE_ROW_KEY$(for k in $(seq 0 9); do printf ',family:field%d' "$k"; done)
bytes=$(stat -c %s "$work/in.tsv")

puts_all=(); puts_snap_all=(); bulk_all=()
for run in $(seq "$runs"); do
  echo "run $run of $runs" >&2
  # 1. Row by row: the load generator's YCSB load phase over the frames protocol.
  start
  on "$loadgen" --target cellar-rpc --protocol frames --port "$port" --workload a --phase load \
    --records "$records" --partitioning hash:8 --quiet --json "$work/load.json" >/dev/null
  puts_s=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); p=j.get('load', j); print(p['seconds'])" "$work/load.json")
  # The same records made durable: the persistence snapshot a bulk load ends with.
  t0=$(now)
  echo "snapshot" | "$shell" --connect "127.0.0.1:$port" --quiet >/dev/null
  t1=$(now)
  puts_all+=("$puts_s"); puts_snap_all+=("$(echo "$puts_s + $t1 - $t0" | bc -l)")
  stop

  # 2. Bulk load of the same records.
  start; create
  t0=$(now)
  on "$admin" --connect "127.0.0.1:$port" bulkload usertable --tsv "$work/in.tsv" --columns "$columns" >/dev/null
  t1=$(now)
  bulk_all+=("$(echo "$t1 - $t0" | bc -l)")
  if [ "$run" -lt "$runs" ]; then stop; fi
done
# stats V...: "median min max" of the values.
stats() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; print m, v[1], v[NR]}'; }
read -r puts_s puts_min puts_max < <(stats "${puts_all[@]}")
read -r puts_snap_s puts_snap_min puts_snap_max < <(stats "${puts_snap_all[@]}")
read -r bulk_s bulk_min bulk_max < <(stats "${bulk_all[@]}")

# 3. A named snapshot of the loaded table: time and bytes.
t0=$(now)
echo "snapshot 'usertable', 's'" | "$shell" --connect "127.0.0.1:$port" --quiet >/dev/null
t1=$(now)
snap_s=$(echo "$t1 - $t0" | bc -l)
snap_bytes=$(du -sb "$work/data/snapshots/s" | cut -f1)
table_bytes=$(du -sb --exclude=snapshots "$work/data" | cut -f1)

# 4. Export, against the disk's sequential write rate.
t0=$(now)
on "$admin" --connect "127.0.0.1:$port" export usertable --to "$work/out.tsv" >/dev/null
t1=$(now)
export_s=$(echo "$t1 - $t0" | bc -l)
export_bytes=$(stat -c %s "$work/out.tsv")
dd_out=$(dd if=/dev/zero of="$work/dd" bs=1M count=512 conv=fdatasync 2>&1 | tail -n 1)
rm -f "$work/dd"
stop

# 5. Import of the export (batches of 1,000 puts).
start; create
t0=$(now)
on "$admin" --connect "127.0.0.1:$port" import usertable "$work/out.tsv" >/dev/null
t1=$(now)
import_s=$(echo "$t1 - $t0" | bc -l)
stop

rate() { echo "$records / $1" | bc -l; }
printf '%d runs; seconds as median [min, max]\n\n' "$runs"
printf '| what | seconds | records/s (median) | against row-by-row puts |\n|---|---|---|---|\n'
printf '| row-by-row puts (loadgen load phase, frames), in memory | %.2f [%.2f, %.2f] | %.0f | 1x |\n' \
  "$puts_s" "$puts_min" "$puts_max" "$(rate "$puts_s")"
printf '| row-by-row puts, then the persistence snapshot (durable) | %.2f [%.2f, %.2f] | %.0f | |\n' \
  "$puts_snap_s" "$puts_snap_min" "$puts_snap_max" "$(rate "$puts_snap_s")"
printf '| cellar-admin bulkload (durable when it returns) | %.2f [%.2f, %.2f] | %.0f | %.2fx (%.2fx the durable puts) |\n' \
  "$bulk_s" "$bulk_min" "$bulk_max" "$(rate "$bulk_s")" "$(echo "$puts_s / $bulk_s" | bc -l)" \
  "$(echo "$puts_snap_s / $bulk_s" | bc -l)"
printf '| cellar-admin import (of the export), one run | %.2f | %.0f | %.2fx |\n' "$import_s" "$(rate "$import_s")" \
  "$(echo "$puts_s / $import_s" | bc -l)"
echo
printf 'input: %d records, %d bytes of TSV\n' "$records" "$bytes"
printf 'named snapshot: %.2f s, %d bytes (data directory without snapshots: %d bytes)\n' "$snap_s" "$snap_bytes" "$table_bytes"
printf 'export: %d bytes in %.2f s = %.1f MB/s; dd of 512 MiB with fdatasync: %s\n' "$export_bytes" "$export_s" \
  "$(echo "$export_bytes / $export_s / 1000000" | bc -l)" "$dd_out"
