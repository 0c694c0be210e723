// TLS on the server's port (rpc/tls.h): both protocols through one certificate, a plain
// client told that TLS is required, a client that does not trust the server's CA (or
// expects another name) refused, and a server that refuses a bad key pair at start.
#include <catch2/catch.hpp>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <string>

#include "cellar/client.h"
#include "rpc/frames.h"
#include "rpc/tls.h"
#include "served_store.h"
#include "test_certs.h"

namespace {

using cellar::code;
using cellar::rpc::frame_client;
using cellar::rpc::frame_client_options;

cellar::rpc::server_options tls_options() {
  const auto& c = test_certs::get();
  auto so = loopback_options("s3cret");
  so.tls_cert_file = c.server_cert;
  so.tls_key_file = c.server_key;
  return so;
}

std::string address_of(const served_store& s) { return "127.0.0.1:" + std::to_string(s.server->port()); }

frame_client_options frames_with(const std::string& ca, const std::string& name = "") {
  frame_client_options o;
  o.token = "s3cret";
  o.tls_ca = ca;
  o.tls_server_name = name;
  return o;
}

cellar::rpc::client_options client_with(const std::string& ca, bool frames, const std::string& name = "") {
  cellar::rpc::client_options o;
  o.token = "s3cret";
  o.tls_ca = ca;
  o.frames = frames;
  o.tls_server_name = name;
  return o;
}

}  // namespace

TEST_CASE("tls: both protocols work through the server's certificate", "[rpc][tls]") {
  served_store s(cellar::partition_spec::hash(3), 100, tls_options());
  const auto& certs = test_certs::get();
  // Frames, with the CA.
  auto f = frame_client::connect(address_of(s), frames_with(certs.ca));
  REQUIRE(f);
  auto r = f.value()->batch("t", {cellar::get(row_name(7)), cellar::put("new").add("f", "q", 1, "over tls")});
  REQUIRE(r);
  CHECK((*r)[0].row.cells.at(0).value == "v7");
  CHECK((*r)[1].st.is_ok());
  auto page = f.value()->scan("t", cellar::scan(), 1000);
  REQUIRE(page);
  CHECK(page->rows.size() == 101);
  // Cap'n Proto RPC alone, and the library's usual pair (RPC plus frames for batches).
  for (bool frames : {false, true}) {
    auto c = cellar::rpc::connect(address_of(s), client_with(certs.ca, frames));
    REQUIRE(c);
    auto got = c.value()->batch("t", {cellar::get("new")});
    REQUIRE(got.size() == 1);
    CHECK(got[0].row.cells.at(0).value == "over tls");
    auto rows = c.value()->scan("t", cellar::scan().caching(7));
    REQUIRE(rows);
    auto all = rows.value()->next(1000);
    REQUIRE(all);
    CHECK(all->size() == 101);
    auto tables = c.value()->list_tables();
    REQUIRE(tables);
    CHECK(tables->size() == 1);
  }
  // The name the certificate carries, given instead of the address's host.
  auto named = cellar::rpc::connect(address_of(s), client_with(certs.ca, true, "localhost"));
  CHECK(named);
  // The token still counts over TLS.
  auto o = frames_with(certs.ca);
  o.token = "guess";
  auto wrong = frame_client::connect(address_of(s), o);
  REQUIRE(!wrong);
  CHECK(wrong.error().code() == code::permission_denied);
}

TEST_CASE("tls: a plain-text client is told the server requires TLS", "[rpc][tls]") {
  served_store s(cellar::partition_spec{}, 10, tls_options());
  const std::string why = "this server requires TLS: connect with its CA certificate (--tls-ca)";
  auto f = frame_client::connect(address_of(s), "s3cret");
  REQUIRE(!f);
  CHECK(f.error().code() == code::unavailable);
  CHECK(f.error().message() == why);
  auto c = cellar::rpc::connect(address_of(s), client_with("", false));
  REQUIRE(!c);
  CHECK(c.error().code() == code::unavailable);
  CHECK(c.error().message() == why);
  // Nothing of theirs ran, and the server still serves TLS clients.
  auto ok = frame_client::connect(address_of(s), frames_with(test_certs::get().ca));
  CHECK(ok);
}

