#!/usr/bin/env python3
"""thrift2 (THBaseService) from Python against a real cellar-server.

    thrift2_client.py CELLAR_SERVER GEN_PY_DIR [--framed] [--compact]

Starts cellar-server in memory with --thrift-listen on a loopback port it picks and
drives it through Python stubs Debian's thrift compiler generated from
schemas/thrift/thrift2/hbase.thrift, on python3-thrift: seed 003's blog session (its
writes, then its reads, with the answers HBase's shell gives), then every other data
method, the table and region methods, and the error cases. Exit status 0 when every
answer is the expected one.
"""
import signal
import struct
import subprocess
import sys

server_path, gen_dir = sys.argv[1], sys.argv[2]
framed = "--framed" in sys.argv[3:]
compact = "--compact" in sys.argv[3:]
sys.path.insert(0, gen_dir)

from thrift.protocol import TBinaryProtocol, TCompactProtocol  # noqa: E402
from thrift.transport import TSocket, TTransport  # noqa: E402

from hbase import THBaseService  # noqa: E402
from hbase.ttypes import (TAppend, TColumn, TColumnFamilyDescriptor, TColumnIncrement,  # noqa: E402
                          TColumnValue, TCompareOperator, TDelete, TDeleteType, TGet, TIllegalArgument,
                          TIncrement, TIOError, TMutation, TNamespaceDescriptor, TPut, TRowMutations, TScan,
                          TTableDescriptor, TTableName, TThriftServerType, TTimeRange)


def start_server():
    args = [server_path, "--data", "", "--listen", "127.0.0.1:0", "--thrift-listen", "127.0.0.1:0",
            "--worker-threads", "2", "--event-loops", "1", "--log-level", "warn"]
    if framed:
        args.append("--thrift-framed")
    if compact:
        args.append("--thrift-compact")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    port = None
    for line in proc.stdout:
        if line.startswith("thrift2 on "):
            port = int(line.rsplit(":", 1)[1])
        if line.startswith("listening on "):
            break
    if port is None:
        proc.kill()
        sys.exit("cellar-server did not report its thrift2 port")
    return proc, port


def connect(port):
    sock = TSocket.TSocket("127.0.0.1", port)
    transport = TTransport.TFramedTransport(sock) if framed else TTransport.TBufferedTransport(sock)
    protocol = (TCompactProtocol.TCompactProtocol(transport) if compact
                else TBinaryProtocol.TBinaryProtocol(transport))
    transport.open()
    return THBaseService.Client(protocol), transport


failures = []


