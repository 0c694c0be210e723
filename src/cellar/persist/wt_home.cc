#include "persist/wt_home.h"

#include "persist/wt_compressors.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <thread>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "persist/codec.h"
#include "persist/early_writeback.h"
#include "persist/priority.h"
#include "persist/runs.h"
#include "persist/wt_file_system.h"
#include "persist/wt_session.h"
#include "persist/yield.h"

namespace cellar::detail {

using wt::cursor;
using wt::item;
using wt::no_table;
using wt::session;
using wt::state_of;
using wt::table_state;
using wt::view;
using wt::wt_error;

// WiredTiger's messages go to spdlog, shortened: on damage it dumps whole blocks. The
// first "fatal read error" is kept for damage_reported().
struct wt_home::events {
  WT_EVENT_HANDLER handler;  // first: WiredTiger passes its address back
  absl::Mutex mu;
  std::string damage ABSL_GUARDED_BY(mu);

  static int on_error(WT_EVENT_HANDLER* h, WT_SESSION*, int error, const char* message) {
    std::string_view m(message);
    if (m.find("__wt_bm_corrupt_dump") != std::string_view::npos) return 0;
    if (m.size() > 400) m = m.substr(0, 400);
    if (m.find("fatal read error") != std::string_view::npos) {
      auto* self = reinterpret_cast<events*>(h);
      absl::MutexLock l(&self->mu);
      if (self->damage.empty()) self->damage = std::string(m);
    }
    spdlog::error("wiredtiger: {} ({})", m, wiredtiger_strerror(error));
    return 0;
  }
  static int on_message(WT_EVENT_HANDLER*, WT_SESSION*, const char* message) {
    spdlog::debug("wiredtiger: {}", message);
    return 0;
  }
};

std::string wt_home::damage_reported() {
  absl::MutexLock l(&events_->mu);
  return events_->damage;
}

namespace {

// allocation_size=512: WiredTiger rounds every page it writes up to the allocation size. A
// 32 KB leaf holds seven ~4.2 KB runs (persist/runs.h), so with the default 4 KB a page
// would waste most of a run's size; 512 bytes keeps the files close to the cells they hold
// without slowing snapshots or recovery (docs/benchmarks.md). The files are read and written
// through the page cache, so blocks need not be aligned to 4 KB. Tables created before
// keep their own allocation size.
//
// checksum=on: WiredTiger's default checksums only the first 64 bytes of a compressed
// block, leaving damage to the decompressor, and snappy checks nothing; a failed
// decompression also stops salvage (EINVAL). With the whole block checksummed, a damaged
// compressed page fails its checksum as an uncompressed one does: CORRUPTION at open,
// skipped by salvage.

// A name no thread of the program has: the thread that calls wiredtiger_open carries it
// meanwhile, so the threads WiredTiger starts inside the call inherit it (Linux gives a
// new thread its creator's name), and only they do.
constexpr const char* opening_name = "cellar-wt-open";
constexpr const char* wt_thread_name = "cellar-wt";

// The threads of this process named `name` (/proc/self/task/*/comm).
std::vector<pid_t> threads_named(std::string_view name) {
  std::vector<pid_t> ids;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string got;
      if (std::getline(comm, got) && got == name) ids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    }
    ::closedir(d);
  }
  return ids;
}

// Serving never waits on WiredTiger's own threads (eviction, log and sweep servers: cells
// are served from memory, the redo log is cellar's own thread), so with idle_threads they
// run only when a core is otherwise idle. Renames them for top -H; returns them.
std::vector<pid_t> idle_wiredtiger_threads() {
  std::vector<pid_t> idled = threads_named(opening_name);
  for (pid_t tid : idled) {
    idle_priority(tid);
    std::ofstream(std::string("/proc/self/task/") + std::to_string(tid) + "/comm") << wt_thread_name;
  }
  return idled;
}

}  // namespace

std::string partition_uri(std::uint64_t uid, std::uint32_t partition) {
  return "table:" + partition_file_stem(uid, partition);
}

std::string changes_uri(std::uint64_t uid, std::uint32_t partition) {
  return "table:c" + std::to_string(uid) + "p" + std::to_string(partition);
}

std::string partition_file_stem(std::uint64_t uid, std::uint32_t partition) {
  return "d" + std::to_string(uid) + "p" + std::to_string(partition);
}

std::string wt_home::file_of(std::uint64_t uid, std::uint32_t partition) const {
  return dir_ + "/" + partition_file_stem(uid, partition) + ".wt";
}

std::string wt_home::describe(const std::string& uri) const {
  const std::string stem = uri.rfind("table:", 0) == 0 ? uri.substr(6) : uri;
  return uri + " (file " + dir_ + "/" + stem + ".wt)";
}

