// thrift/tls_session.h: one connection's TLS, driven by an event loop that does its own
// socket I/O (thrift/event_server.h).
//
// OpenSSL works between two memory buffers: the loop hands it the bytes it received
// (received()), takes the plaintext out (read()), hands it plaintext to send (write()) and
// sends what OpenSSL left for the peer (output()). OpenSSL never touches the socket, so it
// never blocks the loop and never writes with write(2) (the loop's send(2) passes
// MSG_NOSIGNAL); the handshake advances as the client's bytes arrive, and a record that
// arrives in pieces waits in OpenSSL until it is whole.
//
// Thread safety: one thread at a time (the connection's loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct ssl_ctx_st;  // OpenSSL's SSL_CTX
struct ssl_st;      // OpenSSL's SSL

namespace cellar::thrift {

class tls_session {
 public:
  // The server side of a connection with `ctx`'s keys and settings; nullptr when OpenSSL
  // cannot make one (out of memory).
  static std::unique_ptr<tls_session> accept(ssl_ctx_st* ctx);
  ~tls_session();
  tls_session(const tls_session&) = delete;
  tls_session& operator=(const tls_session&) = delete;

  // Hands OpenSSL `n` bytes received from the peer.
  void received(const char* p, std::size_t n);

  enum class read_result : std::uint8_t { data, need_more, closed, failed };
  // Advances the handshake and decrypts into p[0, n): `data` with *got > 0 bytes; `need_more`
  // when what has arrived holds no more plaintext; `closed` when the peer ended the session
  // (close_notify); `failed` when the peer broke the protocol (why() says how).
  read_result read(char* p, std::size_t n, std::size_t* got);

  // Encrypts p[0, n) into output(); false when the session has failed.
  bool write(const std::uint8_t* p, std::size_t n);

  // The bytes for the peer (handshake messages, records, alerts) not yet taken; take() drops
  // them once the loop has them.
  std::string_view output() const;
  void take();

  bool handshake_done() const;
  // Why the last read or write failed.
  const std::string& why() const { return why_; }

 private:
  explicit tls_session(ssl_st* ssl) : ssl_(ssl) {}
  ssl_st* ssl_;
  std::string out_;  // output(): what OpenSSL wrote for the peer (its write BIO appends here)
  std::string why_;
};

}  // namespace cellar::thrift
