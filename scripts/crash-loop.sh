#!/usr/bin/env bash
# Runs the crash tests (SIGKILL a writer, reopen, check the mode's promise) for many
# iterations per durability mode. By hand, not in CI:  scripts/crash-loop.sh 200
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
CELLAR_CRASH_ITERATIONS="${1:-100}" build/tests/persist/test_crash
