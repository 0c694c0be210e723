// persist/wt_file_system.cc: a WT_FILE_SYSTEM over cellar::env (see the header).
#include "persist/wt_file_system.h"

#include "persist/wt_compressors.h"

#include <dlfcn.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

extern "C" int cellar_wt_file_system_init(WT_CONNECTION* conn, WT_CONFIG_ARG* config);

namespace cellar::detail {

namespace {

// The env of the wiredtiger_open running on this thread: the extension is called from
// inside it, on the same thread.
thread_local const std::shared_ptr<env>* opening_env = nullptr;

// WiredTiger's structs extended with ours (WiredTiger hands back the base pointer).
struct fs_impl : WT_FILE_SYSTEM {
  fs_impl() : WT_FILE_SYSTEM{} {}
  std::shared_ptr<env> e;
};

// WiredTiger opens a handle on one thread and uses it from others (eviction, checkpoint),
// handing it over under locks of its own. `calls` makes that hand-over a visible one: each
// call on the handle is an acquire-release step on it, so a tool that sees only the
// program's own synchronisation (ThreadSanitizer) orders the calls as WiredTiger does. One
// uncontended atomic add per file operation, beside a system call.
struct fh_impl : WT_FILE_HANDLE {
  fh_impl() : WT_FILE_HANDLE{} {}
  std::unique_ptr<file> f;
  std::atomic<std::uint64_t> calls{0};

