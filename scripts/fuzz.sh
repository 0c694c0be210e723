#!/usr/bin/env bash
# Builds cellar's libFuzzer targets (tests/fuzz) with clang and
# -fsanitize=fuzzer,address,undefined in ./build-fuzz, runs each for the given number of
# seconds (default 60) and exits non-zero if any crashed.
#
#   scripts/fuzz.sh [seconds-per-target] [target ...]     e.g. scripts/fuzz.sh 3600 ddl rpc
#
# Each target starts from its corpus in tests/fuzz/<target>/ and keeps what it learns in
# build-fuzz/corpus/<target>/ (reused by the next run). A crash input is copied to
# tests/fuzz/<target>/regress-<hash>, where `meson test` (suite fuzz) replays it from then
# on: commit it with the fix. FUZZ_JOBS=n runs n targets at a time (default 1);
# FUZZ_ARGS adds libFuzzer flags; FUZZ_MERGE=1 then adds to tests/fuzz/<target>/ the inputs
# of build-fuzz/corpus/<target>/ that reach code the committed corpus does not (libFuzzer's
# -merge=1; files named by their SHA-1), so `meson test` replays them too. Not part of CI:
# CI replays the corpora.
set -uo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
all=(hbase_shell ddl snapshot redo_log frames rpc filter)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

# clang and libFuzzer's runtime (Debian: clang, libclang-rt-14-dev); the tests do not need them.
need=()
command -v clang++ >/dev/null || need+=(clang)
[ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)" ] || need+=(libclang-rt-14-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "fuzz: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get install -y -qq "${need[@]}" || exit 1
fi
scripts/setup.sh

if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ meson setup build-fuzz --buildtype=debugoptimized -Db_ndebug=false \
    -Db_sanitize=address,undefined -Db_lundef=false -Dfuzzing=true -Dtests=false -Dexamples=false || exit 1
fi
ninja -C build-fuzz $(printf 'tests/fuzz/fuzz-%s ' "${targets[@]}") || exit 1

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
run_one() {
  local t="$1" corpus="build-fuzz/corpus/$1" crashes="build-fuzz/crashes/$1"
  mkdir -p "$corpus" "$crashes"
  local start=$SECONDS
  build-fuzz/tests/fuzz/fuzz-"$t" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$crashes/" ${FUZZ_ARGS:-} "$corpus" "tests/fuzz/$t" >"build-fuzz/fuzz-$t.log" 2>&1
  local rc=$?
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/fuzz-$t.log" | awk '{print $2}')
  echo "fuzz: $t: exit $rc after $((SECONDS - start)) s, ${runs:-?} inputs (log: build-fuzz/fuzz-$t.log)"
  local found=0
  for a in "$crashes"/crash-* "$crashes"/leak-* "$crashes"/timeout-* "$crashes"/oom-*; do
    [ -e "$a" ] || continue
    found=1
    local dest="tests/fuzz/$t/regress-$(sha1sum "$a" | cut -c1-16)"
    cp "$a" "$dest" && rm -f "$a"
    echo "fuzz: $t: crash input saved as $dest"
  done
  if [ $rc -eq 0 ] && [ $found -eq 0 ] && [ "${FUZZ_MERGE:-0}" = 1 ]; then
    local before after
    before=$(ls "tests/fuzz/$t" | wc -l)
    build-fuzz/tests/fuzz/fuzz-"$t" -merge=1 "tests/fuzz/$t" "$corpus" >"build-fuzz/merge-$t.log" 2>&1 || rc=1
    after=$(ls "tests/fuzz/$t" | wc -l)
    echo "fuzz: $t: merged $((after - before)) inputs into tests/fuzz/$t"
  fi
  [ $rc -eq 0 ] && [ $found -eq 0 ]
}

jobs_max="${FUZZ_JOBS:-1}"
# Each run keeps its targets' outcomes apart: two runs at once must not read each other's.
status=$(mktemp -d build-fuzz/status.XXXXXX)
trap 'rm -rf "$status"' EXIT
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  (run_one "$t" && echo ok >"$status/$t" || echo failed >"$status/$t") &
done
wait
for t in "${targets[@]}"; do
  [ "$(cat "$status/$t" 2>/dev/null)" = ok ] || failed+=("$t")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: every target ran ${seconds} s without a crash"
