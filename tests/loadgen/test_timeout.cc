// The load generator against a server that reads every request and answers none: the
// requests unanswered past --request-timeout count as errors and the phase ends on time,
// instead of waiting forever.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../shell/process.h"

namespace {

// Accepts connections on a loopback port and reads whatever comes, never writing.
class silent_server {
 public:
  silent_server() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 64) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    accepter_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // the listening socket was shut down
        readers_.emplace_back([c] {
          char buf[4096];
          while (::read(c, buf, sizeof buf) > 0) {}
          ::close(c);
        });
      }
    });
  }
  ~silent_server() {
    ::shutdown(fd_, SHUT_RDWR);
    accepter_.join();
    for (auto& r : readers_) r.join();  // each ends when the load generator closes its side
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread accepter_;
  std::vector<std::thread> readers_;
};

}  // namespace

TEST_CASE("loadgen: requests without a reply count as errors once past --request-timeout", "[loadgen]") {
  silent_server server;
  const auto started = std::chrono::steady_clock::now();
  auto r = testproc::run({CELLAR_LOADGEN,
                          "--target",
                          "redis",
                          "--port",
                          std::to_string(server.port()),
                          "--workload",
                          "c",
                          "--phase",
                          "run",
                          "--records",
                          "100",
                          "--duration",
                          "30",
                          "--request-timeout",
                          "1",
                          "--threads",
                          "2",
                          "--connections",
                          "4",
                          "--depth",
                          "2"},
                         "", true);
  const auto took = std::chrono::steady_clock::now() - started;
  INFO(r.out);
  // The phase ended at the timeout, long before its 30 s.
  CHECK(took < std::chrono::seconds(15));
  CHECK(r.out.find("8 requests had no reply") == std::string::npos);  // counted per thread
  CHECK(r.out.find("4 requests had no reply within 1 s: counted as errors") != std::string::npos);
  CHECK(r.out.find("8 errors") != std::string::npos);
  CHECK(r.out.find("no reply within 1 s (--request-timeout)") != std::string::npos);
}
