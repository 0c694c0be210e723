// The crash tests' workload, shared by the writer child and the checker.
//
// Write i (0, 1, 2, ...) is one batch of two rows of the same partition (KEY on a 2-byte
// prefix), each row with a cell in two families: atomic as a unit. After the store
// acknowledges write i, the child appends "i <wall ms>" to the ack file; after a
// completed snapshot it appends "snap <i>" (every write <= i is in that snapshot).
#pragma once

#include <string>

#include "cellar/store.h"

namespace crash {

inline cellar::table_descriptor table() {
  return {"crash", cellar::partition_spec::hash_prefix(4, 2), {{"f"}, {"g"}}};
}

inline std::string row_a(long i) { return "g" + std::to_string(i % 4) + "a" + std::to_string(i); }
inline std::string row_b(long i) { return "g" + std::to_string(i % 4) + "b" + std::to_string(i); }
inline std::string value(long i) { return "value-" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 50), 'x'); }

inline std::vector<cellar::batch_op> write(long i) {
  std::vector<cellar::batch_op> ops;
  ops.emplace_back(cellar::put(row_a(i)).add("f", "q", 1, value(i)).add("g", "q", 1, value(i)));
  ops.emplace_back(cellar::put(row_b(i)).add("f", "q", 1, value(i)).add("g", "q", 1, value(i)));
  return ops;
}

inline cellar::durability mode(const std::string& m) {
  if (m == "log") return cellar::durability::log;
  if (m == "log-sync") return cellar::durability::log_sync;
  return cellar::durability::snapshot;
}

}  // namespace crash
