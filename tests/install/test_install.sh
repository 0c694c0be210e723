#!/usr/bin/env bash
# The install, as a user of it sees it: `meson install` into a scratch DESTDIR, then
# examples/consumer (a separate Meson project that only knows dependency('cellar')) is
# built against that tree through cellar.pc, linked with libcellar.so and with libcellar.a,
# and run embedded and, against the installed cellar-server, over RPC.
#
#   test_install.sh BUILD_DIR SOURCE_DIR      (run by `meson test --suite install`)
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cellar-install-XXXXXX")
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "test_install: $*" >&2; exit 1; }

dest=$work/dest
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "meson install failed"; }

pc=$(find "$dest" -name cellar.pc -path '*/pkgconfig/*')
[ -n "$pc" ] || fail "no cellar.pc installed"
libdir=$(dirname "$(dirname "$pc")")
prefix_dir=$dest$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix cellar)
echo "installed under $prefix_dir (libdir $libdir)"

# What a user gets.
for f in bin/cellar-server bin/cellar-shell share/cellar/cellar.capnp share/cellar/thrift/hbase.thrift share/cellar/thrift/Hbase.thrift \
         include/cellar/store.h include/cellar/ops.h include/cellar/schema.h include/cellar/status.h \
         include/cellar/connection.h include/cellar/client.h include/cellar/summary.h include/cellar/version.h; do
  [ -e "$prefix_dir/$f" ] || fail "not installed: $f"
done
[ -e "$libdir/libcellar.so" ] || fail "libcellar.so not installed in $libdir"
[ -e "$libdir/libcellar.a" ] || fail "libcellar.a not installed in $libdir"
if [ -n "${CELLAR_EXPECT_LOADGEN:-}" ]; then [ -x "$prefix_dir/bin/cellar-loadgen" ] || fail "cellar-loadgen not installed"; fi
cmp -s "$prefix_dir/share/cellar/cellar.capnp" "$src/schemas/cellar.capnp" || fail "the installed schema differs"
# Public headers include only each other and the standard library.
if grep -h '^#include "' "$prefix_dir"/include/cellar/*.h | grep -v '^#include "cellar/'; then
  fail "a public header includes a private one"
fi

# The consumer, found only through cellar.pc (the sysroot maps its paths into DESTDIR).
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest
meson setup "$work/consumer" "$src/examples/consumer" -Dstatic_too=true >"$work/setup.log" 2>&1 ||
  { cat "$work/setup.log" >&2; fail "the consumer does not configure"; }
ninja -C "$work/consumer" >"$work/ninja.log" 2>&1 || { cat "$work/ninja.log" >&2; fail "the consumer does not build"; }

shared=$work/consumer/consumer
static=$work/consumer/consumer-static
readelf -d "$shared" | grep -q 'NEEDED.*libcellar\.so' || fail "consumer is not linked with libcellar.so"
if readelf -d "$static" | grep -q 'NEEDED.*libcellar'; then fail "consumer-static needs libcellar.so"; fi

expect() {  # expect OUTPUT_FILE LINE
  grep -qxF "$2" "$1" || { echo "--- got:" >&2; cat "$1" >&2; fail "missing line: $2"; }
}

# Embedded, twice on one directory: the second run finds the table the first made.
export LD_LIBRARY_PATH=$libdir
"$shared" "$work/data" >"$work/out1" || { cat "$work/out1" >&2; fail "consumer (shared) failed"; }
expect "$work/out1" "cellar $(PKG_CONFIG_SYSROOT_DIR= pkg-config --modversion cellar)"
expect "$work/out1" "row1 msg:text = hello from an embedded store"
"$shared" "$work/data" >"$work/out2" || { cat "$work/out2" >&2; fail "consumer (shared) failed on reopen"; }
expect "$work/out2" "row1 msg:text = hello from an embedded store"
env -u LD_LIBRARY_PATH "$static" "$work/data-static" >"$work/out3" || { cat "$work/out3" >&2; fail "consumer-static failed"; }
expect "$work/out3" "row1 msg:text = hello from an embedded store"

# Over RPC, against the installed server (in memory, any free loopback ports; the metrics
# endpoint set in its TOML file).
cat >"$work/cellar.toml" <<'TOML'
listen = "127.0.0.1:0"
data = ""
metrics_listen = "127.0.0.1:0"
TOML
"$prefix_dir/bin/cellar-server" --config "$work/cellar.toml" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
port=
for _ in $(seq 300); do
  port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/server.out")
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; fail "the installed cellar-server exited"; }
  sleep 0.1
done
[ -n "$port" ] || fail "the installed cellar-server did not start"
metrics_port=$(sed -n 's/^metrics on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/server.out")
[ -n "$metrics_port" ] || fail "no metrics port in: $(cat "$work/server.out")"
"$shared" --connect "127.0.0.1:$port" >"$work/out4" || { cat "$work/out4" >&2; fail "consumer --connect failed"; }
expect "$work/out4" "row1 msg:text = hello over RPC"

# The metrics endpoint and the status page of that server (HTTP/1.1 by hand: no curl needed).
http_get() {  # http_get PATH > body (headers dropped)
  exec 3<>"/dev/tcp/127.0.0.1/$metrics_port"
  printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$1" >&3
  timeout 10 cat <&3 | tr -d '\r' | sed '1,/^$/d'
  exec 3<&-
}
http_get /metrics >"$work/metrics"
expect "$work/metrics" 'cellar_table_cells{table="greetings"} 1'
expect "$work/metrics" 'cellar_table_partitions{table="greetings"} 2'
expect "$work/metrics" 'cellar_requests_total{protocol="frames",op="put",code="OK"} 1'
expect "$work/metrics" 'cellar_requests_total{protocol="rpc",op="create_table",code="OK"} 1'
expect "$work/metrics" '# TYPE cellar_request_duration_seconds histogram'
http_get / >"$work/page.html"
grep -q '<td>greetings</td><td>msg</td><td>KEY(K) 2</td>' "$work/page.html" || { cat "$work/page.html" >&2; fail "the status page lacks the table"; }
kill -TERM "$server_pid"
wait "$server_pid" || fail "cellar-server did not exit cleanly"
server_pid=
echo "ok: installed, consumer built against cellar.pc (shared and static), ran embedded and over RPC; metrics and status page served"
