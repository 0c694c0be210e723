#!/usr/bin/env python3
"""Fails when a comment names a repository path that does not exist.

    check-comment-paths.py [--root DIR] [--allow FILE] [--list]

Reads the comments (// and /* */ in C and C++ files; # in Cap'n Proto, meson.build, shell
and Python files) of src/, include/, tests/, bench/, examples/ and schemas/, and finds the words that
look like a path of this repository: `persist/wt_home.h` (under src/cellar/), `cellar/store.h`
(under include/), `docs/storage.md` or `scripts/fuzz.sh` (from the root), a file next to the
commenting one. Each must name a file or folder that exists. A bare `NAME.cc`, `NAME.md` or
`NAME.sh` must be a file somewhere in the tree. A reference to a section of a
page, `docs/cluster.md §4` or `docs/operations.md, "Security"`, must name a heading of that
page too (or the start of one: "Crash loops" names "Crash loops (`scripts/crash-loop.sh`)").

Words that do not start with a folder of this repository (`kj/async.h`, `caf/all.hpp`,
`hbase-shell/.../table.rb`) name other projects and are not checked, nor are absolute paths,
URLs and patterns (`<target>`, `*`, `...`).

An allow-list file (scripts/comment-paths-allow.txt) names known exceptions, one a line:
`FILE: PATH` (`#` starts a comment). An exception that no longer occurs is reported, so the
list only shrinks. Exit status: 0 clean, 1 a violation or a stale exception.
"""
import argparse
import os
import re
import sys

SCANNED = ["src", "include", "tests", "bench", "examples", "schemas"]
C_LIKE = (".h", ".hh", ".hpp", ".c", ".cc", ".cpp", ".thrift", ".in")
HASH_LIKE = (".sh", ".py", ".build", ".txt", ".toml", ".capnp")
# Extensions that make a word a file path (a folder is written with a trailing slash).
FILE_EXT = re.compile(r"\.(h|hh|hpp|c|cc|cpp|inl|md|sh|py|capnp|thrift|build|txt|toml|json|svg|png|supp|in|tsv)$")
PATH_WORD = re.compile(r"(?<![\w./:<>*-])((?:\.\./|\./)?[A-Za-z_][\w.+-]*(?:/[\w.+-]+)+/?)(?![\w<>*])")
# A bare file name of the kinds this repository has many of: it must be a file somewhere in
# the tree (`test_member.cc`, `guide.md`). Bare headers are not checked: too many belong to
# other projects (`btree.h`, `readline.h`).
BARE_WORD = re.compile(r"(?<![\w./-])([A-Za-z_][\w+-]*\.(?:cc|md|sh))(?![\w/])")
SECTION_REF = re.compile(
    r"((?:docs/[\w.-]+\.md)|README(?:\.md)?)(?:'s)?[,:]?\s*(?:§\s?(\d+)|\"([^\"\n]+)\"|, section \"([^\"\n]+)\")")


def comments_of(text, path):
    """The comment text of a file, with the line each comment starts on."""
    out = []
    if path.endswith(HASH_LIKE) or os.path.basename(path) in ("meson.build", "meson_options.txt"):
        for i, line in enumerate(text.splitlines(), 1):
            # Skip '#' inside quotes roughly: take the first # not in a quoted run.
            in_s = None
            for j, ch in enumerate(line):
                if in_s:
                    if ch == in_s:
                        in_s = None
                elif ch in "'\"":
                    in_s = ch
                elif ch == "#":
                    if j == 0 and line.startswith("#!"):
                        break
                    out.append((i, line[j + 1:]))
                    break
        return out
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            out.append((line, text[i + 2:j]))
            line += text.count("\n", i, j)
            i = j + 2
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j
            line += text.count("\n", i, j)
            i = j + len(end)
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return out


def headings(page):
    """A page's headings, with and without their section numbers."""
    found, numbers = set(), set()
    try:
        with open(page, encoding="utf-8") as f:
            for l in f:
                m = re.match(r"#+\s+(.*?)\s*$", l)
                if m:
                    h = m.group(1).strip()
                    found.add(h.lower())
                    n = re.match(r"(\d+)\.?\s+(.*)", h)
                    if n:
                        numbers.add(n.group(1))
                        found.add(n.group(2).lower())
    except OSError:
        pass
    return found, numbers


