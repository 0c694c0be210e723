#include "cellar/ops.h"

#include <algorithm>

#include "util/coding.h"

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

std::string long_bytes(std::int64_t v) {
  std::string s;
  detail::put_u64(s, static_cast<std::uint64_t>(v));
  return s;
}

std::optional<std::int64_t> to_long(std::string_view bytes) {
  if (bytes.size() != 8) return std::nullopt;
  return static_cast<std::int64_t>(detail::load_u64(bytes.data()));
}

const std::string& row_of(const batch_op& op) {
  return std::visit([](const auto& o) -> const std::string& { return o.row; }, op);
}

}  // namespace cellar
