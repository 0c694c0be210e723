// shell/commands_admin.cc: the HBase shell's table and server commands (create, alter,
// describe, list, exists, drop, truncate, disable, enable, get_splits, status, version,
// whoami, snapshot), as the HBase 2.x shell runs them (hbase-shell/src/main/ruby/hbase/
// admin.rb).
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <regex>

#include "cellar_revision.h"
#include "shell/command.h"
#include "shell/table_options.h"

#ifndef CELLAR_VERSION
#define CELLAR_VERSION "unknown"
#endif

namespace cellar::shell {

namespace {

result<std::string> table_arg(const args_view& a) {
  auto name = a.str(0, "table");
  if (!name) return name.error();
  if (a.args.size() > 1) return status{code::invalid_argument, a.command + " takes one argument, the table"};
  return name;
}

std::string describe_partitioning(const partition_spec& p) {
  using m = partition_spec::method;
  switch (p.how) {
    case m::none: return "none";
    case m::key: return "KEY(K) PARTITIONS " + std::to_string(p.partitions);
    case m::key_prefix:
      return "KEY(substring(K, 1, " + std::to_string(p.prefix_bytes) + ")) PARTITIONS " + std::to_string(p.partitions);
    case m::range: {
      std::string s = "RANGE COLUMNS(K) bounds [";
      for (std::size_t i = 0; i < p.bounds.size(); ++i) s += (i ? ", '" : "'") + to_string_binary(p.bounds[i]) + "'";
      return s + ", MAXVALUE]";
    }
  }
  return "?";
}

}  // namespace

json family_json(const family_descriptor& f) {
  json j;
  j["name"] = f.name;
  j["versions"] = f.max_versions == 0 ? json(nullptr) : json(f.max_versions);
  j["ttl_seconds"] = f.ttl_seconds == 0 ? json(nullptr) : json(f.ttl_seconds);
  j["max_value_bytes"] = f.max_value_bytes;
  j["time_series"] = f.kind == family_kind::time_series;
  j["min_versions"] = f.min_versions;
  j["attributes"] = f.attributes;
  return j;
}

json partitioning_json(const partition_spec& p) {
  using m = partition_spec::method;
  json j;
  switch (p.how) {
    case m::none: j["method"] = "none"; break;
    case m::key: j["method"] = "key"; break;
    case m::key_prefix: j["method"] = "key_prefix"; break;
    case m::range: j["method"] = "range"; break;
  }
  j["partitions"] = p.count();
  if (p.how == m::key_prefix) j["prefix_bytes"] = p.prefix_bytes;
  if (p.how == m::range) {
    json b = json::array();
    for (const auto& x : p.bounds) b.push_back(to_string_binary(x));
    j["bounds"] = b;
  }
  return j;
}

outcome cmd_create(context& c, const args_view& a) {
  auto name = a.str(0, "table");
  if (!name) return fail(name.error());
  table_descriptor d;
  d.name = name.value();
  d.partitioning = partition_spec::hash(c.opts.default_partitions);
  for (std::size_t i = 1; i < a.args.size(); ++i) {
    const auto& v = a.args[i];
    if (v.is_hash() && !v.find("NAME")) {  // table options
      if (auto s = create_options_from(v.as_hash(), d); !s) return fail(s);
      continue;
    }
    auto f = family_from(v, nullptr);
    if (!f) return fail(f.error());
    d.families.push_back(std::move(f.value()));
  }
  if (d.families.empty()) return fail(code::invalid_argument, "create needs at least one column family");
  if (auto s = c.conn.create_table(d, schema_origin::hbase_shell); !s) return fail(s);
  outcome out;
  out.text = "Created table " + d.name + "\n";
  return out;
}

namespace {

// NAME => 'x' or NAME => ['x', 'y'] of an alter method.
result<std::vector<std::string>> names_of(const shell_value* n, const std::string& method) {
  if (n == nullptr) return status{code::invalid_argument, "NAME parameter missing for " + method + " method"};
  std::vector<std::string> out;
  if (n->is_array()) {
    for (const auto& x : n->as_array()) {
      auto t = as_text(x, "NAME");
      if (!t) return t.error();
      out.push_back(t.value());
    }
    return out;
  }
  auto t = as_text(*n, "NAME");
  if (!t) return t.error();
  out.push_back(t.value());
  return out;
}

// One argument of alter: a family to add or change, a family to delete, attributes to
// unset (METHOD => 'table_att_unset'), or table attributes to set.
status alter_one(context& c, const std::string& table, const shell_value& v) {
  if (v.is_hash()) {
    const shell_value* method = v.find("METHOD");
    const shell_value* del = v.find("delete");
    if (del != nullptr) {
      auto f = as_text(*del, "family");
      if (!f) return f.error();
      return c.conn.drop_family(table, f.value());
    }
    if (method != nullptr) {
      auto m = as_text(*method, "METHOD");
      if (!m) return m.error();
      if (m.value() == "delete") {
        auto names = names_of(v.find("NAME"), "delete");
        if (!names) return names.error();
        for (const auto& f : names.value())
          if (auto s = c.conn.drop_family(table, f); !s) return s;
        return status::ok();
      }
      if (m.value() == "table_att_unset") {
        auto names = names_of(v.find("NAME"), "table_att_unset");
        if (!names) return names.error();
        return c.conn.alter_table(table, {}, names.value());
      }
      if (m.value() == "table_conf_unset") {
        auto names = names_of(v.find("NAME"), "table_conf_unset");
        if (!names) return names.error();
        return {code::invalid_argument,
                "Could not find configuration: " + names->front() + " (cellar keeps no table configuration)"};
      }
      if (m.value() != "table_att") return {code::invalid_argument, "Unknown method: " + m.value()};
    }
    // Table attributes: a hash without NAME, or with METHOD => 'table_att'.
    if (method != nullptr || v.find("NAME") == nullptr) {
      auto set = alter_options_from(v.as_hash());
      if (!set) return set.error();
      return c.conn.alter_table(table, set.value(), {});
    }
  }
  auto d = c.conn.describe(table);
  if (!d) return d.error();
  auto given = family_from(v, nullptr);
  if (!given) return given.error();
  const family_descriptor* old = nullptr;
  for (const auto& f : d->families)
    if (f.name == given->name) old = &f;
  // Settings the hash does not name keep their value; a new family gets HBase's
  // defaults (VERSIONS => 1).
  family_descriptor base;
  base.max_versions = 1;
  auto f = family_from(v, old != nullptr ? old : &base);
  if (!f) return f.error();
  return c.conn.alter_family(table, f.value());
}

}  // namespace

outcome cmd_alter(context& c, const args_view& a) {
  auto name = a.str(0, "table");
  if (!name) return fail(name.error());
  if (a.args.size() < 2)
    return fail(code::invalid_argument, "There should be at least one argument but the table name");
  for (std::size_t i = 1; i < a.args.size(); ++i)
    if (auto s = alter_one(c, name.value(), a.args[i]); !s) return fail(s);
  outcome out;
  out.text = "Updating all regions with the new schema...\nDone.\n";
  return out;
}

outcome cmd_describe(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  auto d = c.conn.describe(name.value());
  if (!d) return fail(d.error());
  auto enabled = c.conn.is_table_enabled(name.value());
  if (!enabled) return fail(enabled.error());
  outcome out;
  const std::string attrs = describe_table_attributes(d->attributes);
  out.text = "Table " + d->name + (enabled.value() ? " is ENABLED\n" : " is DISABLED\n") + d->name +
             (attrs.empty() ? "" : ", " + attrs) + ", PARTITIONS => " + describe_partitioning(d->partitioning) +
             "\nCOLUMN FAMILIES DESCRIPTION\n";
  for (const auto& f : d->families) out.text += describe_family(f) + "\n";
  out.text += std::to_string(d->families.size()) + " row(s)\n";
  json families = json::array();
  for (const auto& f : d->families) families.push_back(family_json(f));
  out.data["table"] = {{"name", d->name},
                       {"enabled", enabled.value()},
                       {"partitioning", partitioning_json(d->partitioning)},
                       {"attributes", d->attributes},
                       {"families", families}};
  return out;
}

outcome name_listing(const args_view& a, std::vector<std::string> names, std::string_view heading,
                     const std::string& key) {
  if (!a.args.empty()) {
    auto pattern = a.str(0, "regex");
    if (!pattern) return fail(pattern.error());
    try {
      // As Java's Pattern.matcher(name).matches(): the whole name.
      std::regex re(pattern.value(), std::regex::ECMAScript);
      std::erase_if(names, [&](const std::string& n) { return !std::regex_match(n, re); });
    } catch (const std::regex_error&) {
      return fail(code::invalid_argument, "bad regular expression: " + pattern.value());
    }
  }
  outcome out;
  out.text = std::string(heading) + "\n";
  for (const auto& n : names) out.text += n + "\n";
  out.text += std::to_string(names.size()) + " row(s)\n";
  out.data[key] = names;
  return out;
}

outcome cmd_list(context& c, const args_view& a) {
  if (a.args.size() > 1) return fail(code::invalid_argument, "list takes one argument, a regular expression");
  auto t = c.conn.list_tables();
  if (!t) return fail(t.error());
  return name_listing(a, t.value(), "TABLE", "tables");
}

outcome cmd_exists(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  auto d = c.conn.describe(name.value());
  if (!d && d.code() != code::table_not_found) return fail(d.error());
  outcome out;
  out.text = "Table " + name.value() + (d ? " does exist\n" : " does not exist\n");
  out.data["exists"] = d.is_ok();
  return out;
}

// SH3: HBase's drop refuses an enabled table ("Disable it first"); SQL DROP TABLEGROUP
// does not ask (catalog/ddl.h).
outcome cmd_drop(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  auto enabled = c.conn.is_table_enabled(name.value());
  if (!enabled) return fail(enabled.error());
  if (enabled.value()) return fail(code::invalid_argument, "Table " + name.value() + " is enabled. Disable it first.");
  if (auto s = c.conn.drop_table(name.value()); !s) return fail(s);
  return {};
}

// truncate and truncate_preserve: HBase disables the table, recreates it (truncate_preserve
// keeping its region boundaries) and leaves it enabled. cellar's partitioning is part of
// the schema, so both keep it; the truncation itself is one atomic catalog change.
outcome cmd_truncate(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  auto enabled = c.conn.is_table_enabled(name.value());
  if (!enabled) return fail(enabled.error());
  outcome out;
  out.text = "Truncating '" + name.value() + "' table (it may take a while):\n";
  if (enabled.value()) out.text += "Disabling table...\n";
  out.text += "Truncating table...\n";
  if (auto s = c.conn.truncate_table(name.value()); !s) return fail(s);
  if (!enabled.value())
    if (auto s = c.conn.enable_table(name.value()); !s) return fail(s);
  return out;
}

outcome cmd_disable(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  if (auto s = c.conn.disable_table(name.value()); !s) return fail(s);
  return {};
}

outcome cmd_enable(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  if (auto s = c.conn.enable_table(name.value()); !s) return fail(s);
  return {};
}

outcome cmd_is_enabled(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  auto e = c.conn.is_table_enabled(name.value());
  if (!e) return fail(e.error());
  outcome out;
  out.text = e.value() ? "true\n" : "false\n";
  out.data["enabled"] = e.value();
  return out;
}

outcome cmd_is_disabled(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  auto e = c.conn.is_table_enabled(name.value());
  if (!e) return fail(e.error());
  outcome out;
  out.text = e.value() ? "false\n" : "true\n";
  out.data["disabled"] = !e.value();
  return out;
}

// get_splits: the row keys where partitions begin. Hash partitions have none (their rows
// interleave); the count line gives the number of partitions either way.
outcome cmd_get_splits(context& c, const args_view& a) {
  auto name = table_arg(a);
  if (!name) return fail(name.error());
  auto d = c.conn.describe(name.value());
  if (!d) return fail(d.error());
  const auto& p = d->partitioning;
  outcome out;
  out.text = "Total number of splits = " + std::to_string(p.count()) + "\n";
  json splits = json::array();
  for (const auto& b : p.bounds) {
    out.text += to_string_binary(b) + "\n";
    splits.push_back(to_string_binary(b));
  }
  out.data["splits"] = splits;
  out.data["partitions"] = p.count();
  return out;
}

outcome cmd_snapshot(context& c, const args_view& a) {
  // With a table and a name: HBase's table snapshot (commands_backup.cc).
  if (!a.args.empty()) {
    if (a.args.size() == 2) return cmd_snapshot_table(c, a);
    return fail(code::invalid_argument,
                "snapshot takes no arguments (the store's persistence snapshot) or a table and a name "
                "(a named table snapshot: snapshot 't', 'name')");
  }
  auto s = c.conn.snapshot();
  if (!s) return fail(s.error());
  outcome out;
  out.text = "Snapshot " + std::to_string(s->generation) + ": " + std::to_string(s->changes) + " changes, " +
             std::to_string(s->bytes) + " bytes\n";
  out.data["snapshot"] = {{"generation", s->generation},
                          {"changes", s->changes},
                          {"bytes", s->bytes},
                          {"seconds", s->seconds}};
  return out;
}

// move 'TABLE/INDEX', 'NODE': HBase's move 'ENCODED_REGIONNAME', 'SERVER_NAME', where a
// region is a partition named as status 'detailed' shows it and a server is a node id.
// move 'TABLE/INDEX', 'FROM_NODE', 'TO_NODE' names the replica that moves (any of a
// replicated partition's set). Sent as cellar's ALTER SYSTEM MOVE PARTITION statement
// (catalog/ddl.h), so every connection (embedded, RPC, routed) carries it unchanged.
outcome cmd_move(context& c, const args_view& a) {
  if (a.args.size() != 2 && a.args.size() != 3)
    return fail(code::invalid_argument,
                "move takes a partition and a node, or a partition and two nodes: move 'TABLE/INDEX', 'NODE' or "
                "move 'TABLE/INDEX', 'FROM_NODE', 'TO_NODE' (see status 'detailed')");
  std::vector<std::string> v;
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    auto s = a.str(i, i == 0 ? "the partition" : "the node");
    if (!s) return fail(s.error());
    if (s->empty() || s->find_first_of("'\\") != std::string::npos)
      return fail(code::invalid_argument, "'" + *s + "' is not a partition or node name");
    v.push_back(std::move(*s));
  }
  const std::string sql = v.size() == 2
                              ? "ALTER SYSTEM MOVE PARTITION '" + v[0] + "' TO '" + v[1] + "'"
                              : "ALTER SYSTEM MOVE PARTITION '" + v[0] + "' FROM '" + v[1] + "' TO '" + v[2] + "'";
  if (auto s = c.conn.ddl(sql); !s) return fail(s);
  return {};
}

