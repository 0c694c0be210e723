#!/usr/bin/env python3
"""thrift1 the way happybase drives it, against a real cellar-server.

    happybase_style.py CELLAR_SERVER GEN_PY_DIR [--framed] [--compact]

Starts cellar-server in memory with --thrift1-listen on a loopback port it picks, then
runs what happybase's Connection and Table call (create_table, tables, families, put,
row(s), cells, scan with paging, counters, delete, batch, disable/delete_table) through
Python stubs Debian's thrift compiler generated from schemas/thrift/thrift1/Hbase.thrift,
on python3-thrift. Exit status 0 when every answer is the expected one.
"""
import os
import signal
import struct
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from thrift_harness import expect, expect_raises, run, server_path  # noqa: E402  (puts GEN_PY_DIR on the path)

from thrift.protocol import TBinaryProtocol  # noqa: E402

from hbase import Hbase  # noqa: E402
from hbase.ttypes import (AlreadyExists, BatchMutation, ColumnDescriptor, IllegalArgument,  # noqa: E402
                          IOError, Mutation, TScan)


def make_row(row_result, include_timestamp=False):
    # happybase.util: a TRowResult's columns as {b'cf:q': value}
    cols = row_result.sortedColumns if row_result.sortedColumns is not None else None
    if cols is not None:
        return {c.columnName: (c.cell.value, c.cell.timestamp) if include_timestamp else c.cell.value for c in cols}
    return {k: (v.value, v.timestamp) if include_timestamp else v.value for k, v in row_result.columns.items()}


def scan(client, table, row_start=b"", row_stop=None, row_prefix=None, columns=None, filter_str=None,
         batch_size=1000, limit=None):
    # happybase.Table.scan: scannerOpenWithScan (or WithPrefix), scannerGetList pages,
    # scannerClose in a finally.
    if row_prefix is not None:
        scan_id = client.scannerOpenWithPrefix(table, row_prefix, columns or [], {})
    else:
        tscan = TScan(startRow=row_start, stopRow=row_stop, columns=columns, caching=batch_size,
                      filterString=filter_str, sortColumns=True)
        scan_id = client.scannerOpenWithScan(table, tscan, {})
    out = []
    try:
        while True:
            how_many = batch_size if limit is None else min(batch_size, limit - len(out))
            items = client.scannerGetList(scan_id, how_many)
            if not items:
                break
            out.extend((r.row, make_row(r)) for r in items)
            if limit is not None and len(out) >= limit:
                break
    finally:
        client.scannerClose(scan_id)
    return out