TEST_CASE("tls: a client that does not trust the server's CA, or expects another name, is refused", "[rpc][tls]") {
  served_store s(cellar::partition_spec{}, 10, tls_options());
  const auto& certs = test_certs::get();
  auto f = frame_client::connect(address_of(s), frames_with(certs.other_ca));
  REQUIRE(!f);
  CHECK(f.error().code() == code::unavailable);
  CHECK_THAT(f.error().message(), Catch::Contains("the server's certificate is not trusted"));
  auto c = cellar::rpc::connect(address_of(s), client_with(certs.other_ca, false));
  REQUIRE(!c);
  CHECK(c.error().code() == code::unavailable);
  CHECK_THAT(c.error().message(), Catch::Contains("certificate is not trusted"));
  // The right CA, but a name the certificate does not carry.
  auto fn = frame_client::connect(address_of(s), frames_with(certs.ca, "db.example.com"));
  REQUIRE(!fn);
  CHECK_THAT(fn.error().message(), Catch::Contains("hostname mismatch"));
  auto cn = cellar::rpc::connect(address_of(s), client_with(certs.ca, false, "db.example.com"));
  REQUIRE(!cn);
  CHECK_THAT(cn.error().message(), Catch::Contains("hostname mismatch"));
  // A CA file that is not one.
  auto bad = cellar::rpc::connect(address_of(s), client_with(certs.server_key, false));
  REQUIRE(!bad);
  CHECK(bad.error().code() == code::invalid_argument);
  auto missing = cellar::rpc::connect(address_of(s), client_with(certs.dir + "/nope.pem", false));
  REQUIRE(!missing);
  CHECK(missing.error().code() == code::io_error);
}

TEST_CASE("tls: a TLS client against a plain-text server fails cleanly", "[rpc][tls]") {
  served_store s(cellar::partition_spec{}, 10, loopback_options("s3cret"));
  auto f = frame_client::connect(address_of(s), frames_with(test_certs::get().ca));
  REQUIRE(!f);
  CHECK(f.error().code() == code::unavailable);
  auto c = cellar::rpc::connect(address_of(s), client_with(test_certs::get().ca, false));
  REQUIRE(!c);
  CHECK(c.error().code() == code::unavailable);
  // The server is unharmed.
  auto plain = frame_client::connect(address_of(s), "s3cret");
  CHECK(plain);
}

TEST_CASE("tls: the server refuses to start without a matching certificate and key", "[rpc][tls]") {
  const auto& certs = test_certs::get();
  auto store = cellar::store::open(cellar::store_options{});
  REQUIRE(store);
  auto only_cert = loopback_options();
  only_cert.tls_cert_file = certs.server_cert;
  auto r = cellar::rpc::server::start(*store.value(), only_cert);
  REQUIRE(!r);
  CHECK(r.error().code() == code::invalid_argument);
  CHECK(r.error().message() == "TLS needs both a certificate and its key (--tls-cert and --tls-key)");
  auto mismatched = loopback_options();
  mismatched.tls_cert_file = certs.server_cert;
  mismatched.tls_key_file = certs.other_key;
  r = cellar::rpc::server::start(*store.value(), mismatched);
  REQUIRE(!r);
  CHECK(r.error().code() == code::invalid_argument);
  CHECK(r.error().message() ==
        "the key in " + certs.other_key + " does not belong to the certificate in " + certs.server_cert);
  auto not_pem = loopback_options();
  not_pem.tls_cert_file = certs.dir + "/ext.cnf";
  not_pem.tls_key_file = certs.server_key;
  r = cellar::rpc::server::start(*store.value(), not_pem);
  REQUIRE(!r);
  CHECK(r.error().code() == code::invalid_argument);
  CHECK_THAT(r.error().message(), Catch::StartsWith("no PEM certificate in " + certs.dir + "/ext.cnf"));
  auto missing = loopback_options();
  missing.tls_cert_file = certs.dir + "/nope.pem";
  missing.tls_key_file = certs.server_key;
  r = cellar::rpc::server::start(*store.value(), missing);
  REQUIRE(!r);
  CHECK(r.error().code() == code::io_error);
}
