#!/usr/bin/env python3
"""Recovery of two cellar-server builds on the same data, interleaved A, B, B, A.

The restart A/B of docs/benchmarks.md ("Restart and disk against Redis"): loads RECORDS YCSB
records (10 fields of 100 bytes, 8 range partitions) into a data directory with the A build
in snapshot mode and stops it with SIGTERM (its final snapshot), then restarts each build
on a fresh copy of that directory, pinned to CPUS, in the order A, B, B, A per pair. Each
restart reports the server's "recovered ... in S s" and the time from exec to the first
answered read (cellar-shell reading user0), its CPU time and its peak RSS. Prints one line
per restart and then medians with ranges, and B over A.

  scripts/bench-recovery-ab.py OLD_SERVER NEW_SERVER [--records 1000000] [--pairs 3]
                               [--cpus 1] [--work DIR] [--data DIR]

--data reuses a directory loaded earlier (it is only copied). Needs the tree's build
(cellar-shell, cellar-loadgen) and taskset.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
shell = os.path.join(root, "build/src/tools/cellar-shell")
loadgen = os.path.join(root, "build/examples/loadgen/cellar-loadgen")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(server, data, cpus, log):
    port = free_port()
    n = len(cpus.split(","))
    p = subprocess.Popen(["taskset", "-c", cpus, server, "--listen", f"127.0.0.1:{port}", "--data", data,
                          "--snapshot-interval-ms", "0", "--log-level", "info", "--event-loops", str(n),
                          "--worker-threads", str(n)], stdout=log, stderr=subprocess.STDOUT)
    return p, port


def wait_read(p, port, table_read):
    """Waits until the port answers a read; False if the server died."""
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            break
        except OSError:
            if p.poll() is not None:
                return False
            time.sleep(0.005)
    for _ in range(1000):
        r = subprocess.run([shell, "--connect", f"127.0.0.1:{port}", "--quiet"], input=table_read.encode(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return True
        if p.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def load(server, data, records, cpus, work):
    shutil.rmtree(data, ignore_errors=True)
    with open(os.path.join(work, "load.log"), "w") as log:
        p, port = start(server, data, cpus, log)
        if not wait_read(p, port, "list\n"):
            sys.exit("bench-recovery-ab: the A server did not start; see " + log.name)
        subprocess.run([loadgen, "--target", "cellar-rpc", "--protocol", "frames", "--port", str(port), "--workload",
                        "a", "--phase", "load", "--records", str(records), "--connections", "50", "--threads", "1",
                        "--partitioning", "range:8", "--field-length", "100", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        p.terminate()
        p.wait()


def restart(server, data, cpus, work):
    copy = os.path.join(work, "run")
    shutil.rmtree(copy, ignore_errors=True)
    subprocess.run(["cp", "-a", data, copy], check=True)
    log_path = os.path.join(work, "run.log")
    with open(log_path, "w") as log:
        t0 = time.monotonic()
        p, port = start(server, copy, cpus, log)
        if not wait_read(p, port, "get 'usertable', 'user0'\n"):
            sys.exit("bench-recovery-ab: " + server + " did not come back; see " + log_path)
        first_read = time.monotonic() - t0
        stat = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
        cpu = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
        hwm = next(int(l.split()[1]) for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM")) // 1024
        p.terminate()
        p.wait()
    found = re.findall(r"recovered (\d+) cells .* in ([\d.]+) s", open(log_path).read())
    if not found:
        sys.exit("bench-recovery-ab: no 'recovered' line in " + log_path)
    return {"cells": int(found[-1][0]), "recovered": float(found[-1][1]), "first_read": first_read, "cpu": cpu,
            "hwm_mb": hwm}


def summary(runs, key):
    v = [r[key] for r in runs]
    return statistics.median(v), min(v), max(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--records", type=int, default=1000000)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--cpus", default="1")
    ap.add_argument("--work", default="/tmp/bench-recovery-ab")
    ap.add_argument("--data", help="a loaded data directory to reuse")
    o = ap.parse_args()
    os.makedirs(o.work, exist_ok=True)
    data = o.data or os.path.join(o.work, "data")
    if not o.data:
        load(o.a, data, o.records, o.cpus, o.work)
    runs = {"A": [], "B": []}
    for i in range(o.pairs):
        for name in ("A", "B", "B", "A"):
            r = restart(o.a if name == "A" else o.b, data, o.cpus, o.work)
            runs[name].append(r)
            print(f"pair {i + 1} {name}: {r['cells']} cells recovered in {r['recovered']:.2f} s, "
                  f"first read at {r['first_read']:.2f} s, cpu {r['cpu']:.2f} s, peak {r['hwm_mb']} MB", flush=True)
    for key, unit in (("recovered", "s"), ("first_read", "s"), ("cpu", "s"), ("hwm_mb", "MB")):
        a, b = summary(runs["A"], key), summary(runs["B"], key)
        print(f"{key}: A {a[0]:.2f} {unit} ({a[1]:.2f}-{a[2]:.2f}), B {b[0]:.2f} {unit} ({b[1]:.2f}-{b[2]:.2f}), "
              f"B/A {b[0] / a[0]:.2f}x")


if __name__ == "__main__":
    main()
