// store/snapshot_files.cc: the named snapshots' files and the store's set of them.
#include "store/snapshot_files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "catalog/catalog.h"
#include "persist/codec.h"
#include "persist/delta_map.h"
#include "persist/loaded_cells.h"

namespace cellar::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view cells_magic = "CELLARC1";
constexpr std::string_view manifest_magic = "cellar-snapshot 1";

status io_error(const std::string& what, const std::string& path) {
  return {code::io_error, what + " '" + path + "': " + std::strerror(errno)};
}

status corrupt(const std::string& what) { return {code::corruption, what}; }

// `pieces` written to `path` one after another (up to IOV_MAX a call), then synced.
status write_synced(const std::string& path, const std::vector<std::string_view>& pieces, bool durable = true) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create", path);
  std::vector<iovec> left;
  left.reserve(pieces.size());
  for (const auto& p : pieces)
    if (!p.empty()) left.push_back({const_cast<char*>(p.data()), p.size()});
  std::size_t first = 0;
  while (first < left.size()) {
    const int count = static_cast<int>(std::min<std::size_t>(left.size() - first, IOV_MAX));
    const ssize_t n = ::writev(fd, left.data() + first, count);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto st = io_error("cannot write", path);
      ::close(fd);
      return st;
    }
    // Past what was written: whole pieces, then part of one.
    auto written = static_cast<std::size_t>(n);
    while (first < left.size() && written >= left[first].iov_len) written -= left[first++].iov_len;
    if (written > 0) {
      left[first].iov_base = static_cast<char*>(left[first].iov_base) + written;
      left[first].iov_len -= written;
    }
  }
  if (durable && ::fdatasync(fd) != 0) {
    auto st = io_error("cannot sync", path);
    ::close(fd);
    return st;
  }
  ::close(fd);
  return status::ok();
}

status write_synced(const std::string& path, std::string_view data, bool durable = true) {
  return write_synced(path, std::vector<std::string_view>{data}, durable);
}

status sync_dir(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open directory", path);
  const int r = ::fsync(fd);
  ::close(fd);
  if (r != 0) return io_error("cannot sync directory", path);
  return status::ok();
}

result<std::string> read_whole(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return corrupt("missing file '" + path + "'");
    return io_error("cannot open", path);
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto st = io_error("cannot read", path);
      ::close(fd);
      return st;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

// The whole file mapped read-only (its pages read in at once: every byte is read next).
result<file_bytes> map_whole(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return corrupt("missing file '" + path + "'");
    return io_error("cannot open", path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    auto e = io_error("cannot stat", path);
    ::close(fd);
    return e;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return file_bytes{};
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) {
    auto e = io_error("cannot map", path);
    ::close(fd);
    return e;
  }
  ::close(fd);
  std::shared_ptr<const void> owner(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
  return file_bytes{std::move(owner), std::string_view(static_cast<const char*>(p), size)};
}

status check_file(const snapshot_manifest& m, const std::string& file, std::string_view data) {
  auto it = m.files.find(file);
  if (it == m.files.end()) return {code::not_found, "snapshot '" + m.name + "' has no file '" + file + "'"};
  if (data.size() != it->second.bytes)
    return corrupt("file '" + file + "' of snapshot '" + m.name + "' has " + std::to_string(data.size()) +
                   " bytes, its manifest says " + std::to_string(it->second.bytes));
  if (crc32c(data) != it->second.crc)
    return corrupt("file '" + file + "' of snapshot '" + m.name + "' fails its checksum");
  return status::ok();
}

bool dir_empty_or_missing(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return true;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec);
}

}  // namespace

std::string part_file_name(std::uint32_t partition) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "part-%05u.cells", partition);
  return buf;
}

snapshot_info snapshot_manifest::info() const {
  snapshot_info out;
  out.name = name;
  out.table = table;
  out.created_unix_ms = created_unix_ms;
  out.partitions = partitions;
  out.cells = cells;
  for (const auto& [n, f] : files) {
    out.cells += f.cells;
    out.bytes += f.bytes;
  }
  return out;
}

