#!/usr/bin/env bash
# Client-routed throughput with 1 node and with 3 nodes on the same cores: ZooKeeper, then
# the cluster's cellar-server nodes, all pinned to one CPU set (SERVER_CPUS), the load
# generator on another (LOADGEN_CPUS), YCSB through the load generator's cluster target
# (--cluster: each request straight to the node owning its row). The 1-node and 3-node
# clusters run side by side (fresh chroots of one ZooKeeper) and their runs alternate, so
# the machine's noise hits both alike. Prints every run (with the load generator's CPU share
# and the servers' CPUs' busy share) and, per workload and cluster size, the median with the
# range, then the 3-node median as a share of the 1-node one.
#
# The baseline, in the same repetitions (REDIS=1, the default): redis-server, one alone and
# three as shards of the keys, on the same CPUs with the same load generator (its redis
# target with --redis-shards: each request straight to the server of its key's Redis Cluster
# hash slot, one socket per server per connection, as the cellar cluster target has per
# node). Its 3-against-1 share tells what splitting a client's requests over three
# processes on one core costs a server that is not cellar.
#
#   scripts/bench-cluster.sh [REPS] [SECONDS]          (defaults 3 and 5)
#
# Environment: SERVER_CPUS (default 1), LOADGEN_CPUS (default 0), RECORDS (default 50000),
# WORKLOADS (default "a c"), DEPTH (default 16), DEPTH3 (the 3-node runs' depth; default DEPTH:
# 48 keeps about 16 requests in flight per node link, as 16 gives the single node; a different
# client from the single node's, so not a like-for-like comparison: docs/cluster.md §6),
# CONNECTIONS (default 4), THREADS (default 1),
# SERVER, LOADGEN (binaries; default build/src/tools/..., build/examples/loadgen/...),
# SERVER_ARGS (more cellar-server flags for every node), REDIS (1: the redis baseline too; 0: not),
# LOOPS1 and WORKERS1 (the single node's event loops and CAF worker threads, default 1 each:
# 3 and 3 give it the serving threads of the three nodes together, on the same core).
# Each node of the 3: --worker-threads 1 --event-loops 1, in memory (--data ''). The table:
# range:6 (two partitions per node on 3 nodes, six on 1).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3}
secs=${2:-5}
SERVER=${SERVER:-$root/build/src/tools/cellar-server}
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
SERVER_CPUS=${SERVER_CPUS:-1}
LOADGEN_CPUS=${LOADGEN_CPUS:-0}
RECORDS=${RECORDS:-50000}
WORKLOADS=${WORKLOADS:-a c}
DEPTH=${DEPTH:-16}
DEPTH3=${DEPTH3:-$DEPTH}
CONNECTIONS=${CONNECTIONS:-4}
THREADS=${THREADS:-1}
jar=/usr/share/java/zookeeper.jar
[ -f "$jar" ] || { echo "ZooKeeper is not installed ($jar): run scripts/setup.sh" >&2; exit 1; }

work=$(mktemp -d /tmp/bench-cluster.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# ZooKeeper, standalone, on the servers' CPUs.
zk_port=$(free_port)
mkdir -p "$work/zk"
cat >"$work/zk/zoo.cfg" <<EOF
tickTime=200
dataDir=$work/zk/data
clientPort=$zk_port
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=no
admin.enableServer=false
4lw.commands.whitelist=ruok
EOF
taskset -c "$SERVER_CPUS" java -Xms16m -Xmx256m -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true \
  -cp "$jar" org.apache.zookeeper.server.ZooKeeperServerMain "$work/zk/zoo.cfg" >"$work/zk/log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do
  # A connection ZooKeeper accepts while it starts may get no answer: give each try 2 s.
  [ "$(timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$zk_port"' && printf ruok >&3 && cat <&3' 2>/dev/null)" = imok ] && break
  sleep 0.2
done

# A cluster of N nodes under chroot /cN.
start_cluster() {
  local n=$1 loops=1 workers=1
  [ "$n" = 1 ] && loops=${LOOPS1:-1} workers=${WORKERS1:-1}
  for i in $(seq "$n"); do
    local log="$work/c$n-n$i.log"
    taskset -c "$SERVER_CPUS" "$SERVER" --cluster "127.0.0.1:$zk_port/c$n" --node-id "n$i" --listen 127.0.0.1:0 \
      --data "" --worker-threads "$workers" --event-loops "$loops" --zk-session-timeout-ms 10000 ${SERVER_ARGS:-} \
      >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 300); do grep -q "listening on" "$log" && break; sleep 0.1; done
    grep -q "listening on" "$log" || { echo "node n$i of the $n-node cluster did not start:" >&2; cat "$log" >&2; exit 1; }
  done
}
start_cluster 1
start_cluster 3

# The redis baseline: one server (r1) and three shards (r3), no persistence, one I/O thread.
REDIS=${REDIS:-1}
redis_ports=()
if [ "$REDIS" = 1 ]; then
  command -v redis-server >/dev/null || { echo "redis-server is not installed: run scripts/setup.sh" >&2; exit 1; }
  for i in 1 2 3 4; do
    port=$(free_port)
    taskset -c "$SERVER_CPUS" redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 \
      --dir "$work" --daemonize no >"$work/redis-$i.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$port" ping >/dev/null 2>&1 || { echo "redis-server $i did not start:" >&2; cat "$work/redis-$i.log" >&2; exit 1; }
    redis_ports+=("$port")
  done
