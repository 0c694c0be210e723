// tests/persist/fault_env.h: a cellar::env (cellar/env.h) that fails chosen calls, as
// LevelDB's fault_injection_test does with its Env.
//
// Wraps env::posix(). A rule names an operation, a piece of the path (the redo log's
// files hold "log-", WiredTiger's data files end in ".wt", its own log starts
// "WiredTigerLog"), the errno to return, how many matching calls pass first and how many
// then fail. A failing write may first write part of its bytes (`partial`): with errno 0
// that is a plain short write, which callers must continue.
#pragma once

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cellar/env.h"

namespace fault {

enum class op { open, read, write, sync, truncate, remove, rename };

struct rule {
  op what;
  std::string path_contains;
  int err = EIO;
  int after = 0;            // matching calls that pass first
  int times = -1;           // then this many fail; -1: all
  std::size_t partial = 0;  // writes: bytes written before failing (at most the request)
};

class fault_env final : public cellar::env {
 public:
  fault_env() : base_(cellar::env::posix()) {}

  void add(rule r) {
    std::lock_guard l(mu_);
    rules_.push_back({std::move(r), 0});
  }
  void clear() {
    std::lock_guard l(mu_);
    rules_.clear();
  }
  // Calls made to fail so far.
  int injected() const { return injected_.load(); }

  // The rule that fails this call, if one does: its errno and partial bytes.
  bool should_fail(op what, const std::string& path, int* err, std::size_t* partial) {
    std::lock_guard l(mu_);
    for (auto& [r, seen] : rules_) {
      if (r.what != what || path.find(r.path_contains) == std::string::npos) continue;
      const int n = seen++;
      if (n < r.after || (r.times >= 0 && n >= r.after + r.times)) continue;
      *err = r.err;
      if (partial) *partial = r.partial;
      ++injected_;
      return true;
    }
    return false;
  }

  int open(const std::string& path, cellar::open_flags flags, std::unique_ptr<cellar::file>* out) override {
    int err = 0;
    if (should_fail(op::open, path, &err, nullptr)) return err;
    std::unique_ptr<cellar::file> f;
    if (int e = base_->open(path, flags, &f); e != 0) return e;
    *out = std::make_unique<faulty_file>(this, path, std::move(f));
    return 0;
  }
  int exists(const std::string& path, bool* out) override { return base_->exists(path, out); }
  int file_size(const std::string& path, std::uint64_t* out) override { return base_->file_size(path, out); }
  int remove(const std::string& path) override {
    int err = 0;
    if (should_fail(op::remove, path, &err, nullptr)) return err;
    return base_->remove(path);
  }
  int rename(const std::string& from, const std::string& to) override {
    int err = 0;
    if (should_fail(op::rename, from, &err, nullptr)) return err;
    return base_->rename(from, to);
  }
  int children(const std::string& dir, std::vector<std::string>* names) override { return base_->children(dir, names); }
  int create_dir(const std::string& dir) override { return base_->create_dir(dir); }

 private:
  class faulty_file final : public cellar::file {
   public:
    faulty_file(fault_env* e, std::string path, std::unique_ptr<cellar::file> f)
        : env_(e), path_(std::move(path)), f_(std::move(f)) {}
    int read(std::uint64_t offset, void* buf, std::size_t n, std::size_t* got) override {
      int err = 0;
      if (env_->should_fail(op::read, path_, &err, nullptr)) return err;
      return f_->read(offset, buf, n, got);
    }
    int write(std::uint64_t offset, const void* buf, std::size_t n, std::size_t* put) override {
      int err = 0;
      std::size_t partial = 0;
      if (!env_->should_fail(op::write, path_, &err, &partial)) return f_->write(offset, buf, n, put);
      *put = 0;
      partial = std::min(partial, n);
      if (partial > 0)
        if (int e = cellar::write_all(*f_, offset, buf, partial); e != 0) return e;
      *put = partial;
      return err;
    }
    int size(std::uint64_t* out) override { return f_->size(out); }
    int truncate(std::uint64_t size) override {
      int err = 0;
      if (env_->should_fail(op::truncate, path_, &err, nullptr)) return err;
      return f_->truncate(size);
    }
    int sync() override {
      int err = 0;
      if (env_->should_fail(op::sync, path_, &err, nullptr)) return err;
      return f_->sync();
    }
    int start_writeback() override { return f_->start_writeback(); }
    int lock(bool on) override { return f_->lock(on); }
    int close() override { return f_->close(); }

   private:
    fault_env* env_;
    std::string path_;
    std::unique_ptr<cellar::file> f_;
  };

  std::shared_ptr<cellar::env> base_;
  std::mutex mu_;
  std::vector<std::pair<rule, int>> rules_;
  std::atomic<int> injected_{0};
};

}  // namespace fault
