// The crash tests' workload, shared by the writer child and the checker.
//
// Write i (0, 1, 2, ...) is one batch of two rows of the same partition (KEY on a 2-byte
// prefix), each row with a cell in two families: atomic as a unit. After the store
// acknowledges write i, the child appends "i <wall ms>" to the ack file.
//
// Every `snapshot_every` writes the child takes a snapshot: "snap-begin <i>" before,
// "snap <i>" once it completed (every write <= i is in it). Every `ddl_every` writes it
// runs DDL step k on side tables: "ddl-begin <k>" before, "ddl <k>" once it returned OK.
// Step k works on table ddl<j>, j = k - k % 3: k % 3 == 0 creates it (families a, b),
// 1 adds family c, 2 drops it. The checker can ask the child to stop at a chosen moment
// (test_crash.cc kills it right after a snap-begin or ddl-begin line, or at random).
#pragma once

#include <string>
#include <vector>

#include "cellar/store.h"

namespace crash {

inline constexpr long snapshot_every = 200;
inline constexpr long ddl_every = 150;

inline cellar::table_descriptor table() { return {"crash", cellar::partition_spec::hash_prefix(4, 2), {{"f"}, {"g"}}}; }

inline std::string row_a(long i) { return "g" + std::to_string(i % 4) + "a" + std::to_string(i); }
inline std::string row_b(long i) { return "g" + std::to_string(i % 4) + "b" + std::to_string(i); }
inline std::string value(long i) {
  return "value-" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 50), 'x');
}

inline std::vector<cellar::batch_op> write(long i) {
  std::vector<cellar::batch_op> ops;
  ops.emplace_back(cellar::put(row_a(i)).add("f", "q", 1, value(i)).add("g", "q", 1, value(i)));
  ops.emplace_back(cellar::put(row_b(i)).add("f", "q", 1, value(i)).add("g", "q", 1, value(i)));
  return ops;
}

inline std::string ddl_table(long k) { return "ddl" + std::to_string(k - k % 3); }

// DDL step k (see above).
inline cellar::status ddl_step(cellar::store& s, long k) {
  switch (k % 3) {
    case 0:
      return s.create_table({ddl_table(k), cellar::partition_spec::hash(3), {{"a"}, {"b"}}},
                            cellar::schema_origin::oceanbase_ddl);
    case 1: return s.alter_family(ddl_table(k), {"c"});
    default: return s.drop_table(ddl_table(k));
  }
}

inline cellar::durability mode(const std::string& m) {
  if (m == "log") return cellar::durability::log;
  if (m == "log-sync") return cellar::durability::log_sync;
  return cellar::durability::snapshot;
}

}  // namespace crash
