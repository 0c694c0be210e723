#include "cluster/zk_client.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>

namespace cellar::cluster {

namespace {

// One asynchronous call's result, handed from the ZooKeeper client's completion thread to
// the caller waiting for it. A mutex and a condition variable rather than std::promise:
// libstdc++'s future waits inside libstdc++.so, where ThreadSanitizer cannot see the
// hand-over (every result read after it looked like a race).
template <class T>
class completion {
 public:
  // Notifies under the lock: the waiter may destroy this object as soon as get() returns.
  void set_value(T v) {
    std::lock_guard lock(mu_);
    value_ = std::move(v);
    cv_.notify_one();
  }
  T get() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return value_.has_value(); });
    return std::move(*value_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<T> value_;
};

// The C client's own log lines (connection attempts, errors) go to spdlog's debug level:
// cellar logs the session's state changes itself.
void zk_log(const char* message) { spdlog::debug("zookeeper: {}", message); }

void quiet_c_client() {
  static std::once_flag once;
  std::call_once(once, [] { zoo_set_debug_level(ZOO_LOG_LEVEL_WARN); });
}

znode_stat convert(const Stat& s) {
  znode_stat z;
  z.czxid = s.czxid;
  z.mzxid = s.mzxid;
  z.pzxid = s.pzxid;
  z.ctime_ms = s.ctime;
  z.mtime_ms = s.mtime;
  z.version = s.version;
  z.cversion = s.cversion;
  z.ephemeral_owner = s.ephemeralOwner;
  z.data_length = s.dataLength;
  z.num_children = s.numChildren;
  return z;
}

int c_mode(create_mode m) {
  switch (m) {
    case create_mode::persistent: return ZOO_PERSISTENT;
    case create_mode::ephemeral: return ZOO_EPHEMERAL;
    case create_mode::persistent_sequential: return ZOO_PERSISTENT_SEQUENTIAL;
    case create_mode::ephemeral_sequential: return ZOO_EPHEMERAL_SEQUENTIAL;
  }
  return ZOO_PERSISTENT;
}

status zk_error(int rc, std::string_view op, std::string_view path) {
  std::string what = std::string(op) + " " + std::string(path) + ": ";
  switch (rc) {
    case ZNONODE:
      return {code::not_found, what + (op == "create" ? "the parent znode does not exist" : "no such znode")};
    case ZNODEEXISTS: return {code::already_exists, what + "the znode exists"};
    case ZBADVERSION: return {code::conflict, what + "version mismatch: the znode changed since it was read"};
    case ZNOTEMPTY: return {code::invalid_argument, what + "the znode has children"};
    case ZNOCHILDRENFOREPHEMERALS: return {code::invalid_argument, what + "an ephemeral znode cannot have children"};
    case ZBADARGUMENTS: return {code::invalid_argument, what + "malformed path or argument"};
    case ZCONNECTIONLOSS:
    case ZOPERATIONTIMEOUT:
    case ZSESSIONEXPIRED:
    case ZINVALIDSTATE:
    case ZCLOSING:
    case ZSESSIONMOVED: return {code::unavailable, what + "ZooKeeper unavailable (" + zerror(rc) + ")"};
    case ZNOAUTH:
    case ZAUTHFAILED: return {code::permission_denied, what + zerror(rc)};
    default: return {code::internal, what + "ZooKeeper error " + std::to_string(rc) + " (" + zerror(rc) + ")"};
  }
}

std::string_view op_name(zk_op::kind k) {
  switch (k) {
    case zk_op::kind::create: return "create";
    case zk_op::kind::set: return "set";
    case zk_op::kind::remove: return "remove";
    case zk_op::kind::check: return "check";
  }
  return "op";
}

}  // namespace

// One zhandle_t (one session; a new one after an expiry) and the watches set through it.
// Its destructor closes the handle, which joins the C client's threads: after it no
// callback of this handle runs, so the watch contexts can go with it.
struct handle;

struct watch_ctx {
  handle* owner;
  watch_fn fn;
};