snapshot_manifest manifest_of(const std::string& name, std::int64_t now, const table_schema& schema,
                              std::uint32_t partitions, std::set<std::uint32_t>& families) {
  snapshot_manifest m;
  m.name = name;
  m.table = schema.name;
  m.created_unix_ms = now;
  m.partitions = partitions;
  for (const auto& f : schema.families) {
    m.families[f.id] = f.desc.name;
    families.insert(f.id);
  }
  return m;
}

std::string encode_manifest(const snapshot_manifest& m) {
  std::ostringstream o;
  o << manifest_magic << "\n";
  o << "kind " << m.kind << "\n";
  if (!m.name.empty()) o << "name " << m.name << "\n";
  o << "table " << m.table << "\n";
  o << "created " << m.created_unix_ms << "\n";
  o << "partitions " << m.partitions << "\n";
  for (const auto& [id, name] : m.families) o << "family " << id << " " << name << "\n";
  for (const auto& [name, f] : m.files) {
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", f.crc);
    o << "file " << name << " " << f.bytes << " " << f.cells << " " << crc << "\n";
  }
  if (!m.checkpoint.empty()) {
    o << "checkpoint " << m.checkpoint << " " << m.uid << " " << m.cells << "\n";
    for (const auto& t : m.tables) o << "checkpointed " << t << "\n";
  }
  return o.str();
}

result<snapshot_manifest> decode_manifest(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  if (!std::getline(in, line) || line != manifest_magic) return corrupt("not a cellar snapshot manifest");
  snapshot_manifest m;
  m.kind.clear();
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream l(line);
    std::string what;
    l >> what;
    bool ok = true;
    if (what == "kind") {
      ok = static_cast<bool>(l >> m.kind);
    } else if (what == "name") {
      ok = static_cast<bool>(l >> m.name);
    } else if (what == "table") {
      ok = static_cast<bool>(l >> m.table);
    } else if (what == "created") {
      ok = static_cast<bool>(l >> m.created_unix_ms);
    } else if (what == "partitions") {
      ok = static_cast<bool>(l >> m.partitions);
    } else if (what == "family") {
      std::uint32_t id = 0;
      std::string name;
      ok = static_cast<bool>(l >> id >> name) && m.families.emplace(id, name).second;
    } else if (what == "file") {
      std::string name, crc;
      snapshot_manifest::file f;
      ok = static_cast<bool>(l >> name >> f.bytes >> f.cells >> crc) && crc.size() == 8;
      if (ok) {
        f.crc = static_cast<std::uint32_t>(std::strtoul(crc.c_str(), nullptr, 16));
        ok = m.files.emplace(name, f).second;
      }
    } else if (what == "checkpoint") {
      ok = static_cast<bool>(l >> m.checkpoint >> m.uid >> m.cells);
    } else if (what == "checkpointed") {
      std::string t;
      ok = static_cast<bool>(l >> t) && m.tables.insert(t).second;
    } else if (!what.empty()) {
      ok = false;
    }
    if (!ok) return corrupt("manifest line " + std::to_string(n) + " is malformed: '" + line + "'");
  }
  if (m.kind != "snapshot" && m.kind != "bulkload") return corrupt("manifest names no known kind");
  if (m.table.empty() || m.partitions == 0) return corrupt("manifest names no table or no partitions");
  if (m.kind == "snapshot" && !m.files.count(std::string(schema_file)))
    return corrupt("snapshot manifest lists no schema file");
  if (m.kind != "snapshot" && !m.checkpoint.empty()) return corrupt("a bulk load's manifest names a checkpoint");
  if (m.checkpoint.empty() && !m.tables.empty()) return corrupt("manifest lists checkpointed tables but no checkpoint");
  // A snapshot kept as a checkpoint has no part files.
  for (std::uint32_t p = 0; p < m.partitions && m.checkpoint.empty(); ++p)
    if (!m.files.count(part_file_name(p))) return corrupt("manifest lists no file for partition " + std::to_string(p));
  return m;
}

std::string cell_file_header() {
  std::string out(cells_magic);
  return out;
}

namespace {

// Whether the cell at encoded key `key` belongs to one of `families` (empty: all).
bool in_families(std::string_view key, const std::set<std::uint32_t>& families) {
  if (families.empty()) return true;
  reader r(key);
  std::uint32_t fid = 0;
  return r.u32(fid) && families.count(fid) > 0;
}

}  // namespace

