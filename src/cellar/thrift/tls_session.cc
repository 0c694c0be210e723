#include "thrift/tls_session.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <climits>

#include "rpc/tls.h"

namespace cellar::thrift {

namespace {

// The session's output: a BIO that appends what OpenSSL writes to a string, which the loop
// sends from and then clears (a memory BIO clears its whole buffer on every reset).
int output_write(BIO* b, const char* p, int n) {
  static_cast<std::string*>(BIO_get_data(b))->append(p, static_cast<std::size_t>(n));
  return n;
}

long output_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int output_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

BIO* output_bio(std::string* out) {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "cellar tls output");
    BIO_meth_set_write(m, output_write);
    BIO_meth_set_ctrl(m, output_ctrl);
    BIO_meth_set_create(m, output_create);
    return m;
  }();
  BIO* b = BIO_new(method);
  if (b) BIO_set_data(b, out);
  return b;
}

// What a session's output() holds between replies: the buffer grown by one large reply
// is not kept for every later one.
constexpr std::size_t kept_output_bytes = 1u << 20;

}  // namespace

std::unique_ptr<tls_session> tls_session::accept(ssl_ctx_st* ctx) {
  SSL* ssl = SSL_new(ctx);
  if (!ssl) return nullptr;
  std::unique_ptr<tls_session> s(new tls_session(ssl));
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = output_bio(&s->out_);
  if (!in || !out) {
    BIO_free(in);
    BIO_free(out);
    return nullptr;
  }
  SSL_set_bio(ssl, in, out);  // the SSL owns both
  SSL_set_accept_state(ssl);
  return s;
}

tls_session::~tls_session() { SSL_free(ssl_); }

void tls_session::received(const char* p, std::size_t n) {
  while (n > 0) {
    const int chunk = static_cast<int>(std::min<std::size_t>(n, INT_MAX));
    const int put = BIO_write(SSL_get_rbio(ssl_), p, chunk);
    if (put <= 0) return;  // out of memory: the next read fails the session
    p += put;
    n -= static_cast<std::size_t>(put);
  }
}

tls_session::read_result tls_session::read(char* p, std::size_t n, std::size_t* got) {
  ERR_clear_error();
  const int r = SSL_read(ssl_, p, static_cast<int>(std::min<std::size_t>(n, INT_MAX)));
  if (r > 0) {
    *got = static_cast<std::size_t>(r);
    return read_result::data;
  }
  *got = 0;
  switch (SSL_get_error(ssl_, r)) {
    case SSL_ERROR_WANT_READ: return read_result::need_more;
    case SSL_ERROR_ZERO_RETURN: return read_result::closed;
    default: why_ = rpc::openssl_errors(); return read_result::failed;
  }
}

bool tls_session::write(const std::uint8_t* p, std::size_t n) {
  ERR_clear_error();
  while (n > 0) {
    const int r = SSL_write(ssl_, p, static_cast<int>(std::min<std::size_t>(n, 1u << 30)));
    if (r <= 0) {
      why_ = rpc::openssl_errors();
      return false;
    }
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

std::string_view tls_session::output() const { return out_; }

void tls_session::take() {
  out_.clear();
  if (out_.capacity() > kept_output_bytes) out_.shrink_to_fit();
}

bool tls_session::handshake_done() const { return SSL_is_init_finished(ssl_) == 1; }

}  // namespace cellar::thrift
