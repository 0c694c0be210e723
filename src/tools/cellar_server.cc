// cellar-server: serves one store over Cap'n Proto RPC.
//
//   cellar-server [--config cellar.toml] [--listen 127.0.0.1:9090] [--data ./cellar-data]
//                 [--durability snapshot|log|log-sync] [--memory-limit 4GiB] ...
//                 [--thrift-listen 127.0.0.1:9091] [--thrift1-listen 127.0.0.1:9092]
//
// Flags override the TOML file, which overrides the defaults. SIGTERM or SIGINT stops
// accepting, takes a final snapshot and exits 0.
#include <signal.h>

#include <spdlog/spdlog.h>
#include <toml++/toml.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

#include "cellar/client.h"
#include "cellar/store.h"
#include "cluster/member.h"
#include "rpc/server.h"
#include "rpc/socket_stream.h"
#include "rpc/status_http.h"
#include "rpc/tls.h"
#include "store/scheduler_tuning.h"
#include "thrift/gateway.h"

namespace {

// "4GiB", "512MiB", "100MB", "1000": bytes.
std::optional<std::uint64_t> parse_bytes(const std::string& s) {
  std::size_t pos = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(s, &pos);
  } catch (...) {
    return std::nullopt;
  }
  std::string unit = s.substr(pos);
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.empty() || unit == "b") return n;
  if (unit == "k" || unit == "kib") return n << 10;
  if (unit == "m" || unit == "mib") return n << 20;
  if (unit == "g" || unit == "gib") return n << 30;
  if (unit == "kb") return n * 1000ull;
  if (unit == "mb") return n * 1000'000ull;
  if (unit == "gb") return n * 1000'000'000ull;
  return std::nullopt;
}

struct settings {
  std::string listen = "127.0.0.1:9090";
  std::string data = "./cellar-data";
  std::string durability = "snapshot";
  std::string memory_limit = "0";
  std::string token;
  std::string token_file;
  std::string log_level = "info";
  std::int64_t default_partitions = 7;
  std::int64_t snapshot_interval_ms = 60000;
  std::int64_t split_check_interval_ms = 10000;
  std::int64_t log_sync_interval_ms = 100;
  std::string max_message = "256MiB";
  std::int64_t max_batch = 10000;
  std::int64_t max_in_flight = 256;
  std::int64_t max_connections = 4096;
  double idle_timeout = 300;
  std::string max_unsent = "64MiB";
  std::int64_t worker_threads = 0;
  std::int64_t worker_spin_polls = 0;
  std::int64_t worker_nap_polls = 0;
  // An idle worker blocks until work comes (enqueues from event loops wake it) and wakes
  // every N ms to steal work from busy workers. The library's default of 1 ms makes an idle
  // server wake a thousand times a second per worker, which costs a visible share of a core
  // (docs/operations.md), paid by every node of a cluster that shares a core; 100 ms makes it
  // negligible.
  std::int64_t worker_idle_sleep_ms = 100;
  std::int64_t event_loops = 0;
  bool loop_affinity = true;
  bool io_uring = true;
  bool idle_background_threads = true;
  std::string metrics_listen;  // empty: no metrics endpoint
  bool salvage = false;
  std::string compression = "snappy";
  std::string tls_cert;
  std::string tls_key;
  // Cluster membership (docs/cluster.md); empty `cluster`: a single node.
  std::string cluster;
  std::string node_id;
  std::string advertise;    // empty: the --listen address with the port bound
  std::string peer_listen;  // empty: the advertised host, any free port
  std::int64_t zk_session_timeout_ms = 10000;
  std::int64_t replication_factor = 1;  // replicas of a new table's partitions (1, 3 or 5)
  std::int64_t election_timeout_ms = 1000;
  std::int64_t dead_node_timeout = 600;  // seconds before a dead node's replicas are replaced
  // HBase's Thrift gateway (docs/thrift.md); empty: not served.
  std::string thrift_listen;   // thrift2 (THBaseService)
  std::string thrift1_listen;  // thrift1 (Hbase, happybase's)
  bool thrift_framed = false;
  bool thrift_compact = false;
  bool thrift_unauthenticated = false;  // serve the gateways even though they cannot check --token
  std::int64_t thrift_threads = 4;
};

