// tests/fuzz/make_seeds.cc: writes the seed corpora of the fuzz targets.
// Usage: make_seeds DIR   (DIR = tests/fuzz; writes DIR/<target>/seed-*, replacing them)
//
// Seeds are small valid inputs the fuzzers mutate from: shell lines, DDL, encoded cells,
// runs, catalog entries and log files, frame request streams built with the client's own
// encoders (rpc/convert.h), and RPC sessions of the real client (cellar/client.h) recorded by
// a proxy between it and the fuzz targets' server. The committed seeds came from this
// program; crash inputs found by scripts/fuzz.sh sit beside them (regress-*).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <capnp/message.h>

#include "catalog/catalog.h"
#include "cellar/client.h"
#include "fuzz_server.h"
#include "persist/codec.h"
#include "persist/runs.h"
#include "rpc/convert.h"
#include "rpc/frames.h"

namespace fs = std::filesystem;
using namespace cellar;

namespace {

fs::path out_dir;

void write_seeds(const std::string& target, const std::vector<std::string>& seeds) {
  const fs::path dir = out_dir / target;
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("seed-", 0) == 0) fs::remove(e.path());
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "seed-%03zu", i);
    std::ofstream(dir / name, std::ios::binary) << seeds[i];
  }
  std::printf("%s: %zu seeds\n", target.c_str(), seeds.size());
}

std::vector<std::string> shell_seeds() {
  return {
      "create 'blogtable', 'info','text','comment_title','comment_author','comment_text'",
      "scan 'blogtable' ,{COLUMNS => ['text:','info:title'] }",
      "scan 'blogtable' , {COLUMNS => 'info:url' , STARTROW => '2'}",
      "get 'blogtable','1', {COLUMN => ['text','info:author']}",
      "put 'blogtable', '1', 'info:title', 'this is doc title'",
      "create 't1', {NAME => 'f1', VERSIONS => 5, TTL => 86_400, BLOCKCACHE => true}, SPLITS => ['a', 'm']",
      "scan 't', {COLUMNS => ['a', ['b', []], {}], TIMERANGE => [1, 2], REVERSED => true, LIMIT => 0x10}",
      "alter 't1', NAME => 'f1', VERSIONS => 5",
      "alter 't1', 'delete' => 'f1'",
      "get 't1', 'r1', COLUMN => 'c1', TIMESTAMP => 1_000",
      "\tput\t't' ,\t'r','f:q' ,  'v'  # 'a comment' with quotes",
      "put 't', \"r\\x00\\xff\", 'f:q', \"\\u00e9\\n\\t\\e\\s\\101\\0\"",
      "incr 't', 'r', 'f:c', -0b101",
      "get_counter 't', 'r', 'f:c'",
      "deleteall 't', 'r', 'f:q', 0o17",
      "get('t', 'r')",
      "list()",
      "count 't', INTERVAL => 10, CACHE => 1000",
      "describe_namespace 'ns'",
      "x nil, true, false, -9223372036854775807, {A => {B => [1, [2, {}]]}}",
      "# only a comment",
  };
}

std::vector<std::string> ddl_seeds() {
  std::vector<std::string> out;
  const fs::path seeds = fs::path(CELLAR_SEED_SQL);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(seeds)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    out.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  out.push_back(
      "CREATE TABLEGROUP IF NOT EXISTS g; CREATE TABLE IF NOT EXISTS `g$f` (K varbinary(1024), Q varbinary(256), "
      "T bigint, V varbinary(1048576) NOT NULL, PRIMARY KEY(K, Q, T)) TABLEGROUP = g kv_attributes = "
      "'{\"HBase\": {\"TimeToLive\": 3600, \"MaxVersions\": 3}}' PARTITION BY KEY(K) PARTITIONS 3;");
  out.push_back(
      "CREATE TABLE h$f (K varbinary(1024), Q varbinary(256), T bigint, V longblob NOT NULL, "
      "K_PREFIX varbinary(1024) GENERATED ALWAYS AS (substring(K, 1, 4)), PRIMARY KEY(K, Q, T)) "
      "PARTITION BY KEY(K_PREFIX) PARTITIONS 2; /* comment */ CREATE TABLE h2$f LIKE h$f; -- done\n");
  out.push_back(
      "CREATE TABLE r$f (K varbinary(1024), Q varbinary(256), T bigint, V varbinary(64), PRIMARY KEY(K, Q, T)) "
      "kv_attributes = '{\"HBase\": {\"MaxVersions\": 1, \"x\": [1, 2.5e3, null, true, {\"y\": \"\\u00e9\"}]}}' "
      "PARTITION BY RANGE COLUMNS(K) (PARTITION p0 VALUES LESS THAN ('g'), PARTITION p1 VALUES LESS THAN "
      "MAXVALUE);");
  out.push_back(
      "CREATE TABLE ts$f (K varbinary(1024), T bigint, S bigint, V json, G bigint GENERATED ALWAYS AS (ABS(T)), "
      "PRIMARY KEY(K, T, S)) PARTITION BY KEY(K) PARTITIONS 2; DROP TABLE IF EXISTS ts$f, g$f; DROP TABLEGROUP g;");
  return out;
}