result<std::unique_ptr<wt_home>> wt_home::open(const std::string& dir, std::size_t cache_mb,
                                               std::shared_ptr<cellar::env> e, bool salvage, bool idle_threads,
                                               const std::string& compression) {
  if (!e) e = env::posix();
  std::string compressor;
  if (!block_compressor_of(compression, &compressor))
    return status{code::invalid_argument, "compression must be none, snappy or zlib, not '" + compression + "'"};
  if (!compressor.empty() && !wt_compression_available())
    return status{code::invalid_argument,
                  "compression " + compression + " needs the program to export cellar_wt_file_system_init"};
  if (int err = e->create_dir(dir); err != 0)
    return status{code::io_error, "cannot create " + dir + ": " + std::strerror(err)};
  std::unique_ptr<wt_home> h(new wt_home());
  h->events_ = std::make_unique<events>();
  h->events_->handler = {events::on_error, events::on_message, nullptr, nullptr};
  h->dir_ = dir;
  h->env_ = e;
  h->idle_threads_ = idle_threads;
  // Partition tables: the compressor applies to tables created from now on, by the first
  // write of their partition (every snapshot that rewrites a base creates its table
  // anew); older tables keep theirs.
  h->cell_table_config_ = "key_format=u,value_format=u,log=(enabled=false),allocation_size=512,checksum=on";
  if (!compressor.empty()) h->cell_table_config_ += ",block_compressor=" + compressor;
  // Logging is on for the catalog only (data tables opt out); small log files and no
  // preallocation keep the home small (WiredTiger preallocates ~300 MB otherwise).
  std::string cfg = "create,cache_size=" + std::to_string(cache_mb) +
                    "MB,log=(enabled=true,file_max=1MB,prealloc=false,archive=true),"
                    "checkpoint_sync=true,session_max=256";
  // WiredTiger's salvage of its own files (metadata, its log); cellar's tables are
  // salvaged one by one (salvage_table).
  if (salvage) cfg += ",salvage=true";
  h->config_ = cfg;
  if (auto st = h->connect(); !st) return st;
  session s(h->conn_);
  if (s.error()) return wt_error(s.error(), "open_session");
  if (int ret = s->create(s.get(), "table:catalog", "key_format=u,value_format=u"); ret != 0)
    return wt_error(ret, "create table:catalog");
  if (int ret = s->create(s.get(), "table:meta", "key_format=u,value_format=u,log=(enabled=false)"); ret != 0)
    return wt_error(ret, "create table:meta");
  return h;
}

status wt_home::connect() {
  char caller[16] = {};
  if (idle_threads_) {
    ::pthread_getname_np(::pthread_self(), caller, sizeof caller);
    ::pthread_setname_np(::pthread_self(), opening_name);
  }
  std::string why;
  const int ret = wt_open(dir_, &events_->handler, config_, env_, &conn_, &why);
  if (idle_threads_) ::pthread_setname_np(::pthread_self(), caller);
  if (ret != 0) {
    conn_ = nullptr;
    return wt_error(ret, "cannot open the WiredTiger home " + dir_ + (why.empty() ? "" : " (" + why + ")"));
  }
  if (!idle_threads_) return status::ok();
  absl::MutexLock lock(&threads_mu_);
  wt_threads_ = idle_wiredtiger_threads();
  if (hurry_) hurry_threads();
  return status::ok();
}

void wt_home::hurry() {
  absl::MutexLock lock(&threads_mu_);
  hurry_ = true;
  hurry_threads();
}

void wt_home::hurry_threads() {
  for (pid_t tid : wt_threads_) normal_priority(tid);
}

bool wt_home::stopped() {
  std::shared_lock guard(conn_mu_);
  if (!conn_) return true;
  WT_SESSION* s = nullptr;
  const int ret = conn_->open_session(conn_, nullptr, nullptr, &s);
  if (s) s->close(s, nullptr);
  return ret == WT_PANIC;
}

status wt_home::reopen() {
  std::unique_lock guard(conn_mu_);
  if (pending_loads_.load() != 0) return {code::internal, "reopen of " + dir_ + " while a bulk load is pending"};
  if (conn_) conn_->close(conn_, nullptr);  // reports the panic again; frees the connection
  conn_ = nullptr;
  if (auto st = connect(); !st) return st;
  spdlog::warn("cellar: WiredTiger reopened {} at its last checkpoint", dir_);
  return status::ok();
}

status wt_home::drop_cache() {
  std::unique_lock guard(conn_mu_);
  if (pending_loads_.load() != 0) return {code::internal, "drop_cache of " + dir_ + " while a bulk load is pending"};
  if (conn_) {
    if (int ret = conn_->close(conn_, nullptr); ret != 0) {
      conn_ = nullptr;
      return wt_error(ret, "close the WiredTiger home " + dir_);
    }
  }
  conn_ = nullptr;
  return connect();
}