int fail(const std::string& msg) {
  std::fprintf(stderr, "cellar-server: %s\n", msg.c_str());
  return 2;
}

// What is wrong with a setting, for fail(); empty when nothing is.
using problem = std::string;

// The flags of cellar-server and the keys of its --config file, bound to one `settings`:
// a flag given wins over the file's key, which wins over the default.
class flag_set {
 public:
  flag_set(CLI::App& app, settings& st) : app_(app) {
    app.add_option("--config", config_, "TOML file with the same keys as the flags (data, listen, ...)");
    add("--listen", "listen", st.listen, "address:port to listen on (loopback by default)");
    add("--data", "data", st.data, "data directory (one WiredTiger home); empty: in memory, nothing persists");
    add("--durability", "durability", st.durability, "snapshot | log | log-sync");
    // A flag only, never from --config: salvage is a one-off decision of an operator with
    // no better copy, not a setting to leave on.
    app.add_flag("--salvage", st.salvage,
                 "open a damaged data directory anyway: rebuild damaged files from what can still be read "
                 "(cells on damaged pages are lost)");
    add("--compression", "compression", st.compression, "snapshot files' compression: snappy | zlib | none");
    add("--memory-limit", "memory_limit", st.memory_limit, "bytes of cell data (e.g. 4GiB); 0 = unlimited");
    // Either token flag wins over both keys: the token is given once.
    auto* tok = add("--token", "token", st.token, "require this token at login (shows in ps: prefer --token-file)");
    auto* tokf = add("--token-file", "token_file", st.token_file,
                     "require the token in this file at login (else CELLAR_TOKEN, if set)");
    keys_[keys_.size() - 2].flags.push_back(tokf);
    keys_.back().flags.push_back(tok);
    add("--log-level", "log_level", st.log_level, "trace | debug | info | warn | error");
    add("--default-partitions", "default_partitions", st.default_partitions, "partitions of an HBase-shell create");
    add("--snapshot-interval-ms", "snapshot_interval_ms", st.snapshot_interval_ms, "0 = only on demand and at exit");
    add("--split-check-interval-ms", "split_check_interval_ms", st.split_check_interval_ms,
        "how often partitions past their table's MAX_FILESIZE are split at their middle row; 0 = only at compact");
    add("--log-sync-interval-ms", "log_sync_interval_ms", st.log_sync_interval_ms, "sync period of durability=log");
    add("--max-message", "max_message", st.max_message, "largest RPC message accepted (e.g. 256MiB)");
    add("--max-batch", "max_batch", st.max_batch, "most actions in one batch call");
    add("--max-in-flight", "max_in_flight", st.max_in_flight, "most calls in flight per connection");
    add("--max-connections", "max_connections", st.max_connections,
        "most client connections at once; more are refused at login (0 = no limit)");
    add("--idle-timeout", "idle_timeout", st.idle_timeout,
        "seconds a connection may send nothing before it is closed (0 = never)");
    add("--max-unsent", "max_unsent", st.max_unsent,
        "replies a client may leave unread before its connection is closed (e.g. 64MiB)");
    add("--worker-threads", "worker_threads", st.worker_threads, "CAF worker threads (0 = half the cores, at least 1)");
    add("--event-loops", "event_loops", st.event_loops, "RPC event-loop threads sharing the port (0 = one per core)");
    add("--loop-affinity", "loop_affinity", st.loop_affinity,
        "event loop i runs on CPU i and takes the connections arriving there (true/false)");
    add("--idle-background-threads", "idle_background_threads", st.idle_background_threads,
        "snapshot writers, the memory releaser and WiredTiger's threads at idle CPU priority, so serving comes "
        "first (true/false)");
    add("--io-uring", "io_uring", st.io_uring,
        "read and send each event-loop turn's frames with io_uring, one io_uring_enter each (true/false)");
    add("--worker-spin-polls", "worker_spin_polls", st.worker_spin_polls,
        "queue polls an idle CAF worker spins through before it sleeps");
    add("--worker-nap-polls", "worker_nap_polls", st.worker_nap_polls,
        "then polls 50 us apart before it blocks until woken (0 = block at once)");
    add("--worker-idle-sleep-ms", "worker_idle_sleep_ms", st.worker_idle_sleep_ms,
        "then sleeps until woken, waking every N ms to steal work from busy workers (>= 1)");
    add("--metrics-listen", "metrics_listen", st.metrics_listen,
        "address:port of the HTTP metrics endpoint (/metrics) and status page (/); empty = none");
    add("--tls-cert", "tls_cert", st.tls_cert, "PEM certificate chain: TLS on the port, both protocols");
    add("--tls-key", "tls_key", st.tls_key, "PEM private key (unencrypted) of --tls-cert");
    add("--cluster", "cluster", st.cluster, "join the cluster coordinated by ZooKeeper at HOST:PORT[,...][/chroot]");
    add("--node-id", "node_id", st.node_id, "this node's id in the cluster ([A-Za-z0-9_.-], up to 128)");
    add("--advertise", "advertise", st.advertise,
        "HOST:PORT where clients reach this node (default: the listen address)");
    add("--peer-listen", "peer_listen", st.peer_listen,
        "HOST:PORT for node-to-node messages (default: advertised host, any port)");
    add("--zk-session-timeout-ms", "zk_session_timeout_ms", st.zk_session_timeout_ms,
        "ZooKeeper session timeout of a cluster node");
    add("--replication-factor", "replication_factor", st.replication_factor,
        "replicas (a Raft group) of each partition of a table created without REGION_REPLICATION: 1, 3 or 5");
    add("--election-timeout-ms", "election_timeout_ms", st.election_timeout_ms,
        "Raft election timeout of this node's replicas (an election waits 1x to 2x it)");
    add("--dead-node-timeout", "dead_node_timeout", st.dead_node_timeout,
        "seconds a node may be dead (its ZooKeeper membership gone) before the master replaces each of its "
        "replicas on a live node");
    add("--thrift-listen", "thrift_listen", st.thrift_listen,
        "address:port of HBase's thrift2 gateway (THBaseService); empty = none");
    add("--thrift1-listen", "thrift1_listen", st.thrift1_listen,
        "address:port of HBase's thrift1 gateway (Hbase, what happybase speaks); empty = none");
    add_switch("--thrift-framed", "thrift_framed", st.thrift_framed,
               "the Thrift gateways use framed transport instead of buffered (HBase's -f)");
    add_switch("--thrift-compact", "thrift_compact", st.thrift_compact,
               "the Thrift gateways use the compact protocol instead of binary (HBase's -c)");
    add("--thrift-threads", "thrift_threads", st.thrift_threads,
        "serving threads of each Thrift gateway: event loops, each running its connections' calls in turn");
    add_switch("--thrift-unauthenticated", "thrift_unauthenticated", st.thrift_unauthenticated,
               "serve the Thrift gateways on a server with a token: HBase's Thrift services have no login, so "
               "their clients are not asked for it");
  }

