#!/usr/bin/env bash
# ThreadSanitizer build of cellar's test programs in ./build-tsan, and a run of them.
#
#   scripts/tsan.sh [meson test args ...]      default: the suites in TSAN_TESTS
#
# TSan sees a synchronisation only in code built with -fsanitize=thread. Debian's CAF is
# not, and CAF hands every message from one thread to another through its own lock-free
# mailboxes: against Debian's CAF every message would look like a data race. The same holds
# for kj (Cap'n Proto's base library): its cross-thread calls (kj::Executor, the server's
# loop hand-offs) and its mutexes are atomics and futexes TSan cannot see inside Debian's
# build. So this script first builds, with -fsanitize=thread, CAF 0.17.6 into
# build-tsan/caf-tsan and Cap'n Proto 0.9.2 (kj, kj-async, kj-http, kj-tls, capnp,
# capnp-rpc; Debian's patches applied) into build-tsan/capnp-tsan, both the versions
# Debian ships, their sources from Debian's archive (`apt-get source`); then cellar
# against them (CPLUS_INCLUDE_PATH, LIBRARY_PATH and LD_LIBRARY_PATH for CAF, the
# pkg-config path for Cap'n Proto), and Abseil likewise (its Mutex). WiredTiger and the
# ZooKeeper C client stay Debian's:
# TSan does not see inside them, and tests/tsan.supp names what is suppressed and why.
# Not part of CI: the first build takes about 40 minutes on 2 cores. With no arguments it
# builds and runs the suites in TSAN_TESTS (below: the embedded store, the cluster, the
# servers, the shell and the load generator); arguments go to `meson test` (test names).
# Every process's reports, the servers' that tests start too, are written to
# build-tsan/tsan-reports/; the script fails if there is any. TSAN_TIMEOUT_MULTIPLIER
# (default 10) stretches the timeouts.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/setup.sh
command -v cmake >/dev/null || apt-get install -y -qq cmake

out=build-tsan
# The upstream tarball of Debian source package $1 at version $2 (Debian revision $3) in
# $4, through a deb-src list of our own, so the machine's apt configuration stays as it is.
fetch_source() {
  local pkg=$1 version=$2 revision=$3 src=$4
  mkdir -p "$src"
  local tarball=$src/${pkg}_$version.orig.tar.gz
  if [ ! -f "$tarball" ]; then
    local lists=$src/apt-lists
    mkdir -p "$lists/partial"
    . /etc/os-release
    echo "deb-src http://deb.debian.org/debian $VERSION_CODENAME main" >"$src/sources.list"
    local aptopts=(-o "Dir::Etc::SourceList=$src/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$lists")
    apt-get "${aptopts[@]}" update -qq
    (cd "$src" && apt-get "${aptopts[@]}" source --download-only -qq "$pkg=$version-$revision" || true)
    [ -f "$tarball" ] || { echo "tsan: could not fetch $tarball"; exit 1; }
  fi
}
tsan_cmake=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="-fsanitize=thread"
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread")

caf_version=0.17.6
caf_prefix=$root/$out/caf-tsan
if [ ! -f "$caf_prefix/lib/libcaf_io.so" ]; then
  src=$root/$out/caf-src
  fetch_source actor-framework $caf_version 2.1 "$src"
  # Only the upstream tarball is needed; Debian's own patches touch packaging only.
  [ -d "$src/actor-framework-$caf_version" ] || tar -C "$src" -xzf "$src/actor-framework_$caf_version.orig.tar.gz"
  # GCC 12's headers no longer bring in <limits> with <algorithm>; Debian's package patches
  # the same line.
  hdr=$src/actor-framework-$caf_version/libcaf_io/caf/io/network/receive_buffer.hpp
  grep -q '#include <limits>' "$hdr" || sed -i 's|#include <cstddef>|#include <cstddef>\n#include <limits>|' "$hdr"
  cmake -S "$src/actor-framework-$caf_version" -B "$out/caf-build" "${tsan_cmake[@]}" -DCMAKE_INSTALL_PREFIX="$caf_prefix" \
    -DCAF_NO_EXAMPLES=yes -DCAF_NO_UNIT_TESTS=yes -DCAF_NO_OPENSSL=yes -DCAF_NO_OPENCL=yes \
    -DCAF_NO_TOOLS=yes -DCAF_NO_PYTHON=yes -DCAF_NO_SUMMARY=yes -DCAF_NO_MEM_MANAGEMENT=yes >/dev/null
  cmake --build "$out/caf-build" -j "$(nproc)"
  cmake --install "$out/caf-build" >/dev/null
