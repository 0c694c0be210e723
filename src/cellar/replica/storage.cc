#include "replica/storage.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "persist/codec.h"

namespace cellar::replica {

namespace {

using detail::put_bytes;
using detail::put_u32;
using detail::put_u64;

std::uint64_t last_of(const persisted_state& s) {
  if (!s.entries.empty()) return s.first_index + s.entries.size() - 1;
  return s.snapshot ? s.snapshot->index : s.first_index - 1;
}

// Drops the entries a snapshot covers, but the last `trailing` of them.
void compact(persisted_state& s, snapshot_record snap, unsigned trailing) {
  std::uint64_t keep_from = snap.index + 1;
  if (trailing > 0) keep_from = snap.index >= trailing ? snap.index - trailing + 1 : 1;
  if (trailing == 0) {
    s.entries.clear();
  } else if (keep_from > s.first_index) {
    auto drop = std::min<std::uint64_t>(keep_from - s.first_index, s.entries.size());
    s.entries.erase(s.entries.begin(), s.entries.begin() + static_cast<std::ptrdiff_t>(drop));
  } else {
    keep_from = s.first_index;
  }
  s.first_index = s.entries.empty() ? snap.index + 1 : keep_from;
  s.snapshot = std::move(snap);  // the state's bulk: moved, not copied
}

status truncate_state(persisted_state& s, std::uint64_t index) {
  if (index < s.first_index) {
    return {code::internal, "raft log truncate at " + std::to_string(index) + " before the first entry " +
                                std::to_string(s.first_index)};
  }
  if (index - s.first_index < s.entries.size()) s.entries.resize(index - s.first_index);
  return status::ok();
}

status io_failure(const std::string& what, const std::string& path) {
  return {code::io_error, what + " " + path + ": " + std::strerror(errno)};
}

// --- the log file's records -----------------------------------------------------------

enum record_type : std::uint8_t { rec_term = 1, rec_vote = 2, rec_entry = 3, rec_truncate = 4, rec_base = 5 };

void frame(std::string& out, const std::string& payload) {
  put_u32(out, static_cast<std::uint32_t>(payload.size()));
  put_u32(out, detail::crc32c(payload));
  out += payload;
}

std::string u64_record(record_type t, std::uint64_t v) {
  std::string p(1, static_cast<char>(t));
  put_u64(p, v);
  return p;
}

std::string entry_record(std::uint64_t index, const log_entry& e) {
  std::string p(1, static_cast<char>(rec_entry));
  put_u64(p, index);
  put_u64(p, e.term);
  put_u32(p, e.type);
  put_bytes(p, e.data);
  return p;
}

// A snapshot file is one record (u32 length | u32 crc32c | payload), the payload being
// index, term, configuration, configuration index and the data (put_bytes). The record's
// bytes before `data`, its checksum computed over both without copying `data`.
std::string snapshot_head(const snapshot_meta& s, std::string_view data) {
  std::string p;
  put_u64(p, s.index);
  put_u64(p, s.term);
  put_bytes(p, s.configuration);
  put_u64(p, s.configuration_index);
  put_u32(p, static_cast<std::uint32_t>(data.size()));
  std::string out;
  put_u32(out, static_cast<std::uint32_t>(p.size() + data.size()));
  put_u32(out, detail::crc32c_extend(detail::crc32c(p), data));
  out += p;
  return out;
}

bool decode_snapshot(std::string_view in, snapshot_record& s) {
  detail::reader hdr(in);
  std::uint32_t len = 0, crc = 0;
  if (!hdr.u32(len) || !hdr.u32(crc) || hdr.rest().size() != len) return false;
  if (detail::crc32c(hdr.rest()) != crc) return false;
  detail::reader r(hdr.rest());
  return r.u64(s.index) && r.u64(s.term) && r.bytes(s.configuration) && r.u64(s.configuration_index) &&
         r.bytes(s.data) && r.done();
}

status read_file(const std::string& path, std::string& out, bool& exists) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    exists = false;
    if (errno == ENOENT) return status::ok();
    return io_failure("open", path);
  }
  exists = true;
  char buf[1 << 16];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto st = io_failure("read", path);
      ::close(fd);
      return st;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return status::ok();
}

status write_fully(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    auto n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_failure("write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return status::ok();
}

status sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_failure("open", dir);
  int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? status::ok() : io_failure("fsync", dir);
}

// Writes `bytes` to `path` through a temporary file and a rename, so a crash leaves either
// the old file or the new one.
status replace_file(const std::string& dir, const std::string& path, std::initializer_list<std::string_view> pieces) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_failure("create", tmp);
  status st = status::ok();
  for (auto piece : pieces)
    if (st) st = write_fully(fd, piece, tmp);
  if (st && ::fsync(fd) != 0) st = io_failure("fsync", tmp);
  ::close(fd);
  if (!st) return st;
  if (::rename(tmp.c_str(), path.c_str()) != 0) return io_failure("rename", tmp);
  return sync_dir(dir);
}

}  // namespace

