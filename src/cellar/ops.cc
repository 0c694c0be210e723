#include "cellar/ops.h"

#include <algorithm>

namespace cellar {

void column_selection::add_family(std::string family) {
  for (auto& f : families)
    if (f.family == family) {
      f.qualifiers.clear();  // HBase: addFamily supersedes earlier addColumn calls
      return;
    }
  families.push_back({std::move(family), {}});
}

void column_selection::add_column(std::string family, std::string qualifier) {
  for (auto& f : families)
    if (f.family == family) {
      // A family selected whole stays whole only if it had no qualifiers; HBase's
      // addColumn after addFamily narrows the family to that column.
      if (std::find(f.qualifiers.begin(), f.qualifiers.end(), qualifier) == f.qualifiers.end())
        f.qualifiers.push_back(std::move(qualifier));
      return;
    }
  families.push_back({std::move(family), {std::move(qualifier)}});
}

const std::string& row_of(const batch_op& op) {
  return std::visit([](const auto& o) -> const std::string& { return o.row; }, op);
}

}  // namespace cellar
