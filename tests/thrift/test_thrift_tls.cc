// TLS on the gateway's port: served by the same event loops as plain connections, so that a
// client stalled in its handshake or in the middle of a record, or one that fails, holds up
// no other; TLS connections count against the connection limit.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <atomic>
#include <thread>
#include <vector>

#include "thrift_fixture.h"

namespace {

namespace at = apache::thrift;

// A TLS client on a raw socket, with OpenSSL between memory buffers, so that the test
// decides which of its bytes reach the gateway and when: half a ClientHello, half a record.
class raw_tls_client {
 public:
  // Connects to the gateway on `port`; nothing is sent yet. `max_version` (TLS1_1_VERSION...)
  // caps what the client offers; 0: no cap.
  explicit raw_tls_client(std::uint16_t port, int max_version = 0) : fd_(connect_to(port)) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    REQUIRE(ctx_ != nullptr);
    if (max_version != 0) {
      SSL_CTX_set_security_level(ctx_, 0);  // lets OpenSSL offer versions before TLS 1.2
      SSL_CTX_set_min_proto_version(ctx_, TLS1_VERSION);
      SSL_CTX_set_max_proto_version(ctx_, max_version);
    }
    REQUIRE(SSL_CTX_load_verify_locations(ctx_, test_certs::get().ca.c_str(), nullptr) == 1);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    ssl_ = SSL_new(ctx_);
    REQUIRE(ssl_ != nullptr);
    SSL_set_bio(ssl_, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
    SSL_set_connect_state(ssl_);
  }
  ~raw_tls_client() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
  }
  raw_tls_client(const raw_tls_client&) = delete;
  raw_tls_client& operator=(const raw_tls_client&) = delete;

  int fd() const { return fd_; }

