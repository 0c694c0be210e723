// cellar-shell: the HBase shell language plus the OceanBase DDL, against a server or an
// embedded store.
//
//   cellar-shell --connect 127.0.0.1:9090 [--token-file F] [--tls-ca ca.pem] [--json]
//   cellar-shell --embedded ./cellar-data [--durability log-sync] [--json]
//   cellar-shell --cluster zk:2181/cellar [--json]   (batches straight to their owner nodes)
//
// With a terminal on stdin it offers line editing and history (libedit, through its
// readline-compatible API; history in ~/.cellar_history); otherwise it reads one command
// per line from stdin. Exit status: 0, or 1 if any command failed; 2 if it could not start.
#include <unistd.h>

#include <cstdio>
// libedit's readline.h uses FILE, so <cstdio> comes first.
#include <editline/readline.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

#include "cellar/client.h"
#include "cellar/connection.h"
#include "cluster/routed_connection.h"
#include "shell/session.h"

int main(int argc, char** argv) {
  std::string connect_to, embedded, token, token_file, tls_ca, tls_server_name, durability = "snapshot", cluster;
  bool json = false, quiet = false;
  std::uint32_t partitions = 0;
  CLI::App app{"cellar-shell: HBase shell commands and OceanBase DDL for cellar"};
  auto* c = app.add_option("--connect", connect_to, "HOST:PORT of a cellar-server");
  auto* e = app.add_option("--embedded", embedded, "open the store in this directory in-process");
  c->excludes(e);
  auto* cl =
      app.add_option("--cluster", cluster,
                     "ZooKeeper HOST:PORT[/chroot] of a cellar cluster: each batch goes to the nodes owning its rows");
  cl->excludes(c);
  cl->excludes(e);
  app.add_option("--token", token, "login token of the server (shows in ps: prefer --token-file or CELLAR_TOKEN)");
  app.add_option("--token-file", token_file, "file holding the login token (else CELLAR_TOKEN, if set)");
  app.add_option("--tls-ca", tls_ca, "connect over TLS, trusting the CA certificates of this PEM file");
  app.add_option("--tls-server-name", tls_server_name,
                 "the name the server's certificate must carry (default: the host of --connect)");
  app.add_flag("--json", json, "print one JSON object per command");
  app.add_flag("--quiet", quiet, "no timing lines");
  app.add_option("--partitions", partitions, "partitions of a table made by `create` without SPLITS");
  app.add_option("--durability", durability, "embedded store: snapshot | log | log-sync");
  CLI11_PARSE(app, argc, argv);
  if (connect_to.empty() && embedded.empty() && cluster.empty()) {
    std::fprintf(stderr, "cellar-shell: give --connect HOST:PORT, --cluster ZK_HOST:PORT[/chroot] or --embedded DIR\n");
    return 2;
  }
  // Log lines go to stderr: stdout is the commands' output (one JSON object per line).
  spdlog::set_default_logger(spdlog::stderr_color_mt("cellar-shell"));
  spdlog::set_level(spdlog::level::warn);

  std::unique_ptr<cellar::store> store;
  std::unique_ptr<cellar::connection> conn;
  cellar::session_options opts;
  opts.json = json;
  opts.show_timing = !quiet && !json;
  opts.default_partitions = partitions;
  if (!embedded.empty()) {
    cellar::store_options so;
    so.directory = embedded;
    if (durability == "log")
      so.durability = cellar::durability::log;
    else if (durability == "log-sync")
      so.durability = cellar::durability::log_sync;
    else if (durability != "snapshot") {
      std::fprintf(stderr, "cellar-shell: --durability must be snapshot, log or log-sync\n");
      return 2;
    }
    auto s = cellar::store::open(so);
    if (!s) {
      std::fprintf(stderr, "cellar-shell: cannot open %s: %s\n", embedded.c_str(), s.error().to_string().c_str());
      return 2;
    }
    store = std::move(s.value());
    conn = cellar::connect_embedded(*store);
    opts.endpoint = "embedded:" + embedded;
    if (opts.default_partitions == 0) opts.default_partitions = 7;
  } else if (!cluster.empty()) {
    cellar::cluster::routed_options ro;
    ro.zookeeper.connect = cluster;
    auto t = cellar::rpc::resolve_token(token, token_file);
    if (!t) {
      std::fprintf(stderr, "cellar-shell: %s\n", t.error().to_string().c_str());
      return 2;
    }
    token = t.value();
    ro.client.token = token;
    ro.client.tls_ca = tls_ca;
    ro.client.tls_server_name = tls_server_name;
    auto r = cellar::cluster::connect_routed(ro);
    if (!r) {
      std::fprintf(stderr, "cellar-shell: %s\n", r.error().to_string().c_str());
      return 2;
    }
    conn = std::move(r.value());
    opts.endpoint = "cluster:" + cluster;
    opts.token = !token.empty();
  } else {
    cellar::rpc::client_options co;
    auto t = cellar::rpc::resolve_token(token, token_file);
    if (!t) {
      std::fprintf(stderr, "cellar-shell: %s\n", t.error().to_string().c_str());
      return 2;
    }
    token = t.value();
    co.token = token;
    co.tls_ca = tls_ca;
    co.tls_server_name = tls_server_name;
    auto r = cellar::rpc::connect(connect_to, co);
    if (!r) {
      std::fprintf(stderr, "cellar-shell: %s%s\n", r.error().to_string().c_str(),
                   r.code() == cellar::code::permission_denied && token.empty()
                       ? " (give it with --token-file or CELLAR_TOKEN)"
                       : "");
      return 2;
    }
    conn = std::move(r.value());
    opts.endpoint = connect_to;
    opts.token = !token.empty();
  }

  cellar::shell_session session(*conn, std::cout, opts);
  if (isatty(STDIN_FILENO)) {
    const char* home = std::getenv("HOME");
    const std::string history = std::string(home ? home : ".") + "/.cellar_history";
    stifle_history(1000);
    read_history(history.c_str());
    for (;;) {
      char* line = readline(session.continuing() ? "     -> " : "cellar> ");
      if (!line) break;
      std::string l(line);
      std::free(line);
      if (!l.empty()) {
        add_history(l.c_str());
        // The whole (stifled) history each time: libedit's append_history(1, ...)
        // writes two entries.
        write_history(history.c_str());
      }
      if (!session.feed(l)) break;
    }
  } else {
    std::string line;
    while (std::getline(std::cin, line))
      if (!session.feed(line)) break;
  }
  session.finish();
  return session.errors() > 0 ? 1 : 0;
}
