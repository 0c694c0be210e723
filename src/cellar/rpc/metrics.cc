#include "rpc/metrics.h"

#include <algorithm>
#include <cstdio>

namespace cellar::rpc {

namespace {

std::size_t code_slot(code c) { return std::min<std::size_t>(static_cast<std::size_t>(c), code_slots - 1); }

std::string code_label(std::size_t slot) {
  if (slot == code_slots - 1) return "OTHER";
  return std::string(code_name(static_cast<code>(slot)));
}

const char* protocol_name(std::size_t p) { return p == 0 ? "rpc" : "frames"; }

// Only the thread that owns a shard writes it: a load and a store, no locked RMW.
void bump(std::atomic<std::uint64_t>& a, std::uint64_t n = 1) {
  a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

std::atomic<std::uint64_t> next_registry_id{1};

void append_number(std::string& out, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  out += buf;
}

}  // namespace

const char* operation_name(operation o) noexcept {
  switch (o) {
    case operation::get: return "get";
    case operation::put: return "put";
    case operation::remove: return "delete";
    case operation::increment: return "increment";
    case operation::append: return "append";
    case operation::row_mutations: return "row_mutations";
    case operation::check_and_mutate: return "check_and_mutate";
    case operation::mixed: return "mixed";
    case operation::scan: return "scan";
    case operation::scanner_next: return "scanner_next";
    case operation::login: return "login";
    case operation::ddl: return "ddl";
    case operation::create_table: return "create_table";
    case operation::alter_family: return "alter_family";
    case operation::drop_family: return "drop_family";
    case operation::drop_table: return "drop_table";
    case operation::truncate_table: return "truncate_table";
    case operation::list_tables: return "list_tables";
    case operation::describe: return "describe";
    case operation::snapshot: return "snapshot";
    case operation::stats: return "stats";
    case operation::summary: return "summary";
    case operation::disable_table: return "disable_table";
    case operation::enable_table: return "enable_table";
    case operation::is_table_enabled: return "is_table_enabled";
    case operation::backup: return "backup";
    case operation::alter_table: return "alter_table";
    case operation::create_namespace: return "create_namespace";
    case operation::drop_namespace: return "drop_namespace";
    case operation::alter_namespace: return "alter_namespace";
    case operation::describe_namespace: return "describe_namespace";
    case operation::list_namespaces: return "list_namespaces";
    case operation::list_namespace_tables: return "list_namespace_tables";
    case operation::list_regions: return "list_regions";
    case operation::split_region: return "split_region";
    case operation::merge_regions: return "merge_regions";
  }
  return "unknown";
}

operation batch_operation(capnp::List<wire::Action>::Reader actions) {
  if (actions.size() == 0) return operation::mixed;
  const auto kind = actions[0].which();
  for (auto a : actions)
    if (a.which() != kind) return operation::mixed;
  switch (kind) {
    case wire::Action::GET: return operation::get;
    case wire::Action::PUT: return operation::put;
    case wire::Action::DELETE: return operation::remove;
    case wire::Action::INCREMENT: return operation::increment;
    case wire::Action::APPEND: return operation::append;
    case wire::Action::ROW_MUTATIONS: return operation::row_mutations;
    case wire::Action::CHECK_AND_MUTATE: return operation::check_and_mutate;
  }
  return operation::mixed;
}

struct metrics::shard {
  std::thread::id owner;
  std::atomic<std::uint64_t> requests[protocol_count][operation_count][code_slots];
  std::atomic<std::uint64_t> actions[operation_count][code_slots];
  std::atomic<std::uint64_t> latency[protocol_count][operation_count][latency_bucket_count];
  std::atomic<std::uint64_t> latency_ns[protocol_count][operation_count];
  std::atomic<std::uint64_t> connections[protocol_count];
};

metrics::metrics() : id_(next_registry_id.fetch_add(1)) {}
metrics::~metrics() = default;

metrics::shard& metrics::local() {
  struct cached {
    std::uint64_t id = 0;
    shard* s = nullptr;
  };
  thread_local cached mine;
  if (mine.id == id_) return *mine.s;
  absl::MutexLock l(&mu_);
  const auto me = std::this_thread::get_id();
  shard* found = nullptr;
  for (auto& s : shards_)
    if (s->owner == me) found = s.get();  // this thread, back from another registry
  if (!found) {
    shards_.push_back(std::make_unique<shard>());
    found = shards_.back().get();
    found->owner = me;
  }
  mine = {id_, found};
  return *found;
}

void metrics::record(protocol p, operation op, code c, clock::time_point start) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count();
  const double seconds = static_cast<double>(ns) / 1e9;
  std::size_t bucket = 0;
  while (bucket < std::size(latency_bounds) && seconds > latency_bounds[bucket]) ++bucket;
  auto& s = local();
  const auto pi = static_cast<std::size_t>(p);
  const auto oi = static_cast<std::size_t>(op);
  bump(s.requests[pi][oi][code_slot(c)]);
  bump(s.latency[pi][oi][bucket]);
  bump(s.latency_ns[pi][oi], static_cast<std::uint64_t>(std::max<std::int64_t>(0, ns)));
}

void metrics::record_action(operation op, code c) { bump(local().actions[static_cast<std::size_t>(op)][code_slot(c)]); }

void metrics::record_batch(protocol p, operation op, const status& s, const std::vector<op_result>& results,
                           clock::time_point start) {
  auto& sh = local();
  for (const auto& r : results) bump(sh.actions[static_cast<std::size_t>(op)][code_slot(r.st.code())]);
  record(p, op, s.code(), start);
}

void metrics::connection_accepted(protocol p) { bump(local().connections[static_cast<std::size_t>(p)]); }

metrics::snapshot metrics::read() const {
  snapshot out;
  absl::MutexLock l(&mu_);
  for (const auto& s : shards_) {
    for (std::size_t p = 0; p < protocol_count; ++p) {
      out.connections_accepted[p] += s->connections[p].load(std::memory_order_relaxed);
      for (std::size_t o = 0; o < operation_count; ++o) {
        for (std::size_t c = 0; c < code_slots; ++c)
          out.requests[p][o][c] += s->requests[p][o][c].load(std::memory_order_relaxed);
        for (std::size_t b = 0; b < latency_bucket_count; ++b)
          out.latency[p][o][b] += s->latency[p][o][b].load(std::memory_order_relaxed);
        out.latency_sum_seconds[p][o] += static_cast<double>(s->latency_ns[p][o].load(std::memory_order_relaxed)) / 1e9;
      }
    }
    for (std::size_t o = 0; o < operation_count; ++o)
      for (std::size_t c = 0; c < code_slots; ++c)
        out.actions[o][c] += s->actions[o][c].load(std::memory_order_relaxed);
  }
  return out;
}

std::string metrics::render() const {
  const auto snap = std::make_unique<snapshot>(read());
  std::string out;
  out += "# HELP cellar_requests_total Calls answered, by protocol, operation and the call's error code.\n";
  out += "# TYPE cellar_requests_total counter\n";
  for (std::size_t p = 0; p < protocol_count; ++p)
    for (std::size_t o = 0; o < operation_count; ++o)
      for (std::size_t c = 0; c < code_slots; ++c)
        if (auto n = snap->requests[p][o][c]) {
          out += "cellar_requests_total{protocol=\"" + std::string(protocol_name(p)) + "\",op=\"" +
                 operation_name(static_cast<operation>(o)) + "\",code=\"" + code_label(c) + "\"} " + std::to_string(n) +
                 "\n";
        }
  out += "# HELP cellar_actions_total Actions of batch calls, by the batch's operation and the action's outcome.\n";
  out += "# TYPE cellar_actions_total counter\n";
  for (std::size_t o = 0; o < operation_count; ++o)
    for (std::size_t c = 0; c < code_slots; ++c)
      if (auto n = snap->actions[o][c]) {
        out += "cellar_actions_total{op=\"" + std::string(operation_name(static_cast<operation>(o))) + "\",code=\"" +
               code_label(c) + "\"} " + std::to_string(n) + "\n";
      }
  out += "# HELP cellar_request_duration_seconds Time from a call's arrival to its reply.\n";
  out += "# TYPE cellar_request_duration_seconds histogram\n";
  for (std::size_t p = 0; p < protocol_count; ++p)
    for (std::size_t o = 0; o < operation_count; ++o) {
      std::uint64_t count = 0;
      for (auto n : snap->latency[p][o]) count += n;
      if (count == 0) continue;
      const std::string labels =
          "protocol=\"" + std::string(protocol_name(p)) + "\",op=\"" + operation_name(static_cast<operation>(o)) + "\"";
      std::uint64_t cumulative = 0;
      for (std::size_t b = 0; b < latency_bucket_count; ++b) {
        cumulative += snap->latency[p][o][b];
        out += "cellar_request_duration_seconds_bucket{" + labels + ",le=\"";
        if (b < std::size(latency_bounds))
          append_number(out, latency_bounds[b]);
        else
          out += "+Inf";
        out += "\"} " + std::to_string(cumulative) + "\n";
      }
      out += "cellar_request_duration_seconds_sum{" + labels + "} ";
      append_number(out, snap->latency_sum_seconds[p][o]);
      out += "\ncellar_request_duration_seconds_count{" + labels + "} " + std::to_string(count) + "\n";
    }
  out += "# HELP cellar_connections_accepted_total Client connections accepted, by protocol.\n";
  out += "# TYPE cellar_connections_accepted_total counter\n";
  for (std::size_t p = 0; p < protocol_count; ++p)
    out += "cellar_connections_accepted_total{protocol=\"" + std::string(protocol_name(p)) + "\"} " +
           std::to_string(snap->connections_accepted[p]) + "\n";
  return out;
}

}  // namespace cellar::rpc
