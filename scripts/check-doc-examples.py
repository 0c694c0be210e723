#!/usr/bin/env python3
"""Compiles and runs the examples of docs/*.md, so that none goes stale.

    check-doc-examples.py --root SRC --build BUILD --shell CELLAR_SHELL -- CXX [CXX ARGS...]

An example is a fenced block whose info string names it:

  ```cpp example            a C++ fragment or program: compiled against the build's public
                            headers (include/ and the generated cellar/version.h only, as an
                            installed cellar gives them), linked with libcellar.so, and run;
                            it must exit 0. A fragment without `int main(` becomes the body of
                            main(), its #include lines going first.
  ```cpp example compile    the same, compiled and linked but not run (it needs a server).
  ```cpp example capnp      may also include the generated "cellar.capnp.h" (as a client
                            that compiles the installed schema has it) and uses capnp and kj.
  ```text shell-example     a cellar-shell session: lines starting `cellar> ` are typed (a
                            line starting `    -> ` continues the one before), the other lines
                            are the output expected, exactly. Run with `cellar-shell --quiet
                            --embedded DIR` on a fresh directory; a line `...` in the
                            expected output matches any lines up to the next expected one.

A ```cpp (or c++, cc, c) block without `example` is an error, so every C++ example runs.
Other fenced blocks are prose (commands to type, formats) and are not run.
Exit status 0 when every example passes; 1 otherwise, naming the page and line of each
failure; 77 (skipped) when the compiler or the library is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

FENCE = re.compile(r"^(```+)\s*(\S.*)?$")


def blocks(path):
    """(line, info words, text) of each fenced block of a Markdown page."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(1), (m.group(2) or "").split(), i + 1
        j = start
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        out.append((start, info, "\n".join(lines[start:j])))
        i = j + 1
    return out


def as_program(text):
    if re.search(r"\bint\s+main\s*\(", text):
        return text + "\n"
    includes = [l for l in text.split("\n") if l.lstrip().startswith("#include")]
    body = [l for l in text.split("\n") if not l.lstrip().startswith("#include")]
    return "\n".join(includes) + "\n\nint main() {\n" + "\n".join("  " + l for l in body) + "\n  return 0;\n}\n"


def pkg_config(*args):
    r = subprocess.run(["pkg-config", *args], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else None


def run_cpp(page, line, info, text, a, work):
    name = f"{os.path.basename(page)[:-3]}_{line}"
    src = os.path.join(work, name + ".cc")
    exe = os.path.join(work, name)
    with open(src, "w", encoding="utf-8") as f:
        f.write(as_program(text))
    libdir = os.path.join(a.build, "src", "cellar")
    cmd = list(a.cxx) + ["-std=c++20", "-Wall", "-Wextra",
                         "-I", os.path.join(a.root, "include"), "-I", os.path.join(a.build, "include"), src]
    if "capnp" in info:
        cmd += ["-I", os.path.join(a.build, "schemas")] + (pkg_config("--cflags", "capnp", "kj") or [])
    cmd += ["-o", exe, "-L", libdir, "-lcellar", "-Wl,-rpath," + libdir]
    if "capnp" in info:
        cmd += pkg_config("--libs", "capnp", "kj") or []
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return f"{page}:{line}: the example does not compile:\n{r.stderr}\n--- as compiled:\n{as_program(text)}"
    if "compile" in info:
        return None
    r = subprocess.run([exe], capture_output=True, text=True, timeout=120, cwd=work)
    if r.returncode != 0:
        return f"{page}:{line}: the example exits {r.returncode}:\n{r.stdout}{r.stderr}"
    return None


def matches(expected, got):
    """Whether the output lines `got` are `expected`, where a line '...' skips any lines."""
    if not expected:
        return not got
    if expected[0] == "...":
        return any(matches(expected[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and got[0] == expected[0] and matches(expected[1:], got[1:])


def run_shell(page, line, text, a, work):
    typed, expected = [], []
    for l in text.split("\n"):
        if l.startswith("cellar> "):
            typed.append(l[len("cellar> "):])
        elif l.startswith("    -> ") and typed:
            typed.append(l[len("    -> "):])
        else:
            expected.append(l.rstrip())
    while expected and not expected[-1]:
        expected.pop()
    data = tempfile.mkdtemp(prefix=f"shell-{line}-", dir=work)
    r = subprocess.run([a.shell, "--quiet", "--embedded", os.path.join(data, "store")],
                       input="\n".join(typed) + "\n", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=120)
    got = [l.rstrip() for l in r.stdout.split("\n")]
    while got and not got[-1]:
        got.pop()
    if matches(expected, got):
        return None
    return (f"{page}:{line}: the shell session's output differs\n--- expected:\n" + "\n".join(expected) +
            "\n--- got:\n" + "\n".join(got))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--shell", required=True)
    ap.add_argument("--page", action="append", help="only these pages (docs/NAME.md)")
    ap.add_argument("cxx", nargs="+")
    a = ap.parse_args()
    a.root, a.build = os.path.abspath(a.root), os.path.abspath(a.build)
    if shutil.which(a.cxx[0]) is None:
        print(f"skipped: no compiler {a.cxx[0]}")
        return 77
    if not os.path.exists(os.path.join(a.build, "src", "cellar", "libcellar.so")):
        print("skipped: no libcellar.so in the build (a static-only build?)")
        return 77
    docs = os.path.join(a.root, "docs")
    pages = sorted(os.path.join("docs", n) for n in os.listdir(docs) if n.endswith(".md"))
    if a.page:
        pages = [p for p in pages if p in a.page]
    jobs = []
    unmarked = []
    for page in pages:
        for line, info, text in blocks(os.path.join(a.root, page)):
            if info and info[0] in ("cpp", "c++", "cc", "c") and info[1:2] != ["example"]:
                # A C++ block that is not marked would go stale unseen: every one must run.
                unmarked.append(f"{page}:{line}: a C++ block not marked `example` (see this script's usage)")
            elif len(info) >= 2 and info[0] == "cpp" and info[1] == "example":
                jobs.append(("cpp", page, line, info[2:], text))
            elif len(info) >= 2 and info[1] == "shell-example":
                jobs.append(("shell", page, line, info[2:], text))
    work = tempfile.mkdtemp(prefix="cellar-doc-examples-")
    try:
        def one(job):
            kind, page, line, info, text = job
            if kind == "cpp":
                return run_cpp(page, line, info, text, a, work)
            return run_shell(page, line, text, a, work)
        with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
            failures = [f for f in pool.map(one, jobs) if f]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    passed = len(jobs) - len(failures)
    failures += unmarked
    for f in failures:
        print(f, end="\n\n")
    counts = {k: sum(1 for j in jobs if j[0] == k) for k in ("cpp", "shell")}
    print(f"{passed} of {len(jobs)} examples pass "
          f"({counts['cpp']} C++, {counts['shell']} shell sessions, from {len(pages)} pages)")
    if not jobs:
        print("no examples found: the pages lost their markers?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
