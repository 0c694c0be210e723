#!/usr/bin/env bash
# ThreadSanitizer build of cellar's test programs in ./build-tsan, and a run of them.
#
#   scripts/tsan.sh [meson test args ...]      default: the suites in TSAN_SUITES
#
# TSan sees a synchronisation only in code built with -fsanitize=thread. Debian's CAF is
# not, and CAF hands every message from one thread to another through its own lock-free
# mailboxes: against Debian's CAF every message would look like a data race. So this
# script first builds CAF 0.17.6 (the version Debian ships; its source from Debian's
# archive, `apt-get source`) with -fsanitize=thread into build-tsan/caf-tsan, then cellar
# against it (CPLUS_INCLUDE_PATH, LIBRARY_PATH, LD_LIBRARY_PATH). WiredTiger, Cap'n Proto
# and kj stay Debian's: TSan does not see inside them (their own accesses are not
# recorded), and tests/tsan.supp names what is suppressed and why. Not part of CI: a
# build takes about 30 minutes on 2 cores, the first time. With no arguments it builds
# and runs the tests of the embedded store (TSAN_TESTS, below); arguments go to `meson
# test` (test names). TSAN_TIMEOUT_MULTIPLIER (default 10) stretches the timeouts.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/setup.sh
command -v cmake >/dev/null || apt-get install -y -qq cmake

out=build-tsan
caf_version=0.17.6
caf_prefix=$root/$out/caf-tsan
if [ ! -f "$caf_prefix/lib/libcaf_io.so" ]; then
  src=$root/$out/caf-src
  mkdir -p "$src"
  tarball=$src/actor-framework_$caf_version.orig.tar.gz
  if [ ! -f "$tarball" ]; then
    # A deb-src list of our own, so the machine's apt configuration stays as it is.
    lists=$src/apt-lists
    mkdir -p "$lists/partial"
    . /etc/os-release
    echo "deb-src http://deb.debian.org/debian $VERSION_CODENAME main" >"$src/sources.list"
    aptopts=(-o "Dir::Etc::SourceList=$src/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$lists")
    apt-get "${aptopts[@]}" update -qq
    # Only the upstream tarball is needed; Debian's own patches touch packaging only.
    (cd "$src" && apt-get "${aptopts[@]}" source --download-only -qq "actor-framework=$caf_version-2.1" || true)
    [ -f "$tarball" ] || { echo "tsan: could not fetch $tarball"; exit 1; }
  fi
  [ -d "$src/actor-framework-$caf_version" ] || tar -C "$src" -xzf "$tarball"
  # GCC 12's headers no longer bring in <limits> with <algorithm>; Debian's package patches
  # the same line.
  hdr=$src/actor-framework-$caf_version/libcaf_io/caf/io/network/receive_buffer.hpp
  grep -q '#include <limits>' "$hdr" || sed -i 's|#include <cstddef>|#include <cstddef>\n#include <limits>|' "$hdr"
  cmake -S "$src/actor-framework-$caf_version" -B "$out/caf-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_INSTALL_PREFIX="$caf_prefix" \
    -DCAF_NO_EXAMPLES=yes -DCAF_NO_UNIT_TESTS=yes -DCAF_NO_OPENSSL=yes -DCAF_NO_OPENCL=yes \
    -DCAF_NO_TOOLS=yes -DCAF_NO_PYTHON=yes -DCAF_NO_SUMMARY=yes -DCAF_NO_MEM_MANAGEMENT=yes >/dev/null
  cmake --build "$out/caf-build" -j "$(nproc)"
  cmake --install "$out/caf-build" >/dev/null
fi

export CPLUS_INCLUDE_PATH=$caf_prefix/include
export LIBRARY_PATH=$caf_prefix/lib
export LD_LIBRARY_PATH=$caf_prefix/lib
if [ ! -f "$out/build.ninja" ]; then
  meson setup "$out" --buildtype=debugoptimized -Db_ndebug=false -Db_sanitize=thread -Dexamples=false
fi
# The embedded store's test programs, and the cluster's in-process one (members, moves,
# ZooKeeper client; its ZooKeeper server is started by the test). The servers' programs
# use kj, whose mutexes TSan cannot see.
declare -A program=([internal]=tests/internal/test_internal [persistence]=tests/persist/test_persistence
  [faults]=tests/persist/test_faults [semantics]=tests/test_semantics [partitions]=tests/test_partitions
  [table_state]=tests/test_table_state [limits_errors]=tests/test_limits_errors [timeseries]=tests/test_timeseries
  [cluster]=tests/cluster/test_cluster)
tests=(${TSAN_TESTS:-internal persistence faults semantics partitions table_state limits_errors timeseries cluster})
if [ $# -eq 0 ]; then
  targets=()
  for t in "${tests[@]}"; do targets+=("${program[$t]}"); done
  [[ " ${tests[*]} " == *" cluster "* ]] && targets+=(tests/cluster/zk_member)  # the cluster test's helper
  ninja -C "$out" "${targets[@]}"
  set -- "${tests[@]}"
else
  ninja -C "$out"
fi
# Every test program must load the TSan CAF, not Debian's.
if ldd "$out/tests/internal/test_internal" | grep -q "/usr/lib/.*libcaf_core"; then
  echo "tsan: test_internal links Debian's CAF, not $caf_prefix"; exit 1
fi
export TSAN_OPTIONS="suppressions=$root/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1 history_size=4"
meson test -C "$out" --print-errorlogs -t "${TSAN_TIMEOUT_MULTIPLIER:-10}" "$@"
