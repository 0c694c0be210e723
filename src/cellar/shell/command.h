// shell/command.h: what the shell's commands share (private to src/cellar/shell).
//
// Every command is a function from the connection and its parsed arguments to an
// `outcome`: a status, the text the HBase shell would print, and the same answer as JSON
// fields (session.cc prints one or the other). The commands live in commands_data.cc
// (put, get, scan, count, delete, ...), commands_admin.cc (create, describe, disable,
// get_splits, status, ...), commands_namespace.cc (namespaces, list_regions, split, merge_region) and sql.cc (the
// OceanBase statements); commands.cc lists them with their help and holds the argument helpers.
//
// Thread safety: plain functions and values.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cellar/connection.h"
#include "shell/hbase_syntax.h"
#include "shell/session.h"

namespace cellar::shell {

using json = nlohmann::ordered_json;  // fields in the order written

// What one command produced.
struct outcome {
  status st;
  std::string text;            // human output, without the timing line
  json data = json::object();  // the answer's fields, printed after "ok":true
  bool timed = true;           // print "Took ..." (not for help)
};

inline outcome fail(status s) {
  outcome o;
  o.st = std::move(s);
  return o;
}
inline outcome fail(code c, std::string msg) { return fail(status{c, std::move(msg)}); }

std::string lower(std::string_view s);
std::string upper(std::string_view s);

// A command's arguments: positional values, then an optional trailing options hash.
struct args_view {
  const std::string& command;
  const std::vector<shell_value>& args;

  // Arguments before a trailing options hash.
  std::size_t positional() const { return !args.empty() && args.back().is_hash() ? args.size() - 1 : args.size(); }
  const shell_hash* options() const {
    return !args.empty() && args.back().is_hash() ? &args.back().as_hash() : nullptr;
  }
  // The value of option `key` (case-insensitive), or nullptr.
  const shell_value* option(std::string_view key) const;
  // Argument i as a string (a string or a bare constant).
  result<std::string> str(std::size_t i, std::string_view what) const;
};

// One option a command takes: its name, and for an HBase option cellar does not do, why
// (then giving it is UNSUPPORTED).
struct option_spec {
  std::string_view name;
  std::string_view unsupported_because = {};
};

// Checks the keys of the options hash: a key not in `known` is INVALID_ARGUMENT naming it
// and the options the command takes; a known one with a reason is UNSUPPORTED.
status check_options(const args_view& a, const std::vector<option_spec>& known);

result<std::string> as_text(const shell_value& v, std::string_view what);
result<std::int64_t> as_int(const shell_value& v, std::string_view what);
result<bool> as_bool(const shell_value& v, std::string_view what);

// "family:qualifier" -> (family, qualifier); "family" -> (family, nullopt).
std::pair<std::string, std::optional<std::string>> split_column(const std::string& c);

// The JSON of schema values shared by describe, DESC and status: a family's settings
// (versions and ttl_seconds null when unbounded) and a partition rule.
json family_json(const family_descriptor& f);
json partitioning_json(const partition_spec& p);

// `names` under `heading` with a row count, as HBase's list commands print them, and as
// data under `key`; kept only those the optional regular expression (argument 0) matches
// whole, as Java's Pattern.matches does.
outcome name_listing(const args_view& a, std::vector<std::string> names, std::string_view heading,
                     const std::string& key);

// The session's view, for commands that print where they run (status, whoami).
struct context {
  connection& conn;
  const session_options& opts;
  // SQL's current database (USE db): the namespace of the tables SQL names without one;
  // empty: default.
  std::string& database;
};

using handler = std::function<outcome(context&, const args_view&)>;

// Data commands (commands_data.cc).
outcome cmd_put(context& c, const args_view& a);
outcome cmd_get(context& c, const args_view& a);
outcome cmd_scan(context& c, const args_view& a);
outcome cmd_count(context& c, const args_view& a);
outcome cmd_delete(context& c, const args_view& a);
outcome cmd_deleteall(context& c, const args_view& a);
outcome cmd_incr(context& c, const args_view& a);
outcome cmd_get_counter(context& c, const args_view& a);
outcome cmd_append(context& c, const args_view& a);

// Table and server commands (commands_admin.cc).
outcome cmd_create(context& c, const args_view& a);
outcome cmd_alter(context& c, const args_view& a);
outcome cmd_describe(context& c, const args_view& a);
outcome cmd_list(context& c, const args_view& a);
outcome cmd_exists(context& c, const args_view& a);
outcome cmd_drop(context& c, const args_view& a);
outcome cmd_truncate(context& c, const args_view& a);
outcome cmd_disable(context& c, const args_view& a);
outcome cmd_enable(context& c, const args_view& a);
outcome cmd_is_enabled(context& c, const args_view& a);
outcome cmd_is_disabled(context& c, const args_view& a);
outcome cmd_get_splits(context& c, const args_view& a);
outcome cmd_snapshot(context& c, const args_view& a);
outcome cmd_status(context& c, const args_view& a);
outcome cmd_move(context& c, const args_view& a);
outcome cmd_balancer(context& c, const args_view& a);
outcome cmd_transfer_leader(context& c, const args_view& a);
outcome cmd_version(context& c, const args_view& a);
outcome cmd_whoami(context& c, const args_view& a);

// Named snapshots (commands_backup.cc).
outcome cmd_snapshot_table(context& c, const args_view& a);  // snapshot 't', 'name'
outcome cmd_list_snapshots(context& c, const args_view& a);
outcome cmd_list_table_snapshots(context& c, const args_view& a);
outcome cmd_delete_snapshot(context& c, const args_view& a);
outcome cmd_restore_snapshot(context& c, const args_view& a);
outcome cmd_clone_snapshot(context& c, const args_view& a);
// Namespaces and regions (commands_namespace.cc).
outcome cmd_create_namespace(context& c, const args_view& a);
outcome cmd_drop_namespace(context& c, const args_view& a);
outcome cmd_alter_namespace(context& c, const args_view& a);
outcome cmd_describe_namespace(context& c, const args_view& a);
outcome cmd_list_namespace(context& c, const args_view& a);
outcome cmd_list_namespace_tables(context& c, const args_view& a);
outcome cmd_list_regions(context& c, const args_view& a);
outcome cmd_split(context& c, const args_view& a);
outcome cmd_merge_region(context& c, const args_view& a);

// The command table (commands.cc).
struct command_def {
  std::string_view name;
  std::string_view group;  // general, ddl, dml, tools, snapshots (as HBase groups them)
  handler run;
  std::string_view help;
};
const std::vector<command_def>& commands();
const command_def* find_command(std::string_view name);
outcome cmd_help(context& c, const args_view& a);

// One OceanBase statement ending with `;` (sql.cc).
outcome run_sql(context& c, const std::string& sql);

}  // namespace cellar::shell