status wt_home::set_cache_size(std::size_t mb) {
  std::shared_lock guard(conn_mu_);
  const std::string cfg = "cache_size=" + std::to_string(mb) + "MB";
  if (int ret = conn_->reconfigure(conn_, cfg.c_str()); ret != 0) return wt_error(ret, "set the cache size");
  return status::ok();
}

status wt_home::salvage_table(const std::string& uri, bool* existed) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  const int ret = s->salvage(s.get(), uri.c_str(), nullptr);
  const bool none = ret != 0 && no_table(s.get(), uri, ret);
  if (existed) *existed = !none;
  if (none) return status::ok();
  if (ret != 0) return wt_error(ret, "salvage " + describe(uri));
  return status::ok();
}

wt_home::~wt_home() {
  std::unique_lock guard(conn_mu_);
  if (conn_) conn_->close(conn_, nullptr);
}

status wt_home::read_catalog(const std::function<void(std::string_view, std::string_view)>& fn) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  cursor c(s.get(), "table:catalog");
  if (c.error()) return wt_error(c.error(), "open table:catalog");
  int ret;
  while ((ret = c->next(c.get())) == 0) {
    WT_ITEM k{}, v{};
    if ((ret = c->get_key(c.get(), &k)) != 0 || (ret = c->get_value(c.get(), &v)) != 0) break;
    fn(view(k), view(v));
  }
  if (ret != WT_NOTFOUND) return wt_error(ret, "read table:catalog");
  return status::ok();
}

status wt_home::write_catalog(const std::vector<std::pair<std::string, std::string>>& puts,
                              const std::vector<std::string>& erases) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  cursor c(s.get(), "table:catalog", "overwrite=true");
  if (c.error()) return wt_error(c.error(), "open table:catalog");
  s->begin_transaction(s.get(), nullptr);
  for (const auto& [k, v] : puts) {
    WT_ITEM ki = item(k), vi = item(v);
    c->set_key(c.get(), &ki);
    c->set_value(c.get(), &vi);
    if (int ret = c->insert(c.get()); ret != 0) {
      s->rollback_transaction(s.get(), nullptr);
      return wt_error(ret, "write catalog");
    }
  }
  for (const auto& k : erases) {
    WT_ITEM ki = item(k);
    c->set_key(c.get(), &ki);
    if (int ret = c->remove(c.get()); ret != 0 && ret != WT_NOTFOUND) {
      s->rollback_transaction(s.get(), nullptr);
      return wt_error(ret, "erase catalog entry");
    }
  }
  if (int ret = s->commit_transaction(s.get(), "sync=on"); ret != 0) return wt_error(ret, "commit catalog");
  return status::ok();
}

int wt_home::create_cell_table(WT_SESSION* s, const std::string& uri) const {
  table_state st = table_state::ready;
  if (int ret = state_of(s, uri, &st); ret != 0) return ret;
  if (st == table_state::ready) return 0;  // an older table keeps its own configuration
  if (st == table_state::half_created) (void)s->drop(s, uri.c_str(), "force=true");
  const int ret = s->create(s, uri.c_str(), cell_table_config_.c_str());
  // What a failed create made goes, so that the next write creates the table afresh.
  if (ret != 0) (void)s->drop(s, uri.c_str(), "force=true");
  return ret;
}

status wt_home::drop_partition(std::uint64_t uid, std::uint32_t partition) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  for (const auto& uri : {partition_uri(uid, partition), changes_uri(uid, partition)}) {
    // A partition nothing was written to has no tables (wt_home.h).
    const int ret = s->drop(s.get(), uri.c_str(), "force=true");
    if (ret != 0 && ret != ENOENT) return wt_error(ret, "drop " + uri);
  }
  return status::ok();
}

