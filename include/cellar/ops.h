// cellar/ops.h: the requests and results of cellar's data operations.
//
// These mirror HBase's client classes (Put, Delete, Get, Scan, Increment, Append,
// RowMutations, CheckAndMutate, Result) as plain values with fluent builders, so an HBase
// user recognises them:
//
//   cellar::put p("row1");
//   p.add("info", "title", "hello").add("info", "author", 42, "me");  // 42 = timestamp
//   table.put(p);
//
// Timestamps are milliseconds since the epoch. `latest_timestamp` (HBase's
// LATEST_TIMESTAMP) means "let the store assign the current time" on writes, and "no
// upper bound" in deletes. Behaviour of each operation is specified in
// docs/semantics.md (rules R1 to R50); the rule numbers are cited below.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cellar/filter.h"
#include "cellar/status.h"

namespace cellar {

inline constexpr std::int64_t latest_timestamp = std::numeric_limits<std::int64_t>::max();

// One HBase cell. Results list cells in HBase order (R1): family asc, qualifier asc,
// timestamp desc (rows asc within a scan, or desc for a reversed scan).
struct cell {
  std::string row;
  std::string family;
  std::string qualifier;
  std::int64_t timestamp = 0;
  std::string value;
  // The cell's own time-to-live in milliseconds, as put::ttl (or increment::ttl,
  // append::ttl) wrote it: the cell expires once now - timestamp > ttl_ms. Filled only by
  // a scan that asks for it (scan::with_cell_ttls); 0 otherwise, and for a cell written
  // without a TTL of its own. A family's TTL is part of the schema and never shows here.
  std::int64_t ttl_ms = 0;

  friend bool operator==(const cell&, const cell&) = default;
};

// HBase's Result: the cells of one row that a read returned. A scan may split one row
// into several results (`scan::batch`, or `allow_partial_results` with a size limit);
// `partial` is then true on all but the last piece of the row.
struct row_result {
  std::string row;
  std::vector<cell> cells;
  bool exists = false;  // any cell matched (the only output of get::exists_only)
  bool partial = false;
};

// [min, max) in milliseconds (R9). The default covers every timestamp.
struct time_range {
  std::int64_t min = 0;
  std::int64_t max = latest_timestamp;
  static time_range at(std::int64_t ts) { return {ts, ts == latest_timestamp ? ts : ts + 1}; }
  friend bool operator==(const time_range&, const time_range&) = default;
};

// Which columns a read returns: a family with no qualifiers means the whole family.
// No families at all means every family of the table.
struct column_selection {
  struct family_columns {
    std::string family;
    std::vector<std::string> qualifiers;  // empty: all qualifiers
  };
  std::vector<family_columns> families;

  void add_family(std::string family);
  void add_column(std::string family, std::string qualifier);
  bool empty() const { return families.empty(); }
};

// Options shared by get and scan.
struct read_options {
  column_selection columns;
  std::uint32_t max_versions = 1;  // R5, R6: capped by the family's MaxVersions
  // Set by max_versions() / all_versions(). Time-series families return every version of
  // a column unless the read gave max versions explicitly (TS3; an explicit 1 is honoured).
  bool max_versions_given = false;
  time_range range;                    // R9
  std::int64_t max_per_family = -1;    // setMaxResultsPerColumnFamily, -1 = unlimited (R33)
  std::int64_t offset_per_family = 0;  // setRowOffsetPerColumnFamily (R33)
  // HBase's setFilter (cellar/filter.h): applied inside the partitions after versions and
  // the time range (R8), before the per-family limit and offset.
  std::optional<cellar::filter> filter;
  // Fill cell::ttl_ms in the results (scan::with_cell_ttls). Scans only: a get with it
  // set is refused with INVALID_ARGUMENT.
  bool cell_ttls = false;
};

class put {
 public:
  struct entry {
    std::string family;
    std::string qualifier;
    std::int64_t timestamp = latest_timestamp;  // latest: the put's timestamp
    std::string value;
  };

