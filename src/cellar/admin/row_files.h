// admin/row_files.h: the row file formats of cellar-admin's export and import
// (docs/backup.md, "Export and import"), and ImportTsv's input lines for bulk loads.
//
// tsv: one cell per line, four fields separated by tabs, and a fifth for a cell with a
// TTL of its own (cell::ttl_ms, milliseconds from TIMESTAMP; never 0, absent for a cell
// without one):
//   ROW  FAMILY:QUALIFIER  TIMESTAMP  VALUE  [TTL]
// ROW, QUALIFIER and VALUE are escaped: a backslash as "\\", and every byte outside
// printable ASCII (0x20-0x7e) as "\xHH" (two lower-case hex digits), so tabs and line
// breaks never appear raw and any bytes round-trip.
// jsonl: one JSON object per cell:
//   {"row":B64,"family":"f","qualifier":B64,"timestamp":N,"value":B64[,"ttl":N]}
// with row, qualifier and value in base64 (RFC 4648, with padding), and "ttl" as TTL above.
//
// Thread safety: plain functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/ops.h"
#include "cellar/status.h"

namespace cellar::admin {

enum class row_format { tsv, jsonl };

// "tsv" / "jsonl"; INVALID_ARGUMENT otherwise.
result<row_format> parse_format(std::string_view name);

std::string escape(std::string_view bytes);
// nullopt: a malformed escape.
std::optional<std::string> unescape(std::string_view text);
std::string base64(std::string_view bytes);
std::optional<std::string> unbase64(std::string_view text);

// One cell as a line of `f`, without the line break.
std::string format_cell(const cell& c, row_format f);
// A line back into a cell; INVALID_ARGUMENT saying what is wrong (without the line number).
result<cell> parse_cell(std::string_view line, row_format f);

// ImportTsv's column spec: "HBASE_ROW_KEY,f:a,f:b" (one HBASE_ROW_KEY; HBASE_TS_KEY
// optional; any other entry is FAMILY:QUALIFIER, or FAMILY for an empty qualifier).
struct tsv_columns {
  std::size_t row = 0;            // the field holding the row key
  std::optional<std::size_t> ts;  // the field holding the timestamp, if any
  struct column {
    std::size_t field;
    std::string family;
    std::string qualifier;
  };
  std::vector<column> columns;
  std::size_t fields = 0;
};
result<tsv_columns> parse_columns(std::string_view spec);

// Splits `line` at `separator`.
std::vector<std::string_view> split(std::string_view line, char separator);

}  // namespace cellar::admin
