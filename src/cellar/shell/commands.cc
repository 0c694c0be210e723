// shell/commands.cc: the command table with each command's help (worded after the HBase
// 2.x shell's, hbase-shell/src/main/ruby/shell/commands/*.rb, for what cellar does), the
// `help` command, and the argument helpers the commands share.
#include <algorithm>

#include "shell/command.h"

#ifndef CELLAR_VERSION
#define CELLAR_VERSION "unknown"
#endif

namespace cellar::shell {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

const shell_value* args_view::option(std::string_view key) const {
  auto* h = options();
  if (!h) return nullptr;
  for (const auto& [k, v] : *h)
    if (upper(k) == key) return &v;
  return nullptr;
}

result<std::string> args_view::str(std::size_t i, std::string_view what) const {
  if (i >= args.size() || !(args[i].is_string() || args[i].is_constant()))
    return status{code::invalid_argument,
                  command + ": argument " + std::to_string(i + 1) + " (" + std::string(what) + ") must be a string"};
  return args[i].is_string() ? args[i].as_string() : args[i].as_constant();
}

status check_options(const args_view& a, const std::vector<option_spec>& known) {
  const shell_hash* h = a.options();
  if (!h) return status::ok();
  for (const auto& [k, v] : *h) {
    const std::string key = upper(k);
    auto it = std::find_if(known.begin(), known.end(), [&](const option_spec& o) { return o.name == key; });
    if (it == known.end()) {
      std::string names;
      for (const auto& o : known)
        if (o.unsupported_because.empty()) names += (names.empty() ? "" : ", ") + std::string(o.name);
      return {code::invalid_argument,
              a.command + ": unknown option " + k + (names.empty() ? " (it takes none)" : " (it takes " + names + ")")};
    }
    if (!it->unsupported_because.empty())
      return {code::unsupported, a.command + ": " + key + " is not supported: " + std::string(it->unsupported_because)};
  }
  return status::ok();
}

result<std::string> as_text(const shell_value& v, std::string_view what) {
  if (v.is_string()) return v.as_string();
  if (v.is_constant()) return v.as_constant();
  if (v.is_integer()) return std::to_string(v.as_integer());
  return status{code::invalid_argument, std::string(what) + " must be a string"};
}

result<std::int64_t> as_int(const shell_value& v, std::string_view what) {
  if (v.is_integer()) return v.as_integer();
  if (v.is_string()) {
    try {
      std::size_t pos = 0;
      auto n = std::stoll(v.as_string(), &pos);
      if (pos == v.as_string().size()) return static_cast<std::int64_t>(n);
    } catch (...) {}
  }
  return status{code::invalid_argument, std::string(what) + " must be an integer"};
}

result<bool> as_bool(const shell_value& v, std::string_view what) {
  if (v.is_boolean()) return v.as_boolean();
  if (v.is_string() && (lower(v.as_string()) == "true" || lower(v.as_string()) == "false"))
    return lower(v.as_string()) == "true";
  return status{code::invalid_argument, std::string(what) + " must be true or false"};
}

std::pair<std::string, std::optional<std::string>> split_column(const std::string& c) {
  auto colon = c.find(':');
  if (colon == std::string::npos) return {c, std::nullopt};
  return {c.substr(0, colon), c.substr(colon + 1)};
}

namespace {

constexpr std::string_view sql_help =
    R"(OceanBase DDL statements end with ';' and may span lines (keywords in any case):
  CREATE TABLEGROUP [IF NOT EXISTS] g;            DROP TABLEGROUP [IF EXISTS] g;
  CREATE TABLE [IF NOT EXISTS] g$f (K varbinary(1024), Q varbinary(256), T bigint,
      V varbinary(1048576), PRIMARY KEY(K, Q, T)) [TABLEGROUP = g]
      [kv_attributes = '{"HBase": {"TimeToLive": 3600, "MaxVersions": 3}}']
      [PARTITION BY KEY(K) PARTITIONS n | KEY(K_PREFIX) PARTITIONS n | RANGE COLUMNS(K) (...)];
  CREATE TABLE g2$f2 LIKE g1$f1;                   DROP TABLE [IF EXISTS] g$f;
  ALTER TABLE g$f kv_attributes = '{"HBase": {"MaxVersions": 2}}';   -- replaces TTL and versions
  TRUNCATE TABLE g$f;                              -- empties one family
  SHOW TABLEGROUPS [LIKE 'p%'];  SHOW TABLES [LIKE 'p%'];  DESC g$f;
DROP TABLEGROUP drops a group whether it is enabled or not (OceanBase has no disabled
tables); the shell's drop asks for disable first, as HBase's does.
)";

const std::vector<command_def> table = {
    {"help", "general", cmd_help,
     R"(Show help. With a command name, that command's help; with a group name (general, ddl,
dml, tools, sql), the help of each command of the group.
  hbase> help
  hbase> help 'get'
  hbase> help 'ddl'
)"},
    {"status", "general", cmd_status,
     R"(Show the server's status: 'summary' (the default), 'simple' or 'detailed'. The server
is the cellar-server the shell is connected to (or this process, embedded); its regions are
the partitions of the enabled tables.
  hbase> status
  hbase> status 'simple'
  hbase> status 'detailed'
)"},
    {"version", "general", cmd_version, "Output the cellar version.\n  hbase> version\n"},
    {"whoami", "general", cmd_whoami,
     "Show the current user (the user this shell runs as) and how it logged in.\n  hbase> whoami\n"},
    {"alter", "ddl", cmd_alter,
     R"(Alter a column family's settings (VERSIONS, MIN_VERSIONS, TTL, HBase's other family
settings and METADATA), add a family, delete one (not the last), or set or unset the
table's attributes (MAX_FILESIZE, READONLY, DURABILITY, OWNER, METADATA, ...):
  hbase> alter 't1', NAME => 'f1', VERSIONS => 5
  hbase> alter 't1', {NAME => 'f1', TTL => 3600, MIN_VERSIONS => 1}, {NAME => 'f2', VERSIONS => 3}
  hbase> alter 't1', 'delete' => 'f1'
  hbase> alter 't1', NAME => 'f1', METHOD => 'delete'
  hbase> alter 't1', MAX_FILESIZE => '134217728'
  hbase> alter 't1', READONLY => true
  hbase> alter 't1', METHOD => 'table_att_unset', NAME => 'MAX_FILESIZE'
Every HBase setting is kept and shown by describe, honoured where cellar has its meaning,
or refused by name (UNSUPPORTED) where it cannot be honoured (KEEP_DELETED_CELLS => TRUE,
ENCRYPTION, CONFIGURATION, ...): docs/semantics.md §7. REGION_REPLICATION => 3 (or 5) makes
each partition a Raft group of that many replicas on distinct nodes of a cluster.
)"},
    {"create", "ddl", cmd_create,
     R"(Create a table with column families (each a name or a {NAME => ..., VERSIONS => n,
MIN_VERSIONS => n, TTL => seconds, ...} hash) and optionally SPLITS or SPLITS_FILE (range
partitions at these row keys), NUMREGIONS with SPLITALGO (range partitions where HBase's
HexStringSplit, DecimalStringSplit or UniformSplit puts them) or NUMREGIONS alone (hash
partitions), and table attributes (MAX_FILESIZE, READONLY, DURABILITY, OWNER, METADATA,
...). Without a partitioning, the table has the server's default number of KEY(K) hash
partitions. Families keep VERSIONS => 1 unless told otherwise.
  hbase> create 't1', 'f1', 'f2'
  hbase> create 't1', {NAME => 'f1', VERSIONS => 5, TTL => 86400, MIN_VERSIONS => 1}
  hbase> create 't1', 'f1', SPLITS => ['10', '20', '30']
  hbase> create 't1', 'f1', {NUMREGIONS => 15, SPLITALGO => 'HexStringSplit'}
  hbase> create 't1', 'f1', {NUMREGIONS => 15}
  hbase> create 't1', 'f1', MAX_FILESIZE => '134217728', METADATA => {'owner' => 'ops'}
)"},
    {"describe", "ddl", cmd_describe,
     "Describe the named table: its state, partitioning and column families.\n  hbase> describe 't1'\n  hbase> desc "
     "'t1'\n"},
    {"desc", "ddl", cmd_describe, "The same as describe.\n  hbase> desc 't1'\n"},
    {"disable", "ddl", cmd_disable,
     R"(Start disable of the named table: until it is enabled, every read and write of it fails
with TABLE_DISABLED. The state survives a restart.
  hbase> disable 't1'
)"},
    {"drop", "ddl", cmd_drop,
     "Drop the named table. The table must first be disabled.\n  hbase> disable 't1'\n  hbase> drop 't1'\n"},
    {"enable", "ddl", cmd_enable, "Start enable of the named table.\n  hbase> enable 't1'\n"},
    {"exists", "ddl", cmd_exists, "Does the named table exist?\n  hbase> exists 't1'\n"},
    {"is_disabled", "ddl", cmd_is_disabled, "Is the named table disabled?\n  hbase> is_disabled 't1'\n"},
    {"is_enabled", "ddl", cmd_is_enabled, "Is the named table enabled?\n  hbase> is_enabled 't1'\n"},
    {"list", "ddl", cmd_list,
     R"(List all tables. An optional regular expression filters the output (it must match the
whole name).
  hbase> list
  hbase> list 'abc.*'
)"},
    {"append", "dml", cmd_append,
     R"(Append a value to the newest value of a cell (the cell is created when absent).
  hbase> append 't1', 'r1', 'c1', 'value'
  hbase> append 't1', 'r1', 'c1', 'value', {TTL => 5000}
)"},
    {"count", "dml", cmd_count,
     R"(Count the number of rows in a table. The current count is shown every 1000 rows by
default (INTERVAL); CACHE is the scan's page size (10 by default). The scan options of
'scan' apply (COLUMNS, STARTROW, STOPROW, ROWPREFIXFILTER, TIMERANGE, ...).
  hbase> count 't1'
  hbase> count 't1', INTERVAL => 100000
  hbase> count 't1', CACHE => 1000
  hbase> count 't1', INTERVAL => 10, CACHE => 1000
  hbase> count 't1', COLUMNS => ['c1', 'c2'], STARTROW => 'abc', STOPROW => 'xyz'
)"},
    {"delete", "dml", cmd_delete,
     R"(Delete the newest version of a cell, or with a timestamp exactly the version at that
timestamp. A family without a qualifier deletes the family's cells at the timestamp.
  hbase> delete 't1', 'r1', 'c1'
  hbase> delete 't1', 'r1', 'c1', ts1
  hbase> delete 't1', 'r1', 'f1', ts1
)"},
    {"deleteall", "dml", cmd_deleteall,
     R"(Delete every version of a row, a column or a family, optionally only versions up to a
timestamp; with ROWPREFIXFILTER, of every row with the prefix (CACHE rows per batch).
  hbase> deleteall 't1', 'r1'
  hbase> deleteall 't1', 'r1', 'c1'
  hbase> deleteall 't1', 'r1', 'c1', ts1
  hbase> deleteall 't1', {ROWPREFIXFILTER => 'prefix'}
  hbase> deleteall 't1', {ROWPREFIXFILTER => 'prefix', CACHE => 100}, 'c1'
)"},
    {"get", "dml", cmd_get,
     R"(Get a row or cells of a row. Options: COLUMN / COLUMNS, VERSIONS, TIMESTAMP, TIMERANGE,
MAXLENGTH, CONSISTENCY => 'STRONG'.
  hbase> get 't1', 'r1'
  hbase> get 't1', 'r1', {COLUMN => 'c1'}
  hbase> get 't1', 'r1', {COLUMN => ['c1', 'c2', 'c3']}
  hbase> get 't1', 'r1', {COLUMN => 'c1', TIMESTAMP => ts1}
  hbase> get 't1', 'r1', {COLUMN => 'c1', TIMERANGE => [ts1, ts2], VERSIONS => 4}
  hbase> get 't1', 'r1', 'c1', 'c2'
  hbase> get 't1', 'r1', ['c1', 'c2']
)"},
    {"get_counter", "dml", cmd_get_counter, "Return a counter cell value.\n  hbase> get_counter 't1', 'r1', 'c1'\n"},
    {"get_splits", "dml", cmd_get_splits,
     R"(Get the splits of the named table: the number of partitions, and the row keys where
range partitions begin (hash partitions have none).
  hbase> get_splits 't1'
)"},
    {"incr", "dml", cmd_incr,
     R"(Increment a cell value (an 8-byte counter) by 1 or by the given amount.
  hbase> incr 't1', 'r1', 'c1'
  hbase> incr 't1', 'r1', 'c1', 10
  hbase> incr 't1', 'r1', 'c1', 10, {TTL => 5000}
)"},
    {"put", "dml", cmd_put,
     R"(Put a cell value at the row and column, at the given timestamp or now.
  hbase> put 't1', 'r1', 'c1', 'value'
  hbase> put 't1', 'r1', 'c1', 'value', ts1
  hbase> put 't1', 'r1', 'c1', 'value', {TTL => 5000}
)"},
    {"scan", "dml", cmd_scan,
     R"(Scan a table. Options: COLUMNS, STARTROW, STOPROW, ROWPREFIXFILTER (overrides STARTROW
and STOPROW), TIMESTAMP, TIMERANGE, VERSIONS, REVERSED, LIMIT (0 or less: no limit),
BATCH (cells per result), MAX_RESULT_SIZE, ALLOW_PARTIAL_RESULTS, CACHE (rows per page),
CACHE_BLOCKS, MAXLENGTH, CONSISTENCY => 'STRONG'. RAW => true is refused: deletes are
physical, so there are no delete markers to show.
  hbase> scan 't1'
  hbase> scan 't1', {COLUMNS => ['c1', 'c2'], LIMIT => 10, STARTROW => 'xyz'}
  hbase> scan 't1', {COLUMNS => 'c1', TIMERANGE => [1303668804000, 1303668904000]}
  hbase> scan 't1', {REVERSED => true}
  hbase> scan 't1', {ROWPREFIXFILTER => 'row2'}
  hbase> scan 't1', {BATCH => 2, VERSIONS => 3}
)"},
    {"truncate", "dml", cmd_truncate,
     "Remove every row of the table; its schema and partitioning stay. The table ends enabled.\n"
     "  hbase> truncate 't1'\n"},
    {"truncate_preserve", "dml", cmd_truncate,
     "The same as truncate (partition boundaries are always kept).\n  hbase> truncate_preserve 't1'\n"},
    {"create_namespace", "namespace", cmd_create_namespace,
     R"(Create a namespace; pass the namespace name, and optionally a dictionary of namespace
properties (kept as given; hbase.namespace.quota.maxtables and
hbase.namespace.quota.maxregions are honoured). A table of it is named 'ns1:t1'.
  hbase> create_namespace 'ns1'
  hbase> create_namespace 'ns1', {'PROPERTY_NAME'=>'PROPERTY_VALUE'}
)"},
    {"drop_namespace", "namespace", cmd_drop_namespace,
     "Drop the named namespace. The namespace must be empty.\n  hbase> drop_namespace 'ns1'\n"},
    {"alter_namespace", "namespace", cmd_alter_namespace,
     R"(Alter namespace properties.
To add/modify a property:
  hbase> alter_namespace 'ns1', {METHOD => 'set', 'PROPERTY_NAME' => 'PROPERTY_VALUE'}
To delete a property:
  hbase> alter_namespace 'ns1', {METHOD => 'unset', NAME=>'PROPERTY_NAME'}
)"},
    {"describe_namespace", "namespace", cmd_describe_namespace,
     "Describe the named namespace.\n  hbase> describe_namespace 'ns1'\n"},
    {"list_namespace", "namespace", cmd_list_namespace,
     R"(List all namespaces. An optional regular expression filters the output.
  hbase> list_namespace
  hbase> list_namespace 'abc.*'
)"},
    {"list_namespace_tables", "namespace", cmd_list_namespace_tables,
     "List all tables that are members of the namespace.\n  hbase> list_namespace_tables 'ns1'\n"},
    {"list_regions", "tools", cmd_list_regions,
     R"(List the regions (partitions) of a table: the node serving each, its name TABLE/INDEX, its
start and end keys (RANGE partitions; empty: unbounded), its size in bytes and its cells.
  hbase> list_regions 'table_name'
)"},
    {"split", "tools", cmd_split,
     R"(Split a table's RANGE partitions (regions). With a table: every region holding at least two
rows, each at its middle row. With a region named as list_regions shows it: that region, at
its middle row. With a split key: the region of the table that holds the key, or the named
region, which must hold the key within its bounds. A one-partition table becomes RANGE
partitioned. KEY (hash) partitions are fixed, as in OceanBase, and do not split. Reads and
writes go on meanwhile; in a cluster, writes that reach the table while its partitions are
frozen for the last part of the copy wait until the split ends (sent again on RESHAPING).
  hbase> split 'tableName'
  hbase> split 'tableName/3'
  hbase> split 'tableName', 'splitKey'
  hbase> split 'tableName/3', 'splitKey'
)"},
    {"merge_region", "tools", cmd_merge_region,
     R"(Merge two adjacent RANGE partitions of a table, named as list_regions shows them. Reads and
writes go on meanwhile, as for split.
  hbase> merge_region 't1/0', 't1/1'
  hbase> merge_region ['t1/0', 't1/1']
)"},
    {"move", "tools", cmd_move,
     "Move a partition (a region) to another node of a cluster with its data, while it keeps serving.\n"
     "Of a replicated partition, the replica on its preferred leader moves, by Raft membership change;\n"
     "with two nodes, the replica on FROM_NODE (a follower's or the leader's) moves to TO_NODE.\n"
     "Partitions are named TABLE/INDEX and nodes by id, as status 'detailed' shows them.\n"
     "  hbase> move 'blogtable/3', 'n2'\n"
     "  hbase> move 'blogtable/3', 'FROM_NODE', 'TO_NODE'\n"},
    {"transfer_leader", "tools", cmd_transfer_leader,
     "Make NODE, which holds a replica of a replicated partition, the partition's preferred leader:\n"
     "no data moves; the leader hands leadership over by a Raft leadership transfer once NODE's\n"
     "log matches its own. (cellar's own; HBase has no such command.)\n"
     "  hbase> transfer_leader 'blogtable/3', 'n2'\n"},
    {"balancer", "tools", cmd_balancer,
     "Move partitions until every live node of the cluster holds the same number, give or take one;\n"
     "of replicated tables, replicas and preferred leaders (changed within sets when replicas cannot move).\n"
     "Prints true when it ran, false when a move was already running.\n"
     "  hbase> balancer\n"},
    {"snapshot", "snapshots", cmd_snapshot,
     R"(Two commands in one. With a table and a name: take a named snapshot of the table (HBase's
table snapshot: every partition kept as it was at one instant while writes go on, without
copying its cells where the store has a directory; kept until delete_snapshot, and across
restarts). Without arguments: write the whole store's
persistence snapshot to disk now (cellar's own checkpoint of every table; it has no name
and cannot be restored by hand).
  hbase> snapshot 'sourceTable', 'snapshotName'
  hbase> snapshot
)"},
    {"list_snapshots", "snapshots", cmd_list_snapshots,
     "List the named snapshots, optionally only those whose name matches a regex.\n"
     "  hbase> list_snapshots\n  hbase> list_snapshots 'abc.*'\n"},
    {"list_table_snapshots", "snapshots", cmd_list_table_snapshots,
     "List the named snapshots of the tables matching a regex, optionally only those whose name matches\n"
     "a second regex.\n"
     "  hbase> list_table_snapshots 'tableName'\n  hbase> list_table_snapshots 'tableName.*', 'snapshotName.*'\n"},
    {"delete_snapshot", "snapshots", cmd_delete_snapshot,
     "Delete a named snapshot.\n  hbase> delete_snapshot 'snapshotName'\n"},
    {"restore_snapshot", "snapshots", cmd_restore_snapshot,
     "Restore a named snapshot into its table: the table's schema and cells become the snapshot's.\n"
     "The table must be disabled first, and stays disabled.\n"
     "  hbase> disable 'tableName'\n  hbase> restore_snapshot 'snapshotName'\n  hbase> enable 'tableName'\n"},
    {"clone_snapshot", "snapshots", cmd_clone_snapshot,
     "Create a new table from a named snapshot: same schema and cells, independent of the source.\n"
     "  hbase> clone_snapshot 'snapshotName', 'tableName'\n"},
};

