// thrift/convert1.h: thrift1's values (Hbase.thrift) to and from cellar's.
//
// thrift1 names a column "family:qualifier" and a whole family "family" (HBase's
// CellUtil.parseColumn: "family:" is the column with the empty qualifier). Results are
// TRowResults keyed by those names, or TCell lists. The conversions follow HBase's own
// thrift1 handler (ThriftHBaseServiceHandler and ThriftUtilities in hbase-thrift).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "Hbase.h"
#include "cellar/ops.h"
#include "cellar/status.h"

namespace cellar::thrift {

namespace t1 = apache::hadoop::hbase::thrift;

struct column_name {
  std::string family;
  std::optional<std::string> qualifier;  // none: the whole family
};
column_name parse_column(const std::string& column);
void select_columns(const std::vector<t1::Text>& columns, read_options& o);

// Cells as TCells (value and timestamp), in the result's order.
std::vector<t1::TCell> to_tcells(const row_result& r);
// A result with cells as a TRowResult: the map of columns, or the sorted list of them.
t1::TRowResult to_trowresult(const row_result& r, bool sort_columns);

// thrift1's exceptions with the status text: IOError (canRetry for UNAVAILABLE), or
// IllegalArgument for the caller's mistakes when the method declares it.
[[noreturn]] void raise1(const status& s, bool illegal_argument_declared = false);
template <class T>
T take1(result<T> r, bool illegal_argument_declared = false) {
  if (!r) raise1(r.error(), illegal_argument_declared);
  return std::move(r).value();
}
inline void check1(const status& s, bool illegal_argument_declared = false) {
  if (!s) raise1(s, illegal_argument_declared);
}

// The first row after every row that starts with `prefix` (empty: none, scan to the end).
std::string prefix_stop_row(std::string prefix);

}  // namespace cellar::thrift