namespace {

// A cell copied out of a run or a delta: encoded key, stored value (runs.h).
struct stored_cell {
  std::string key;
  std::string stored;
};

std::string stored_value(const delta_map::change& v) {
  std::string out;
  out.reserve(8 + v.size);
  put_u64(out, static_cast<std::uint64_t>(v.expires_at));
  out += v.value();
  return out;
}

std::size_t cell_bytes(const stored_cell& c) { return c.key.size() + c.stored.size() + 4; }

// Positions `c` on the last key <= k. 0, WT_NOTFOUND (no such key), or an error.
int seek_at_or_before(WT_CURSOR* c, std::string_view k) {
  WT_ITEM ki = item(k);
  c->set_key(c, &ki);
  int exact = 0;
  int ret = c->search_near(c, &exact);
  if (ret == 0 && exact > 0) ret = c->prev(c);
  return ret;
}

std::string current_key(WT_CURSOR* c) {
  WT_ITEM k{};
  if (c->get_key(c, &k) != 0) return {};  // the connection failed meanwhile: no family's key
  return std::string(view(k));
}

// Appends the cells of the run under the cursor, and its size to *size; false if the
// run is damaged.
bool read_run(WT_CURSOR* c, std::vector<stored_cell>& out, std::size_t* size) {
  WT_ITEM v{};
  if (c->get_value(c, &v) != 0) return false;
  *size += v.size;
  run_reader r(view(v));
  std::string_view k, st;
  while (r.next(k, st)) out.push_back({std::string(k), std::string(st)});
  return r.ok();
}

}  // namespace

// A bulk load's own session and cursor, kept open until finish_load (wt_home.h).
class wt_home::pending_load {
 public:
  pending_load(WT_CONNECTION* conn, std::string uri, const std::string& path, cellar::env& e, std::atomic<int>* count)
      : count_(count), s(conn), writeback(e, path), uri(std::move(uri)), path(path) {}

 private:
  // Declared first, so destroyed last: the load counts as pending until its cursor and
  // session are closed.
  struct counted {
    explicit counted(std::atomic<int>* n) : n(n) { ++*n; }
    ~counted() { --*n; }
    std::atomic<int>* n;
  } count_;

 public:
  session s;
  std::optional<cursor> bulk;
  early_writeback writeback;
  std::string uri, path;
};

void wt_home::pending_load_deleter::operator()(pending_load* p) const { delete p; }

namespace {

// finish_load's work; the caller holds conn_mu_ shared. The file is synced here, outside
// WiredTiger's connection-wide lock, so that the close finds only its last page to sync
// (early_writeback says why).
status finish(wt_home::pending_load& load) {
  if (int err = load.writeback.sync(); err != 0)
    return status{code::io_error, "sync " + load.path + ": " + std::strerror(err)};
  if (int ret = load.bulk->close(); ret != 0) return wt_error(ret, "finish the bulk load of " + load.uri);
  return status::ok();
}

}  // namespace

status wt_home::finish_load(pending_load_ptr load) {
  std::shared_lock guard(conn_mu_);
  return finish(*load);
}

status wt_home::bulk_if_empty(std::uint64_t uid, std::uint32_t partition, const cell_source& cells,
                              std::uint64_t* bytes, std::uint64_t* base_bytes, pending_load_ptr* pending,
                              bool* written) {
  *written = false;
  const auto uri = partition_uri(uid, partition);
  {
    session s(conn_);
    if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
    bool missing = false;
    {
      cursor probe(s.get(), uri);
      missing = no_table(s.get(), uri, probe.error());
      if (!missing) {
        if (probe.error()) return wt_error(probe.error(), "open " + uri);
        const int r = probe->next(probe.get());
        if (r != 0 && r != WT_NOTFOUND) return wt_error(r, "read " + uri);
        if (r == 0) return status::ok();
      }
    }
    // The partition's first write: its base is made here, empty (wt_home.h).
    if (missing)
      if (int ret = create_cell_table(s.get(), uri); ret != 0) return wt_error(ret, "create " + uri);
  }
  pending_load_ptr load(new pending_load(conn_, uri, file_of(uid, partition), *env_, &pending_loads_));
  if (load->s.error()) return wt_error(load->s.error(), "open a WiredTiger session");
  load->bulk.emplace(load->s.get(), uri, "bulk");
  if (load->bulk->error() != 0) return status::ok();  // EBUSY and the like: the caller writes otherwise
  WT_CURSOR* bulk = load->bulk->get();
  std::string run, first;
  auto flush = [&]() -> int {
    if (run.empty()) return 0;
    WT_ITEM ki = item(first), vi = item(run);
    bulk->set_key(bulk, &ki);
    bulk->set_value(bulk, &vi);
    const int ret = bulk->insert(bulk);
    load->writeback.wrote(run.size());
    if (base_bytes) *base_bytes += first.size() + run.size();
    run.clear();
    return ret;
  };
  std::string_view family;
  const int ret = cells([&](std::string_view key, std::int64_t expires_at, std::string_view value) -> int {
    const std::string_view f = key.substr(0, 4);
    if (!run.empty() && (run.size() >= run_target_bytes || f != family))
      if (int r = flush(); r != 0) return r;
    if (run.empty()) {
      first = key;
      family = std::string_view(first).substr(0, 4);
    }
    append_run_cell(run, key, expires_at, value);
    // Bytes of the cells written, as the cell format counts them (key, expiry, value).
    if (bytes) *bytes += key.size() + 8 + value.size();
    background_yield(8);
    return 0;
  });
  if (ret != 0) return wt_error(ret, "bulk load " + uri);
  if (int r = flush(); r != 0) return wt_error(r, "bulk load " + uri);
  *written = true;
  if (pending) {
    *pending = std::move(load);
    return status::ok();
  }
  return finish(*load);
}

