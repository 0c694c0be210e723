#!/usr/bin/env bash
# What synchronous replication costs cellar (Raft, a write acknowledged once a majority of its
# partition's three replicas has it) and Redis (WAIT: a write acknowledged once the replicas
# have it), each against itself without replication. Four set-ups, side by side:
#   f1  cellar, 3 nodes, --replication-factor 1 (each partition on one node), in memory
#   f3  cellar, 3 nodes, --replication-factor 3 (each partition a Raft group of a replica on
#       every node), in memory: --data '' keeps the replicas' Raft logs in memory too
#   f3l the same in log mode (--durability log, a data directory per node): each replica
#       appends its Raft log to disk, synced on the log's interval
#   r1  redis-server alone
#   rw  redis-server master with 2 replicas (replicaof); the load generator sends
#       WAIT N 0 after each request's writes (--redis-wait N, N = REDIS_WAIT, default 1: the
#       master and one replica hold the write, as a Raft majority of three does) and counts
#       them done when it answers
# For each repetition and set-up: a YCSB load phase (the keys recreated: the cellar table
# dropped and made again, FLUSHALL on redis), then workload WORKLOAD (default a) for SECONDS. The set-ups take
# turns in an order that reverses every repetition, so the machine's noise hits all alike.
# Prints every run (with the load generator's CPU share and the servers' CPUs' busy share),
# then per phase and set-up the median with the range, and the f3/f1 and rw/r1 ratios.
#
# Fairness: every server process (ZooKeeper, the 6 cellar nodes, the 4 redis-servers) runs
# on the same CPUs (SERVER_CPUS) and the load generator on others (LOADGEN_CPUS). Each
# replicated set-up has three server processes, one per copy of the data, as has f1 (3
# nodes, one copy); r1 is one process. The set-ups not under load stay up but idle. Both
# sides use the same load generator with the same RECORDS, DEPTH, CONNECTIONS and THREADS:
# the cellar ones through its cluster target (each request straight to the node its
# partition names first: the partition's only node, or its preferred Raft leader), redis
# through its redis target, whose pipelining is the same with and without WAIT. One WAIT per
# request and connection covers the request's writes (a load-phase request carries
# --load-batch inserts, as a cellar batch does). What the servers do with it differs: Redis
# blocks a connection on WAIT, so the commands pipelined behind it wait for the replicas too;
# a cellar node keeps serving the other requests of a connection while a write commits. A
# Raft group elects its own leader, which need not be the node the client sends to: that
# node then passes the request on (the nodes' forwarded-request counts are printed at the
# end).
#
#   scripts/bench-replication.sh [REPS] [SECONDS]          (defaults 3 and 5)
#
# Environment: SERVER_CPUS (default 1), LOADGEN_CPUS (default 0), RECORDS (default 50000),
# DEPTH (default 16), CONNECTIONS (default 4), THREADS (default 1), SETUPS (default
# "f1 f3 f3l r1 rw"), REDIS_WAIT (default 1), WORKLOAD (default a), SERVER, SHELL_BIN, LOADGEN (binaries; default build/src/tools/...,
# build/examples/loadgen/...), SERVER_ARGS (more cellar-server flags for every node). Each
# cellar node: --worker-threads 1 --event-loops 1. The table: range:6 (two partitions per node).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3}
secs=${2:-5}
SERVER=${SERVER:-$root/build/src/tools/cellar-server}
SHELL_BIN=${SHELL_BIN:-$root/build/src/tools/cellar-shell}
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
SERVER_CPUS=${SERVER_CPUS:-1}
LOADGEN_CPUS=${LOADGEN_CPUS:-0}
RECORDS=${RECORDS:-50000}
DEPTH=${DEPTH:-16}
CONNECTIONS=${CONNECTIONS:-4}
THREADS=${THREADS:-1}
SETUPS=${SETUPS:-f1 f3 f3l r1 rw}
REDIS_WAIT=${REDIS_WAIT:-1}
WORKLOAD=${WORKLOAD:-a}
jar=/usr/share/java/zookeeper.jar
[ -f "$jar" ] || { echo "ZooKeeper is not installed ($jar): run scripts/setup.sh" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server is not installed: run scripts/setup.sh" >&2; exit 1; }

work=$(mktemp -d /tmp/bench-replication.XXXXXX)
pids=()
# Servers started in a command substitution (a subshell) write their pids to $work/pids.
cleanup() {
  [ -f "$work/pids" ] && while read -r p; do kill "$p" 2>/dev/null || true; done <"$work/pids"
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

# A 3-node cluster under chroot /NAME with replication factor F, in memory or (DURABILITY
# log) in log mode; each node's address in $work/NAME-nI.addr.
start_cluster() {
  local name=$1 factor=$2 durability=${3:-memory}
  for i in 1 2 3; do
    local log="$work/$name-n$i.log" data=()
    if [ "$durability" = log ]; then
      data=(--data "$work/$name-n$i" --durability log)
    else
      data=(--data "")
    fi
    taskset -c "$SERVER_CPUS" "$SERVER" --cluster "127.0.0.1:$zk_port/$name" --node-id "n$i" --listen 127.0.0.1:0 \
      "${data[@]}" --worker-threads 1 --event-loops 1 --zk-session-timeout-ms 10000 --replication-factor "$factor" \
      ${SERVER_ARGS:-} >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 300); do grep -q "^listening on" "$log" 2>/dev/null && break; sleep 0.1; done
    grep -q "^listening on" "$log" || { echo "node n$i of cluster $name did not start:" >&2; cat "$log" >&2; exit 1; }
    sed -n 's/^listening on //p' "$log" | head -n 1 >"$work/$name-n$i.addr"
  done
}

# redis-server on a free port, no persistence, with more flags; its port on stdout.
start_redis() {
  local name=$1 port
  shift
  port=$(free_port)
  # A directory of its own: a replica writes the master's data there when it syncs.
  mkdir -p "$work/redis-$name"
  taskset -c "$SERVER_CPUS" redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 \
    --dir "$work/redis-$name" --daemonize no "$@" >"$work/redis-$name.log" 2>&1 &
  pids+=($!)
  echo $! >>"$work/pids"
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$port" ping >/dev/null 2>&1 || { echo "redis-server $name did not start:" >&2; cat "$work/redis-$name.log" >&2; exit 1; }
  echo "$port"
}

for s in $SETUPS; do
  case $s in
    f1) start_cluster f1 1 ;;
    f3) start_cluster f3 3 ;;
    f3l) start_cluster f3l 3 log ;;
    r1) r1_port=$(start_redis r1) ;;
    rw)
      rw_port=$(start_redis rw-master)
      start_redis rw-replica1 --replicaof 127.0.0.1 "$rw_port" >/dev/null
      start_redis rw-replica2 --replicaof 127.0.0.1 "$rw_port" >/dev/null
      # Both replicas attached (their first sync done) before any WAIT counts on them.
      for _ in $(seq 300); do
        [ "$(redis-cli -p "$rw_port" info replication | grep -c 'state=online')" = 2 ] && break
        sleep 0.1
      done
      [ "$(redis-cli -p "$rw_port" info replication | grep -c 'state=online')" = 2 ] ||
        { echo "the redis replicas did not attach:" >&2; redis-cli -p "$rw_port" info replication >&2; exit 1; }
      ;;
    *) echo "unknown set-up '$s' (f1 f3 f3l r1 rw)" >&2; exit 1 ;;
  esac
