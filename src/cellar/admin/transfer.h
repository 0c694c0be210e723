// admin/transfer.h: what cellar-admin does over a connection (cellar/connection.h):
// export a table's rows to a file, import them back, and bulk-load an ImportTsv file
// (docs/backup.md).
//
// Each call reads or writes its file as it goes and reports progress through `on_progress`
// (bytes or cells done, of a total when known). Bad input is refused whole: import and
// bulk_load read the entire file before the first write, so a malformed line (named by
// its number) leaves the table as it was.
//
// Thread safety: a call uses its connection from the calling thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "admin/row_files.h"
#include "cellar/connection.h"

namespace cellar::admin {

// done / total units (total 0: unknown).
using progress_fn = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct export_options {
  row_format format = row_format::tsv;
  std::string start;                                                // first row (inclusive); empty: the first
  std::string stop;                                                 // end row (exclusive); empty: the last
  std::optional<std::pair<std::int64_t, std::int64_t>> time_range;  // [min, max)
  std::uint32_t versions = 1;                                       // versions per column; 0: all
};

struct transfer_stats {
  std::uint64_t rows = 0;
  std::uint64_t cells = 0;
  std::uint64_t bytes = 0;       // of the file
  std::uint32_t partitions = 0;  // bulk loads: partitions that received rows
};

// Writes every cell of `table` in range to `path`, one line each (admin/row_files.h).
result<transfer_stats> export_table(connection& c, const std::string& table, const std::string& path,
                                    const export_options& o, const progress_fn& on_progress);

// Puts every cell of `path` into `table` (format as the file's extension says, .jsonl or
// else tsv, unless given). Errors: INVALID_ARGUMENT "line N: ..." (nothing written);
// FAMILY_NOT_FOUND "line N: ..."; the store's errors.
result<transfer_stats> import_table(connection& c, const std::string& table, const std::string& path,
                                    std::optional<row_format> format, const progress_fn& on_progress);

struct bulk_options {
  std::string columns;  // ImportTsv's spec
  char separator = '\t';
  // Where the per-partition files are written before the store attaches them; it must be
  // readable by the store at the same path (a server: on its machine). Empty: a new
  // directory under the system's temporary directory, removed afterwards.
  std::string staging;
};

// ImportTsv + completebulkload: reads `path` whole, sorts its cells by partition and key
// into per-partition files, then has the store attach them (store::bulk_load), each
// partition in one step. Errors: INVALID_ARGUMENT "line N: ..." (a line with the wrong
// number of fields, an empty row, a row or value over its limit: nothing loaded);
// FAMILY_NOT_FOUND; the store's errors.
result<transfer_stats> bulk_load_tsv(connection& c, const std::string& table, const std::string& path,
                                     const bulk_options& o, const progress_fn& on_progress);

}  // namespace cellar::admin