status wt_home::write_cells(std::uint64_t uid, std::uint32_t partition, const cell_source& cells, std::uint64_t* bytes,
                            std::uint64_t* base_bytes, pending_load_ptr* pending, bool* written) {
  std::shared_lock guard(conn_mu_);
  return bulk_if_empty(uid, partition, cells, bytes, base_bytes, pending, written);
}

status wt_home::write_delta(std::uint64_t uid, std::uint32_t partition, const delta_map& delta, std::uint64_t* bytes,
                            std::uint64_t* base_bytes, pending_load_ptr* pending) {
  if (delta.empty()) return status::ok();
  std::shared_lock guard(conn_mu_);
  // An empty table (the partition's first snapshot) takes a bulk load: sorted appends
  // straight into new pages, several times faster than inserts. The delta is sorted.
  bool loaded = false;
  auto each = [&delta](const cell_visitor& visit) -> int {
    for (const auto& [key, val] : delta)
      if (val.present)
        if (int r = visit(key, val.expires_at, val.value()); r != 0) return r;
    return 0;
  };
  if (auto st = bulk_if_empty(uid, partition, each, bytes, base_bytes, pending, &loaded); !st || loaded) return st;
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  const auto uri = partition_uri(uid, partition);
  // Bytes of the cells written, as the cell format counts them (key, expiry, value).
  auto count = [bytes](std::string_view key, const delta_map::change& v) {
    if (bytes) *bytes += key.size() + 8 + v.size;
  };
  // The base's records: those replaced go, those written come.
  auto base_gone = [base_bytes](std::size_t n) {
    if (base_bytes) *base_bytes -= std::min<std::uint64_t>(*base_bytes, n);
  };
  auto base_came = [base_bytes](std::size_t n) {
    if (base_bytes) *base_bytes += n;
  };

  // Merge the delta into the runs it falls in. Each round takes the run holding the
  // first pending change (or, before a family's first run, none), applies every change
  // up to the next run, takes in following runs while the result is small, and writes
  // the result back as runs of about run_target_bytes.
  cursor c(s.get(), uri, "overwrite=true");
  if (c.error()) return wt_error(c.error(), "open " + uri);
  auto fail = [&](int ret, const std::string& what) {
    s->rollback_transaction(s.get(), nullptr);
    return wt_error(ret, what + " " + uri);
  };
  auto damaged = [&] {
    s->rollback_transaction(s.get(), nullptr);
    return status{code::corruption, uri + " holds a malformed run"};
  };
  // Many small transactions: the snapshot becomes durable only at the checkpoint that
  // ends it, so the split is invisible after a crash.
  constexpr std::size_t bytes_per_txn = 1 << 20;
  std::size_t in_txn = 0;
  s->begin_transaction(s.get(), nullptr);
  std::vector<stored_cell> old_cells, merged;
  std::vector<std::string> old_keys;
  auto it = delta.begin();
  while (it != delta.end()) {
    background_yield();
    const std::string_view fam = std::string_view(it->first).substr(0, 4);
    old_cells.clear();
    merged.clear();
    old_keys.clear();
    auto of_family = [&](std::string_view k) { return k.substr(0, 4) == fam; };
    // `bound`: the key of the run after the ones taken (exclusive), or none (the family's end).
    std::optional<std::string> bound;
    // The cursor has just moved (`ret`): the run it is on, if of this family, is the bound.
    auto bound_at = [&](int ret) {
      bound.reset();
      if (ret == WT_NOTFOUND) return 0;
      if (ret == 0)
        if (auto k = current_key(c.get()); of_family(k)) bound = std::move(k);
      return ret;
    };
    // Takes the run under the cursor: its cells are merged, its key replaced.
    auto take_run = [&](std::string key) {
      std::size_t size = key.size();
      const bool ok = read_run(c.get(), old_cells, &size);
      base_gone(size);
      old_keys.push_back(std::move(key));
      return ok;
    };
    int ret = seek_at_or_before(c.get(), it->first);
    if (ret == 0) {
      if (auto k = current_key(c.get()); of_family(k) && !take_run(std::move(k))) return damaged();
      // Past the run taken, or past the last run of an earlier family.
      ret = c->next(c.get());
    } else if (ret == WT_NOTFOUND) {
      WT_ITEM ki = item(it->first);
      c->set_key(c.get(), &ki);
      int exact = 0;
      ret = c->search_near(c.get(), &exact);  // nothing at or before: this lands after
    }
    if (bound_at(ret) != 0) return fail(ret, "read");
    // Apply the changes below `bound` to old_cells, appending to `merged`.
    std::size_t merged_bytes = 0;
    auto apply = [&] {
      std::size_t i = 0;
      auto below = [&](std::string_view k) { return k.substr(0, 4) == fam && (!bound || k < *bound); };
      while (i < old_cells.size() || (it != delta.end() && below(it->first))) {
        const bool take_delta =
            it != delta.end() && below(it->first) && (i == old_cells.size() || it->first.bytes <= old_cells[i].key);
        if (!take_delta) {
          merged_bytes += cell_bytes(old_cells[i]);
          merged.push_back(std::move(old_cells[i++]));
          continue;
        }
        if (i < old_cells.size() && it->first == old_cells[i].key) ++i;  // replaced or erased
        if (it->second.present) {
          count(it->first, it->second);
          merged.push_back({std::string(it->first), stored_value(it->second)});
          merged_bytes += cell_bytes(merged.back());
        }
        ++it;
      }
      old_cells.clear();
    };
    apply();
    while (merged_bytes < run_target_bytes / 4 && bound) {
      if (!take_run(*bound)) return damaged();
      ret = c->next(c.get());
      if (bound_at(ret) != 0) return fail(ret, "read");
      apply();
    }
    // Cut `merged` into runs; a short tail joins the run before it.
    std::vector<std::pair<std::size_t, std::size_t>> cuts;  // [begin, end) of each run
    std::size_t begin = 0, run_bytes = 0;
    for (std::size_t i = 0; i < merged.size(); ++i) {
      run_bytes += cell_bytes(merged[i]);
      if (run_bytes >= run_target_bytes) {
        cuts.emplace_back(begin, i + 1);
        begin = i + 1;
        run_bytes = 0;
      }
    }
    if (begin < merged.size()) {
      if (!cuts.empty() && run_bytes < run_target_bytes / 4)
        cuts.back().second = merged.size();
      else
        cuts.emplace_back(begin, merged.size());
    }
    for (const auto& k : old_keys) {
      bool reused = false;
      for (const auto& [b, e] : cuts) reused = reused || merged[b].key == k;
      if (reused) continue;
      WT_ITEM ki = item(k);
      c->set_key(c.get(), &ki);
      if (int r = c->remove(c.get()); r != 0) return fail(r, "write");
    }
    std::string run;
    for (const auto& [b, e] : cuts) {
      run.clear();
      for (std::size_t i = b; i < e; ++i) append_run_cell(run, merged[i].key, merged[i].stored);
      WT_ITEM ki = item(merged[b].key), vi = item(run);
      c->set_key(c.get(), &ki);
      c->set_value(c.get(), &vi);
      if (int r = c->insert(c.get()); r != 0) return fail(r, "write");
      base_came(merged[b].key.size() + run.size());
      in_txn += run.size();
    }
    if (in_txn >= bytes_per_txn) {
      if (int r = s->commit_transaction(s.get(), nullptr); r != 0) return wt_error(r, "commit snapshot part");
      s->begin_transaction(s.get(), nullptr);
      in_txn = 0;
    }
  }
  if (int r = s->commit_transaction(s.get(), nullptr); r != 0) return wt_error(r, "commit snapshot part");
  return status::ok();
}

