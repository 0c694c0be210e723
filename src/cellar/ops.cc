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

std::string long_bytes(std::int64_t v) {
  std::string s(8, '\0');
  auto u = static_cast<std::uint64_t>(v);
  for (int i = 7; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return s;
}

std::optional<std::int64_t> to_long(std::string_view bytes) {
  if (bytes.size() != 8) return std::nullopt;
  std::uint64_t u = 0;
  for (unsigned char c : bytes) u = (u << 8) | c;
  return static_cast<std::int64_t>(u);
}

const std::string& row_of(const batch_op& op) {
  return std::visit([](const auto& o) -> const std::string& { return o.row; }, op);
}

}  // namespace cellar
