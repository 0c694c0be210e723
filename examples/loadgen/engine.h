// loadgen/engine.h: what a target (cellar over RPC, cellar embedded, redis) provides to the
// driver. One engine per driver thread; it owns that thread's connections and keeps many
// requests in flight on them (an event loop: kj for cellar RPC, epoll with io_uring for frames
// and redis (uring_io.h), a completion queue fed by CAF for the embedded store).
//
// A `slot` is one outstanding request unit of one connection: `depth` slots per connection
// is the pipelining depth. A slot carries `batch` YCSB operations; the engine turns them
// into as few calls as the target allows (cellar: one `batch` call for the reads, updates
// and inserts, one scan call per scan; redis: one command or two per operation, all
// written together) and reports the slot done when every call has answered.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cellar/schema.h"
#include "ycsb.h"

namespace loadgen {

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct slot {
  int conn = 0;
  std::vector<operation> ops;
  std::int64_t intended_ns = 0;  // when the schedule wanted it to start (target rate)
  std::int64_t start_ns = 0;     // when it was sent
  std::int64_t mid_ns = 0;       // read-modify-write: when the read answered
  std::int64_t end_ns = 0;
  // Filled by the engine: outcome per op (false: error or, for reads, not found).
  std::vector<char> ok;
  std::vector<std::int32_t> rows;  // scans: rows returned
  // Filled by the engines that know it: why the slot's first failed op failed.
  std::string why;
  // Engine bookkeeping.
  int calls_pending = 0;
};

class engine {
 public:
  virtual ~engine() = default;
  // Sends s.ops; the engine sizes s.ok/s.rows and stamps s.mid_ns (rmw).
  virtual void start(slot& s) = 0;
  // Runs the event loop until a slot completes or `deadline_ns` (steady clock) passes;
  // appends completed slots (with end_ns stamped) to `done`.
  virtual void wait(std::vector<slot*>& done, std::int64_t deadline_ns) = 0;
  // How the engine reads and writes its sockets: "io_uring", "epoll", or its event loop's name.
  virtual const char* io() const = 0;
};

// The cluster target: where each row of the table goes, read from ZooKeeper once, at setup
// (prepare_cellar_cluster). A map that changes during a run costs forwards at the nodes,
// not errors.
struct cluster_route {
  cellar::partition_spec spec;         // the table's partition rule
  std::vector<std::uint32_t> owner;    // per partition, its node's index in `addresses`
  std::vector<std::string> addresses;  // the owner nodes' data addresses (host:port)
};

struct target_options {
  std::string target;               // cellar-rpc | cellar-cluster | cellar-embedded | redis | thrift2
  std::string protocol = "frames";  // cellar-rpc: frames (rpc/frames.h) | capnp (Cap'n Proto RPC)
  std::string host = "127.0.0.1";
  int port = 0;
  std::string table = "usertable";
  std::string family = "family";
  std::string partitioning = "range:8";      // cellar: none | hash:N | range:N
  int connections = 1;                       // for this engine
  key_format keys;                           // YCSB insertorder and zeropadding
  int field_length = loadgen::field_length;  // bytes of each field's value (YCSB fieldlength)
  std::uint64_t seed = 1;
  std::string token;   // cellar: the login token
  std::string tls_ca;  // cellar: TLS, trusting this PEM file's CAs (rpc/tls.h); empty: plain TCP
  // redis and cellar frames over plain TCP: reads and writes through one io_uring per engine
  // (uring_io.h) instead of epoll with recv(2) and send(2); epoll where the kernel refuses it.
  bool io_uring = true;
  // redis: the servers of a sharded set (host, port), each key on the one its Redis Cluster
  // hash slot gives (redis_slots.h); each of `connections` opens one connection to every
  // server. Empty: host and port, one server. Scans need one server.
  std::vector<std::pair<std::string, int>> redis_shards;
  // redis: above 0, each slot's writes on a connection are followed by `WAIT redis_wait
  // redis_wait_timeout_ms`, and they count as done only when it answers that at least
  // `redis_wait` replicas have them (fewer: each counts as an error). Reads are unchanged.
  int redis_wait = 0;
  int redis_wait_timeout_ms = 1000;
  // cellar-cluster: set by prepare_cellar_cluster; the frames engine then opens, for each of
  // its `connections`, one connection to every node and sends each request to its row's owner.
  std::shared_ptr<const cluster_route> route;
};

// Per target: one-time setup before the load phase (create the table, flush redis).
void prepare_cellar_rpc(const target_options& o, bool recreate);
void prepare_redis(const target_options& o, bool recreate);
// The cluster at `zookeeper` ("host:port[/chroot]"): creates the table through any node and
// sets o.route. Throws with the reason.
void prepare_cellar_cluster(target_options& o, const std::string& zookeeper, bool recreate);
// The embedded store lives for the process: opens it and creates the table.
void prepare_embedded(const target_options& o);
// The thrift2 target (cellar's HBase Thrift gateway at host:port): creates the table there
// with RANGE partitions at the split keys --partitioning gives.
void prepare_thrift2(const target_options& o, bool recreate);
void close_embedded();

std::unique_ptr<engine> make_cellar_rpc_engine(const target_options& o);
std::unique_ptr<engine> make_cellar_frames_engine(const target_options& o);
std::unique_ptr<engine> make_redis_engine(const target_options& o);
std::unique_ptr<engine> make_embedded_engine(const target_options& o);
std::unique_ptr<engine> make_thrift2_engine(const target_options& o);

// Parses "none", "hash:N", "range:N" into a table descriptor's partitioning; throws.
struct partition_choice {
  std::string method;
  int n = 1;
};
partition_choice parse_partitioning(const std::string& s);
// Range bounds that split YCSB's hashed keys ("user" + 1..19 digits) into n even parts.
std::vector<std::string> ycsb_range_bounds(int n);
// The cellar table both cellar targets create: o.table with one family o.family,
// partitioned as o.partitioning says.
cellar::table_descriptor ycsb_table(const target_options& o);

// A pool of random values of `length` bytes, so value generation costs the client little.
class value_pool {
 public:
  value_pool(std::uint64_t seed, int length, std::size_t n = 1024);
  const std::string& pick(rng& r) const { return values_[r() % values_.size()]; }

 private:
  std::vector<std::string> values_;
};

}  // namespace loadgen