struct handle {
  zk_client::impl* client = nullptr;
  std::uint64_t generation = 0;
  zhandle_t* zh = nullptr;
  std::mutex mutex;
  std::unordered_map<watch_ctx*, std::unique_ptr<watch_ctx>> watches;

  ~handle() {
    if (zh) zookeeper_close(zh);
  }
  watch_ctx* add_watch(watch_fn fn) {
    auto w = std::make_unique<watch_ctx>(watch_ctx{this, std::move(fn)});
    auto* raw = w.get();
    std::lock_guard lock(mutex);
    watches.emplace(raw, std::move(w));
    return raw;
  }
  // The watch is not registered with ZooKeeper (the call failed): forget it.
  void drop_watch(watch_ctx* w) {
    if (!w) return;
    std::lock_guard lock(mutex);
    watches.erase(w);
  }
  std::unique_ptr<watch_ctx> take_watch(watch_ctx* w) {
    std::lock_guard lock(mutex);
    auto it = watches.find(w);
    if (it == watches.end()) return nullptr;
    auto owned = std::move(it->second);
    watches.erase(it);
    return owned;
  }
};

struct zk_client::impl {
  zk_options options;
  std::string hosts;   // the connect string without the chroot
  std::string target;  // hosts + chroot, handed to the C client

  // Event thread: a queue of tasks and a heap of timed ones.
  struct timed {
    std::chrono::steady_clock::time_point due;
    std::uint64_t seq;
    std::function<void()> fn;
    bool operator>(const timed& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::deque<std::function<void()>> queue;
  std::priority_queue<timed, std::vector<timed>, std::greater<>> timers;
  std::uint64_t timer_seq = 0;
  bool stopping = false;
  std::thread thread;
  std::atomic<std::thread::id> thread_id{};

  // The current handle; replaced after an expiry.
  mutable std::mutex handle_mutex;
  std::shared_ptr<handle> current;
  std::uint64_t generation = 0;

  std::atomic<bool> is_connected{false};
  std::atomic<std::int64_t> session{0};
  std::atomic<int> timeout_ms{0};
  std::int64_t last_session = 0;  // event thread only
  std::mutex connect_mutex;
  std::condition_variable connect_cv;

  std::mutex listener_mutex;
  std::map<std::uint64_t, std::shared_ptr<session_fn>> listeners;
  std::uint64_t next_listener = 1;

  void start_thread() {
    thread = std::thread([this] { run(); });
    thread_id = thread.get_id();
  }

  void run() {
    thread_id = std::this_thread::get_id();
    std::unique_lock lock(queue_mutex);
    while (!stopping) {
      const auto now = std::chrono::steady_clock::now();
      std::function<void()> task;
      if (!timers.empty() && timers.top().due <= now) {
        task = std::move(const_cast<timed&>(timers.top()).fn);
        timers.pop();
      } else if (!queue.empty()) {
        task = std::move(queue.front());
        queue.pop_front();
      } else if (!timers.empty()) {
        queue_cv.wait_until(lock, timers.top().due);
        continue;
      } else {
        queue_cv.wait(lock);
        continue;
      }
      lock.unlock();
      try {
        task();
      } catch (const std::exception& e) {
        spdlog::error("cellar: a ZooKeeper callback threw: {}", e.what());
      } catch (...) {
        spdlog::error("cellar: a ZooKeeper callback threw");
      }
      task = nullptr;  // captured state dies outside the lock too
      lock.lock();
    }
  }

  void post(std::function<void()> fn) {
    {
      std::lock_guard lock(queue_mutex);
      if (stopping) return;
      queue.push_back(std::move(fn));
    }
    queue_cv.notify_one();
  }

  void post_after(std::chrono::milliseconds delay, std::function<void()> fn) {
    {
      std::lock_guard lock(queue_mutex);
      if (stopping) return;
      timers.push({std::chrono::steady_clock::now() + delay, timer_seq++, std::move(fn)});
    }
    queue_cv.notify_one();
  }

  std::shared_ptr<handle> handle_now() const {
    std::lock_guard lock(handle_mutex);
    return current;
  }

  static void session_watcher(zhandle_t*, int type, int state, const char*, void* ctx) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* h = static_cast<handle*>(ctx);
    impl* self = h->client;
    const std::uint64_t gen = h->generation;
    self->post([self, gen, state] { self->on_session_state(gen, state); });
  }

