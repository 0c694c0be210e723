// The gateway's serving: transports and protocols as HBase's server has them, and
// connections that fail alone.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thrift/TApplicationException.h>
#include <thrift/transport/TFDTransport.h>
#include <thrift/transport/TSSLSocket.h>

#include "../rpc/test_certs.h"
#include "thrift_fixture.h"

TEST_CASE("thrift2 over framed transport and the compact protocol") {
  const bool framed = GENERATE(false, true);
  const bool compact = GENERATE(false, true);
  cellar::thrift::gateway_options o;
  o.framed = framed;
  o.compact = compact;
  served_gateway g(o);
  client2 c(g);
  create_table2(c, "t", {"f"});
  c->put("t", tput("r", {column_value("f", "q", std::string("\0\xff v", 4))}));
  t2::TResult r;
  c->get(r, "t", tget("r"));
  REQUIRE(r.columnValues.size() == 1);
  CHECK(r.columnValues[0].value == std::string("\0\xff v", 4));
}

TEST_CASE("thrift1 over framed transport and the compact protocol") {
  cellar::thrift::gateway_options o;
  o.service = cellar::thrift::service::thrift1;
  o.framed = true;
  o.compact = true;
  served_gateway g(o);
  client1 c(g);
  t1::ColumnDescriptor cf;
  cf.name = "cf:";
  c->createTable("t", {cf});
  std::vector<std::string> names;
  c->getTableNames(names);
  CHECK(names == std::vector<std::string>{"t"});
}

namespace {

// A connection to the gateway on loopback.
int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

// A connection that sends `bytes` and then reads until the gateway closes it: true when
// it did close it.
bool closed_after(std::uint16_t port, const std::string& bytes) {
  const int fd = connect_to(port);
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  char buf[256];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) {}
  ::close(fd);
  return n == 0;
}

}  // namespace

TEST_CASE("a bad request fails alone: other connections keep being served") {
  served_gateway g;
  client2 a(g);
  client2 b(g);
  create_table2(a, "t", {"f"});
  b->put("t", tput("r", {column_value("f", "q", "v")}));

  // Garbage instead of a message: the gateway closes that connection only.
  CHECK(closed_after(g.gateway->port(), std::string(64, '\x7f')));
  // A message that announces a huge string: refused without allocating it.
  CHECK(closed_after(g.gateway->port(), std::string("\x80\x01\x00\x01\x7f\xff\xff\xf0xx", 12)));

  // A call to a method the service does not have: an exception on that connection, which
  // keeps serving.
  client1 wrong(g);
  std::vector<std::string> names;
  CHECK_THROWS_AS(wrong->getTableNames(names), apache::thrift::TApplicationException);

  // Errors on a connection leave it and the others working.
  t2::TResult r;
  CHECK_THROWS_AS(a->get(r, "nope", tget("r")), t2::TIOError);
  a->get(r, "t", tget("r"));
  CHECK(r.columnValues.size() == 1);
  b->get(r, "t", tget("r"));
  CHECK(r.columnValues.size() == 1);
  CHECK(b->exists("t", tget("r")));
}

TEST_CASE("the gateway refuses a port it cannot bind") {
  served_gateway g;
  cellar::thrift::gateway_options o;
  o.port = g.gateway->port();
  auto second = cellar::thrift::gateway::start(*g.store, o);
  REQUIRE_FALSE(second);
  CHECK(second.code() == cellar::code::io_error);
}

TEST_CASE("TLS on the gateway's port") {
  const auto& certs = test_certs::get();
  cellar::thrift::gateway_options o;
  o.tls_cert_file = certs.server_cert;
  o.tls_key_file = certs.server_key;
  served_gateway g(o);

  namespace at = apache::thrift;
  auto tls = std::make_shared<at::transport::TSSLSocketFactory>(at::transport::SSLProtocol::TLSv1_2);
  tls->loadTrustedCertificates(certs.ca.c_str());
  tls->authenticate(true);
  auto transport =
      std::make_shared<at::transport::TBufferedTransport>(tls->createSocket("127.0.0.1", g.gateway->port()));
  transport->open();
  t2::THBaseServiceClient c(std::make_shared<at::protocol::TBinaryProtocol>(transport));
  CHECK_FALSE(c.tableExists(tname("t")));

  // A plain-text client gets no answer; the TLS client keeps being served.
  {
    served_gateway* plain_target = &g;
    client2 plain(*plain_target);
    CHECK_THROWS(plain->tableExists(tname("t")));
  }
  CHECK_FALSE(c.tableExists(tname("t")));
  transport->close();

  // A certificate without its key is refused at start.
  cellar::thrift::gateway_options bad;
  bad.tls_cert_file = certs.server_cert;
  auto refused = cellar::thrift::gateway::start(*g.store, bad);
  CHECK(refused.code() == cellar::code::invalid_argument);
  bad.tls_key_file = certs.other_key;
  refused = cellar::thrift::gateway::start(*g.store, bad);
  CHECK(refused.code() == cellar::code::invalid_argument);
}

