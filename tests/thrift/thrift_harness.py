"""What the Python Thrift clients of these tests share: their arguments, a cellar-server to
talk to, a connection the way the client library makes one, and the checks.

    <script> CELLAR_SERVER GEN_PY_DIR [--framed] [--compact]
"""
import signal
import subprocess
import sys

from thrift.protocol import TBinaryProtocol, TCompactProtocol
from thrift.transport import TSocket, TTransport

server_path, gen_dir = sys.argv[1], sys.argv[2]
framed = "--framed" in sys.argv[3:]
compact = "--compact" in sys.argv[3:]
sys.path.insert(0, gen_dir)  # where `hbase` (the generated stubs) is found

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


def start_server(service):
    """cellar-server in memory with `service` ("thrift1" or "thrift2") on a loopback port it
    picks; returns the process and that port."""
    flag = "--thrift1-listen" if service == "thrift1" else "--thrift-listen"
    args = [server_path, "--data", "", "--listen", "127.0.0.1:0", flag, "127.0.0.1:0",
            "--worker-threads", "2", "--event-loops", "1", "--log-level", "warn"]
    if framed:
        args.append("--thrift-framed")
    if compact:
        args.append("--thrift-compact")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    port = None
    for line in proc.stdout:
        if line.startswith(service + " on "):
            port = int(line.rsplit(":", 1)[1])
        if line.startswith("listening on "):
            break
    if port is None:
        proc.kill()
        sys.exit(f"cellar-server did not report its {service} port")
    return proc, port


def connect(port, client_class, binary_protocol):
    """A TSocket, then TBufferedTransport or TFramedTransport, then TCompactProtocol or
    `binary_protocol`; returns the client and its transport."""
    sock = TSocket.TSocket("127.0.0.1", port)
    transport = TTransport.TFramedTransport(sock) if framed else TTransport.TBufferedTransport(sock)
    protocol = TCompactProtocol.TCompactProtocol(transport) if compact else binary_protocol(transport)
    transport.open()
    return client_class(protocol), transport


def run(service, client_class, session, name, binary_protocol=TBinaryProtocol.TBinaryProtocol):
    """Runs `session(client)` against a fresh server, then exits 1 after listing the failed
    checks, or prints that session `name` passed."""
    proc, port = start_server(service)
    try:
        client, transport = connect(port, client_class, binary_protocol)
        try:
            session(client)
        finally:
            transport.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("ok: %s%s%s" % (name, " framed" if framed else "", " compact" if compact else ""))
