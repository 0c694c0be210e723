"""What the Python Thrift clients of these tests share: their arguments, a cellar-server to
talk to, a connection the way the client library makes one, and the checks.

    <script> CELLAR_SERVER GEN_PY_DIR [--framed] [--compact] [--tls]

With --tls the server has a certificate made for the run (as tests/rpc/test_certs.h makes
them) and the client checks it against the run's CA.
"""
import atexit
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile

from thrift.protocol import TBinaryProtocol, TCompactProtocol
from thrift.transport import TSocket, TSSLSocket, TTransport

server_path, gen_dir = sys.argv[1], sys.argv[2]
framed = "--framed" in sys.argv[3:]
compact = "--compact" in sys.argv[3:]
tls = "--tls" in sys.argv[3:]
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


def make_certs():
    """A CA and a server certificate it signed for localhost and 127.0.0.1, in a temporary
    directory removed at exit; returns (ca, cert, key) paths."""
    d = tempfile.mkdtemp(prefix="cellar-thrift-tls-")
    atexit.register(shutil.rmtree, d, True)
    with open(d + "/ext.cnf", "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    for cmd in (["openssl", "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                 "-subj", "/CN=cellar-test-ca"],
                ["openssl", "req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"],
                ["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf"]):
        subprocess.run(cmd, cwd=d, check=True, capture_output=True)
    return d + "/ca.pem", d + "/server.pem", d + "/server.key"


certs = make_certs() if tls else None


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
    if tls:
        args += ["--tls-cert", certs[1], "--tls-key", certs[2]]
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
    if tls:
        context = ssl.create_default_context(cafile=certs[0])  # checks the name too
        sock = TSSLSocket.TSSLSocket("127.0.0.1", port, ssl_context=context, server_hostname="localhost")
    else:
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
    print("ok: %s%s%s%s" % (name, " framed" if framed else "", " compact" if compact else "", " TLS" if tls else ""))
