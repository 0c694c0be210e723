#!/usr/bin/env bash
# How long a replicated partition takes writes again after its leader's node dies. Each
# trial: a fresh 3-node cluster with --replication-factor 3 (a Raft group of a replica on
# every node for each partition), in memory, under a chroot of its own in one ZooKeeper;
# then build/bench/bench_failover creates a table of 6 partitions, finds each group's
# leader, writes to every partition without pause through node n1 (a thread per
# partition), kills with SIGKILL whichever of n2 and n3 leads more partitions, and reports
# the time from the kill to the first acknowledged write to a partition the dead node led
# (first_ms), until each of them had one (all_ms), the longest pause between acknowledged
# writes of those partitions (gap_led_ms) and of the others (gap_others_ms), and the writes
# that failed. Prints every trial, then the median with the range of each figure.
#
# A new leader is elected once a follower has heard nothing for its election timeout,
# which libraft draws between 1x and 2x --election-timeout-ms, plus a pre-vote and a vote
# round; n1 learns of the dead node at once (its connections break) and its replica router
# then tries the survivors, 50 ms apart, until one answers as the leader.
#
#   scripts/bench-failover.sh [TRIALS]          (default 10)
#
# Environment: ELECTION_MS (the nodes' --election-timeout-ms, default 1000), SERVER_CPUS
# (the servers' and ZooKeeper's CPUs, default 1), PROBE_CPUS (bench_failover's, default 0),
# WARMUP_MS (writing before the kill, default 1000), SERVER, PROBE (binaries; default
# build/src/tools/cellar-server, build/bench/bench_failover), SERVER_ARGS (more cellar-server
# flags for every node). Each node: --worker-threads 1 --event-loops 1, in memory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
trials=${1:-10}
SERVER=${SERVER:-$root/build/src/tools/cellar-server}
PROBE=${PROBE:-$root/build/bench/bench_failover}
ELECTION_MS=${ELECTION_MS:-1000}
SERVER_CPUS=${SERVER_CPUS:-1}
PROBE_CPUS=${PROBE_CPUS:-0}
WARMUP_MS=${WARMUP_MS:-1000}
jar=/usr/share/java/zookeeper.jar
[ -f "$jar" ] || { echo "ZooKeeper is not installed ($jar): run scripts/setup.sh" >&2; exit 1; }
[ -x "$PROBE" ] || { echo "no $PROBE: build it (ninja -C build bench/bench_failover)" >&2; exit 1; }

work=$(mktemp -d /tmp/bench-failover.XXXXXX)
pids=()
node_pids=()
stop_nodes() {
  for p in "${node_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${node_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  node_pids=()
}
cleanup() {
  stop_nodes
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

# start_cluster NAME: nodes n1..n3 under chroot /NAME; their pids in node_pids.
start_cluster() {
  local name=$1
  for i in 1 2 3; do
    local log="$work/$name-n$i.log"
    taskset -c "$SERVER_CPUS" "$SERVER" --cluster "127.0.0.1:$zk_port/$name" --node-id "n$i" --listen 127.0.0.1:0 \
      --data "" --worker-threads 1 --event-loops 1 --zk-session-timeout-ms 10000 --replication-factor 3 \
      --election-timeout-ms "$ELECTION_MS" ${SERVER_ARGS:-} >"$log" 2>&1 &
    node_pids+=($!)
    for _ in $(seq 300); do grep -q "^listening on" "$log" 2>/dev/null && break; sleep 0.1; done
    grep -q "^listening on" "$log" || { echo "node n$i of cluster $name did not start:" >&2; cat "$log" >&2; exit 1; }
  done
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); servers on CPUs $SERVER_CPUS," \
     "bench_failover on $PROBE_CPUS; --election-timeout-ms $ELECTION_MS; writing ${WARMUP_MS} ms before the kill"
printf "%-6s %-7s %-5s %10s %10s %11s %14s %7s\n" trial victim led first_ms all_ms gap_led_ms gap_others_ms failed
: >"$work/trials"
trial=0
attempt=0
while [ "$trial" -lt "$trials" ]; do
  attempt=$((attempt + 1))
  [ "$attempt" -gt $((trials * 3)) ] && { echo "too many trials failed" >&2; exit 1; }
  start_cluster "t$attempt"
  rc=0
  # The block's stderr is bash's own note of the node killed with SIGKILL.
  {
    taskset -c "$PROBE_CPUS" "$PROBE" "127.0.0.1:$zk_port/t$attempt" "n2=${node_pids[1]}" "n3=${node_pids[2]}" \
      --via n1 --warmup-ms "$WARMUP_MS" >"$work/out" 2>"$work/err" || rc=$?
    stop_nodes
  } 2>/dev/null
  if [ "$rc" = 4 ]; then  # n1 led every partition: nothing to kill that would show
    echo "# (attempt $attempt: n1 led every partition; again on a fresh cluster)"
    continue
  fi
  if [ "$rc" != 0 ] && [ "$rc" != 5 ]; then
    echo "bench_failover failed (exit $rc):" >&2
    cat "$work/err" >&2
    exit 1
  fi
  trial=$((trial + 1))
  read -r _ victim _ led _ first _ all _ gap_led _ gap_others _ failed < <(grep '^victim ' "$work/out")
  printf "%-6s %-7s %-5s %10s %10s %11s %14s %7s\n" "$trial" "$victim" "$led" "$first" "$all" "$gap_led" "$gap_others" \
    "$failed"
  [ "$rc" = 5 ] && echo "#   (a partition the victim led took no write within the time allowed: all_ms -1)"
  [ -s "$work/err" ] && sed 's/^/#   /' "$work/err"
  echo "$first $all $gap_led $gap_others $failed" >>"$work/trials"
done

echo
echo "# median [min - max] over $trials trials"
for col in 1:first_ms 2:all_ms 3:gap_led_ms 4:gap_others_ms 5:failed; do
  awk -v c="${col%%:*}" -v name="${col#*:}" '
    { v[++n] = $c }
    END {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
      m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "%-14s %8.1f [%.1f - %.1f]\n", name, m, v[1], v[n]
    }' "$work/trials"
done
