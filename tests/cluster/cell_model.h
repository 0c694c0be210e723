// tests/cluster/cell_model.h: a table's cells as the cluster tests model them, and a scan of
// the whole table to check against the model.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "cellar/connection.h"

namespace zktest {

// A cell as the model keeps it: (row, qualifier) -> value.
using model = std::map<std::pair<std::string, std::string>, std::string>;

// A scan of the whole table through `c`: every cell, and whether the rows came in order,
// each once. UNAVAILABLE while a split or merge changes the partitions under it.
struct scanned {
  model cells;
  bool in_order = true;
};
inline cellar::result<scanned> scan_all(cellar::connection& c, const std::string& table) {
  auto sc = c.scan(table, cellar::scan().caching(50));
  if (!sc) return sc.error();
  scanned out;
  std::string last;
  bool first = true;
  for (;;) {
    auto page = (*sc)->next(50);
    if (!page) return page.error();
    if (page->empty()) break;
    for (const auto& r : *page) {
      if (!first && !(last < r.row)) out.in_order = false;
      first = false;
      last = r.row;
      for (const auto& cell : r.cells)
        if (!out.cells.emplace(std::make_pair(r.row, cell.qualifier), cell.value).second) out.in_order = false;
    }
  }
  return out;
}

}  // namespace zktest
