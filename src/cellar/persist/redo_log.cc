#include "persist/redo_log.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <spdlog/spdlog.h>

#include "persist/codec.h"

namespace cellar::detail {

namespace {

status io_error(const std::string& what) {
  return {code::io_error, what + ": " + std::strerror(errno)};
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    auto w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

std::string log_file_name(std::uint64_t gen) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "log-%020llu", static_cast<unsigned long long>(gen));
  return buf;
}

std::vector<std::uint64_t> redo_log::generations(const std::string& dir) {
  std::vector<std::uint64_t> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (auto* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.size() == 24 && n.rfind("log-", 0) == 0 &&
          std::all_of(n.begin() + 4, n.end(), [](char c) { return c >= '0' && c <= '9'; }))
        out.push_back(std::stoull(n.substr(4)));
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

result<std::unique_ptr<redo_log>> redo_log::open(std::string dir, std::uint64_t gen, bool sync_each,
                                                 std::chrono::milliseconds sync_interval) {
  std::unique_ptr<redo_log> log(new redo_log());
  log->dir_ = std::move(dir);
  log->sync_each_ = sync_each;
  log->sync_interval_ = sync_interval;
  if (auto s = log->open_file(gen); !s) return s;
  log->writer_ = std::thread([l = log.get()] { l->run(); });
  return log;
}

status redo_log::open_file(std::uint64_t gen) {
  const std::string path = dir_ + "/" + log_file_name(gen);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot open " + path);
  if (::fsync(fd) != 0) {
    ::close(fd);
    return io_error("cannot sync " + path);
  }
  // Make the new file's name durable.
  if (int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  if (fd_ >= 0) {
    ::fdatasync(fd_);
    ::close(fd_);
  }
  fd_ = fd;
  gen_ = gen;
  return status::ok();
}

redo_log::~redo_log() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (fd_ >= 0) {
    ::fdatasync(fd_);
    ::close(fd_);
  }
}

std::uint64_t redo_log::generation() const {
  std::lock_guard lock(mu_);
  return gen_;
}

void redo_log::append(std::string payload, std::function<void()> ack) {
  std::string rec;
  rec.reserve(payload.size() + 8);
  put_u32(rec, static_cast<std::uint32_t>(payload.size()));
  put_u32(rec, crc32c(payload));
  rec += payload;
  std::function<void()> later;
  if (sync_each_)
    later = std::move(ack);
  {
    std::lock_guard lock(mu_);
    queue_.emplace_back(std::move(rec), std::move(later));
  }
  cv_.notify_one();
  if (!sync_each_ && ack) ack();
}

status redo_log::rotate(std::uint64_t gen) {
  std::unique_lock lock(mu_);
  const auto target = rotations_done_ + 1;
  rotate_to_ = gen;
  cv_.notify_one();
  rotated_cv_.wait(lock, [&] { return rotations_done_ >= target; });
  return rotate_status_;
}

void redo_log::remove_before(std::uint64_t gen) {
  for (auto g : generations(dir_))
    if (g < gen) ::unlink((dir_ + "/" + log_file_name(g)).c_str());
}

void redo_log::run() {
  std::vector<std::pair<std::string, std::function<void()>>> batch;
  std::string buf;
  auto last_sync = std::chrono::steady_clock::now();
  bool dirty = false;
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait_for(lock, sync_interval_, [&] { return stop_ || !queue_.empty() || rotate_to_ != 0; });
    batch.swap(queue_);
    const auto rotate_to = rotate_to_;
    const bool stopping = stop_;
    lock.unlock();

    if (!batch.empty()) {
      buf.clear();
      for (auto& [rec, ack] : batch) buf += rec;
      if (!write_all(fd_, buf.data(), buf.size()))
        spdlog::critical("cellar: redo log write failed: {}", std::strerror(errno));
      records_ += batch.size();
      bytes_ += buf.size();
      dirty = true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (dirty && (sync_each_ || now - last_sync >= sync_interval_ || stopping || rotate_to != 0)) {
      if (::fdatasync(fd_) != 0) spdlog::critical("cellar: redo log sync failed: {}", std::strerror(errno));
      ++syncs_;
      last_sync = now;
      dirty = false;
    }
    for (auto& [rec, ack] : batch)
      if (ack) ack();
    batch.clear();

    lock.lock();
    if (rotate_to != 0 && queue_.empty()) {
      rotate_status_ = open_file(rotate_to);
      rotate_to_ = 0;
      ++rotations_done_;
      rotated_cv_.notify_all();
    }
    if (stopping && queue_.empty()) return;
  }
}

status redo_log::replay(const std::string& dir, std::uint64_t from_gen,
                        const std::function<status(std::string_view payload)>& fn) {
  auto gens = generations(dir);
  for (std::size_t gi = 0; gi < gens.size(); ++gi) {
    if (gens[gi] < from_gen) continue;
    const bool last_file = gi + 1 == gens.size();
    const std::string path = dir + "/" + log_file_name(gens[gi]);
    std::ifstream in(path, std::ios::binary);
    if (!in) return io_error("cannot read " + path);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string_view rest(data);
    std::size_t offset = 0;
    while (!rest.empty()) {
      reader r(rest);
      std::uint32_t len = 0, crc = 0;
      const bool header = r.u32(len) && r.u32(crc);
      const bool whole = header && r.rest().size() >= len;
      if (!whole) {
        if (last_file) {
          spdlog::warn("cellar: {} ends in a torn record at byte {} (a write cut by a crash); ignoring it", path,
                       offset);
          break;
        }
        return {code::corruption, path + ": truncated record at byte " + std::to_string(offset)};
      }
      std::string_view payload = r.rest().substr(0, len);
      if (crc32c(payload) != crc) {
        const bool tail = last_file && r.rest().size() == len;
        if (tail) {
          spdlog::warn("cellar: {} ends in a damaged record at byte {} (a write cut by a crash); ignoring it",
                       path, offset);
          break;
        }
        return {code::corruption, path + ": checksum mismatch in the record at byte " + std::to_string(offset)};
      }
      if (auto s = fn(payload); !s) return s;
      rest.remove_prefix(8 + len);
      offset += 8 + len;
    }
  }
  return status::ok();
}

}  // namespace cellar::detail