  // After parsing: the --config file's keys set what no flag gave. A key of another type
  // than its setting's is refused (not ignored: a setting the operator wrote must not
  // silently keep its default).
  problem load_config() {
    if (config_.empty()) return {};
    try {
      auto t = toml::parse_file(config_);
      for (const auto& k : keys_) {
        if (!t.contains(k.name) || std::any_of(k.flags.begin(), k.flags.end(), [](auto* f) { return f->count() > 0; }))
          continue;
        if (auto wrong = k.take(t[k.name]); !wrong.empty())
          return "cannot read " + config_ + ": key '" + k.name + "' must be " + wrong;
      }
    } catch (const toml::parse_error& e) {
      return "cannot read " + config_ + ": " + std::string(e.description());
    }
    return {};
  }

 private:
  struct key {
    const char* name;
    std::vector<CLI::Option*> flags;  // any of them given: the key is not read
    // Sets the setting from the key's value; empty, or the type it must have.
    std::function<std::string(toml::node_view<toml::node>)> take;
  };
  // A boolean flag that may be given alone ("--thrift-framed"), or with a value.
  CLI::Option* add_switch(const char* flag, const char* name, bool& field, const char* help) {
    return add(flag, name, field, help, app_.add_flag(flag, field, help));
  }
  template <class T>
  CLI::Option* add(const char* flag, const char* name, T& field, const char* help, CLI::Option* given = nullptr) {
    auto* option = given ? given : app_.add_option(flag, field, help);
    keys_.push_back({name, {option}, [&field](toml::node_view<toml::node> v) -> std::string {
                       // Exact types (toml++'s value<bool> would take 1 as true), but a
                       // number may be written as an integer.
                       std::optional<T> got;
                       if constexpr (std::is_floating_point_v<T>)
                         got = v.value<T>();
                       else
                         got = v.value_exact<T>();
                       if (got) {
                         field = *got;
                         return {};
                       }
                       return std::is_same_v<T, bool>          ? "a boolean"
                              : std::is_same_v<T, std::string> ? "a string"
                              : std::is_floating_point_v<T>    ? "a number"
                                                               : "an integer";
                     }});
    return option;
  }

