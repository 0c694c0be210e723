#!/usr/bin/env bash
# Restart and disk against Redis, same records: cellar-server and redis-server loaded with
# RECORDS YCSB records (10 fields of FL bytes) by the load generator; cellar in snapshot
# mode stopped with SIGTERM (its final snapshot), Redis saved to RDB with SAVE.
#
# Per run: the disk's sequential write rate (dd, 256 MB, fdatasync: the baseline of the
# snapshot rate), the share of the CPUs idle over 2 s while the script runs nothing (what
# other work on the machine takes) and the load average. Each server is loaded on
# --server-cpu, saved, and the same files restarted once per --cpus setting (cellar reads
# its partitions with one thread per core it may run on; Redis loads its RDB on one thread
# whatever it may use). Odd runs go Redis first and the --cpus settings in the order given,
# even runs the reverse. Reported: the start of an empty server (the fixed cost of a
# start), the bytes on disk, the save (Redis's SAVE; cellar's SIGTERM to exit, its final
# snapshot), the restart (exec to the first answered read: of user0, which the hashed YCSB
# keys leave absent, answered by either only once all is loaded) and the load time each
# server logs (Redis's "DB loaded from disk", cellar's "recovered ... in"). With
# --save-cpus "1 0,1", cellar is also loaded again (on --server-cpu) and saved on each
# further setting: the affinity of all its threads is widened to those cores once the load
# ends (its snapshot has one writer per core of the machine, each on a core it may use).
#
# Both servers are detected alike: a poller started before the server (on --client-cpu)
# tries the port every 5 ms (for Redis: until EXISTS user0 answers other than LOADING), then
# the server's own client reads user0 once (cellar-shell, redis-cli); the restart ends when
# that read is answered. Both read files the save just wrote, from the page cache.
#   scripts/bench-restart.sh [--records 1000000] [--field-length 100] [--runs 5]
#                            [--compressions snappy] [--server-cpu 1] [--client-cpu 0]
#                            [--cpus "1 0,1"] [--save-cpus "1 0,1"]
# One line per figure, then the medians with their ranges (min-max), also written to
# build/bench-results/restart.txt; the figures worth keeping go to docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
records=1000000 fl=100 runs=5 compressions="snappy" server_cpu=1 client_cpu=0 cpus_list="" save_cpus_list=""
while [ $# -gt 0 ]; do
  case "$1" in
    --records) records=$2; shift 2 ;;
    --field-length) fl=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --compressions) compressions=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --cpus) cpus_list=$2; shift 2 ;;
    --save-cpus) save_cpus_list=$2; shift 2 ;;
    *) echo "bench-restart: unknown option $1" >&2; exit 2 ;;
  esac
