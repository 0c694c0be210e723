// cellar-admin: moving data in and out of cellar (docs/backup.md).
//
//   cellar-admin (--connect HOST:PORT | --embedded DIR | --cluster ZK) [--token-file F]
//                [--tls-ca ca.pem] [--json] COMMAND ...
//     export TABLE --to FILE [--format tsv|jsonl] [--start ROW] [--stop ROW]
//            [--time-range A,B] [--versions N]
//     import TABLE FILE [--format tsv|jsonl]
//     export-snapshot NAME --to DIR
//     import-snapshot DIR [--as TABLE]
//     bulkload TABLE --tsv FILE --columns HBASE_ROW_KEY,f:a,f:b [--separator C] [--staging DIR]
//
// A long command shows a progress line on stderr when stderr is a terminal, and prints a
// summary when it ends (one JSON object with --json). Exit status: 0 done; 1 the store
// refused or failed (the error is printed); 2 bad usage, or the store could not be
// reached or opened; 3 bad input (a malformed line, named by its number; nothing was
// loaded).
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "admin/transfer.h"
#include "cellar/client.h"
#include "cellar/connection.h"
#include "cluster/routed_connection.h"

namespace {

using cellar::status;
using json = nlohmann::ordered_json;

enum exit_code { ok = 0, failed = 1, usage = 2, bad_input = 3 };

// A progress line on stderr, redrawn at most every 200 ms: done / total, rate, ETA.
class progress {
 public:
  progress(std::string what, std::string unit) : what_(std::move(what)), unit_(std::move(unit)) {
    shown_ = ::isatty(STDERR_FILENO) != 0;
  }
  ~progress() {
    if (drawn_) std::fputc('\n', stderr);
  }
  void operator()(std::uint64_t done, std::uint64_t total) {
    if (!shown_) return;
    const auto now = clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(200) && done < total) return;
    last_ = now;
    drawn_ = true;
    const double secs = std::max(1e-3, std::chrono::duration<double>(now - start_).count());
    const double rate = static_cast<double>(done) / secs;
    std::string eta = "?";
    if (total > done && rate > 0) eta = std::to_string(static_cast<long>((total - done) / rate)) + "s";
    if (total > 0 && done >= total) eta = "0s";
    std::fprintf(stderr, "\r%s: %llu / %s %s, %.0f %s/s, ETA %s   ", what_.c_str(),
                 static_cast<unsigned long long>(done), total ? std::to_string(total).c_str() : "?", unit_.c_str(),
                 rate, unit_.c_str(), eta.c_str());
    std::fflush(stderr);
  }
  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

 private:
  using clock = std::chrono::steady_clock;
  std::string what_, unit_;
  bool shown_ = false, drawn_ = false;
  clock::time_point start_ = clock::now(), last_;
};

int report_error(const status& st, bool as_json) {
  const bool input = st.message().rfind("line ", 0) == 0;
  if (as_json)
    std::cout
        << json{{"ok", false}, {"error", std::string(cellar::code_name(st.code()))}, {"message", st.message()}}.dump()
        << "\n";
  else
    std::fprintf(stderr, "cellar-admin: %s\n", st.to_string().c_str());
  return input ? bad_input : failed;
}

void report(json j, const std::string& text, bool as_json) {
  if (as_json) {
    json out{{"ok", true}};
    out.update(j);
    std::cout << out.dump() << "\n";
  } else {
    std::cout << text << "\n";
  }
}

json stats_json(const cellar::admin::transfer_stats& s, double seconds) {
  return {{"rows", s.rows}, {"cells", s.cells}, {"bytes", s.bytes}, {"partitions", s.partitions}, {"seconds", seconds}};
}