  // The ClientHello, not sent.
  std::string client_hello() {
    SSL_do_handshake(ssl_);
    return output();
  }
  // Runs the handshake to its end, sending what OpenSSL has for the server (a ClientHello
  // taken by client_hello() is the caller's to send). False when it failed.
  bool handshake() {
    for (;;) {
      const int r = SSL_do_handshake(ssl_);
      send_raw(output());
      if (r == 1) return true;
      if (SSL_get_error(ssl_, r) != SSL_ERROR_WANT_READ || !receive()) {
        ERR_clear_error();
        return false;
      }
    }
  }
  // The records that carry `plain`, not sent.
  std::string seal(const std::string& plain) {
    REQUIRE(SSL_write(ssl_, plain.data(), static_cast<int>(plain.size())) == static_cast<int>(plain.size()));
    return output();
  }
  void send_raw(const std::string& bytes) {
    if (!bytes.empty())
      REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
  }
  // Up to `n` bytes of plaintext, at least one; 0 at the end of the stream or on an error.
  std::uint32_t read_some(std::uint8_t* p, std::uint32_t n) {
    for (;;) {
      const int r = SSL_read(ssl_, p, static_cast<int>(n));
      if (r > 0) return static_cast<std::uint32_t>(r);
      if (SSL_get_error(ssl_, r) != SSL_ERROR_WANT_READ || !receive()) {
        ERR_clear_error();
        return 0;
      }
    }
  }
  // Whether the gateway sends nothing (and does not close) for `ms` milliseconds.
  bool quiet_for(int ms) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, ms) == 0;
  }
  // Closes the socket at once, without a close_notify.
  void drop() {
    ::close(fd_);
    fd_ = -1;
  }

 private:
  std::string output() {
    std::string out;
    char buf[16384];
    int n;
    while ((n = BIO_read(SSL_get_wbio(ssl_), buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }
  // Hands OpenSSL what the socket has next; false at its end (or after 20 s).
  bool receive() {
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    BIO_write(SSL_get_rbio(ssl_), buf, static_cast<int>(n));
    return true;
  }

  int fd_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
};

// The plaintext of a raw_tls_client as a Thrift transport, for reading replies.
class raw_tls_transport : public at::transport::TVirtualTransport<raw_tls_transport> {
 public:
  explicit raw_tls_transport(raw_tls_client& c) : c_(c) {}
  std::uint32_t read(std::uint8_t* p, std::uint32_t n) { return c_.read_some(p, n); }

 private:
  raw_tls_client& c_;
};

bool table_exists_answer(raw_tls_client& c, std::int32_t seqid) {
  return ::table_exists_answer(std::make_shared<raw_tls_transport>(c), seqid);
}

}  // namespace

TEST_CASE("TLS on the gateway's port") {
  served_gateway g(tls_options());
  client2 c(g);
  CHECK_FALSE(c->tableExists(tname("t")));

  // A plain-text client gets no answer: its connection is closed. The TLS client keeps
  // being served.
  CHECK(closed_after(g.gateway->port(), table_exists_call("t", 1)));
  CHECK_FALSE(c->tableExists(tname("t")));

  // A certificate without its key, or with another's, is refused at start, as on the data
  // port (rpc/tls.h).
  const auto& certs = test_certs::get();
  cellar::thrift::gateway_options bad;
  bad.tls_cert_file = certs.server_cert;
  auto refused = cellar::thrift::gateway::start(*g.store, bad);
  CHECK(refused.code() == cellar::code::invalid_argument);
  bad.tls_key_file = certs.other_key;
  refused = cellar::thrift::gateway::start(*g.store, bad);
  CHECK(refused.code() == cellar::code::invalid_argument);
  bad.tls_key_file = certs.dir + "/none.key";
  refused = cellar::thrift::gateway::start(*g.store, bad);
  CHECK(refused.code() == cellar::code::io_error);
}

TEST_CASE("thrift2 and thrift1 over TLS in every transport and protocol") {
  cellar::thrift::gateway_options o = tls_options();
  o.framed = GENERATE(false, true);
  o.compact = GENERATE(false, true);
  o.threads = 1;
  {
    served_gateway g(o);
    client2 c(g);
    create_table2(c, "t", {"f"});
    // A value larger than a TLS record (16 KiB) and than the loop's read buffer.
    const std::string big(200 * 1000, 'v');
    c->put("t", tput("r", {column_value("f", "q", std::string("\0\xff v", 4)), column_value("f", "big", big)}));
    t2::TResult r;
    c->get(r, "t", tget("r"));
    REQUIRE(r.columnValues.size() == 2);
    CHECK(r.columnValues[0].value == big);
    CHECK(r.columnValues[1].value == std::string("\0\xff v", 4));
  }
  o.service = cellar::thrift::service::thrift1;
  served_gateway g(o);
  client1 c(g);
  t1::ColumnDescriptor cf;
  cf.name = "cf:";
  c->createTable("t", {cf});
  std::vector<std::string> names;
  c->getTableNames(names);
  CHECK(names == std::vector<std::string>{"t"});
}

TEST_CASE("many TLS clients on one serving thread, one stalled in its handshake and one mid-record") {
  cellar::thrift::gateway_options o = tls_options();
  o.threads = 1;
  served_gateway g(o);
  {
    client2 c(g);
    create_table2(c, "t", {"f"});
  }

  // Half a ClientHello, and the rest not sent until the end.
  raw_tls_client stalled(g.gateway->port());
  const auto hello = stalled.client_hello();
  stalled.send_raw(hello.substr(0, hello.size() / 2));
  // Half of a record carrying a call.
  raw_tls_client halfway(g.gateway->port());
  REQUIRE(halfway.handshake());
  const auto record = halfway.seal(table_exists_call("t", 9));
  halfway.send_raw(record.substr(0, record.size() / 2));

  // Every client connects, handshakes and calls at once; each is answered.
  constexpr int clients = 24;
  tls_clients();  // made before the threads share it
  std::atomic<int> answered{0};
  std::vector<std::string> failures(clients);
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i)
    threads.emplace_back([&, i] {
      try {
        client2 c(g);
        const auto row = "r" + std::to_string(i);
        c->put("t", tput(row, {column_value("f", "q", row)}));
        t2::TResult r;
        c->get(r, "t", tget(row));
        if (r.columnValues.size() == 1 && r.columnValues[0].value == row) answered.fetch_add(1);
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& f : failures) CHECK(f.empty());
  CHECK(answered.load() == clients);

  halfway.send_raw(record.substr(record.size() / 2));
  CHECK(table_exists_answer(halfway, 9));
  stalled.send_raw(hello.substr(hello.size() / 2));
  REQUIRE(stalled.handshake());
  stalled.send_raw(stalled.seal(table_exists_call("nope", 3)));
  CHECK_FALSE(table_exists_answer(stalled, 3));
}

TEST_CASE("a client that fails TLS or leaves mid-record affects no other connection") {
  cellar::thrift::gateway_options o = tls_options();
  o.threads = 1;
  served_gateway g(o);
  client2 good(g);
  create_table2(good, "t", {"f"});
  const auto port = g.gateway->port();

  // Garbage, and a plain-text Thrift call, instead of a ClientHello: closed.
  CHECK(closed_after(port, std::string(64, '\x7f')));
  CHECK(closed_after(port, table_exists_call("t", 1)));
  CHECK(good->tableExists(tname("t")));
  // A client that offers only TLS 1.1: refused (TLS 1.2 or later, as the data port).
  {
    raw_tls_client old(port, TLS1_1_VERSION);
    CHECK_FALSE(old.handshake());
  }
  // A ClientHello with its record's body corrupted.
  {
    raw_tls_client broken(port);
    auto hello = broken.client_hello();
    for (std::size_t i = 5; i < hello.size(); ++i) hello[i] = static_cast<char>(hello[i] ^ 0x5a);
    broken.send_raw(hello);
    CHECK_FALSE(broken.handshake());
  }
  // A client that leaves in the middle of its ClientHello, and one in the middle of a record.
  {
    raw_tls_client gone(port);
    const auto hello = gone.client_hello();
    gone.send_raw(hello.substr(0, 20));
    gone.drop();
    raw_tls_client left(port);
    REQUIRE(left.handshake());
    const auto record = left.seal(table_exists_call("t", 2));
    left.send_raw(record.substr(0, record.size() - 3));
    left.drop();
  }
  // A record whose bytes were altered after the handshake: that connection is closed.
  {
    raw_tls_client tampered(port);
    REQUIRE(tampered.handshake());
    auto record = tampered.seal(table_exists_call("t", 4));
    record[record.size() - 1] = static_cast<char>(record.back() ^ 1);
    tampered.send_raw(record);
    std::uint8_t byte;
    CHECK(tampered.read_some(&byte, 1) == 0);
  }
  CHECK(good->tableExists(tname("t")));
  CHECK_FALSE(good->tableExists(tname("nope")));
}

TEST_CASE("a TLS client that leaves while its large reply is sent fails alone") {
  cellar::thrift::gateway_options o = tls_options();
  o.threads = 1;
  served_gateway g(o);
  client2 good(g);
  create_table2(good, "t", {"f"});
  std::vector<t2::TColumnValue> values;
  for (int i = 0; i < 8; ++i)
    values.push_back(column_value("f", std::to_string(i), std::string(1000 * 1000, static_cast<char>('a' + i))));
  good->put("t", tput("big", values));

  t2::THBaseService_get_pargs args;
  const std::string table = "t";
  const auto get = tget("big");
  args.table = &table;
  args.tget = &get;
  for (int round = 0; round < 3; ++round) {
    raw_tls_client leaving(g.gateway->port());
    REQUIRE(leaving.handshake());
    // A round trip first, so that nothing the gateway sent is left unread (closing with
    // unread bytes would reset the connection instead of ending it).
    leaving.send_raw(leaving.seal(table_exists_call("t", 1)));
    REQUIRE(table_exists_answer(leaving, 1));
    // The gateway writes 8 MB to a client that has gone: its writes fail with EPIPE, which
    // must not raise SIGPIPE in the process.
    leaving.send_raw(leaving.seal(call_bytes("get", args, 2)));
    leaving.drop();
    CHECK(good->tableExists(tname("t")));
  }
}

TEST_CASE("TLS connections count against the connection limit") {
  cellar::thrift::gateway_options o = tls_options();
  o.max_connections = 1;
  served_gateway g(o);
  auto first = std::make_unique<client2>(g);
  CHECK_FALSE((*first)->tableExists(tname("t")));

  // The second waits in the listen queue: its ClientHello gets no answer while the first
  // is open.
  raw_tls_client second(g.gateway->port());
  second.send_raw(second.client_hello());
  CHECK(second.quiet_for(300));
  first.reset();
  REQUIRE(second.handshake());
  second.send_raw(second.seal(table_exists_call("t", 5)));
  CHECK_FALSE(table_exists_answer(second, 5));
}

TEST_CASE("a TLS client that does not finish its handshake in time is closed and frees its slot") {
  cellar::thrift::gateway_options o = tls_options();
  o.max_connections = 2;
  o.threads = 1;
  o.tls_handshake_timeout = std::chrono::milliseconds(200);
  served_gateway g(o);
  raw_tls_client idle(g.gateway->port());  // handshakes, then sends nothing until the end
  REQUIRE(idle.handshake());
  raw_tls_client silent(g.gateway->port());
  // The slot is free again once the silent client is closed: this client is served.
  client2 c(g);
  CHECK_FALSE(c->tableExists(tname("t")));
  std::uint8_t byte;
  CHECK(silent.read_some(&byte, 1) == 0);
  // The deadline of a client whose handshake finished has passed too: it is still served.
  idle.send_raw(idle.seal(table_exists_call("t", 6)));
  CHECK_FALSE(table_exists_answer(idle, 6));
}
