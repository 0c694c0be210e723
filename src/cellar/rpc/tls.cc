#include "rpc/tls.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cellar::rpc {

std::string openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no detail" : out;
}

namespace {

result<std::string> read_pem(const std::string& file, const char* what) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return status{code::io_error,
                  std::string("cannot read the ") + what + " file " + file + ": " + std::strerror(errno)};
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

struct bio_deleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct x509_deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct pkey_deleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, bio_deleter> bio_of(const std::string& pem) {
  return std::unique_ptr<BIO, bio_deleter>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// A BIO over a socket that writes with MSG_NOSIGNAL: OpenSSL's own socket BIO writes with
// write(2), which raises SIGPIPE in the caller when the server has gone.
int bio_write(BIO* b, const char* p, int n) {
  const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(b)));
  BIO_clear_retry_flags(b);
  ssize_t r;
  do r = ::send(fd, p, static_cast<std::size_t>(n), MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(b);
  return static_cast<int>(r);
}

int bio_read(BIO* b, char* p, int n) {
  const int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(b)));
  BIO_clear_retry_flags(b);
  ssize_t r;
  do r = ::recv(fd, p, static_cast<std::size_t>(n), 0);
  while (r < 0 && errno == EINTR);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_read(b);
  return static_cast<int>(r);
}

long bio_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

BIO* socket_bio(int fd) {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "cellar socket");
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    return m;
  }();
  BIO* b = BIO_new(method);
  if (b) BIO_set_data(b, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)));
  return b;
}

}  // namespace

result<tls_server_keys> load_server_keys(const std::string& cert_file, const std::string& key_file) {
  auto cert = read_pem(cert_file, "TLS certificate");
  if (!cert) return cert.error();
  auto key = read_pem(key_file, "TLS key");
  if (!key) return key.error();
  ERR_clear_error();
  std::unique_ptr<X509, x509_deleter> x(PEM_read_bio_X509(bio_of(cert.value()).get(), nullptr, nullptr, nullptr));
  if (!x) return status{code::invalid_argument, "no PEM certificate in " + cert_file + ": " + openssl_errors()};
  std::unique_ptr<EVP_PKEY, pkey_deleter> k(
      PEM_read_bio_PrivateKey(bio_of(key.value()).get(), nullptr, nullptr, nullptr));
  if (!k)
    return status{code::invalid_argument, "no unencrypted PEM private key in " + key_file + ": " + openssl_errors()};
  if (X509_check_private_key(x.get(), k.get()) != 1) {
    ERR_clear_error();
    return status{code::invalid_argument,
                  "the key in " + key_file + " does not belong to the certificate in " + cert_file};
  }
  return tls_server_keys{std::move(cert.value()), std::move(key.value())};
}

kj::Own<kj::TlsContext> server_tls_context(const tls_server_keys& keys, kj::Timer& timer,
                                           kj::Duration handshake_timeout) {
  kj::TlsKeypair pair{kj::TlsPrivateKey(kj::StringPtr(keys.key_pem.c_str())),
                      kj::TlsCertificate(kj::StringPtr(keys.certificate_pem.c_str()))};
  kj::TlsContext::Options o;
  o.useSystemTrustStore = false;
  o.minVersion = kj::TlsVersion::TLS_1_2;
  o.cipherList = tls_server_ciphers;
  o.defaultKeypair = pair;
  o.timer = timer;
  o.acceptTimeout = handshake_timeout;
  return kj::heap<kj::TlsContext>(o);  // copies what it needs from `pair`
}

result<std::shared_ptr<ssl_ctx_st>> server_ssl_context(const tls_server_keys& keys) {
  ERR_clear_error();
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) return status{code::internal, "SSL_CTX_new: " + openssl_errors()};
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  if (SSL_CTX_set_cipher_list(ctx.get(), tls_server_ciphers) != 1)
    return status{code::internal, "SSL_CTX_set_cipher_list: " + openssl_errors()};
  // The file's first certificate is the server's; the rest are its chain, sent with it.
  auto certs = bio_of(keys.certificate_pem);
  std::unique_ptr<X509, x509_deleter> leaf(PEM_read_bio_X509_AUX(certs.get(), nullptr, nullptr, nullptr));
  if (!leaf || SSL_CTX_use_certificate(ctx.get(), leaf.get()) != 1)
    return status{code::invalid_argument, "the TLS certificate: " + openssl_errors()};
  while (X509* more = PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx.get(), more) != 1) {
      X509_free(more);
      return status{code::invalid_argument, "the TLS certificate chain: " + openssl_errors()};
    }
  }
  ERR_clear_error();  // the end of the file, reported as an error by the last read
  std::unique_ptr<EVP_PKEY, pkey_deleter> key(
      PEM_read_bio_PrivateKey(bio_of(keys.key_pem).get(), nullptr, nullptr, nullptr));
  if (!key || SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 || SSL_CTX_check_private_key(ctx.get()) != 1)
    return status{code::invalid_argument, "the TLS key: " + openssl_errors()};
  return std::shared_ptr<ssl_ctx_st>(std::move(ctx));
}