std::string stats_text(const char* verb, const cellar::admin::transfer_stats& s, double seconds) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %llu rows, %llu cells, %llu bytes in %.2f s (%.1f MB/s)", verb,
                static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.cells),
                static_cast<unsigned long long>(s.bytes), seconds,
                seconds > 0 ? static_cast<double>(s.bytes) / seconds / 1e6 : 0.0);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string connect_to, embedded, cluster, token, token_file, tls_ca, tls_server_name, durability = "snapshot";
  bool as_json = false;
  CLI::App app{"cellar-admin: export, import, snapshot files and bulk loads for cellar"};
  app.require_subcommand(1);
  auto* c = app.add_option("--connect", connect_to, "HOST:PORT of a cellar-server");
  auto* e = app.add_option("--embedded", embedded, "open the store in this directory in-process");
  auto* cl = app.add_option("--cluster", cluster, "ZooKeeper HOST:PORT[/chroot] of a cellar cluster");
  c->excludes(e);
  cl->excludes(c);
  cl->excludes(e);
  app.add_option("--token", token, "login token of the server (shows in ps: prefer --token-file or CELLAR_TOKEN)");
  app.add_option("--token-file", token_file, "file holding the login token (else CELLAR_TOKEN, if set)");
  app.add_option("--tls-ca", tls_ca, "connect over TLS, trusting the CA certificates of this PEM file");
  app.add_option("--tls-server-name", tls_server_name, "the name the server's certificate must carry");
  app.add_option("--durability", durability, "embedded store: snapshot | log | log-sync");
  app.add_flag("--json", as_json, "print the result as one JSON object");

  std::string table, file, format, start, stop, time_range, name, dir, as_table, columns, separator = "\t", staging;
  std::uint32_t versions = 1;
  auto* exp = app.add_subcommand("export", "write a table's cells to a file (tsv or jsonl)");
  exp->add_option("TABLE", table)->required();
  exp->add_option("--to", file, "the file to write")->required();
  exp->add_option("--format", format, "tsv (default) or jsonl");
  exp->add_option("--start", start, "first row (inclusive), escaped as in the tsv format");
  exp->add_option("--stop", stop, "end row (exclusive), escaped as in the tsv format");
  exp->add_option("--time-range", time_range, "A,B: cells with A <= timestamp < B");
  exp->add_option("--versions", versions, "versions per column (0: all; default 1)");
  auto* imp = app.add_subcommand("import", "put the cells of an exported file into a table");
  imp->add_option("TABLE", table)->required();
  imp->add_option("FILE", file)->required();
  imp->add_option("--format", format, "tsv or jsonl (default: jsonl for a .jsonl file, else tsv)");
  auto* exps = app.add_subcommand("export-snapshot", "write a named snapshot's files to a directory");
  exps->add_option("NAME", name)->required();
  exps->add_option("--to", dir, "the directory (on the server's machine with --connect)")->required();
  auto* imps = app.add_subcommand("import-snapshot", "take an exported snapshot in, and clone it into a table");
  imps->add_option("DIR", dir)->required();
  imps->add_option("--as", as_table, "the table to create (default: the snapshot's table)");
  auto* bulk = app.add_subcommand("bulkload", "load an ImportTsv file, sorted offline, one step per partition");
  bulk->add_option("TABLE", table)->required();
  bulk->add_option("--tsv", file, "the input file")->required();
  bulk->add_option("--columns", columns, "ImportTsv's spec, e.g. HBASE_ROW_KEY,f:a,f:b")->required();
  bulk->add_option("--separator", separator, "the field separator (one character; default tab)");
  bulk->add_option("--staging", staging, "where the partition files are written (readable by the store)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help is a success; every other parse error is bad usage.
    return app.exit(e) == 0 ? ok : usage;
  }
  if (connect_to.empty() && embedded.empty() && cluster.empty()) {
    std::fprintf(stderr, "cellar-admin: give --connect HOST:PORT, --cluster ZK_HOST:PORT[/chroot] or --embedded DIR\n");
    return usage;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("cellar-admin"));
  spdlog::set_level(spdlog::level::warn);

  std::unique_ptr<cellar::store> store;
  std::unique_ptr<cellar::connection> conn;
  if (!embedded.empty()) {
    cellar::store_options so;
    so.directory = embedded;
    if (durability == "log")
      so.durability = cellar::durability::log;
    else if (durability == "log-sync")
      so.durability = cellar::durability::log_sync;
    else if (durability != "snapshot") {
      std::fprintf(stderr, "cellar-admin: --durability must be snapshot, log or log-sync\n");
      return usage;
    }
    auto s = cellar::store::open(so);
    if (!s) {
      std::fprintf(stderr, "cellar-admin: cannot open %s: %s\n", embedded.c_str(), s.error().to_string().c_str());
      return usage;
    }
    store = std::move(s.value());
    conn = cellar::connect_embedded(*store);
  } else {
    auto t = cellar::rpc::resolve_token(token, token_file);
    if (!t) {
      std::fprintf(stderr, "cellar-admin: %s\n", t.error().to_string().c_str());
      return usage;
    }
    cellar::rpc::client_options co;
    co.token = t.value();
    co.tls_ca = tls_ca;
    co.tls_server_name = tls_server_name;
    cellar::result<std::unique_ptr<cellar::connection>> r = cellar::status{};
    if (!cluster.empty()) {
      cellar::cluster::routed_options ro;
      ro.zookeeper.connect = cluster;
      ro.client = co;
      r = cellar::cluster::connect_routed(ro);
    } else {
      r = cellar::rpc::connect(connect_to, co);
    }
    if (!r) {
      std::fprintf(stderr, "cellar-admin: %s\n", r.error().to_string().c_str());
      return usage;
    }
    conn = std::move(r.value());
  }

  int rc = ok;
  if (*exp) {
    cellar::admin::export_options o;
    if (!format.empty()) {
      auto f = cellar::admin::parse_format(format);
      if (!f) return report_error(f.error(), as_json), usage;
      o.format = *f;
    }
    // Row bounds are given escaped, as the tsv format writes rows.
    auto from = cellar::admin::unescape(start);
    auto to = cellar::admin::unescape(stop);
    if (!from || !to) {
      std::fprintf(stderr, "cellar-admin: --start and --stop take rows escaped as the tsv format writes them\n");
      return usage;
    }
    o.start = *from;
    o.stop = *to;
    o.versions = versions;
    if (!time_range.empty()) {
      long long a = 0, b = 0;
      if (std::sscanf(time_range.c_str(), "%lld,%lld", &a, &b) != 2 || a > b) {
        std::fprintf(stderr, "cellar-admin: --time-range takes A,B with A <= B\n");
        return usage;
      }
      o.time_range = {{a, b}};
    }
    progress p("export", "cells");
    auto r = cellar::admin::export_table(*conn, table, file, o, std::ref(p));
    if (!r) return report_error(r.error(), as_json);
    report(stats_json(*r, p.seconds()), stats_text("exported", *r, p.seconds()), as_json);
  } else if (*imp) {
    std::optional<cellar::admin::row_format> f;
    if (!format.empty()) {
      auto x = cellar::admin::parse_format(format);
      if (!x) return report_error(x.error(), as_json), usage;
      f = *x;
    }
    progress p("import", "bytes");
    auto r = cellar::admin::import_table(*conn, table, file, f, std::ref(p));
    if (!r) return report_error(r.error(), as_json);
    report(stats_json(*r, p.seconds()), stats_text("imported", *r, p.seconds()), as_json);
  } else if (*exps) {
    if (auto st = conn->export_snapshot(name, dir); !st) return report_error(st, as_json);
    report({{"snapshot", name}, {"dir", dir}}, "exported snapshot " + name + " to " + dir, as_json);
  } else if (*imps) {
    auto info = conn->import_snapshot(dir);
    if (!info) return report_error(info.error(), as_json);
    const std::string target = as_table.empty() ? info->table : as_table;
    if (auto st = conn->clone_snapshot(info->name, target); !st) return report_error(st, as_json);
    report({{"snapshot", info->name}, {"table", target}, {"cells", info->cells}},
           "imported snapshot " + info->name + " (" + std::to_string(info->cells) + " cells) as table " + target,
           as_json);
  } else if (*bulk) {
    if (separator.size() != 1) {
      std::fprintf(stderr, "cellar-admin: --separator takes one character\n");
      return usage;
    }
    cellar::admin::bulk_options o;
    o.columns = columns;
    o.separator = separator[0];
    o.staging = staging;
    progress p("bulkload", "bytes");
    auto r = cellar::admin::bulk_load_tsv(*conn, table, file, o, std::ref(p));
    if (!r) return report_error(r.error(), as_json);
    report(stats_json(*r, p.seconds()), stats_text("loaded", *r, p.seconds()), as_json);
  }
  if (store)
    if (auto st = store->close(); !st) return report_error(st, as_json);
  return rc;
}
