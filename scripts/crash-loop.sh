#!/usr/bin/env bash
# Kills a writing, snapshotting, DDL-running child with SIGKILL N times per durability
# mode, reopens the store after each kill and checks what the mode promises
# (tests/persist/test_crash.cc): log-sync and log lose no acknowledged write (a kill is a
# process crash); snapshot loses none covered by the last completed snapshot; no mode ever leaves half a row or half a batch, or a DDL step half
# done. By hand, not in CI (which runs 3 kills per mode):
#
#   scripts/crash-loop.sh 1000                 every mode
#   scripts/crash-loop.sh 1000 log-sync log    some modes
#
# Prints one summary line per mode (kills, how many landed in a snapshot or a DDL step,
# acknowledged writes lost and how many of those the mode does not allow) and exits
# non-zero if any promise broke. Output: $BUILD/crash-loop-<mode>.log, where BUILD is the
# build directory (./build by default; a long run can use its own, e.g. BUILD=build-crash,
# so rebuilding ./build meanwhile does not change the binaries under it).
set -uo pipefail
cd "$(dirname "$0")/.."
n="${1:-100}"
shift || true
modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(log-sync log snapshot)
build="${BUILD:-build}"
scripts/setup.sh
[ -f "$build/build.ninja" ] || meson setup "$build" --buildtype=release -Db_ndebug=if-release >/dev/null || exit 1
ninja -C "$build" tests/persist/test_crash tests/persist/crash_writer >/dev/null || exit 1
declare -A test_name=([log-sync]="crash: log-sync*" [log]="crash: log loses*" [snapshot]="crash: snapshot*")
rc=0
for m in "${modes[@]}"; do
  [ -n "${test_name[$m]:-}" ] || { echo "crash-loop: unknown mode $m"; exit 2; }
  start=$SECONDS
  CELLAR_CRASH_ITERATIONS="$n" "$build/tests/persist/test_crash" "${test_name[$m]}" >"$build/crash-loop-$m.log" 2>&1
  r=$?
  summary=$(grep '^crash-loop:' "$build/crash-loop-$m.log" | tail -1)
  echo "${summary:-crash-loop: mode $m: no summary (see $build/crash-loop-$m.log)} [exit $r, wall $((SECONDS - start)) s]"
  [ $r -eq 0 ] || rc=1
done
exit $rc
