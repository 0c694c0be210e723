// rpc/status_http.h: watching a running server over HTTP (cellar-server --metrics-listen).
//
//   GET /metrics   Prometheus text format 0.0.4: the server's request counters and latency
//                  histograms (rpc/metrics.h), connections, memory, per-table cells, bytes
//                  and partitions, snapshot, log and recovery figures; while the store
//                  recovers, the recovery's progress.
//   GET /          a status page in the manner of HBase's master UI: one self-contained
//                  HTML document (inline CSS, no scripts, nothing fetched from elsewhere).
//
// What they show comes from a status_source, asked on each request: a served store's
// (store_status: built from one store_summary, cellar/summary.h, at the time of the
// request; building one asks every partition for its counts, so a scrape costs about a
// stats call per table), or, while the store is still opening, its recovery's progress
// (recovery_status). cellar-server starts the service before it opens the store and
// switches the source once the store serves (status_http::serve), on the same port. The
// service runs on its own thread with its own kj event loop, so a scrape never delays the
// data path's event loops.
//
// Thread safety: start/stop from one thread; serve() from any; the rendering functions
// are pure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cellar/recovery_progress.h"
#include "cellar/status.h"
#include "cellar/summary.h"
#include "rpc/metrics.h"

namespace cellar::rpc {

class server;

// What the page and the metrics show besides the summary.
struct status_context {
  std::string listen;                // the data port's address
  std::int64_t started_unix_ms = 0;  // when the service started
  std::int64_t now_unix_ms = 0;
};

// The answers of the service; asked on each request, on the service's thread.
class status_source {
 public:
  virtual ~status_source() = default;
  // The bodies of GET /metrics (Prometheus text format) and GET / (HTML) now, or the error
  // to answer 503 with. `ctx` has the time of the service's start and of the request;
  // the source fills in its listen address.
  virtual result<std::string> metrics(status_context ctx) = 0;
  virtual result<std::string> page(status_context ctx) = 0;
};

// A store served by `srv` (listening on `listen`): its summary, the server's connections
// and metrics. `s` and `srv` must outlive it.
class store_status final : public status_source {
 public:
  store_status(store& s, const server& srv, std::string listen) : s_(s), srv_(srv), listen_(std::move(listen)) {}
  result<std::string> metrics(status_context ctx) override;
  result<std::string> page(status_context ctx) override;

 private:
  // The store's summary now, with the server's connections.
  result<store_summary> summary_now() const;

  store& s_;
  const server& srv_;
  std::string listen_;
};

// A store that is still opening: how far its recovery got. `listen`: the data port it
// will serve on.
class recovery_status final : public status_source {
 public:
  recovery_status(std::shared_ptr<const recovery_progress> progress, std::string listen)
      : progress_(std::move(progress)), listen_(std::move(listen)) {}
  result<std::string> metrics(status_context ctx) override;
  result<std::string> page(status_context ctx) override;

 private:
  std::shared_ptr<const recovery_progress> progress_;
  std::string listen_;
};

struct status_http_options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 9091;  // 0: any free port (see status_http::port())
};

class status_http {
 public:
  // Binds and starts serving what `source` (not null) answers. IO_ERROR when the address cannot be
  // bound, INVALID_ARGUMENT when it is not an address.
  static result<std::unique_ptr<status_http>> start(std::shared_ptr<status_source> source, status_http_options o);
  ~status_http();  // stop()
  std::uint16_t port() const;
  // Requests from now on are answered by `source`, not null (a request being answered
  // finishes with the source it began with, which it keeps alive until then).
  void serve(std::shared_ptr<status_source> source);
  // Stops accepting, drops open HTTP connections and joins the thread. Idempotent.
  void stop();

  struct impl;

 private:
  explicit status_http(std::unique_ptr<impl> p);
  std::unique_ptr<impl> p_;
};

// The bodies served at /metrics and / by a served store.
std::string render_prometheus(const store_summary& sum, const metrics& m, const status_context& ctx);
std::string render_status_page(const store_summary& sum, const metrics::snapshot& m, const status_context& ctx);
// The bodies served at /metrics and / while the store recovers.
std::string render_recovery_prometheus(const recovery_progress::figures& f, const status_context& ctx);
std::string render_recovery_page(const recovery_progress::figures& f, const status_context& ctx);

}  // namespace cellar::rpc
