#!/usr/bin/env bash
# Configures (once) and builds cellar into ./build (release with assertions kept off).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=release -Db_ndebug=if-release
fi
ninja -C build