fi

# Busy and total jiffies of the servers' CPUs (every CPU of SERVER_CPUS, a list like 1 or 1,3
# or 2-3), from /proc/stat: busy is all but idle and iowait.
cpu_ticks() {
  local cpus
  cpus=$(python3 -c '
import sys
out = []
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-")
    out += range(int(a), int(b or a) + 1)
print(" ".join("cpu%d" % c for c in out))' "$SERVER_CPUS")
  awk -v want="$cpus" 'BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) sel[w[i]] = 1 }
    $1 in sel { for (i = 2; i <= NF; i++) { t += $i; if (i != 5 && i != 6) b += $i } }
    END { print b, t }' /proc/stat
}

# lg N WORKLOAD PHASE JSON [extra...]: N is 1 or 3 (cellar nodes) or r1 or r3 (redis
# servers). Its CPU time (user system) in $work/lg.time.
lg() {
  local n=$1 wl=$2 phase=$3 json=$4 target
  shift 4
  case $n in
    r1) target=(--target redis --port "${redis_ports[0]}") ;;
    r3) target=(--target redis --redis-shards "127.0.0.1:${redis_ports[1]},127.0.0.1:${redis_ports[2]},127.0.0.1:${redis_ports[3]}") ;;
    *) target=(--cluster "127.0.0.1:$zk_port/c$n" --partitioning range:6) ;;
  esac
  taskset -c "$LOADGEN_CPUS" /usr/bin/time -f "%U %S" -o "$work/lg.time" "$LOADGEN" "${target[@]}" --workload "$wl" --phase "$phase" \
    --records "$RECORDS" --threads "$THREADS" --connections "$CONNECTIONS" \
    --depth "$(case $n in 3|r3) echo "$DEPTH3" ;; *) echo "$DEPTH" ;; esac)" \
    --quiet --json "$json" "$@" >/dev/null
}
sizes="1 3"
[ "$REDIS" = 1 ] && sizes="1 3 r1 r3"
for n in $sizes; do lg "$n" a load "$work/load-$n.json"; done

echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); servers on CPUs $SERVER_CPUS," \
     "loadgen on $LOADGEN_CPUS; $RECORDS records, depth $DEPTH (3 nodes: $DEPTH3) x $CONNECTIONS connections, ${secs} s runs;" \
     "the single node: ${LOOPS1:-1} event loops, ${WORKERS1:-1} workers"
printf "%-3s %-6s %-4s %10s %9s %6s %12s %12s\n" wl nodes rep ops/s p99_us errors loadgen_cpu% servers_cpu%
: >"$work/runs"
for rep in $(seq "$reps"); do
  for wl in $WORKLOADS; do
    # Alternate which cluster (and which redis set) goes first.
    order="1 3"
    [ $((rep % 2)) = 0 ] && order="3 1"
    if [ "$REDIS" = 1 ]; then
      if [ $((rep % 2)) = 0 ]; then order="$order r3 r1"; else order="$order r1 r3"; fi
    fi
    for n in $order; do
      read -r b0 t0 < <(cpu_ticks)
      lg "$n" "$wl" run "$work/run.json" --duration "$secs" || true  # exit 3: errors, shown below
      read -r b1 t1 < <(cpu_ticks)
      read -r ops p99 errs _ <<<"$("$LOADGEN" summary "$work/run.json")"
      # The load generator's CPU (user + system) as a share of the run: near 100% per thread,
      # the client limits the figure. The last line: time(1) puts a non-zero exit first.
      read -r lu ls < <(tail -n 1 "$work/lg.time")
      # The servers' CPUs' busy share over the run (setup and teardown of the load generator
      # included): near 100%, the servers limit the figure.
      printf "%-3s %-6s %-4s %10s %9s %6s %12s %12s\n" "$wl" "$n" "$rep" "$ops" "$p99" "$errs" \
        "$(awk -v u="$lu" -v s="$ls" -v t="$secs" 'BEGIN { printf "%.0f", 100 * (u + s) / t }')" \
        "$(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.0f", t ? 100 * b / t : 0 }')"
      echo "$wl $n $ops $errs" >>"$work/runs"
    done
  done
done

echo
echo "# median [min - max] ops/s; 3 as a share of 1 (cellar nodes; redis servers, the keys sharded)"
for wl in $WORKLOADS; do
  for kind in cellar redis; do
    [ "$kind" = redis ] && [ "$REDIS" != 1 ] && continue
    one=1 three=3
    [ "$kind" = redis ] && one=r1 three=r3
    awk -v wl="$wl" -v kind="$kind" -v one="$one" -v three="$three" '
      function median(a, k,   i, j, t) {
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
      }
      $1 == wl && $2 == one { o[++n1] = $3; if ($4 > 0) e++ }
      $1 == wl && $2 == three { t[++n3] = $3; if ($4 > 0) e++ }
      END {
        m1 = median(o, n1); m3 = median(t, n3)
        printf "%s %-6s: 1 %.0f [%.0f - %.0f], 3 %.0f [%.0f - %.0f]: %.1f%%%s\n", wl, kind, m1, o[1], o[n1],
               m3, t[1], t[n3], 100 * m3 / m1, e ? " (runs with errors!)" : ""
      }' "$work/runs"
  done
done
