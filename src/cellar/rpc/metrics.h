// rpc/metrics.h: what the server counts about the calls it serves, for Prometheus.
//
// The server records every call at the point where its reply is built: which protocol
// (Cap'n Proto RPC or frames), which operation, the call's error code (OK when it ran),
// how long it took from its arrival to its reply, and for a batch the outcome of each of
// its actions. Connections are counted when they are accepted. `render` writes the counts
// in the Prometheus text format (version 0.0.4); status_http.h serves it with the store's
// own figures (tables, memory, snapshots, the log).
//
// Recording costs a few relaxed atomic stores and no lock: each recording thread (an
// event loop) owns a shard of counters that only it writes; a scrape sums the shards.
//
// Thread safety: every member may be called from any thread at once.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/ops.h"
#include "cellar/status.h"

namespace cellar::rpc {

enum class protocol : std::uint8_t { rpc, frames };
inline constexpr std::size_t protocol_count = 2;

// The operation of a call. A batch is named after its actions when they are all of one
// kind (a batch of gets is `get`), else `mixed`.
enum class operation : std::uint8_t {
  get,
  put,
  remove,  // "delete"
  increment,
  append,
  row_mutations,
  check_and_mutate,
  mixed,
  scan,          // the opening call of a scan (RPC `scan`) or a frames scan page
  scanner_next,  // RPC Scanner.next
  login,
  ddl,
  create_table,
  alter_family,
  drop_family,
  drop_table,
  truncate_table,
  list_tables,
  describe,
  snapshot,
  stats,
  summary,
  disable_table,
  enable_table,
  is_table_enabled,
  alter_table,
  backup,  // named snapshots, their export and import, bulk loads
  create_namespace,
  drop_namespace,
  alter_namespace,
  describe_namespace,
  list_namespaces,
  list_namespace_tables,
  list_regions,
  split_region,
  merge_regions,
};
inline constexpr std::size_t operation_count = 36;
// Outcomes are counted per error code: codes 0 to 30 each, any later one in slot 31.
inline constexpr std::size_t code_slots = 32;

// The label of an operation: "get", "delete", "scanner_next", ...
const char* operation_name(operation o) noexcept;

// Latency histogram bucket bounds, in seconds (Prometheus `le`), without +Inf.
inline constexpr double latency_bounds[] = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                            0.0025,  0.005,    0.01,    0.025,  0.05,    0.1,    0.25,
                                            0.5,     1,        2.5,     5,      10};
inline constexpr std::size_t latency_bucket_count = std::size(latency_bounds) + 1;  // + Inf

class metrics {
 public:
  using clock = std::chrono::steady_clock;

  metrics();
  ~metrics();
  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  // A call of `op` over `p` answered with `c`, `start` being when it arrived.
  void record(protocol p, operation op, code c, clock::time_point start);
  // The outcome of one action of a batch of `op`.
  void record_action(operation op, code c);
  // A batch call's reply: the call (code `s`) and each of its actions' outcomes.
  void record_batch(protocol p, operation op, const status& s, const std::vector<op_result>& results,
                    clock::time_point start);
  // A connection accepted (opened), then known to speak `p` (accepted), then closed.
  void connection_opened() { open_.fetch_add(1, std::memory_order_relaxed); }
  void connection_accepted(protocol p);
  void connection_closed() { open_.fetch_sub(1, std::memory_order_relaxed); }
  // Connections opened and not yet closed.
  std::int64_t open_connections() const { return open_.load(std::memory_order_relaxed); }

  // Sums over every shard, at one instant per counter.
  struct snapshot {
    std::uint64_t requests[protocol_count][operation_count][code_slots] = {};  // by code slot
    std::uint64_t actions[operation_count][code_slots] = {};
    std::uint64_t latency[protocol_count][operation_count][latency_bucket_count] = {};  // not cumulative
    double latency_sum_seconds[protocol_count][operation_count] = {};
    std::uint64_t connections_accepted[protocol_count] = {};
  };
  snapshot read() const;

  // The counters above in the Prometheus text format: cellar_requests_total,
  // cellar_actions_total, cellar_request_duration_seconds, cellar_connections_accepted_total.
  std::string render() const;

 private:
  struct shard;
  shard& local();

  const std::uint64_t id_;  // tells a thread's cached shard apart from another registry's
  std::atomic<std::int64_t> open_{0};
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<shard>> shards_ ABSL_GUARDED_BY(mu_);  // only ever grows
};

// The operation a batch of these actions counts as.
operation batch_operation(capnp::List<wire::Action>::Reader actions);

}  // namespace cellar::rpc