std::vector<std::string> snapshot_seeds() {
  using namespace cellar::detail;
  std::vector<std::string> out;
  const std::string k1 = encode_cell_key(7, "row", "q", 1000), k2 = encode_cell_key(7, std::string("r\0w", 3), "", 5),
                    k3 = encode_cell_key(7, "row2", std::string("\0\xff", 2), -1);
  out.push_back('\0' + k1);
  out.push_back('\0' + k2);
  std::string run;
  append_run_cell(run, k1, 0x7fffffffffffffffLL, "value one");
  append_run_cell(run, k3, 12345, std::string(300, 'v'));
  out.push_back('\1' + run);
  table_schema t;
  t.name = "t";
  t.uid = 3;
  t.partitioned = true;
  t.partitioning = partition_spec::range_bounds({"g", "p"});
  t.families.push_back({family_descriptor{"a", 3, 60}, 1});
  t.families.push_back({family_descriptor{"b"}, 2});
  out.push_back('\2' + encode_schema(t));
  t.partitioning = partition_spec::hash_prefix(8, 2);
  t.families[1].desc.kind = family_kind::time_series;
  out.push_back('\2' + encode_schema(t));
  return out;
}

std::vector<std::string> log_seeds() {
  using namespace cellar::detail;
  auto record = [](std::uint64_t uid, std::uint32_t partition, const std::string& entries) {
    std::string payload;
    put_u64(payload, uid);
    put_u32(payload, partition);
    payload += entries;
    std::string rec;
    put_u32(rec, static_cast<std::uint32_t>(payload.size()));
    put_u32(rec, crc32c(payload));
    return rec + payload;
  };
  std::string put_entry, erase_entry;
  put_entry.push_back('\1');
  put_bytes(put_entry, encode_cell_key(1, "row", "q", 1000));
  put_u64(put_entry, 0x7fffffffffffffffULL);
  put_bytes(put_entry, "value");
  erase_entry.push_back('\0');
  put_bytes(erase_entry, encode_cell_key(2, "row", "", 7));
  const std::string a = record(1, 0, put_entry + erase_entry), b = record(1, 2, put_entry);
  return {a + b, a + b.substr(0, b.size() - 3), a + record(9, 1, "")};
}

// Frame request streams (after the magic and login, which fuzz_frames.cc sends).
std::vector<std::string> frames_seeds() {
  auto frame_batch = [](std::vector<unsigned char>& out, std::uint64_t id, const std::string& table,
                        const std::vector<batch_op>& ops) {
    capnp::MallocMessageBuilder m;
    auto req = m.initRoot<wire::Request>();
    req.setId(id);
    auto b = req.initBatch();
    b.setTable(table);
    auto actions = b.initActions(static_cast<unsigned>(ops.size()));
    for (unsigned i = 0; i < actions.size(); ++i) rpc::to_wire(ops[i], actions[i]);
    rpc::append_frame(out, m);
  };
  auto frame_scan = [](std::vector<unsigned char>& out, std::uint64_t id, const std::string& table, const scan& s,
                       std::uint32_t count) {
    capnp::MallocMessageBuilder m;
    auto req = m.initRoot<wire::Request>();
    req.setId(id);
    auto b = req.initScan();
    b.setTable(table);
    rpc::to_wire(s, b.initScan());
    b.setCount(count);
    rpc::append_frame(out, m);
  };
  auto as_string = [](const std::vector<unsigned char>& v) { return std::string(v.begin(), v.end()); };
  std::vector<std::string> out;
  {
    std::vector<unsigned char> s;
    frame_batch(s, 2, "t",
                {put("r1").add("f", "q", 5, "v1").add("g", "q", "v2"), put("r2").add("v", "x", std::string(80, 'z')),
                 get("r1").all_versions(), get("r2").column("f", "q").range(0, 10).max_per_family(1)});
    frame_scan(s, 3, "t", scan().family("f").limit(5), 10);
    frame_scan(s, 4, "t", scan().start_row("r").stop_row("s", true).reversed().max_versions(2), 1);
    out.push_back(as_string(s));
  }
  {
    std::vector<unsigned char> s;
    frame_batch(s, 2, "t",
                {increment("c").add("f", "n", 3).return_results(true), append("c").add("f", "s", "tail"),
                 deletion("r1").family("g"), deletion("r1").column("f", "q", 5), deletion("r2")});
    frame_batch(s, 3, "t",
                {row_mutations("m").add(put("m").add("f", "a", "1")).add(deletion("m").columns("f", "b")),
                 check_and_mutate("m", "f", "a").if_equals("1").then(put("m").add("f", "c", "2"))});
    frame_batch(s, 4, "nosuchtable", {get("x")});
    out.push_back(as_string(s));
  }
  {
    std::vector<unsigned char> s;
    frame_batch(s, 5, "r", {put("a").add("f", "q", "1"), put("z").add("f", "q", "2").ttl(1000)});
    frame_scan(s, 6, "r", scan().batch(1).max_result_size(10).allow_partial_results(), 100);
    frame_batch(s, 7, "ts", {put("k").add("f", "1", 100, "{\"a\": 1}")});
    frame_scan(s, 8, "ts", scan(), 10);
    out.push_back(as_string(s));
  }
  return out;
}

