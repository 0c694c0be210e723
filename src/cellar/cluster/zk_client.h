// cluster/zk_client.h: a ZooKeeper session, over the multithreaded C client (libzookeeper_mt).
//
// A `zk_client` is one connection to a ZooKeeper ensemble and the session behind it, with the
// znode operations cellar's cluster services need: create (persistent, ephemeral, sequential),
// get/set with versions (compare-and-set), children, exists, remove, multi (atomic batches), sync
// and one-shot watches. Paths are absolute ("/nodes/n1"); with a chroot in the connect string
// ("127.0.0.1:2181/cellar") every path is below it, and the chroot itself is created at open.
//
// Sessions. ZooKeeper keeps a session (and the session's ephemeral znodes) alive while the
// client reaches a server within the session timeout; a lost connection is re-established by
// the C client on its own, with the same session, and the session's watches are kept. When
// the server has expired the session, the client starts a new one at once: listeners hear
// `expired` and then `connected` with `new_session == true`; ephemeral znodes and watches of
// the old session are gone, and it is the listener's job to create them again.
//
// Errors map to cellar's codes: no node -> NOT_FOUND, node exists -> ALREADY_EXISTS, version
// mismatch -> CONFLICT, not empty -> INVALID_ARGUMENT, connection lost, session expired,
// timeout or client closing -> UNAVAILABLE, anything else -> INTERNAL. Messages name the
// operation and path ("set /catalog: version 3 expected, ZooKeeper has another").
//
// Threads. The C client runs two threads of its own (I/O and completion). No cellar code runs
// on them: they only queue work for the client's *event thread*, one per zk_client, which
// calls every watch callback and session listener, one at a time, in the order ZooKeeper
// delivered them. A callback may call any method of the client, blocking ones included (the
// reply comes on the C client's threads, not on the event thread), but it should not block
// for long, as every other callback of the client waits meanwhile, and it must not destroy
// the client. All other methods may be called from any thread at once. A blocking call waits
// until ZooKeeper answers, at most about the session timeout when no server is reachable.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"

namespace cellar::cluster {

struct zk_options {
  // "host:port[,host:port...][/chroot]"
  std::string connect;
  // Asked of the server, which clamps it to its [minSessionTimeout, maxSessionTimeout]
  // (by default 2 and 20 ticks).
  std::chrono::milliseconds session_timeout{10000};
  // open() gives up when no session is established within this time.
  std::chrono::milliseconds connect_timeout{15000};
};

enum class create_mode : std::uint8_t {
  persistent,
  ephemeral,              // removed when the creating session ends
  persistent_sequential,  // the server appends a 10-digit counter to the name
  ephemeral_sequential,
};

// Any version: set() and remove() without a compare-and-set.
inline constexpr std::int32_t any_version = -1;

struct znode_stat {
  std::int64_t czxid = 0;  // transaction that created the node
  std::int64_t mzxid = 0;  // last transaction that changed its data
  std::int64_t pzxid = 0;  // last transaction that changed its children
  std::int64_t ctime_ms = 0;
  std::int64_t mtime_ms = 0;
  std::int32_t version = 0;          // data version: the compare-and-set token of set/remove/check
  std::int32_t cversion = 0;         // children version
  std::int64_t ephemeral_owner = 0;  // owning session id; 0 for a persistent node
  std::int32_t data_length = 0;
  std::int32_t num_children = 0;
};

struct znode {
  std::string data;
  znode_stat stat;
};

enum class watch_kind : std::uint8_t { created, deleted, changed, children };

struct watch_event {
  watch_kind kind;
  std::string path;  // relative to the chroot, as given to the call that set the watch
};

// A one-shot watch: called once on the event thread when the watched node changes (or is
// created or deleted), never again. Watches set by a session that expired never fire
// once the expiry is seen (a deletion the session's own close made may arrive just before).
using watch_fn = std::function<void(const watch_event&)>;

enum class session_state : std::uint8_t {
  connected,     // a server accepted the session (new or resumed)
  disconnected,  // no server reachable; the session may still be alive on the servers
  expired,       // the servers ended the session: its ephemeral nodes and watches are gone
};

struct session_event {
  session_state state;
  std::int64_t session_id = 0;  // the session the event is about
  bool new_session = false;     // connected: a different session than before the event
};

using session_fn = std::function<void(const session_event&)>;

// One operation of a multi(): all succeed or none is applied.
struct zk_op {
  enum class kind : std::uint8_t { create, set, remove, check };
  kind what = kind::check;
  std::string path;
  std::string data;
  create_mode mode = create_mode::persistent;
  std::int32_t version = any_version;