  CLI::App& app_;
  std::string config_;
  std::vector<key> keys_;
};

// This machine's cores, at least 1: the defaults of --worker-threads and --event-loops.
std::int64_t hardware_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

// The store's options and its workers' tuning, from `st`.
problem store_settings(const settings& st, cellar::store_options& so, cellar::detail::scheduler_tuning& tune) {
  so.directory = st.data;
  so.salvage = st.salvage;
  so.idle_background_threads = st.idle_background_threads;
  if (st.durability == "snapshot")
    so.durability = cellar::durability::snapshot;
  else if (st.durability == "log")
    so.durability = cellar::durability::log;
  else if (st.durability == "log-sync")
    so.durability = cellar::durability::log_sync;
  else
    return "--durability must be snapshot, log or log-sync";
  if (st.compression == "snappy")
    so.compression = cellar::compression::snappy;
  else if (st.compression == "zlib")
    so.compression = cellar::compression::zlib;
  else if (st.compression == "none")
    so.compression = cellar::compression::none;
  else
    return "--compression must be snappy, zlib or none";
  auto limit = parse_bytes(st.memory_limit);
  if (!limit) return "--memory-limit: not a size: " + st.memory_limit;
  so.memory_limit_bytes = *limit;
  so.snapshot_interval = std::chrono::milliseconds(std::max<std::int64_t>(0, st.snapshot_interval_ms));
  if (st.split_check_interval_ms < 0)
    return "--split-check-interval-ms (split_check_interval_ms) must be 0 or more, not " +
           std::to_string(st.split_check_interval_ms);
  so.split_check_interval = std::chrono::milliseconds(st.split_check_interval_ms);
  so.log_sync_interval = std::chrono::milliseconds(std::max<std::int64_t>(1, st.log_sync_interval_ms));
  // Server defaults: half the cores for partition actors, one event loop per core, and
  // workers that sleep instead of spinning, since a spinning worker takes the CPU the event
  // loops need, and the event loops serve most requests in place. Workers block at once
  // instead of napping 50 us at a time (--worker-nap-polls 0): each nap is a timer wake-up,
  // which costs more than the work it looks for.
  const std::int64_t cores = hardware_cores();
  so.worker_threads =
      static_cast<std::size_t>(st.worker_threads > 0 ? st.worker_threads : std::max<std::int64_t>(1, cores / 2));
  if (st.worker_spin_polls < 0) return "--worker-spin-polls must be >= 0";
  tune.spin_polls = static_cast<std::size_t>(st.worker_spin_polls);
  if (st.worker_nap_polls < 0) return "--worker-nap-polls must be >= 0";
  tune.nap_polls = static_cast<std::size_t>(st.worker_nap_polls);
  if (st.worker_idle_sleep_ms < 1) return "--worker-idle-sleep-ms must be >= 1";
  tune.idle_sleep = std::chrono::milliseconds(st.worker_idle_sleep_ms);
  return {};
}