// transfer_leader 'TABLE/INDEX', 'NODE': makes NODE, which holds a replica of the
// replicated partition, its preferred leader (no data moves; HBase has no such command).
// Sent as ALTER SYSTEM TRANSFER LEADER PARTITION.
outcome cmd_transfer_leader(context& c, const args_view& a) {
  if (a.args.size() != 2)
    return fail(code::invalid_argument,
                "transfer_leader takes a partition and a node: transfer_leader 'TABLE/INDEX', 'NODE' (see status "
                "'detailed')");
  auto part = a.str(0, "the partition");
  if (!part) return fail(part.error());
  auto node = a.str(1, "the node");
  if (!node) return fail(node.error());
  for (const auto* v : {&part.value(), &node.value()})
    if (v->empty() || v->find_first_of("'\\") != std::string::npos)
      return fail(code::invalid_argument, "'" + *v + "' is not a partition or node name");
  if (auto s = c.conn.ddl("ALTER SYSTEM TRANSFER LEADER PARTITION '" + part.value() + "' TO '" + node.value() + "'");
      !s)
    return fail(s);
  return {};
}

// balancer: runs the cluster's balancer (HBase's balancer): true when it ran (every move
// it planned is done, or none was needed), false when it could not run because a move was
// already running; other failures are errors.
outcome cmd_balancer(context& c, const args_view& a) {
  if (a.args.size() > 1) return fail(code::invalid_argument, "balancer takes no arguments (or 'force')");
  auto s = c.conn.ddl("ALTER SYSTEM BALANCE");
  if (!s && s.code() != code::conflict) return fail(s);
  outcome out;
  out.text = s ? "true\n" : "false\n";
  out.data["ran"] = s.is_ok();
  return out;
}

