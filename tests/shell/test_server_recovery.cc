// cellar-server's status endpoint (--metrics-listen) while its store recovers: it answers
// before the store is open, with the recovery's progress, and with the full page and
// metrics on the same port once the store serves.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <regex>
#include <string>
#include <thread>

#include "../rpc/http_get.h"
#include "../support/eventually.h"
#include "../support/temp_dir.h"
#include "process.h"

namespace {

// The value of the sample `series` (name and labels exactly as rendered), or -1.
double sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The path of the redo log generation after the newest in `dir`.
std::string next_log_file(const std::string& dir) {
  std::uint64_t newest = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name.rfind("log-", 0) == 0) newest = std::max<std::uint64_t>(newest, std::stoull(name.substr(4)));
  }
  char name[32];
  std::snprintf(name, sizeof name, "log-%020llu", static_cast<unsigned long long>(newest + 1));
  return dir + "/" + name;
}

// A FIFO that holds whoever opens it for reading until release(): it is opened for writing
// and closed then (reads find it empty). Released after 60 s anyway, so a server that does
// not answer while it waits fails the test instead of hanging it.
class fifo_gate {
 public:
  explicit fifo_gate(std::string path) : path_(std::move(path)) {
    REQUIRE(::mkfifo(path_.c_str(), 0600) == 0);
    opener_ = std::thread([this, go = release_.get_future()] {
      go.wait_for(std::chrono::seconds(60));
      const int w = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (w >= 0) ::close(w);
    });
  }
  ~fifo_gate() { release(); }
  void release() {
    if (!opener_.joinable()) return;
    release_.set_value();
    opener_.join();
  }

 private:
  std::string path_;
  std::promise<void> release_;
  std::thread opener_;
};

}  // namespace

TEST_CASE("cellar-server: the status endpoint shows the recovery while the store opens", "[server][recovery]") {
  testsupport::temp_dir data("cellar-recovering-server");
  const std::vector<std::string> flags{"--durability", "log", "--default-partitions", "3"};
  {
    testproc::server srv(CELLAR_SERVER, data.path, flags);
    auto o = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"},
                           "create 't', 'f'\nput 't', 'r1', 'f:q', 'v'\nput 't', 'r2', 'f:q', 'v'\n"
                           "put 't', 'r3', 'f:q', 'v'\n");
    REQUIRE(o.exit_code == 0);
    REQUIRE(srv.stop() == 0);  // a final snapshot holds the cells
  }
  // The next open waits in its log replay: a FIFO named as the next log generation blocks
  // the recovery's open of it until this test opens it for writing, then reads as empty.
  fifo_gate gate(next_log_file(data.path));

  auto with_metrics = flags;
  with_metrics.insert(with_metrics.end(), {"--metrics-listen", "127.0.0.1:0"});
  testproc::server srv(CELLAR_SERVER, data.path, with_metrics, false);
  std::smatch m;
  REQUIRE(std::regex_search(srv.banner(), m, std::regex("metrics on 127\\.0\\.0\\.1:([0-9]+)")));
  const auto port = static_cast<std::uint16_t>(std::stoi(m[1].str()));

  std::string metrics;
  REQUIRE(testsupport::eventually([&] {
    metrics = testhttp::request(port, "/metrics").body;
    return sample(metrics, R"(cellar_recovery_phase{phase="replaying log"})") == 1;
  }));
  INFO(metrics);
  CHECK(sample(metrics, "cellar_recovery_in_progress") == 1);
  CHECK(sample(metrics, "cellar_recovery_partitions_done") == 3);
  CHECK(sample(metrics, "cellar_recovery_partitions_total") == 3);
  CHECK(sample(metrics, "cellar_recovery_cells") == 3);
  CHECK(sample(metrics, "cellar_recovery_log_records") == 0);
  CHECK(sample(metrics, R"(cellar_table_cells{table="t"})") == -1);  // no store yet
  auto page = testhttp::request(port, "/");
  CHECK(page.status == 200);
  INFO(page.body);
  CHECK(contains(page.body, "Recovering: the store is not serving yet"));
  CHECK(contains(page.body, "<th>Phase</th><td>replaying log</td>"));
  CHECK(contains(page.body, "3 of 3 partitions read"));
  CHECK(srv.port() == 0);  // not listening for clients yet

  // Let the replay go on: the store opens and the same port shows it.
  gate.release();
  srv.wait_listening();
  auto after = testhttp::request(port, "/metrics");
  REQUIRE(after.status == 200);
  INFO(after.body);
  CHECK(sample(after.body, "cellar_recovery_in_progress") == 0);
  CHECK(sample(after.body, "cellar_recovery_cells_loaded") == 3);
  CHECK(sample(after.body, R"(cellar_table_cells{table="t"})") == 3);
  auto full = testhttp::request(port, "/");
  INFO(full.body);
  CHECK(!contains(full.body, "Recovering"));
  CHECK(contains(full.body, "<tr><td>t</td><td>f</td>"));
  CHECK(contains(full.body, "3 cells from the snapshot (3 partitions, "));
  CHECK(srv.stop() == 0);
}
