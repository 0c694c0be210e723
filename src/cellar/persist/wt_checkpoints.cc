// persist/wt_checkpoints.cc: named checkpoints of a WiredTiger home's tables, and the list
// of its partition tables (wt_home.h).
#include <cerrno>
#include <cstdio>
#include <memory>
#include <set>

#include "persist/wt_home.h"
#include "persist/wt_session.h"

namespace cellar::detail {

namespace {

using wt::cursor;
using wt::session;

// WiredTiger's error as cellar's; EBUSY (a checkpoint in use) is CONFLICT.
status checkpoint_error(int ret, const std::string& what) {
  return ret == EBUSY ? status{code::conflict, what + ": " + wiredtiger_strerror(ret)} : wt::wt_error(ret, what);
}

// Those of `uris` that are whole tables (wt::state_of); WiredTiger's error otherwise.
int existing(WT_SESSION* s, const std::vector<std::string>& uris, std::vector<std::string>* out) {
  for (const auto& uri : uris) {
    wt::table_state st = wt::table_state::missing;
    if (int ret = wt::state_of(s, uri, &st); ret != 0) return ret;
    if (st == wt::table_state::ready) out->push_back(uri);
  }
  return 0;
}

// "target=("a","b")".
std::string target(const std::vector<std::string>& uris) {
  std::string out = "target=(";
  for (std::size_t i = 0; i < uris.size(); ++i) out += (i ? ",\"" : "\"") + uris[i] + "\"";
  return out + ")";
}

}  // namespace

result<std::vector<std::string>> wt_home::take_named_checkpoint(const std::string& name,
                                                                const std::vector<std::string>& uris) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return checkpoint_error(s.error(), "open a WiredTiger session");
  std::vector<std::string> taken;
  int ret = existing(s.get(), uris, &taken);
  if (ret != 0) return checkpoint_error(ret, "read WiredTiger's metadata");
  if (taken.empty()) return taken;
  const std::string cfg = "name=" + name + "," + target(taken);
  if ((ret = s->checkpoint(s.get(), cfg.c_str())) != 0) return checkpoint_error(ret, "checkpoint " + name);
  return taken;
}

result<std::vector<std::pair<std::uint64_t, std::uint32_t>>> wt_home::partition_tables() {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return checkpoint_error(s.error(), "open a WiredTiger session");
  cursor m(s.get(), "metadata:");
  if (m.error()) return checkpoint_error(m.error(), "read WiredTiger's metadata");
  std::set<std::pair<std::uint64_t, std::uint32_t>> out;
  int ret;
  while ((ret = m->next(m.get())) == 0) {
    const char* key = nullptr;
    if ((ret = m->get_key(m.get(), &key)) != 0) break;
    unsigned long long uid = 0;
    unsigned partition = 0;
    char kind = 0;
    int end = 0;
    // "table:d12p3" or "table:c12p3", and nothing after.
    if (std::sscanf(key, "table:%c%llup%u%n", &kind, &uid, &partition, &end) == 3 && key[end] == '\0' &&
        (kind == 'd' || kind == 'c'))
      out.insert({uid, partition});
  }
  if (ret != WT_NOTFOUND) return checkpoint_error(ret, "read WiredTiger's metadata");
  return std::vector<std::pair<std::uint64_t, std::uint32_t>>(out.begin(), out.end());
}

status wt_home::drop_named_checkpoint(const std::string& name, const std::vector<std::string>& uris) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return checkpoint_error(s.error(), "open a WiredTiger session");
  std::vector<std::string> have;
  int ret = existing(s.get(), uris, &have);
  if (ret != 0) return checkpoint_error(ret, "read WiredTiger's metadata");
  if (have.empty()) return status::ok();
  // A table that lacks the checkpoint is passed over by WiredTiger.
  const std::string cfg = "drop=(" + name + ")," + target(have);
  if ((ret = s->checkpoint(s.get(), cfg.c_str())) != 0) return checkpoint_error(ret, "drop checkpoint " + name);
  return status::ok();
}

}  // namespace cellar::detail