std::string group_help(std::string_view group) {
  std::string out;
  for (const auto& c : table)
    if (c.group == group) out += "Command: " + std::string(c.name) + "\n" + std::string(c.help) + "\n";
  return out;
}

}  // namespace

const std::vector<command_def>& commands() { return table; }

const command_def* find_command(std::string_view name) {
  for (const auto& c : table)
    if (c.name == name) return &c;
  return nullptr;
}

outcome cmd_help(context&, const args_view& a) {
  outcome out;
  out.timed = false;
  if (a.args.size() > 1) return fail(code::invalid_argument, "help takes one argument, a command or a group");
  if (a.args.empty()) {
    out.text = "cellar shell " CELLAR_VERSION
               ": the HBase shell's commands and OceanBase DDL.\n"
               "Type 'help \"COMMAND\"', (e.g. 'help \"get\"' -- the quotes are necessary) for help on a specific "
               "command.\nCommands are grouped. Type 'help \"COMMAND_GROUP\"', (e.g. 'help \"general\"') for help on a "
               "command group.\n\nCOMMAND GROUPS:\n";
    json groups = json::array();
    for (std::string_view g : {"general", "ddl", "namespace", "dml", "tools", "snapshots"}) {
      std::vector<std::string> names;
      for (const auto& c : table)
        if (c.group == g) names.emplace_back(c.name);
      out.text += "  Group name: " + std::string(g) + "\n  Commands: ";
      for (std::size_t i = 0; i < names.size(); ++i) out.text += (i ? ", " : "") + names[i];
      out.text += "\n\n";
      groups.push_back({{"group", g}, {"commands", names}});
    }
    out.text +=
        "  Group name: sql\n  Statements: CREATE/DROP TABLEGROUP, CREATE/DROP/ALTER/TRUNCATE TABLE, SHOW "
        "TABLEGROUPS, SHOW TABLES, DESC\n\n"
        "SHELL USAGE:\nQuote all names in HBase shell commands, e.g. get 't1', 'r1'. Options are hashes: "
        "{COLUMNS => ['f:a', 'f:b'], LIMIT => 10}.\nSQL statements end with ';'. Type exit or quit to leave.\n";
    out.data["groups"] = groups;
    out.data["help"] = out.text;
    return out;
  }
  auto what = a.str(0, "command");
  if (!what) return fail(what.error());
  const std::string& name = what.value();
  if (const command_def* c = find_command(name)) {
    out.text = std::string(c->help);
  } else if (name == "general" || name == "ddl" || name == "namespace" || name == "dml" || name == "tools" ||
             name == "snapshots") {
    out.text = group_help(name);
  } else if (name == "sql") {
    out.text = std::string(sql_help);
  } else {
    return fail(code::invalid_argument, "no command or group '" + name + "'; type help for the list");
  }
  out.data["help"] = out.text;
  return out;
}

}  // namespace cellar::shell
