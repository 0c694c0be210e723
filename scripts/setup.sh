#!/usr/bin/env bash
# Installs every build and test dependency of cellar from Debian's packages.
# Runs as root on a fresh Debian 12 machine; does nothing when all is present.
#
# ZooKeeper (the cluster coordinator, docs/cluster.md): `zookeeper` brings the 3.8 server jars
# (/usr/share/java/zookeeper.jar, run by the tests and by operators with their own zoo.cfg)
# and a JRE; `libzookeeper-mt-dev` the multithreaded C client that cellar links. Debian's
# `zookeeperd` is left out on purpose: it only adds an init script and a system service on
# port 2181, which cellar never relies on (tests start their own ZooKeeper on a free port).
#
# TLS on the server's port (docs/operations.md, rpc/tls.h): `libssl-dev` for the frame clients,
# which use OpenSSL directly (kj-tls, in libcapnp-dev, uses it too); `openssl`, the command the
# TLS tests make their certificates with.
# Snapshot compression (persist/wt_compressors.h): `libsnappy-dev` and `zlib1g-dev`, since
# Debian's WiredTiger has no compressor built in.
# The server's batched reads and sends (rpc/io_ring.h): `liburing-dev`.
# `clang`: the thread-safety check (scripts/check-thread-safety.sh) parses the sources with
# clang's analysis of the lock annotations, which GCC does not check; `clang-format`: the lint
# test that the tree follows .clang-format (scripts/check-format.sh).
# The HBase Thrift gateway: `thrift-compiler` generates the C++ server and load-generator code and
# the Python test stubs from the project's .thrift files at build time, `libthrift-dev` is the C++
# runtime the gateway links (its headers include Boost's, hence `libboost-dev`), `python3-thrift`
# the runtime of the Python clients the tests run.
# Replication (docs/cluster.md): `libraft-dev`, the C Raft library (0.15) that each partition's
# replica group runs on; cellar supplies its `raft_io` and `raft_fsm`, not a consensus algorithm.
set -euo pipefail
pkgs=(build-essential meson ninja-build pkg-config
      libcaf-dev libcapnp-dev capnproto libwiredtiger-dev libsnappy-dev zlib1g-dev
      libspdlog-dev libfmt-dev catch2 libabsl-dev
      libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libedit-dev libhiredis-dev libjemalloc-dev libre2-dev
      redis-server zookeeper libzookeeper-mt-dev openssl libssl-dev liburing-dev clang clang-format
      thrift-compiler libthrift-dev libboost-dev python3-thrift libraft-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # Without recommends: they add what neither the build nor the tests use (llvm-14-dev and
  # clang's runtimes come with `clang` otherwise), and a fresh machine installs in less time.
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