done

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

# lg SETUP PHASE JSON [extra...]: the load generator against one set-up. Its CPU time
# (user system) in $work/lg.time.
lg() {
  local s=$1 phase=$2 json=$3 target
  shift 3
  case $s in
    f1 | f3 | f3l) target=(--cluster "127.0.0.1:$zk_port/$s" --partitioning range:6) ;;
    r1) target=(--target redis --port "$r1_port") ;;
    rw) target=(--target redis --port "$rw_port" --redis-wait "$REDIS_WAIT") ;;
  esac
  taskset -c "$LOADGEN_CPUS" /usr/bin/time -f "%U %S" -o "$work/lg.time" "$LOADGEN" "${target[@]}" --workload "$WORKLOAD" \
    --phase "$phase" --records "$RECORDS" --threads "$THREADS" --connections "$CONNECTIONS" --depth "$DEPTH" \
    --quiet --json "$json" "$@" >/dev/null
}

# run_one REP SETUP PHASE: one measured run, printed and added to $work/runs.
run_one() {
  local rep=$1 s=$2 phase=$3 extra=() label=$3
  [ "$phase" = run ] && extra=(--duration "$secs") && label=$WORKLOAD
  read -r b0 t0 < <(cpu_ticks)
  lg "$s" "$phase" "$work/$s.json" "${extra[@]}" || true  # exit 3: errors, shown below
  read -r b1 t1 < <(cpu_ticks)
  read -r ops p99 errs _ took <<<"$("$LOADGEN" summary "$work/$s.json")"
  # The load generator's CPU (user + system) as a share of the phase; the last line of
  # time(1)'s file (it puts a non-zero exit first). The servers' CPUs' busy share over the
  # phase, the load generator's setup included.
  read -r lu ls < <(tail -n 1 "$work/lg.time")
  printf "%-5s %-4s %-4s %10s %9s %7s %12s %12s\n" "$label" "$s" "$rep" "$ops" "$p99" "$errs" \
    "$(awk -v u="$lu" -v s="$ls" -v t="$took" 'BEGIN { printf "%.0f", (t > 0 ? 100 * (u + s) / t : 0) }')" \
    "$(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) 'BEGIN { printf "%.0f", t ? 100 * b / t : 0 }')"
  echo "$label $s $ops $errs" >>"$work/runs"
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); servers on CPUs $SERVER_CPUS," \
     "loadgen on $LOADGEN_CPUS; $RECORDS records, depth $DEPTH x $CONNECTIONS connections x $THREADS threads," \
     "${secs} s runs of workload $WORKLOAD"