def expect(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def expect_raises(what, exc_type, fn, text=None):
    try:
        fn()
    except exc_type as e:
        if text is not None and text not in (e.message or ""):
            failures.append(f"{what}: message {e.message!r} lacks {text!r}")
        return
    except Exception as e:  # noqa: BLE001
        failures.append(f"{what}: raised {type(e).__name__}: {e}")
        return
    failures.append(f"{what}: raised nothing")


def cells(result):
    """'row family:qualifier = value' of each cell, as the shell lists them."""
    return ["%s %s:%s = %s" % (result.row.decode(), c.family.decode(), c.qualifier.decode(), c.value.decode())
            for c in result.columnValues]


def col(spec):
    """A shell column spec: 'f' is a family, 'f:q' (or 'f:') a column."""
    if ":" not in spec:
        return TColumn(family=spec.encode())
    f, q = spec.split(":", 1)
    return TColumn(family=f.encode(), qualifier=q.encode())


def blog_session(c):
    t = TTableName(qualifier=b"blogtable")
    families = ["info", "text", "comment_title", "comment_author", "comment_text"]
    c.createTable(TTableDescriptor(tableName=t, columns=[TColumnFamilyDescriptor(name=f.encode()) for f in families]),
                  None)
    puts = [("1", "info:title", "this is doc title"), ("1", "info:author", "javabloger"),
            ("1", "info:url", "http://www.javabloger.com/index.php"),
            ("2", "info:title", "this is doc title2"), ("2", "info:author", "H.E."),
            ("2", "info:url", "http://www.javabloger.com/index.html"),
            ("1", "text:", "what is this doc context ?"), ("2", "text:", "what is this doc context2?"),
            ("1", "comment_title:", "this is doc comment_title "), ("1", "comment_author:", "javabloger"),
            ("1", "comment_text:", "this is nice doc"),
            ("2", "comment_title:", "this is blog comment_title "), ("2", "comment_author:", "H.E."),
            ("2", "comment_text:", "this is nice blog")]
    for row, column, value in puts:
        f, q = column.split(":", 1)
        c.put(b"blogtable", TPut(row=row.encode(), columnValues=[TColumnValue(family=f.encode(), qualifier=q.encode(),
                                                                               value=value.encode())]))

    def scan(columns, start=None):
        out = []
        for r in c.getScannerResults(b"blogtable", TScan(columns=[col(x) for x in columns],
                                                         startRow=start.encode() if start else None), 100):
            out += cells(r)
        return out

    def get(row, columns=()):
        return cells(c.get(b"blogtable", TGet(row=row.encode(), columns=[col(x) for x in columns] or None)))

    # The answers HBase's shell gives to the seed's reads.
    expect("scan COLUMNS => ['text:','info:title']", scan(["text:", "info:title"]),
           ["1 info:title = this is doc title", "1 text: = what is this doc context ?",
            "2 info:title = this is doc title2", "2 text: = what is this doc context2?"])
    expect("scan COLUMNS => 'info:url', STARTROW => '2'", scan(["info:url"], "2"),
           ["2 info:url = http://www.javabloger.com/index.html"])
    expect("get '1'", get("1"),
           ["1 comment_author: = javabloger", "1 comment_text: = this is nice doc",
            "1 comment_title: = this is doc comment_title ", "1 info:author = javabloger",
            "1 info:title = this is doc title", "1 info:url = http://www.javabloger.com/index.php",
            "1 text: = what is this doc context ?"])
    expect("get '1', COLUMN => 'info'", get("1", ["info"]),
           ["1 info:author = javabloger", "1 info:title = this is doc title",
            "1 info:url = http://www.javabloger.com/index.php"])
    expect("get '1', COLUMN => 'text'", get("1", ["text"]), ["1 text: = what is this doc context ?"])
    expect("get '1', COLUMN => ['text','info:author']", get("1", ["text", "info:author"]),
           ["1 info:author = javabloger", "1 text: = what is this doc context ?"])


def tv(f, q, v, ts=None):
    return TColumnValue(family=f, qualifier=q, value=v, timestamp=ts)


def data_methods(c):
    t = b"d"
    c.createTable(TTableDescriptor(tableName=TTableName(qualifier=t),
                                   columns=[TColumnFamilyDescriptor(name=b"f", maxVersions=5),
                                            TColumnFamilyDescriptor(name=b"g")]), [b"m"])
    c.putMultiple(t, [TPut(row=b"a", columnValues=[tv(b"f", b"q", b"1", 1), tv(b"g", b"x", b"ga")]),
                      TPut(row=b"z", columnValues=[tv(b"f", b"q", b"26")])])
    c.put(t, TPut(row=b"a", columnValues=[tv(b"f", b"q", b"2", 2)]))
    expect("existsAll", c.existsAll(t, [TGet(row=b"a"), TGet(row=b"nope"), TGet(row=b"z")]), [True, False, True])
    got = c.getMultiple(t, [TGet(row=b"z"), TGet(row=b"nope"), TGet(row=b"a", maxVersions=5,
                                                                     columns=[TColumn(family=b"f")])])
    expect("getMultiple", [cells(r) for r in got], [["z f:q = 26"], [], ["a f:q = 2", "a f:q = 1"]])
    expect("versions' timestamps", [cv.timestamp for cv in got[2].columnValues], [2, 1])
    ranged = c.get(t, TGet(row=b"a", maxVersions=5, timeRange=TTimeRange(minStamp=0, maxStamp=2)))
    expect("timeRange", cells(ranged), ["a f:q = 1"])  # g:x has the current time

    # checkAndPut / checkAndDelete / checkAndMutate with each operator. The check compares
    # the expected value with the column's: LESS passes when expected < current. The
    # mutations write the checked family (cellar's rule for a check on a column).
    c.put(t, TPut(row=b"c", columnValues=[tv(b"f", b"v", b"5")]))
    cases = [(TCompareOperator.LESS, b"4", True), (TCompareOperator.LESS, b"5", False),
             (TCompareOperator.LESS_OR_EQUAL, b"5", True), (TCompareOperator.LESS_OR_EQUAL, b"6", False),
             (TCompareOperator.EQUAL, b"5", True), (TCompareOperator.EQUAL, b"6", False),
             (TCompareOperator.NOT_EQUAL, b"6", True), (TCompareOperator.NOT_EQUAL, b"5", False),
             (TCompareOperator.GREATER_OR_EQUAL, b"5", True), (TCompareOperator.GREATER_OR_EQUAL, b"4", False),
             (TCompareOperator.GREATER, b"6", True), (TCompareOperator.GREATER, b"5", False)]
    for i, (op, value, want) in enumerate(cases):
        mark = b"m%d" % i
        done = c.checkAndMutate(t, b"c", b"f", b"v", op, value,
                                TRowMutations(row=b"c", mutations=[TMutation(put=TPut(row=b"c", columnValues=[
                                    tv(b"f", mark, b"y")]))]))
        expect("checkAndMutate %s %s" % (TCompareOperator._VALUES_TO_NAMES[op], value), done, want)
        expect("checkAndMutate %d wrote" % i, c.exists(t, TGet(row=b"c", columns=[TColumn(family=b"f",
                                                                                         qualifier=mark)])), want)
    expect("checkAndPut absent", c.checkAndPut(t, b"c", b"f", b"new", None,
                                               TPut(row=b"c", columnValues=[tv(b"f", b"new", b"1")])), True)
    expect("checkAndPut present", c.checkAndPut(t, b"c", b"f", b"new", None,
                                                TPut(row=b"c", columnValues=[tv(b"f", b"new", b"2")])), False)
    expect("checkAndPut equal", c.checkAndPut(t, b"c", b"f", b"new", b"1",
                                              TPut(row=b"c", columnValues=[tv(b"f", b"new", b"3")])), True)
    expect("checkAndDelete wrong", c.checkAndDelete(t, b"c", b"f", b"new", b"1",
                                                    TDelete(row=b"c", columns=[TColumn(family=b"f",
                                                                                       qualifier=b"new")])), False)
    expect("checkAndDelete right", c.checkAndDelete(t, b"c", b"f", b"new", b"3",
                                                    TDelete(row=b"c", columns=[TColumn(family=b"f",
                                                                                       qualifier=b"new")])), True)
    expect("after checkAndDelete", c.exists(t, TGet(row=b"c", columns=[TColumn(family=b"f", qualifier=b"new")])),
           False)

    # increment and append
    r = c.increment(t, TIncrement(row=b"n", columns=[TColumnIncrement(family=b"f", qualifier=b"hits", amount=5)]))
    expect("increment", struct.unpack(">q", r.columnValues[0].value)[0], 5)
    r = c.increment(t, TIncrement(row=b"n", columns=[TColumnIncrement(family=b"f", qualifier=b"hits")]))
    expect("increment by the default 1", struct.unpack(">q", r.columnValues[0].value)[0], 6)
    expect_raises("increment text", TIOError,
                  lambda: c.increment(t, TIncrement(row=b"c", columns=[TColumnIncrement(family=b"f", qualifier=b"v")])),
                  "NOT_A_LONG")
    r = c.append(t, TAppend(row=b"c", columns=[tv(b"f", b"v", b"-more")]))
    expect("append", cells(r), ["c f:v = 5-more"])

    # mutateRow: all or nothing
    c.mutateRow(t, TRowMutations(row=b"r", mutations=[
        TMutation(put=TPut(row=b"r", columnValues=[tv(b"f", b"a", b"1"), tv(b"f", b"b", b"2")])),
        TMutation(deleteSingle=TDelete(row=b"r", columns=[TColumn(family=b"f", qualifier=b"a")]))]))
    expect("mutateRow", cells(c.get(t, TGet(row=b"r"))), ["r f:b = 2"])
    expect_raises("mutateRow with a bad family", TIOError, lambda: c.mutateRow(t, TRowMutations(row=b"r", mutations=[
        TMutation(put=TPut(row=b"r", columnValues=[tv(b"f", b"c", b"3")])),
        TMutation(put=TPut(row=b"r", columnValues=[tv(b"nofam", b"c", b"3")]))])), "FAMILY_NOT_FOUND")
    expect("nothing of it applied", cells(c.get(t, TGet(row=b"r"))), ["r f:b = 2"])

    # deleteMultiple answers an empty list
    expect("deleteMultiple", c.deleteMultiple(t, [TDelete(row=b"r"), TDelete(row=b"n")]), [])
    expect("deleted", c.existsAll(t, [TGet(row=b"r"), TGet(row=b"n")]), [False, False])
    c.deleteSingle(t, TDelete(row=b"a", columns=[TColumn(family=b"f", qualifier=b"q")],
                              deleteType=TDeleteType.DELETE_COLUMN))
    expect("DELETE_COLUMN", cells(c.get(t, TGet(row=b"a", columns=[TColumn(family=b"f")], maxVersions=5))),
           ["a f:q = 1"])

    # Scanners: many rows, paged to the end, over both range partitions
    c.putMultiple(t, [TPut(row=b"s%03d" % i, columnValues=[tv(b"f", b"q", b"%d" % i)]) for i in range(250)])
    sid = c.openScanner(t, TScan(startRow=b"s", stopRow=b"t", caching=13))
    rows = []
    while True:
        page = c.getScannerRows(sid, 40)
        if not page:
            break
        rows += [r.row for r in page]
    c.closeScanner(sid)
    expect("scanner rows", rows, [b"s%03d" % i for i in range(250)])
    expect_raises("closed scanner", TIllegalArgument, lambda: c.getScannerRows(sid, 1))
    batched = c.getScannerResults(t, TScan(startRow=b"a", stopRow=b"b", batchSize=1), 10)
    expect("batchSize splits rows", [len(r.columnValues) for r in batched], [1, 1])
    filtered = c.getScannerResults(t, TScan(filterString=b"RowFilter(=, 'regexstring:s01[0-2]')"), 100)
    expect("filterString", [r.row for r in filtered], [b"s010", b"s011", b"s012"])


def admin_methods(c):
    t = TTableName(qualifier=b"adm")
    c.createTable(TTableDescriptor(tableName=t, columns=[TColumnFamilyDescriptor(name=b"f", timeToLive=3600)],
                                   attributes={b"OWNER": b"me"}), [b"g", b"p"])
    d = c.getTableDescriptor(t)
    expect("descriptor families", [f.name for f in d.columns], [b"f"])
    expect("descriptor ttl", d.columns[0].timeToLive, 3600)
    expect("descriptor attributes", d.attributes.get(b"OWNER"), b"me")
    expect("getTableDescriptors", [x.tableName.qualifier for x in c.getTableDescriptors([t])], [b"adm"])
    expect("getTableNamesByPattern", [n.qualifier for n in c.getTableNamesByPattern("ad.*", False)], [b"adm"])
    expect("getTableDescriptorsByPattern", len(c.getTableDescriptorsByPattern("nomatch", False)), 0)
    expect("tableExists", (c.tableExists(t), c.tableExists(TTableName(qualifier=b"none"))), (True, False))
    expect("isTableAvailable", c.isTableAvailable(t), True)
    expect("isTableAvailableWithSplit", c.isTableAvailableWithSplit(t, [b"g", b"p"]), True)
    locations = c.getAllRegionLocations(b"adm")
    expect("regions", [(l.regionInfo.startKey, l.regionInfo.endKey) for l in locations],
           [(b"", b"g"), (b"g", b"p"), (b"p", b"")])
    one = c.getRegionLocation(b"adm", b"k", False)
    expect("region of a row", (one.regionInfo.startKey, one.regionInfo.endKey), (b"g", b"p"))
    expect("region's server", one.serverName.hostName, "127.0.0.1")

    c.addColumnFamily(t, TColumnFamilyDescriptor(name=b"g", maxVersions=2))
    expect_raises("add an existing family", TIOError,
                  lambda: c.addColumnFamily(t, TColumnFamilyDescriptor(name=b"g")), "ALREADY_EXISTS")
    c.modifyColumnFamily(t, TColumnFamilyDescriptor(name=b"g", maxVersions=4))
    expect("modified family", [f.maxVersions for f in c.getTableDescriptor(t).columns if f.name == b"g"], [4])
    expect_raises("modify a missing family", TIOError,
                  lambda: c.modifyColumnFamily(t, TColumnFamilyDescriptor(name=b"zz")), "FAMILY_NOT_FOUND")
    c.deleteColumnFamily(t, b"g")
    expect("deleted family", [f.name for f in c.getTableDescriptor(t).columns], [b"f"])
    c.modifyTable(TTableDescriptor(tableName=t, columns=[TColumnFamilyDescriptor(name=b"f"),
                                                         TColumnFamilyDescriptor(name=b"h")],
                                   attributes={b"OWNER": b"you"}))
    d = c.getTableDescriptor(t)
    expect("modifyTable families", sorted(f.name for f in d.columns), [b"f", b"h"])
    expect("modifyTable attributes", d.attributes.get(b"OWNER"), b"you")

    c.put(b"adm", TPut(row=b"r", columnValues=[tv(b"f", b"q", b"v")]))
    c.truncateTable(t, True)
    expect("truncated", c.exists(b"adm", TGet(row=b"r")), False)
    expect("partitions kept", len(c.getAllRegionLocations(b"adm")), 3)
    c.disableTable(t)
    expect("disabled", (c.isTableEnabled(t), c.isTableDisabled(t)), (False, True))
    expect_raises("read a disabled table", TIOError, lambda: c.get(b"adm", TGet(row=b"r")), "TABLE_DISABLED")
    c.enableTable(t)
    expect("enabled", c.isTableEnabled(t), True)
    c.disableTable(t)
    c.deleteTable(t)
    expect("deleted table", c.tableExists(t), False)

    expect("server type", c.getThriftServerType(), TThriftServerType.TWO)
    namespaces(c)


def namespaces(c):
    expect("namespaces", sorted(c.listNamespaces()), ["default", "hbase"])
    c.createNamespace(TNamespaceDescriptor(name="ns", configuration={"owner": "ann"}))
    expect("namespace created", c.getNamespaceDescriptor("ns").configuration, {"owner": "ann"})
    expect_raises("createNamespace twice", TIOError, lambda: c.createNamespace(TNamespaceDescriptor(name="ns")),
                  "ALREADY_EXISTS")
    c.modifyNamespace(TNamespaceDescriptor(name="ns", configuration={"team": "x"}))
    expect("namespace modified", c.getNamespaceDescriptor("ns").configuration, {"team": "x"})
    expect("listed", sorted(d.name for d in c.listNamespaceDescriptors()), ["default", "hbase", "ns"])

    nst = TTableName(ns=b"ns", qualifier=b"t1")
    c.createTable(TTableDescriptor(tableName=nst, columns=[TColumnFamilyDescriptor(name=b"f")]), [])
    expect("table in its namespace", c.tableExists(nst), True)
    expect("not in the default namespace", c.tableExists(TTableName(qualifier=b"t1")), False)
    c.put(b"ns:t1", TPut(row=b"r", columnValues=[tv(b"f", b"q", b"v")]))
    expect("read by ns:t", c.get(b"ns:t1", TGet(row=b"r")).columnValues[0].value, b"v")
    expect("names by namespace", [(n.ns, n.qualifier) for n in c.getTableNamesByNamespace("ns")], [(b"ns", b"t1")])
    expect("descriptors by namespace",
           [(d.tableName.ns, d.tableName.qualifier) for d in c.getTableDescriptorsByNamespace("ns")], [(b"ns", b"t1")])
    expect("by pattern", [(n.ns, n.qualifier) for n in c.getTableNamesByPattern("ns:.*", False)], [(b"ns", b"t1")])
    expect("region's table", c.getRegionLocation(b"ns:t1", b"r", False).regionInfo.tableName, b"ns:t1")
    expect_raises("a table in a missing namespace", TIOError,
                  lambda: c.createTable(TTableDescriptor(tableName=TTableName(ns=b"nope", qualifier=b"x"),
                                                         columns=[TColumnFamilyDescriptor(name=b"f")]), []),
                  "NOT_FOUND")
    expect_raises("drop a namespace that has tables", TIOError, lambda: c.deleteNamespace("ns"), "INVALID_ARGUMENT")
    c.disableTable(nst)
    c.deleteTable(nst)
    c.deleteNamespace("ns")
    expect_raises("namespace dropped", TIOError, lambda: c.getNamespaceDescriptor("ns"), "NOT_FOUND")
    expect_raises("tables of a missing namespace", TIOError, lambda: c.getTableNamesByNamespace("ns"), "NOT_FOUND")


def errors(c):
    expect_raises("missing table", TIOError, lambda: c.get(b"nope", TGet(row=b"r")), "TABLE_NOT_FOUND")
    expect_raises("missing family", TIOError,
                  lambda: c.put(b"blogtable", TPut(row=b"r", columnValues=[tv(b"nofam", b"q", b"v")])),
                  "FAMILY_NOT_FOUND")
    expect_raises("bad scanner id", TIllegalArgument, lambda: c.getScannerRows(987654, 1))
    expect_raises("bad filter", TIOError,
                  lambda: c.openScanner(b"blogtable", TScan(filterString=b"ValueFilter(=")), "INVALID_ARGUMENT")


def main():
    proc, port = start_server()
    try:
        client, transport = connect(port)
        try:
            blog_session(client)
            data_methods(client)
            admin_methods(client)
            errors(client)
            blog_session_again = cells(client.get(b"blogtable", TGet(row=b"2", columns=[col("info:author")])))
            expect("the connection still serves after the errors", blog_session_again, ["2 info:author = H.E."])
        finally:
            transport.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("ok: thrift2 session%s%s" % (" framed" if framed else "", " compact" if compact else ""))


if __name__ == "__main__":
    main()