status wt_home::write_changes(std::uint64_t uid, std::uint32_t partition, std::uint64_t generation,
                              const delta_map& delta, std::uint64_t* bytes, std::uint64_t* run_bytes) {
  if (delta.empty()) return status::ok();
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  const auto uri = changes_uri(uid, partition);
  // The partition's first change runs (or those of a partition of data format 2) make its
  // change table.
  if (int ret = create_cell_table(s.get(), uri); ret != 0) return wt_error(ret, "create " + uri);
  cursor c(s.get(), uri, "overwrite=true");
  if (c.error()) return wt_error(c.error(), "open " + uri);
  std::string from;
  put_u64(from, generation);
  // Runs of this generation or later were left by a snapshot that failed (WiredTiger kept
  // what it had written): recovery must not read them after this snapshot's runs.
  {
    std::vector<std::string> stale;
    WT_ITEM ki = item(from);
    c->set_key(c.get(), &ki);
    int exact = 0;
    int ret = c->search_near(c.get(), &exact);
    if (ret == 0 && exact < 0) ret = c->next(c.get());
    for (; ret == 0; ret = c->next(c.get())) stale.push_back(current_key(c.get()));
    if (ret != WT_NOTFOUND) return wt_error(ret, "read " + uri);
    for (const auto& k : stale) {
      WT_ITEM si = item(k);
      c->set_key(c.get(), &si);
      if (int r = c->remove(c.get()); r != 0 && r != WT_NOTFOUND) return wt_error(r, "write " + uri);
    }
  }
  // Many small transactions, as write_delta: only the checkpoint makes them durable.
  constexpr std::size_t bytes_per_txn = 1 << 20;
  std::size_t in_txn = 0;
  s->begin_transaction(s.get(), nullptr);
  std::string run, run_key;
  auto flush = [&]() -> int {
    if (run.empty()) return 0;
    WT_ITEM ki = item(run_key), vi = item(run);
    c->set_key(c.get(), &ki);
    c->set_value(c.get(), &vi);
    if (int ret = c->insert(c.get()); ret != 0) return ret;
    if (run_bytes) *run_bytes += run_key.size() + run.size();
    in_txn += run.size();
    run.clear();
    if (in_txn >= bytes_per_txn) {
      if (int ret = s->commit_transaction(s.get(), nullptr); ret != 0) return ret;
      s->begin_transaction(s.get(), nullptr);
      in_txn = 0;
    }
    return 0;
  };
  for (const auto& [key, val] : delta) {
    const std::string_view k = key;
    // A run holds cells of one family (for_each_change_cell checks it).
    if (!run.empty() && (run.size() >= run_target_bytes || k.substr(0, 4) != std::string_view(run_key).substr(8, 4)))
      if (int ret = flush(); ret != 0) {
        s->rollback_transaction(s.get(), nullptr);
        return wt_error(ret, "write " + uri);
      }
    if (run.empty()) {
      run_key = from;
      run_key += k;
    }
    if (val.present) {
      append_run_cell(run, k, val.expires_at, val.value());
      if (bytes) *bytes += k.size() + 8 + val.size;
    } else {
      append_run_cell(run, k, std::string_view{});
      if (bytes) *bytes += k.size();
    }
    background_yield(8);
  }
  if (int ret = flush(); ret != 0) {
    s->rollback_transaction(s.get(), nullptr);
    return wt_error(ret, "write " + uri);
  }
  if (int r = s->commit_transaction(s.get(), nullptr); r != 0) return wt_error(r, "commit snapshot part");
  return status::ok();
}

