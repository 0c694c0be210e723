#!/usr/bin/env bash
# Clang's thread-safety analysis over cellar's sources: every lock annotated with
# ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED (abseil's thread_annotations.h) is
# checked at every use. A check, not a second build: clang parses each translation unit
# (-fsyntax-only) with the flags of build/compile_commands.json and reports only the
# analysis's findings, as errors.
#
# Only the units that can see an annotation are parsed: a source under src/ whose own text
# or one of whose headers (the build's dependency list, `ninja -t deps`) carries one.
#
#   scripts/check-thread-safety.sh [BUILD_DIR]      (default: build)
# Exit status: 0 clean, 1 findings, 77 when clang++ is not installed (a skipped test).
set -euo pipefail
cd "$(dirname "$0")/.."
# A check with no deadline: it yields the CPU to whatever runs beside it (the test suite).
renice -n 19 -p $$ >/dev/null 2>&1 || true
build=${1:-build}
command -v clang++ >/dev/null || { echo "check-thread-safety: clang++ is not installed"; exit 77; }
[ -f "$build/compile_commands.json" ] || { echo "check-thread-safety: no $build/compile_commands.json"; exit 1; }
python3 - "$build" <<'PY'
import json, os, re, shlex, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

build = sys.argv[1]
root = os.getcwd()
marker = re.compile(rb"ABSL_(GUARDED_BY|PT_GUARDED_BY|EXCLUSIVE_LOCKS_REQUIRED|SHARED_LOCKS_REQUIRED|LOCKS_EXCLUDED|"
                    rb"LOCK_RETURNED|ACQUIRED_AFTER|ACQUIRED_BEFORE|SCOPED_LOCKABLE|LOCKABLE)")
annotated = {}
def has_marker(path):
    if path not in annotated:
        try:
            with open(path, "rb") as f:
                annotated[path] = bool(marker.search(f.read()))
        except OSError:
            annotated[path] = False
    return annotated[path]

# object -> headers it includes, from ninja's dependency log
deps = {}
out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True).stdout
current = None
for line in out.splitlines():
    if line and not line.startswith(" "):
        current = line.split(":")[0]
        deps[current] = []
    elif line.strip() and current is not None:
        deps[current].append(os.path.abspath(os.path.join(build, line.strip())))

units = []
for e in json.load(open(os.path.join(build, "compile_commands.json"))):
    src = os.path.abspath(os.path.join(e["directory"], e["file"]))
    if not src.startswith(os.path.join(root, "src") + os.sep) or not src.endswith(".cc"):
        continue
    args = shlex.split(e["command"])
    obj = args[args.index("-o") + 1] if "-o" in args else None
    headers = deps.get(obj, [])
    if not has_marker(src) and not any(h.startswith(root + os.sep) and has_marker(h) for h in headers):
        continue
    keep, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MQ", "-MT"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-O") or a.startswith("-fdiagnostics-color") or a == e["file"]:
            continue
        if a.startswith("-W") or a.startswith("-fsanitize"):
            continue
        keep.append(a)
    if keep and keep[0].endswith("ccache"):
        keep = keep[1:]
    keep = [a for a in keep if not re.fullmatch(r"(c\+\+|g\+\+|clang\+\+)(-\d+)?", os.path.basename(a))]
    units.append((src, e["directory"], ["clang++"] + keep + ["-fsyntax-only", "-Wno-everything", "-Wthread-safety",
                                                              "-Werror=thread-safety", e["file"]]))

def check(u):
    src, cwd, cmd = u
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return src, r.returncode, r.stderr

failed = 0
with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for src, rc, err in pool.map(check, units):
        if rc != 0:
            failed += 1
            sys.stderr.write(err)
print(f"check-thread-safety: {len(units)} translation units checked, {failed} with findings")
sys.exit(1 if failed else 0)
PY
