#!/usr/bin/env bash
# Installs every build and test dependency of cellar from Debian's packages.
# Runs as root on a fresh Debian 12 machine; does nothing when all is present.
set -euo pipefail
pkgs=(build-essential meson ninja-build pkg-config
      libcaf-dev libcapnp-dev capnproto libwiredtiger-dev
      libspdlog-dev libfmt-dev catch2 libabsl-dev
      libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libedit-dev libhiredis-dev libjemalloc-dev libre2-dev
      redis-server)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}"
fi