// The RPC server's options, from `st` (whose token becomes the one resolved: from the
// flag or key, the token file, or CELLAR_TOKEN).
problem server_settings(settings& st, cellar::rpc::server_options& ro) {
  const auto colon = st.listen.rfind(':');
  if (colon == std::string::npos) return "--listen must be address:port";
  ro.address = st.listen.substr(0, colon);
  try {
    ro.port = static_cast<std::uint16_t>(std::stoul(st.listen.substr(colon + 1)));
  } catch (...) {
    return "--listen: bad port in " + st.listen;
  }
  auto token = cellar::rpc::resolve_token(st.token, st.token_file);
  if (!token) return token.error().message();
  ro.token = token.value();
  st.token = ro.token;
  auto max_message = parse_bytes(st.max_message);
  if (!max_message || *max_message < 1024) return "--max-message: not a size: " + st.max_message;
  ro.max_message_bytes = *max_message;
  if (st.max_batch < 1 || st.max_in_flight < 1 || st.default_partitions < 1)
    return "--max-batch, --max-in-flight and --default-partitions must be at least 1";
  ro.max_batch = static_cast<std::size_t>(st.max_batch);
  ro.max_in_flight = static_cast<std::size_t>(st.max_in_flight);
  if (st.max_connections < 0) return "--max-connections must be >= 0";
  ro.max_connections = static_cast<std::size_t>(st.max_connections);
  if (!(st.idle_timeout >= 0) || st.idle_timeout > 1e7) return "--idle-timeout must be 0 to 1e7 seconds";
  ro.idle_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(st.idle_timeout * 1000));
  auto max_unsent = parse_bytes(st.max_unsent);
  if (!max_unsent || *max_unsent < 1024) return "--max-unsent: not a size of at least 1KiB: " + st.max_unsent;
  ro.max_unsent_bytes = *max_unsent;
  ro.default_partitions = static_cast<std::uint32_t>(st.default_partitions);
  if (st.event_loops < 0 || st.event_loops > 64) return "--event-loops must be 0 to 64";
  const std::int64_t cores = hardware_cores();
  ro.event_loops = static_cast<std::size_t>(st.event_loops > 0 ? st.event_loops : cores);
  ro.loop_affinity = st.loop_affinity;
  ro.io_uring = st.io_uring;
  ro.tls_cert_file = st.tls_cert;
  ro.tls_key_file = st.tls_key;
  if (!ro.tls_cert_file.empty() || !ro.tls_key_file.empty()) {  // checked before the store opens
    if (ro.tls_cert_file.empty() || ro.tls_key_file.empty())
      return "TLS needs both a certificate and its key (--tls-cert and --tls-key)";
    if (auto keys = cellar::rpc::load_server_keys(ro.tls_cert_file, ro.tls_key_file); !keys)
      return keys.error().to_string();
  }
  return {};
}

