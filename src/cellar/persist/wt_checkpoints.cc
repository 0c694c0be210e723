// persist/wt_checkpoints.cc: named checkpoints of a WiredTiger home's tables, and the list
// of its partition tables (wt_home.h).
#include <cerrno>
#include <cstdio>
#include <memory>
#include <set>

#include "persist/wt_home.h"

namespace cellar::detail {

namespace {

status checkpoint_error(int ret, const std::string& what) {
  return {ret == EBUSY ? code::conflict : code::io_error, what + ": " + wiredtiger_strerror(ret)};
}

using session_ptr = std::unique_ptr<WT_SESSION, void (*)(WT_SESSION*)>;

session_ptr open_session(WT_CONNECTION* conn, int* ret) {
  WT_SESSION* s = nullptr;
  *ret = conn->open_session(conn, nullptr, nullptr, &s);
  return session_ptr(*ret == 0 ? s : nullptr, [](WT_SESSION* x) {
    if (x) x->close(x, nullptr);
  });
}

// Those of `uris` that WiredTiger's metadata holds; WiredTiger's error otherwise.
int existing(WT_SESSION* s, const std::vector<std::string>& uris, std::vector<std::string>* out) {
  WT_CURSOR* m = nullptr;
  if (int ret = s->open_cursor(s, "metadata:", nullptr, nullptr, &m); ret != 0) return ret;
  int ret = 0;
  for (const auto& uri : uris) {
    // A table whose create was cut short has no column group and never held a cell.
    const std::string group = "colgroup:" + uri.substr(uri.find(':') + 1);
    m->set_key(m, group.c_str());
    const int r = m->search(m);
    if (r == 0) {
      out->push_back(uri);
    } else if (r != WT_NOTFOUND) {
      ret = r;
      break;
    }
  }
  m->close(m);
  return ret;
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
  int ret = 0;
  auto s = open_session(conn_, &ret);
  if (ret != 0) return checkpoint_error(ret, "open a WiredTiger session");
  std::vector<std::string> taken;
  if ((ret = existing(s.get(), uris, &taken)) != 0) return checkpoint_error(ret, "read WiredTiger's metadata");
  if (taken.empty()) return taken;
  const std::string cfg = "name=" + name + "," + target(taken);
  if ((ret = s->checkpoint(s.get(), cfg.c_str())) != 0) return checkpoint_error(ret, "checkpoint " + name);
  return taken;
}

result<std::vector<std::pair<std::uint64_t, std::uint32_t>>> wt_home::partition_tables() {
  std::shared_lock guard(conn_mu_);
  int ret = 0;
  auto s = open_session(conn_, &ret);
  if (ret != 0) return checkpoint_error(ret, "open a WiredTiger session");
  WT_CURSOR* m = nullptr;
  if ((ret = s->open_cursor(s.get(), "metadata:", nullptr, nullptr, &m)) != 0)
    return checkpoint_error(ret, "read WiredTiger's metadata");
  std::set<std::pair<std::uint64_t, std::uint32_t>> out;
  while ((ret = m->next(m)) == 0) {
    const char* key = nullptr;
    if ((ret = m->get_key(m, &key)) != 0) break;
    unsigned long long uid = 0;
    unsigned partition = 0;
    char kind = 0;
    int end = 0;
    // "table:d12p3" or "table:c12p3", and nothing after.
    if (std::sscanf(key, "table:%c%llup%u%n", &kind, &uid, &partition, &end) == 3 && key[end] == '\0' &&
        (kind == 'd' || kind == 'c'))
      out.insert({uid, partition});
  }
  m->close(m);
  if (ret != WT_NOTFOUND) return checkpoint_error(ret, "read WiredTiger's metadata");
  return std::vector<std::pair<std::uint64_t, std::uint32_t>>(out.begin(), out.end());
}

status wt_home::drop_named_checkpoint(const std::string& name, const std::vector<std::string>& uris) {
  std::shared_lock guard(conn_mu_);
  int ret = 0;
  auto s = open_session(conn_, &ret);
  if (ret != 0) return checkpoint_error(ret, "open a WiredTiger session");
  std::vector<std::string> have;
  if ((ret = existing(s.get(), uris, &have)) != 0) return checkpoint_error(ret, "read WiredTiger's metadata");
  if (have.empty()) return status::ok();
  // A table that lacks the checkpoint is passed over by WiredTiger.
  const std::string cfg = "drop=(" + name + ")," + target(have);
  if ((ret = s->checkpoint(s.get(), cfg.c_str())) != 0) return checkpoint_error(ret, "drop checkpoint " + name);
  return status::ok();
}

}  // namespace cellar::detail
