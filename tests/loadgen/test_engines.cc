// The load generator's cellar engines against a real server on a loopback port: both
// protocols (frames and Cap'n Proto RPC) load records, then answer reads, updates,
// read-modify-writes and scans, every one ok, with the data the store then holds; also with
// a token and over TLS.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../rpc/test_certs.h"
#include "../shell/process.h"
#include "cellar/store.h"
#include "engine.h"
#include "rpc/frames.h"
#include "rpc/server.h"
#include "run_slots.h"

using namespace loadgen;

using loadgen::testing::run_slots;

TEST_CASE("the cellar engines run YCSB operations against cellar-server", "[engines]") {
  const std::string protocol = GENERATE("frames", "capnp");
  const int depth = GENERATE(1, 4);
  const bool ring = GENERATE(true, false);  // frames: through io_uring, or epoll
  cellar::store_options so;
  so.worker_threads = 1;
  auto st = cellar::store::open(std::move(so));
  REQUIRE(st);
  cellar::rpc::server_options ro;
  ro.port = 0;
  auto srv = cellar::rpc::server::start(*st.value(), ro);
  REQUIRE(srv);

  target_options o;
  o.target = "cellar-rpc";
  o.protocol = protocol;
  o.port = srv.value()->port();
  o.connections = 2;
  o.partitioning = "range:4";
  o.io_uring = ring;
  prepare_cellar_rpc(o, true);
  auto e = protocol == "capnp" ? make_cellar_rpc_engine(o) : make_cellar_frames_engine(o);
  if (protocol == "frames")
    CHECK(std::string(e->io()) == (ring && loadgen::testing::kernel_has_io_uring() ? "io_uring" : "epoll"));

  constexpr int records = 300;
  std::vector<operation> load;
  for (int i = 0; i < records; ++i) load.push_back({op_kind::insert, i, 0, 0});
  for (auto& s : run_slots(*e, load, 5, 2 * static_cast<std::size_t>(depth)))
    for (char ok : s.ok) REQUIRE(ok);

  auto t = st.value()->open_table(o.table);
  REQUIRE(t);
  auto stats = st.value()->stats(o.table);
  REQUIRE(stats);
  CHECK(stats->cells == static_cast<std::uint64_t>(records) * field_count);

  // Reads of every record, updates, read-modify-writes, scans; and reads of records that
  // do not exist, which must come back not ok (NOT_FOUND).
  std::vector<operation> mix;
  for (int i = 0; i < records; ++i) {
    mix.push_back({op_kind::read, i, 0, 0});
    mix.push_back({op_kind::update, i, i % field_count, 0});
    mix.push_back({op_kind::rmw, (i * 7) % records, 3, 0});
    if (i % 10 == 0) mix.push_back({op_kind::scan, i, 0, 10});
  }
  mix.push_back({op_kind::read, records + 5, 0, 0});
  std::size_t scans = 0, missing = 0;
  for (auto& s : run_slots(*e, mix, 1, 2 * static_cast<std::size_t>(depth))) {
    const operation& op = s.ops[0];
    if (op.keynum >= records) {
      CHECK(!s.ok[0]);
      ++missing;
      continue;
    }
    CHECK(s.ok[0]);
    if (op.kind == op_kind::scan) {
      ++scans;
      CHECK(s.rows[0] == 10);
    }
    if (op.kind == op_kind::rmw) CHECK(s.mid_ns > 0);
  }
  CHECK(scans == records / 10);
  CHECK(missing == 1);
  // Updates and rmw overwrote values in place: still one cell per field and record
  // (the table keeps one version).
  stats = st.value()->stats(o.table);
  REQUIRE(stats);
  CHECK(stats->cells == static_cast<std::uint64_t>(records) * field_count);
  auto g = t->get(cellar::get(build_key_name(17)));
  REQUIRE(g);
  CHECK(g->cells.size() == static_cast<std::size_t>(field_count));
}

TEST_CASE("the cellar engines log in with a token and speak TLS", "[engines][tls]") {
  const std::string protocol = GENERATE("frames", "capnp");
  const auto& certs = test_certs::get();
  cellar::store_options so;
  so.worker_threads = 1;
  auto st = cellar::store::open(std::move(so));
  REQUIRE(st);
  cellar::rpc::server_options ro;
  ro.port = 0;
  ro.token = "s3cret";
  ro.tls_cert_file = certs.server_cert;
  ro.tls_key_file = certs.server_key;
  auto srv = cellar::rpc::server::start(*st.value(), ro);
  REQUIRE(srv);

  target_options o;
  o.target = "cellar-rpc";
  o.protocol = protocol;
  o.port = srv.value()->port();
  o.connections = 2;
  o.partitioning = "hash:2";
  o.token = "s3cret";
  o.tls_ca = certs.ca;
  prepare_cellar_rpc(o, true);
  auto e = protocol == "capnp" ? make_cellar_rpc_engine(o) : make_cellar_frames_engine(o);
  std::vector<operation> ops;
  for (int i = 0; i < 100; ++i) ops.push_back({op_kind::insert, i, 0, 0});
  for (int i = 0; i < 100; ++i) ops.push_back({op_kind::read, i, 0, 0});
  for (int i = 0; i < 10; ++i) ops.push_back({op_kind::scan, i, 0, 5});
  for (auto& s : run_slots(*e, ops, 1, 8))
    for (char ok : s.ok) CHECK(ok);
  auto stats = st.value()->stats(o.table);
  REQUIRE(stats);
  CHECK(stats->cells == 100u * field_count);

  // Without the token, or trusting another CA, the engine does not start (one engine, and
  // its event loop, per thread: the first goes first).
  e.reset();
  auto no_token = o;
  no_token.token = "";
  CHECK_THROWS_WITH(protocol == "capnp" ? make_cellar_rpc_engine(no_token) : make_cellar_frames_engine(no_token),
                    Catch::Contains("requires a token"));
  auto other_ca = o;
  other_ca.tls_ca = certs.other_ca;
  CHECK_THROWS_WITH(protocol == "capnp" ? make_cellar_rpc_engine(other_ca) : make_cellar_frames_engine(other_ca),
                    Catch::Contains("not trusted"));
}