  static void node_watcher(zhandle_t*, int type, int, const char* path, void* ctx) {
    // Session events reach every watcher; the client's session listeners handle them, and
    // the watch stays set.
    if (type == ZOO_SESSION_EVENT) return;
    auto* w = static_cast<watch_ctx*>(ctx);
    auto owned = w->owner->take_watch(w);
    if (!owned) return;
    watch_event ev{watch_kind::changed, path ? path : ""};
    if (type == ZOO_CREATED_EVENT)
      ev.kind = watch_kind::created;
    else if (type == ZOO_DELETED_EVENT)
      ev.kind = watch_kind::deleted;
    else if (type == ZOO_CHILD_EVENT)
      ev.kind = watch_kind::children;
    w->owner->client->post([fn = std::move(owned->fn), ev = std::move(ev)] { fn(ev); });
  }

  // Starts a new handle (a new session). Returns false when the C client refuses the
  // connect string.
  bool new_handle() {
    auto h = std::make_shared<handle>();
    h->client = this;
    std::shared_ptr<handle> old;
    {
      // Held across zookeeper_init2: the handle's first event must find it current.
      std::lock_guard lock(handle_mutex);
      h->generation = ++generation;
      h->zh = zookeeper_init2(target.c_str(), session_watcher, static_cast<int>(options.session_timeout.count()),
                              nullptr, h.get(), 0, zk_log);
      if (!h->zh) return false;
      old = std::move(current);
      current = std::move(h);
    }
    return true;  // `old` closes here, outside the lock
  }

  using listener_list = std::vector<std::shared_ptr<session_fn>>;
  listener_list snapshot_listeners() {
    listener_list fns;
    std::lock_guard lock(listener_mutex);
    for (auto& [id, fn] : listeners) fns.push_back(fn);
    return fns;
  }

  // Calls the listeners of `fns` that are still registered.
  void emit(const session_event& ev, const listener_list& fns) {
    for (auto& fn : fns) {
      bool still;
      {
        std::lock_guard lock(listener_mutex);
        still = std::any_of(listeners.begin(), listeners.end(), [&](auto& kv) { return kv.second == fn; });
      }
      if (still) (*fn)(ev);
    }
  }

  void on_session_state(std::uint64_t gen, int state) {
    std::shared_ptr<handle> h;
    {
      std::lock_guard lock(handle_mutex);
      if (gen != generation) return;  // an old handle's late event
      h = current;
    }
    if (!h) return;
    // The listeners registered before the state changes hear of it (one registered after
    // open() returned does not hear of the connection open() waited for).
    const auto fns = snapshot_listeners();
    if (state == ZOO_CONNECTED_STATE) {
      const std::int64_t id = zoo_client_id(h->zh)->client_id;
      const bool fresh = id != last_session;
      last_session = id;
      timeout_ms = zoo_recv_timeout(h->zh);
      session = id;
      {
        std::lock_guard lock(connect_mutex);
        is_connected = true;
      }
      connect_cv.notify_all();
      if (fresh)
        spdlog::info("cellar: ZooKeeper session 0x{:x} established ({} ms timeout)", id, timeout_ms.load());
      else
        spdlog::info("cellar: ZooKeeper session 0x{:x} reconnected", id);
      emit({session_state::connected, id, fresh}, fns);
    } else if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
      is_connected = false;
      spdlog::warn("cellar: ZooKeeper session 0x{:x} {}; starting a new one", last_session,
                   state == ZOO_EXPIRED_SESSION_STATE ? "expired" : "failed authentication");
      emit({session_state::expired, last_session, false}, fns);
      if (!new_handle()) retry_new_handle();
    } else if (is_connected.exchange(false)) {
      spdlog::warn("cellar: ZooKeeper session 0x{:x} disconnected", last_session);
      emit({session_state::disconnected, last_session, false}, fns);
    }
  }

