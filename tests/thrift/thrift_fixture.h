// An in-process store served by a Thrift gateway on a loopback port the system picks, and
// clients of it made with the C++ code generated from the project's IDL files.
#pragma once

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>

#include <catch2/catch.hpp>

#include <memory>
#include <string>

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

// A connected client of service `Client` speaking the gateway's transport and protocol.
template <class Client>
struct client_of {
  std::shared_ptr<apache::thrift::transport::TTransport> transport;
  std::unique_ptr<Client> client;

  explicit client_of(const served_gateway& g) {
    namespace at = apache::thrift;
    auto socket = std::make_shared<at::transport::TSocket>("127.0.0.1", g.gateway->port());
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