done
cpus_list=${cpus_list:-"$server_cpu 0,1"}
save_cpus_list=${save_cpus_list:-$server_cpu}
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
idle_share() {  # percent of all CPUs idle over 2 s, while this script runs nothing: others' work shows here
  local a b
  a=($(head -1 /proc/stat)); sleep 2; b=($(head -1 /proc/stat))
  local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) )) total=0 i
  for i in $(seq 1 10); do total=$(( total + b[i] - a[i] )); done
  echo $(( 100 * idle / total ))
}
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
# Starts Redis on DIR on the cores CPUS; returns once EXISTS user0 is answered (not LOADING).
start_redis() {  # DIR CPUS
  port=$(free_port)
  start_poller redis
  t0=$(now)
  taskset -c "$2" redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 --dir "$1" \
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
say 'records %s x 10 fields of %s bytes; clients on CPU %s; servers loaded on CPU %s, restarted on CPUs %s' \
  "$records" "$fl" "$client_cpu" "$server_cpu" "$cpus_list"
# Redis: loaded, saved with SAVE, restarted on each CPU setting.
redis_run() {
  local d="$work/redis" cpus empty save la loaded
  rm -rf "$d"; mkdir -p "$d"
  start_redis "$d" "$server_cpu"; empty=$(echo "$t1 - $t0" | bc -l); load redis
  a=$(now); redis-cli -p "$port" save >/dev/null; save=$(echo "$(now) - $a" | bc -l); stop
  for cpus in $order; do
    la=$(load_average); start_redis "$d" "$cpus"; stop
    loaded=$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' "$work/redis.log" | tail -1)
    say 'run %d redis cpus %-4s empty start %6.3f s  disk %8.1f MB  save %6.2f s  restart %6.3f s  load %s s  (load average %s)' \
      "$run" "$cpus" "$empty" "$(mb "$d")" "$save" "$(echo "$t1 - $t0" | bc -l)" "${loaded:-?}" "$la"
  done
  rm -rf "$d"
}
# cellar: loaded and stopped (its final snapshot) once per compression, restarted on each CPU setting.
cellar_run() {
  local c d cpus empty save size la recovery scpus
  for c in $compressions; do
    d="$work/cellar-$c"
    # Saves on the further --save-cpus settings: loaded alike, widened, stopped.
    for scpus in ${save_cpus_list#* }; do
      [ "$scpus" = "${save_cpus_list%% *}" ] && continue
      rm -rf "$d"
      start_cellar "$d" "$c" "$server_cpu" fresh; load cellar
      taskset -a -p -c "$scpus" "$pid" >/dev/null; timed_stop
      say 'run %d cellar-%s save on cpus %-4s disk %8.1f MB  save %6.2f s' "$run" "$c" "$scpus" "$(mb "$d")" "$stopped"
    done
    rm -rf "$d"
    scpus=${save_cpus_list%% *}
    start_cellar "$d" "$c" "$server_cpu" fresh
    empty=$(echo "$t1 - $t0" | bc -l); load cellar
    taskset -a -p -c "$scpus" "$pid" >/dev/null; timed_stop
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
}
for run in $(seq "$runs"); do
  say 'run %d disk sequential write %6.0f MB/s  idle CPU before the run %s%%  load average %s' "$run" "$(disk_rate)" \
    "$(idle_share)" "$(load_average)"
  # Odd runs: Redis first and the CPU settings in the order given; even runs: the reverse.
  order=$cpus_list
  if [ $((run % 2)) = 1 ]; then
    redis_run; cellar_run
  else
    order=$(echo "$cpus_list" | tr ' ' '\n' | tac | tr '\n' ' ')
    cellar_run; redis_run
  fi
done
# Medians (the middle run; the mean of the two middle runs when even) and ranges (min-max);
# each restart also as a ratio to the same run's Redis restart on one core (--server-cpu)
# and on the same cores.
python3 - "$raw" "$server_cpu" <<'PY' | tee -a "$raw"
import re, statistics, sys
one_core = sys.argv[2]
rows, redis = {}, {}
pat = (r"run (\d+) (\S+)\s+cpus (\S+)\s+empty start\s+([\d.]+) s\s+disk\s+([\d.]+) MB\s+save\s+([\d.]+) s\s+"
       r"restart\s+([\d.]+) s\s+load ([\d.?]+) s")
found = [m for m in map(lambda l: re.match(pat, l), open(sys.argv[1])) if m]
for m in found:
    if m[2] == "redis":
        redis[(int(m[1]), m[3])] = float(m[7])
for m in found:
    run, server, cpus = int(m[1]), m[2], m[3]
    r = rows.setdefault(f"{server} cpus {cpus}", {k: [] for k in ("empty", "disk", "save", "restart", "load", "one", "same")})
    for name, v in (("empty", m[4]), ("disk", m[5]), ("save", m[6]), ("restart", m[7]), ("load", m[8])):
        if v != "?":
            r[name].append(float(v))
    if (run, one_core) in redis:
        r["one"].append(float(m[7]) / redis[(run, one_core)])
    if (run, cpus) in redis:
        r["same"].append(float(m[7]) / redis[(run, cpus)])
def fig(xs, f):
    if not xs:
        return "-"
    return (f % statistics.median(xs)) + " (" + (f % min(xs)) + "-" + (f % max(xs)) + ")"
# Each save on further cores: its rate, and that rate over the same run's dd rate.
text = open(sys.argv[1]).read()
disk = {int(m[1]): float(m[2]) for m in re.finditer(r"run (\d+) disk sequential write\s+([\d.]+) MB/s", text)}
saves = {}
for m in re.finditer(r"run (\d+) (\S+) save on cpus (\S+)\s+disk\s+([\d.]+) MB\s+save\s+([\d.]+) s", text):
    rate = float(m[4]) / float(m[5])
    saves.setdefault(f"{m[2]} save on cpus {m[3]}", []).append((float(m[4]), float(m[5]), rate, rate / disk[int(m[1])]))
print("medians (min-max):")
for k, v in saves.items():
    print(f"{k:26s} disk {fig([x[0] for x in v], '%.1f')} MB  save {fig([x[1] for x in v], '%.2f')} s  "
          f"rate {fig([x[2] for x in v], '%.0f')} MB/s  / the run's disk rate {fig([x[3] for x in v], '%.2f')}")
for k, r in rows.items():
    print(f"{k:20s} empty start {fig(r['empty'], '%.3f')} s  disk {fig(r['disk'], '%.1f')} MB  save "
          f"{fig(r['save'], '%.2f')} s  restart {fig(r['restart'], '%.3f')} s  load {fig(r['load'], '%.3f')} s  "
          f"restart / redis on CPU {one_core} {fig(r['one'], '%.2f')}  / redis same cpus {fig(r['same'], '%.2f')}")
PY