// status ['summary' | 'simple' | 'detailed']: one server (the cellar-server, or this
// process for an embedded store) whose regions are the partitions of the enabled tables.
outcome cmd_status(context& c, const args_view& a) {
  std::string format = "summary";
  if (!a.args.empty()) {
    auto f = a.str(0, "format");
    if (!f) return fail(f.error());
    format = f.value();
  }
  if (format == "replication" || format == "tasks")
    return fail(code::unsupported, "status '" + format +
                                       "' is not supported: cellar has no replication and no "
                                       "background task monitor");
  if (format != "summary" && format != "simple" && format != "detailed")
    return fail(code::invalid_argument, "status takes 'summary', 'simple' or 'detailed', not '" + format + "'");
  auto names = c.conn.list_tables();
  if (!names) return fail(names.error());
  std::uint64_t regions = 0, cells = 0, bytes = 0, disabled = 0;
  std::string region_text;
  json tables = json::array();
  for (const auto& n : names.value()) {
    auto d = c.conn.describe(n);
    auto e = c.conn.is_table_enabled(n);
    auto st = c.conn.stats(n);
    if (!d || !e || !st) continue;  // dropped meanwhile
    if (!e.value()) ++disabled;
    const std::uint32_t parts = d->families.empty() ? 0 : d->partitioning.count();
    if (e.value()) regions += parts;
    cells += st->cells;
    bytes += st->bytes;
    for (std::size_t i = 0; i < st->cells_per_partition.size(); ++i)
      region_text += "        \"" + n + ",p" + std::to_string(i) +
                     "\"\n            cells=" + std::to_string(st->cells_per_partition[i]) +
                     (e.value() ? "" : ", disabled") + "\n";
    tables.push_back({{"name", n},
                      {"enabled", e.value()},
                      {"partitions", parts},
                      {"cells", st->cells},
                      {"bytes", st->bytes},
                      {"cells_per_partition", st->cells_per_partition}});
  }
  const std::string& server = c.opts.endpoint;
  const std::string load = "numberOfOnlineRegions=" + std::to_string(regions) +
                           ", numberOfTables=" + std::to_string(names->size()) + ", cells=" + std::to_string(cells) +
                           ", memoryBytes=" + std::to_string(bytes);
  // The servers: this one, or a cluster's live and down nodes (a down node is one the
  // placement map names that is not registered: HBase's dead servers).
  std::vector<std::string> live{server}, down;
  std::string cluster_text;
  if (auto sum = c.conn.summary(); sum && !sum->store.cluster.empty()) {
    cluster_text = sum->store.cluster;
    live = sum->store.cluster_live_nodes;
    down = sum->store.cluster_down_nodes;
  }
  const bool in_cluster = !cluster_text.empty();
  // This node's line carries its load: the live node whose address is the one connected to.
  auto is_self = [&](const std::string& node) {
    return !in_cluster || node == server || node.ends_with(" " + server) || live.size() == 1;
  };
  char avg[32];
  std::snprintf(avg, sizeof avg, "%.4f",
                live.empty() ? 0.0 : static_cast<double>(regions) / static_cast<double>(live.size()));
  outcome out;
  if (format == "summary") {
    out.text = "1 active master, 0 backup masters, " + std::to_string(live.size()) + " servers, " +
               std::to_string(down.size()) + " dead, " + avg + " average load\n";
  } else {
    if (format == "detailed") out.text = "version " CELLAR_VERSION "\n0 regionsInTransition\n";
    out.text += "active master:  " + server + "\n0 backup masters\n";
    out.text += std::to_string(live.size()) + " live servers\n";
    for (const auto& node : live) {
      out.text += "    " + node + "\n";
      if (!is_self(node)) continue;
      out.text += "        " + load + "\n";
      if (format == "detailed") out.text += region_text;
    }
    out.text += std::to_string(down.size()) + " dead servers\n";
    for (const auto& node : down) out.text += "    " + node + "\n";
    if (format == "simple") out.text += "Aggregate load: 0, regions: " + std::to_string(regions) + "\n";
  }
  json s = {{"active_masters", 1},
            {"backup_masters", 0},
            {"servers", live.size()},
            {"dead_servers", down.size()},
            {"average_load", live.empty() ? 0.0 : static_cast<double>(regions) / static_cast<double>(live.size())},
            {"regions", regions},
            {"tables", names->size()},
            {"disabled_tables", disabled},
            {"cells", cells},
            {"memory_bytes", bytes},
            {"server", server}};
  if (in_cluster) {
    s["live_server_names"] = live;
    s["dead_server_names"] = down;
  }
  if (format == "detailed") s["table_detail"] = tables;
  // A cluster node also tells its nodes, their partitions and the master.
  if (format == "detailed" && in_cluster) {
    out.text += cluster_text;
    s["cluster"] = cluster_text;
  }
  out.data["status"] = s;
  return out;
}

