#!/usr/bin/env bash
# Every shortcut of the data path against the plain path it shortcuts (docs/benchmarks.md,
# "Fast paths against the plain path"): for each shortcut, a copy of the tree with that one
# condition made false is built, and scripts/bench-ab.sh runs it against the tree's own
# cellar-server, pinned as the per-core runs, in the order full, variant, variant, full
# within each repetition (a fixed order favours whichever runs first).
#
#   scripts/bench-fastpaths.sh                      every shortcut, the default specs
#   scripts/bench-fastpaths.sh views prefetch       only those
#   REPS=5 SECS=4 SPECS="c 1,c 16" scripts/bench-fastpaths.sh views
#
# The shortcuts (name: what is turned off; what then serves it):
#   inplace   every call in place (dispatch_context::in_place); every call through the actor
#   views     a single get read as views (get_in_place); run_batch in place
#   scan      a scan's page read in place (scanner); the actor
#   multiget  a multi-row get read in place (read_in_place); one part per partition
#   put       a single put run in place and its copied OK reply (put_in_place); run_batch
#   prefetch  the row prefetch of the next requests (handle_buffered's hints); none
#
# Each variant is one exact text replacement in one file; when the text is not found (the
# code moved on), the script stops and names it. Builds go to $WORK (default
# /tmp/bench-fastpaths), one git worktree of HEAD per variant, with ccache when installed.
# Needs what scripts/bench-ab.sh needs (perf, taskset), and ./build built as release.
# Prints bench-ab.sh's lines, each prefixed by the variant's name.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/bench-fastpaths}
REPS=${REPS:-5}
SECS=${SECS:-4}
SPECS=${SPECS:-"c 1,a 1,c 16,a 16,e 1,c 1 --batch 10"}
base=$root/build/src/tools/cellar-server
[ -x "$base" ] || { echo "bench-fastpaths: build ./build first (scripts/build.sh)" >&2; exit 1; }

# Each variant: its name, the file, the text, and what replaces it.
names=() files=() texts=() replacements=()
variant() { names+=("$1") files+=("$2") texts+=("$3") replacements+=("$4"); }
variant inplace src/cellar/store/data_path.h \
  'return {&system_, order, stats_, in_place};' 'return {&system_, order, stats_, false};'
variant views src/cellar/rpc/server.cc \
  'if (action.which() != wire::Action::GET ||' 'if (true ||'
variant scan src/cellar/scanner.cc \
  'if (st.ctx.in_place && ref.local &&' 'if (false && ref.local &&'
variant multiget src/cellar/dispatch/dispatch.cc \
  '  const auto n = ops.size();
  std::vector<std::uint32_t> order(n);' '  if (true) return std::nullopt;
  const auto n = ops.size();
  std::vector<std::uint32_t> order(n);'
variant put src/cellar/rpc/server.cc \
  'if (action.which() != wire::Action::PUT ||' 'if (true ||'
variant prefetch src/cellar/rpc/server.cc \
  'if (exists && d.at.part != nullptr) d.at.part->prefetch_row(d.at.row, step);' '(void)d, (void)exists, (void)step;'

wanted=("$@")
selected() {
  [ ${#wanted[@]} -eq 0 ] && return 0
  local w
  for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}

mkdir -p "$WORK"
cc=gcc cxx=g++
if command -v ccache >/dev/null; then cc="ccache gcc" cxx="ccache g++"; fi
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$WORK}

head=$(git -C "$root" rev-parse HEAD)
for i in "${!names[@]}"; do
  name=${names[$i]} file=${files[$i]}
  selected "$name" || continue
  src=$WORK/$name
  if [ -d "$src" ]; then
    git -C "$src" checkout --quiet --force --detach "$head"
  else
    git -C "$root" worktree add --quiet --detach "$src" "$head"
  fi
  TEXT=${texts[$i]} REPLACEMENT=${replacements[$i]} python3 - "$src/$file" "$name" <<'PY'
import os, sys
path, name = sys.argv[1], sys.argv[2]
text, replacement = os.environ["TEXT"], os.environ["REPLACEMENT"]
s = open(path).read()
if s.count(text) != 1:
    sys.exit(f"bench-fastpaths: {name}: the text to change is in {path} {s.count(text)} times, not once; "
             "update its variant in scripts/bench-fastpaths.sh")
open(path, "w").write(s.replace(text, replacement))
PY
  if [ ! -f "$src/build/build.ninja" ]; then
    (cd "$src" && CC=$cc CXX=$cxx meson setup build --buildtype=release -Db_ndebug=if-release >/dev/null)
  fi
  ninja -C "$src/build" src/tools/cellar-server >/dev/null
  variant=$src/build/src/tools/cellar-server
  CONFIGS="full@$base=;$name@$variant=;${name}2@$variant=;full2@$base=" SPECS=$SPECS REPS=$REPS SECS=$SECS \
    "$root/scripts/bench-ab.sh" | sed "s/^/$name: /"
done