  void retry_new_handle() {
    spdlog::warn("cellar: cannot start a ZooKeeper session for '{}' ({}); retrying", target, std::strerror(errno));
    post_after(std::chrono::milliseconds(500), [this] {
      if (!new_handle()) retry_new_handle();
    });
  }

  bool wait_connected(std::chrono::milliseconds timeout) {
    std::unique_lock lock(connect_mutex);
    return connect_cv.wait_for(lock, timeout, [&] { return is_connected.load(); });
  }

  void shutdown() {
    std::shared_ptr<handle> h;
    {
      std::lock_guard lock(handle_mutex);
      h = std::move(current);
      ++generation;
    }
    h.reset();  // closes the session
    {
      std::lock_guard lock(queue_mutex);
      stopping = true;
    }
    queue_cv.notify_all();
    if (thread.joinable()) thread.join();
  }
};

// ---------------------------------------------------------------------------------------

result<std::unique_ptr<zk_client>> zk_client::open(zk_options options) {
  quiet_c_client();
  const auto slash = options.connect.find('/');
  std::string hosts = options.connect.substr(0, slash);
  std::string chroot = slash == std::string::npos ? "" : options.connect.substr(slash);
  if (chroot == "/") chroot.clear();
  if (hosts.empty())
    return status{code::invalid_argument, "ZooKeeper address '" + options.connect + "' names no host:port"};
  if (!chroot.empty() && chroot.back() == '/')
    return status{code::invalid_argument, "ZooKeeper chroot '" + chroot + "' must not end with '/'"};
  if (options.session_timeout.count() <= 0 || options.connect_timeout.count() <= 0)
    return status{code::invalid_argument, "ZooKeeper timeouts must be positive"};

  if (!chroot.empty()) {
    // The C client needs the chroot to exist; make it through a session without one.
    zk_options root = options;
    root.connect = hosts;
    auto boot = open(root);
    if (!boot) return boot.error();
    if (auto st = (*boot)->ensure_path(chroot); !st) return st;
  }

  auto im = std::make_unique<impl>();
  im->options = std::move(options);
  im->hosts = std::move(hosts);
  im->target = im->hosts + chroot;
  im->start_thread();
  if (!im->new_handle()) {
    const std::string why = std::strerror(errno);
    im->shutdown();
    return status{code::invalid_argument, "cannot use ZooKeeper address '" + im->options.connect + "': " + why};
  }
  if (!im->wait_connected(im->options.connect_timeout)) {
    const auto ms = im->options.connect_timeout.count();
    const std::string where = im->options.connect;
    im->shutdown();
    return status{code::unavailable,
                  "no ZooKeeper server at '" + where + "' answered within " + std::to_string(ms) + " ms"};
  }
  return std::unique_ptr<zk_client>(new zk_client(std::move(im)));
}

zk_client::zk_client(std::unique_ptr<impl> im) : impl_(std::move(im)) {}

zk_client::~zk_client() { impl_->shutdown(); }

std::uint64_t zk_client::add_session_listener(session_fn fn) {
  std::lock_guard lock(impl_->listener_mutex);
  const auto id = impl_->next_listener++;
  impl_->listeners.emplace(id, std::make_shared<session_fn>(std::move(fn)));
  return id;
}

void zk_client::remove_session_listener(std::uint64_t id) {
  std::lock_guard lock(impl_->listener_mutex);
  impl_->listeners.erase(id);
}

bool zk_client::connected() const { return impl_->is_connected; }
std::int64_t zk_client::session_id() const { return impl_->session; }
std::chrono::milliseconds zk_client::session_timeout() const {
  return std::chrono::milliseconds(impl_->timeout_ms.load());
}
const zk_options& zk_client::options() const { return impl_->options; }

namespace {

// ZooKeeper's own check would pass a relative path under a chroot ("/root" + "x").
bool bad_path(const std::string& path) { return path.empty() || path[0] != '/'; }

status path_error(std::string_view op, const std::string& path) {
  return {code::invalid_argument, std::string(op) + " '" + path + "': a znode path must start with '/'"};
}

status no_session(std::string_view op, std::string_view path) {
  return {code::unavailable, std::string(op) + " " + std::string(path) + ": the ZooKeeper client is closed"};
}

}  // namespace

