#!/usr/bin/env bash
# What TLS costs: the same cellar-server with and without --tls-cert/--tls-key, the load
# generator with and without --tls-ca, YCSB C and A at depth 1 and 16 on both protocols
# (frames and Cap'n Proto RPC). Plain and TLS alternate within each repetition, so both see
# the same noise; prints the medians with their ranges (min-max) as a Markdown table.
#
#   scripts/bench-tls.sh [reps] [seconds-per-run]        default 3 reps of 5 s
#
# Each run is scripts/ycsb-one.sh (100k records, 50 connections, 2 load generator threads,
# an in-memory server: IN_MEMORY=1). Certificates: a throwaway CA and a server certificate
# for 127.0.0.1 made with openssl, as the tests make them. Needs a build in ./build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-3}
secs=${2:-5}
for t in openssl python3; do command -v "$t" >/dev/null || { echo "bench-tls: needs $t"; exit 1; }; done
work=$(mktemp -d /tmp/bench-tls.XXXXXX)
trap 'rm -rf "$work"' EXIT
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
(
  cd "$work"
  echo "subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:127.0.0.1" >ext.cnf
  openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 2 -subj /CN=bench-ca
  openssl req "${ec[@]}" -keyout server.key -out server.csr -subj /CN=localhost
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext.cnf
) >/dev/null 2>&1
specs=("c 1 $secs" "a 1 $secs" "c 16 $secs" "a 16 $secs")
out="$work/runs.txt"
for rep in $(seq "$reps"); do
  for proto in frames capnp; do
    for mode in plain tls; do
      args=() lg=()
      if [ "$mode" = tls ]; then
        args=(--tls-cert "$work/server.pem" --tls-key "$work/server.key")
        lg=(--tls-ca "$work/ca.pem")
      fi
      IN_MEMORY=1 PROTOCOL=$proto SERVER_ARGS="${args[*]:-}" LOADGEN_ARGS="${lg[*]:-}" \
        "$root/scripts/ycsb-one.sh" cellar "${specs[@]}" | sed "s/^/$proto $mode /" | tee -a "$out" >&2
    done
  done
  echo "bench-tls: repetition $rep of $reps done" >&2
done
# Lines: proto mode wl dDEPTH ops/s=N p99=Nus server_us/op=N ...
python3 - "$out" <<'PY'
import sys, statistics, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    kv = dict(x.split('=', 1) for x in f[4:])
    runs[(f[0], f[2], f[3], f[1])].append((float(kv['ops/s']), float(kv['server_us/op'])))
def med(xs): return statistics.median(xs), min(xs), max(xs)
print('| protocol | workload | depth | plain ops/s | TLS ops/s | TLS / plain | server µs/op plain | server µs/op TLS |')
print('|---|---|--:|--:|--:|--:|--:|--:|')
for proto in ('frames', 'capnp'):
    for wl, d in (('c', 'd1'), ('a', 'd1'), ('c', 'd16'), ('a', 'd16')):
        p = runs.get((proto, wl, d, 'plain')); t = runs.get((proto, wl, d, 'tls'))
        if not p or not t: continue
        po, to = med([x[0] for x in p]), med([x[0] for x in t])
        pc, tc = med([x[1] for x in p]), med([x[1] for x in t])
        print(f'| {proto} | {wl.upper()} | {d[1:]} | {po[0]/1e3:.1f} k ({po[1]/1e3:.1f}-{po[2]/1e3:.1f}) '
              f'| {to[0]/1e3:.1f} k ({to[1]/1e3:.1f}-{to[2]/1e3:.1f}) | {to[0]/po[0]:.2f}x '
              f'| {pc[0]:.1f} ({pc[1]:.1f}-{pc[2]:.1f}) | {tc[0]:.1f} ({tc[1]:.1f}-{tc[2]:.1f}) |')
PY