std::string encode_cells(const delta_map& cells, const std::set<std::uint32_t>& families, std::uint64_t* count) {
  std::string out = cell_file_header();
  std::uint64_t n = 0;
  for (auto it = cells.begin(); it != cells.end(); ++it) {
    if (!it->second.present || !in_families(it->first.bytes, families)) continue;
    append_cell_record(out, it->first.bytes, it->second.expires_at, it->second.value());
    ++n;
  }
  if (count) *count = n;
  return out;
}

result<std::vector<std::string_view>> cell_file_pieces(const record_chunks& cells,
                                                       const std::set<std::uint32_t>& families, std::uint64_t* count,
                                                       std::deque<std::string>& scratch, bool header) {
  static const delta_map none;
  const delta_map& changes = cells.changes ? *cells.changes : none;
  std::vector<std::string_view> pieces;
  if (header) pieces.push_back(cells_magic);
  std::uint64_t n = 0;
  auto c = changes.begin();
  auto emit_change = [&] {
    if (c->second.present && in_families(c->first.bytes, families)) {
      append_cell_record(scratch.emplace_back(), c->first.bytes, c->second.expires_at, c->second.value());
      pieces.push_back(scratch.back());
      ++n;
    }
  };
  std::string_view previous;  // the last chunk key taken
  bool any = false, in_order = true;
  for (const std::string_view chunk : cells.chunks) {
    std::size_t run = 0;  // where the run of the chunk's bytes not yet in `pieces` starts
    auto close_run = [&](std::size_t at) {
      if (at > run) pieces.push_back(chunk.substr(run, at - run));
    };
    cell_record_reader r(chunk);
    std::string_view key, value;
    std::int64_t expires = 0;
    while (r.next(key, expires, value)) {
      const auto begin = static_cast<std::size_t>(key.data() - chunk.data()) - 4;
      const auto end = static_cast<std::size_t>(value.data() + value.size() - chunk.data());
      if (any && key.compare(previous) <= 0) {
        in_order = false;
        break;
      }
      any = true;
      previous = key;
      bool replaced = false;
      // The changes ordered before `key`; one at `key` replaces its record.
      if (c != changes.end() && c->first.bytes.compare(key) <= 0) {
        close_run(begin);
        run = begin;
        for (; c != changes.end() && c->first.bytes.compare(key) <= 0; ++c) {
          replaced = replaced || c->first.bytes == key;
          emit_change();
        }
      }
      if (replaced || !in_families(key, families)) {
        close_run(begin);
        run = end;
      } else {
        ++n;
      }
    }
    if (r.failed()) return corrupt("a copied chunk of cells is malformed");
    if (!in_order) break;
    close_run(chunk.size());
  }
  if (in_order) {
    for (; c != changes.end(); ++c) emit_change();
    if (count) *count = n;
    return pieces;
  }
  // Out of order after all: merged into one map, then encoded as one piece.
  delta_map merged;
  for (const std::string_view chunk : cells.chunks) {
    cell_record_reader r(chunk);
    std::string_view key, value;
    std::int64_t expires = 0;
    while (r.next(key, expires, value)) merged.put(key, expires, value);
    if (r.failed()) return corrupt("a copied chunk of cells is malformed");
  }
  for (auto it = changes.begin(); it != changes.end(); ++it) {
    if (it->second.present)
      merged.put(it->first.bytes, it->second.expires_at, it->second.value());
    else
      merged.erase(it->first.bytes);
  }
  scratch.push_back(encode_cells(merged, families, count));
  std::string_view whole = scratch.back();
  if (!header) whole.remove_prefix(cells_magic.size());
  return std::vector<std::string_view>{whole};
}

result<std::string_view> cell_records(std::string_view file) {
  if (file.substr(0, cells_magic.size()) != cells_magic) return corrupt("not a cellar cell file");
  return file.substr(cells_magic.size());
}