result<std::string> zk_client::create(const std::string& path, std::string_view data, create_mode mode) {
  if (bad_path(path)) return path_error("create", path);
  auto h = impl_->handle_now();
  if (!h) return no_session("create", path);
  struct ctx {
    completion<std::pair<int, std::string>> done;
  } c;
  int rc = zoo_acreate(
      h->zh, path.c_str(), data.data(), static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE, c_mode(mode),
      [](int rc, const char* value, const void* d) {
        auto* c = static_cast<ctx*>(const_cast<void*>(d));
        c->done.set_value({rc, rc == ZOK && value ? std::string(value) : std::string()});
      },
      &c);
  if (rc != ZOK) return zk_error(rc, "create", path);
  auto [rc2, made] = c.done.get();
  if (rc2 != ZOK) return zk_error(rc2, "create", path);
  return made;
}

status zk_client::ensure_path(const std::string& path) {
  if (path.empty() || path[0] != '/') return {code::invalid_argument, "path '" + path + "' must start with '/'"};
  for (std::size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string prefix = path.substr(0, pos);
    auto r = create(prefix, {}, create_mode::persistent);
    if (!r && r.code() != code::already_exists) return r.error();
  }
  return status::ok();
}

result<znode> zk_client::get(const std::string& path, watch_fn watch) {
  if (bad_path(path)) return path_error("get", path);
  auto h = impl_->handle_now();
  if (!h) return no_session("get", path);
  struct ctx {
    completion<std::pair<int, znode>> done;
  } c;
  watch_ctx* w = watch ? h->add_watch(std::move(watch)) : nullptr;
  int rc = zoo_awget(
      h->zh, path.c_str(), w ? impl::node_watcher : nullptr, w,
      [](int rc, const char* value, int len, const Stat* st, const void* d) {
        auto* c = static_cast<ctx*>(const_cast<void*>(d));
        znode n;
        if (rc == ZOK) {
          if (value && len > 0) n.data.assign(value, static_cast<std::size_t>(len));
          if (st) n.stat = convert(*st);
        }
        c->done.set_value({rc, std::move(n)});
      },
      &c);
  if (rc != ZOK) {
    h->drop_watch(w);
    return zk_error(rc, "get", path);
  }
  auto [rc2, node] = c.done.get();
  if (rc2 != ZOK) {
    h->drop_watch(w);  // ZooKeeper sets a data watch only on success
    return zk_error(rc2, "get", path);
  }
  return std::move(node);
}

result<znode_stat> zk_client::set(const std::string& path, std::string_view data, std::int32_t version) {
  if (bad_path(path)) return path_error("set", path);
  auto h = impl_->handle_now();
  if (!h) return no_session("set", path);
  struct ctx {
    completion<std::pair<int, znode_stat>> done;
  } c;
  int rc = zoo_aset(
      h->zh, path.c_str(), data.data(), static_cast<int>(data.size()), version,
      [](int rc, const Stat* st, const void* d) {
        auto* c = static_cast<ctx*>(const_cast<void*>(d));
        c->done.set_value({rc, rc == ZOK && st ? convert(*st) : znode_stat{}});
      },
      &c);
  if (rc != ZOK) return zk_error(rc, "set", path);
  auto [rc2, st] = c.done.get();
  if (rc2 != ZOK) return zk_error(rc2, "set", path);
  return st;
}

status zk_client::remove(const std::string& path, std::int32_t version) {
  if (bad_path(path)) return path_error("remove", path);
  auto h = impl_->handle_now();
  if (!h) return no_session("remove", path);
  completion<int> done;
  int rc = zoo_adelete(
      h->zh, path.c_str(), version,
      [](int rc, const void* d) { static_cast<completion<int>*>(const_cast<void*>(d))->set_value(rc); }, &done);
  if (rc != ZOK) return zk_error(rc, "remove", path);
  if (int rc2 = done.get(); rc2 != ZOK) return zk_error(rc2, "remove", path);
  return status::ok();
}

