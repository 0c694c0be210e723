#!/usr/bin/env bash
# Restart and disk against Redis, same records: cellar-server and redis-server loaded with
# RECORDS YCSB records (10 fields of FL bytes) by the load generator; cellar in snapshot
# mode stopped with SIGTERM (its final snapshot), Redis saved to RDB with SAVE.
#
# Per run: the disk's sequential write rate (dd, 256 MB, fdatasync: the baseline of the
# snapshot rate) and the load average; Redis loaded, saved and restarted on --server-cpu;
# then per --compression setting cellar loaded on --server-cpu and stopped, and the same
# data directory restarted once per --cellar-cpus setting (cellar reads its partitions with
# one thread per core it may run on), in alternating order from run to run. Reported: the
# start of an empty server (the fixed cost of a start), the bytes on disk, the save (Redis's
# SAVE; cellar's SIGTERM to exit, its final snapshot), the
# restart (exec to the first answered read: of user0, which the hashed YCSB keys leave absent,
# answered by either only once all is loaded) and the load time each server logs
# (Redis's "DB loaded from disk", cellar's "recovered ... in").
#
# Both servers are detected alike: a poller started before the server (on --client-cpu)
# tries the port every 5 ms (for Redis: until EXISTS user0 answers other than LOADING), then
# the server's own client reads user0 once (cellar-shell, redis-cli); the restart ends when
# that read is answered. Both read files the save just wrote, from the page cache.
#   scripts/bench-restart.sh [--records 1000000] [--field-length 100] [--runs 5]
#                            [--compressions snappy] [--server-cpu 1] [--client-cpu 0]
#                            [--cellar-cpus "1 0,1"]
# One line per figure, then the medians with their ranges (min-max), also written to
# build/bench-results/restart.txt; the figures worth keeping go to docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
records=1000000 fl=100 runs=5 compressions="snappy" server_cpu=1 client_cpu=0 cellar_cpus=""
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --field-length) fl=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --compressions) compressions=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --cellar-cpus) cellar_cpus=$2; shift 2 ;;
    *) echo "bench-restart: unknown option $1" >&2; exit 2 ;;
  esac
