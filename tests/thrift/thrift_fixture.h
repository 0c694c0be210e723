// An in-process store served by a Thrift gateway on a loopback port the system picks, and
// clients of it made with the C++ code generated from the project's IDL files.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TFDTransport.h>
#include <thrift/transport/TSSLSocket.h>
#include <thrift/transport/TSocket.h>

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "../rpc/test_certs.h"
#include "Hbase.h"
#include "THBaseService.h"
#include "cellar/store.h"
#include "thrift/gateway.h"

namespace t2 = apache::hadoop::hbase::thrift2;
namespace t1 = apache::hadoop::hbase::thrift;

struct served_gateway {
  std::unique_ptr<cellar::store> store;
  std::unique_ptr<cellar::thrift::gateway> gateway;
  cellar::thrift::gateway_options options;

  explicit served_gateway(cellar::thrift::gateway_options o = {}) : options(o) {
    cellar::store_options so;
    so.worker_threads = 2;
    auto s = cellar::store::open(std::move(so));
    REQUIRE(s);
    store = std::move(s.value());
    options.address = "127.0.0.1";
    options.port = 0;
    auto g = cellar::thrift::gateway::start(*store, options);
    REQUIRE(g);
    gateway = std::move(g.value());
    REQUIRE(gateway->port() != 0);
  }
  ~served_gateway() {
    gateway->stop();
    (void)store->close();
  }
};

inline cellar::thrift::gateway_options thrift1_options() {
  cellar::thrift::gateway_options o;
  o.service = cellar::thrift::service::thrift1;
  return o;
}

// Gateway options with TLS on, with the test certificates (rpc/test_certs.h).
inline cellar::thrift::gateway_options tls_options(cellar::thrift::gateway_options o = {}) {
  const auto& certs = test_certs::get();
  o.tls_cert_file = certs.server_cert;
  o.tls_key_file = certs.server_key;
  return o;
}

// Thrift's TLS client sockets, trusting the test CA and checking the server's name. Made
// once, before any thread creates sockets from it.
inline std::shared_ptr<apache::thrift::transport::TSSLSocketFactory> tls_clients() {
  namespace at = apache::thrift;
  static auto factory = [] {
    auto f = std::make_shared<at::transport::TSSLSocketFactory>(at::transport::SSLProtocol::TLSv1_2);
    f->loadTrustedCertificates(test_certs::get().ca.c_str());
    f->authenticate(true);
    // Set now: the factory would make it at its first socket, racing other threads' first.
    f->access(std::make_shared<at::transport::DefaultClientAccessManager>());
    return f;
  }();
  return factory;
}

// A connected client of service `Client` speaking the gateway's transport and protocol,
// over TLS when the gateway has it. A reply not there in 20 s fails the call (a test that
// would wait for ever fails instead).
template <class Client>
struct client_of {
  std::shared_ptr<apache::thrift::transport::TTransport> transport;
  std::unique_ptr<Client> client;

  explicit client_of(const served_gateway& g) {
    namespace at = apache::thrift;
    std::shared_ptr<at::transport::TSocket> socket;
    if (g.options.tls_cert_file.empty())
      socket = std::make_shared<at::transport::TSocket>("127.0.0.1", g.gateway->port());
    else
      socket = tls_clients()->createSocket("127.0.0.1", g.gateway->port());
    socket->setRecvTimeout(20000);
    if (g.options.framed)
      transport = std::make_shared<at::transport::TFramedTransport>(socket);
    else
      transport = std::make_shared<at::transport::TBufferedTransport>(socket);
    std::shared_ptr<at::protocol::TProtocol> protocol;
    if (g.options.compact)
      protocol = std::make_shared<at::protocol::TCompactProtocol>(transport);
    else
      protocol = std::make_shared<at::protocol::TBinaryProtocol>(transport);
    transport->open();
    client = std::make_unique<Client>(protocol);
  }
  ~client_of() { transport->close(); }
  Client* operator->() { return client.get(); }
};

using client2 = client_of<t2::THBaseServiceClient>;
using client1 = client_of<t1::HbaseClient>;

inline t2::TTableName tname(const std::string& t) {
  t2::TTableName n;
  n.qualifier = t;
  return n;
}

inline t2::TColumnValue column_value(const std::string& f, const std::string& q, const std::string& v,
                                     std::int64_t ts = -1) {
  t2::TColumnValue cv;
  cv.family = f;
  cv.qualifier = q;
  cv.value = v;
  if (ts >= 0) cv.__set_timestamp(ts);
  return cv;
}

inline t2::TPut tput(const std::string& row, std::vector<t2::TColumnValue> values) {
  t2::TPut p;
  p.row = row;
  p.columnValues = std::move(values);
  return p;
}

inline t2::TGet tget(const std::string& row) {
  t2::TGet g;
  g.row = row;
  return g;
}

// Creates `table` with families `families` (maxVersions 3) through thrift2.
inline void create_table2(client2& c, const std::string& table, std::vector<std::string> families,
                          std::vector<std::string> split_keys = {}) {
  t2::TTableDescriptor d;
  d.tableName = tname(table);
  for (const auto& f : families) {
    t2::TColumnFamilyDescriptor cf;
    cf.name = f;
    cf.__set_maxVersions(3);
    d.columns.push_back(cf);
  }
  d.__isset.columns = true;
  c->createTable(d, split_keys);
}

// The message of the TIOError `f` throws; fails the test when it throws none.
template <class F>
std::string io_error_of(F&& f) {
  try {
    f();
  } catch (const t2::TIOError& e) {
    return e.message;
  }
  FAIL("no TIOError");
  return {};
}

// The bytes of a call of `method` with `args` (a generated `..._pargs`), buffered and binary.
template <class Args>
std::string call_bytes(const std::string& method, const Args& args, std::int32_t seqid) {
  namespace at = apache::thrift;
  auto buffer = std::make_shared<at::transport::TMemoryBuffer>();
  at::protocol::TBinaryProtocol p(buffer);
  p.writeMessageBegin(method, at::protocol::T_CALL, seqid);
  args.write(&p);
  p.writeMessageEnd();
  return buffer->getBufferAsString();
}

// The bytes of a thrift2 tableExists call on `table`, buffered and binary.
inline std::string table_exists_call(const std::string& table, std::int32_t seqid) {
  t2::THBaseService_tableExists_pargs args;
  const auto name = tname(table);
  args.tableName = &name;
  return call_bytes("tableExists", args, seqid);
}

// Reads the answer to tableExists from `in` (buffered, binary), checking its sequence id.
inline bool table_exists_answer(std::shared_ptr<apache::thrift::transport::TTransport> in, std::int32_t want_seqid) {
  namespace at = apache::thrift;
  at::protocol::TBinaryProtocol p(std::move(in));
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

inline bool table_exists_answer(int fd, std::int32_t want_seqid) {
  namespace at = apache::thrift;
  return table_exists_answer(
      std::make_shared<at::transport::TFDTransport>(fd, at::transport::TFDTransport::NO_CLOSE_ON_DESTROY), want_seqid);
}

// A connection to the gateway on loopback; a read that waits 20 s fails (returns -1).
inline int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  timeval patience{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

// A connection that sends `bytes` and then reads until the gateway closes it: true when
// it did close it.
inline bool closed_after(std::uint16_t port, const std::string& bytes) {
  const int fd = connect_to(port);
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  char buf[256];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) {}
  ::close(fd);
  return n == 0;
}
