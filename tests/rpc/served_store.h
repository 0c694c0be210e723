// An in-process store with table "t" (one family "f") served over RPC on a loopback port
// the system picks, and a logged-in client of it, for the RPC tests.
#pragma once

#include <kj/async-io.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/store.h"
#include "rpc/convert.h"
#include "rpc/message_stream.h"
#include "rpc/server.h"
#include "rpc/socket_stream.h"

inline std::string row_name(int i) {
  char b[32];
  std::snprintf(b, sizeof b, "row%05d", i);
  return b;
}

// Creates table `name` with one family "f".
inline void add_table(cellar::store& s, const std::string& name, cellar::partition_spec p) {
  cellar::table_descriptor d;
  d.name = name;
  d.partitioning = std::move(p);
  cellar::family_descriptor f;
  f.name = "f";
  d.families = {f};
  REQUIRE(s.create_table(d, cellar::schema_origin::oceanbase_ddl));
}

inline cellar::rpc::server_options loopback_options(std::string token = "", bool frames = true) {
  cellar::rpc::server_options so;
  so.port = 0;
  so.token = std::move(token);
  so.frames = frames;
  return so;
}

struct served_store {
  std::unique_ptr<cellar::store> store;
  std::unique_ptr<cellar::rpc::server> server;

  // `rows` rows row00000... with f:q = "v<i>" at timestamp 1.
  explicit served_store(cellar::partition_spec p, int rows = 1000, std::string token = "", bool frames = true)
      : served_store(std::move(p), rows, loopback_options(std::move(token), frames)) {}

  served_store(cellar::partition_spec p, int rows, const cellar::rpc::server_options& so) {
    cellar::store_options o;
    o.worker_threads = 2;
    auto s = cellar::store::open(std::move(o));
    REQUIRE(s);
    store = std::move(s.value());
    add_table(*store, "t", std::move(p));
    auto t = store->open_table("t");
    REQUIRE(t);
    std::vector<cellar::put> puts;
    for (int i = 0; i < rows; ++i) puts.push_back(cellar::put(row_name(i)).add("f", "q", 1, "v" + std::to_string(i)));
    if (!puts.empty()) REQUIRE(t->put(puts));
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
        kj::heap<cellar::rpc::socket_stream>(io.unixEventPort,
                                             cellar::rpc::connect_socket("127.0.0.1", s.server->port())));
    auto login = channel->login().loginRequest().send().wait(io.waitScope);
    REQUIRE(login.getError().getCode() == 0);
    cellar = login.getCellar();
  }
};

// Another caller that keeps the partitions' actors busy with big batches (the embedded
// API's batch_async, which always goes through the actors, a few in flight), so that
// some calls of the connection under test find their partition taken and wait at its
// actor, where a call run in place could overtake them.
struct busy_connection {
  std::atomic<bool> stop{false};
  std::thread thread;
  explicit busy_connection(const served_store& s)
      : thread([this, &s] {
          auto t = s.store->open_table("t").value();
          std::atomic<int> in_flight{0};
          while (!stop) {
            if (in_flight.load() >= 4) {
              std::this_thread::yield();
              continue;
            }
            std::vector<cellar::batch_op> ops;
            for (int i = 0; i < 400; ++i) ops.push_back(cellar::put("y" + std::to_string(i)).add("f", "q", "busy"));
            ++in_flight;
            t.batch_async(std::move(ops), [&in_flight](std::vector<cellar::op_result>) { --in_flight; });
          }
          while (in_flight.load() > 0) std::this_thread::yield();
        }) {}
  ~busy_connection() {
    stop = true;
    thread.join();
  }
};