printf "%-5s %-4s %-4s %10s %9s %7s %12s %12s\n" phase setup rep ops/s p99_us errors loadgen_cpu% servers_cpu%
: >"$work/runs"
for rep in $(seq "$reps"); do
  order=$SETUPS
  [ $((rep % 2)) = 0 ] && order=$(echo "$SETUPS" | tr ' ' '\n' | tac | tr '\n' ' ')
  for s in $order; do
    run_one "$rep" "$s" load
    run_one "$rep" "$s" run
  done
done

echo
echo "# median [min - max] ops/s per set-up; replicated as a share of unreplicated (f3/f1, rw/r1)"
for phase in load "$WORKLOAD"; do
  awk -v phase="$phase" '
    function median(a, k,   i, j, t) {
      for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    $1 == phase { v[$2, ++n[$2]] = $3; if ($4 > 0) err[$2] = 1 }
    END {
      split("f1 f3 f3l r1 rw", order, " ")
      line = phase ":"
      for (i = 1; i <= 5; i++) {
        s = order[i]
        if (!(s in n)) continue
        k = n[s]
        for (j = 1; j <= k; j++) a[j] = v[s, j]
        m[s] = median(a, k)
        line = line sprintf(" %s %.0f [%.0f - %.0f]%s", s, m[s], a[1], a[k], err[s] ? " (errors!)" : "")
      }
      print line
      if (("f1" in m) && ("f3" in m) && m["f1"] > 0) printf "  f3/f1 %.1f%%", 100 * m["f3"] / m["f1"]
      if (("f3l" in m) && ("rw" in m) && m["rw"] > 0) printf "  f3l/rw %.1f%%", 100 * m["f3l"] / m["rw"]
      if (("f3" in m) && ("rw" in m) && m["rw"] > 0) printf "  f3/rw %.1f%%", 100 * m["f3"] / m["rw"]
      if (("r1" in m) && ("rw" in m) && m["r1"] > 0) printf "  rw/r1 %.1f%%", 100 * m["rw"] / m["r1"]
      print ""
    }' "$work/runs"
done

# The requests each cellar node took from another node (a factor-3 node passes a request
# to its partition's leader when that is another node), over all the runs.
if [ -x "$SHELL_BIN" ]; then
  for s in f1 f3 f3l; do
    case " $SETUPS " in *" $s "*) ;; *) continue ;; esac
    line="# $s: requests served for other nodes:"
    for i in 1 2 3; do
      n=$("$SHELL_BIN" --connect "$(cat "$work/$s-n$i.addr")" <<<"status 'detailed'" 2>/dev/null |
        sed -n 's/.*which served \([0-9]*\) forwarded requests.*/\1/p' | head -n 1)
      line="$line n$i ${n:-?}"
    done
    echo "$line"
  done
fi