status for_each_cell(
    std::string_view file,
    const std::function<status(std::string_view key, std::int64_t expires_at, std::string_view value)>& each) {
  auto records = cell_records(file);
  if (!records) return records.error();
  cell_record_reader r(*records);
  std::uint64_t n = 0;
  std::string_view key, value;
  std::int64_t expires = 0;
  while (r.next(key, expires, value)) {
    if (auto st = each(key, expires, value); !st) return st;
    ++n;
  }
  if (r.failed()) return corrupt("cell file is cut short after " + std::to_string(n) + " cells");
  return status::ok();
}

status check_snapshot_name(std::string_view name) {
  if (auto st = check_name("snapshot", name); !st) return st;
  if (name.front() == '.') return {code::invalid_argument, "a snapshot name may not start with '.'"};
  return status::ok();
}

status create_snapshot_dir(const std::string& dir) {
  std::error_code ec;
  if (!dir_empty_or_missing(dir)) return {code::already_exists, "directory '" + dir + "' is not empty"};
  fs::create_directories(dir, ec);
  if (ec) return {code::io_error, "cannot create directory '" + dir + "': " + ec.message()};
  return status::ok();
}

status write_snapshot_file(const std::string& dir, const std::string& file, std::string_view data, bool durable) {
  return write_synced(dir + "/" + file, data, durable);
}

status write_snapshot_manifest(const std::string& dir, const snapshot_manifest& m, bool durable) {
  if (auto st = write_synced(dir + "/" + std::string(manifest_file), encode_manifest(m), durable); !st) return st;
  return durable ? sync_dir(dir) : status::ok();
}

result<snapshot_manifest> read_manifest_dir(const std::string& dir) {
  auto text = read_whole(dir + "/" + std::string(manifest_file));
  if (!text) return text.error();
  return decode_manifest(*text);
}

result<std::string> read_file_checked(const std::string& dir, const snapshot_manifest& m, const std::string& file) {
  auto data = read_whole(dir + "/" + file);
  if (!data) return data.error();
  if (auto st = check_file(m, file, *data); !st) return st;
  return data;
}

result<file_bytes> map_file_checked(const std::string& dir, const snapshot_manifest& m, const std::string& file) {
  auto data = map_whole(dir + "/" + file);
  if (!data) return data.error();
  if (auto st = check_file(m, file, data->data); !st) return st;
  return data;
}

status verify_dir(const std::string& dir, const snapshot_manifest& m) {
  for (const auto& [name, f] : m.files)
    if (auto r = map_file_checked(dir, m, name); !r) return r.error();
  return status::ok();
}

std::shared_ptr<delta_map> to_cells(const loaded_cells& lc) {
  auto out = std::make_shared<delta_map>();
  cell_record_reader in(lc.records());
  std::string_view key, value;
  std::int64_t expires = 0;
  key_parts k;
  std::string row_scratch, qualifier_scratch;
  while (in.next(key, expires, value)) {
    if (!decode_cell_key(key, k, row_scratch, qualifier_scratch)) continue;  // a checked file has none
    std::uint32_t family = 0;
    for (const auto& [from, to] : lc.ids())
      if (from == k.family) family = to;
    out->put(encode_cell_key(family, k.row, k.qualifier, k.ts), expires, value);
  }
  return out;
}

// --- snapshot_repo ----------------------------------------------------------------------------

snapshot_repo::snapshot_repo(std::string store_dir) : dir_(std::move(store_dir)) {
  if (dir_.empty()) return;
  // Hidden directories are snapshots a crash cut short while written or removed.
  std::error_code ec;
  if (!fs::is_directory(root(), ec)) return;
  for (const auto& e : fs::directory_iterator(root(), ec))
    if (e.path().filename().string().front() == '.') fs::remove_all(e.path(), ec);
}

status snapshot_repo::claim(const std::string& name) {
  absl::MutexLock lock(&mu_);
  std::error_code ec;
  if (writing_.count(name) || memory_.count(name) || (!dir_.empty() && fs::exists(path(name), ec)))
    return {code::already_exists, "snapshot '" + name + "' already exists"};
  writing_.insert(name);
  return status::ok();
}

void snapshot_repo::release(const std::string& name) {
  absl::MutexLock lock(&mu_);
  writing_.erase(name);
}

