#!/usr/bin/env bash
# Fails when a C++ file of the tree differs from what clang-format makes of it with the
# tree's .clang-format, and prints the first lines of each difference. Run
# `scripts/check-format.sh --fix` to format the tree in place.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fix=0
[ "${1:-}" = "--fix" ] && fix=1
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed (scripts/setup.sh installs it)"; exit 1; }
mapfile -t files < <(find src include tests bench examples \( -name '*.cc' -o -name '*.h' \) -type f | sort)
if [ "$fix" = 1 ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! out=$(clang-format "$f" | diff -u "$f" - ); then
    echo "$out" | head -20
    bad=$((bad + 1))
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "check-format: $bad file(s) are not formatted; scripts/check-format.sh --fix formats them"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