// The cluster settings, checked before the store opens; `peer_at`: --peer-listen's.
problem cluster_settings(const settings& st, std::optional<std::pair<std::string, std::uint16_t>>& peer_at) {
  if (!st.cluster.empty() && st.node_id.empty()) return "--cluster (cluster) needs --node-id (node_id)";
  if (!st.cluster.empty())
    if (auto s = cellar::cluster::check_node_id(st.node_id); !s) return "--node-id (node_id): " + s.message();
  if (st.zk_session_timeout_ms < 1 || st.zk_session_timeout_ms > 3600000)
    return "--zk-session-timeout-ms (zk_session_timeout_ms) must be 1 to 3600000, not " +
           std::to_string(st.zk_session_timeout_ms);
  if (st.replication_factor != 1 && st.replication_factor != 3 && st.replication_factor != 5)
    return "--replication-factor (replication_factor) must be 1, 3 or 5, not " + std::to_string(st.replication_factor);
  if (st.replication_factor != 1 && st.cluster.empty())
    return "--replication-factor above 1 needs --cluster: a single node holds one replica of each partition";
  if (st.election_timeout_ms < 50 || st.election_timeout_ms > 60000)
    return "--election-timeout-ms (election_timeout_ms) must be 50 to 60000, not " +
           std::to_string(st.election_timeout_ms);
  if (st.dead_node_timeout < 1)
    return "--dead-node-timeout (dead_node_timeout) must be at least 1 second, not " +
           std::to_string(st.dead_node_timeout);
  if (!st.advertise.empty() && !cellar::rpc::split_host_port(st.advertise))
    return "--advertise (advertise) must be address:port, not " + st.advertise;
  if (!st.peer_listen.empty() && !(peer_at = cellar::rpc::split_host_port(st.peer_listen)))
    return "--peer-listen (peer_listen) must be address:port, not " + st.peer_listen;
  return {};
}

// This node of the cluster of `st`, serving `store` through `srv`; exits the process if
// it cannot join.
std::unique_ptr<cellar::cluster::member> join(cellar::store& store, const settings& st,
                                              const cellar::rpc::server_options& ro, const cellar::rpc::server& srv,
                                              const std::optional<std::pair<std::string, std::uint16_t>>& peer_at) {
  cellar::cluster::member_options mo;
  mo.zookeeper.connect = st.cluster;
  mo.zookeeper.session_timeout = std::chrono::milliseconds(st.zk_session_timeout_ms);
  mo.node_id = st.node_id;
  mo.replication_factor = static_cast<std::uint32_t>(st.replication_factor);
  mo.election_timeout = std::chrono::milliseconds(st.election_timeout_ms);
  mo.dead_node_timeout = std::chrono::seconds(st.dead_node_timeout);
  mo.data_address = st.advertise.empty() ? ro.address + ":" + std::to_string(srv.port()) : st.advertise;
  auto advertised = cellar::rpc::split_host_port(mo.data_address);
  if (!advertised) std::_Exit(fail("--advertise must be address:port, not " + mo.data_address));
  mo.peer_host = peer_at ? peer_at->first : advertised->first;
  mo.peer_port = peer_at ? peer_at->second : 0;
  auto joined = cellar::cluster::member::join(store, mo);
  if (!joined) std::_Exit(fail("cannot join the cluster at " + st.cluster + ": " + joined.error().to_string()));
  spdlog::info("cellar-server: node '{}' of the cluster at {} (clients: {}, peers: {})", st.node_id, st.cluster,
               mo.data_address, joined.value()->peer_address());
  return std::move(joined.value());
}

// The Thrift gateways' settings, checked before the store opens (after server_settings,
// which resolves the token).
problem thrift_settings(const settings& st) {
  if (!st.thrift_listen.empty() && !cellar::rpc::split_host_port(st.thrift_listen))
    return "--thrift-listen must be address:port, not " + st.thrift_listen;
  if (!st.thrift1_listen.empty() && !cellar::rpc::split_host_port(st.thrift1_listen))
    return "--thrift1-listen must be address:port, not " + st.thrift1_listen;
  if (st.thrift_threads < 1 || st.thrift_threads > 64) return "--thrift-threads must be 1 to 64";
  if ((!st.thrift_listen.empty() || !st.thrift1_listen.empty()) && !st.token.empty() && !st.thrift_unauthenticated)
    return "the Thrift gateways cannot check the token (HBase's Thrift services have no login): serve them on a "
           "trusted address with --thrift-unauthenticated, or run without a token";
  return {};
}

