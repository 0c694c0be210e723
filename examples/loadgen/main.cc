// loadgen: YCSB core workloads A to F against cellar (over RPC or embedded) and redis.
//
//   loadgen --target cellar-rpc --port 9090 --workload a --phase both --records 100000
//           --duration 30 --threads 2 --connections 50 --depth 1 --json a.json --svg a
//   loadgen --target redis --port 6379 --workload c --phase run --depth 16 ...
//   loadgen --target thrift2 --port 9091 --workload a ...  (cellar-server --thrift-listen)
//   loadgen --cluster zk1:2181/cellar --workload a ...   (each request straight to its owner node)
//   loadgen plot --kind cdf --out cdf.svg --title "YCSB C" cellar=c-cellar.json redis=c-redis.json
//
// See docs/ycsb.md. Each driver thread owns connections/threads connections and keeps
// `depth` requests in flight on each (closed loop); with --target-rate the requests follow
// a schedule, and latency is measured both from the actual send (service time) and from
// the scheduled start (no coordinated omission).
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <latch>
#include <mutex>
#include <thread>

#include "cellar/client.h"
#include "engine.h"
#include "report.h"
#include "rpc/socket_stream.h"

using namespace loadgen;

namespace {

struct config {
  target_options t;
  std::string workload = "a";
  std::string phase = "both";           // load | run | both
  std::string insert_order = "hashed";  // YCSB insertorder: hashed | ordered
  std::string request_distribution;     // YCSB requestdistribution; empty: the workload's
  std::int64_t records = 100000;
  std::int64_t operations = 0;  // 0: no count limit (use --duration)
  double duration = 0;          // seconds; 0: no time limit (use --operations)
  int threads = 2;
  int connections = 2;
  int depth = 1;
  int batch = 1;
  int load_batch = 50;
  double target_rate = 0;  // ops/s over all threads; 0: as fast as possible
  // Seconds a request may wait for its reply; past it the requests still unanswered count
  // as errors and the phase ends (a server that drops a reply must not stall the run).
  double request_timeout = 10;
  std::string json_out;
  std::string svg_prefix;
  std::string label;
  bool recreate = true;
  bool quiet = false;
};

struct shared_run {
  std::atomic<std::int64_t> budget{0};  // operations left to issue (when counted)
  bool counted = false;
  std::atomic<std::uint64_t> done_ops{0};
  std::atomic<std::uint64_t> errors{0};
  std::mutex why_mu;
  std::string first_why;  // guarded by why_mu: why the first failed operation failed, if known
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;  // deadline
};

std::unique_ptr<engine> make_engine(const target_options& o) {
  if (o.target == "cellar-cluster") return make_cellar_frames_engine(o);
  if (o.target == "cellar-rpc") return o.protocol == "capnp" ? make_cellar_rpc_engine(o) : make_cellar_frames_engine(o);
  if (o.target == "redis") return make_redis_engine(o);
  if (o.target == "cellar-embedded") return make_embedded_engine(o);
  if (o.target == "thrift2") return make_thrift2_engine(o);
  throw std::invalid_argument("unknown target " + o.target);
}

// One driver thread.
void drive(const config& cfg, bool load, workload_state& ws, const workload_spec& w, shared_run& sr, int index,
           int conns, int first_slot, int total_slots, std::latch& ready, std::latch& go, run_stats& out,
           std::int64_t& last_end, std::string& error, std::string& io) {
  std::unique_ptr<engine> eng;
  try {
    target_options o = cfg.t;
    o.connections = conns;
    o.seed = cfg.t.seed * 1000 + static_cast<std::uint64_t>(index);
    eng = make_engine(o);
    io = eng->io();
  } catch (const std::exception& e) {
    error = e.what();
    ready.count_down();
    go.wait();
    return;
  }
  op_chooser chooser(w, ws, cfg.t.seed * 7777 + static_cast<std::uint64_t>(index));
  const int batch = load ? std::max(cfg.batch, cfg.load_batch) : cfg.batch;
  std::vector<slot> slots(static_cast<std::size_t>(conns * cfg.depth));
  for (std::size_t i = 0; i < slots.size(); ++i) slots[i].conn = static_cast<int>(i) % conns;
  ready.count_down();
  go.wait();

  const bool paced = cfg.target_rate > 0 && !load;
  // Each slot sends `batch` ops every `period` ns: total_slots * batch / rate seconds.
  const double period = paced ? 1e9 * total_slots * batch / cfg.target_rate : 0;
  std::vector<std::int64_t> next_at(slots.size(), sr.start_ns);
  if (paced)
    for (std::size_t i = 0; i < slots.size(); ++i)
      next_at[i] =
          sr.start_ns + static_cast<std::int64_t>(period * (first_slot + static_cast<double>(i)) / total_slots);
  std::vector<char> busy(slots.size(), 0), stopped(slots.size(), 0);
  std::size_t in_flight = 0, live = slots.size();
  std::vector<slot*> done;
  bool stopping = false;
  const auto timeout_ns = static_cast<std::int64_t>(cfg.request_timeout * 1e9);
  std::int64_t next_check = 0;  // when a request in flight may first be past its timeout

  auto take = [&](slot& s) -> bool {
    s.ops.clear();
    for (int b = 0; b < batch; ++b) {
      if (sr.counted && sr.budget.fetch_sub(1) <= 0) break;
      if (load) {
        const std::int64_t k = ws.load_next.fetch_add(1);
        if (k >= ws.recordcount) break;
        s.ops.push_back({op_kind::insert, k, 0, 0});
      } else {
        s.ops.push_back(chooser.next());
      }
    }
    return !s.ops.empty();
  };

  auto record = [&](slot& s) {
    const std::int64_t total = s.end_ns - s.start_ns;
    const std::size_t sec = static_cast<std::size_t>(std::max<std::int64_t>(0, s.end_ns - sr.start_ns) / 1000000000);
    if (out.seconds.size() <= sec) out.seconds.resize(sec + 1);
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
      const operation& op = s.ops[i];
      auto rec = [&](op_kind k, std::int64_t lat, std::int64_t from_intended) {
        auto& st = out.ops[static_cast<std::size_t>(k)];
        st.service.record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, lat)));
        if (paced) st.intended.record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, from_intended)));
        out.seconds[sec].at(k).record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, lat)));
        if (!s.ok[i]) ++st.errors;
      };
      if (op.kind == op_kind::rmw) {
        rec(op_kind::read, s.mid_ns - s.start_ns, s.mid_ns - s.intended_ns);
        rec(op_kind::update, s.end_ns - s.mid_ns, s.end_ns - s.mid_ns);
      }
      rec(op.kind, total, s.end_ns - s.intended_ns);
      out.total.service.record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, total)));
      if (op.kind == op_kind::scan)
        out.ops[static_cast<std::size_t>(op_kind::scan)].rows += static_cast<std::uint64_t>(s.rows[i]);
      if (op.kind == op_kind::insert && !load) ws.inserts.acknowledge(op.keynum);
      if (!s.ok[i]) sr.errors.fetch_add(1, std::memory_order_relaxed);
    }
    if (!s.why.empty()) {
      std::lock_guard l(sr.why_mu);
      if (sr.first_why.empty()) sr.first_why = s.why;
      s.why.clear();
    }
    sr.done_ops.fetch_add(s.ops.size(), std::memory_order_relaxed);
    last_end = std::max(last_end, s.end_ns);
  };

  // Every request in flight failed for want of a reply: each counts as an error with the
  // time it waited; the engine, with its connections, is dropped with the thread.
  auto abandon_unanswered = [&] {
    const std::int64_t t = now_ns();
    std::size_t unanswered = 0;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      if (busy[i] != 1) continue;
      slot& s = slots[i];
      s.ok.assign(s.ops.size(), 0);
      s.rows.resize(s.ops.size(), 0);
      if (s.mid_ns == 0) s.mid_ns = t;
      s.end_ns = t;
      char why[96];
      std::snprintf(why, sizeof why, "no reply within %g s (--request-timeout)", cfg.request_timeout);
      s.why = why;
      record(s);
      busy[i] = 0;
      ++unanswered;
    }
    in_flight = 0;
    std::fprintf(stderr, "loadgen: thread %d: %zu requests had no reply within %g s: counted as errors\n", index,
                 unanswered, cfg.request_timeout);
  };

  try {
    while (live > 0) {
      const std::int64_t now = now_ns();
      if (!stopping && sr.end_ns > 0 && now >= sr.end_ns) stopping = true;
      std::int64_t wake = sr.end_ns > 0 ? sr.end_ns : now + 1000000000;
      for (std::size_t i = 0; i < slots.size(); ++i) {
        if (busy[i] || stopped[i]) continue;
        if (stopping || !take(slots[i])) {
          stopped[i] = 1;
          --live;
          continue;
        }
        if (paced && next_at[i] > now) {
          // not due yet: put the ops back into the slot and wait for its time
          wake = std::min(wake, next_at[i]);
          slots[i].intended_ns = next_at[i];
          busy[i] = 2;  // scheduled
          continue;
        }
        slots[i].intended_ns = paced ? next_at[i] : now;
        slots[i].start_ns = now_ns();
        slots[i].mid_ns = 0;
        busy[i] = 1;
        ++in_flight;
        eng->start(slots[i]);
      }
      // Scheduled slots whose time came.
      if (paced) {
        const std::int64_t t = now_ns();
        for (std::size_t i = 0; i < slots.size(); ++i) {
          if (busy[i] != 2) continue;
          if (stopping) {
            busy[i] = 0;
            stopped[i] = 1;
            --live;
            continue;
          }
          if (next_at[i] <= t) {
            slots[i].start_ns = now_ns();
            slots[i].mid_ns = 0;
            busy[i] = 1;
            ++in_flight;
            eng->start(slots[i]);
          } else {
            wake = std::min(wake, next_at[i]);
          }
        }
      }
      if (live == 0) break;
      if (in_flight == 0 && !paced) continue;
      // No request can be late before the oldest one in flight is: look again then.
      if (timeout_ns > 0 && in_flight > 0) {
        const std::int64_t t = now_ns();
        if (t >= next_check) {
          std::int64_t oldest = t;
          for (std::size_t i = 0; i < slots.size(); ++i)
            if (busy[i] == 1) oldest = std::min(oldest, slots[i].start_ns);
          if (t - oldest >= timeout_ns) {
            abandon_unanswered();
            break;
          }
          next_check = oldest + timeout_ns;
        }
        wake = std::min(wake, next_check);
      }
      done.clear();
      eng->wait(done, wake);
      for (auto* s : done) {
        const std::size_t i = static_cast<std::size_t>(s - slots.data());
        record(*s);
        busy[i] = 0;
        --in_flight;
        if (paced) next_at[i] += static_cast<std::int64_t>(period);
      }
      if (stopping && in_flight == 0) {
        // Everything answered: retire the slots that are idle.
        for (std::size_t i = 0; i < slots.size(); ++i)
          if (!stopped[i] && busy[i] != 1) {
            stopped[i] = 1;
            --live;
          }
      }
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
}

nlohmann::json run_phase(const config& cfg, bool load, workload_state& ws, const workload_spec& w) {
  shared_run sr;
  if (load) {
    sr.counted = false;
  } else if (cfg.operations > 0) {
    sr.counted = true;
    sr.budget = cfg.operations;
  }
  const int threads = std::max(1, std::min(cfg.threads, cfg.connections));
  std::latch ready(threads), go(1);
  std::vector<run_stats> stats(static_cast<std::size_t>(threads));
  std::vector<std::int64_t> last_end(static_cast<std::size_t>(threads), 0);
  std::vector<std::string> errors(static_cast<std::size_t>(threads));
  std::vector<std::string> io(static_cast<std::size_t>(threads));  // each engine's way of I/O
  std::vector<std::thread> ts;
  int first_slot = 0;
  const int total_slots = cfg.connections * cfg.depth;
  for (int i = 0; i < threads; ++i) {
    const int conns = cfg.connections / threads + (i < cfg.connections % threads ? 1 : 0);
    ts.emplace_back(drive, std::cref(cfg), load, std::ref(ws), std::cref(w), std::ref(sr), i, conns, first_slot,
                    total_slots, std::ref(ready), std::ref(go), std::ref(stats[static_cast<std::size_t>(i)]),
                    std::ref(last_end[static_cast<std::size_t>(i)]), std::ref(errors[static_cast<std::size_t>(i)]),
                    std::ref(io[static_cast<std::size_t>(i)]));
    first_slot += conns * cfg.depth;
  }
  ready.wait();
  for (auto& e : errors)
    if (!e.empty()) {
      go.count_down();
      for (auto& t : ts) t.join();
      throw std::runtime_error(e);
    }
  sr.start_ns = now_ns();
  sr.end_ns = (!load && cfg.duration > 0) ? sr.start_ns + static_cast<std::int64_t>(cfg.duration * 1e9) : 0;
  go.count_down();

  // Progress on a terminal.
  std::atomic<bool> finished{false};
  std::thread progress;
  if (!cfg.quiet && isatty(STDOUT_FILENO)) {
    progress = std::thread([&] {
      std::uint64_t prev = 0;
      std::int64_t prev_t = sr.start_ns;
      while (!finished.load()) {
        for (int k = 0; k < 10 && !finished.load(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const std::int64_t t = now_ns();
        const std::uint64_t n = sr.done_ops.load();
        std::printf("\r%s %s: %6.1f s  %10llu ops  %9.0f ops/s  %llu errors   ", load ? "load" : "run",
                    cfg.t.target.c_str(), static_cast<double>(t - sr.start_ns) / 1e9,
                    static_cast<unsigned long long>(n),
                    static_cast<double>(n - prev) * 1e9 / static_cast<double>(t - prev_t),
                    static_cast<unsigned long long>(sr.errors.load()));
        std::fflush(stdout);
        prev = n;
        prev_t = t;
      }
      std::printf("\n");
    });
  }
  for (auto& t : ts) t.join();
  finished = true;
  if (progress.joinable()) progress.join();
  for (auto& e : errors)
    if (!e.empty()) throw std::runtime_error(e);

  run_stats all;
  for (auto& s : stats) all.merge(s);
  std::int64_t end = sr.start_ns;
  for (auto e : last_end) end = std::max(end, e);
  const double secs = std::max(1e-9, static_cast<double>(end - sr.start_ns) / 1e9);

  nlohmann::json j;
  j["phase"] = load ? "load" : "run";
  j["io"] = io[0];
  j["seconds"] = secs;
  std::uint64_t total = 0, errs = 0;
  nlohmann::json ops = nlohmann::json::object();
  for (std::size_t k = 0; k < op_kinds; ++k) {
    auto& st = all.ops[k];
    if (st.service.count() == 0) continue;
    nlohmann::json o;
    o["service"] = summary_json(st.service);
    o["service"]["cdf"] = spectrum_json(st.service);
    if (st.intended.count()) {
      o["intended"] = summary_json(st.intended);
      o["intended"]["cdf"] = spectrum_json(st.intended);
    }
    o["ops_per_s"] = static_cast<double>(st.service.count()) / secs;
    o["errors"] = st.errors;
    if (static_cast<op_kind>(k) == op_kind::scan)
      o["rows_per_scan"] = static_cast<double>(st.rows) / static_cast<double>(st.service.count());
    ops[op_name(static_cast<op_kind>(k))] = o;
    // rmw's READ and UPDATE parts are counted within READ-MODIFY-WRITE, not again.
    errs += st.errors;
  }
  for (std::size_t k = 0; k < op_kinds; ++k) total += all.ops[k].service.count();
  if (all.ops[static_cast<std::size_t>(op_kind::rmw)].service.count()) {
    const auto r = all.ops[static_cast<std::size_t>(op_kind::rmw)].service.count();
    total -= 2 * r;  // the READ and UPDATE halves of each rmw
  }
  j["all"] = summary_json(all.total.service);
  j["operations"] = ops;
  j["total_ops"] = total;
  j["ops_per_s"] = static_cast<double>(total) / secs;
  j["errors"] = errs;
  if (!sr.first_why.empty()) j["first_error"] = sr.first_why;
  nlohmann::json tl = nlohmann::json::array();
  for (std::size_t s = 0; s < all.seconds.size(); ++s) {
    nlohmann::json e;
    e["t"] = static_cast<double>(s) + 0.5;
    nlohmann::json per = nlohmann::json::object();
    for (std::size_t k = 0; k < op_kinds; ++k) {
      auto& h = all.seconds[s].ops[k];
      if (!h || h->count() == 0) continue;
      per[op_name(static_cast<op_kind>(k))] = {{"count", h->count()},
                                               {"p50_us", static_cast<double>(h->percentile(50)) / 1000.0},
                                               {"p99_us", static_cast<double>(h->percentile(99)) / 1000.0}};
    }
    e["ops"] = per;
    tl.push_back(e);
  }
  j["timeline"] = tl;
  return j;
}

void print_summary(const nlohmann::json& j) {
  std::printf("[%s] %.0f ops in %.2f s: %.0f ops/s, %llu errors\n", j["phase"].get<std::string>().c_str(),
              j["total_ops"].get<double>(), j["seconds"].get<double>(), j["ops_per_s"].get<double>(),
              static_cast<unsigned long long>(j["errors"].get<std::uint64_t>()));
  std::printf("  %-18s %10s %10s %9s %9s %9s %9s %9s %9s\n", "operation", "count", "ops/s", "avg_us", "p50_us",
              "p95_us", "p99_us", "p99.9_us", "max_us");
  for (auto& [name, o] : j["operations"].items()) {
    for (const char* which : {"service", "intended"}) {
      if (!o.contains(which)) continue;
      const auto& s = o[which];
      std::printf("  %-18s %10llu %10.0f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n",
                  (name + (std::string(which) == "intended" ? "*" : "")).c_str(),
                  static_cast<unsigned long long>(s["count"].get<std::uint64_t>()), o["ops_per_s"].get<double>(),
                  s["avg_us"].get<double>(), s["p50_us"].get<double>(), s["p95_us"].get<double>(),
                  s["p99_us"].get<double>(), s["p999_us"].get<double>(), s["max_us"].get<double>());
    }
  }
  if (j["operations"].size() && j.dump().find("intended") != std::string::npos)
    std::printf("  (* latency from the scheduled start: includes queueing behind slow requests)\n");
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << text;
}

// Prints "<ops/s> <p99 us of all operations> <errors> <operations> <seconds>" of a result
// file's run phase (its load phase when it has no run).
int summary_main(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  auto j = nlohmann::json::parse(f);
  const auto& r = j.contains("run") ? j["run"] : j["load"];
  std::printf("%.0f %.0f %llu %llu %.3f\n", r["ops_per_s"].get<double>(), r["all"]["p99_us"].get<double>(),
              static_cast<unsigned long long>(r["errors"].get<std::uint64_t>()),
              static_cast<unsigned long long>(r["total_ops"].get<std::uint64_t>()), r["seconds"].get<double>());
  return 0;
}

int plot_main(const std::string& kind, const std::string& out, const std::string& title,
              const std::vector<std::string>& inputs) {
  std::vector<std::pair<std::string, nlohmann::json>> series;
  for (auto& in : inputs) {
    std::string label, path = in;
    if (auto eq = in.find('='); eq != std::string::npos) {
      label = in.substr(0, eq);
      path = in.substr(eq + 1);
    }
    std::ifstream f(path);
    if (!f) throw std::runtime_error("cannot read " + path);
    auto j = nlohmann::json::parse(f);
    if (label.empty()) label = j.value("label", path);
    series.emplace_back(label, j.contains("run") ? j["run"] : j);
  }
  write_file(out, svg_plot(kind, title, series));
  return 0;
}

// "host:port,host:port,...": the servers of --redis-shards; throws on a malformed one.
std::vector<std::pair<std::string, int>> parse_shards(const std::string& list) {
  std::vector<std::pair<std::string, int>> out;
  std::size_t at = 0;
  for (;;) {
    const auto comma = list.find(',', at);
    const std::string one = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    auto server = cellar::rpc::split_host_port(one);
    if (!server || server->first.empty() || server->second == 0)
      throw std::invalid_argument("--redis-shards: '" + one + "' is not host:port");
    out.push_back({server->first, server->second});
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  config cfg;
  CLI::App app{"loadgen: YCSB core workloads A-F against cellar (RPC or embedded) and redis"};
  app.add_option("--target", cfg.t.target,
                 "cellar-rpc | cellar-cluster | cellar-embedded | redis | thrift2 (cellar's HBase Thrift gateway)")
      ->required()
      ->check(CLI::IsMember({"cellar-rpc", "cellar-cluster", "cellar-embedded", "redis", "thrift2"}));
  std::string cluster;
  app.add_option("--cluster", cluster,
                 "cellar-cluster (implied): ZooKeeper of the cluster, host:port[,...][/chroot]; each request goes "
                 "over frames straight to the node owning its row; --connections counts one socket per node");
  app.add_option("--protocol", cfg.t.protocol,
                 "cellar-rpc: frames (the server's lean data path, default) | capnp (Cap'n Proto RPC calls)")
      ->check(CLI::IsMember({"frames", "capnp"}));
  app.add_option("--host", cfg.t.host, "server address (cellar-rpc, redis)");
  app.add_option("--port", cfg.t.port, "server port");
  std::string redis_shards;
  app.add_option("--redis-shards", redis_shards,
                 "redis: HOST:PORT,HOST:PORT,...: the keys split over these servers as Redis Cluster places them "
                 "(CRC16 hash slots in even ranges); --connections counts one socket per server; no scans");
  app.add_option("--redis-wait", cfg.t.redis_wait,
                 "redis: N > 0: each request's writes are followed by WAIT N and count as done once N replicas "
                 "acknowledge them; fewer within --redis-wait-timeout-ms: errors")
      ->check(CLI::Range(0, 1000));
  app.add_option("--redis-wait-timeout-ms", cfg.t.redis_wait_timeout_ms, "redis: WAIT's timeout (--redis-wait)")
      ->check(CLI::Range(1, 3600000));
  app.add_option("--workload", cfg.workload, "YCSB core workload a..f")
      ->check(CLI::IsMember({"a", "b", "c", "d", "e", "f", "A", "B", "C", "D", "E", "F"}));
  app.add_option("--phase", cfg.phase, "load | run | both")->check(CLI::IsMember({"load", "run", "both"}));
  app.add_option("--records", cfg.records, "recordcount");
  app.add_option("--operations", cfg.operations, "operationcount (0: bounded by --duration)");
  app.add_option("--duration", cfg.duration, "seconds of the run phase (0: bounded by --operations)");
  app.add_option("--request-timeout", cfg.request_timeout,
                 "seconds a request may wait for its reply; then the unanswered ones count as errors and the phase "
                 "ends (0: wait forever)");
  app.add_option("--threads", cfg.threads, "driver threads (each runs an event loop)");
  app.add_option("--connections", cfg.connections, "connections in total, spread over the threads");
  app.add_option("--depth", cfg.depth, "requests in flight per connection (pipelining depth)");
  app.add_option("--batch", cfg.batch, "operations per request (cellar: actions of one batch call)");
  app.add_option("--load-batch", cfg.load_batch, "inserts per request in the load phase");
  app.add_option("--target-rate", cfg.target_rate, "ops/s over all threads (0: as fast as possible)");
  app.add_option("--partitioning", cfg.t.partitioning, "cellar table: none | hash:N | range:N");
  app.add_option("--field-length", cfg.t.field_length, "bytes of each field's value (YCSB fieldlength)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--insert-order", cfg.insert_order,
                 "YCSB insertorder: hashed (key numbers go through FNV-64) | ordered (range:N bounds assume hashed)")
      ->check(CLI::IsMember({"hashed", "ordered"}));
  app.add_option("--zero-padding", cfg.t.keys.zero_padding, "YCSB zeropadding: digits the key number is padded to")
      ->check(CLI::Range(1, 32));
  app.add_option("--request-distribution", cfg.request_distribution,
                 "YCSB requestdistribution: zipfian | uniform | latest (default: the workload's)")
      ->check(CLI::IsMember({"zipfian", "uniform", "latest"}));
  app.add_option("--table", cfg.t.table, "cellar table name");
  std::string token, token_file;
  app.add_option("--token", token, "cellar: login token (shows in ps: prefer --token-file or CELLAR_TOKEN)");
  app.add_option("--token-file", token_file, "cellar: file holding the login token (else CELLAR_TOKEN, if set)");
  app.add_option("--tls-ca", cfg.t.tls_ca, "cellar: TLS, trusting the CA certificates of this PEM file");
  app.add_option("--io-uring", cfg.t.io_uring,
                 "redis and cellar frames over plain TCP: send and receive through one io_uring per thread "
                 "(true/false; epoll with send/recv when false or where the kernel refuses io_uring)");
  app.add_option("--seed", cfg.t.seed, "random seed");
  app.add_option("--json", cfg.json_out, "write the results here");
  app.add_option("--svg", cfg.svg_prefix, "write PREFIX-latency.svg and PREFIX-cdf.svg");
  app.add_option("--label", cfg.label, "name of this run in the JSON and plots");
  app.add_flag("!--keep", cfg.recreate, "load into the existing table/keys instead of recreating them");
  app.add_flag("--quiet", cfg.quiet, "no progress line");

  std::string plot_kind = "cdf", plot_out, plot_title = "latency";
  std::vector<std::string> plot_inputs;
  auto* plot = app.add_subcommand("plot", "SVG from result files: [label=]file.json ...");
  plot->add_option("--kind", plot_kind, "cdf | time")->check(CLI::IsMember({"cdf", "time"}));
  plot->add_option("--out", plot_out, "SVG file")->required();
  plot->add_option("--title", plot_title, "title");
  plot->add_option("inputs", plot_inputs, "result files")->required();
  std::string summary_in;
  auto* summary =
      app.add_subcommand("summary", "print '<ops/s> <p99 us> <errors> <operations> <seconds>' of a result file");
  summary->add_option("file", summary_in, "result file")->required();
  // --target is only required without the plot subcommand.
  app.get_option("--target")->required(false);
  CLI11_PARSE(app, argc, argv);

  try {
    if (*plot) return plot_main(plot_kind, plot_out, plot_title, plot_inputs);
    if (*summary) return summary_main(summary_in);
    if (!cluster.empty() && cfg.t.target.empty()) cfg.t.target = "cellar-cluster";
    if (cfg.t.target.empty()) throw std::invalid_argument("--target is required");
    if ((cfg.t.target == "cellar-cluster") != !cluster.empty())
      throw std::invalid_argument(
          "--cluster ZK goes with --target cellar-cluster (which it implies), and only with it");
    if (cfg.t.target == "cellar-cluster" && cfg.t.protocol != "frames")
      throw std::invalid_argument("the cluster target speaks frames only (not --protocol " + cfg.t.protocol + ")");
    if (!redis_shards.empty()) {
      if (cfg.t.target != "redis") throw std::invalid_argument("--redis-shards goes with --target redis");
      cfg.t.redis_shards = parse_shards(redis_shards);
    }
    if (cfg.t.redis_wait > 0 && cfg.t.target != "redis")
      throw std::invalid_argument("--redis-wait goes with --target redis");
    if (cfg.t.target != "cellar-embedded" && cfg.t.target != "cellar-cluster" && cfg.t.port == 0 &&
        cfg.t.redis_shards.empty())
      throw std::invalid_argument("--port is required");
    if (cfg.t.target == "cellar-rpc" || cfg.t.target == "cellar-cluster") {
      auto t = cellar::rpc::resolve_token(token, token_file);
      if (!t) throw std::invalid_argument(t.error().message());
      cfg.t.token = t.value();
    }
    if (cfg.connections < 1 || cfg.depth < 1 || cfg.batch < 1 || cfg.threads < 1 || cfg.records < 1)
      throw std::invalid_argument("threads, connections, depth, batch and records must be at least 1");
    if (cfg.phase != "load" && cfg.duration <= 0 && cfg.operations <= 0) cfg.operations = 1000000;
    workload_spec w = core_workload(cfg.workload);
    if (cfg.t.redis_shards.size() > 1 && w.scan > 0)
      throw std::invalid_argument("--redis-shards: workload " + w.name + " scans, and a scan needs one server");
    cfg.t.keys.hashed = cfg.insert_order == "hashed";
    if (cfg.request_distribution == "zipfian") w.request = distribution::zipfian;
    if (cfg.request_distribution == "uniform") w.request = distribution::uniform;
    if (cfg.request_distribution == "latest") w.request = distribution::latest;
    // Without an operation count YCSB's expectednewkeys has nothing to scale with: assume
    // the run does about `records` operations.
    workload_state ws(cfg.records, cfg.operations > 0 ? cfg.operations : cfg.records, w);

    if (cfg.t.target == "cellar-rpc") prepare_cellar_rpc(cfg.t, cfg.phase != "run" && cfg.recreate);
    if (cfg.t.target == "cellar-cluster") prepare_cellar_cluster(cfg.t, cluster, cfg.phase != "run" && cfg.recreate);
    if (cfg.t.target == "redis") prepare_redis(cfg.t, cfg.phase != "run" && cfg.recreate);
    if (cfg.t.target == "cellar-embedded") prepare_embedded(cfg.t);
    if (cfg.t.target == "thrift2") prepare_thrift2(cfg.t, cfg.phase != "run" && cfg.recreate);

    nlohmann::json result;
    result["label"] = cfg.label.empty() ? cfg.t.target : cfg.label;
    result["target"] = cfg.t.target;
    result["workload"] = w.name;
    result["options"] = {{"records", cfg.records},
                         {"operations", cfg.operations},
                         {"duration_s", cfg.duration},
                         {"threads", cfg.threads},
                         {"connections", cfg.connections},
                         {"depth", cfg.depth},
                         {"batch", cfg.batch},
                         {"target_rate", cfg.target_rate},
                         {"partitioning", cfg.t.partitioning},
                         {"protocol", cfg.t.protocol},
                         {"seed", cfg.t.seed},
                         {"field_length", cfg.t.field_length},
                         {"insert_order", cfg.insert_order},
                         {"zero_padding", cfg.t.keys.zero_padding},
                         {"redis_wait", cfg.t.redis_wait},
                         {"request_distribution",
                          cfg.request_distribution.empty() ? "default" : cfg.request_distribution}};
    std::string cmd;
    for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
    result["command"] = cmd;
    if (cfg.phase != "run") {
      auto j = run_phase(cfg, true, ws, w);
      if (!cfg.quiet) print_summary(j);
      result["load"] = j;
    }
    if (cfg.phase != "load") {
      auto j = run_phase(cfg, false, ws, w);
      if (!cfg.quiet) print_summary(j);
      result["run"] = j;
    }
    if (!cfg.json_out.empty()) write_file(cfg.json_out, result.dump(1) + "\n");
    if (!cfg.svg_prefix.empty()) {
      const auto& j = result.contains("run") ? result["run"] : result["load"];
      const std::string label = result["label"];
      const std::string title = "YCSB " + w.name + " on " + label;
      write_file(cfg.svg_prefix + "-latency.svg", svg_plot("time", title + ": latency over time", {{label, j}}));
      write_file(cfg.svg_prefix + "-cdf.svg", svg_plot("cdf", title + ": latency by percentile", {{label, j}}));
    }
    if (cfg.t.target == "cellar-embedded") close_embedded();
    std::fflush(stdout);
    const auto& last = result.contains("run") ? result["run"] : result["load"];
    const auto errs = last["errors"].get<std::uint64_t>();
    if (errs != 0)
      std::fprintf(stderr, "loadgen: %llu operations failed%s%s\n", static_cast<unsigned long long>(errs),
                   last.contains("first_error") ? "; the first: " : "",
                   last.contains("first_error") ? last["first_error"].get<std::string>().c_str() : "");
    std::_Exit(errs == 0 ? 0 : 3);  // CAF's actor system teardown is not needed (see cellar-server)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loadgen: %s\n", e.what());
    std::fflush(stdout);
    std::_Exit(2);
  }
}