class checker:
    def __init__(self, root):
        self.root = root
        self.top = {e for e in os.listdir(root) if not e.startswith(".") or e == ".ci"} - {"build"}
        cellar = os.path.join(root, "src", "cellar")
        self.src_dirs = {e for e in os.listdir(cellar) if os.path.isdir(os.path.join(cellar, e))}
        self.src_dirs |= {"util", "thrift"}  # folders of src/cellar being built; a path in them must still exist
        self.bases = ["", "src/cellar", "include", "src"]
        self.names = set()
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and not (dirpath == root and d == "build")]
            self.names.update(filenames)

    def is_ours(self, word):
        first = word.lstrip("./").split("/")[0]
        return first in self.top or first in self.src_dirs or first == "cellar"

    def exists(self, word, commenting):
        here = os.path.dirname(commenting)
        for base in self.bases + [here, os.path.dirname(here)]:
            p = os.path.normpath(os.path.join(self.root, base, word))
            if os.path.exists(p) or os.path.exists(p + ".in"):  # version.h from version.h.in
                return True
        return False

    def check_comment(self, rel, text):
        bad = []
        for m in PATH_WORD.finditer(text):
            word = m.group(1)
            before = text[max(0, m.start() - 3):m.start()]
            if "://" in before or before.endswith("/"):
                continue
            if "..." in word or "<" in word or "*" in word:
                continue
            stripped = word.rstrip(".")
            is_dir = stripped.endswith("/")
            if not is_dir and not FILE_EXT.search(stripped):
                continue
            if not self.is_ours(stripped):
                continue
            if not self.exists(stripped, rel):
                bad.append(stripped)
        for m in BARE_WORD.finditer(text):
            if m.group(1) not in self.names:
                bad.append(m.group(1))
        for m in SECTION_REF.finditer(text):
            page = m.group(1)
            page = "README.md" if page.startswith("README") else page
            full = os.path.join(self.root, page)
            if not os.path.exists(full):
                continue  # reported above as a path
            found, numbers = headings(full)
            number, title = m.group(2), m.group(3) or m.group(4)
            if number and number not in numbers:
                bad.append(f"{page} §{number}")
            elif title and not any(h.startswith(title.lower()) for h in found):
                bad.append(f'{page} "{title}"')
        return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--allow", default=None, help="allow-list file (default scripts/comment-paths-allow.txt)")
    ap.add_argument("--list", action="store_true", help="print every violation, allowed ones too")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    allow_file = args.allow or os.path.join(root, "scripts", "comment-paths-allow.txt")
    allowed = set()
    if os.path.exists(allow_file):
        with open(allow_file, encoding="utf-8") as f:
            for l in f:
                l = l.split("#", 1)[0].strip()
                if l:
                    file, _, word = l.partition(":")
                    allowed.add((file.strip(), word.strip()))
    c = checker(root)
    seen_allowed, failures = set(), []
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if not (name.endswith(C_LIKE + HASH_LIKE) or name == "meson.build"):
                    continue
                # Fuzz corpora and seeds are data, not source.
                if rel.startswith(("tests/fuzz/", "tests/seeds/")) and "." not in name:
                    continue
                try:
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                except (UnicodeDecodeError, OSError):
                    continue
                for line, comment in comments_of(text, rel):
                    for word in c.check_comment(rel, comment):
                        if (rel, word) in allowed:
                            seen_allowed.add((rel, word))
                            if args.list:
                                print(f"{rel}:{line}: {word} (allowed)")
                            continue
                        failures.append(f"{rel}:{line}: a comment names {word}, which does not exist")
    stale = sorted(allowed - seen_allowed)
    for f in failures:
        print(f)
    for rel, word in stale:
        print(f"{os.path.relpath(allow_file, root)}: '{rel}: {word}' is no longer needed: remove it")
    if failures or stale:
        print(f"{len(failures)} comment(s) name paths that do not exist; {len(stale)} stale exception(s)")
        return 1
    print(f"ok: every path named in a comment exists ({len(seen_allowed)} allowed exception(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
