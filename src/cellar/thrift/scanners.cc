#include "thrift/scanners.h"

#include <climits>

namespace cellar::thrift {

result<std::int32_t> scanner_table::open(std::unique_ptr<row_stream> stream, bool sort_columns) {
  auto e = std::make_shared<scanner_entry>();
  {
    absl::MutexLock l(&e->mu);
    e->stream = std::move(stream);
  }
  e->sort_columns = sort_columns;
  absl::MutexLock l(&mu_);
  expire_idle();
  if (max_ > 0 && open_.size() >= max_)
    return status(code::unavailable, "too many open scanners (" + std::to_string(max_) + "): close some first");
  // Ids wrap past INT32_MAX to 1, skipping any still open.
  while (open_.contains(next_id_)) next_id_ = next_id_ == INT32_MAX ? 1 : next_id_ + 1;
  const std::int32_t id = next_id_;
  next_id_ = next_id_ == INT32_MAX ? 1 : next_id_ + 1;
  open_.emplace(id, slot{std::move(e), std::chrono::steady_clock::now()});
  return id;
}

std::shared_ptr<scanner_entry> scanner_table::find(std::int32_t id) {
  absl::MutexLock l(&mu_);
  auto it = open_.find(id);
  if (it == open_.end()) return nullptr;
  it->second.used = std::chrono::steady_clock::now();
  return it->second.entry;
}

bool scanner_table::close(std::int32_t id) {
  std::shared_ptr<scanner_entry> e;
  absl::MutexLock l(&mu_);
  auto it = open_.find(id);
  if (it == open_.end()) return false;
  e = std::move(it->second.entry);
  open_.erase(it);
  return true;
}

void scanner_table::expire_idle() {
  if (timeout_.count() <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  for (auto it = open_.begin(); it != open_.end();) {
    if (now - it->second.used > timeout_)
      open_.erase(it++);
    else
      ++it;
  }
}

}  // namespace cellar::thrift