// The Thrift gateways `st` asks for, serving `store`; exits the process if one cannot
// listen (the store is open: it ends rather than unwind, as main does).
std::vector<std::unique_ptr<cellar::thrift::gateway>> start_thrift(cellar::store& store, const settings& st,
                                                                   const cellar::rpc::server_options& ro) {
  std::vector<std::unique_ptr<cellar::thrift::gateway>> out;
  const std::pair<const std::string*, cellar::thrift::service> wanted[] = {
      {&st.thrift_listen, cellar::thrift::service::thrift2}, {&st.thrift1_listen, cellar::thrift::service::thrift1}};
  for (const auto& [listen, which] : wanted) {
    if (listen->empty()) continue;
    const char* flag = which == cellar::thrift::service::thrift2 ? "--thrift-listen" : "--thrift1-listen";
    auto at = cellar::rpc::split_host_port(*listen);
    if (!at) std::_Exit(fail(std::string(flag) + " must be address:port, not " + *listen));
    cellar::thrift::gateway_options o;
    o.service = which;
    o.address = at->first;
    o.port = at->second;
    o.framed = st.thrift_framed;
    o.compact = st.thrift_compact;
    o.tls_cert_file = ro.tls_cert_file;
    o.tls_key_file = ro.tls_key_file;
    o.max_connections = ro.max_connections;
    o.threads = static_cast<std::size_t>(st.thrift_threads);
    o.default_partitions = ro.default_partitions;
    auto g = cellar::thrift::gateway::start(store, o);
    if (!g) std::_Exit(fail(std::string(flag) + ": " + g.error().to_string()));
    spdlog::info("cellar-server: {} gateway on {}:{} ({}, {}{})",
                 which == cellar::thrift::service::thrift2 ? "thrift2" : "thrift1", o.address, g.value()->port(),
                 o.framed ? "framed" : "buffered", o.compact ? "compact" : "binary",
                 o.tls_cert_file.empty() ? "" : ", TLS");
    std::printf("%s on %s:%u\n", which == cellar::thrift::service::thrift2 ? "thrift2" : "thrift1", o.address.c_str(),
                g.value()->port());
    out.push_back(std::move(g.value()));
  }
  return out;
}

// The status page and metrics on `at`, started before the store opens so that they show
// its recovery's `progress` (rpc/status_http.h); main switches them to the store once it
// serves. Null if it cannot listen, after saying why.
std::unique_ptr<cellar::rpc::status_http> start_status_http(const std::pair<std::string, std::uint16_t>& at,
                                                            std::shared_ptr<cellar::recovery_progress> progress,
                                                            const cellar::rpc::server_options& ro) {
  cellar::rpc::status_http_options ho;
  ho.address = at.first;
  ho.port = at.second;
  auto source =
      std::make_shared<cellar::rpc::recovery_status>(std::move(progress), ro.address + ":" + std::to_string(ro.port));
  auto started = cellar::rpc::status_http::start(std::move(source), ho);
  if (!started) {
    fail(started.error().to_string());
    return nullptr;
  }
  auto http = std::move(started.value());
  spdlog::info("cellar-server: metrics on http://{}:{}/metrics, status page on http://{}:{}/", ho.address, http->port(),
               ho.address, http->port());
  std::printf("metrics on %s:%u\n", ho.address.c_str(), http->port());
  std::fflush(stdout);
  return http;
}

}  // namespace

