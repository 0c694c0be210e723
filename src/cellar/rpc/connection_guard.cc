#include "rpc/connection_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

namespace cellar::rpc {

bool same_token(std::string_view expected, std::string_view given) {
  // Every byte of `given` is compared, against `expected` repeated: no branch and no early
  // exit depends on the bytes, and the loop's length is the caller's own input.
  unsigned diff = expected.size() == given.size() ? 0u : 1u;
  const std::size_t n = expected.empty() ? 1 : expected.size();
  const unsigned char pad = 0;
  for (std::size_t i = 0; i < given.size(); ++i) {
    const unsigned char e = expected.empty() ? pad : static_cast<unsigned char>(expected[i % n]);
    diff |= static_cast<unsigned char>(given[i]) ^ e;
  }
  // Read `diff` through a volatile so the compiler cannot turn the loop into an early exit.
  volatile unsigned result = diff;
  return result == 0 && !expected.empty();
}

std::string peer_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "unknown";
  char host[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
  }
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
  }
  return "unknown";
}

bool connection_slots::take() {
  if (max_ == 0) return true;
  if (used_.fetch_add(1, std::memory_order_relaxed) < max_) return true;
  used_.fetch_sub(1, std::memory_order_relaxed);
  return false;
}

void connection_slots::give_back() {
  if (max_ != 0) used_.fetch_sub(1, std::memory_order_relaxed);
}

namespace {

kj::Promise<void> quiet_checks(kj::Timer& timer, kj::Duration step, int quiet, std::function<bool()> active) {
  return timer.afterDelay(step).then([&timer, step, quiet, active = std::move(active)]() mutable -> kj::Promise<void> {
    const int now_quiet = active() ? 0 : quiet + 1;
    if (now_quiet >= 4) return kj::READY_NOW;
    return quiet_checks(timer, step, now_quiet, std::move(active));
  });
}

}  // namespace

kj::Promise<void> idle_for(kj::Timer& timer, kj::Duration limit, std::function<bool()> active) {
  return quiet_checks(timer, std::max(limit / 4, 1 * kj::MILLISECONDS), 0, std::move(active));
}

connection_guard::connection_guard(const server_options& opts, std::string peer)
    : connection_guard(opts, std::move(peer), kj::newPromiseAndFulfiller<void>()) {}

connection_guard::connection_guard(const server_options& opts, std::string peer, kj::PromiseFulfillerPair<void> closing)
    : opts_(opts), peer_(std::move(peer)), closing_(closing.promise.fork()), closer_(kj::mv(closing.fulfiller)) {}

void connection_guard::refuse(status why) { refusal_ = std::move(why); }

status connection_guard::login(std::string_view given, const char* protocol_name) {
  if (refused()) {
    close_soon();
    return refusal_;
  }
  if (failed_logins_ >= opts_.max_failed_logins && opts_.max_failed_logins > 0) {
    close_soon();
    return {code::permission_denied, "too many failed logins on this connection"};
  }
  if (opts_.token.empty() || same_token(opts_.token, given)) return status::ok();
  ++failed_logins_;
  const bool last = opts_.max_failed_logins > 0 && failed_logins_ >= opts_.max_failed_logins;
  spdlog::warn("cellar-server: failed login from {} ({}, {}; attempt {} on this connection{})", peer_, protocol_name,
               given.empty() ? "no token" : "wrong token", failed_logins_, last ? ", closing it" : "");
  if (last) close_soon();
  if (given.empty()) return {code::permission_denied, "this server requires a token; none was given"};
  return {code::permission_denied,
          last ? "wrong token; the connection is closed after " + std::to_string(failed_logins_) + " failed logins"
               : "wrong token"};
}

kj::Promise<void> connection_guard::closing() { return closing_.addBranch(); }

void connection_guard::close_soon() {
  if (closer_->isWaiting()) closer_->fulfill();
}

}  // namespace cellar::rpc