fi

capnp_version=0.9.2
capnp_prefix=$root/$out/capnp-tsan
if [ ! -f "$capnp_prefix/lib/libkj-async.so" ]; then
  src=$root/$out/capnp-src
  fetch_source capnproto $capnp_version 2 "$src"
  tree=$src/capnproto-c++-$capnp_version
  if [ ! -d "$tree" ]; then
    tar -C "$src" -xzf "$src/capnproto_$capnp_version.orig.tar.gz"
    # Debian's patches (the OpenSSL 3 fix of kj-tls among them), as its package builds.
    tar -C "$src" -xJf "$src/capnproto_$capnp_version-2.debian.tar.xz"
    while read -r p; do patch -d "$tree" -p1 -s <"$src/debian/patches/$p"; done <"$src/debian/patches/series"
  fi
  cmake -S "$tree" -B "$out/capnp-build" "${tsan_cmake[@]}" -DCMAKE_INSTALL_PREFIX="$capnp_prefix" \
    -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF -DWITH_OPENSSL=ON >/dev/null
  cmake --build "$out/capnp-build" -j "$(nproc)"
  cmake --install "$out/capnp-build" >/dev/null
fi

# Abseil: its Mutex waits on futexes of its own, which TSan does not see inside Debian's
# build, so every hand-over under an absl::Mutex would look like a race. The same version
# as Debian's, its patches applied (they fix its options to Debian's, so the headers stay
# the ones cellar's objects were compiled with: a relink is enough).
absl_version=20220623.1
absl_revision=1+deb12u2
absl_prefix=$root/$out/absl-tsan
if [ ! -f "$absl_prefix/lib/libabsl_synchronization.so" ]; then
  src=$root/$out/absl-src
  fetch_source abseil $absl_version $absl_revision "$src"
  tree=$src/abseil-$absl_version
  if [ ! -d "$tree" ]; then
    tar -C "$src" -xzf "$src/abseil_$absl_version.orig.tar.gz"
    tar -C "$src" -xJf "$src/abseil_$absl_version-$absl_revision.debian.tar.xz"
    while read -r p; do
      case "$p" in ''|'#'*) continue ;; esac
      patch -d "$tree" -p1 -s <"$src/debian/patches/$p"
    done <"$src/debian/patches/series"
  fi
  cmake -S "$tree" -B "$out/absl-build" "${tsan_cmake[@]}" -DCMAKE_INSTALL_PREFIX="$absl_prefix" \
    -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF -DABSL_PROPAGATE_CXX_STD=ON \
    -DCMAKE_CXX_STANDARD=17 >/dev/null
  cmake --build "$out/absl-build" -j "$(nproc)"
  cmake --install "$out/absl-build" >/dev/null
  # The programs linked against Debian's abseil are linked again.
  [ -f "$out/build.ninja" ] && ninja -C "$out" -t clean -r cpp_LINKER >/dev/null
fi

export CPLUS_INCLUDE_PATH=$caf_prefix/include
export LIBRARY_PATH=$caf_prefix/lib:$absl_prefix/lib
export LD_LIBRARY_PATH=$caf_prefix/lib:$capnp_prefix/lib:$absl_prefix/lib
if [ ! -f "$out/build.ninja" ]; then
  meson setup "$out" --buildtype=debugoptimized -Db_ndebug=false -Db_sanitize=thread -Dexamples=true \
    -Dpkg_config_path="$capnp_prefix/lib/pkgconfig"
