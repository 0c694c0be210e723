// An in-process store with table "t" (one family "f") served over RPC on a loopback port
// the system picks, and a logged-in client of it, for the RPC tests.
#pragma once

#include <kj/async-io.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/store.h"
#include "rpc/message_stream.h"
#include "rpc/server.h"
#include "rpc/socket_stream.h"

inline std::string row_name(int i) {
  char b[32];
  std::snprintf(b, sizeof b, "row%05d", i);
  return b;
}

struct served_store {
  std::unique_ptr<cellar::store> store;
  std::unique_ptr<cellar::rpc::server> server;

  // `rows` rows row00000... with f:q = "v<i>" at timestamp 1.
  explicit served_store(cellar::partition_spec p, int rows = 1000) {
    cellar::store_options o;
    o.worker_threads = 2;
    auto s = cellar::store::open(std::move(o));
    REQUIRE(s);
    store = std::move(s.value());
    cellar::table_descriptor d;
    d.name = "t";
    d.partitioning = std::move(p);
    cellar::family_descriptor f;
    f.name = "f";
    d.families = {f};
    REQUIRE(store->create_table(d, cellar::schema_origin::oceanbase_ddl));
    auto t = store->open_table("t");
    REQUIRE(t);
    std::vector<cellar::put> puts;
    for (int i = 0; i < rows; ++i) puts.push_back(cellar::put(row_name(i)).add("f", "q", 1, "v" + std::to_string(i)));
    if (!puts.empty()) REQUIRE(t->put(puts));
    cellar::rpc::server_options so;
    so.port = 0;
    auto srv = cellar::rpc::server::start(*store, so);
    REQUIRE(srv);
    server = std::move(srv.value());
  }
};

// One connection to a served_store, through the login capability.
struct rpc_client {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  kj::Own<cellar::rpc::client_channel> channel;
  cellar::wire::Cellar::Client cellar{nullptr};

  explicit rpc_client(const served_store& s) {
    channel = kj::heap<cellar::rpc::client_channel>(
        kj::heap<cellar::rpc::socket_stream>(io.unixEventPort, cellar::rpc::connect_socket("127.0.0.1", s.server->port())));
    auto login = channel->login().loginRequest().send().wait(io.waitScope);
    REQUIRE(login.getError().getCode() == 0);
    cellar = login.getCellar();
  }
};
