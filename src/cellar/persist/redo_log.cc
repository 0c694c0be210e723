#include "persist/redo_log.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace cellar::detail {

namespace {

status io_error(int err, const std::string& what) { return {code::io_error, what + ": " + std::strerror(err)}; }

bool is_log_name(const std::string& n) {
  return n.size() == 24 && n.rfind("log-", 0) == 0 &&
         std::all_of(n.begin() + 4, n.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The whole file, or the error.
status read_file(env& e, const std::string& path, std::string* out) {
  std::unique_ptr<file> f;
  open_flags o;
  o.read_only = true;
  if (int err = e.open(path, o, &f); err != 0) return io_error(err, "cannot read " + path);
  std::uint64_t size = 0;
  if (int err = f->size(&size); err != 0) return io_error(err, "cannot read " + path);
  out->resize(size);
  std::size_t got = 0;
  if (int err = f->read(0, out->data(), out->size(), &got); err != 0) return io_error(err, "cannot read " + path);
  out->resize(got);
  return status::ok();
}

}  // namespace

std::string log_file_name(std::uint64_t gen) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "log-%020llu", static_cast<unsigned long long>(gen));
  return buf;
}

std::vector<std::uint64_t> redo_log::generations(env& e, const std::string& dir) {
  std::vector<std::uint64_t> out;
  std::vector<std::string> names;
  if (e.children(dir, &names) == 0)
    for (const auto& n : names)
      if (is_log_name(n)) out.push_back(std::stoull(n.substr(4)));
  std::sort(out.begin(), out.end());
  return out;
}

result<std::unique_ptr<redo_log>> redo_log::open(std::shared_ptr<env> e, std::string dir, std::uint64_t gen,
                                                 bool sync_each, std::chrono::milliseconds sync_interval) {
  std::unique_ptr<redo_log> log(new redo_log());
  log->env_ = std::move(e);
  log->dir_ = std::move(dir);
  log->sync_each_ = sync_each;
  log->sync_interval_ = sync_interval;
  {
    absl::MutexLock lock(&log->mu_);
    if (auto s = log->open_file(gen); !s) return s;
  }
  log->writer_ = std::thread([l = log.get()] { l->run(); });
  return log;
}

status redo_log::open_file(std::uint64_t gen) {
  const std::string path = dir_ + "/" + log_file_name(gen);
  std::unique_ptr<file> f;
  open_flags o;
  o.create = true;
  if (int err = env_->open(path, o, &f); err != 0) return io_error(err, "cannot open " + path);
  std::uint64_t size = 0;
  if (int err = f->size(&size); err != 0) return io_error(err, "cannot open " + path);
  if (int err = f->sync(); err != 0) return io_error(err, "cannot sync " + path);
  // Make the new file's name durable.
  if (int err = env_->sync_dir(dir_); err != 0) return io_error(err, "cannot sync the directory " + dir_);
  if (file_) {
    if (int err = file_->sync(); err != 0) spdlog::error("cellar: redo log: sync {}: {}", path_, std::strerror(err));
    file_->close();
  }
  file_ = std::move(f);
  path_ = path;
  size_ = size;
  gen_ = gen;
  return status::ok();
}

redo_log::~redo_log() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  if (writer_.joinable()) writer_.join();
  if (file_) {
    if (!failed() && file_->sync() != 0) spdlog::error("cellar: redo log: the last sync of {} failed", path_);
    file_->close();
  }
}

std::uint64_t redo_log::generation() const {
  absl::MutexLock lock(&mu_);
  return gen_;
}

status redo_log::health() const {
  if (!failed()) return status::ok();
  absl::MutexLock lock(&mu_);
  return failure_;
}

void redo_log::fail(const status& s) {
  absl::MutexLock lock(&mu_);
  if (failed_.load(std::memory_order_relaxed)) return;
  failure_ = {code::io_error, s.message() + "; the redo log stopped: writes are refused until a snapshot succeeds"};
  failed_gen_ = gen_;
  failed_.store(true, std::memory_order_release);
  spdlog::critical("cellar: {}", failure_.message());
}

