// persist/wt_session.h: what the WiredTiger home's files (wt_home.cc, wt_checkpoints.cc)
// share of WiredTiger's C API: its errors as cellar's, sessions and cursors that close
// themselves, items, and the state of a table in WiredTiger's metadata.
#pragma once

#include <wiredtiger.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "cellar/status.h"

namespace cellar::detail::wt {

inline status wt_error(int ret, const std::string& what) {
  const char* msg = wiredtiger_strerror(ret);
  // Damage WiredTiger finds (checksums, torn blocks) surfaces as WT_ERROR or WT_PANIC.
  const bool damage = ret == WT_ERROR || ret == WT_PANIC || ret == EILSEQ;
  return {damage ? code::corruption : code::io_error, what + ": " + msg};
}

// A session that closes itself.
class session {
 public:
  explicit session(WT_CONNECTION* c) { ret_ = c->open_session(c, nullptr, "isolation=snapshot", &s_); }
  ~session() {
    if (s_) s_->close(s_, nullptr);
  }
  WT_SESSION* operator->() { return s_; }
  WT_SESSION* get() { return s_; }
  int error() const { return ret_; }

 private:
  WT_SESSION* s_ = nullptr;
  int ret_ = 0;
};

class cursor {
 public:
  cursor(WT_SESSION* s, const std::string& uri, const char* cfg = nullptr) {
    ret_ = s->open_cursor(s, uri.c_str(), nullptr, cfg, &c_);
  }
  ~cursor() {
    if (c_) c_->close(c_);
  }
  // Closes now and says how it went: closing a bulk cursor writes its last page and syncs
  // the file, which can fail.
  int close() {
    const int ret = c_ ? c_->close(c_) : 0;
    c_ = nullptr;
    return ret;
  }
  WT_CURSOR* operator->() { return c_; }
  WT_CURSOR* get() { return c_; }
  int error() const { return ret_; }

 private:
  WT_CURSOR* c_ = nullptr;
  int ret_ = 0;
};

inline WT_ITEM item(std::string_view s) {
  WT_ITEM i{};
  i.data = s.data();
  i.size = s.size();
  return i;
}

inline std::string_view view(const WT_ITEM& i) { return {static_cast<const char*>(i.data), i.size}; }

// What WiredTiger's metadata holds of a table. A create cut short (a failed sync inside it,
// or a crash: WiredTiger's create is not atomic) can leave the table's entry without its
// column group; opening the table then fails with EINVAL, and creating it again does not
// complete it. Such a table never held a cell.
enum class table_state { missing, half_created, ready };

// The state of `uri` ("table:..."), or WiredTiger's error.
inline int state_of(WT_SESSION* s, const std::string& uri, table_state* out) {
  cursor m(s, "metadata:");
  if (m.error() != 0) return m.error();
  int ret = 0;
  auto has = [&](const std::string& key) {
    m->set_key(m.get(), key.c_str());
    const int r = m->search(m.get());
    if (r != 0 && r != WT_NOTFOUND) ret = r;
    return r == 0;
  };
  if (!has(uri))
    *out = table_state::missing;
  else
    *out = has("colgroup:" + uri.substr(6)) ? table_state::ready : table_state::half_created;
  return ret;
}

// Whether opening `uri` failed with `err` because there is no usable table: none was ever
// created (a partition never written), or its create was cut short. Either reads as empty.
inline bool no_table(WT_SESSION* s, const std::string& uri, int err) {
  if (err == ENOENT) return true;
  table_state st = table_state::ready;
  return err == EINVAL && state_of(s, uri, &st) == 0 && st == table_state::half_created;
}

}  // namespace cellar::detail::wt