  // Default-constructed actions have an empty row, which every call refuses (a row key
  // is 1 to 1024 bytes); they exist so that actions can be deserialized in place.
  put() : put(std::string()) {}
  explicit put(std::string row, std::int64_t timestamp = latest_timestamp)
      : row(std::move(row)), timestamp(timestamp) {}
  put& add(std::string family, std::string qualifier, std::string value) {
    entries.push_back({std::move(family), std::move(qualifier), latest_timestamp, std::move(value)});
    return *this;
  }
  put& add(std::string family, std::string qualifier, std::int64_t ts, std::string value) {
    entries.push_back({std::move(family), std::move(qualifier), ts, std::move(value)});
    return *this;
  }
  // Cell TTL in milliseconds (R20): each cell expires when now - timestamp > ttl.
  put& ttl(std::int64_t ttl_ms) {
    ttl_ms_ = ttl_ms;
    return *this;
  }

  std::string row;
  std::int64_t timestamp;  // latest: server time, shared by all cells of this put (R4)
  std::vector<entry> entries;
  std::optional<std::int64_t> ttl_ms_;
};

// HBase's Delete. With no entries it deletes the whole row (every family), limited to
// cells with timestamp <= `timestamp` when that is given (R15). Deletes are physical (R16).
class deletion {
 public:
  enum class scope : std::uint8_t {
    family,          // addFamily(f[, ts]): cells of f with timestamp <= ts
    family_version,  // addFamilyVersion(f, ts): cells of f with timestamp == ts
    column_latest,   // addColumn(f, q): the newest version (R11)
    column_version,  // addColumn(f, q, ts): exactly version ts (R12)
    columns,         // addColumns(f, q[, ts]): every version <= ts (R13)
  };
  struct entry {
    scope what;
    std::string family;
    std::string qualifier;
    std::int64_t timestamp;
  };

  deletion() : deletion(std::string()) {}
  explicit deletion(std::string row, std::int64_t timestamp = latest_timestamp)
      : row(std::move(row)), timestamp(timestamp) {}
  deletion& family(std::string f) { return add(scope::family, std::move(f), {}, timestamp); }
  deletion& family(std::string f, std::int64_t ts) { return add(scope::family, std::move(f), {}, ts); }
  deletion& family_version(std::string f, std::int64_t ts) { return add(scope::family_version, std::move(f), {}, ts); }
  // Newest version, or exactly the deletion's timestamp when one was given.
  deletion& column(std::string f, std::string q) {
    return timestamp == latest_timestamp ? add(scope::column_latest, std::move(f), std::move(q), timestamp)
                                         : add(scope::column_version, std::move(f), std::move(q), timestamp);
  }
  deletion& column(std::string f, std::string q, std::int64_t ts) {
    return add(scope::column_version, std::move(f), std::move(q), ts);
  }
  deletion& columns(std::string f, std::string q) { return add(scope::columns, std::move(f), std::move(q), timestamp); }
  deletion& columns(std::string f, std::string q, std::int64_t ts) {
    return add(scope::columns, std::move(f), std::move(q), ts);
  }

  std::string row;
  std::int64_t timestamp;
  std::vector<entry> entries;

 private:
  deletion& add(scope s, std::string f, std::string q, std::int64_t ts) {
    entries.push_back({s, std::move(f), std::move(q), ts});
    return *this;
  }
};

class get {
 public:
  get() = default;
  explicit get(std::string row) : row(std::move(row)) {}
  get& family(std::string f) {
    options.columns.add_family(std::move(f));
    return *this;
  }
  get& column(std::string f, std::string q) {
    options.columns.add_column(std::move(f), std::move(q));
    return *this;
  }
  get& max_versions(std::uint32_t n) {
    options.max_versions = n;
    options.max_versions_given = true;
    return *this;
  }
  get& all_versions() { return max_versions(std::numeric_limits<std::uint32_t>::max()); }
  get& range(std::int64_t min, std::int64_t max) {
    options.range = {min, max};
    return *this;
  }
  get& timestamp(std::int64_t ts) {
    options.range = time_range::at(ts);
    return *this;
  }
  get& max_per_family(std::int64_t n) {
    options.max_per_family = n;
    return *this;
  }
  get& offset_per_family(std::int64_t n) {
    options.offset_per_family = n;
    return *this;
  }
  get& filter(cellar::filter f) {
    options.filter = std::move(f);
    return *this;
  }
  // Only report whether any cell matches (R10); no cells are returned.
  get& exists_only(bool b = true) {
    exists_only_ = b;
    return *this;
  }