// A proxy between a client and the server that keeps what the client sent.
std::string record_session(std::uint16_t server_port, const std::function<void(const std::string&)>& client) {
  const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd, 1) != 0 ||
      ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    std::abort();
  const std::uint16_t proxy_port = ntohs(a.sin_port);
  std::string recorded;
  std::thread proxy([&] {
    const int c = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(server_port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (c < 0 || ::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) std::abort();
    bool client_open = true, server_open = true;
    char buf[65536];
    while (client_open || server_open) {
      pollfd p[2] = {{c, static_cast<short>(client_open ? POLLIN : 0), 0},
                     {s, static_cast<short>(server_open ? POLLIN : 0), 0}};
      const int ready = ::poll(p, 2, 10000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      if (p[0].revents) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) {
          client_open = false;
          ::shutdown(s, SHUT_WR);
        } else {
          recorded.append(buf, static_cast<std::size_t>(n));
          ::send(s, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL);
        }
      }
      if (p[1].revents) {
        const ssize_t n = ::recv(s, buf, sizeof buf, 0);
        if (n <= 0) {
          server_open = false;
          ::shutdown(c, SHUT_WR);
        } else {
          ::send(c, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL);
        }
      }
    }
    ::close(c);
    ::close(s);
  });
  client("127.0.0.1:" + std::to_string(proxy_port));
  proxy.join();
  ::close(lfd);
  return recorded;
}

std::vector<std::string> rpc_seeds() {
  auto& srv = cellar_fuzz::fuzz_server::get();
  auto session = [&](const std::string& token, const std::function<void(connection&)>& work) {
    return record_session(srv.port(), [&](const std::string& address) {
      rpc::client_options o;
      o.token = token;
      o.frames = false;  // everything over Cap'n Proto RPC
      auto c = rpc::connect(address, o);
      if (c) work(*c.value());
    });
  };
  std::vector<std::string> out;
  out.push_back(session(cellar_fuzz::token, [](connection& c) {
    (void)c.list_tables();
    (void)c.describe("t");
    (void)c.batch("t", {put("r1").add("f", "q", "v"), get("r1"), increment("c").add("f", "n", 1)});
    if (auto s = c.scan("t", scan().family("f")); s) {
      (void)s.value()->next(1);
      (void)s.value()->next(100);
    }
    (void)c.stats("t");
    (void)c.snapshot();
  }));
  out.push_back(session(cellar_fuzz::token, [](connection& c) {
    (void)c.create_table({"x", partition_spec::hash(0), {{"a", 1}, {"b"}}}, schema_origin::hbase_shell);
    (void)c.alter_family("x", {"a", 5, 100});
    (void)c.truncate_table("x");
    (void)c.drop_family("x", "b");
    (void)c.ddl(
        "CREATE TABLEGROUP y; CREATE TABLE y$f (K varbinary(1024), Q varbinary(256), T bigint, "
        "V varbinary(1048576), PRIMARY KEY(K, Q, T)) TABLEGROUP = y PARTITION BY KEY(K) PARTITIONS 2;");
    (void)c.drop_table("x");
  }));
  out.push_back(session(cellar_fuzz::token, [](connection& c) {
    (void)c.batch("r", {deletion("a").family("f"), append("a").add("f", "q", "x"),
                        check_and_mutate("a", "f", "q").if_not_exists().then(put("a").add("f", "q", "y"))});
    if (auto s = c.scan("r", scan().reversed().limit(3).batch(1)); s) (void)s.value()->next(10);
    (void)c.batch("nosuch", {get("a")});
  }));
  out.push_back(session("wrong-token", [](connection& c) { (void)c.list_tables(); }));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  out_dir = argv[1];
  write_seeds("hbase_shell", shell_seeds());
  write_seeds("ddl", ddl_seeds());
  write_seeds("snapshot", snapshot_seeds());
  write_seeds("redo_log", log_seeds());
  write_seeds("frames", frames_seeds());
  write_seeds("rpc", rpc_seeds());
  std::fflush(stdout);
  std::_Exit(0);  // the fuzz server lives for the process
}