namespace {

// Every record of the WiredTiger table `uri` (none if it does not exist), in key order,
// through `decode`; a CORRUPTION it answers names the table. With a `checkpoint` name, the
// records of that named checkpoint of the table, which must exist (CORRUPTION otherwise).
template <class Decode>
status walk_records(WT_CONNECTION* conn, const std::string& uri, const std::string& name, const std::string& checkpoint,
                    Decode&& decode) {
  session s(conn);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  const std::string cfg = checkpoint.empty() ? std::string() : "checkpoint=" + checkpoint;
  cursor c(s.get(), uri, cfg.empty() ? nullptr : cfg.c_str());
  if (!checkpoint.empty() && c.error() == ENOENT)
    return {code::corruption, name + " has no checkpoint '" + checkpoint + "'"};
  if (no_table(s.get(), uri, c.error())) return status::ok();
  if (c.error()) return wt_error(c.error(), "open " + name);
  int ret;
  while ((ret = c->next(c.get())) == 0) {
    // Another thread's read of a damaged block panics the connection, and then these fail
    // too, leaving the items as they were: the walk ends with that error.
    WT_ITEM k{}, v{};
    if ((ret = c->get_key(c.get(), &k)) != 0 || (ret = c->get_value(c.get(), &v)) != 0) break;
    auto st = decode(k, v);
    if (st.code() == code::corruption) return status{code::corruption, name + ": " + st.message()};
    if (!st) return st;
  }
  if (ret != WT_NOTFOUND) return wt_error(ret, "read " + name);
  return status::ok();
}

}  // namespace

status wt_home::scan_changes(std::uint64_t uid, std::uint32_t partition,
                             const std::function<status(std::string_view, std::string_view)>& fn,
                             std::uint64_t* run_bytes, const std::string& checkpoint) {
  std::shared_lock guard(conn_mu_);
  const auto uri = changes_uri(uid, partition);
  return walk_records(conn_, uri, describe(uri), checkpoint, [&](const WT_ITEM& k, const WT_ITEM& v) {
    if (run_bytes) *run_bytes += k.size + v.size;
    return for_each_change_cell(view(k), view(v), nullptr, fn);
  });
}

