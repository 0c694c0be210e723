// tests/shell/process.h: run the real cellar-server and cellar-shell from a test.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../support/temp_dir.h"

namespace testproc {

using testsupport::temp_dir;  // tests/support/temp_dir.h

// The lines of `s`, without their newlines.
inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

struct output {
  int exit_code = -1;
  std::string out;
};

// Runs argv with `input` on stdin; returns its exit code and stdout (with its stderr
// interleaved when `with_stderr`).
inline output run(const std::vector<std::string>& argv, const std::string& input, bool with_stderr = false) {
  // A child that exits before reading all of `input` (a refused login, a bad flag) must
  // not kill the test with SIGPIPE: the write then fails with EPIPE and stops.
  static const bool pipe_ignored = [] { return std::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)pipe_ignored;
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    if (with_stderr) dup2(out[1], 2);
    close(in[1]);
    close(out[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  std::thread writer([&] {
    std::size_t off = 0;
    while (off < input.size()) {
      auto w = write(in[1], input.data() + off, input.size() - off);
      if (w <= 0) break;
      off += static_cast<std::size_t>(w);
    }
    close(in[1]);
  });
  output r;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  writer.join();
  int st = 0;
  waitpid(pid, &st, 0);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// With CELLAR_TEST_SERVER_LOGS=DIR set: DIR/<data dir's name>-<tag><ext>; else empty.
inline std::string log_path(const std::string& data_dir, const std::string& tag, const char* ext) {
  const char* dir = std::getenv("CELLAR_TEST_SERVER_LOGS");
  if (dir == nullptr) return {};
  return std::string(dir) + "/" + data_dir.substr(data_dir.find_last_of('/') + 1) + "-" + tag + ext;
}

// A cellar-server on a free loopback port, stopped with SIGTERM by stop() or the destructor.
class server {
 public:
  // Without `wait_listening`, the constructor returns once the server printed its metrics
  // port ("metrics on ...", before it opens the store: give --metrics-listen), and
  // wait_listening() waits for the rest.
  server(const std::string& binary, const std::string& data_dir, std::vector<std::string> extra = {},
         bool wait_listening = true)
      : data_dir_(data_dir) {
    // Everything the child needs is made here: between fork and exec it only calls dup2,
    // close and execv (another thread may hold a malloc lock at the fork).
    std::vector<std::string> argv{binary, "--listen", "127.0.0.1:0", "--data", data_dir, "--snapshot-interval-ms", "0"};
    for (auto& e : extra) argv.push_back(e);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // Its stderr goes nowhere, or with CELLAR_TEST_SERVER_LOGS=DIR set (to look into a
    // failure) to DIR/<data dir's name>-<pid>.log: opened under a name of this process,
    // renamed once the child's pid is known.
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe");
    static std::atomic<int> started{0};
    const std::string err_first =
        log_path(data_dir, "p" + std::to_string(getpid()) + "-" + std::to_string(started++), ".log");
    int err = err_first.empty() ? -1 : open(err_first.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (err < 0) err = open("/dev/null", O_WRONLY);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      dup2(err, 2);
      execv(args[0], args.data());
      _exit(127);
    }
    close(err);
    if (!err_first.empty()) std::rename(err_first.c_str(), log_path(data_dir, std::to_string(pid_), ".log").c_str());
    close(out[1]);
    out_ = out[0];
    if (!wait_listening) {
      if (read_line_with("metrics on 127.0.0.1:") < 0)
        throw std::runtime_error("cellar-server did not serve metrics: " + banner_);
      return;
    }
    this->wait_listening();
  }
  ~server() { stop(); }

  // Waits for "listening on 127.0.0.1:PORT".
  void wait_listening() {
    port_ = read_line_with("listening on 127.0.0.1:");
    if (port_ < 0) throw std::runtime_error("cellar-server did not start: " + banner_);
    const std::string& seen = banner_;
    // Keep draining its stdout so it never blocks on a full pipe (into DIR/<data dir's
    // name>-<pid>.out with CELLAR_TEST_SERVER_LOGS=DIR set: the server logs there).
    const std::string out_log = log_path(data_dir_, std::to_string(pid_), ".out");
    int keep = out_log.empty() ? -1 : open(out_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (keep >= 0 && write(keep, seen.data(), seen.size()) < 0) {
      close(keep);
      keep = -1;
    }
    drain_ = std::thread([fd = out_, keep]() mutable {
      char b[1024];
      for (ssize_t n; (n = read(fd, b, sizeof b)) > 0;) {
        if (keep >= 0 && write(keep, b, static_cast<std::size_t>(n)) < 0) {
          close(keep);
          keep = -1;
        }
      }
      if (keep >= 0) close(keep);
    });
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // What it printed up to "listening on ...", that line included (or up to "metrics on
  // ..." before wait_listening()).
  const std::string& banner() const { return banner_; }
  bool alive() const { return pid_ > 0 && kill(pid_, 0) == 0 && !exited_; }

  // SIGTERM, then the exit code (0 = clean).
  int stop() {
    if (pid_ <= 0) return exit_code_;
    kill(pid_, SIGTERM);
    int st = 0;
    waitpid(pid_, &st, 0);
    exit_code_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    pid_ = -1;
    exited_ = true;
    if (drain_.joinable()) drain_.join();
    close(out_);
    return exit_code_;
  }

 private:
  // Reads stdout into banner_ up to the end of a line that contains `marker`, and returns
  // the port after it; -1 if the output ended first.
  int read_line_with(const std::string& marker) {
    const std::size_t from = banner_.size();
    char c;
    while (read(out_, &c, 1) == 1) {
      banner_.push_back(c);
      auto pos = banner_.find(marker, from);
      if (pos != std::string::npos && c == '\n') return std::stoi(banner_.substr(pos + marker.size()));
    }
    return -1;
  }

  std::string data_dir_;
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
  std::string banner_;
  int exit_code_ = -1;
  bool exited_ = false;
  std::thread drain_;
};

}  // namespace testproc
