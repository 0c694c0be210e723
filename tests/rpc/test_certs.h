// Certificates for the TLS tests, made with the openssl command into a temporary
// directory (removed at exit): a CA, a server certificate it signed (for "localhost",
// 127.0.0.1 as an IP and as a DNS name), and a second CA that signed nothing the server has.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

struct test_certs {
  std::string dir;
  std::string ca, server_cert, server_key, other_ca, other_key;

  static const test_certs& get() {
    static test_certs c;
    return c;
  }

 private:
  test_certs() {
    char tmpl[] = "/tmp/cellar-tls-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    ca = dir + "/ca.pem";
    server_cert = dir + "/server.pem";
    server_key = dir + "/server.key";
    other_ca = dir + "/other-ca.pem";
    other_key = dir + "/other-ca.key";
    std::ofstream(dir + "/ext.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:127.0.0.1\n";
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes ";
    const std::string script =
        "cd " + dir + " && openssl req -x509" + ec + "-keyout ca.key -out ca.pem -days 2 -subj /CN=cellar-test-ca" +
        " && openssl req -x509" + ec + "-keyout other-ca.key -out other-ca.pem -days 2 -subj /CN=cellar-other-ca" +
        " && openssl req" + ec + "-keyout server.key -out server.csr -subj /CN=localhost" +
        " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2" +
        " -extfile ext.cnf";
    REQUIRE(std::system(("(" + script + ") >/dev/null 2>&1").c_str()) == 0);
  }
  ~test_certs() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};