void redo_log::clear_failure(std::uint64_t gen) {
  absl::MutexLock lock(&mu_);
  if (!failed_.load(std::memory_order_relaxed) || failed_gen_ >= gen) return;
  spdlog::warn("cellar: redo log: a snapshot holds everything since the failure ({}); writes are taken again",
               failure_.message());
  failure_ = status::ok();
  failed_.store(false, std::memory_order_release);
}

status redo_log::append(std::string payload, ack_fn ack) {
  std::string rec;
  rec.reserve(payload.size() + 8);
  put_u32(rec, static_cast<std::uint32_t>(payload.size()));
  put_u32(rec, crc32c(payload));
  rec += payload;
  {
    absl::MutexLock lock(&mu_);
    if (failed_.load(std::memory_order_relaxed)) return failure_;
    queue_.emplace_back(std::move(rec), std::move(ack));
  }
  cv_.Signal();
  return status::ok();
}

status redo_log::rotate(std::uint64_t gen) {
  absl::MutexLock lock(&mu_);
  const auto target = rotations_done_ + 1;
  rotate_to_ = gen;
  cv_.Signal();
  while (rotations_done_ < target) rotated_cv_.Wait(&mu_);
  return rotate_status_;
}

void redo_log::remove_before(std::uint64_t gen) {
  for (auto g : generations(*env_, dir_))
    if (g < gen) env_->remove(dir_ + "/" + log_file_name(g));
}

status redo_log::write_batch(const std::string& buf) {
  if (int err = write_all(*file_, size_, buf.data(), buf.size()); err != 0) {
    // Part of the batch may be in the file: cut it back to the last whole record, so the
    // file ends cleanly even when a later generation follows it.
    if (file_->truncate(size_) != 0)
      spdlog::error("cellar: redo log: cannot cut {} back to {} bytes after a failed write", path_, size_);
    return io_error(err, "redo log write of " + std::to_string(buf.size()) + " bytes at " + std::to_string(size_) +
                             " of " + path_);
  }
  size_ += buf.size();
  return status::ok();
}

status redo_log::sync_file() {
  if (int err = file_->sync(); err != 0) return io_error(err, "redo log sync of " + path_);
  ++syncs_;
  return status::ok();
}