  std::string row;
  read_options options;
  bool exists_only_ = false;
};

class scan {
 public:
  scan() = default;
  // Rows from `start` (inclusive unless said otherwise) to `stop` (exclusive unless said
  // otherwise, R29). Empty means unbounded. Reversed scans start at the higher key (R30).
  scan& start_row(std::string r, bool inclusive = true) {
    start = std::move(r);
    start_inclusive = inclusive;
    return *this;
  }
  scan& stop_row(std::string r, bool inclusive = false) {
    stop = std::move(r);
    stop_inclusive = inclusive;
    return *this;
  }
  scan& reversed(bool b = true) {
    reversed_ = b;
    return *this;
  }
  scan& limit(std::int64_t rows) {
    limit_ = rows;
    return *this;
  }
  scan& batch(std::int64_t cells) {
    batch_ = cells;
    return *this;
  }
  scan& max_result_size(std::int64_t bytes) {
    max_result_size_ = bytes;
    return *this;
  }
  scan& allow_partial_results(bool b = true) {
    allow_partial_ = b;
    return *this;
  }
  scan& caching(std::int64_t rows) {
    caching_ = rows;
    return *this;
  }
  scan& family(std::string f) {
    options.columns.add_family(std::move(f));
    return *this;
  }
  scan& column(std::string f, std::string q) {
    options.columns.add_column(std::move(f), std::move(q));
    return *this;
  }
  scan& max_versions(std::uint32_t n) {
    options.max_versions = n;
    options.max_versions_given = true;
    return *this;
  }
  scan& all_versions() { return max_versions(std::numeric_limits<std::uint32_t>::max()); }
  scan& range(std::int64_t min, std::int64_t max) {
    options.range = {min, max};
    return *this;
  }
  scan& timestamp(std::int64_t ts) {
    options.range = time_range::at(ts);
    return *this;
  }
  scan& max_per_family(std::int64_t n) {
    options.max_per_family = n;
    return *this;
  }
  scan& offset_per_family(std::int64_t n) {
    options.offset_per_family = n;
    return *this;
  }
  // A PageFilter and a WhileMatchFilter hold for the whole scan, across partitions.
  scan& filter(cellar::filter f) {
    options.filter = std::move(f);
    return *this;
  }
  // Every cell of the results carries the TTL it was written with (cell::ttl_ms), so
  // that it can be written back with the same expiry, as cellar-admin export does.
  // Off by default: cells then have ttl_ms 0.
  scan& with_cell_ttls(bool b = true) {
    options.cell_ttls = b;
    return *this;
  }

  std::string start;
  bool start_inclusive = true;
  std::string stop;
  bool stop_inclusive = false;
  bool reversed_ = false;
  std::int64_t limit_ = -1;            // rows for the whole scan (R34), -1 = unlimited
  std::int64_t batch_ = -1;            // cells per result (R31)
  std::int64_t max_result_size_ = -1;  // bytes per fetched page (R32)
  bool allow_partial_ = false;
  std::int64_t caching_ = 256;  // rows fetched per partition round trip
  read_options options;
};

// Adds `amount` to 8-byte big-endian signed counters (R25); writes a new version.
class increment {
 public:
  struct entry {
    std::string family;
    std::string qualifier;
    std::int64_t amount;
  };
  increment() = default;
  explicit increment(std::string row) : row(std::move(row)) {}
  increment& add(std::string f, std::string q, std::int64_t amount) {
    entries.push_back({std::move(f), std::move(q), amount});
    return *this;
  }
  increment& ttl(std::int64_t ttl_ms) {
    ttl_ms_ = ttl_ms;
    return *this;
  }
  increment& return_results(bool b) {
    return_results_ = b;
    return *this;
  }

