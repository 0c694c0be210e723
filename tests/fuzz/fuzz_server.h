// tests/fuzz/fuzz_server.h: an in-memory store served by a real cellar-server (rpc/server.h)
// on a loopback port the system picks, made once per process, for the network targets.
//
// exchange() opens a connection, sends a prologue and the fuzz input while reading
// whatever comes back, closes its sending side and reads until the server closes the
// connection: by then the server has handled every byte (a frame session closes once its
// requests are answered, an RPC session when its stream ends). A server that does not
// close within 30 s is a hang: abort.
//
// The store holds table "t" (KEY(K) PARTITIONS 3; family f keeps 3 versions, g has a
// TimeToLive, v takes values up to 64 bytes), "r" (RANGE COLUMNS(K) split at "m", family f)
// and "ts" (one time-series family f). Every 200 exchanges every table is dropped and
// they are made again, so memory stays bounded and DDL sent by one input does not pile up.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cellar/store.h"
#include "fuzz_target.h"
#include "rpc/server.h"

namespace cellar_fuzz {

inline constexpr const char* token = "fuzz-token";

class fuzz_server {
 public:
  static fuzz_server& get() {
    static fuzz_server* s = new fuzz_server();  // lives for the process
    return *s;
  }

  std::uint16_t port() const { return server_->port(); }

  void exchange(std::string_view prologue, const std::uint8_t* data, std::size_t size) {
    if (++exchanges_ % 200 == 0) reset_tables();
    std::string out(prologue);
    out.append(reinterpret_cast<const char*>(data), size);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    fuzz_check(fd >= 0, "socket");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(server_->port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      fuzz_check(errno == EINPROGRESS, "connect to the served store");
    std::size_t sent = 0;
    bool shut = false;
    char buf[65536];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      if (sent == out.size() && !shut) {
        ::shutdown(fd, SHUT_WR);
        shut = true;
      }
      pollfd p{fd, static_cast<short>(POLLIN | (shut ? 0 : POLLOUT)), 0};
      const int n = ::poll(&p, 1, 1000);
      fuzz_check(std::chrono::steady_clock::now() < deadline, "the server closes the connection within 30 s");
      if (n <= 0) continue;
      if ((p.revents & POLLOUT) && !shut) {
        const ssize_t w = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
        if (w > 0) sent += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) sent = out.size();  // the server closed first
      }
      if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
        if (r == 0) break;
        if (r < 0 && errno != EAGAIN && errno != EINTR) break;  // reset: closed as well
      }
    }
    ::close(fd);
  }

 private:
  fuzz_server() {
    cellar::store_options o;
    o.worker_threads = 2;
    o.maintenance_interval = std::chrono::milliseconds(0);
    o.memory_limit_bytes = 256u << 20;
    auto s = cellar::store::open(o);
    fuzz_check(s.is_ok(), "a memory store opens");
    store_ = std::move(s.value());
    reset_tables();
    cellar::rpc::server_options so;
    so.port = 0;
    so.token = token;
    so.max_message_bytes = 4u << 20;
    so.max_batch = 200;
    so.max_in_flight = 32;
    so.worker_threads = 2;
    so.event_loops = 1;
    so.default_partitions = 2;
    auto srv = cellar::rpc::server::start(*store_, so);
    fuzz_check(srv.is_ok(), "the server starts");
    server_ = std::move(srv.value());
  }

  // Drops every table and creates t, r and ts afresh. A call of an earlier connection may
  // still be running on the server after that connection closed (a drop or a create of
  // the same name): such a clash is retried, anything else fails the run.
  void reset_tables() {
    cellar::family_descriptor f{"f", 3}, g{"g"}, v{"v"};
    g.ttl_seconds = 1000;
    v.max_value_bytes = 64;
    cellar::family_descriptor ts{"f"};
    ts.kind = cellar::family_kind::time_series;
    const std::vector<cellar::table_descriptor> fresh = {
        {"t", cellar::partition_spec::hash(3), {f, g, v}},
        {"r", cellar::partition_spec::range_bounds({"m"}), {{"f"}}},
        {"ts", cellar::partition_spec::single(), {ts}},
    };
    for (int attempt = 0; attempt < 100; ++attempt) {
      for (const auto& t : store_->list_tables()) {
        auto st = store_->drop_table(t);
        if (!st.is_ok() && st.code() != cellar::code::table_not_found)
          std::fprintf(stderr, "fuzz: dropping '%s': %s\n", t.c_str(), st.to_string().c_str());
        fuzz_check(st.is_ok() || st.code() == cellar::code::table_not_found, "drop a table");
      }
      bool all = true;
      for (const auto& d : fresh) {
        auto st = store_->create_table(d, cellar::schema_origin::oceanbase_ddl);
        if (!st.is_ok() && st.code() != cellar::code::already_exists)
          std::fprintf(stderr, "fuzz: creating '%s': %s\n", d.name.c_str(), st.to_string().c_str());
        fuzz_check(st.is_ok() || st.code() == cellar::code::already_exists, "create a table");
        all = all && st.is_ok();
      }
      if (all) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    fuzz_check(false, "the tables are created afresh within 100 attempts");
  }

  std::unique_ptr<cellar::store> store_;
  std::unique_ptr<cellar::rpc::server> server_;
  std::uint64_t exchanges_ = 0;
};

}  // namespace cellar_fuzz