int main(int argc, char** argv) {
  settings st;
  CLI::App app{"cellar-server: serves a cellar store over Cap'n Proto RPC"};
  flag_set flags(app, st);
  CLI11_PARSE(app, argc, argv);
  if (auto p = flags.load_config(); !p.empty()) return fail(p);

  spdlog::set_level(spdlog::level::from_str(st.log_level));
  cellar::store_options so;
  cellar::detail::scheduler_tuning tune;
  if (auto p = store_settings(st, so, tune); !p.empty()) return fail(p);
  cellar::rpc::server_options ro;
  if (auto p = server_settings(st, ro); !p.empty()) return fail(p);
  if (auto p = thrift_settings(st); !p.empty()) return fail(p);
  std::optional<std::pair<std::string, std::uint16_t>> metrics_at;
  if (!st.metrics_listen.empty()) {
    metrics_at = cellar::rpc::split_host_port(st.metrics_listen);
    if (!metrics_at) return fail("--metrics-listen must be address:port, not " + st.metrics_listen);
  }

  // Signals are taken by sigwait below: block them before any thread starts.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  std::optional<std::pair<std::string, std::uint16_t>> peer_at;
  if (auto p = cluster_settings(st, peer_at); !p.empty()) return fail(p);
  std::unique_ptr<cellar::rpc::status_http> http;
  if (metrics_at) {
    so.recovery_progress = std::make_shared<cellar::recovery_progress>();
    http = start_status_http(*metrics_at, so.recovery_progress, ro);
    if (!http) return 2;
  }
  auto opened =
      st.cluster.empty() ? cellar::detail::open_store(so, tune) : cellar::cluster::member::open_store(so, tune);
  if (!opened) return fail("cannot open " + st.data + ": " + opened.error().to_string());
  auto store = std::move(opened.value());
  auto srv = cellar::rpc::server::start(*store, ro);
  if (!srv) {
    // A port another process holds, most often: close what was opened, then end here
    // rather than unwind the store (see the end of main).
    (void)store->close();
    std::_Exit(fail(srv.error().to_string()));
  }
  if (http)  // stopped before the server and the store (below)
    http->serve(std::make_shared<cellar::rpc::store_status>(*store, *srv.value(),
                                                            ro.address + ":" + std::to_string(srv.value()->port())));
  std::unique_ptr<cellar::cluster::member> member;
  if (!st.cluster.empty()) member = join(*store, st, ro, *srv.value(), peer_at);
  auto thrift_gateways = start_thrift(*store, st, ro);
  if (st.data.empty())
    spdlog::info("cellar-server listening on {}:{} (in memory: no data directory, nothing persists{}{})", ro.address,
                 srv.value()->port(), st.token.empty() ? "" : ", token required",
                 ro.tls_cert_file.empty() ? "" : ", TLS");
  else
    spdlog::info("cellar-server listening on {}:{} (data {}, durability {}{}{})", ro.address, srv.value()->port(),
                 st.data, st.durability, st.token.empty() ? "" : ", token required",
                 ro.tls_cert_file.empty() ? "" : ", TLS");
  std::printf("listening on %s:%u\n", ro.address.c_str(), srv.value()->port());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&sigs, &sig);
  spdlog::info("cellar-server: signal {}, stopping", sig);
  if (http) http->stop();
  for (auto& g : thrift_gateways) g->stop();
  srv.value()->stop();
  member.reset();                // leaves the cluster before the store closes
  auto closed = store->close();  // final snapshot, log and WiredTiger closed
  if (!closed) {
    spdlog::error("cellar-server: closing the store: {}", closed.to_string());
    std::fflush(stdout);
    std::_Exit(1);
  }
  spdlog::info("cellar-server: stopped cleanly");
  std::fflush(stdout);
  // Everything is on disk and closed. CAF 0.17's actor_system destructor can wait
  // forever for a detached-thread count after the RPC server ran (seen on this
  // machine), so the process ends here instead of unwinding it.
  std::_Exit(0);
}
