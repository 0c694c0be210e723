// shell/commands_backup.cc: the HBase shell's snapshot commands (snapshot 't', 'name',
// list_snapshots, list_table_snapshots, delete_snapshot, restore_snapshot,
// clone_snapshot) over a connection's named snapshots (cellar/backup.h). The
// argument-less `snapshot` is the store's persistence snapshot (commands_admin.cc).
#include <ctime>

#include "shell/command.h"

namespace cellar::shell {

namespace {

// "YYYY-MM-DD hh:mm:ss UTC"
std::string utc(std::int64_t unix_ms) {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

// Arguments 0..n-1 as strings, exactly n of them (`usage` in the error otherwise).
result<std::vector<std::string>> strings(const args_view& a, std::size_t min, std::size_t max, std::string_view usage) {
  if (a.args.size() < min || a.args.size() > max)
    return status{code::invalid_argument, a.command + " takes " + std::string(usage)};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    auto s = a.str(i, i == 0 ? "the first argument" : "the second argument");
    if (!s) return s.error();
    out.push_back(std::move(s.value()));
  }
  return out;
}

outcome listing(const std::vector<snapshot_info>& snaps) {
  outcome out;
  out.text = "SNAPSHOT                                 TABLE + CREATION TIME\n";
  json list = json::array();
  for (const auto& s : snaps) {
    std::string name = s.name;
    if (name.size() < 40) name.resize(40, ' ');
    out.text += " " + name + " " + s.table + " (" + utc(s.created_unix_ms) + ")\n";
    list.push_back({{"name", s.name},
                    {"table", s.table},
                    {"created_unix_ms", s.created_unix_ms},
                    {"partitions", s.partitions},
                    {"cells", s.cells},
                    {"bytes", s.bytes}});
  }
  out.text += std::to_string(snaps.size()) + " row(s)\n";
  out.data["snapshots"] = list;
  return out;
}

}  // namespace

outcome cmd_snapshot_table(context& c, const args_view& a) {
  auto v = strings(a, 2, 2, "a table and a snapshot name: snapshot 't', 'name'");
  if (!v) return fail(v.error());
  if (auto s = c.conn.snapshot_table((*v)[0], (*v)[1]); !s) return fail(s);
  return {};
}

outcome cmd_list_snapshots(context& c, const args_view& a) {
  auto v = strings(a, 0, 1, "an optional regex of snapshot names: list_snapshots 'abc.*'");
  if (!v) return fail(v.error());
  auto r = c.conn.list_snapshots("", v->empty() ? "" : (*v)[0]);
  if (!r) return fail(r.error());
  return listing(*r);
}

outcome cmd_list_table_snapshots(context& c, const args_view& a) {
  auto v = strings(a, 1, 2, "a table regex and an optional snapshot regex: list_table_snapshots 't.*', 's.*'");
  if (!v) return fail(v.error());
  auto r = c.conn.list_snapshots((*v)[0], v->size() > 1 ? (*v)[1] : "");
  if (!r) return fail(r.error());
  return listing(*r);
}

outcome cmd_delete_snapshot(context& c, const args_view& a) {
  auto v = strings(a, 1, 1, "one argument, the snapshot: delete_snapshot 'name'");
  if (!v) return fail(v.error());
  if (auto s = c.conn.delete_snapshot((*v)[0]); !s) return fail(s);
  return {};
}

outcome cmd_restore_snapshot(context& c, const args_view& a) {
  auto v = strings(a, 1, 1, "one argument, the snapshot: restore_snapshot 'name'");
  if (!v) return fail(v.error());
  if (auto s = c.conn.restore_snapshot((*v)[0]); !s) return fail(s);
  return {};
}

outcome cmd_clone_snapshot(context& c, const args_view& a) {
  auto v = strings(a, 2, 2, "a snapshot and a new table: clone_snapshot 'name', 'new_table'");
  if (!v) return fail(v.error());
  if (auto s = c.conn.clone_snapshot((*v)[0], (*v)[1]); !s) return fail(s);
  return {};
}

}  // namespace cellar::shell