void redo_log::run() {
  std::vector<std::pair<std::string, ack_fn>> batch;
  std::string buf;
  auto last_sync = std::chrono::steady_clock::now();
  bool dirty = false;
  mu_.Lock();
  for (;;) {
    // Wakes for work, or after sync_interval_ to sync what log mode has written.
    const absl::Time deadline = absl::Now() + absl::FromChrono(sync_interval_);
    while (!stop_ && queue_.empty() && rotate_to_ == 0)
      if (cv_.WaitWithDeadline(&mu_, deadline)) break;
    batch.swap(queue_);
    const auto rotate_to = rotate_to_;
    const bool stopping = stop_;
    mu_.Unlock();

    status outcome;
    if (!batch.empty()) {
      buf.clear();
      for (auto& [rec, ack] : batch) buf += rec;
      outcome = write_batch(buf);
      if (outcome) {
        records_ += batch.size();
        bytes_ += buf.size();
        dirty = true;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (outcome && dirty && (sync_each_ || now - last_sync >= sync_interval_ || stopping || rotate_to != 0)) {
      outcome = sync_file();
      last_sync = now;
      dirty = false;
    }
    if (!outcome) fail(outcome);
    const status acked = outcome ? status::ok() : health();
    for (auto& [rec, ack] : batch)
      if (ack) ack(acked);
    batch.clear();

    mu_.Lock();
    if (rotate_to != 0 && queue_.empty()) {
      rotate_status_ = open_file(rotate_to);
      rotate_to_ = 0;
      ++rotations_done_;
      rotated_cv_.SignalAll();
    }
    if (stopping && queue_.empty()) {
      mu_.Unlock();
      return;
    }
  }
}

status redo_log::replay_bytes(std::string_view data, const std::string& path, bool last,
                              const std::function<status(std::string_view payload)>& fn, log_replay_stats* stats) {
  std::string_view rest(data);
  std::uint64_t offset = 0;
  auto torn = [&](const char* what) {
    spdlog::warn("cellar: {} ends in {} at byte {} (a write cut by a crash): {} bytes dropped", path, what, offset,
                 rest.size());
    if (stats) {
      stats->dropped_bytes += rest.size();
      stats->torn_file = path;
      stats->torn_offset = offset;
    }
    return status::ok();
  };
  while (!rest.empty()) {
    reader r(rest);
    std::uint32_t len = 0, crc = 0;
    const bool header = r.u32(len) && r.u32(crc);
    const bool whole = header && r.rest().size() >= len;
    if (!whole) {
      if (last) return torn("a torn record");
      return {code::corruption, path + ": truncated record at byte " + std::to_string(offset)};
    }
    std::string_view payload = r.rest().substr(0, len);
    if (crc32c(payload) != crc) {
      // Only the very last record may be damaged by a crash: the write of the records
      // after it would have come later.
      if (last && r.rest().size() == len) return torn("a damaged record");
      return {code::corruption, path + ": checksum mismatch in the record at byte " + std::to_string(offset)};
    }
    if (auto s = fn(payload); !s) return s;
    rest.remove_prefix(8 + std::size_t{len});
    offset += 8 + std::uint64_t{len};
    if (stats) {
      ++stats->records;
      stats->bytes += 8 + std::uint64_t{len};
    }
  }
  return status::ok();
}

status redo_log::replay(env& e, const std::string& dir, std::uint64_t from_gen,
                        const std::function<status(std::string_view payload)>& fn, log_replay_stats* stats) {
  std::vector<std::uint64_t> gens;
  for (auto g : generations(e, dir))
    if (g >= from_gen) gens.push_back(g);
  // Files after the last one with bytes are empty (opened, nothing written): the torn
  // tail a crash may leave belongs to the last file that holds anything.
  std::size_t last_nonempty = 0;
  for (std::size_t i = 0; i < gens.size(); ++i) {
    const std::string path = dir + "/" + log_file_name(gens[i]);
    std::uint64_t size = 0;
    if (int err = e.file_size(path, &size); err != 0) return io_error(err, "cannot read " + path);
    if (size > 0) last_nonempty = i;
  }
  std::string data;  // one file at a time
  for (std::size_t i = 0; i < gens.size(); ++i) {
    const std::string path = dir + "/" + log_file_name(gens[i]);
    if (auto s = read_file(e, path, &data); !s) return s;
    if (auto s = replay_bytes(data, path, i >= last_nonempty, fn, stats); !s) return s;
  }
  return status::ok();
}

std::optional<log_payload_header> decode_log_header(std::string_view payload) {
  reader r(payload);
  log_payload_header h;
  if (!r.u64(h.uid) || !r.u32(h.partition)) return std::nullopt;
  h.entries = r.rest();
  return h;
}

status for_each_log_entry(std::string_view entries, const std::function<void(log_entry&)>& fn) {
  reader r(entries);
  log_entry e;
  while (!r.done()) {
    std::uint8_t op = 0;
    std::string_view k;
    if (!r.u8(op) || !r.bytes_view(k)) return {code::corruption, "malformed log entry"};
    auto key = decode_cell_key(k);
    if (!key) return {code::corruption, "malformed key in a log entry"};
    e.key = std::move(*key);
    e.present = op == 1;
    e.expires_at = 0;
    e.value = {};
    if (op == 1) {
      if (!r.i64(e.expires_at) || !r.bytes_view(e.value)) return {code::corruption, "malformed log entry"};
    } else if (op != 0) {
      return {code::corruption, "unknown log entry kind " + std::to_string(op)};
    }
    fn(e);
  }
  return status::ok();
}

}  // namespace cellar::detail