namespace {
void on_usr2(int) {}
}  // namespace

// A signal (or io_uring task work, which ends epoll_wait the same way) while the frames
// engine waits for its login replies must not fail the connection: a server that answers
// only after the waiting client thread has had 50 SIGUSR2s still logs it in.
TEST_CASE("the frames engine waits out interruptions for its login reply", "[engines]") {
  struct sigaction sa {};
  sa.sa_handler = on_usr2;  // a handler, so the signal interrupts (epoll_wait never restarts)
  sigemptyset(&sa.sa_mask);
  struct sigaction old {};
  REQUIRE(::sigaction(SIGUSR2, &sa, &old) == 0);

  const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(lfd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(lfd, 4) == 0);
  const timeval accept_timeout{10, 0};  // accept gives up after 10 s if the engine never connects
  REQUIRE(::setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &accept_timeout, sizeof accept_timeout) == 0);
  REQUIRE(::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len) == 0);

  constexpr int connections = 2;
  std::atomic<int> signals{0};           // SIGUSR2s sent to the client thread so far
  std::atomic<bool> engine_done{false};  // the engine has logged in, or failed
  std::thread server([lfd, &signals, &engine_done] {
    std::vector<int> fds;
    for (int i = 0; i < connections; ++i)
      if (const int fd = ::accept(lfd, nullptr, nullptr); fd >= 0) fds.push_back(fd);
    // Each connection's login has arrived: the engine now waits for its replies. They are
    // sent only after that wait has been interrupted many times.
    for (int fd : fds) {
      char b[256];
      (void)::recv(fd, b, sizeof b, 0);
    }
    const int from = signals.load();
    for (int seen = from; seen < from + 50; seen = signals.load()) signals.wait(seen);
    for (int fd : fds) {
      std::vector<unsigned char> out(cellar::rpc::frame_magic,
                                     cellar::rpc::frame_magic + sizeof cellar::rpc::frame_magic);
      capnp::MallocMessageBuilder m;
      m.initRoot<cellar::wire::Reply>().setId(0);
      cellar::rpc::append_frame(out, m);
      (void)::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    }
    engine_done.wait(false);  // the connections stay open until the engine has its answer
    for (int fd : fds) ::close(fd);
  });
  std::atomic<bool> stop{false};
  const pthread_t me = ::pthread_self();
  std::thread signaller([&] {
    while (!stop.load()) {
      ::pthread_kill(me, SIGUSR2);
      signals.fetch_add(1);
      signals.notify_all();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });

  target_options o;
  o.target = "cellar-rpc";
  o.protocol = "frames";
  o.port = ntohs(a.sin_port);
  o.connections = connections;
  o.io_uring = false;
  std::string error;
  try {
    auto e = make_cellar_frames_engine(o);
  } catch (const std::exception& ex) {
    error = ex.what();
  }
  engine_done = true;
  engine_done.notify_all();
  stop = true;
  signaller.join();
  server.join();
  ::close(lfd);
  ::sigaction(SIGUSR2, &old, nullptr);
  INFO(error);
  CHECK(error.empty());
}

// Pipelined writes and reads over many frame connections, in every durability mode and
// with the server's io_uring on and off: every request gets its reply (run_slots fails
// when five seconds pass without one), and every write is in the store afterwards.
TEST_CASE("every pipelined request over many connections gets its reply, in every durability mode", "[engines]") {
  const auto mode = GENERATE(cellar::durability::snapshot, cellar::durability::log, cellar::durability::log_sync);
  const bool ring = GENERATE(true, false);
  INFO("durability " << static_cast<int>(mode) << ", server io_uring " << ring);
  testproc::temp_dir dir("cellar-engines-replies");
  cellar::store_options so;
  so.directory = dir.path;
  so.durability = mode;
  so.worker_threads = 1;
  auto st = cellar::store::open(std::move(so));
  REQUIRE(st);
  cellar::rpc::server_options ro;
  ro.port = 0;
  ro.event_loops = 1;
  ro.io_uring = ring;
  auto srv = cellar::rpc::server::start(*st.value(), ro);
  REQUIRE(srv);

  target_options o;
  o.target = "cellar-rpc";
  o.port = srv.value()->port();
  o.connections = 64;
  o.partitioning = "hash:4";
  prepare_cellar_rpc(o, true);
  auto e = make_cellar_frames_engine(o);
  constexpr int records = 2000;
  std::vector<operation> load, mix;
  for (int i = 0; i < records; ++i) load.push_back({op_kind::insert, i, 0, 0});
  for (int round = 0; round < 4; ++round)
    for (int i = 0; i < records; ++i) {
      mix.push_back({op_kind::update, (i * 13) % records, i % field_count, 0});
      mix.push_back({op_kind::read, (i * 7) % records, 0, 0});
    }
  // 64 connections with 8 requests in flight on each; the records are all in before the
  // reads start, so every read finds its record.
  for (const auto* ops : {&load, &mix}) {
    std::size_t answered = 0;
    for (auto& s : run_slots(*e, *ops, 1, 64 * 8, 64)) {
      CHECK(s.ok[0]);
      ++answered;
    }
    CHECK(answered == ops->size());
  }
  auto stats = st.value()->stats(o.table);
  REQUIRE(stats);
  CHECK(stats->cells == static_cast<std::uint64_t>(records) * field_count);
}