// --- memory_storage ---------------------------------------------------------------------

status memory_storage::load(persisted_state& out) {
  out = s_;
  return status::ok();
}

status memory_storage::set_term(std::uint64_t term) {
  s_.term = term;
  s_.vote = 0;
  return status::ok();
}

status memory_storage::set_vote(std::uint64_t server) {
  s_.vote = server;
  return status::ok();
}

status memory_storage::append(const std::vector<log_entry>& entries) {
  if (s_.entries.empty()) s_.first_index = last_of(s_) + 1;
  s_.entries.insert(s_.entries.end(), entries.begin(), entries.end());
  return status::ok();
}

status memory_storage::truncate(std::uint64_t index) { return truncate_state(s_, index); }

status memory_storage::put_snapshot(const snapshot_meta& s, std::string_view data, unsigned trailing) {
  snapshot_record rec;
  static_cast<snapshot_meta&>(rec) = s;
  rec.data.assign(data);
  compact(s_, std::move(rec), trailing);
  return status::ok();
}

status memory_storage::get_snapshot(std::optional<snapshot_record>& out) {
  out = s_.snapshot;
  return status::ok();
}

std::uint64_t memory_storage::last_index() const { return last_of(s_); }

// --- file_storage -----------------------------------------------------------------------

std::string file_storage::log_path() const { return dir_ + "/" + name_ + ".raftlog"; }
std::string file_storage::snap_path() const { return dir_ + "/" + name_ + ".raftsnap"; }

result<std::unique_ptr<file_storage>> file_storage::open(const std::string& dir, const std::string& name, bool sync) {
  std::unique_ptr<file_storage> fs(new file_storage(dir, name, sync));
  if (auto st = fs->read_all(); !st) return st;
  return fs;
}

file_storage::~file_storage() {
  if (fd_ >= 0) ::close(fd_);
}

status file_storage::read_all() {
  std::string snap_bytes;
  bool snap_exists = false;
  if (auto st = read_file(snap_path(), snap_bytes, snap_exists); !st) return st;
  if (snap_exists) {
    snapshot_record snap;
    if (!decode_snapshot(snap_bytes, snap)) return {code::corruption, "raft snapshot " + snap_path() + " is damaged"};
    opened_data_ = std::move(snap.data);  // for the load that follows the open
    s_.snapshot = std::move(snap);
    s_.first_index = s_.snapshot->index + 1;
  }
  std::string log;
  bool log_exists = false;
  if (auto st = read_file(log_path(), log, log_exists); !st) return st;
  std::size_t good = 0;  // bytes of whole, intact records
  detail::reader in(log);
  for (;;) {
    std::uint32_t len = 0, crc = 0;
    if (!in.u32(len) || !in.u32(crc) || in.rest().size() < len) break;
    std::string_view payload = in.rest().substr(0, len);
    if (detail::crc32c(payload) != crc || payload.empty()) break;
    detail::reader r(payload.substr(1));
    std::uint64_t v = 0;
    bool ok = true;
    switch (static_cast<std::uint8_t>(payload[0])) {
      case rec_term:
        ok = r.u64(v);
        s_.term = v;
        s_.vote = 0;
        break;
      case rec_vote: ok = r.u64(s_.vote); break;
      case rec_base:
        ok = r.u64(v);
        s_.entries.clear();
        s_.first_index = v;
        break;
      case rec_truncate: ok = r.u64(v) && (v < s_.first_index || truncate_state(s_, v).is_ok()); break;
      case rec_entry: {
        log_entry e;
        std::uint32_t type = 0;
        ok = r.u64(v) && r.u64(e.term) && r.u32(type) && r.bytes(e.data);
        e.type = static_cast<std::uint16_t>(type);
        if (ok && s_.entries.empty() && v >= s_.first_index) s_.first_index = v;
        if (ok && v != s_.first_index + s_.entries.size()) {
          return {code::corruption, "raft log " + log_path() + " has entry " + std::to_string(v) + " out of order"};
        }
        s_.entries.push_back(std::move(e));
        break;
      }
      default: ok = false;
    }
    if (!ok) return {code::corruption, "raft log " + log_path() + " has a malformed record"};
    in = detail::reader(in.rest().substr(len));
    good = log.size() - in.rest().size();
  }
  // A snapshot installed from a leader replaces the whole log; a crash between writing it
  // and rewriting the log leaves entries it covers, which are dropped here unless they
  // agree with it.
  if (s_.snapshot && !s_.entries.empty()) {
    auto si = s_.snapshot->index;
    bool agrees = si >= s_.first_index && si - s_.first_index < s_.entries.size() &&
                  s_.entries[si - s_.first_index].term == s_.snapshot->term;
    if (!agrees && s_.first_index <= si) {
      s_.entries.clear();
      s_.first_index = si + 1;
    }
  }
  fd_ = ::open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return io_failure("open", log_path());
  if (good < log.size() && ::ftruncate(fd_, static_cast<off_t>(good)) != 0) return io_failure("truncate", log_path());
  if (!log_exists) return sync_dir(dir_);
  return status::ok();
}

