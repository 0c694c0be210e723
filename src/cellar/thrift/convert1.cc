#include "thrift/convert1.h"

#include "thrift/errors.h"

namespace cellar::thrift {

column_name parse_column(const std::string& column) {
  const auto colon = column.find(':');
  if (colon == std::string::npos) return {column, std::nullopt};
  return {column.substr(0, colon), column.substr(colon + 1)};
}

void select_columns(const std::vector<t1::Text>& columns, read_options& o) {
  for (const auto& c : columns) {
    auto col = parse_column(c);
    if (col.qualifier)
      o.columns.add_column(col.family, *col.qualifier);
    else
      o.columns.add_family(col.family);
  }
}

std::vector<t1::TCell> to_tcells(const row_result& r) {
  std::vector<t1::TCell> out;
  out.reserve(r.cells.size());
  for (const auto& c : r.cells) {
    t1::TCell t;
    t.value = c.value;
    t.timestamp = c.timestamp;
    out.push_back(std::move(t));
  }
  return out;
}

t1::TRowResult to_trowresult(const row_result& r, bool sort_columns) {
  t1::TRowResult out;
  out.row = r.cells.empty() ? r.row : r.cells.front().row;
  std::map<t1::Text, t1::TCell> columns;
  std::vector<t1::TColumn> sorted;
  for (const auto& c : r.cells) {
    t1::TCell cell;
    cell.value = c.value;
    cell.timestamp = c.timestamp;
    std::string name = c.family + ":" + c.qualifier;
    if (sort_columns) {
      t1::TColumn col;
      col.columnName = std::move(name);
      col.cell = std::move(cell);
      sorted.push_back(std::move(col));
    } else {
      columns.emplace(std::move(name), std::move(cell));  // the newest version of each column
    }
  }
  if (sort_columns)
    out.__set_sortedColumns(std::move(sorted));
  else
    out.__set_columns(std::move(columns));
  return out;
}

void raise1(const status& s, bool illegal_argument_declared) {
  if (illegal_argument_declared && is_illegal_argument(s)) raise<t1::IllegalArgument>(s);
  t1::IOError e;
  e.message = s.to_string();
  e.canRetry = s.code() == code::unavailable;
  throw e;
}

std::string prefix_stop_row(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last != 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

}  // namespace cellar::thrift
