// tests/cluster/cluster_test.h: helpers shared by the cluster tests.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../status_checks.h"
#include "cluster/placement.h"
#include "cluster/zk_client.h"
#include "zk_server.h"

namespace zktest {

using test_util::describe_status;  // REQUIRE_OK, REQUIRE_CODE: ../status_checks.h

// The first partition of `table` that `m` gives to `node` (there must be one).
inline std::uint32_t first_partition_on(const cellar::cluster::placement_map& m, const std::string& table,
                                        const std::string& node) {
  const auto& owners = m.tables.at(table);
  std::uint32_t p = 0;
  while (p < owners.size() && owners[p].node != node) ++p;
  INFO("table '" << table << "' has no partition on " << node);
  REQUIRE(p < owners.size());
  return p;
}

// A client of the shared server under `chroot`, with a short session timeout.
inline std::unique_ptr<cellar::cluster::zk_client> connect(
    const std::string& chroot, std::chrono::milliseconds session = std::chrono::milliseconds(4000)) {
  cellar::cluster::zk_options o;
  o.connect = zk_server::shared().connect(chroot);
  o.session_timeout = session;
  auto c = cellar::cluster::zk_client::open(o);
  INFO(describe_status(c));
  REQUIRE(c.is_ok());
  return std::move(c).value();
}

// Collects values from callbacks on other threads.
template <class T>
class recorder {
 public:
  void add(T v) {
    std::lock_guard lock(m_);
    v_.push_back(std::move(v));
  }
  std::vector<T> values() const {
    std::lock_guard lock(m_);
    return v_;
  }
  std::size_t size() const {
    std::lock_guard lock(m_);
    return v_.size();
  }

 private:
  mutable std::mutex m_;
  std::vector<T> v_;
};

}  // namespace zktest

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace zktest {

// tests/cluster/zk_member.cc in a child process: a node's membership and candidacy, to be
// killed with SIGKILL (its session then times out, as a crashed node's would).
class member_process {
 public:
  member_process(const std::string& connect, const std::string& node_id, int session_ms) {
    int out[2];
    REQUIRE(::pipe(out) == 0);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      ::dup2(out[1], 1);
      ::close(out[0]);
      const std::string ms = std::to_string(session_ms);
      ::execl(ZK_MEMBER, ZK_MEMBER, connect.c_str(), node_id.c_str(), ms.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    std::string got;
    char c;
    while (got.find("ready\n") == std::string::npos && ::read(out[0], &c, 1) == 1) got += c;
    ::close(out[0]);
    REQUIRE(got.size() >= 6);
    REQUIRE(got.substr(got.size() - 6) == "ready\n");
  }
  ~member_process() { kill(); }
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace zktest
