#include "rpc/status_http.h"

#include "rpc/listen.h"

#include <absl/synchronization/mutex.h>
#include <kj/async-io.h>
#include <kj/compat/http.h>
#include <spdlog/spdlog.h>

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <thread>

#include "cellar/version.h"
#include "rpc/server.h"

namespace cellar::rpc {

namespace {

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* durability_name(durability d) {
  switch (d) {
    case durability::snapshot: return "snapshot";
    case durability::log: return "log";
    case durability::log_sync: return "log-sync";
  }
  return "unknown";
}

std::string partitioning_text(const partition_spec& p) {
  switch (p.how) {
    case partition_spec::method::none: return "none";
    case partition_spec::method::key: return "KEY(K) " + std::to_string(p.partitions);
    case partition_spec::method::key_prefix:
      return "KEY(K_PREFIX " + std::to_string(p.prefix_bytes) + " B) " + std::to_string(p.partitions);
    case partition_spec::method::range: return "RANGE COLUMNS(K) " + std::to_string(p.count());
  }
  return "?";
}

std::uint32_t partitions_of(const table_summary& t) {
  if (!t.stats.cells_per_partition.empty()) return static_cast<std::uint32_t>(t.stats.cells_per_partition.size());
  return t.descriptor.families.empty() ? 0 : t.descriptor.partitioning.count();
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// ---- Prometheus ------------------------------------------------------------------------

std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

struct prom {
  std::string out;
  void family(const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const char* name, const std::string& labels, double v) {
    out += name;
    if (!labels.empty()) out += "{" + labels + "}";
    out += " " + num(v) + "\n";
  }
  void one(const char* name, const char* type, const char* help, double v) {
    family(name, type, help);
    sample(name, "", v);
  }
};

// ---- HTML ------------------------------------------------------------------------------

std::string html(std::string_view v) {
  std::string out;
  for (char c : v) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string bytes_text(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string count_text(std::uint64_t n) {
  std::string s = std::to_string(n), out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

std::string time_text(std::int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string duration_text(double seconds) {
  char buf[64];
  if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.0f ms", seconds * 1000);
  else if (seconds < 120)
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (seconds < 7200)
    std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else if (seconds < 172800)
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.1f days", seconds / 86400);
  return buf;
}

constexpr const char* page_style = R"(
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;color:#222;background:#f6f7f9}
header{background:#2d3e50;color:#fff;padding:14px 28px}
header h1{margin:0;font-size:22px;font-weight:600}
header span{color:#b8c7d6;font-size:14px}
main{padding:8px 28px 28px}
h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #d5dbe1;padding-bottom:4px}
table{border-collapse:collapse;background:#fff;font-size:14px;min-width:40%}
th,td{border:1px solid #d5dbe1;padding:5px 10px;text-align:left;vertical-align:top}
th{background:#e9edf1;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.kv th{width:210px}
.bar{display:inline-block;height:10px;background:#3c8dbc;vertical-align:middle}
.track{display:inline-block;width:160px;height:10px;background:#e3e7eb;margin-right:8px;vertical-align:middle}
.fill{display:block;height:10px;background:#3c8dbc}
.err{color:#b03a2e}
footer{color:#778;font-size:12px;padding:0 28px 20px}
)";

// The page's start up to <main>; `head_extra` goes into <head>.
std::string page_head(const status_context& ctx, std::string_view version, std::string_view head_extra) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n" + std::string(head_extra) +
         "<title>cellar " + html(ctx.listen) + "</title>\n<style>" + page_style + "</style></head><body>\n" +
         "<header><h1>cellar server</h1><span>" + html(ctx.listen) + " &middot; version " + html(version) +
         "</span></header>\n<main>\n";
}

std::string page_foot(const status_context& ctx) {
  return "</main>\n<footer>Generated " + html(time_text(ctx.now_unix_ms)) +
         ". Machine-readable: <a href=\"/metrics\">/metrics</a> (Prometheus text format).</footer>\n</body></html>\n";
}

}  // namespace

std::string render_prometheus(const store_summary& sum, const metrics& m, const status_context& ctx) {
  prom p;
  const auto& info = sum.store;
  p.family("cellar_info", "gauge", "Always 1; the labels say which cellar and how it keeps data.");
  p.sample("cellar_info",
           "version=\"" + label_value(sum.version) + "\",durability=\"" + durability_name(info.durability) +
               "\",persistent=\"" + (info.directory.empty() ? "false" : "true") + "\"",
           1);
  p.one("cellar_start_time_seconds", "gauge", "When the status service started, seconds since the epoch.",
        static_cast<double>(ctx.started_unix_ms) / 1000);
  p.one("cellar_memory_used_bytes", "gauge", "Cell data held in memory (what the memory limit counts).",
        static_cast<double>(info.memory_used_bytes));
  p.one("cellar_memory_limit_bytes", "gauge", "The store's memory limit; 0 = unlimited.",
        static_cast<double>(info.memory_limit_bytes));
  p.one("cellar_tables", "gauge", "Table groups in the catalog.", static_cast<double>(sum.tables.size()));
  p.family("cellar_table_cells", "gauge", "Cells held, per table group.");
  for (const auto& t : sum.tables)
    p.sample("cellar_table_cells", "table=\"" + label_value(t.descriptor.name) + "\"",
             static_cast<double>(t.stats.cells));
  p.family("cellar_table_bytes", "gauge", "Bytes of cell data held, per table group.");
  for (const auto& t : sum.tables)
    p.sample("cellar_table_bytes", "table=\"" + label_value(t.descriptor.name) + "\"",
             static_cast<double>(t.stats.bytes));
  p.family("cellar_table_partitions", "gauge", "Partitions, per table group.");
  for (const auto& t : sum.tables)
    p.sample("cellar_table_partitions", "table=\"" + label_value(t.descriptor.name) + "\"", partitions_of(t));
  p.family("cellar_table_families", "gauge", "Column families, per table group.");
  for (const auto& t : sum.tables)
    p.sample("cellar_table_families", "table=\"" + label_value(t.descriptor.name) + "\"",
             static_cast<double>(t.descriptor.families.size()));
  p.family("cellar_partition_cells", "gauge", "Cells held, per partition.");
  for (const auto& t : sum.tables)
    for (std::size_t i = 0; i < t.stats.cells_per_partition.size(); ++i)
      p.sample("cellar_partition_cells",
               "table=\"" + label_value(t.descriptor.name) + "\",partition=\"" + std::to_string(i) + "\"",
               static_cast<double>(t.stats.cells_per_partition[i]));

  p.one("cellar_snapshots_total", "counter", "Snapshots completed since the store opened.",
        static_cast<double>(info.snapshots));
  if (info.last_snapshot) {
    const auto& s = *info.last_snapshot;
    p.one("cellar_snapshot_last_timestamp_seconds", "gauge", "When the last snapshot completed.",
          static_cast<double>(info.last_snapshot_unix_ms) / 1000);
    p.one("cellar_snapshot_last_duration_seconds", "gauge", "How long the last snapshot took.", s.seconds);
    p.one("cellar_snapshot_last_changes", "gauge", "Cells written or erased by the last snapshot.",
          static_cast<double>(s.changes));
    p.one("cellar_snapshot_last_bytes", "gauge", "Bytes the last snapshot wrote to WiredTiger.",
          static_cast<double>(s.bytes));
    p.one("cellar_snapshot_last_generation", "gauge", "Generation of the last snapshot.",
          static_cast<double>(s.generation));
  }
  if (info.durability != durability::snapshot && !info.directory.empty()) {
    p.one("cellar_log_generation", "gauge", "The redo log generation being written.",
          static_cast<double>(info.log_generation));
    p.one("cellar_log_records_total", "counter", "Redo log records written since open.",
          static_cast<double>(info.log_records));
    p.one("cellar_log_bytes_total", "counter", "Redo log bytes written since open.",
          static_cast<double>(info.log_bytes));
    p.one("cellar_log_syncs_total", "counter", "Redo log fdatasync calls since open.",
          static_cast<double>(info.log_syncs));
  }
  p.one("cellar_recovery_duration_seconds", "gauge", "How long recovery took at open.", info.recovery.seconds);
  p.one("cellar_recovery_cells_loaded", "gauge", "Cells loaded from the last snapshot at open.",
        static_cast<double>(info.recovery.cells_loaded));
  p.one("cellar_recovery_log_records", "gauge", "Log records replayed at open.",
        static_cast<double>(info.recovery.log_records));
  p.one("cellar_recovery_partitions_done", "gauge", "Partitions read from the snapshot at open.",
        static_cast<double>(info.recovery.partitions));
  p.one("cellar_recovery_partitions_total", "gauge", "Partitions to read from the snapshot at open.",
        static_cast<double>(info.recovery.partitions));
  p.one("cellar_recovery_in_progress", "gauge", "1 while the store recovers at open, 0 once it serves.", 0);
  p.one("cellar_connections", "gauge", "Client connections open now.",
        static_cast<double>(std::max<std::int64_t>(0, sum.connections)));
  return p.out + m.render();
}

std::string render_status_page(const store_summary& sum, const metrics::snapshot& m, const status_context& ctx) {
  const auto& info = sum.store;
  std::string o = page_head(ctx, sum.version, "");

  // Server.
  const double uptime = static_cast<double>(ctx.now_unix_ms - ctx.started_unix_ms) / 1000;
  o += "<h2>Server</h2>\n<table class=\"kv\">\n";
  auto row = [&](const std::string& k, const std::string& v) {
    o += "<tr><th>" + k + "</th><td>" + v + "</td></tr>\n";
  };
  row("Listening on", html(ctx.listen));
  row("Started", html(time_text(ctx.started_unix_ms)) + " (up " + duration_text(uptime) + ")");
  row("Data directory", info.directory.empty() ? "none: in memory, nothing persists" : html(info.directory));
  row("Durability", durability_name(info.durability));
  std::string mem = bytes_text(info.memory_used_bytes);
  if (info.memory_limit_bytes > 0) {
    const double frac =
        std::min(1.0, static_cast<double>(info.memory_used_bytes) / static_cast<double>(info.memory_limit_bytes));
    mem = "<span class=\"track\"><span class=\"fill\" style=\"width:" + num(frac * 100) + "%\"></span></span>" + mem +
          " of " + bytes_text(info.memory_limit_bytes) + " (" + num(std::round(frac * 1000) / 10) + "%)";
  } else {
    mem += " (no limit)";
  }
  row("Memory used", mem);
  row("Connections", std::to_string(std::max<std::int64_t>(0, sum.connections)));
  o += "</table>\n";

  // Persistence.
  o += "<h2>Snapshots and log</h2>\n<table class=\"kv\">\n";
  if (info.directory.empty()) {
    row("Snapshots", "none (memory-only store)");
  } else {
    row("Snapshots since open", count_text(info.snapshots));
    if (info.last_snapshot) {
      const auto& s = *info.last_snapshot;
      row("Last snapshot", html(time_text(info.last_snapshot_unix_ms)) + " &middot; generation " +
                               std::to_string(s.generation) + " &middot; " + count_text(s.changes) +
                               " changes &middot; " + bytes_text(s.bytes) + " &middot; " + duration_text(s.seconds));
    } else {
      row("Last snapshot", "none since open");
    }
    if (info.durability != durability::snapshot)
      row("Redo log", "generation " + std::to_string(info.log_generation) + " &middot; " +
                          count_text(info.log_records) + " records &middot; " + bytes_text(info.log_bytes) +
                          " &middot; " + count_text(info.log_syncs) + " syncs");
    const auto& r = info.recovery;
    row("Recovery at open", count_text(r.cells_loaded) + " cells from the snapshot (" + count_text(r.partitions) +
                                " partitions, " + std::to_string(r.threads) +
                                (r.threads == 1 ? " thread), " : " threads), ") + count_text(r.log_records) +
                                " log records, took " + duration_text(r.seconds));
  }
  o += "</table>\n";

  // Tables.
  o += "<h2>Tables (" + std::to_string(sum.tables.size()) + ")</h2>\n";
  if (sum.tables.empty()) {
    o += "<p>No table groups yet.</p>\n";
  } else {
    o += "<table>\n<tr><th>Table group</th><th>Families</th><th>Partitioning</th><th>Partitions</th><th>Cells</th>"
         "<th>Bytes</th><th>Cells per partition</th></tr>\n";
    for (const auto& t : sum.tables) {
      std::string fams;
      for (const auto& f : t.descriptor.families) {
        if (!fams.empty()) fams += ", ";
        fams += html(f.name);
        if (f.kind == family_kind::time_series) fams += " (time series)";
      }
      std::string per;
      std::uint64_t most = 1;
      for (auto c : t.stats.cells_per_partition) most = std::max(most, c);
      for (std::size_t i = 0; i < t.stats.cells_per_partition.size() && i < 64; ++i)
        per +=
            "<span class=\"bar\" title=\"partition " + std::to_string(i) + ": " +
            count_text(t.stats.cells_per_partition[i]) + " cells\" style=\"width:" +
            num(std::max(1.0, 60.0 * static_cast<double>(t.stats.cells_per_partition[i]) / static_cast<double>(most))) +
            "px;margin-right:2px\"></span>";
      if (t.stats.cells_per_partition.size() > 64) per += " &hellip;";
      o += "<tr><td>" + html(t.descriptor.name) + "</td><td>" + (fams.empty() ? "-" : fams) + "</td><td>" +
           html(partitioning_text(t.descriptor.partitioning)) + "</td><td class=\"n\">" +
           std::to_string(partitions_of(t)) + "</td><td class=\"n\">" + count_text(t.stats.cells) +
           "</td><td class=\"n\">" + bytes_text(t.stats.bytes) + "</td><td>" + per + "</td></tr>\n";
    }
    o += "</table>\n";
  }

  // Requests.
  o += "<h2>Requests since start</h2>\n";
  bool any = false;
  std::string rows;
  for (std::size_t p = 0; p < protocol_count; ++p)
    for (std::size_t op = 0; op < operation_count; ++op) {
      std::uint64_t total = 0, failed = 0;
      for (std::size_t c = 0; c < 16; ++c) {
        total += m.requests[p][op][c];
        if (c != 0) failed += m.requests[p][op][c];
      }
      if (total == 0) continue;
      any = true;
      const double mean_us = m.latency_sum_seconds[p][op] / static_cast<double>(total) * 1e6;
      char mean[32];
      std::snprintf(mean, sizeof mean, "%.1f", mean_us);
      rows += std::string("<tr><td>") + (p == 0 ? "rpc" : "frames") + "</td><td>" +
              operation_name(static_cast<operation>(op)) + "</td><td class=\"n\">" + count_text(total) +
              "</td><td class=\"n" + (failed ? " err" : "") + "\">" + count_text(failed) + "</td><td class=\"n\">" +
              mean + "</td></tr>\n";
    }
  if (!any) {
    o += "<p>None yet.</p>\n";
  } else {
    o += "<table>\n<tr><th>Protocol</th><th>Operation</th><th>Calls</th><th>Failed</th><th>Mean &micro;s</th></tr>\n" +
         rows + "</table>\n";
  }
  return o + page_foot(ctx);
}

std::string render_recovery_prometheus(const recovery_progress::figures& f, const status_context& ctx) {
  prom p;
  p.family("cellar_info", "gauge", "Always 1; the labels say which cellar and how it keeps data.");
  p.sample("cellar_info", "version=\"" + label_value(CELLAR_VERSION) + "\"", 1);
  p.one("cellar_start_time_seconds", "gauge", "When the status service started, seconds since the epoch.",
        static_cast<double>(ctx.started_unix_ms) / 1000);
  const bool recovering = !f.ended();
  p.one("cellar_recovery_in_progress", "gauge", "1 while the store recovers at open, 0 once it serves.",
        recovering ? 1 : 0);
  p.family("cellar_recovery_phase", "gauge", "1 for the phase the recovery is in.");
  for (auto ph :
       {recovery_progress::phase::opening, recovery_progress::phase::reading_snapshot,
        recovery_progress::phase::replaying_log, recovery_progress::phase::done, recovery_progress::phase::failed})
    p.sample("cellar_recovery_phase", std::string("phase=\"") + phase_name(ph) + "\"", f.phase == ph ? 1 : 0);
  p.one("cellar_recovery_partitions_done", "gauge", "Partitions read from the snapshot so far.",
        static_cast<double>(f.partitions_done));
  p.one("cellar_recovery_partitions_total", "gauge", "Partitions to read from the snapshot.",
        static_cast<double>(f.partitions_total));
  p.one("cellar_recovery_cells", "gauge", "Cells read from the snapshot so far (bases and change runs).",
        static_cast<double>(f.cells));
  p.one("cellar_recovery_log_records", "gauge", "Log records replayed so far.", static_cast<double>(f.log_records));
  p.one("cellar_recovery_bytes", "gauge", "Bytes read so far: snapshot files and log records.",
        static_cast<double>(f.bytes));
  p.one("cellar_recovery_elapsed_seconds", "gauge", "Time since the recovery began reading.", f.seconds);
  return p.out;
}

std::string render_recovery_page(const recovery_progress::figures& f, const status_context& ctx) {
  const bool recovering = !f.ended();
  // While it recovers the page reloads itself (no script: a refresh header in the page).
  std::string o = page_head(ctx, CELLAR_VERSION, recovering ? "<meta http-equiv=\"refresh\" content=\"5\">\n" : "");
  auto row = [&](const std::string& k, const std::string& v) {
    o += "<tr><th>" + k + "</th><td>" + v + "</td></tr>\n";
  };
  o += std::string("<h2>") +
       (f.phase == recovery_progress::phase::failed ? "Opening the store failed"
        : recovering                                ? "Recovering: the store is not serving yet"
                                                    : "Recovered: the store is starting") +
       "</h2>\n<table class=\"kv\">\n";
  row("Will listen on", html(ctx.listen));
  row("Phase", phase_name(f.phase));
  std::string parts = count_text(f.partitions_done) + " of " + count_text(f.partitions_total) + " partitions read";
  if (f.partitions_total > 0) {
    const double frac = static_cast<double>(f.partitions_done) / static_cast<double>(f.partitions_total);
    parts = "<span class=\"track\"><span class=\"fill\" style=\"width:" + num(std::round(frac * 1000) / 10) +
            "%\"></span></span>" + parts;
  }
  row("Snapshot", parts);
  const double s = f.seconds > 0 ? f.seconds : 0;
  const auto rate = [&](std::uint64_t n) {
    return s > 0 ? " (" + count_text(static_cast<std::uint64_t>(static_cast<double>(n) / s)) + "/s)" : std::string();
  };
  row("Cells read", count_text(f.cells) + rate(f.cells));
  row("Log records replayed", count_text(f.log_records) + rate(f.log_records));
  row("Bytes read", bytes_text(f.bytes));
  row("Started", f.started_unix_ms > 0 ? html(time_text(f.started_unix_ms)) : "not yet: opening the directory");
  row("Elapsed", duration_text(s));
  o += "</table>\n<p>The full status page shows once the store serves.</p>\n";
  return o + page_foot(ctx);
}

// ---- the sources ----------------------------------------------------------------------

result<store_summary> store_status::summary_now() const {
  auto sum = summarize(s_);
  if (sum) sum->connections = srv_.connections();
  return sum;
}

result<std::string> store_status::metrics(status_context ctx) {
  auto sum = summary_now();
  if (!sum) return sum.error();
  ctx.listen = listen_;
  return render_prometheus(*sum, srv_.metrics(), ctx);
}

result<std::string> store_status::page(status_context ctx) {
  auto sum = summary_now();
  if (!sum) return sum.error();
  ctx.listen = listen_;
  return render_status_page(*sum, srv_.metrics().read(), ctx);
}

result<std::string> recovery_status::metrics(status_context ctx) {
  ctx.listen = listen_;
  return render_recovery_prometheus(progress_->read(), ctx);
}

result<std::string> recovery_status::page(status_context ctx) {
  ctx.listen = listen_;
  return render_recovery_page(progress_->read(), ctx);
}

// ---- the service -----------------------------------------------------------------------

namespace {

// The source requests are answered from; replaced by status_http::serve.
class source_slot {
 public:
  explicit source_slot(std::shared_ptr<status_source> s) : source_(std::move(s)) {}
  std::shared_ptr<status_source> get() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock l(&mu_);
    return source_;
  }
  void set(std::shared_ptr<status_source> s) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock l(&mu_);
    source_ = std::move(s);
  }

 private:
  absl::Mutex mu_;
  std::shared_ptr<status_source> source_ ABSL_GUARDED_BY(mu_);
};

class status_service final : public kj::HttpService {
 public:
  status_service(source_slot& source, const kj::HttpHeaderTable& table, std::int64_t started_unix_ms)
      : source_(source), table_(table), started_unix_ms_(started_unix_ms) {}

  kj::Promise<void> request(kj::HttpMethod method, kj::StringPtr url, const kj::HttpHeaders&, kj::AsyncInputStream&,
                            Response& response) override {
    kj::HttpHeaders headers(table_);
    if (method != kj::HttpMethod::GET && method != kj::HttpMethod::HEAD) {
      headers.add("Allow", "GET, HEAD");
      return response.sendError(405, "Method Not Allowed", headers);
    }
    std::string path(url.cStr());
    if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
    if (path != "/" && path != "/metrics") return response.sendError(404, "Not Found", headers);

    status_context ctx;
    ctx.started_unix_ms = started_unix_ms_;
    ctx.now_unix_ms = unix_ms();
    auto source = source_.get();
    const bool metrics = path == "/metrics";
    auto body = metrics ? source->metrics(ctx) : source->page(ctx);
    if (!body) {
      headers.set(kj::HttpHeaderId::CONTENT_TYPE, "text/plain; charset=utf-8");
      return send(response, headers, 503, "Service Unavailable", body.error().to_string() + "\n", method);
    }
    headers.set(kj::HttpHeaderId::CONTENT_TYPE,
                metrics ? "text/plain; version=0.0.4; charset=utf-8" : "text/html; charset=utf-8");
    return send(response, headers, 200, "OK", std::move(body.value()), method);
  }

 private:
  static kj::Promise<void> send(Response& response, const kj::HttpHeaders& headers, unsigned code, kj::StringPtr text,
                                std::string body, kj::HttpMethod method) {
    auto out = response.send(code, text, headers, static_cast<std::uint64_t>(body.size()));
    if (method == kj::HttpMethod::HEAD) return kj::READY_NOW;
    auto owned = kj::heapString(body.data(), body.size());
    auto promise = out->write(owned.begin(), owned.size());
    return promise.attach(kj::mv(out), kj::mv(owned));
  }

  source_slot& source_;
  const kj::HttpHeaderTable& table_;
  const std::int64_t started_unix_ms_;
};

}  // namespace

struct status_http::impl {
  explicit impl(std::shared_ptr<status_source> s) : source(std::move(s)) {}
  source_slot source;
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  status error;
  std::uint16_t port = 0;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stopper;
  bool stopped = false;

  void run(status_http_options o) {
    pthread_setname_np(pthread_self(), "cellar-http");
    try {
      auto io = kj::setupAsyncIo();
      // A port of its own, as the server's (listen.h): another process on it is refused.
      auto socket = listen_on(o.address, o.port, 1);
      if (!socket) {
        std::lock_guard l(mu);
        error = {code::io_error, "cannot serve metrics: " + socket.error().message()};
        ready = true;
        cv.notify_all();
        return;
      }
      auto listener =
          io.lowLevelProvider->wrapListenSocketFd(socket->take(0), kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP |
                                                                       kj::LowLevelAsyncIoProvider::ALREADY_NONBLOCK |
                                                                       kj::LowLevelAsyncIoProvider::ALREADY_CLOEXEC);
      kj::HttpHeaderTable table;
      status_service service(source, table, unix_ms());
      kj::HttpServer http(io.provider->getTimer(), table, service);
      auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
      {
        std::lock_guard l(mu);
        port = static_cast<std::uint16_t>(listener->getPort());
        stopper = kj::mv(paf.fulfiller);
        ready = true;
      }
      cv.notify_all();
      paf.promise.exclusiveJoin(http.listenHttp(*listener)).wait(io.waitScope);
    } catch (const kj::Exception& e) {
      std::lock_guard l(mu);
      if (!ready) {
        error = {code::io_error, "cannot serve metrics on " + o.address + ":" + std::to_string(o.port) + ": " +
                                     e.getDescription().cStr()};
        ready = true;
        cv.notify_all();
      } else {
        spdlog::error("cellar-server: the metrics service stopped: {}", e.getDescription().cStr());
      }
    }
  }
};

result<std::unique_ptr<status_http>> status_http::start(std::shared_ptr<status_source> source, status_http_options o) {
  auto p = std::make_unique<impl>(std::move(source));
  p->thread = std::thread([raw = p.get(), o] { raw->run(o); });
  {
    std::unique_lock l(p->mu);
    p->cv.wait(l, [&] { return p->ready; });
  }
  if (!p->error) {
    p->stopped = true;
    p->thread.join();
    return p->error;
  }
  return std::unique_ptr<status_http>(new status_http(std::move(p)));
}

status_http::status_http(std::unique_ptr<impl> p) : p_(std::move(p)) {}
status_http::~status_http() { stop(); }

std::uint16_t status_http::port() const { return p_->port; }

void status_http::serve(std::shared_ptr<status_source> source) { p_->source.set(std::move(source)); }

void status_http::stop() {
  if (p_->stopped) return;
  p_->stopped = true;
  p_->stopper->fulfill();
  p_->thread.join();
}

}  // namespace cellar::rpc
