#!/usr/bin/env bash
# A longer run of the linearizability test of replicated tables (tests/cluster/
# test_linearizability.cc): ZooKeeper and three cellar-server nodes, factor 3, log mode;
# clients put, get and checkAndPut three rows while a nemesis kills and pauses one node at a
# time; the recorded history is checked as a register. CI runs it for 25 s; this runs it
# for SECONDS (default 300), repeated RUNS times (default 1), and fails on the first anomaly.
#
#   scripts/linearizability.sh [SECONDS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
runs=${2:-1}
ninja -C build tests/cluster/test_replication_servers src/tools/cellar-server src/tools/cellar-shell >/dev/null
for run in $(seq "$runs"); do
  echo "linearizability: run $run of $runs, ${seconds} s"
  CELLAR_LINEARIZABILITY_SECONDS=$seconds build/tests/cluster/test_replication_servers "[linearizability]"
done
