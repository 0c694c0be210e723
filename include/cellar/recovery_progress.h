// cellar/recovery_progress.h: watching a store's recovery while store::open runs.
//
// Opening a store with a data directory reads its last snapshot into memory and replays
// the redo log since it (docs/storage.md); on a large store that takes minutes, and
// store::open returns only when it is done. A `recovery_progress` given to the open
// (store_options::recovery_progress) is updated by the recovery as it goes, so another
// thread can show how far it got: cellar-server's status page and metrics do
// (docs/operations.md).
//
//   auto progress = std::make_shared<cellar::recovery_progress>();
//   options.recovery_progress = progress;
//   std::thread watcher([&] { ... progress->read() ... });
//   auto s = cellar::store::open(options);
//
// The figures grow while a phase runs and stay as they were when recovery ended. A store
// without a directory, which recovers nothing, goes straight to `done`.
//
// Thread safety: read() may be called from any number of threads at once, while the
// recovery updates the figures; the figures of one read() are each current, not one
// instant's set. The update calls are the store's (one recovery per object), and the
// observer (set_observer) is set before the open.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

namespace cellar {

class recovery_progress {
 public:
  enum class phase : std::uint8_t {
    opening,           // not started: the directory and its files are being opened
    reading_snapshot,  // the partitions' cells are read from the last snapshot
    replaying_log,     // the redo log since that snapshot is replayed into them
    done,              // recovered: the store is starting its partitions, then serves
    failed,            // the open failed (store::open says why)
  };

  struct figures {
    recovery_progress::phase phase = phase::opening;
    std::uint32_t partitions_done = 0;   // partitions read from the snapshot so far
    std::uint32_t partitions_total = 0;  // partitions to read; 0 until reading starts
    std::uint64_t cells = 0;             // cells read from the snapshot (bases and change runs)
    std::uint64_t log_records = 0;       // redo log records replayed
    std::uint64_t bytes = 0;             // bytes read: the snapshot's partition files and the log's records
    std::int64_t started_unix_ms = 0;    // when reading began (wall clock); 0 before it did
    double seconds = 0;                  // since then, until recovery ended

    // Recovery is over (done or failed): the figures no longer change.
    bool ended() const { return phase == recovery_progress::phase::done || phase == recovery_progress::phase::failed; }
  };

  recovery_progress() = default;
  recovery_progress(const recovery_progress&) = delete;
  recovery_progress& operator=(const recovery_progress&) = delete;

  // The figures now.
  figures read() const;

  // Has `f` called with this object after each partition is read from the snapshot and at
  // each change of phase, on the thread that did it: partitions are read by several
  // threads at once, so calls may overlap. Recovery waits while `f` runs, so a test can
  // hold it at a known point. Null: nothing is called. Set before the store opens.
  void set_observer(std::function<void(const recovery_progress&)> f) { observer_ = std::move(f); }

  // --- updated by the store's recovery -----------------------------------------------
  void begin(std::uint32_t partitions_total);
  void enter(phase p);
  void add_cells(std::uint64_t n) { cells_.fetch_add(n, std::memory_order_relaxed); }
  void partition_read(std::uint64_t bytes);
  void log_record(std::uint64_t bytes) {
    log_records_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }

 private:
  using clock = std::chrono::steady_clock;
  void observe() const {
    if (observer_) observer_(*this);
  }

  std::atomic<phase> phase_{phase::opening};
  std::atomic<std::uint32_t> partitions_done_{0};
  std::atomic<std::uint32_t> partitions_total_{0};
  std::atomic<std::uint64_t> cells_{0};
  std::atomic<std::uint64_t> log_records_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::int64_t> started_unix_ms_{0};
  std::atomic<clock::rep> started_{0};  // steady clock ticks; 0: not started
  std::atomic<clock::rep> ended_{0};    // likewise; 0: not ended
  std::function<void(const recovery_progress&)> observer_;
};

// "reading snapshot", "replaying log", ...: the phase as the status page shows it.
const char* phase_name(recovery_progress::phase p);

}  // namespace cellar
