// The load generator's redis engine against a real redis-server, started here on a free
// loopback port without persistence and stopped at the end of each test. What the engine
// did is checked through hiredis, a RESP implementation of its own.
// redis-server comes from Debian's redis-server package (scripts/setup.sh).
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../shell/process.h"
#include "../support/eventually.h"
#include "engine.h"
#include "redis_slots.h"
#include "run_slots.h"

extern char** environ;

using namespace loadgen;
using loadgen::testing::run_slots;

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

using reply_ptr = std::unique_ptr<redisReply, decltype(&freeReplyObject)>;

// A redis-server child process on 127.0.0.1:port(), no persistence, with `extra` flags
// (--replicaof ...), in a directory of its own (a replica writes the master's data there
// when it syncs); killed by the destructor.
class redis_server {
 public:
  explicit redis_server(const std::vector<std::string>& extra = {}) {
    for (int attempt = 0; attempt < 5 && pid_ < 0; ++attempt) {
      port_ = free_port();
      const std::string port = std::to_string(port_);
      std::vector<const char*> argv = {
          "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",  "--save",  "",      "--appendonly",   "no",
          "--daemonize",  "no",     "--logfile",  "",       "--loglevel", "warning", "--dir", dir_.path.c_str()};
      for (const auto& x : extra) argv.push_back(x.c_str());
      argv.push_back(nullptr);
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
      pid_t pid = -1;
      const int e = posix_spawnp(&pid, "redis-server", &fa, nullptr, const_cast<char**>(argv.data()), environ);
      posix_spawn_file_actions_destroy(&fa);
      if (e != 0) FAIL("cannot start redis-server (scripts/setup.sh installs it): " << std::strerror(e));
      // Ready when it answers PING; gone (the port was taken meanwhile): try another port.
      for (int i = 0; i < 250; ++i) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
          pid = -1;
          break;
        }
        if (redisContext* c = redisConnect("127.0.0.1", port_); c && !c->err) {
          reply_ptr r(static_cast<redisReply*>(redisCommand(c, "PING")), freeReplyObject);
          redisFree(c);
          if (r && r->type == REDIS_REPLY_STATUS) {
            pid_ = pid;
            break;
          }
        } else if (c) {
          redisFree(c);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (pid_ < 0 && pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
    REQUIRE(pid_ > 0);
    ctx_ = redisConnect("127.0.0.1", port_);
    REQUIRE(ctx_);
    REQUIRE(!ctx_->err);
  }
  ~redis_server() {
    if (ctx_) redisFree(ctx_);
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  // A command through hiredis, as redisCommand's format.
  template <class... A>
  reply_ptr cmd(const char* format, A... args) {
    auto* r = static_cast<redisReply*>(redisCommand(ctx_, format, args...));
    REQUIRE(r);
    return reply_ptr(r, freeReplyObject);
  }

 private:
  testsupport::made_dir dir_{"loadgen-redis"};
  pid_t pid_ = -1;
  int port_ = 0;
  redisContext* ctx_ = nullptr;
};

target_options options_for(const redis_server& srv, int connections, bool ring) {
  target_options o;
  o.target = "redis";
  o.port = srv.port();
  o.connections = connections;
  o.io_uring = ring;
  return o;
}

// The engine reads and writes the way it was asked to (io_uring where the kernel has it).
void check_io(const engine& e, bool ring) {
  CHECK(std::string(e.io()) == (ring && loadgen::testing::kernel_has_io_uring() ? "io_uring" : "epoll"));
}

std::vector<operation> inserts(int records) {
  std::vector<operation> load;
  for (int i = 0; i < records; ++i) load.push_back({op_kind::insert, i, 0, 0});
  return load;
}

}  // namespace

TEST_CASE("the redis engine stores records as YCSB's Redis binding and runs every operation", "[engines][redis]") {
  const int depth = GENERATE(1, 4, 16);
  const bool ring = GENERATE(true, false);
  redis_server srv;
  auto o = options_for(srv, 2, ring);
  prepare_redis(o, true);
  auto e = make_redis_engine(o);
  check_io(*e, ring);

  constexpr int records = 300;
  for (auto& s : run_slots(*e, inserts(records), 5, 2 * static_cast<std::size_t>(depth)))
    for (char ok : s.ok) REQUIRE(ok);
  // A hash of 10 fields of 100 bytes per record, and each key in _indices scored by its
  // Java hashCode.
  CHECK(srv.cmd("DBSIZE")->integer == records + 1);
  CHECK(srv.cmd("ZCARD _indices")->integer == records);
  const std::string k17 = build_key_name(17);
  CHECK(srv.cmd("HLEN %s", k17.c_str())->integer == field_count);
  CHECK(srv.cmd("HSTRLEN %s field9", k17.c_str())->integer == field_length);
  CHECK(srv.cmd("ZSCORE _indices %s", k17.c_str())->str == std::to_string(java_string_hash(k17)));

  // Mark fields the updates and read-modify-writes will write, to see that they did.
  for (int i = 0; i < records; ++i) {
    const std::string k = build_key_name(i);
    srv.cmd("HSET %s field%d marker", k.c_str(), i % field_count);
    srv.cmd("HSET %s field3 marker", k.c_str());
  }
  std::vector<operation> mix;
  for (int i = 0; i < records; ++i) {
    mix.push_back({op_kind::read, i, 0, 0});
    mix.push_back({op_kind::update, i, i % field_count, 0});
    if (i % 3 == 0) mix.push_back({op_kind::rmw, i, 3, 0});
    if (i % 10 == 0) mix.push_back({op_kind::scan, i, 0, i % 20 == 0 ? 10 : 100});
  }
  mix.push_back({op_kind::read, records + 5, 0, 0});
  mix.push_back({op_kind::rmw, records + 6, 3, 0});
  std::size_t scans = 0, missing = 0;
  for (auto& s : run_slots(*e, mix, 1, 2 * static_cast<std::size_t>(depth))) {
    const operation& op = s.ops[0];
    if (op.keynum >= records) {
      CHECK(!s.ok[0]);  // not found
      ++missing;
      continue;
    }
    CHECK(s.ok[0]);
    if (op.kind == op_kind::scan) {
      // As many rows as the index holds from the key's score on, up to the length.
      ++scans;
      const std::string k = build_key_name(op.keynum);
      const auto after = srv.cmd("ZCOUNT _indices %d +inf", java_string_hash(k))->integer;
      CHECK(s.rows[0] == std::min<long long>(after, op.scan_length));
    }
    if (op.kind == op_kind::rmw) {
      CHECK(s.mid_ns > s.start_ns);
      CHECK(s.end_ns >= s.mid_ns);
    }
  }
  CHECK(scans == records / 10);
  CHECK(missing == 2);
  for (int i = 0; i < records; ++i) {
    const std::string k = build_key_name(i);
    INFO(k);
    auto v = srv.cmd("HGET %s field%d", k.c_str(), i % field_count);
    CHECK(std::string(v->str, v->len).size() == static_cast<std::size_t>(field_length));
    if (i % 3 == 0) CHECK(srv.cmd("HSTRLEN %s field3", k.c_str())->integer == field_length);
  }
  // The rmw of a missing record wrote nothing; the records are still 10 fields each.
  CHECK(srv.cmd("DBSIZE")->integer == records + 1);
  CHECK(srv.cmd("HLEN %s", build_key_name(0).c_str())->integer == field_count);
}

TEST_CASE("the redis engine takes replies larger than its read buffer, and many commands per slot",
          "[engines][redis]") {
  const bool ring = GENERATE(true, false);
  redis_server srv;
  auto o = options_for(srv, 1, ring);
  o.field_length = 9000;  // an HGETALL reply of about 90 KB, past the 64 KiB buffer
  o.keys = {false, 12};   // insertorder=ordered, zeropadding 12: redis-benchmark's key names
  prepare_redis(o, true);
  auto e = make_redis_engine(o);
  check_io(*e, ring);
  // 20 inserts (40 commands) in each slot, two slots in flight on the one connection.
  for (auto& s : run_slots(*e, inserts(60), 20, 2, 1))
    for (char ok : s.ok) REQUIRE(ok);
  CHECK(srv.cmd("HSTRLEN user000000000059 field0")->integer == 9000);
  std::vector<operation> reads;
  for (int i = 0; i < 60; ++i) reads.push_back({op_kind::read, i, 0, 0});
  reads.push_back({op_kind::scan, 0, 0, 60});
  for (auto& s : run_slots(*e, reads, 1, 8, 1)) {
    CHECK(s.ok[0]);
    if (s.ops[0].kind == op_kind::scan)
      CHECK(s.rows[0] == srv.cmd("ZCOUNT _indices %d +inf", java_string_hash("user000000000000"))->integer);
  }
}

TEST_CASE("the redis engine reports an error reply as a failed operation", "[engines][redis]") {
  const bool ring = GENERATE(true, false);
  redis_server srv;
  auto o = options_for(srv, 1, ring);
  prepare_redis(o, true);
  auto e = make_redis_engine(o);
  for (auto& s : run_slots(*e, inserts(20), 10, 2, 1))
    for (char ok : s.ok) REQUIRE(ok);
  // Record 5 becomes a string: HGETALL and HSET on it answer WRONGTYPE.
  srv.cmd("SET %s plain", build_key_name(5).c_str());
  std::vector<operation> ops = {{op_kind::read, 4, 0, 0},
                                {op_kind::read, 5, 0, 0},
                                {op_kind::update, 5, 1, 0},
                                {op_kind::rmw, 5, 1, 0},
                                {op_kind::update, 6, 1, 0}};
  auto done = run_slots(*e, ops, 1, 5, 1);
  CHECK(done[0].ok[0]);
  CHECK(!done[1].ok[0]);
  CHECK(!done[2].ok[0]);
  CHECK(!done[3].ok[0]);
  CHECK(done[4].ok[0]);
  // The index a string too: scans and inserts (their ZADD) fail, and the next reply still
  // goes to the next command.
  srv.cmd("DEL _indices");
  srv.cmd("SET _indices plain");
  ops = {{op_kind::scan, 1, 0, 5}, {op_kind::insert, 50, 0, 0}, {op_kind::read, 6, 0, 0}};
  done = run_slots(*e, ops, 3, 1, 1);
  CHECK(!done[0].ok[0]);
  CHECK(!done[0].ok[1]);
  CHECK(done[0].ok[2]);
  CHECK(done[0].rows[0] == 0);
}

TEST_CASE("redis hash slots are Redis Cluster's: CRC16 XMODEM of the key or its hash tag, mod 16384",
          "[redis][slots]") {
  CHECK(crc16_xmodem("123456789") == 0x31C3);  // the check value of CRC-16/XMODEM
  // Slots redis-cli reports for these keys (the Redis Cluster tutorial).
  CHECK(redis_slot("foo") == 12182);
  CHECK(redis_slot("hello") == 866);
  // A hash tag: only the part inside the first {...} counts; an empty one does not.
  CHECK(redis_slot("{user1000}.following") == redis_slot("user1000"));
  CHECK(redis_slot("{user1000}.followers") == redis_slot("user1000"));
  CHECK(redis_slot("foo{}{bar}") == redis_slot("foo{}{bar}"));
  CHECK(redis_slot("foo{}{bar}") != redis_slot("bar"));
  // Even ranges: the first and last slots at the ends, every shard some of the keys.
  CHECK(redis_shard("x", 1) == 0);
  std::vector<int> per(3, 0);
  for (int i = 0; i < 3000; ++i) ++per.at(redis_shard(build_key_name(i), 3));
  for (int n : per) CHECK(n > 800);
}

TEST_CASE("the redis engine splits the records over shards as Redis Cluster would, and runs A's operations",
          "[engines][redis][shards]") {
  const bool ring = GENERATE(true, false);
  redis_server a, b;
  target_options o;
  o.target = "redis";
  o.redis_shards = {{"127.0.0.1", a.port()}, {"127.0.0.1", b.port()}};
  o.connections = 2;
  o.io_uring = ring;
  prepare_redis(o, true);
  auto e = make_redis_engine(o);
  check_io(*e, ring);
  constexpr int records = 200;
  for (auto& s : run_slots(*e, inserts(records), 5, 8))
    for (char ok : s.ok) REQUIRE(ok);
  // Each record on the server its slot gives, and only there; each server's index holds
  // its own records.
  long long on_a = 0;
  for (int i = 0; i < records; ++i) {
    const std::string k = build_key_name(i);
    INFO(k);
    const bool want_a = redis_shard(k, 2) == 0;
    on_a += want_a;
    CHECK(a.cmd("EXISTS %s", k.c_str())->integer == (want_a ? 1 : 0));
    CHECK(b.cmd("EXISTS %s", k.c_str())->integer == (want_a ? 0 : 1));
  }
  CHECK(on_a > 0);
  CHECK(on_a < records);
  CHECK(a.cmd("ZCARD _indices")->integer == on_a);
  CHECK(b.cmd("ZCARD _indices")->integer == records - on_a);
  // Reads, updates and read-modify-writes each reach their record's server.
  std::vector<operation> mix;
  for (int i = 0; i < records; ++i) {
    mix.push_back({op_kind::read, i, 0, 0});
    mix.push_back({op_kind::update, i, 1, 0});
    if (i % 4 == 0) mix.push_back({op_kind::rmw, i, 2, 0});
  }
  for (auto& s : run_slots(*e, mix, 3, 8))
    for (char ok : s.ok) CHECK(ok);
  // A scan cannot be split: refused, naming why.
  mix.assign(1, operation{op_kind::scan, 1, 0, 5});
  CHECK_THROWS_WITH(run_slots(*e, mix, 1, 1), Catch::Contains("scans need one server"));
}

TEST_CASE("loadgen --redis-wait: writes count once the replicas have them; too few replicas are errors, not a hang",
          "[loadgen][redis][wait]") {
  redis_server master;
  redis_server replica({"--replicaof", "127.0.0.1", std::to_string(master.port())});
  // The replica is attached once the master lists it online (its first full sync done).
  REQUIRE(testsupport::eventually(
      [&] {
        auto r = master.cmd("INFO replication");
        return std::string(r->str, r->len).find("state=online") != std::string::npos;
      },
      std::chrono::seconds(20)));
  const std::string port = std::to_string(master.port());
  auto loadgen = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv{CELLAR_LOADGEN, "--target", "redis",         "--port", port,      "--workload", "a",
                                  "--threads",    "1",        "--connections", "2",      "--depth", "4"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testproc::run(argv, "", true);
  };

  // WAIT 1 after each request's writes: every insert acknowledged by the replica, so it
  // holds every record (and the scan index, _indices) as soon as the load phase is over.
  constexpr int records = 1000;
  auto load =
      loadgen({"--phase", "load", "--records", std::to_string(records), "--load-batch", "10", "--redis-wait", "1"});
  INFO(load.out);
  CHECK(load.exit_code == 0);
  CHECK(load.out.find(std::to_string(records) + " ops in") != std::string::npos);
  CHECK(load.out.find(", 0 errors") != std::string::npos);
  CHECK(replica.cmd("DBSIZE")->integer == records + 1);
  // Updates (workload a's half of the run) too; reads are as without WAIT.
  auto run =
      loadgen({"--phase", "run", "--records", std::to_string(records), "--operations", "2000", "--redis-wait", "1"});
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find(", 0 errors") != std::string::npos);
  CHECK(run.out.find("UPDATE") != std::string::npos);

  // WAIT 2 with one replica: each write's WAIT answers 1 after its 100 ms timeout, and
  // every insert counts as an error, named, instead of the load waiting forever.
  const auto started = std::chrono::steady_clock::now();
  auto short_of = loadgen({"--phase", "load", "--records", "40", "--load-batch", "5", "--redis-wait", "2",
                           "--redis-wait-timeout-ms", "100"});
  const auto took = std::chrono::steady_clock::now() - started;
  INFO(short_of.out);
  CHECK(short_of.exit_code == 3);
  CHECK(short_of.out.find("40 errors") != std::string::npos);
  CHECK(short_of.out.find("WAIT: 1 of 2 replicas acknowledged within 100 ms") != std::string::npos);
  CHECK(took < std::chrono::seconds(10));
}
