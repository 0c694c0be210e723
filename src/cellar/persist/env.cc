// persist/env.cc: cellar::env over the operating system's files (cellar/env.h).
#include "cellar/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace cellar {

int write_all(file& f, std::uint64_t offset, const void* buf, std::size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    std::size_t put = 0;
    if (int err = f.write(offset, p, n, &put); err != 0) return err;
    if (put == 0) return EIO;
    p += put;
    offset += put;
    n -= put;
  }
  return 0;
}

int env::sync_dir(const std::string& dir) {
  std::unique_ptr<file> d;
  open_flags flags;
  flags.read_only = true;
  flags.directory = true;
  if (int err = open(dir, flags, &d); err != 0) return err;
  const int err = d->sync();
  const int closed = d->close();
  return err != 0 ? err : closed;
}

namespace {

class posix_file final : public file {
 public:
  posix_file(int fd, bool directory) : fd_(fd), directory_(directory) {}
  ~posix_file() override {
    if (fd_ >= 0) ::close(fd_);
  }

  int read(std::uint64_t offset, void* buf, std::size_t n, std::size_t* got) override {
    auto* p = static_cast<char*>(buf);
    *got = 0;
    while (*got < n) {
      const ssize_t r = ::pread(fd_, p + *got, n - *got, static_cast<off_t>(offset + *got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return errno;
      if (r == 0) break;  // end of file
      *got += static_cast<std::size_t>(r);
    }
    return 0;
  }

  int write(std::uint64_t offset, const void* buf, std::size_t n, std::size_t* put) override {
    for (;;) {
      const ssize_t w = ::pwrite(fd_, buf, n, static_cast<off_t>(offset));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        *put = 0;
        return errno;
      }
      *put = static_cast<std::size_t>(w);
      return 0;
    }
  }

  int size(std::uint64_t* out) override {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) return errno;
    *out = static_cast<std::uint64_t>(st.st_size);
    return 0;
  }

  int truncate(std::uint64_t size) override {
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
      if (errno != EINTR) return errno;
    return 0;
  }

  int sync() override {
    const int r = directory_ ? ::fsync(fd_) : ::fdatasync(fd_);
    return r == 0 ? 0 : errno;
  }

  int start_writeback() override {
    // A hint: a failure shows at the next sync.
    ::sync_file_range(fd_, 0, 0, SYNC_FILE_RANGE_WRITE);
    return 0;
  }

  int lock(bool on) override {
    struct flock fl {};
    fl.l_type = on ? F_WRLCK : F_UNLCK;
    fl.l_whence = SEEK_SET;
    return ::fcntl(fd_, F_SETLK, &fl) == 0 ? 0 : errno;
  }

  int close() override {
    if (fd_ < 0) return 0;
    const int r = ::close(fd_);
    fd_ = -1;
    return r == 0 ? 0 : errno;
  }

 private:
  int fd_;
  bool directory_;
};

class posix_env final : public env {
 public:
  int open(const std::string& path, open_flags flags, std::unique_ptr<file>* out) override {
    int oflags = O_CLOEXEC;
    if (flags.directory) {
      oflags |= O_RDONLY | O_DIRECTORY;
    } else {
      oflags |= flags.read_only ? O_RDONLY : O_RDWR;
      if (flags.create) oflags |= O_CREAT;
      if (flags.create && flags.exclusive) oflags |= O_EXCL;
    }
    int fd;
    while ((fd = ::open(path.c_str(), oflags, 0644)) < 0)
      if (errno != EINTR) return errno;
    *out = std::make_unique<posix_file>(fd, flags.directory);
    return 0;
  }

  int exists(const std::string& path, bool* out) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      *out = true;
      return 0;
    }
    if (errno == ENOENT) {
      *out = false;
      return 0;
    }
    return errno;
  }

  int file_size(const std::string& path, std::uint64_t* out) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return errno;
    *out = static_cast<std::uint64_t>(st.st_size);
    return 0;
  }

  int remove(const std::string& path) override { return ::unlink(path.c_str()) == 0 ? 0 : errno; }

  int rename(const std::string& from, const std::string& to) override {
    return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
  }

  int children(const std::string& dir, std::vector<std::string>* names) override {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return errno;
    names->clear();
    errno = 0;
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") names->push_back(n);
    }
    const int err = errno;
    ::closedir(d);
    return err;
  }

  int create_dir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return 0;
    return errno;
  }
};

}  // namespace

std::shared_ptr<env> env::posix() {
  static const std::shared_ptr<env> e = std::make_shared<posix_env>();
  return e;
}

}  // namespace cellar
