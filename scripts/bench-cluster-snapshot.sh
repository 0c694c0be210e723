#!/usr/bin/env bash
# bench-cluster-snapshot.sh: what a named snapshot, a restore, a clone, a bulk load and a split cost
# the node that serves them in a cluster: the growth of its peak RSS over its RSS before
# each call, and the call's time. docs/benchmarks.md ("Bulk load, import, export and named snapshots").
#
#   scripts/bench-cluster-snapshot.sh [--records N] [--runs R] [SERVER...]
#
# For each run and each SERVER binary in turn (default build/src/tools/cellar-server; give
# two to compare builds, interleaved): ZooKeeper and three nodes of that binary on
# loopback (factor 1, --data, one event loop and one CAF worker each), N YCSB records
# (default 200,000) loaded by the load generator into 6 range partitions, then through
# node n1 with cellar-shell: snapshot, disable, restore_snapshot, clone_snapshot; then
# `cellar-admin --connect n1 bulkload` of N records of the same shape (10 fields of 100
# bytes, a TSV made once) into a new table of 6 partitions; then a split of one partition
# of the clone, at 'user5'. Before
# each call the node's peak RSS is reset (/proc/PID/clear_refs); after it, VmHWM - VmRSS
# before is printed, and the highest RssAnon sampled during the call (every 20 ms) - RssAnon
# before (the memory it allocated, without mapped file pages). Prints one line per call:
# binary, run, call, MB, MB anon, seconds.
set -euo pipefail
records=200000
runs=1
servers=()
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) servers+=("$1"); shift ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
[ ${#servers[@]} -gt 0 ] || servers=("$root/build/src/tools/cellar-server")
shell_bin=$root/build/src/tools/cellar-shell
admin_bin=$root/build/src/tools/cellar-admin
loadgen=$root/build/examples/loadgen/cellar-loadgen
jar=/usr/share/java/zookeeper.jar
[ -f "$jar" ] || { echo "ZooKeeper is not installed ($jar): run scripts/setup.sh" >&2; exit 1; }
for b in "${servers[@]}" "$shell_bin" "$admin_bin" "$loadgen"; do [ -x "$b" ] || { echo "$b is missing (build it first)" >&2; exit 2; }; done

work=$(mktemp -d /tmp/bench-cluster-snapshot.XXXXXX)
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# one SERVER RUN: a fresh ZooKeeper and cluster, loaded, then the three calls measured.
one() {
  local server=$1 run=$2 zk_port d=$work/run
  rm -rf "$d"
  mkdir -p "$d/zk"
  zk_port=$(free_port)
  printf 'tickTime=200\ndataDir=%s/zk/data\nclientPort=%s\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nforceSync=no\nadmin.enableServer=false\n4lw.commands.whitelist=ruok\n' \
    "$d" "$zk_port" >"$d/zk/zoo.cfg"
  java -Xms16m -Xmx256m -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true -cp "$jar" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$d/zk/zoo.cfg" >"$d/zk/log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do
    [ "$(timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$zk_port"' && printf ruok >&3 && cat <&3' 2>/dev/null)" = imok ] && break
    sleep 0.2
  done
  local n1=
  for i in 1 2 3; do
    "$server" --cluster "127.0.0.1:$zk_port/c" --node-id "n$i" --listen 127.0.0.1:0 --data "$d/n$i" \
      --snapshot-interval-ms 0 --worker-threads 1 --event-loops 1 --zk-session-timeout-ms 10000 >"$d/n$i.log" 2>&1 &
    pids+=($!)
    [ "$i" = 1 ] && n1=$!
    for _ in $(seq 300); do grep -q "^listening on" "$d/n$i.log" 2>/dev/null && break; sleep 0.1; done
    grep -q "^listening on" "$d/n$i.log" || { echo "node n$i did not start:" >&2; cat "$d/n$i.log" >&2; exit 1; }
  done
  local addr
  addr=$(sed -n 's/^listening on //p' "$d/n1.log" | head -n 1)
  "$loadgen" --cluster "127.0.0.1:$zk_port/c" --partitioning range:6 --workload a --phase load --records "$records" \
    --quiet >/dev/null
  kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$n1/status"; }
  # The highest RssAnon of n1 (kB) while $d/sampling exists, sampled every 20 ms into
  # $d/anon: the memory the call allocates, without the file pages it maps, which VmHWM
  # counts too.
  sample_anon() {
    local max=0 k v _
    while [ -f "$d/sampling" ]; do
      while read -r k v _; do [ "$k" = RssAnon: ] && [ "$v" -gt "$max" ] && max=$v; done <"/proc/$n1/status"
      echo "$max" >"$d/anon"
      sleep 0.02
    done
  }
  # call NAME SHELL-COMMAND, or call NAME -- PROGRAM ARGS...
  call() {
    local what=$1 cmd=$2 r0 a0 t0 t1 sampler
    echo 5 >"/proc/$n1/clear_refs"
    r0=$(kb VmRSS)
    a0=$(kb RssAnon)
    touch "$d/sampling"
    sample_anon &
    sampler=$!
    t0=$(date +%s.%N)
    if [ "$cmd" = -- ]; then
      shift 2
      "$@" >"$d/out" 2>&1 || { cat "$d/out" >&2; exit 1; }
    else
      echo "$cmd" | "$shell_bin" --connect "$addr" --quiet >"$d/out" 2>&1 || { cat "$d/out" >&2; exit 1; }
    fi
    t1=$(date +%s.%N)
    rm -f "$d/sampling"
    wait "$sampler"
    printf '%s run %d %-8s %5d MB %5d MB anon %6.2f s\n' "$(basename "${server%%/build/*}")" \
      "$run" "$what" $((($(kb VmHWM) - r0) / 1024)) $((($(cat "$d/anon") - a0) / 1024)) "$(echo "$t1 - $t0" | bc -l)"
  }
  call snapshot "snapshot 'usertable', 's'"
  echo "disable 'usertable'" | "$shell_bin" --connect "$addr" --quiet >/dev/null
  call restore "restore_snapshot 's'"
  call clone "clone_snapshot 's', 'c2'"
  echo "create 'bl', {NAME => 'family', VERSIONS => 1}" | "$shell_bin" --connect "$addr" --partitions 6 --quiet >/dev/null
  call bulkload -- "$admin_bin" --connect "$addr" bulkload bl --tsv "$work/in.tsv" --columns "$columns"
  # A split of one partition of the clone (the table's size, every partition on its node).
  call split "split 'c2', 'user5'"
  echo "files of the snapshot on n1: $(du -sm "$d/n1/snapshots/s" | cut -f1) MB" >&2
  stop_all
}

# The bulk load's input: N rows of 10 fields of 100 bytes.
python3 - "$records" "$work/in.tsv" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(1)
letters = "abcdefghijklmnopqrstuvwxyz0123456789"
pool = ["".join(rng.choice(letters) for _ in range(100)) for _ in range(1000)]
with open(path, "w") as out:
    for i in range(n):
        out.write("user%d\t%s\n" % (rng.getrandbits(62), "\t".join(pool[(i * 10 + k) % len(pool)] for k in range(10))))
PY
columns=HBASE_ROW_KEY$(for k in $(seq 0 9); do printf ',family:field%d' "$k"; done)

for run in $(seq "$runs"); do
  for s in "${servers[@]}"; do one "$s" "$run"; done
done