status snapshot_repo::put(const snapshot_manifest& m, const std::map<std::string, std::string>& files) {
  return put_streamed(m.name, [&](snapshot_writer& w) -> result<snapshot_manifest> {
    for (const auto& [file, data] : files)
      if (auto st = w.append(file, data); !st) return st;
    return m;
  });
}
namespace {

// A snapshot's files in memory (a memory-only store's).
class memory_writer final : public snapshot_writer {
 public:
  status append(const std::string& file, std::string_view data) override {
    files_[file].append(data);
    return status::ok();
  }
  result<file_bytes> contents(const std::string& file) override { return file_bytes{nullptr, files_[file]}; }
  status replace(const std::string& file, const std::vector<std::string_view>& pieces) override {
    std::string now;
    for (const auto& p : pieces) now.append(p);
    files_[file] = std::move(now);
    return status::ok();
  }
  std::map<std::string, std::string> take() { return std::move(files_); }

 private:
  std::map<std::string, std::string> files_;
};

// A snapshot's files in a staging directory, each kept open while it is appended to.
class dir_writer final : public snapshot_writer {
 public:
  explicit dir_writer(std::string dir) : dir_(std::move(dir)) {}
  ~dir_writer() override {
    for (const auto& [file, fd] : open_) ::close(fd);
  }
  status append(const std::string& file, std::string_view data) override {
    auto it = open_.find(file);
    if (it == open_.end()) {
      const std::string path = dir_ + "/" + file;
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) return io_error("cannot create", path);
      it = open_.emplace(file, fd).first;
    }
    while (!data.empty()) {
      const ssize_t n = ::write(it->second, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return io_error("cannot write", dir_ + "/" + file);
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return status::ok();
  }
  result<file_bytes> contents(const std::string& file) override { return map_whole(dir_ + "/" + file); }
  status replace(const std::string& file, const std::vector<std::string_view>& pieces) override {
    // Written beside it and renamed over it: the pieces may view its mapping.
    const std::string path = dir_ + "/" + file, next = path + ".next";
    if (auto it = open_.find(file); it != open_.end()) {
      ::close(it->second);
      open_.erase(it);
    }
    if (auto st = write_synced(next, pieces); !st) return st;
    std::error_code ec;
    fs::rename(next, path, ec);
    if (ec) return {code::io_error, "cannot rename '" + next + "': " + ec.message()};
    return status::ok();
  }
  // Every file appended to, synced and closed.
  status finish() {
    status st;
    for (const auto& [file, fd] : open_) {
      if (st && ::fdatasync(fd) != 0) st = io_error("cannot sync", dir_ + "/" + file);
      ::close(fd);
    }
    open_.clear();
    return st;
  }

 private:
  const std::string dir_;
  std::map<std::string, int> open_;
};

}  // namespace

status write_dir_files(const std::string& dir, const std::function<status(snapshot_writer&)>& write) {
  dir_writer w(dir);
  status st = write(w);
  status synced = w.finish();
  return st ? synced : st;
}

// --- cell_file_writer -------------------------------------------------------------------------

status cell_file_writer::append(const std::vector<std::string_view>& pieces) {
  for (const auto& piece : pieces) {
    if (auto st = w_->append(file_, piece); !st) return st;
    f_.bytes += piece.size();
    f_.crc = crc32c_extend(f_.crc, piece);
  }
  return status::ok();
}

status cell_file_writer::begin() { return append({cell_file_header()}); }

status cell_file_writer::add(std::string_view records, const std::string& last_key) {
  cell_record_reader first(records);
  std::string_view key, value;
  std::int64_t expires = 0;
  if (!last_.empty() && first.next(key, expires, value) && key.compare(last_) <= 0) disordered_ = true;
  last_ = last_key;
  std::deque<std::string> scratch;
  std::uint64_t cells = 0;
  auto pieces = cell_file_pieces({{records}, nullptr}, *families_, &cells, scratch, false);
  if (!pieces) return pieces.error();
  f_.cells += cells;
  return append(*pieces);
}

status cell_file_writer::finish(const std::shared_ptr<const delta_map>& changes) {
  if ((!changes || changes->empty()) && !disordered_) return status::ok();
  auto now = w_->contents(file_);
  if (!now) return now.error();
  auto records = cell_records(now->data);
  if (!records) return records.error();
  std::deque<std::string> scratch;
  snapshot_manifest::file again;
  auto pieces = cell_file_pieces({{*records}, changes}, *families_, &again.cells, scratch);
  if (!pieces) return pieces.error();
  for (const auto& piece : *pieces) {
    again.bytes += piece.size();
    again.crc = crc32c_extend(again.crc, piece);
  }
  if (auto st = w_->replace(file_, *pieces); !st) return st;
  f_ = again;
  return status::ok();
}

status snapshot_repo::put_streamed(const std::string& name,
                                   const std::function<result<snapshot_manifest>(snapshot_writer&)>& make) {
  if (auto st = claim(name); !st) return st;
  auto named = [&name](result<snapshot_manifest> m) -> result<snapshot_manifest> {
    if (m && m->name != name) return status{code::internal, "a streamed snapshot's manifest names another snapshot"};
    return m;
  };
  status st;
  if (dir_.empty()) {
    memory_writer w;
    auto m = named(make(w));
    if (m) {
      absl::MutexLock lock(&mu_);
      memory_[name] = held{std::move(*m), w.take()};
    } else {
      st = m.error();
    }
  } else {
    const std::string tmp = root() + "/.new-" + name;
    std::error_code ec;
    fs::remove_all(tmp, ec);
    st = create_snapshot_dir(tmp);
    if (st) {
      dir_writer w(tmp);
      auto m = named(make(w));
      status written = m ? w.finish() : m.error();
      if (written) written = write_snapshot_manifest(tmp, *m, true);
      st = publish(tmp, name, written);
    }
  }
  release(name);
  return st;
}

status snapshot_repo::publish(const std::string& tmp, const std::string& name, status written) {
  status st = std::move(written);
  std::error_code ec;
  if (st) {
    fs::rename(tmp, path(name), ec);
    if (ec) st = {code::io_error, "cannot rename '" + tmp + "': " + ec.message()};
  }
  if (st) st = sync_dir(root());
  if (!st) fs::remove_all(tmp, ec);
  return st;
}

status snapshot_repo::begin_staged(const std::string& name) {
  if (auto st = check_snapshot_name(name); !st) return st;
  if (manifest(name))
    if (auto st = remove(name); !st) return st;
  absl::MutexLock lock(&mu_);
  if (writing_.count(name)) return {code::already_exists, "snapshot '" + name + "' is being written"};
  if (dir_.empty()) {
    staged_[name].clear();
    return status::ok();
  }
  const std::string tmp = root() + "/.new-" + name;
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return create_snapshot_dir(tmp);
}

namespace {

bool staged_file_name(const std::string& file) {
  return !file.empty() && file.find('/') == std::string::npos && file[0] != '.';
}

// Writes `data` into `path` at `offset`: 0 creates the file anew, any other must be its size.
status write_piece(const std::string& path, std::string_view data, std::uint64_t offset) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (offset == 0 ? O_TRUNC : 0), 0644);
  if (fd < 0) return io_error("cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    auto e = io_error("cannot stat", path);
    ::close(fd);
    return e;
  }
  if (static_cast<std::uint64_t>(st.st_size) != offset) {
    ::close(fd);
    return {code::invalid_argument, "a piece of '" + path + "' at " + std::to_string(offset) + " does not follow its " +
                                        std::to_string(st.st_size) + " bytes"};
  }
  auto at = static_cast<off_t>(offset);
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd, data.data(), data.size(), at);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto e = io_error("cannot write", path);
      ::close(fd);
      return e;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
    at += n;
  }
  ::close(fd);
  return status::ok();
}

