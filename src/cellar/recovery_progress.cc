#include "cellar/recovery_progress.h"

namespace cellar {

namespace {

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

recovery_progress::figures recovery_progress::read() const {
  figures f;
  f.phase = phase_.load(std::memory_order_acquire);
  f.partitions_done = partitions_done_.load(std::memory_order_relaxed);
  f.partitions_total = partitions_total_.load(std::memory_order_relaxed);
  f.cells = cells_.load(std::memory_order_relaxed);
  f.log_records = log_records_.load(std::memory_order_relaxed);
  f.bytes = bytes_.load(std::memory_order_relaxed);
  f.started_unix_ms = started_unix_ms_.load(std::memory_order_relaxed);
  const auto started = started_.load(std::memory_order_acquire);
  if (started != 0) {
    auto ended = ended_.load(std::memory_order_acquire);
    if (ended == 0) ended = clock::now().time_since_epoch().count();
    f.seconds = std::chrono::duration<double>(clock::duration(ended - started)).count();
  }
  return f;
}

void recovery_progress::begin(std::uint32_t partitions_total) {
  partitions_total_.store(partitions_total, std::memory_order_relaxed);
  started_unix_ms_.store(unix_ms_now(), std::memory_order_relaxed);
  started_.store(clock::now().time_since_epoch().count(), std::memory_order_release);
  enter(phase::reading_snapshot);
}

void recovery_progress::enter(phase p) {
  if ((p == phase::done || p == phase::failed) && started_.load(std::memory_order_relaxed) != 0)
    ended_.store(clock::now().time_since_epoch().count(), std::memory_order_release);
  phase_.store(p, std::memory_order_release);
  observe();
}

void recovery_progress::partition_read(std::uint64_t bytes) {
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
  partitions_done_.fetch_add(1, std::memory_order_release);
  observe();
}

const char* phase_name(recovery_progress::phase p) {
  switch (p) {
    case recovery_progress::phase::opening: return "opening";
    case recovery_progress::phase::reading_snapshot: return "reading snapshot";
    case recovery_progress::phase::replaying_log: return "replaying log";
    case recovery_progress::phase::done: return "done";
    case recovery_progress::phase::failed: return "failed";
  }
  return "unknown";
}

}  // namespace cellar
