// rpc/status_http.h: watching a running server over HTTP (cellar-server --metrics-listen).
//
//   GET /metrics   Prometheus text format 0.0.4: the server's request counters and latency
//                  histograms (rpc/metrics.h), connections, memory, per-table cells, bytes
//                  and partitions, snapshot, log and recovery figures.
//   GET /          a status page in the manner of HBase's master UI: one self-contained
//                  HTML document (inline CSS, no scripts, nothing fetched from elsewhere).
//
// Both are built from the same store_summary (cellar/summary.h) at the time of the request;
// building one asks every partition for its counts, so a scrape costs about a stats call
// per table. The service runs on its own thread with its own kj event loop, so a scrape
// never delays the data path's event loops.
//
// Thread safety: start/stop from one thread; the rendering functions are pure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cellar/status.h"
#include "cellar/summary.h"
#include "rpc/metrics.h"

namespace cellar::rpc {

class server;

struct status_http_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 9091;  // 0: any free port (see status_http::port())
  std::string listen_label;   // the data port, shown on the page ("127.0.0.1:9090")
};

class status_http {
 public:
  // Binds and starts serving; `s` and `srv` must outlive the service. IO_ERROR when the
  // address cannot be bound, INVALID_ARGUMENT when it is not an address.
  static result<std::unique_ptr<status_http>> start(store& s, const server& srv, status_http_options o);
  ~status_http();  // stop()
  std::uint16_t port() const;
  // Stops accepting, drops open HTTP connections and joins the thread. Idempotent.
  void stop();

  struct impl;

 private:
  explicit status_http(std::unique_ptr<impl> p);
  std::unique_ptr<impl> p_;
};

// What the page and the metrics show besides the summary.
struct status_context {
  std::string listen;                // the data port's address
  std::int64_t started_unix_ms = 0;  // when the service started
  std::int64_t now_unix_ms = 0;
};

// The bodies served at /metrics and /.
std::string render_prometheus(const store_summary& sum, const metrics& m, const status_context& ctx);
std::string render_status_page(const store_summary& sum, const metrics::snapshot& m, const status_context& ctx);

}  // namespace cellar::rpc