  fh_impl* enter() {
    calls.fetch_add(1, std::memory_order_acq_rel);
    return this;
  }
};

env& env_of(WT_FILE_SYSTEM* fs) { return *static_cast<fs_impl*>(fs)->e; }
file& file_of(WT_FILE_HANDLE* fh) { return *static_cast<fh_impl*>(fh)->enter()->f; }

std::string parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

int list(WT_FILE_SYSTEM* fs, const char* directory, const char* prefix, char*** dirlist, std::uint32_t* countp,
         bool single) {
  *dirlist = nullptr;
  *countp = 0;
  std::vector<std::string> names;
  if (int err = env_of(fs).children(directory, &names); err != 0) return err;
  std::vector<const std::string*> keep;
  for (const auto& n : names)
    if (!prefix || n.rfind(prefix, 0) == 0) {
      keep.push_back(&n);
      if (single) break;
    }
  if (keep.empty()) return 0;
  auto** out = static_cast<char**>(std::calloc(keep.size(), sizeof(char*)));
  if (!out) return ENOMEM;
  for (std::size_t i = 0; i < keep.size(); ++i) {
    out[i] = ::strdup(keep[i]->c_str());
    if (!out[i]) {
      for (std::size_t j = 0; j < i; ++j) std::free(out[j]);
      std::free(out);
      return ENOMEM;
    }
  }
  *dirlist = out;
  *countp = static_cast<std::uint32_t>(keep.size());
  return 0;
}

int fs_directory_list(WT_FILE_SYSTEM* fs, WT_SESSION*, const char* directory, const char* prefix, char*** dirlist,
                      std::uint32_t* countp) {
  return list(fs, directory, prefix, dirlist, countp, false);
}

int fs_directory_list_single(WT_FILE_SYSTEM* fs, WT_SESSION*, const char* directory, const char* prefix,
                             char*** dirlist, std::uint32_t* countp) {
  return list(fs, directory, prefix, dirlist, countp, true);
}

int fs_directory_list_free(WT_FILE_SYSTEM*, WT_SESSION*, char** dirlist, std::uint32_t count) {
  if (!dirlist) return 0;
  for (std::uint32_t i = 0; i < count; ++i) std::free(dirlist[i]);
  std::free(dirlist);
  return 0;
}

int fs_exist(WT_FILE_SYSTEM* fs, WT_SESSION*, const char* name, bool* existp) {
  return env_of(fs).exists(name, existp);
}

int fs_remove(WT_FILE_SYSTEM* fs, WT_SESSION*, const char* name, std::uint32_t flags) {
  if (int err = env_of(fs).remove(name); err != 0) return err;
  return (flags & WT_FS_DURABLE) != 0 ? env_of(fs).sync_dir(parent_of(name)) : 0;
}

int fs_rename(WT_FILE_SYSTEM* fs, WT_SESSION*, const char* from, const char* to, std::uint32_t flags) {
  if (int err = env_of(fs).rename(from, to); err != 0) return err;
  if ((flags & WT_FS_DURABLE) == 0) return 0;
  // Both directories: WiredTiger renames within its home, so usually one sync.
  const auto a = parent_of(from), b = parent_of(to);
  if (int err = env_of(fs).sync_dir(a); err != 0) return err;
  return a == b ? 0 : env_of(fs).sync_dir(b);
}

int fs_size(WT_FILE_SYSTEM* fs, WT_SESSION*, const char* name, wt_off_t* sizep) {
  std::uint64_t n = 0;
  if (int err = env_of(fs).file_size(name, &n); err != 0) return err;
  *sizep = static_cast<wt_off_t>(n);
  return 0;
}

int fs_terminate(WT_FILE_SYSTEM* fs, WT_SESSION*) {
  delete static_cast<fs_impl*>(fs);
  return 0;
}

int fh_close(WT_FILE_HANDLE* fh, WT_SESSION*) {
  auto* h = static_cast<fh_impl*>(fh)->enter();
  const int err = h->f->close();
  std::free(h->name);
  delete h;
  return err;
}

int fh_lock(WT_FILE_HANDLE* fh, WT_SESSION*, bool on) { return file_of(fh).lock(on); }

int fh_read(WT_FILE_HANDLE* fh, WT_SESSION*, wt_off_t offset, size_t len, void* buf) {
  std::size_t got = 0;
  if (int err = file_of(fh).read(static_cast<std::uint64_t>(offset), buf, len, &got); err != 0) {
    spdlog::error("cellar: read {} bytes at {} of {}: {}", len, offset, fh->name, std::strerror(err));
    return err;
  }
  if (got != len) {
    // As WiredTiger's own: a block cut short is damage.
    spdlog::error("cellar: read {} bytes at {} of {}: only {} there", len, offset, fh->name, got);
    return WT_ERROR;
  }
  return 0;
}

int fh_size(WT_FILE_HANDLE* fh, WT_SESSION*, wt_off_t* sizep) {
  std::uint64_t n = 0;
  if (int err = file_of(fh).size(&n); err != 0) return err;
  *sizep = static_cast<wt_off_t>(n);
  return 0;
}

int fh_sync(WT_FILE_HANDLE* fh, WT_SESSION*) {
  const int err = file_of(fh).sync();
  if (err != 0) spdlog::error("cellar: sync {}: {}", fh->name, std::strerror(err));
  return err;
}

int fh_sync_nowait(WT_FILE_HANDLE* fh, WT_SESSION*) { return file_of(fh).start_writeback(); }

int fh_truncate(WT_FILE_HANDLE* fh, WT_SESSION*, wt_off_t offset) {
  return file_of(fh).truncate(static_cast<std::uint64_t>(offset));
}

int fh_write(WT_FILE_HANDLE* fh, WT_SESSION*, wt_off_t offset, size_t length, const void* buf) {
  const int err = write_all(file_of(fh), static_cast<std::uint64_t>(offset), buf, length);
  if (err != 0) spdlog::error("cellar: write {} bytes at {} of {}: {}", length, offset, fh->name, std::strerror(err));
  return err;
}

int fs_open_file(WT_FILE_SYSTEM* fs, WT_SESSION*, const char* name, WT_FS_OPEN_FILE_TYPE type, std::uint32_t flags,
                 WT_FILE_HANDLE** out) {
  *out = nullptr;
  open_flags o;
  o.directory = type == WT_FS_OPEN_FILE_TYPE_DIRECTORY;
  o.create = (flags & WT_FS_OPEN_CREATE) != 0;
  o.exclusive = (flags & WT_FS_OPEN_EXCLUSIVE) != 0;
  o.read_only = (flags & WT_FS_OPEN_READONLY) != 0;
  std::unique_ptr<file> f;
  if (int err = env_of(fs).open(name, o, &f); err != 0) return err;
  // A new file's name must survive a crash when WiredTiger asks for it.
  if (o.create && (flags & WT_FS_OPEN_DURABLE) != 0)
    if (int err = env_of(fs).sync_dir(parent_of(name)); err != 0) return err;
  auto h = std::make_unique<fh_impl>();
  h->f = std::move(f);
  h->file_system = fs;
  h->name = ::strdup(name);
  if (!h->name) return ENOMEM;
  h->close = fh_close;
  h->fh_lock = fh_lock;
  h->fh_read = fh_read;
  h->fh_size = fh_size;
  if (!o.read_only) {
    h->fh_sync = fh_sync;
    h->fh_sync_nowait = fh_sync_nowait;
    h->fh_truncate = fh_truncate;
    h->fh_write = fh_write;
  } else if (o.directory) {
    h->fh_sync = fh_sync;  // a directory is opened read-only to sync its entries
  }
  *out = h->enter();
  h.release();
  return 0;
}

}  // namespace

int wt_open(const std::string& home, WT_EVENT_HANDLER* handler, const std::string& config,
            const std::shared_ptr<env>& e, WT_CONNECTION** conn, std::string* message) {
  // The symbol WiredTiger will look for in the program ("local"). The extension also
  // registers the block compressors (persist/wt_compressors.h), so without it only
  // uncompressed tables can be read.
  if (::dlsym(RTLD_DEFAULT, "cellar_wt_file_system_init") == nullptr) {
    if (e == env::posix()) {
      const int ret = wiredtiger_open(home.c_str(), handler, config.c_str(), conn);  // WiredTiger's own code
      if (ret != 0)
        *message = "this program does not export cellar_wt_file_system_init, so compressed tables cannot be read";
      return ret;
    }
    *message =
        "this program does not export cellar_wt_file_system_init (link with "
        "-Wl,--export-dynamic-symbol=cellar_wt_file_system_init), so WiredTiger cannot use the store's env";
    return EINVAL;
  }
  const std::string cfg = config + ",extensions=[local={entry=cellar_wt_file_system_init,early_load=true}]";
  opening_env = &e;
  const int ret = wiredtiger_open(home.c_str(), handler, cfg.c_str(), conn);
  opening_env = nullptr;
  return ret;
}

bool wt_compression_available() { return ::dlsym(RTLD_DEFAULT, "cellar_wt_file_system_init") != nullptr; }

}  // namespace cellar::detail

extern "C" int cellar_wt_file_system_init(WT_CONNECTION* conn, WT_CONFIG_ARG*) {
  using namespace cellar::detail;
  if (!opening_env) return EINVAL;  // loaded by something other than wt_open
  if (int ret = add_compressors(conn); ret != 0) return ret;
  if (*opening_env == cellar::env::posix()) return 0;  // WiredTiger's own file system does the same calls
  auto* fs = new fs_impl();
  fs->e = *opening_env;
  fs->fs_directory_list = fs_directory_list;
  fs->fs_directory_list_single = fs_directory_list_single;
  fs->fs_directory_list_free = fs_directory_list_free;
  fs->fs_exist = fs_exist;
  fs->fs_open_file = fs_open_file;
  fs->fs_remove = fs_remove;
  fs->fs_rename = fs_rename;
  fs->fs_size = fs_size;
  fs->terminate = fs_terminate;
  if (int ret = conn->set_file_system(conn, fs, nullptr); ret != 0) {
    delete fs;
    return ret;
  }
  return 0;
}
