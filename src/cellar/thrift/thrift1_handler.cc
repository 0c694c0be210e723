// Hbase's (thrift1's) table, region and scanner methods.
#include "thrift/thrift1_handler.h"

#include <algorithm>
#include <climits>

#include "cellar/filter.h"
#include "route/router.h"
#include "thrift/convert1.h"
#include "thrift/convert2.h"
#include "thrift/errors.h"
#include "thrift/regions.h"

namespace cellar::thrift {

void thrift1_handler::enableTable(const t1::Bytes& tableName) { check1(c_.enable_table(table_name(tableName))); }

void thrift1_handler::disableTable(const t1::Bytes& tableName) { check1(c_.disable_table(table_name(tableName))); }

bool thrift1_handler::isTableEnabled(const t1::Bytes& tableName) {
  return take1(c_.is_table_enabled(table_name(tableName)));
}

// cellar reclaims expired cells and old versions in the background: a compaction request
// has nothing to start, but names a table that must exist.
void thrift1_handler::compact(const t1::Bytes& tableNameOrRegionName) {
  check1(c_.describe(table_name(tableNameOrRegionName)).error());
}

void thrift1_handler::majorCompact(const t1::Bytes& tableNameOrRegionName) { compact(tableNameOrRegionName); }

void thrift1_handler::getTableNames(std::vector<t1::Text>& out) {
  out = take1(c_.list_tables());
  std::sort(out.begin(), out.end());
}

void thrift1_handler::getTableNamesWithIsTableEnabled(std::map<t1::Text, bool>& out) {
  for (const auto& t : take1(c_.list_tables())) {
    auto enabled = c_.is_table_enabled(t);
    if (enabled) out[t] = *enabled;  // a table dropped meanwhile is skipped
  }
}

void thrift1_handler::getColumnDescriptors(std::map<t1::Text, t1::ColumnDescriptor>& out, const t1::Text& tableName) {
  auto d = take1(c_.describe(table_name(tableName)));
  for (const auto& f : d.families) {
    t1::ColumnDescriptor c;
    c.name = f.name + ":";
    c.maxVersions =
        f.max_versions == 0 ? INT32_MAX : static_cast<std::int32_t>(std::min<std::uint32_t>(f.max_versions, INT32_MAX));
    auto attr = [&](const char* key, const char* fallback) {
      auto it = f.attributes.find(key);
      return it == f.attributes.end() ? std::string(fallback) : it->second;
    };
    c.compression = attr("COMPRESSION", "NONE");
    c.bloomFilterType = attr("BLOOMFILTER", "NONE");
    c.inMemory = attr("IN_MEMORY", "false") == "true";
    c.blockCacheEnabled = attr("BLOCKCACHE", "true") == "true";
    c.timeToLive =
        f.ttl_seconds == 0 ? INT32_MAX : static_cast<std::int32_t>(std::min<std::int64_t>(f.ttl_seconds, INT32_MAX));
    out.emplace(c.name, std::move(c));
  }
}

namespace {

// Partition `i` of `d` as a thrift1 region: range partitions have their key range, KEY
// (hash) partitions the whole key space.
t1::TRegionInfo region_of(const table_descriptor& d, std::uint32_t i, const server_address& where) {
  t1::TRegionInfo r;
  const auto& p = d.partitioning;
  if (p.how == partition_spec::method::range) {
    if (i > 0) r.startKey = p.bounds[i - 1];
    if (i < p.bounds.size()) r.endKey = p.bounds[i];
  }
  r.id = i;
  r.name = d.name + "," + r.startKey + "," + std::to_string(i);  // HBase's "table,startKey,id"
  r.version = 1;
  r.serverName = where.host;
  r.port = where.port;
  return r;
}

}  // namespace

void thrift1_handler::getTableRegions(std::vector<t1::TRegionInfo>& out, const t1::Text& tableName) {
  auto d = take1(c_.describe(table_name(tableName)));
  const auto servers = partition_servers(s_, d.name, d.partitioning.count(), where_);
  for (std::uint32_t i = 0; i < d.partitioning.count(); ++i) out.push_back(region_of(d, i, servers[i]));
}

void thrift1_handler::getRegionInfo(t1::TRegionInfo& out, const t1::Text& row) {
  // HBase's meta row key: "table,row,regionId" (happybase and HBase's own clients send
  // "table,row,99999999999999").
  const auto first = row.find(',');
  const auto last = row.rfind(',');
  if (first == std::string::npos || last == first)
    raise1(status(code::invalid_argument, "not a region key ('table,row,id'): '" + row + "'"));
  auto d = take1(c_.describe(table_name(row.substr(0, first))));
  const auto i = detail::partition_of(d.partitioning, row.substr(first + 1, last - first - 1));
  out = region_of(d, i, partition_servers(s_, d.name, d.partitioning.count(), where_)[i]);
}

void thrift1_handler::createTable(const t1::Text& tableName, const std::vector<t1::ColumnDescriptor>& columnFamilies) {
  if (columnFamilies.empty())
    raise<t1::IllegalArgument>(status(code::invalid_argument, "a table needs at least one column family"));
  table_descriptor d;
  d.name = tableName;
  d.partitioning = partition_spec::hash(options_.default_partitions);
  for (const auto& c : columnFamilies) {
    family_descriptor f;
    f.name = parse_column(c.name).family;  // "cf:" names family cf
    if (c.maxVersions < 1) raise<t1::IllegalArgument>(status(code::invalid_argument, "maxVersions must be at least 1"));
    f.max_versions = static_cast<std::uint32_t>(c.maxVersions);
    if (c.timeToLive < 1)
      raise<t1::IllegalArgument>(status(code::invalid_argument, "timeToLive must be at least 1 second"));
    f.ttl_seconds = c.timeToLive == INT32_MAX ? 0 : c.timeToLive;  // HConstants.FOREVER
    f.attributes["COMPRESSION"] = c.compression;
    f.attributes["BLOOMFILTER"] = c.bloomFilterType;
    f.attributes["IN_MEMORY"] = c.inMemory ? "true" : "false";
    f.attributes["BLOCKCACHE"] = c.blockCacheEnabled ? "true" : "false";
    d.families.push_back(std::move(f));
  }
  auto s = c_.create_table(d, schema_origin::hbase_shell);
  if (s.code() == code::already_exists) raise<t1::AlreadyExists>(s);
  check1(s, true);
}

void thrift1_handler::deleteTable(const t1::Text& tableName) { check1(c_.drop_table(table_name(tableName))); }

t1::ScannerID thrift1_handler::open_scanner(const std::string& table, const cellar::scan& s, bool sort_columns) {
  auto stream = take1(c_.scan(table_name(table), s));
  return take1(scanners_.open(std::move(stream), sort_columns));
}

t1::ScannerID thrift1_handler::scannerOpenWithScan(const t1::Text& tableName, const t1::TScan& ts, const attributes&) {
  cellar::scan s;
  if (ts.__isset.startRow) s.start_row(ts.startRow);
  if (ts.__isset.stopRow) s.stop_row(ts.stopRow);
  if (ts.__isset.timestamp) s.range(0, ts.timestamp);
  if (ts.__isset.caching && ts.caching > 0) s.caching(ts.caching);
  if (ts.__isset.batchSize && ts.batchSize > 0) s.batch(ts.batchSize);
  if (ts.__isset.columns) select_columns(ts.columns, s.options);
  if (ts.__isset.filterString && !ts.filterString.empty()) s.filter(take1(parse_filter(ts.filterString)));
  if (ts.__isset.reversed) s.reversed(ts.reversed);
  return open_scanner(tableName, s, ts.__isset.sortColumns && ts.sortColumns);
}

t1::ScannerID thrift1_handler::scannerOpen(const t1::Text& tableName, const t1::Text& startRow,
                                           const std::vector<t1::Text>& columns, const attributes&) {
  cellar::scan s;
  s.start_row(startRow);
  select_columns(columns, s.options);
  return open_scanner(tableName, s, false);
}

t1::ScannerID thrift1_handler::scannerOpenWithStop(const t1::Text& tableName, const t1::Text& startRow,
                                                   const t1::Text& stopRow, const std::vector<t1::Text>& columns,
                                                   const attributes&) {
  cellar::scan s;
  s.start_row(startRow).stop_row(stopRow);
  select_columns(columns, s.options);
  return open_scanner(tableName, s, false);
}

t1::ScannerID thrift1_handler::scannerOpenWithPrefix(const t1::Text& tableName, const t1::Text& startAndPrefix,
                                                     const std::vector<t1::Text>& columns, const attributes&) {
  // HBase adds WhileMatchFilter(PrefixFilter(prefix)) from the prefix on: the same rows as
  // stopping at the first row past the prefix.
  cellar::scan s;
  s.start_row(startAndPrefix).stop_row(prefix_stop_row(startAndPrefix));
  select_columns(columns, s.options);
  return open_scanner(tableName, s, false);
}

t1::ScannerID thrift1_handler::scannerOpenTs(const t1::Text& tableName, const t1::Text& startRow,
                                             const std::vector<t1::Text>& columns, std::int64_t timestamp,
                                             const attributes&) {
  cellar::scan s;
  s.start_row(startRow).range(0, timestamp);
  select_columns(columns, s.options);
  return open_scanner(tableName, s, false);
}

t1::ScannerID thrift1_handler::scannerOpenWithStopTs(const t1::Text& tableName, const t1::Text& startRow,
                                                     const t1::Text& stopRow, const std::vector<t1::Text>& columns,
                                                     std::int64_t timestamp, const attributes&) {
  cellar::scan s;
  s.start_row(startRow).stop_row(stopRow).range(0, timestamp);
  select_columns(columns, s.options);
  return open_scanner(tableName, s, false);
}

void thrift1_handler::scannerGet(std::vector<t1::TRowResult>& out, t1::ScannerID id) { scannerGetList(out, id, 1); }

void thrift1_handler::scannerGetList(std::vector<t1::TRowResult>& out, t1::ScannerID id, std::int32_t nbRows) {
  auto e = scanners_.find(id);
  if (!e) raise<t1::IllegalArgument>(status(code::invalid_argument, "scanner ID is invalid: " + std::to_string(id)));
  absl::MutexLock l(&e->mu);
  auto got = take1(e->stream->next(static_cast<std::size_t>(nbRows < 1 ? 1 : nbRows)), true);
  out.reserve(got.size());
  for (const auto& r : got) out.push_back(to_trowresult(r, e->sort_columns));
}

void thrift1_handler::scannerClose(t1::ScannerID id) {
  if (!scanners_.close(id))
    raise<t1::IllegalArgument>(status(code::invalid_argument, "scanner ID is invalid: " + std::to_string(id)));
}

void thrift1_handler::getClusterId(std::string& out) { out = "cellar"; }

bool thrift1_handler::grant(const t1::TAccessControlEntity&) {
  raise1(status(code::unsupported, "grant: cellar has no access control lists (a token guards the main port)"));
}

bool thrift1_handler::revoke(const t1::TAccessControlEntity&) {
  raise1(status(code::unsupported, "revoke: cellar has no access control lists (a token guards the main port)"));
}

}  // namespace cellar::thrift