done
cellar_cpus=${cellar_cpus:-"$server_cpu 0,1"}
LOADGEN=${LOADGEN:-$root/build/examples/loadgen/cellar-loadgen}
CELLAR_SERVER=${CELLAR_SERVER:-$root/build/src/tools/cellar-server}
CELLAR_SHELL=${CELLAR_SHELL:-$root/build/src/tools/cellar-shell}
out=$root/build/bench-results
mkdir -p "$out"
raw=$out/restart.txt
: >"$raw"
say() { local line; printf -v line "$@"; echo "$line" | tee -a "$raw"; }  # FORMAT ARGS...
work=$(mktemp -d)
pid="" poller=""
stop() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""; fi; }
# Sets `stopped` to the seconds from SIGTERM to the server's exit.
timed_stop() { local a; a=$(now); stop; stopped=$(echo "$(now) - $a" | bc -l); }
disk_rate() {  # MB/s of a 256 MB sequential write, synced
  local a b; a=$(now); dd if=/dev/zero of="$work/dd" bs=1M count=256 conv=fdatasync status=none; b=$(now)
  rm -f "$work/dd"; echo "256 * 1.048576 / ($b - $a)" | bc -l
}
trap 'stop; [ -n "$poller" ] && kill "$poller" 2>/dev/null; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
load_average() { cut -d' ' -f1 /proc/loadavg; }
# Starts the poller of `port` (KIND cellar: until it accepts a connection; redis: until
# EXISTS user0 is answered other than LOADING) and returns once it is running, so that its
# own start is not timed; `wait "$poller"` returns when the server is ready.
start_poller() {  # KIND
  mkfifo "$work/poller-ready"
  taskset -c "$client_cpu" python3 - "$1" "$port" "$work/poller-ready" <<'PY' &
import socket, sys, time
kind, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
open(ready, "w").close()
deadline = time.monotonic() + 600
while time.monotonic() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            if kind == "cellar":
                sys.exit(0)
            s.sendall(b"EXISTS user0\r\n")
            reply = s.recv(256)
            if reply.startswith(b":"):
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.005)
sys.exit(1)
PY
  poller=$!
  cat "$work/poller-ready" >/dev/null; rm -f "$work/poller-ready"
}
# Starts cellar on DATA_DIR with COMPRESSION on the cores CPUS; returns once a read of user0
# is answered (with a fourth argument, "fresh": once any call is, the table not existing yet).
start_cellar() {  # DATA_DIR COMPRESSION CPUS [fresh]
  local probe="get 'usertable', 'user0'"
  [ "${4:-}" = fresh ] && probe="list"
  port=$(free_port)
  start_poller cellar
  local threads; threads=$(echo "$3" | tr ',' '\n' | wc -l)
  t0=$(now)
  taskset -c "$3" "$CELLAR_SERVER" --listen "127.0.0.1:$port" --data "$1" --compression "$2" \
    --snapshot-interval-ms 0 --log-level info --event-loops "$threads" --worker-threads "$threads" \
    >"$work/cellar.log" 2>&1 &
  pid=$!
  wait "$poller" || { cat "$work/cellar.log" >&2; exit 1; }
  poller=""
  for _ in $(seq 100); do
    echo "$probe" | taskset -c "$client_cpu" "$CELLAR_SHELL" --connect "127.0.0.1:$port" --quiet >/dev/null 2>&1 \
      && { t1=$(now); return 0; }
    kill -0 "$pid" 2>/dev/null || break
  done
  cat "$work/cellar.log" >&2; exit 1
}
# Starts Redis on DIR; returns once EXISTS user0 is answered (not LOADING).
start_redis() {  # DIR
  port=$(free_port)
  start_poller redis
  t0=$(now)
  taskset -c "$server_cpu" redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 --dir "$1" \
    --dbfilename dump.rdb --daemonize no >"$work/redis.log" 2>&1 &
  pid=$!
  wait "$poller" || { cat "$work/redis.log" >&2; exit 1; }
  poller=""
  for _ in $(seq 100); do
    [[ "$(taskset -c "$client_cpu" redis-cli -p "$port" exists user0 2>/dev/null)" == [01] ]] && { t1=$(now); return 0; }
  done
  cat "$work/redis.log" >&2; exit 1
}
load() {  # TARGET
  local target="--target cellar-rpc --protocol frames"
  [ "$1" = redis ] && target="--target redis"
  # shellcheck disable=SC2086
  taskset -c "$client_cpu" "$LOADGEN" $target --port "$port" --workload a --phase load --records "$records" \
    --connections 50 --threads 1 --partitioning range:8 --quiet --field-length "$fl" >/dev/null
}
mb() { echo "$(du -sb "$1" | cut -f1) / 1000000" | bc -l; }
say 'records %s x 10 fields of %s bytes; redis-server on CPU %s, clients on CPU %s' "$records" "$fl" "$server_cpu" "$client_cpu"
for run in $(seq "$runs"); do
  say 'run %d disk sequential write %6.0f MB/s  load average %s' "$run" "$(disk_rate)" "$(load_average)"
  d="$work/redis"; rm -rf "$d"; mkdir -p "$d"
  start_redis "$d"; empty=$(echo "$t1 - $t0" | bc -l); load redis
  a=$(now); redis-cli -p "$port" save >/dev/null; save=$(echo "$(now) - $a" | bc -l); stop
  la=$(load_average); start_redis "$d"; stop
  loaded=$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' "$work/redis.log" | tail -1)
  say 'run %d redis  cpus %-4s empty start %6.3f s  disk %8.1f MB  save %6.2f s  restart %6.3f s  load %s s  (load average %s)' \
    "$run" "$server_cpu" "$empty" "$(mb "$d")" "$save" "$(echo "$t1 - $t0" | bc -l)" "${loaded:-?}" "$la"
  rm -rf "$d"
  order=$cellar_cpus
  [ $((run % 2)) = 0 ] && order=$(echo "$cellar_cpus" | tr ' ' '\n' | tac | tr '\n' ' ')
  for c in $compressions; do
    d="$work/cellar-$c"; rm -rf "$d"
    start_cellar "$d" "$c" "$server_cpu" fresh; empty=$(echo "$t1 - $t0" | bc -l); load cellar; timed_stop
    save=$stopped
    for cpus in $order; do
      size=$(mb "$d"); la=$(load_average)
      start_cellar "$d" "$c" "$cpus"; stop
      recovery=$(sed -n 's/.*recovered .* in \([0-9.]*\) s.*/\1/p' "$work/cellar.log" | tail -1)
      say 'run %d cellar-%s cpus %-4s empty start %6.3f s  disk %8.1f MB  save %6.2f s  restart %6.3f s  load %s s  (load average %s)' \
        "$run" "$c" "$cpus" "$empty" "$size" "$save" "$(echo "$t1 - $t0" | bc -l)" "${recovery:-?}" "$la"
    done
    rm -rf "$d"
  done
done
# Medians (the middle run; the mean of the two middle runs when even) and ranges (min-max);
# each cellar restart also as a ratio to the Redis restart of its own run.
python3 - "$raw" <<'PY' | tee -a "$raw"
import re, statistics, sys
rows, redis_of_run = {}, {}
pat = (r"run (\d+) (\S+)\s+cpus (\S+)\s+empty start\s+([\d.]+) s\s+disk\s+([\d.]+) MB\s+save\s+([\d.]+) s\s+restart\s+([\d.]+) s\s+"
       r"load ([\d.?]+) s")
for line in open(sys.argv[1]):
    m = re.match(pat, line)
    if not m:
        continue
    run, server = int(m[1]), m[2]
    r = rows.setdefault(f"{server} cpus {m[3]}", {"empty": [], "disk": [], "save": [], "restart": [], "load": [], "ratio": []})
    for name, v in (("empty", m[4]), ("disk", m[5]), ("save", m[6]), ("restart", m[7]), ("load", m[8])):
        if v != "?":
            r[name].append(float(v))
    if server == "redis":
        redis_of_run[run] = float(m[7])
    elif run in redis_of_run:
        r["ratio"].append(float(m[7]) / redis_of_run[run])
def fig(xs, f):
    if not xs:
        return "-"
    return (f % statistics.median(xs)) + " (" + (f % min(xs)) + "-" + (f % max(xs)) + ")"
print("medians (min-max):")
for k, r in rows.items():
    print(f"{k:22s} empty start {fig(r['empty'], '%.3f')} s  disk {fig(r['disk'], '%.1f')} MB  save {fig(r['save'], '%.2f')} s  restart "
          f"{fig(r['restart'], '%.3f')} s  load {fig(r['load'], '%.3f')} s  restart/redis's {fig(r['ratio'], '%.2f')}")
PY