status zk_client::sync(const std::string& path) {
  if (bad_path(path)) return path_error("sync", path);
  auto h = impl_->handle_now();
  if (!h) return no_session("sync", path);
  completion<int> done;
  int rc = zoo_async(
      h->zh, path.c_str(),
      [](int rc, const char*, const void* d) { static_cast<completion<int>*>(const_cast<void*>(d))->set_value(rc); },
      &done);
  if (rc != ZOK) return zk_error(rc, "sync", path);
  if (int rc2 = done.get(); rc2 != ZOK) return zk_error(rc2, "sync", path);
  return status::ok();
}

result<std::optional<znode_stat>> zk_client::exists(const std::string& path, watch_fn watch) {
  if (bad_path(path)) return path_error("exists", path);
  auto h = impl_->handle_now();
  if (!h) return no_session("exists", path);
  struct ctx {
    completion<std::pair<int, znode_stat>> done;
  } c;
  watch_ctx* w = watch ? h->add_watch(std::move(watch)) : nullptr;
  int rc = zoo_awexists(
      h->zh, path.c_str(), w ? impl::node_watcher : nullptr, w,
      [](int rc, const Stat* st, const void* d) {
        auto* c = static_cast<ctx*>(const_cast<void*>(d));
        c->done.set_value({rc, rc == ZOK && st ? convert(*st) : znode_stat{}});
      },
      &c);
  if (rc != ZOK) {
    h->drop_watch(w);
    return zk_error(rc, "exists", path);
  }
  auto [rc2, st] = c.done.get();
  if (rc2 == ZNONODE) return std::optional<znode_stat>();  // the watch waits for a create
  if (rc2 != ZOK) {
    h->drop_watch(w);
    return zk_error(rc2, "exists", path);
  }
  return std::optional<znode_stat>(st);
}

result<std::vector<std::string>> zk_client::children(const std::string& path, watch_fn watch) {
  if (bad_path(path)) return path_error("children", path);
  auto h = impl_->handle_now();
  if (!h) return no_session("children", path);
  struct ctx {
    completion<std::pair<int, std::vector<std::string>>> done;
  } c;
  watch_ctx* w = watch ? h->add_watch(std::move(watch)) : nullptr;
  int rc = zoo_awget_children2(
      h->zh, path.c_str(), w ? impl::node_watcher : nullptr, w,
      [](int rc, const String_vector* strings, const Stat*, const void* d) {
        auto* c = static_cast<ctx*>(const_cast<void*>(d));
        std::vector<std::string> names;
        if (rc == ZOK && strings)
          for (int i = 0; i < strings->count; ++i) names.emplace_back(strings->data[i]);
        c->done.set_value({rc, std::move(names)});
      },
      &c);
  if (rc != ZOK) {
    h->drop_watch(w);
    return zk_error(rc, "children", path);
  }
  auto [rc2, names] = c.done.get();
  if (rc2 != ZOK) {
    h->drop_watch(w);
    return zk_error(rc2, "children", path);
  }
  std::sort(names.begin(), names.end());
  return std::move(names);
}

