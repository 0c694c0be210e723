#include "cellar/summary.h"

#include "cellar/version.h"

#include <algorithm>

namespace cellar {

result<store_summary> summarize(store& s) {
  store_summary out;
  out.version = CELLAR_VERSION;
  out.store = s.info();
  auto names = s.list_tables();
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    auto d = s.describe(name);
    if (!d) {
      if (d.code() == code::table_not_found) continue;  // dropped meanwhile
      return d.error();
    }
    auto st = s.stats(name);
    if (!st) {
      if (st.code() == code::table_not_found) continue;
      return st.error();
    }
    out.tables.push_back({std::move(d.value()), std::move(st.value())});
  }
  return out;
}

}  // namespace cellar