status wt_home::clear_changes(std::uint64_t uid, std::uint32_t partition) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  const auto uri = changes_uri(uid, partition);
  cursor lo(s.get(), uri), hi(s.get(), uri);
  if (no_table(s.get(), uri, lo.error())) return status::ok();
  if (lo.error() || hi.error()) return wt_error(lo.error() ? lo.error() : hi.error(), "open " + uri);
  int ret = lo->next(lo.get());
  if (ret == WT_NOTFOUND) return status::ok();
  if (ret == 0) ret = hi->prev(hi.get());
  if (ret != 0) return wt_error(ret, "read " + uri);
  // A range truncate: transactional, so the checkpoint that ends the snapshot takes it
  // with the merge it follows (a truncate of the whole file would not be).
  if ((ret = s->truncate(s.get(), nullptr, lo.get(), hi.get(), nullptr)) != 0) return wt_error(ret, "truncate " + uri);
  return status::ok();
}

status wt_home::purge_family(std::uint64_t uid, std::uint32_t partition, std::uint32_t family) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  const auto uri = partition_uri(uid, partition);
  cursor lo(s.get(), uri), hi(s.get(), uri);
  if (no_table(s.get(), uri, lo.error())) return status::ok();  // no base: no cells of any family
  if (lo.error() || hi.error()) return wt_error(lo.error() ? lo.error() : hi.error(), "open " + uri);
  const std::string a = family_prefix(family), b = family_prefix(family + 1);
  WT_ITEM ai = item(a), bi = item(b);
  // Position on the first key >= a and the last key < b; nothing to do if none.
  int exact = 0;
  lo->set_key(lo.get(), &ai);
  int ret = lo->search_near(lo.get(), &exact);
  if (ret == WT_NOTFOUND) return status::ok();
  if (ret != 0) return wt_error(ret, "purge " + uri);
  if (exact < 0 && (ret = lo->next(lo.get())) != 0) return ret == WT_NOTFOUND ? status::ok() : wt_error(ret, "purge");
  WT_ITEM k{};
  if ((ret = lo->get_key(lo.get(), &k)) != 0) return wt_error(ret, "purge " + uri);
  if (view(k) >= b) return status::ok();
  hi->set_key(hi.get(), &bi);
  ret = hi->search_near(hi.get(), &exact);
  if (ret != 0) return wt_error(ret, "purge " + uri);
  if (exact >= 0 && (ret = hi->prev(hi.get())) != 0) return wt_error(ret, "purge " + uri);
  if ((ret = s->truncate(s.get(), nullptr, lo.get(), hi.get(), nullptr)) != 0) return wt_error(ret, "truncate " + uri);
  return status::ok();
}

status wt_home::set_meta(std::string_view key, std::uint64_t value) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  cursor c(s.get(), "table:meta", "overwrite=true");
  if (c.error()) return wt_error(c.error(), "open table:meta");
  std::string v;
  put_u64(v, value);
  WT_ITEM ki = item(key), vi = item(v);
  c->set_key(c.get(), &ki);
  c->set_value(c.get(), &vi);
  if (int ret = c->insert(c.get()); ret != 0) return wt_error(ret, "write table:meta");
  return status::ok();
}

result<std::uint64_t> wt_home::get_meta(std::string_view key) {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  cursor c(s.get(), "table:meta");
  if (c.error()) return wt_error(c.error(), "open table:meta");
  WT_ITEM ki = item(key);
  c->set_key(c.get(), &ki);
  int ret = c->search(c.get());
  if (ret == WT_NOTFOUND) return std::uint64_t{0};
  if (ret != 0) return wt_error(ret, "read table:meta");
  WT_ITEM v{};
  if ((ret = c->get_value(c.get(), &v)) != 0) return wt_error(ret, "read table:meta");
  reader r(view(v));
  std::uint64_t out = 0;
  if (!r.u64(out)) return status{code::corruption, "table:meta holds a malformed value"};
  return out;
}

status wt_home::checkpoint() {
  std::shared_lock guard(conn_mu_);
  session s(conn_);
  if (s.error()) return wt_error(s.error(), "open a WiredTiger session");
  if (int ret = s->checkpoint(s.get(), nullptr); ret != 0) return wt_error(ret, "checkpoint");
  return status::ok();
}

status wt_home::scan_partition(std::uint64_t uid, std::uint32_t partition,
                               const std::function<status(std::string_view, std::string_view)>& fn,
                               std::uint64_t* record_bytes, const std::string& checkpoint) {
  std::shared_lock guard(conn_mu_);
  const auto uri = partition_uri(uid, partition);
  return walk_records(conn_, uri, describe(uri), checkpoint, [&](const WT_ITEM& k, const WT_ITEM& v) {
    if (record_bytes) *record_bytes += k.size + v.size;
    return for_each_run_cell(view(k), view(v), fn);
  });
}

}  // namespace cellar::detail
