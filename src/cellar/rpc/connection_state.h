// rpc/connection_state.h: what one RPC connection has in flight, and whether a batch of
// it may be run in place (table::run_now) without reordering it with an earlier call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cellar::rpc {

// Per connection: the calls in flight, and where the batches among them wait. A batch may
// be run in place (table::run_now) only if that cannot reorder it with a call the
// connection sent earlier: calls to one partition run in the order they reach its actor,
// and partitions are independent (consistency is per partition, as in OBKV). So a batch
// of gets may run in place unless a write of the connection waits at one of its
// partitions; a batch with writes only if nothing of the connection waits at its
// partition, and no scan is in flight. Any other call in flight (DDL, admin) keeps every
// batch on the actors.
struct connection_state {
  std::size_t in_flight = 0;         // every call admitted and not yet answered
  std::size_t scans_in_flight = 0;   // scan calls fetching their first page
  std::size_t batches_waiting = 0;   // batch calls sent to partition actors
  struct waiting {
    std::string table;
    std::uint32_t partition;
    std::uint32_t reads, writes;  // batch calls of this connection at that actor
  };
  std::vector<waiting> at;  // a handful at most: calls in flight are few

  waiting* find(const std::string& table, std::uint32_t p) {
    for (auto& w : at)
      if (w.partition == p && w.table == table) return &w;
    return nullptr;
  }
  // Inside an admitted batch call (counted in in_flight, not in batches_waiting).
  bool may_run_in_place(const std::string& table, const std::vector<std::uint32_t>& parts, bool reads) {
    if (in_flight - 1 != batches_waiting + scans_in_flight) return false;  // DDL, admin
    if (!reads && scans_in_flight > 0) return false;
    for (auto p : parts)
      if (auto* w = find(table, p); w && (w->writes > 0 || (!reads && w->reads > 0))) return false;
    return true;
  }
  // Inside an admitted scan call, before it counts in scans_in_flight: whether its first
  // page may be read in place (scanner::next_async), i.e. no write of this connection
  // waits at any partition of `table` and no DDL or admin call is in flight.
  bool may_scan_in_place(const std::string& table) {
    if (in_flight - 1 != batches_waiting + scans_in_flight) return false;
    for (const auto& w : at)
      if (w.table == table && w.writes > 0) return false;
    return true;
  }
  void wait_at(const std::string& table, const std::vector<std::uint32_t>& parts, bool reads, int delta) {
    batches_waiting += static_cast<std::size_t>(delta);
    for (auto p : parts) {
      auto* w = find(table, p);
      if (w == nullptr) w = &at.emplace_back(waiting{table, p, 0, 0});
      (reads ? w->reads : w->writes) += static_cast<std::uint32_t>(delta);
      if (w->reads == 0 && w->writes == 0) {
        if (w != &at.back()) *w = std::move(at.back());
        at.pop_back();
      }
    }
  }
};

}  // namespace cellar::rpc