outcome cmd_version(context&, const args_view& a) {
  if (!a.args.empty()) return fail(code::invalid_argument, "version takes no arguments");
  outcome out;
  out.text = std::string(CELLAR_VERSION) + ", r" + CELLAR_REVISION + ", " + __DATE__ + "\n";
  out.data["version"] = CELLAR_VERSION;
  out.data["revision"] = CELLAR_REVISION;
  return out;
}

// whoami: the user this shell runs as (HBase's User.getCurrent) and how it logged in.
outcome cmd_whoami(context& c, const args_view& a) {
  if (!a.args.empty()) return fail(code::invalid_argument, "whoami takes no arguments");
  std::string user = std::to_string(geteuid());
  if (const passwd* pw = getpwuid(geteuid())) user = pw->pw_name;
  std::vector<std::string> groups;
  std::vector<gid_t> ids(static_cast<std::size_t>(std::max(0, getgroups(0, nullptr))));
  ids.resize(static_cast<std::size_t>(std::max(0, getgroups(static_cast<int>(ids.size()), ids.data()))));
  if (std::find(ids.begin(), ids.end(), getegid()) == ids.end()) ids.insert(ids.begin(), getegid());
  for (gid_t g : ids)
    if (const group* gr = getgrgid(g)) groups.emplace_back(gr->gr_name);
  const std::string auth = c.opts.token ? "TOKEN" : "SIMPLE";
  outcome out;
  out.text = user + " (auth:" + auth + ")\n";
  if (!groups.empty()) {
    out.text += "    groups: ";
    for (std::size_t i = 0; i < groups.size(); ++i) out.text += (i ? ", " : "") + groups[i];
    out.text += "\n";
  }
  out.data["user"] = user;
  out.data["auth"] = auth;
  out.data["groups"] = groups;
  return out;
}

}  // namespace cellar::shell
