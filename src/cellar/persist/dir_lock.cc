// persist/dir_lock.cc: the store directory's lock file (dir_lock.h).
#include "persist/dir_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace cellar::detail {

namespace {

// The pid the holder wrote, or empty. A holder that has just taken the lock may not have
// written its pid yet: the file still names an earlier holder, gone by now (not shown).
std::string holder_of(int fd) {
  char buf[32];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return {};
  std::string s(buf, static_cast<std::size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.empty() || s.size() > 10) return {};
  for (char c : s)
    if (c < '0' || c > '9') return {};
  if (::kill(static_cast<pid_t>(std::stol(s)), 0) != 0 && errno == ESRCH) return {};
  return s;
}

}  // namespace

result<std::unique_ptr<dir_lock>> dir_lock::acquire(const std::string& dir, env& e) {
  if (int err = e.create_dir(dir); err != 0)
    return status{code::io_error, "cannot create " + dir + ": " + std::strerror(err)};
  const std::string path = dir + "/cellar.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return status{code::io_error, "cannot open " + path + ": " + std::strerror(errno)};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK) {
      ::close(fd);
      return status{code::io_error, "cannot lock " + path + ": " + std::strerror(err)};
    }
    const std::string pid = holder_of(fd);
    ::close(fd);
    std::string who = "another process";
    if (!pid.empty())
      who += pid == std::to_string(::getpid()) ? " (pid " + pid + ", this process)" : " (pid " + pid + ")";
    return status{code::io_error,
                  "the store directory " + dir + " is in use by " + who + ": one process at a time may open it"};
  }
  // Ours: the pid for whoever finds the directory held.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::close(fd);
    return status{code::io_error, "cannot write " + path + ": " + std::strerror(err)};
  }
  return std::unique_ptr<dir_lock>(new dir_lock(fd));
}

dir_lock::~dir_lock() { ::close(fd_); }

}  // namespace cellar::detail