  static zk_op create(std::string path, std::string data, create_mode mode = create_mode::persistent) {
    return {kind::create, std::move(path), std::move(data), mode, any_version};
  }
  static zk_op set(std::string path, std::string data, std::int32_t version = any_version) {
    return {kind::set, std::move(path), std::move(data), create_mode::persistent, version};
  }
  static zk_op remove(std::string path, std::int32_t version = any_version) {
    return {kind::remove, std::move(path), {}, create_mode::persistent, version};
  }
  // Fails the whole multi unless `path` exists with data version `version`.
  static zk_op check(std::string path, std::int32_t version) {
    return {kind::check, std::move(path), {}, create_mode::persistent, version};
  }
};

struct zk_op_result {
  std::string created_path;  // create: the path made (with the sequence number)
  znode_stat stat;           // set: the node after the write
};

class zk_client {
 public:
  // Connects and waits until a session is established (UNAVAILABLE after
  // options.connect_timeout, INVALID_ARGUMENT for a malformed connect string). Creates the
  // chroot's znodes when they are missing.
  static result<std::unique_ptr<zk_client>> open(zk_options options);
  // Closes the session (its ephemeral nodes vanish at once) and stops the event thread.
  // Callbacks still queued are dropped. Must not be called from a callback of this client,
  // nor while other threads are inside its calls.
  ~zk_client();
  zk_client(const zk_client&) = delete;
  zk_client& operator=(const zk_client&) = delete;

  // Adds a listener for session events; returns its id. The listener runs on the event thread.
  std::uint64_t add_session_listener(session_fn fn);
  // After this returns the listener is not called again, unless it is running right now on
  // the event thread (call barrier() from another thread to wait for that).
  void remove_session_listener(std::uint64_t id);

  bool connected() const;
  // The current session's id (0 before the first session).
  std::int64_t session_id() const;
  // The session timeout the server granted.
  std::chrono::milliseconds session_timeout() const;
  const zk_options& options() const;

  // Creates a node; returns its path (with the sequence suffix for sequential modes).
  // Errors: ALREADY_EXISTS, NOT_FOUND (no parent), INVALID_ARGUMENT (parent is ephemeral,
  // malformed path).
  result<std::string> create(const std::string& path, std::string_view data,
                             create_mode mode = create_mode::persistent);
  // Creates `path` and its missing ancestors as empty persistent nodes; existing ones are fine.
  status ensure_path(const std::string& path);
  // Reads a node. With `watch`, it is called when the node changes or is deleted (only when
  // the read found the node).
  result<znode> get(const std::string& path, watch_fn watch = {});
  // Writes a node's data if its version is `version` (any_version: unconditionally);
  // CONFLICT on a version mismatch.
  result<znode_stat> set(const std::string& path, std::string_view data, std::int32_t version = any_version);
  // Deletes a node if its version is `version`; INVALID_ARGUMENT when it has children.
  status remove(const std::string& path, std::int32_t version = any_version);
  // The node's stat, or nullopt when it does not exist. With `watch`, it is called when the
  // node is created, changed or deleted (set in both cases).
  result<std::optional<znode_stat>> exists(const std::string& path, watch_fn watch = {});
  // The names (not paths) of a node's children, sorted. With `watch`, it is called when a
  // child is added or removed or the node is deleted (only when the node was found).
  result<std::vector<std::string>> children(const std::string& path, watch_fn watch = {});
  // Makes the server this session is connected to catch up with the ensemble's leader
  // (ZooKeeper's sync on `path`): every read after it returns sees each write the ensemble
  // had committed when the sync was asked, not just those this server has applied. Reads
  // otherwise may lag the leader (never going back in time within a session).
  // UNAVAILABLE when no server answers.
  status sync(const std::string& path);
  // Applies every op or none; one result per op. On failure the status names the first op
  // that failed and its error's code.
  result<std::vector<zk_op_result>> multi(const std::vector<zk_op>& ops);

  // Runs fn on the event thread after the callbacks queued before it.
  void post(std::function<void()> fn);
  // Waits until every callback queued before the call has run (returns at once on the event
  // thread). After it, a callback removed before the call is not running any more.
  void barrier();
  bool on_event_thread() const;

  // Tests: makes the servers end the current session, as a session timeout would (the
  // client then hears `expired` and starts a new session).
  status expire_session_for_testing();

  struct impl;

 private:
  explicit zk_client(std::unique_ptr<impl> impl);
  std::unique_ptr<impl> impl_;
};

// Joins a parent path and a child name: join_path("/", "a") == "/a", ("/a", "b") == "/a/b".
std::string join_path(std::string_view parent, std::string_view child);
// The sequence number of a sequential node's name ("n_0000000042" -> 42); nullopt if the
// name does not end in 10 digits.
std::optional<std::int64_t> sequence_of(std::string_view name);

}  // namespace cellar::cluster