// Syncs every file of directory `dir`.
status sync_files(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string path = e.path().string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error("cannot open", path);
    const int r = ::fdatasync(fd);
    ::close(fd);
    if (r != 0) return io_error("cannot sync", path);
  }
  if (ec) return {code::io_error, "cannot list '" + dir + "': " + ec.message()};
  return status::ok();
}

// Up to `max` bytes of `path` from `offset`.
result<std::string> read_at(const std::string& path, std::uint64_t offset, std::uint64_t max) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return status{code::not_found, "no file '" + path + "'"};
    return io_error("cannot open", path);
  }
  std::string out(max, '\0');
  std::size_t got = 0;
  while (got < max) {
    const ssize_t n = ::pread(fd, out.data() + got, max - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      auto e = io_error("cannot read", path);
      ::close(fd);
      return e;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

}  // namespace

status snapshot_repo::stage(const std::string& name, const std::string& file, std::string_view data,
                            std::uint64_t offset) {
  if (auto st = check_snapshot_name(name); !st) return st;
  if (!staged_file_name(file)) return {code::invalid_argument, "'" + file + "' is not a snapshot file name"};
  if (dir_.empty()) {
    absl::MutexLock lock(&mu_);
    auto it = staged_.find(name);
    if (it == staged_.end()) return {code::not_found, "snapshot '" + name + "' is not being staged"};
    std::string& now = it->second[file];
    if (offset == 0) now.clear();
    if (now.size() != offset)
      return {code::invalid_argument, "a piece of '" + file + "' at " + std::to_string(offset) +
                                          " does not follow its " + std::to_string(now.size()) + " bytes"};
    now.append(data);
    return status::ok();
  }
  const std::string tmp = root() + "/.new-" + name;
  std::error_code ec;
  if (!fs::is_directory(tmp, ec)) return {code::not_found, "snapshot '" + name + "' is not being staged"};
  return write_piece(tmp + "/" + file, data, offset);
}

result<std::string> snapshot_repo::read_piece(const std::string& name, const std::string& file, std::uint64_t offset,
                                              std::uint64_t max, bool staged) const {
  if (auto st = check_snapshot_name(name); !st) return st;
  if (!staged_file_name(file)) return status{code::invalid_argument, "'" + file + "' is not a snapshot file name"};
  if (dir_.empty()) {
    absl::MutexLock lock(&mu_);
    const std::map<std::string, std::string>* files = nullptr;
    if (staged) {
      if (auto it = staged_.find(name); it != staged_.end()) files = &it->second;
    } else if (auto it = memory_.find(name); it != memory_.end()) {
      files = &it->second.files;
    }
    if (!files || !files->count(file))
      return status{code::not_found, "snapshot '" + name + "' has no file '" + file + "' here"};
    const std::string& data = files->at(file);
    if (offset >= data.size()) return std::string();
    return data.substr(offset, max);
  }
  return read_at((staged ? root() + "/.new-" + name : path(name)) + "/" + file, offset, max);
}

status snapshot_repo::commit_staged(const snapshot_manifest& m) {
  if (auto st = claim(m.name); !st) return st;
  status st;
  if (dir_.empty()) {
    absl::MutexLock lock(&mu_);
    auto it = staged_.find(m.name);
    if (it == staged_.end()) {
      st = {code::not_found, "snapshot '" + m.name + "' is not being staged"};
    } else {
      memory_[m.name] = held{m, std::move(it->second)};
      staged_.erase(it);
    }
  } else {
    const std::string tmp = root() + "/.new-" + m.name;
    status synced = sync_files(tmp);
    st = publish(tmp, m.name, synced ? write_snapshot_manifest(tmp, m, true) : synced);
  }
  release(m.name);
  return st;
}

status snapshot_repo::write_staged(const std::string& name, const std::function<status(snapshot_writer&)>& write) {
  if (auto st = check_snapshot_name(name); !st) return st;
  if (dir_.empty()) {
    {
      absl::MutexLock lock(&mu_);
      if (!staged_.count(name)) return {code::not_found, "snapshot '" + name + "' is not being staged"};
    }
    memory_writer w;
    if (auto st = write(w); !st) return st;
    absl::MutexLock lock(&mu_);
    auto it = staged_.find(name);
    if (it == staged_.end()) return {code::not_found, "snapshot '" + name + "' is not being staged"};
    for (auto& [file, data] : w.take()) it->second[file] = std::move(data);
    return status::ok();
  }
  const std::string tmp = root() + "/.new-" + name;
  std::error_code ec;
  if (!fs::is_directory(tmp, ec)) return {code::not_found, "snapshot '" + name + "' is not being staged"};
  dir_writer w(tmp);
  status st = write(w);
  status synced = w.finish();
  return st ? synced : st;
}

void snapshot_repo::abandon_staged(const std::string& name) {
  if (!check_snapshot_name(name)) return;
  if (dir_.empty()) {
    absl::MutexLock lock(&mu_);
    staged_.erase(name);
    return;
  }
  std::error_code ec;
  fs::remove_all(root() + "/.new-" + name, ec);
}

status snapshot_repo::put_from_dir(const snapshot_manifest& m, const std::string& dir) {
  // A file at a time, each mapped and checked as it is copied.
  return put_streamed(m.name, [&](snapshot_writer& w) -> result<snapshot_manifest> {
    for (const auto& [name, f] : m.files) {
      auto data = map_file_checked(dir, m, name);
      if (!data) return data.error();
      if (auto st = w.append(name, data->data); !st) return st;
    }
    return m;
  });
}

result<snapshot_manifest> snapshot_repo::manifest(const std::string& name) const {
  if (!check_snapshot_name(name)) return status{code::not_found, "snapshot '" + name + "' does not exist"};
  if (dir_.empty()) {
    absl::MutexLock lock(&mu_);
    auto it = memory_.find(name);
    if (it == memory_.end()) return status{code::not_found, "snapshot '" + name + "' does not exist"};
    return it->second.m;
  }
  std::error_code ec;
  if (!fs::is_directory(path(name), ec)) return status{code::not_found, "snapshot '" + name + "' does not exist"};
  return read_manifest_dir(path(name));
}

result<std::string> snapshot_repo::read(const std::string& name, const std::string& file) const {
  auto m = manifest(name);
  if (!m) return m.error();
  if (dir_.empty()) {
    absl::MutexLock lock(&mu_);
    auto it = memory_.find(name);
    if (it == memory_.end()) return status{code::not_found, "snapshot '" + name + "' does not exist"};
    auto f = it->second.files.find(file);
    if (f == it->second.files.end()) return status{code::not_found, "snapshot '" + name + "' has no '" + file + "'"};
    return f->second;
  }
  return read_file_checked(path(name), *m, file);
}

result<file_bytes> snapshot_repo::map(const std::string& name, const std::string& file) const {
  if (dir_.empty()) {
    auto data = read(name, file);
    if (!data) return data.error();
    auto held = std::make_shared<const std::string>(std::move(*data));
    return file_bytes{held, *held};
  }
  auto m = manifest(name);
  if (!m) return m.error();
  return map_file_checked(path(name), *m, file);
}

status snapshot_repo::verify(const std::string& name) const {
  auto m = manifest(name);
  if (!m) return m.error();
  if (dir_.empty()) return status::ok();
  return verify_dir(path(name), *m);
}

result<std::vector<snapshot_manifest>> snapshot_repo::list() const {
  std::vector<snapshot_manifest> out;
  if (dir_.empty()) {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, h] : memory_) out.push_back(h.m);
    return out;
  }
  std::error_code ec;
  if (!fs::is_directory(root(), ec)) return out;
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(root(), ec)) {
    const std::string n = e.path().filename().string();
    if (n.front() != '.') names.insert(n);
  }
  for (const auto& n : names) {
    auto m = read_manifest_dir(path(n));
    if (!m) return m.error();
    out.push_back(std::move(*m));
  }
  return out;
}

status snapshot_repo::remove(const std::string& name) {
  if (auto m = manifest(name); !m) return m.error();
  if (dir_.empty()) {
    absl::MutexLock lock(&mu_);
    memory_.erase(name);
    return status::ok();
  }
  // Renamed away first, so a crash while the files go leaves no half snapshot listed.
  std::error_code ec;
  const std::string gone = root() + "/.del-" + name;
  fs::remove_all(gone, ec);
  fs::rename(path(name), gone, ec);
  if (ec) return {code::io_error, "cannot remove snapshot '" + name + "': " + ec.message()};
  if (auto st = sync_dir(root()); !st) return st;
  fs::remove_all(gone, ec);
  return status::ok();
}

}  // namespace cellar::detail