TEST_CASE("requests and replies larger than a socket's buffers cross in many reads and sends") {
  cellar::thrift::gateway_options o;
  o.framed = GENERATE(false, true);
  o.threads = 1;
  served_gateway g(o);
  client2 c(g);
  create_table2(c, "t", {"f"});
  std::vector<t2::TColumnValue> values;
  for (int i = 0; i < 12; ++i)
    values.push_back(column_value("f", std::string(1, static_cast<char>('a' + i)),
                                  std::string(1000 * 1000, static_cast<char>('a' + i))));
  c->put("t", tput("r", values));
  t2::TResult r;
  c->get(r, "t", tget("r"));
  REQUIRE(r.columnValues.size() == 12);
  for (int i = 0; i < 12; ++i) CHECK((r.columnValues[i].value == values[i].value));
}

namespace {

// The bytes of a thrift2 tableExists call on `table`, buffered and binary.
std::string table_exists_call(const std::string& table, std::int32_t seqid) {
  namespace at = apache::thrift;
  auto buffer = std::make_shared<at::transport::TMemoryBuffer>();
  at::protocol::TBinaryProtocol p(buffer);
  t2::THBaseService_tableExists_pargs args;
  const auto name = tname(table);
  args.tableName = &name;
  p.writeMessageBegin("tableExists", at::protocol::T_CALL, seqid);
  args.write(&p);
  p.writeMessageEnd();
  return buffer->getBufferAsString();
}

void send_all(int fd, const std::string& bytes) {
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

// Reads the answer to tableExists from `fd`, checking its sequence id.
bool table_exists_answer(int fd, std::int32_t want_seqid) {
  namespace at = apache::thrift;
  auto socket = std::make_shared<at::transport::TFDTransport>(fd, at::transport::TFDTransport::NO_CLOSE_ON_DESTROY);
  at::protocol::TBinaryProtocol p(socket);
  std::string name;
  at::protocol::TMessageType type;
  std::int32_t seqid = 0;
  p.readMessageBegin(name, type, seqid);
  REQUIRE(type == at::protocol::T_REPLY);
  CHECK(seqid == want_seqid);
  bool exists = false;
  t2::THBaseService_tableExists_presult result;
  result.success = &exists;
  result.read(&p);
  p.readMessageEnd();
  REQUIRE(result.__isset.success);
  return exists;
}

}  // namespace

TEST_CASE("a buffered message that arrives in pieces is answered once whole, pipelined calls in order") {
  cellar::thrift::gateway_options o;
  o.threads = 1;
  served_gateway g(o);
  client2 c(g);
  create_table2(c, "t", {"f"});

  const int fd = connect_to(g.gateway->port());
  const auto call = table_exists_call("t", 7);
  for (std::size_t cut : {std::size_t{1}, call.size() / 2, call.size() - 1}) {
    send_all(fd, call.substr(0, cut));
    // Another connection's round trip on the same loop: the first piece has been read by now.
    CHECK(c->tableExists(tname("t")));
    send_all(fd, call.substr(cut));
    CHECK(table_exists_answer(fd, 7));
  }
  send_all(fd, table_exists_call("t", 1) + table_exists_call("nope", 2) + table_exists_call("t", 3));
  CHECK(table_exists_answer(fd, 1));
  CHECK_FALSE(table_exists_answer(fd, 2));
  CHECK(table_exists_answer(fd, 3));
  ::close(fd);
}

TEST_CASE("past the connection limit a client waits until a connection closes") {
  cellar::thrift::gateway_options o;
  o.max_connections = 1;
  served_gateway g(o);
  auto first = std::make_unique<client2>(g);
  CHECK_FALSE((*first)->tableExists(tname("t")));
  const int fd = connect_to(g.gateway->port());
  send_all(fd, table_exists_call("t", 5));
  first.reset();
  CHECK_FALSE(table_exists_answer(fd, 5));
  ::close(fd);
}