result<std::vector<zk_op_result>> zk_client::multi(const std::vector<zk_op>& ops) {
  if (ops.empty()) return std::vector<zk_op_result>{};
  for (const auto& op : ops)
    if (bad_path(op.path)) return path_error(op_name(op.what), op.path);
  auto h = impl_->handle_now();
  if (!h) return no_session("multi", ops.front().path);
  struct ctx {
    std::vector<zoo_op_t> ops;
    std::vector<zoo_op_result_t> results;
    std::vector<std::vector<char>> paths;
    std::vector<Stat> stats;
    completion<int> done;
  } c;
  const std::size_t n = ops.size();
  c.ops.resize(n);
  c.results.resize(n);
  c.paths.resize(n);
  c.stats.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& op = ops[i];
    const char* data = op.data.data();
    const int len = static_cast<int>(op.data.size());
    switch (op.what) {
      case zk_op::kind::create:
        c.paths[i].assign(op.path.size() + 32, '\0');
        zoo_create_op_init(&c.ops[i], op.path.c_str(), data, len, &ZOO_OPEN_ACL_UNSAFE, c_mode(op.mode),
                           c.paths[i].data(), static_cast<int>(c.paths[i].size()));
        break;
      case zk_op::kind::set: zoo_set_op_init(&c.ops[i], op.path.c_str(), data, len, op.version, &c.stats[i]); break;
      case zk_op::kind::remove: zoo_delete_op_init(&c.ops[i], op.path.c_str(), op.version); break;
      case zk_op::kind::check: zoo_check_op_init(&c.ops[i], op.path.c_str(), op.version); break;
    }
  }
  int rc = zoo_amulti(
      h->zh, static_cast<int>(n), c.ops.data(), c.results.data(),
      [](int rc, const void* d) { static_cast<ctx*>(const_cast<void*>(d))->done.set_value(rc); }, &c);
  if (rc != ZOK) return zk_error(rc, "multi", ops.front().path);
  rc = c.done.get();
  if (rc != ZOK) {
    // The failing op carries its own error; the others report ZRUNTIMEINCONSISTENCY or ZOK.
    for (std::size_t i = 0; i < n; ++i) {
      const int err = c.results[i].err;
      if (err != ZOK && err != ZRUNTIMEINCONSISTENCY) {
        auto st = zk_error(err, op_name(ops[i].what), ops[i].path);
        return status{st.code(), "multi op " + std::to_string(i) + ": " + st.message()};
      }
    }
    return zk_error(rc, "multi", ops.front().path);
  }
  std::vector<zk_op_result> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (ops[i].what == zk_op::kind::create) out[i].created_path = c.paths[i].data();
    if (ops[i].what == zk_op::kind::set) out[i].stat = convert(c.stats[i]);
  }
  return out;
}

void zk_client::post(std::function<void()> fn) { impl_->post(std::move(fn)); }

void zk_client::barrier() {
  if (on_event_thread()) return;
  completion<bool> done;
  impl_->post([&done] { done.set_value(true); });
  done.get();
}

bool zk_client::on_event_thread() const { return std::this_thread::get_id() == impl_->thread_id.load(); }

status zk_client::expire_session_for_testing() {
  auto h = impl_->handle_now();
  if (!h) return no_session("expire", "/");
  const clientid_t id = *zoo_client_id(h->zh);
  // A second handle attached to the session and closed ends the session on the servers.
  // This client reconnects at once when the second handle takes the session over, and may
  // win it back before the close arrives (the close is then lost): repeat until a new
  // attach finds the session expired.
  struct ctx {
    std::mutex m;
    std::condition_variable cv;
    int state = 0;
  };
  auto watcher = [](zhandle_t*, int type, int state, const char*, void* d) {
    if (type != ZOO_SESSION_EVENT) return;
    if (state != ZOO_CONNECTED_STATE && state != ZOO_EXPIRED_SESSION_STATE) return;
    auto* c = static_cast<ctx*>(d);
    std::lock_guard lock(c->m);
    c->state = state;
    c->cv.notify_all();
  };
  for (int attempt = 0; attempt < 50; ++attempt) {
    ctx c;
    zhandle_t* other = zookeeper_init2(impl_->hosts.c_str(), watcher,
                                       static_cast<int>(impl_->options.session_timeout.count()), &id, &c, 0, zk_log);
    if (!other) return {code::internal, "cannot open a second handle on the session"};
    int state;
    {
      std::unique_lock lock(c.m);
      c.cv.wait_for(lock, impl_->options.connect_timeout, [&] { return c.state != 0; });
      state = c.state;
    }
    zookeeper_close(other);
    if (state == ZOO_EXPIRED_SESSION_STATE) return status::ok();
    if (state == 0) return {code::unavailable, "could not reach the session to expire it"};
  }
  return {code::internal, "the session outlived 50 attempts to expire it"};
}

std::string join_path(std::string_view parent, std::string_view child) {
  std::string p(parent);
  if (p.empty() || p.back() != '/') p += '/';
  p += child;
  return p;
}

std::optional<std::int64_t> sequence_of(std::string_view name) {
  if (name.size() < 10) return std::nullopt;
  std::int64_t v = 0;
  for (char c : name.substr(name.size() - 10)) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace cellar::cluster