def session(client):
    t = b"blog"
    # Connection.create_table('blog', {'info': dict(max_versions=3), 'stats': dict()})
    client.createTable(t, [ColumnDescriptor(name=b"info:", maxVersions=3), ColumnDescriptor(name=b"stats:")])
    expect_raises("create_table twice", AlreadyExists,
                  lambda: client.createTable(t, [ColumnDescriptor(name=b"info:")]))
    expect("tables()", client.getTableNames(), [t])
    families = client.getColumnDescriptors(t)
    expect("families()", sorted(families), [b"info:", b"stats:"])
    expect("families() max_versions", families[b"info:"].maxVersions, 3)

    # Table.put: mutateRow with Mutation(column, value)
    client.mutateRow(t, b"post1", [Mutation(column=b"info:title", value=b"Hello"),
                                   Mutation(column=b"info:author", value=b"ann")], {})
    client.mutateRowTs(t, b"post1", [Mutation(column=b"info:title", value=b"Hello v1")], 1000, {})
    # Table.row / row(columns) / rows
    rows = client.getRowWithColumns(t, b"post1", [b"info"], {})
    expect("row()", make_row(rows[0]), {b"info:title": b"Hello", b"info:author": b"ann"})
    expect("row() missing", client.getRow(t, b"nope", {}), [])
    expect("cells(versions=3)", [c.value for c in client.getVer(t, b"post1", b"info:title", 3, {})],
           [b"Hello", b"Hello v1"])
    expect("cells at timestamp", [c.value for c in client.getVerTs(t, b"post1", b"info:title", 1001, 3, {})],
           [b"Hello v1"])

    # Table.batch: mutateRows; a delete Mutation takes the column
    client.mutateRows(t, [BatchMutation(row=b"post%d" % i, mutations=[Mutation(column=b"info:title",
                                                                               value=b"T%d" % i)])
                          for i in range(2, 40)], {})
    got = client.getRows(t, [b"post2", b"post3", b"missing"], {})
    expect("rows()", [r.row for r in got], [b"post2", b"post3"])

    # Table.scan, paged to the end
    all_rows = scan(client, t, batch_size=7)
    expect("scan() count", len(all_rows), 39)
    expect("scan() order", [k for k, _ in all_rows], sorted(k for k, _ in all_rows))
    expect("scan(row_prefix)", [k for k, _ in scan(client, t, row_prefix=b"post3")],
           [b"post3"] + [b"post3%d" % i for i in range(10)])
    expect("scan(row_start, row_stop)", [k for k, _ in scan(client, t, row_start=b"post10", row_stop=b"post13")],
           [b"post10", b"post11", b"post12"])
    expect("scan(filter)", [k for k, _ in scan(client, t, filter_str=b"ValueFilter(=, 'binary:T25')")], [b"post25"])
    expect("scan(limit)", len(scan(client, t, limit=5, batch_size=2)), 5)

    # Table.counter_inc / counter_get: 8-byte big-endian longs
    expect("counter_inc", client.atomicIncrement(t, b"post1", b"stats:views", 3), 3)
    expect("counter_inc again", client.atomicIncrement(t, b"post1", b"stats:views", 4), 7)
    cell = client.get(t, b"post1", b"stats:views", {})[0]
    expect("counter bytes", struct.unpack(">q", cell.value)[0], 7)
    expect_raises("counter on text", IllegalArgument, lambda: client.atomicIncrement(t, b"post1", b"info:title", 1),
                  "NOT_A_LONG")

    # Table.delete: deleteAll for columns, deleteAllRow for the row
    client.deleteAll(t, b"post1", b"info:author", {})
    expect("after delete column", sorted(make_row(client.getRow(t, b"post1", {})[0])),
           [b"info:title", b"stats:views"])
    client.deleteAllRow(t, b"post1", {})
    expect("after delete row", client.getRow(t, b"post1", {}), [])

    # Errors keep the connection usable.
    expect_raises("missing table", IOError, lambda: client.getRow(b"nope", b"r", {}), "TABLE_NOT_FOUND")
    expect_raises("missing family", IOError,
                  lambda: client.mutateRow(t, b"r", [Mutation(column=b"nofam:q", value=b"v")], {}),
                  "FAMILY_NOT_FOUND")
    expect_raises("bad scanner id", IllegalArgument, lambda: client.scannerGetList(424242, 1))

    # Connection.disable_table / is_table_enabled / delete_table
    client.disableTable(t)
    expect("is_table_enabled", client.isTableEnabled(t), False)
    expect_raises("read a disabled table", IOError, lambda: client.getRow(t, b"post2", {}), "TABLE_DISABLED")
    client.enableTable(t)
    expect("enabled again", len(client.getRow(t, b"post2", {})), 1)
    client.disableTable(t)
    client.deleteTable(t)
    expect("tables() after delete", client.getTableNames(), [])


def token_refusal():
    # A server with a token refuses to serve the gateways, which cannot ask for it, unless
    # told their clients need none.
    base = [server_path, "--data", "", "--listen", "127.0.0.1:0", "--thrift1-listen", "127.0.0.1:0", "--token", "t0k",
            "--worker-threads", "1", "--event-loops", "1", "--log-level", "warn"]
    refused = subprocess.run(base, capture_output=True, text=True, timeout=60)
    expect("a token without --thrift-unauthenticated: exit status", refused.returncode, 2)
    expect("... and why", "cannot check the token" in refused.stderr, True)
    proc = subprocess.Popen(base + ["--thrift-unauthenticated"], stdout=subprocess.PIPE, text=True)
    started = False
    for line in proc.stdout:
        started = started or line.startswith("thrift1 on ")
        if line.startswith("listening on "):
            break
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    expect("a token with --thrift-unauthenticated serves thrift1", started, True)


def main():
    token_refusal()
    # happybase.Connection speaks TBinaryProtocolAccelerated unless told compact.
    run("thrift1", Hbase.Client, session, "happybase-style thrift1 session",
        binary_protocol=TBinaryProtocol.TBinaryProtocolAccelerated)


if __name__ == "__main__":
    main()
