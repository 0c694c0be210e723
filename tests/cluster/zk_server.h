// tests/cluster/zk_server.h: a standalone ZooKeeper server for tests.
//
// `zk_server` runs Debian's ZooKeeper 3.8 (org.apache.zookeeper.server.ZooKeeperServerMain
// from /usr/share/java/zookeeper.jar, installed by scripts/setup.sh) as a child process on a
// free 127.0.0.1 port, with a generated zoo.cfg and its own temporary data directory, and
// waits until it answers `ruok`. The destructor stops it (SIGTERM, then SIGKILL) and removes
// the directory; if the test process dies instead, the kernel kills the server with it
// (PR_SET_PDEATHSIG), so no ZooKeeper outlives a crashed test.
//
// Starting a JVM takes a second or two, so a test binary shares one server
// (`zk_server::shared()`) and each test case works under its own chroot (`fresh_chroot`).
// The server ticks every 100 ms, so sessions may be as short as 200 ms and expire promptly.
//
// Thread safety: start, stop and the destructor from one thread; the accessors from any.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "../support/eventually.h"

namespace zktest {

inline constexpr const char* zookeeper_jar = "/usr/share/java/zookeeper.jar";
inline constexpr const char* java_binary = "/usr/bin/java";

// A port the OS considers free right now on 127.0.0.1.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("cannot find a free port");
  ::close(fd);
  return ntohs(a.sin_port);
}

// Sends a four-letter word and returns the answer ("" when nothing answers).
inline std::string four_letter(int port, const std::string& word) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {};
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::write(fd, word.data(), word.size()) == static_cast<ssize_t>(word.size())) {
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

class zk_server {
 public:
  zk_server() {
    if (!std::filesystem::exists(zookeeper_jar) || !std::filesystem::exists(java_binary))
      throw std::runtime_error(std::string("ZooKeeper is not installed (") + zookeeper_jar + " or " + java_binary +
                               " missing): run scripts/setup.sh");
    char tmpl[] = "/tmp/cellar-zk-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    // Another process may take the port between free_port() and the server's bind: retry.
    for (int attempt = 0;; ++attempt) {
      port_ = free_port();
      write_config();
      try {
        start();
        return;
      } catch (const std::exception&) {
        if (attempt == 2) {
          std::filesystem::remove_all(dir_);
          throw;
        }
      }
    }
  }

  ~zk_server() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  zk_server(const zk_server&) = delete;
  zk_server& operator=(const zk_server&) = delete;

  // The server of this test binary, started on first use, stopped at exit.
  static zk_server& shared() {
    static zk_server s;
    return s;
  }

  // Starts the server (again, with the same port and data: sessions survive a restart
  // shorter than their timeout). Throws with the end of the server's log when it does not
  // answer within 60 s.
  void start() {
    if (pid_ > 0) return;
    const auto t0 = std::chrono::steady_clock::now();
    const std::string log = dir_ + "/server.log";
    const std::string cfg = dir_ + "/zoo.cfg";
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      ::execl(java_binary, "java", "-Xms16m", "-Xmx256m", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true", "-cp",
              zookeeper_jar, "org.apache.zookeeper.server.ZooKeeperServerMain", cfg.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 3000; ++i) {
      if (four_letter(port_, "ruok") == "imok") {
        start_time_ = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
        if (!announced_.exchange(true))
          std::fprintf(stderr, "zk_server: ZooKeeper ready on 127.0.0.1:%d in %lld ms\n", port_,
                       static_cast<long long>(start_time_.count()));
        return;
      }
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("ZooKeeper exited at start; its log:\n" + log_tail());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stop();
    throw std::runtime_error("ZooKeeper did not answer within 60 s; its log:\n" + log_tail());
  }

  // Stops the server: SIGTERM, SIGKILL after 5 s. Clients see their connection drop.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 250; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // "127.0.0.1:port/chroot"
  std::string connect(const std::string& chroot = "") const { return address() + chroot; }
  // How long the last start() took until the server answered.
  std::chrono::milliseconds start_time() const { return start_time_; }

 private:
  void write_config() {
    std::ofstream f(dir_ + "/zoo.cfg");
    f << "tickTime=100\n"
      << "dataDir=" << dir_ << "/data\n"
      << "clientPort=" << port_ << "\n"
      << "clientPortAddress=127.0.0.1\n"
      << "minSessionTimeout=200\n"
      << "maxSessionTimeout=60000\n"
      << "maxClientCnxns=0\n"
      << "forceSync=no\n"  // tests need no durability from the server's log
      << "admin.enableServer=false\n"
      << "4lw.commands.whitelist=ruok,srvr\n";
  }

  std::string log_tail() const {
    std::ifstream f(dir_ + "/server.log");
    std::stringstream ss;
    ss << f.rdbuf();
    std::string s = ss.str();
    return s.size() > 4000 ? s.substr(s.size() - 4000) : s;
  }

  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::chrono::milliseconds start_time_{0};
  std::atomic<bool> announced_{false};
};

// A chroot no other test case of this process uses: "/<name>-<n>".
inline std::string fresh_chroot(const std::string& name) {
  static std::atomic<int> counter{0};
  return "/" + name + "-" + std::to_string(++counter);
}

using testsupport::eventually;  // tests/support/eventually.h

}  // namespace zktest
