// shell/session.h: runs HBase shell commands and OceanBase DDL against a connection.
//
// A session reads lines. A line that begins an SQL statement (CREATE/DROP/ALTER/TRUNCATE
// TABLE[GROUP] ..., SHOW ..., DESC g$f, SELECT ..., in any case; see starts_sql) runs once
// a `;` ends it, possibly lines later; any other line is one HBase shell command (create,
// put, get, scan, ...; `help` lists them). Output is either what the HBase 2.x shell
// prints (ROW / COLUMN+CELL lines, "N row(s)", "Took ..."), or for SQL what the MySQL
// client prints, or, with `json`, exactly one JSON object per command on its own line
// carrying the whole answer:
//   {"ok":true}                                             put, delete, create, DDL, ...
//   {"ok":true,"cells":[{"row","column","timestamp","value"}...],"rows":N}   get, scan
//   {"ok":true,"count":N}  {"ok":true,"counter":N|null}  {"ok":true,"value":"..."}
//   {"ok":true,"tables":[...]}                              list, SHOW TABLES
//   {"ok":true,"exists":B} {"ok":true,"enabled":B} {"ok":true,"disabled":B}
//   {"ok":true,"table":{"name","enabled","partitioning":{"method","partitions",...},
//                       "families":[{"name","versions","ttl_seconds","max_value_bytes",
//                                    "time_series"}]}}      describe (null: unbounded)
//   {"ok":true,"status":{...}} {"ok":true,"version":...} {"ok":true,"user":...}
//   {"ok":true,"splits":[...],"partitions":N} {"ok":true,"help":"..."}
//   {"ok":true,"tablegroups":[{"name","tables"}]}  {"ok":true,"table","columns",...}  (SQL)
//   {"ok":false,"error":"TABLE_NOT_FOUND","message":"..."}
// Row keys, qualifiers and values are written as HBase's Bytes.toStringBinary writes them.
//
// Thread safety: one session per thread.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "cellar/connection.h"

namespace cellar {

struct session_options {
  bool json = false;
  // Partitions of a table made by `create` without SPLITS: KEY(K) with this many
  // partitions; 0 asks the server for its default (RPC) or means 7 (embedded).
  std::uint32_t default_partitions = 0;
  bool show_timing = true;
  // Where the commands run, for status: "HOST:PORT" of the server, or "embedded:DIR".
  std::string endpoint = "embedded";
  // Whether the shell logged in with a token (whoami says auth:TOKEN).
  bool token = false;
};

class shell_session {
 public:
  shell_session(connection& c, std::ostream& out, session_options o);

  // Feeds one input line. Returns false once the user asked to quit.
  bool feed(std::string_view line);
  // True while an SQL statement waits for its `;`.
  bool continuing() const { return !pending_sql_.empty(); }
  // Runs a pending SQL statement that never got its `;` (end of input).
  void finish();
  // Commands that failed so far.
  std::size_t errors() const { return errors_; }

 private:
  void run_sql(const std::string& sql);
  void run_command(std::string_view line);

  connection& conn_;
  std::ostream& out_;
  session_options opts_;
  std::string pending_sql_;
  std::string database_;  // SQL's USE: the database (namespace) SQL names tables of; empty: default
  std::size_t errors_ = 0;
};

// True if `line` begins an OceanBase DDL statement rather than an HBase shell command.
bool starts_sql(std::string_view line);

}  // namespace cellar