kj::Promise<void> accept_tls(kj::TlsContext& tls, kj::Own<socket_stream> stream, std::string peer, kj::Timer& timer,
                             connection_start& begin) {
  auto* raw = stream.get();
  auto first =
      raw->first_byte().then([&tls, &begin, stream = kj::mv(stream), peer](int b) mutable -> kj::Promise<void> {
        if (b < 0) return kj::READY_NOW;  // closed before a byte
        if (b != tls_handshake_byte) {
          spdlog::warn("cellar-server: a plain-text connection from {} on a TLS port: refusing it", peer);
          begin(kj::mv(stream), peer,
                status{code::unavailable, "this server requires TLS: connect with its CA certificate (--tls-ca)"});
          return kj::READY_NOW;
        }
        return tls.wrapServer(kj::mv(stream))
            .then([&begin, peer](kj::Own<kj::AsyncIoStream> s) { begin(kj::mv(s), peer, status::ok()); },
                  [peer](kj::Exception&& e) {
                    spdlog::warn("cellar-server: TLS handshake with {} failed: {}", peer, e.getDescription().cStr());
                  });
      });
  return first.exclusiveJoin(timer.afterDelay(10 * kj::SECONDS).then([peer] {
    spdlog::warn("cellar-server: closing the connection from {}: no TLS handshake within 10 s", peer);
  }));
}

result<std::string> load_ca(const std::string& ca_file) {
  auto pem = read_pem(ca_file, "TLS CA");
  if (!pem) return pem.error();
  ERR_clear_error();
  std::unique_ptr<X509, x509_deleter> x(PEM_read_bio_X509(bio_of(pem.value()).get(), nullptr, nullptr, nullptr));
  if (!x) return status{code::invalid_argument, "no PEM certificate in " + ca_file + ": " + openssl_errors()};
  return pem;
}

kj::Own<kj::TlsContext> client_tls_context(const std::string& ca_pem) {
  kj::TlsContext::Options o;
  o.useSystemTrustStore = false;
  o.minVersion = kj::TlsVersion::TLS_1_2;
  // Every certificate of the file (kj's TlsCertificate keeps up to ten as one chain).
  auto ca = kj::heap<kj::TlsCertificate>(kj::StringPtr(ca_pem.c_str()));
  o.trustedCertificates = kj::arrayPtr(ca.get(), 1);
  return kj::heap<kj::TlsContext>(o).attach(kj::mv(ca));
}

std::string host_of(const std::string& address) {
  if (!address.empty() && address.front() == '[') {
    const auto close = address.find(']');
    return close == std::string::npos ? address : address.substr(1, close - 1);
  }
  const auto colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

result<std::unique_ptr<tls_socket>> tls_socket::handshake(int fd, const std::string& ca_file,
                                                          const std::string& server_name) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return status{code::internal, "SSL_CTX_new: " + openssl_errors()};
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr) != 1) {
    status s{code::invalid_argument, "cannot load the TLS CA file " + ca_file + ": " + openssl_errors()};
    SSL_CTX_free(ctx);
    return s;
  }
  SSL* ssl = SSL_new(ctx);
  std::unique_ptr<tls_socket> t(new tls_socket(ctx, ssl));
  if (!ssl) return status{code::internal, "SSL_new: " + openssl_errors()};
  SSL_set_tlsext_host_name(ssl, server_name.c_str());
  SSL_set1_host(ssl, server_name.c_str());
  BIO* bio = socket_bio(fd);
  if (!bio) return status{code::internal, "BIO_new: " + openssl_errors()};
  SSL_set_bio(ssl, bio, bio);  // the SSL owns it
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const int r = SSL_connect(ssl);
  ::fcntl(fd, F_SETFL, flags);
  if (r != 1) {
    const long verify = SSL_get_verify_result(ssl);
    std::string why = verify != X509_V_OK ? std::string("the server's certificate is not trusted: ") +
                                                X509_verify_cert_error_string(verify)
                                          : "TLS handshake failed: " + openssl_errors();
    ERR_clear_error();
    return status{code::unavailable, why};
  }
  return t;
}

tls_socket::~tls_socket() {
  if (ssl_) SSL_free(static_cast<SSL*>(ssl_));
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

ssize_t tls_socket::result_of(int r) {
  if (r > 0) return r;
  switch (SSL_get_error(static_cast<SSL*>(ssl_), r)) {
    case SSL_ERROR_ZERO_RETURN: return 0;
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE: errno = EAGAIN; return -1;
    case SSL_ERROR_SYSCALL:
      ERR_clear_error();
      if (errno == 0) return 0;  // the peer closed without a TLS close_notify
      return -1;
    default:
      ERR_clear_error();
      errno = EPROTO;
      return -1;
  }
}

ssize_t tls_socket::send(const void* p, std::size_t n) {
  ERR_clear_error();
  errno = 0;
  return result_of(SSL_write(static_cast<SSL*>(ssl_), p, static_cast<int>(std::min<std::size_t>(n, 1 << 30))));
}

ssize_t tls_socket::recv(void* p, std::size_t n) {
  ERR_clear_error();
  errno = 0;
  return result_of(SSL_read(static_cast<SSL*>(ssl_), p, static_cast<int>(std::min<std::size_t>(n, 1 << 30))));
}

std::size_t tls_socket::pending() const { return static_cast<std::size_t>(SSL_pending(static_cast<SSL*>(ssl_))); }

}  // namespace cellar::rpc
