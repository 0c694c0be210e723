#!/usr/bin/env bash
# Interleaved A/B runs of cellar-server flag sets (and Redis), pinned as the per-core section
# of scripts/bench-ycsb.sh: each server on SERVER_CPU with one serving thread
# (--event-loops 1 --worker-threads 1), the load generator alone on CLIENT_CPU with one
# thread, 50 connections, 100k records, in memory. Each repetition starts every
# configuration in turn, loads it and runs every spec (scripts/ycsb-one.sh does each
# configuration); one line per run with the throughput, the server's CPU per operation
# (/proc/PID/stat) and its system calls per operation (perf stat -e raw_syscalls:sys_enter
# on the server's process).
#
#   scripts/bench-ab.sh
#   CONFIGS="off=--io-uring false;on=--io-uring true;redis" SPECS="c 1,a 1,c 16" REPS=5 SECS=6 scripts/bench-ab.sh
#   CONFIGS="old@/tmp/old/build/src/tools/cellar-server=;new=" scripts/bench-ab.sh   (two builds)
#   SPECS="c 1 --batch 10,e 1" scripts/bench-ab.sh   (a spec is workload, depth, load-generator flags)
#
# CONFIGS: `name=cellar-server flags` entries separated by ';', and `redis` for
# redis-server; `name@BINARY=flags` runs that cellar-server binary (an A/B of two builds);
# SERVER and LOADGEN override the binaries (default ./build/...).
# Prints: name workload dDEPTH ops/s=... p99=...us server_us/op=... loadgen_us/op=... server_rss_mb=... sys/op=...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-5}
SECS=${SECS:-6}
SPECS=${SPECS:-"c 1,a 1,c 16"}
CONFIGS=${CONFIGS:-"off=--io-uring false;on=--io-uring true;redis"}
command -v perf >/dev/null || { echo "bench-ab: needs perf (apt-get install linux-perf)"; exit 1; }

IFS=, read -ra specs <<<"$SPECS"
runs=()
for spec in "${specs[@]}"; do
  read -r wl depth flags <<<"$spec"
  runs+=("$wl $depth $SECS ${flags:-}")
done
IFS=';' read -ra configs <<<"$CONFIGS"
for _ in $(seq "$REPS"); do
  for c in "${configs[@]}"; do
    name=${c%%=*}
    target=cellar args=${c#*=} server=${SERVER:-$root/build/src/tools/cellar-server}
    [ "$c" = redis ] && target=redis args=""
    if [[ $name == *@* ]]; then
      server=${name#*@}
      name=${name%%@*}
    fi
    SERVER=$server SERVER_CPU=${SERVER_CPU:-1} CLIENT_CPU=${CLIENT_CPU:-0} THREADS=1 SYSCALLS=1 IN_MEMORY=1 \
      SERVER_ARGS="--event-loops 1 --worker-threads 1 $args" "$root/scripts/ycsb-one.sh" "$target" "${runs[@]}" |
      sed "s/^/$name /"
  done
done
