// rpc/tls.h: TLS for the server's port and its clients.
//
// The server and the Cap'n Proto client use kj-tls (kj/compat/tls.h, OpenSSL underneath):
// the server wraps each accepted socket before it looks at the protocol, so RPC and frames
// share the port and its certificate. The frame clients (rpc/frames.h and the load
// generator's engine) talk over plain file descriptors, so they use tls_socket, OpenSSL on
// the descriptor, with the same checks as kj-tls: the server's certificate must chain to a
// CA of the client's CA file (the system's CAs are not trusted) and must name the server
// (its subjectAltName DNS entries, matched as kj-tls does: a client that connects to an IP
// address needs that address as a DNS entry, or a tls_server_name the certificate names).
// TLS 1.2 or later.
#pragma once

#include <kj/async-io.h>
#include <kj/compat/tls.h>

#include <sys/types.h>
#include <functional>
#include <memory>
#include <string>

#include "cellar/status.h"
#include "rpc/socket_stream.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace cellar::rpc {

// The first byte of a TLS connection (a handshake record): a plain client's first byte
// (the frame magic's 'C', or a Cap'n Proto segment count) is never this.
inline constexpr int tls_handshake_byte = 0x16;

// The server's certificate chain and private key, read from PEM files.
struct tls_server_keys {
  std::string certificate_pem;
  std::string key_pem;
};
// Reads and checks `cert_file` and `key_file` (INVALID_ARGUMENT or IO_ERROR naming the file).
result<tls_server_keys> load_server_keys(const std::string& cert_file, const std::string& key_file);
// The TLS 1.2 cipher suites a server offers: Mozilla's "intermediate" list without classic
// Diffie-Hellman (kj-tls's own default). TLS 1.3 suites are OpenSSL's defaults.
inline constexpr const char* tls_server_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// A kj TLS context serving `keys`; a handshake not done within `handshake_timeout` fails.
kj::Own<kj::TlsContext> server_tls_context(const tls_server_keys& keys, kj::Timer& timer,
                                           kj::Duration handshake_timeout);
// An OpenSSL server context serving `keys` with the settings of server_tls_context (TLS 1.2
// or later, tls_server_ciphers, no client certificates), for a server that runs OpenSSL on
// its own event loop (thrift/event_server.h) so that its port behaves as the data port.
// INVALID_ARGUMENT when OpenSSL refuses the keys.
result<std::shared_ptr<ssl_ctx_st>> server_ssl_context(const tls_server_keys& keys);

// Starts serving a connection (rpc/server.cc): `refusal` set, every login gets it, then
// the connection closes.
using connection_start = std::function<void(kj::Own<kj::AsyncIoStream> stream, std::string peer, status refusal)>;
// A connection accepted on a TLS port: its handshake, then `begin(tls_stream, peer, ok)`.
// A client whose first byte is not a TLS handshake goes to `begin` in plain text with a
// refusal saying that TLS is required; one that sends nothing for 10 s, or fails the
// handshake, is closed (logged with `peer`). `tls` and `begin` must outlive the promise.
kj::Promise<void> accept_tls(kj::TlsContext& tls, kj::Own<socket_stream> stream, std::string peer, kj::Timer& timer,
                             connection_start& begin);

// Reads a PEM file of CA certificates for a client (INVALID_ARGUMENT or IO_ERROR).
result<std::string> load_ca(const std::string& ca_file);
// A kj TLS context that trusts only the certificates of `ca_pem`.
kj::Own<kj::TlsContext> client_tls_context(const std::string& ca_pem);

// OpenSSL's errors queued on this thread, as one line ("no detail" when none), and the
// queue emptied.
std::string openssl_errors();

// The host of "host:port" or "[v6]:port" (the name a server's certificate must carry
// unless the client says another).
std::string host_of(const std::string& address);

// TLS over a connected socket, as a client, with OpenSSL. Use from one thread.
class tls_socket {
 public:
  // Handshakes over `fd` (blocking until done, whatever the descriptor's mode; the mode is
  // left as it was) and checks the server's certificate against `ca_file` and `server_name`.
  // UNAVAILABLE saying why when the handshake or the check fails. Does not take `fd`.
  static result<std::unique_ptr<tls_socket>> handshake(int fd, const std::string& ca_file,
                                                       const std::string& server_name);
  ~tls_socket();
  tls_socket(const tls_socket&) = delete;
  tls_socket& operator=(const tls_socket&) = delete;

  // As send(2) and recv(2): bytes moved, 0 at the end of the stream (recv), or -1 with
  // errno set (EAGAIN when a non-blocking socket must wait; EPROTO for a TLS error).
  ssize_t send(const void* p, std::size_t n);
  ssize_t recv(void* p, std::size_t n);
  // Bytes decrypted and waiting in the TLS layer (readable without the socket).
  std::size_t pending() const;

 private:
  tls_socket(void* ctx, void* ssl) : ctx_(ctx), ssl_(ssl) {}
  ssize_t result_of(int r);
  void* ctx_;  // SSL_CTX*
  void* ssl_;  // SSL*
};

}  // namespace cellar::rpc
