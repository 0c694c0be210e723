// thrift/scanners.h: the open scanners of a gateway, by the id its clients page them with.
//
// HBase's Thrift scanners live on the server between calls: openScanner answers an id,
// getScannerRows / scannerGetList page it, closeScanner drops it. Ids are the gateway's
// (any connection may page a scanner another opened, as with HBase). A scanner left open
// by a client that went away is dropped once it has been idle for the timeout, when the
// next scanner opens; at most `max` are open at once.
//
// Thread safety: every method may be called from any thread; one scanner is paged by one
// caller at a time (its entry's mutex).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "cellar/connection.h"

namespace cellar::thrift {

// Where clients reach a gateway, as region locations name it: the port is set once the
// gateway's socket is bound, before any call is served.
struct endpoint {
  std::string host;
  std::atomic<std::int32_t> port{0};
};

struct scanner_entry {
  absl::Mutex mu;
  std::unique_ptr<row_stream> stream ABSL_GUARDED_BY(mu);
  // thrift1: results keep their columns as a sorted list (TScan.sortColumns).
  bool sort_columns = false;
};

class scanner_table {
 public:
  scanner_table(std::size_t max, std::chrono::milliseconds timeout) : max_(max), timeout_(timeout) {}

  // Registers `stream`; its id (> 0). Errors: UNAVAILABLE when `max` scanners are open.
  result<std::int32_t> open(std::unique_ptr<row_stream> stream, bool sort_columns = false);
  // The scanner `id`, marked used now; null when no such scanner is open.
  std::shared_ptr<scanner_entry> find(std::int32_t id);
  // Drops scanner `id`; false when no such scanner is open.
  bool close(std::int32_t id);

 private:
  struct slot {
    std::shared_ptr<scanner_entry> entry;
    std::chrono::steady_clock::time_point used;
  };
  void expire_idle() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::size_t max_;
  const std::chrono::milliseconds timeout_;
  absl::Mutex mu_;
  std::int32_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<std::int32_t, slot> open_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cellar::thrift
