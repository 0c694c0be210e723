// rpc/connection_guard.h: what the server enforces about a connection besides its calls.
//
// One connection_guard per accepted connection, made and used on that connection's event
// loop only. It holds the peer's address (for the log), checks logins (the token compared
// in constant time; a connection is closed after server_options::max_failed_logins wrong
// tokens, each logged with the peer's address), carries the refusal of a connection
// accepted over server_options::max_connections (every login gets it, then the connection
// closes), and lets either session ask for the connection to be closed once its last
// reply is written (closing()).
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <atomic>
#include <functional>

#include <string>
#include <string_view>

#include "cellar/status.h"
#include "rpc/server.h"

namespace cellar::rpc {

// Whether `given` equals `expected`, in a time that depends on the length of `given` only
// (never on where the two differ, nor on `expected`'s length).
bool same_token(std::string_view expected, std::string_view given);

// "ADDRESS:PORT" (IPv6 as "[ADDRESS]:PORT") of the peer of socket `fd`; "unknown" if that
// cannot be read.
std::string peer_address(int fd);

// The connections served at once, over every event loop, against
// server_options::max_connections. Thread-safe.
class connection_slots {
 public:
  explicit connection_slots(std::size_t max) : max_(max) {}
  // Takes a slot; false (nothing taken) at the limit.
  bool take();
  void give_back();

 private:
  std::atomic<std::size_t> used_{0};
  const std::size_t max_;  // 0: no limit
};

// Resolves once `active()`, asked four times per `limit`, has said false for a whole
// `limit` (so after `limit` to 1.25 `limit` of inactivity). `limit` must be above zero.
kj::Promise<void> idle_for(kj::Timer& timer, kj::Duration limit, std::function<bool()> active);

class connection_guard {
 public:
  connection_guard(const server_options& opts, std::string peer);

  const std::string& peer() const { return peer_; }

  // Over the connection limit: every login answers `why`, then the connection closes.
  void refuse(status why);
  bool refused() const { return !refusal_.is_ok(); }

  // A login with `given` on this connection: ok, or PERMISSION_DENIED (a wrong or missing
  // token; logged with the peer address; the connection closes after the reply once
  // max_failed_logins have failed), or the refusal of refuse().
  status login(std::string_view given, const char* protocol_name);

  // Resolves when the connection should close: after a refused login. The caller writes
  // what is queued, then closes.
  kj::Promise<void> closing();

  // Asks for the connection to close (closing() resolves).
  void close_soon();

 private:
  connection_guard(const server_options& opts, std::string peer, kj::PromiseFulfillerPair<void> closing);

  const server_options& opts_;
  std::string peer_;
  status refusal_;
  std::size_t failed_logins_ = 0;
  kj::ForkedPromise<void> closing_;
  kj::Own<kj::PromiseFulfiller<void>> closer_;
};

}  // namespace cellar::rpc