fi
# A build directory set up before Cap'n Proto was built here is moved onto it.
if ! grep -q "capnp-tsan" "$out/meson-info/intro-buildoptions.json"; then
  meson configure "$out" -Dpkg_config_path="$capnp_prefix/lib/pkgconfig" -Dexamples=true
  (cd "$out" && meson setup --reconfigure . ..)
fi
# The test programs of each suite, and what they start: the embedded store's, the
# cluster's in-process one (members, moves, ZooKeeper client; the test starts its
# ZooKeeper server), the RPC and frames server in process (rpc), and the suites that start
# cellar-server, cellar-shell and the load generator as processes, all built here.
# cluster_servers and replication_servers (ZooKeeper and three nodes) are not in the
# default list: they take minutes under TSan (docs/hardening.md, "ThreadSanitizer");
# TSAN_TESTS="cluster_servers replication_servers" runs them.
programs=(src/tools/cellar-server src/tools/cellar-shell examples/loadgen/cellar-loadgen)
declare -A program=([internal]=tests/internal/test_internal [persistence]=tests/persist/test_persistence
  [faults]=tests/persist/test_faults [semantics]=tests/test_semantics [partitions]=tests/test_partitions
  [table_state]=tests/test_table_state [limits_errors]=tests/test_limits_errors [timeseries]=tests/test_timeseries
  [cluster]="tests/cluster/test_cluster tests/cluster/zk_member" [rpc]=tests/rpc/test_rpc
  [security]="tests/security/test_security ${programs[*]}" [loadgen]="tests/loadgen/test_loadgen ${programs[*]}"
  [shell]="tests/shell/test_shell ${programs[*]}" [shell_hbase]="tests/shell/test_shell_hbase ${programs[*]}"
  [filter_wire]=tests/filter/test_filter_wire [filter_shell]="tests/filter/test_shell_filter ${programs[*]}"
  [cluster_servers]="tests/cluster/test_cluster_servers tests/cluster/zk_member ${programs[*]}"
  [snapshot_servers]="tests/cluster/test_snapshot_servers tests/cluster/zk_member ${programs[*]}"
  [thrift_cluster]="tests/cluster/test_thrift_cluster tests/cluster/zk_member ${programs[*]}"
  [replica]=tests/replica/test_replica [backup]=tests/backup/test_backup
  [replication_servers]="tests/cluster/test_replication_servers tests/cluster/zk_member ${programs[*]}")
tests=(${TSAN_TESTS:-internal persistence faults semantics partitions table_state limits_errors timeseries cluster
  replica rpc security loadgen shell shell_hbase filter_wire filter_shell backup})
if [ $# -eq 0 ]; then
  targets=()
  for t in "${tests[@]}"; do targets+=(${program[$t]}); done
  ninja -C "$out" $(printf '%s\n' "${targets[@]}" | sort -u)
  set -- "${tests[@]}"
else
  ninja -C "$out"
fi
# Every test program must load the TSan CAF and kj, not Debian's.
for lib in libcaf_core libkj-async libabsl_synchronization; do
  if ldd "$out/src/tools/cellar-server" | grep -Eq "^\s*$lib\S* => (/usr)?/lib/"; then
    echo "tsan: cellar-server links Debian's $lib, not the TSan build"; exit 1
  fi
done
reports=$root/$out/tsan-reports
rm -rf "$reports" && mkdir -p "$reports"
# log_path: each process (the servers tests start too) writes its reports to a file of its
# own, read below; a process with a report still exits with TSan's status (66).
export TSAN_OPTIONS="suppressions=$root/tests/tsan.supp second_deadlock_stack=1 history_size=4 log_path=$reports/tsan"
status=0
meson test -C "$out" --print-errorlogs -t "${TSAN_TIMEOUT_MULTIPLIER:-10}" "$@" || status=$?
if compgen -G "$reports/tsan*" >/dev/null; then
  echo "tsan: reports in $reports:"
  grep -h -A12 "WARNING: ThreadSanitizer" "$reports"/tsan* | head -200
  exit 1
fi
exit $status