  std::string row;
  std::vector<entry> entries;
  std::optional<std::int64_t> ttl_ms_;
  bool return_results_ = true;  // R28
};

// Appends bytes to the newest value of each column (R27); writes a new version.
class append {
 public:
  struct entry {
    std::string family;
    std::string qualifier;
    std::string value;
  };
  append() = default;
  explicit append(std::string row) : row(std::move(row)) {}
  append& add(std::string f, std::string q, std::string v) {
    entries.push_back({std::move(f), std::move(q), std::move(v)});
    return *this;
  }
  append& ttl(std::int64_t ttl_ms) {
    ttl_ms_ = ttl_ms;
    return *this;
  }
  append& return_results(bool b) {
    return_results_ = b;
    return *this;
  }

  std::string row;
  std::vector<entry> entries;
  std::optional<std::int64_t> ttl_ms_;
  bool return_results_ = true;
};

// Puts and deletes on one row, applied in order, all or nothing (R24, R48).
class row_mutations {
 public:
  row_mutations() = default;
  explicit row_mutations(std::string row) : row(std::move(row)) {}
  row_mutations& add(cellar::put p) {
    mutations.emplace_back(std::move(p));
    return *this;
  }
  row_mutations& add(cellar::deletion d) {
    mutations.emplace_back(std::move(d));
    return *this;
  }

  std::string row;
  std::vector<std::variant<cellar::put, cellar::deletion>> mutations;
};

// checkAndMutate (R22 to R24): the mutation runs iff compare(expected, current) OP 0,
// where current is the newest value of family:qualifier. Without an expected value the
// check passes iff the column is absent or its newest value is empty, whatever the op.
// With a filter (HBase 2.4's CheckAndMutate.newBuilder(row).ifMatches(filter)) the check
// passes iff a get of the row with that filter (newest versions, within `range`) returns
// a cell; family and qualifier are then unused and the mutations may touch any family.
class check_and_mutate {
 public:
  check_and_mutate() = default;
  check_and_mutate(std::string row, std::string family, std::string qualifier)
      : row(std::move(row)), family(std::move(family)), qualifier(std::move(qualifier)) {}
  explicit check_and_mutate(std::string row) : row(std::move(row)) {}
  check_and_mutate& if_matches(compare_op o, std::string v) {
    op = o;
    expected = std::move(v);
    return *this;
  }
  check_and_mutate& if_matches(cellar::filter f) {
    filter = std::move(f);
    return *this;
  }
  check_and_mutate& if_equals(std::string v) { return if_matches(compare_op::equal, std::move(v)); }
  check_and_mutate& if_not_exists() {
    expected.reset();
    return *this;
  }
  check_and_mutate& time_range(std::int64_t min, std::int64_t max) {
    range = {min, max};
    return *this;
  }
  check_and_mutate& then(cellar::put p) {
    mutation = row_mutations(row).add(std::move(p));
    return *this;
  }
  check_and_mutate& then(cellar::deletion d) {
    mutation = row_mutations(row).add(std::move(d));
    return *this;
  }
  check_and_mutate& then(row_mutations m) {
    mutation = std::move(m);
    return *this;
  }

  std::string row;
  std::string family;
  std::string qualifier;
  compare_op op = compare_op::equal;
  std::optional<std::string> expected;
  cellar::time_range range;
  row_mutations mutation{""};
  std::optional<cellar::filter> filter;  // set: the check is this filter (family, op, expected unused)
};

// One action of a batch. Every action touches one row.
using batch_op = std::variant<get, put, deletion, increment, append, row_mutations, check_and_mutate>;

// The outcome of one batch action: `st` is its status; for get, increment and append
// `row` holds the cells; for check_and_mutate `processed` says whether the check passed.
struct op_result {
  status st;
  row_result row;
  bool processed = false;
};

// Row key of any batch action.
const std::string& row_of(const batch_op& op);

// HBase's Bytes.toBytes(long) / Bytes.toLong: 8 bytes, big-endian, signed. to_long gives
// nullopt unless `bytes` is exactly 8 bytes long.
std::string long_bytes(std::int64_t v);
std::optional<std::int64_t> to_long(std::string_view bytes);

}  // namespace cellar
