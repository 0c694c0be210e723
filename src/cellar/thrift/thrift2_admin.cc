// THBaseService's table, region and namespace methods.
#include <algorithm>
#include <set>

#include <re2/re2.h>

#include "route/router.h"
#include "thrift/convert2.h"
#include "thrift/errors.h"
#include "thrift/regions.h"
#include "thrift/thrift2_handler.h"

namespace cellar::thrift {

namespace {

using io_error = t2::TIOError;

// Partition `i` of `d` as an HBase region. Range partitions have the key range HBase's
// regions have; KEY (hash) partitions hold rows from the whole key space, so their start
// and end keys are both empty, as a table's only region's are.
t2::THRegionInfo region_info(const table_descriptor& d, std::uint32_t i) {
  t2::THRegionInfo r;
  r.regionId = i;
  r.tableName = d.name;
  const auto& p = d.partitioning;
  std::string start, end;
  if (p.how == partition_spec::method::range) {
    if (i > 0) start = p.bounds[i - 1];
    if (i < p.bounds.size()) end = p.bounds[i];
  }
  r.__set_startKey(start);
  r.__set_endKey(end);
  r.__set_offline(false);
  r.__set_split(false);
  r.__set_replicaId(0);
  return r;
}

}  // namespace

std::string thrift2_handler::table_of(const t2::TTableName& t) { return table_name(t); }

void thrift2_handler::getRegionLocation(t2::THRegionLocation& out, const std::string& table, const std::string& row,
                                        bool reload) {
  (void)reload;  // nothing is cached here
  auto d = take<io_error>(c_.describe(table_name(table)));
  const auto i = detail::partition_of(d.partitioning, row);
  out.regionInfo = region_info(d, i);
  const auto servers = partition_servers(s_, d.name, d.partitioning.count(), where_);
  out.serverName.hostName = servers[i].host;
  out.serverName.__set_port(servers[i].port);
}

void thrift2_handler::getAllRegionLocations(std::vector<t2::THRegionLocation>& out, const std::string& table) {
  auto d = take<io_error>(c_.describe(table_name(table)));
  const auto servers = partition_servers(s_, d.name, d.partitioning.count(), where_);
  for (std::uint32_t i = 0; i < d.partitioning.count(); ++i) {
    t2::THRegionLocation l;
    l.regionInfo = region_info(d, i);
    l.serverName.hostName = servers[i].host;
    l.serverName.__set_port(servers[i].port);
    out.push_back(std::move(l));
  }
}

void thrift2_handler::getTableDescriptor(t2::TTableDescriptor& out, const t2::TTableName& table) {
  out = to_ttable_descriptor(take<io_error>(c_.describe(table_of(table))));
}

void thrift2_handler::getTableDescriptors(std::vector<t2::TTableDescriptor>& out,
                                          const std::vector<t2::TTableName>& tables) {
  for (const auto& t : tables) out.push_back(to_ttable_descriptor(take<io_error>(c_.describe(table_of(t)))));
}

bool thrift2_handler::tableExists(const t2::TTableName& tableName) {
  auto d = c_.describe(table_of(tableName));
  if (d.code() == code::table_not_found) return false;
  check<io_error>(d.error());
  return true;
}

std::vector<std::string> thrift2_handler::tables_matching(const std::string& regex) {
  auto tables = take<io_error>(c_.list_tables());
  std::sort(tables.begin(), tables.end());
  if (regex.empty()) return tables;
  RE2 re(regex);  // Java's Pattern.matches: the whole name
  if (!re.ok())
    raise<io_error>(status(code::invalid_argument, "bad regular expression '" + regex + "': " + re.error()));
  std::vector<std::string> out;
  for (auto& t : tables)
    if (RE2::FullMatch(t, re)) out.push_back(std::move(t));
  return out;
}

void thrift2_handler::getTableDescriptorsByPattern(std::vector<t2::TTableDescriptor>& out, const std::string& regex,
                                                   bool includeSysTables) {
  (void)includeSysTables;  // cellar has no system tables
  for (const auto& t : tables_matching(regex)) {
    auto d = c_.describe(t);
    if (d) out.push_back(to_ttable_descriptor(*d));  // a table dropped meanwhile is skipped
  }
}

void thrift2_handler::getTableNamesByPattern(std::vector<t2::TTableName>& out, const std::string& regex,
                                             bool includeSysTables) {
  (void)includeSysTables;
  for (const auto& t : tables_matching(regex)) out.push_back(to_ttable_name(t));
}

void thrift2_handler::getTableDescriptorsByNamespace(std::vector<t2::TTableDescriptor>& out, const std::string& name) {
  for (const auto& t : take<io_error>(c_.list_namespace_tables(name))) {
    auto d = c_.describe(t);
    if (d) out.push_back(to_ttable_descriptor(*d));  // a table dropped meanwhile is skipped
  }
}

void thrift2_handler::getTableNamesByNamespace(std::vector<t2::TTableName>& out, const std::string& name) {
  for (const auto& t : take<io_error>(c_.list_namespace_tables(name))) out.push_back(to_ttable_name(t));
}

void thrift2_handler::createTable(const t2::TTableDescriptor& desc, const std::vector<std::string>& splitKeys) {
  auto d = take<io_error>(to_table_descriptor(desc, splitKeys, options_.default_partitions));
  check<io_error>(c_.create_table(d, schema_origin::hbase_shell));
}

void thrift2_handler::deleteTable(const t2::TTableName& tableName) {
  check<io_error>(c_.drop_table(table_of(tableName)));
}

void thrift2_handler::truncateTable(const t2::TTableName& tableName, bool preserveSplits) {
  (void)preserveSplits;  // a cellar table keeps its partitions through a truncate
  check<io_error>(c_.truncate_table(table_of(tableName)));
}

void thrift2_handler::enableTable(const t2::TTableName& tableName) {
  check<io_error>(c_.enable_table(table_of(tableName)));
}

void thrift2_handler::disableTable(const t2::TTableName& tableName) {
  check<io_error>(c_.disable_table(table_of(tableName)));
}

bool thrift2_handler::isTableEnabled(const t2::TTableName& tableName) {
  return take<io_error>(c_.is_table_enabled(table_of(tableName)));
}

bool thrift2_handler::isTableDisabled(const t2::TTableName& tableName) { return !isTableEnabled(tableName); }

bool thrift2_handler::isTableAvailable(const t2::TTableName& tableName) {
  auto d = c_.describe(table_of(tableName));
  if (d.code() == code::table_not_found) return false;
  check<io_error>(d.error());
  return true;
}

bool thrift2_handler::isTableAvailableWithSplit(const t2::TTableName& tableName,
                                                const std::vector<std::string>& splitKeys) {
  auto d = c_.describe(table_of(tableName));
  if (d.code() == code::table_not_found) return false;
  check<io_error>(d.error());
  if (splitKeys.empty()) return true;
  std::set<std::string> want(splitKeys.begin(), splitKeys.end());
  const auto& b = d->partitioning.bounds;
  return d->partitioning.how == partition_spec::method::range && std::set<std::string>(b.begin(), b.end()) == want;
}

void thrift2_handler::addColumnFamily(const t2::TTableName& tableName, const t2::TColumnFamilyDescriptor& column) {
  const auto table = table_of(tableName);
  auto f = take<io_error>(to_family_descriptor(column));
  auto d = take<io_error>(c_.describe(table));
  for (const auto& have : d.families)
    if (have.name == f.name)
      raise<io_error>(status(code::already_exists, "family '" + f.name + "' already exists in table '" + table + "'"));
  check<io_error>(c_.alter_family(table, f));
}

void thrift2_handler::deleteColumnFamily(const t2::TTableName& tableName, const std::string& column) {
  check<io_error>(c_.drop_family(table_of(tableName), column));
}

void thrift2_handler::modifyColumnFamily(const t2::TTableName& tableName, const t2::TColumnFamilyDescriptor& column) {
  const auto table = table_of(tableName);
  auto f = take<io_error>(to_family_descriptor(column));
  auto d = take<io_error>(c_.describe(table));
  if (std::none_of(d.families.begin(), d.families.end(), [&](const auto& have) { return have.name == f.name; }))
    raise<io_error>(status(code::family_not_found, "family '" + f.name + "' does not exist in table '" + table + "'"));
  check<io_error>(c_.alter_family(table, f));
}

void thrift2_handler::modifyTable(const t2::TTableDescriptor& desc) {
  // HBase replaces the whole descriptor: families it lists are added or changed, the others
  // dropped, and the table's attributes become the ones it gives. The partitions stay.
  auto want = take<io_error>(to_table_descriptor(desc, {}, 1));
  auto have = take<io_error>(c_.describe(want.name));
  if (want.families.empty()) raise<io_error>(status(code::invalid_argument, "a table needs at least one family"));
  for (const auto& f : want.families) check<io_error>(c_.alter_family(want.name, f));
  for (const auto& f : have.families)
    if (std::none_of(want.families.begin(), want.families.end(), [&](const auto& w) { return w.name == f.name; }))
      check<io_error>(c_.drop_family(want.name, f.name));
  std::vector<std::string> unset;
  for (const auto& [k, v] : have.attributes)
    if (!want.attributes.contains(k)) unset.push_back(k);
  if (!want.attributes.empty() || !unset.empty()) check<io_error>(c_.alter_table(want.name, want.attributes, unset));
}

void thrift2_handler::createNamespace(const t2::TNamespaceDescriptor& namespaceDesc) {
  check<io_error>(c_.create_namespace({namespaceDesc.name, namespaceDesc.configuration}));
}

void thrift2_handler::modifyNamespace(const t2::TNamespaceDescriptor& namespaceDesc) {
  // HBase replaces the descriptor: the properties become the ones given.
  auto have = take<io_error>(c_.describe_namespace(namespaceDesc.name));
  std::vector<std::string> unset;
  for (const auto& [k, v] : have.properties)
    if (!namespaceDesc.configuration.contains(k)) unset.push_back(k);
  check<io_error>(c_.alter_namespace(namespaceDesc.name, namespaceDesc.configuration, unset));
}

void thrift2_handler::deleteNamespace(const std::string& name) { check<io_error>(c_.drop_namespace(name)); }

void thrift2_handler::getNamespaceDescriptor(t2::TNamespaceDescriptor& out, const std::string& name) {
  out = to_tnamespace(take<io_error>(c_.describe_namespace(name)));
}

void thrift2_handler::listNamespaceDescriptors(std::vector<t2::TNamespaceDescriptor>& out) {
  for (const auto& ns : take<io_error>(c_.list_namespaces())) out.push_back(to_tnamespace(ns));
}

void thrift2_handler::listNamespaces(std::vector<std::string>& out) {
  for (auto& ns : take<io_error>(c_.list_namespaces())) out.push_back(std::move(ns.name));
}

}  // namespace cellar::thrift