status file_storage::write_records(const std::string& bytes) {
  if (auto st = write_fully(fd_, bytes, log_path()); !st) return st;
  if (sync_ && ::fdatasync(fd_) != 0) return io_failure("fsync", log_path());
  return status::ok();
}

status file_storage::rewrite_log() {
  std::string bytes;
  frame(bytes, u64_record(rec_base, s_.first_index));
  frame(bytes, u64_record(rec_term, s_.term));
  frame(bytes, u64_record(rec_vote, s_.vote));
  for (std::size_t i = 0; i < s_.entries.size(); ++i) frame(bytes, entry_record(s_.first_index + i, s_.entries[i]));
  if (auto st = replace_file(dir_, log_path(), {bytes}); !st) return st;
  ::close(fd_);
  fd_ = ::open(log_path().c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) return io_failure("open", log_path());
  return status::ok();
}

status file_storage::load(persisted_state& out) {
  std::optional<snapshot_record> snap;
  if (s_.snapshot && !opened_data_.empty()) {
    // The bytes open() read and checked: not read twice at start.
    snap = *s_.snapshot;
    snap->data = std::move(opened_data_);
    std::string().swap(opened_data_);
  } else if (auto st = read_snapshot(snap); !st) {
    return st;
  }
  out = s_;
  out.snapshot = std::move(snap);
  return status::ok();
}

status file_storage::set_term(std::uint64_t term) {
  std::string bytes;
  frame(bytes, u64_record(rec_term, term));
  if (auto st = write_records(bytes); !st) return st;
  s_.term = term;
  s_.vote = 0;
  return status::ok();
}

status file_storage::set_vote(std::uint64_t server) {
  std::string bytes;
  frame(bytes, u64_record(rec_vote, server));
  if (auto st = write_records(bytes); !st) return st;
  s_.vote = server;
  return status::ok();
}

status file_storage::append(const std::vector<log_entry>& entries) {
  std::uint64_t next = last_of(s_) + 1;
  std::string bytes;
  for (std::size_t i = 0; i < entries.size(); ++i) frame(bytes, entry_record(next + i, entries[i]));
  if (auto st = write_records(bytes); !st) return st;
  if (s_.entries.empty()) s_.first_index = next;
  s_.entries.insert(s_.entries.end(), entries.begin(), entries.end());
  return status::ok();
}

status file_storage::truncate(std::uint64_t index) {
  if (index < s_.first_index) return truncate_state(s_, index);
  std::string bytes;
  frame(bytes, u64_record(rec_truncate, index));
  if (auto st = write_records(bytes); !st) return st;
  return truncate_state(s_, index);
}

status file_storage::put_snapshot(const snapshot_meta& s, std::string_view data, unsigned trailing) {
  if (data.size() > std::numeric_limits<std::uint32_t>::max() - (std::size_t{1} << 20))
    return {code::invalid_argument, "a raft snapshot of " + std::to_string(data.size()) + " bytes is over 4 GiB"};
  if (auto st = replace_file(dir_, snap_path(), {snapshot_head(s, data), data}); !st) return st;
  snapshot_record rec;
  static_cast<snapshot_meta&>(rec) = s;
  compact(s_, std::move(rec), trailing);
  std::string().swap(opened_data_);  // another snapshot's bytes now
  return rewrite_log();
}

status file_storage::read_snapshot(std::optional<snapshot_record>& out) const {
  out.reset();
  if (!s_.snapshot) return status::ok();
  std::string bytes;
  bool exists = false;
  if (auto st = read_file(snap_path(), bytes, exists); !st) return st;
  snapshot_record snap;
  if (!exists || !decode_snapshot(bytes, snap))
    return {code::corruption, "raft snapshot " + snap_path() + " is damaged"};
  out = std::move(snap);
  return status::ok();
}

status file_storage::get_snapshot(std::optional<snapshot_record>& out) { return read_snapshot(out); }

std::uint64_t file_storage::last_index() const { return last_of(s_); }

}  // namespace cellar::replica
