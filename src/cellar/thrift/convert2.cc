#include "thrift/convert2.h"

#include <algorithm>
#include <climits>
#include <map>

#include "cellar/filter.h"
#include "cellar/names.h"

namespace cellar::thrift {

namespace {

using attribute_map = std::map<std::string, std::string>;

// Mutation.setTTL keeps the TTL in milliseconds as the attribute "_ttl" (8 bytes, big-endian).
result<std::optional<std::int64_t>> ttl_attribute(const attribute_map& attributes) {
  auto it = attributes.find("_ttl");
  if (it == attributes.end()) return std::optional<std::int64_t>();
  auto v = to_long(it->second);
  if (!v) return status(code::invalid_argument, "attribute _ttl must be an 8-byte long");
  return std::optional<std::int64_t>(*v);
}

status unsupported(const std::string& what) { return {code::unsupported, what + " is not supported by cellar"}; }

result<std::optional<filter>> filter_of(bool string_set, const std::string& text, bool bytes_set) {
  if (bytes_set) return unsupported("filterBytes (a serialized Java filter); use filterString");
  if (!string_set || text.empty()) return std::optional<filter>();
  auto f = parse_filter(text);
  if (!f) return f.error();
  return std::optional<filter>(std::move(f).value());
}

void add_columns(const std::vector<t2::TColumn>& columns, read_options& o) {
  for (const auto& c : columns) {
    if (c.__isset.qualifier)
      o.columns.add_column(c.family, c.qualifier);
    else
      o.columns.add_family(c.family);
  }
}

}  // namespace

result<cellar::get> to_get(const t2::TGet& g) {
  cellar::get out(g.row);
  add_columns(g.columns, out.options);
  if (g.__isset.timestamp)
    out.timestamp(g.timestamp);
  else if (g.__isset.timeRange)
    out.range(g.timeRange.minStamp, g.timeRange.maxStamp);
  if (g.__isset.maxVersions) {
    if (g.maxVersions < 1) return status(code::invalid_argument, "maxVersions must be at least 1");
    out.max_versions(static_cast<std::uint32_t>(g.maxVersions));
  }
  auto f = filter_of(g.__isset.filterString, g.filterString, g.__isset.filterBytes);
  if (!f) return f.error();
  if (f->has_value()) out.filter(std::move(**f));
  if (g.__isset.storeLimit) out.max_per_family(g.storeLimit);
  if (g.__isset.storeOffset) out.offset_per_family(g.storeOffset);
  if (g.__isset.existence_only && g.existence_only) out.exists_only();
  return out;
}

result<cellar::put> to_put(const t2::TPut& p) {
  if (p.__isset.cellVisibility) return unsupported("cellVisibility");
  cellar::put out(p.row, p.__isset.timestamp ? p.timestamp : latest_timestamp);
  for (const auto& cv : p.columnValues) {
    if (cv.__isset.tags) return unsupported("cell tags");
    out.add(cv.family, cv.qualifier, cv.__isset.timestamp ? cv.timestamp : out.timestamp, cv.value);
  }
  auto ttl = ttl_attribute(p.attributes);
  if (!ttl) return ttl.error();
  if (*ttl) out.ttl(**ttl);
  return out;
}

result<cellar::deletion> to_deletion(const t2::TDelete& d) {
  cellar::deletion out(d.row, d.__isset.timestamp ? d.timestamp : latest_timestamp);
  // An unset deleteType reads as the IDL's default, DELETE_COLUMNS, as in HBase.
  const auto type = d.deleteType;
  for (const auto& c : d.columns) {
    if (c.__isset.qualifier) {
      const bool all = type == t2::TDeleteType::DELETE_COLUMNS;
      if (c.__isset.timestamp)
        all ? out.columns(c.family, c.qualifier, c.timestamp) : out.column(c.family, c.qualifier, c.timestamp);
      else
        all ? out.columns(c.family, c.qualifier) : out.column(c.family, c.qualifier);
    } else if (type == t2::TDeleteType::DELETE_FAMILY_VERSION) {
      if (!c.__isset.timestamp) return status(code::invalid_argument, "DELETE_FAMILY_VERSION needs a timestamp");
      out.family_version(c.family, c.timestamp);
    } else if (c.__isset.timestamp) {
      out.family(c.family, c.timestamp);
    } else {
      out.family(c.family);
    }
  }
  return out;
}

result<cellar::increment> to_increment(const t2::TIncrement& i) {
  if (i.__isset.cellVisibility) return unsupported("cellVisibility");
  cellar::increment out(i.row);
  for (const auto& c : i.columns) out.add(c.family, c.qualifier, c.amount);
  if (i.__isset.returnResults) out.return_results(i.returnResults);
  auto ttl = ttl_attribute(i.attributes);
  if (!ttl) return ttl.error();
  if (*ttl) out.ttl(**ttl);
  return out;
}

result<cellar::append> to_append(const t2::TAppend& a) {
  if (a.__isset.cellVisibility) return unsupported("cellVisibility");
  cellar::append out(a.row);
  for (const auto& c : a.columns) out.add(c.family, c.qualifier, c.value);
  if (a.__isset.returnResults) out.return_results(a.returnResults);
  auto ttl = ttl_attribute(a.attributes);
  if (!ttl) return ttl.error();
  if (*ttl) out.ttl(**ttl);
  return out;
}

result<cellar::scan> to_scan(const t2::TScan& s) {
  cellar::scan out;
  if (s.__isset.startRow) out.start_row(s.startRow);
  if (s.__isset.stopRow) out.stop_row(s.stopRow);
  add_columns(s.columns, out.options);
  if (s.__isset.caching && s.caching > 0) out.caching(s.caching);
  if (s.__isset.maxVersions) {
    if (s.maxVersions < 1) return status(code::invalid_argument, "maxVersions must be at least 1");
    out.max_versions(static_cast<std::uint32_t>(s.maxVersions));
  }
  if (s.__isset.timeRange) out.range(s.timeRange.minStamp, s.timeRange.maxStamp);
  auto f = filter_of(s.__isset.filterString, s.filterString, s.__isset.filterBytes);
  if (!f) return f.error();
  if (f->has_value()) out.filter(std::move(**f));
  if (s.__isset.batchSize && s.batchSize > 0) out.batch(s.batchSize);
  if (s.__isset.reversed) out.reversed(s.reversed);
  if (s.__isset.colFamTimeRangeMap && !s.colFamTimeRangeMap.empty()) return unsupported("colFamTimeRangeMap");
  if (s.__isset.limit && s.limit > 0) out.limit(s.limit);
  return out;
}

result<cellar::row_mutations> to_row_mutations(const t2::TRowMutations& m) {
  cellar::row_mutations out(m.row);
  for (const auto& mu : m.mutations) {
    if (mu.__isset.put) {
      auto p = to_put(mu.put);
      if (!p) return p.error();
      out.add(std::move(p).value());
    } else if (mu.__isset.deleteSingle) {
      auto d = to_deletion(mu.deleteSingle);
      if (!d) return d.error();
      out.add(std::move(d).value());
    } else {
      return status(code::invalid_argument, "a TMutation must set put or deleteSingle");
    }
  }
  return out;
}

compare_op to_compare_op(t2::TCompareOperator::type op) {
  switch (op) {
    case t2::TCompareOperator::LESS: return compare_op::less;
    case t2::TCompareOperator::LESS_OR_EQUAL: return compare_op::less_or_equal;
    case t2::TCompareOperator::EQUAL: return compare_op::equal;
    case t2::TCompareOperator::NOT_EQUAL: return compare_op::not_equal;
    case t2::TCompareOperator::GREATER_OR_EQUAL: return compare_op::greater_or_equal;
    case t2::TCompareOperator::GREATER: return compare_op::greater;
    case t2::TCompareOperator::NO_OP: return compare_op::no_op;
  }
  return compare_op::equal;
}

t2::TResult to_tresult(const row_result& r) {
  t2::TResult out;
  // HBase sets the row only for a result with cells.
  if (!r.cells.empty()) out.__set_row(r.cells.front().row);
  out.columnValues.reserve(r.cells.size());
  for (const auto& c : r.cells) {
    t2::TColumnValue cv;
    cv.family = c.family;
    cv.qualifier = c.qualifier;
    cv.value = c.value;
    cv.__set_timestamp(c.timestamp);
    cv.__set_type(4);  // KeyValue.Type.Put: every cell a read returns is a value, never a marker
    out.columnValues.push_back(std::move(cv));
  }
  if (r.partial) out.__set_partial(true);
  return out;
}

std::string table_name(const t2::TTableName& t) {
  if (!t.__isset.ns || t.ns.empty() || t.ns == default_namespace) return t.qualifier;
  return t.ns + ":" + t.qualifier;
}

std::string table_name(const std::string& t) { return canonical_table_name(t); }

t2::TTableName to_ttable_name(const std::string& table) {
  t2::TTableName n;
  const auto colon = table.find(':');
  n.__set_ns(colon == std::string::npos ? std::string(default_namespace) : table.substr(0, colon));
  n.qualifier = colon == std::string::npos ? table : table.substr(colon + 1);
  return n;
}

t2::TNamespaceDescriptor to_tnamespace(const namespace_descriptor& ns) {
  t2::TNamespaceDescriptor out;
  out.name = ns.name;
  out.__set_configuration(ns.properties);
  return out;
}

namespace {

template <class Enum>
void set_enum_attribute(attribute_map& a, const char* key, const std::map<int, const char*>& names, Enum v) {
  auto it = names.find(static_cast<int>(v));
  if (it != names.end()) a[key] = it->second;
}

const char* boolean(bool b) { return b ? "true" : "false"; }

result<std::int64_t> integer_attribute(const std::string& key, const std::string& v) {
  try {
    std::size_t pos = 0;
    const long long n = std::stoll(v, &pos);
    if (pos == v.size()) return static_cast<std::int64_t>(n);
  } catch (...) {}
  return status(code::invalid_argument, key + " must be an integer, not '" + v + "'");
}

}  // namespace

result<family_descriptor> to_family_descriptor(const t2::TColumnFamilyDescriptor& f) {
  family_descriptor out;
  out.name = f.name;
  // The attributes map carries what HBase's ColumnFamilyDescriptor holds by its shell
  // names, the typed fields some of the same: the typed fields win.
  for (const auto& [k, v] : f.attributes) {
    if (k == "VERSIONS" || k == "MIN_VERSIONS" || k == "TTL") {
      auto n = integer_attribute(k, v);
      if (!n) return n.error();
      if (*n < 0) return status(code::invalid_argument, k + " must not be negative");
      if (k == "VERSIONS") out.max_versions = static_cast<std::uint32_t>(std::min<std::int64_t>(*n, UINT32_MAX));
      if (k == "MIN_VERSIONS") out.min_versions = static_cast<std::uint32_t>(std::min<std::int64_t>(*n, UINT32_MAX));
      if (k == "TTL") out.ttl_seconds = *n == INT32_MAX ? 0 : *n;
    } else if (k != "NAME") {
      out.attributes[k] = v;
    }
  }
  if (f.__isset.maxVersions) {
    if (f.maxVersions < 1) return status(code::invalid_argument, "maxVersions must be at least 1");
    out.max_versions = static_cast<std::uint32_t>(f.maxVersions);
  }
  if (f.__isset.minVersions) {
    if (f.minVersions < 0) return status(code::invalid_argument, "minVersions must not be negative");
    out.min_versions = static_cast<std::uint32_t>(f.minVersions);
  }
  if (f.__isset.timeToLive) {
    if (f.timeToLive < 1) return status(code::invalid_argument, "timeToLive must be at least 1 second");
    out.ttl_seconds = f.timeToLive == INT32_MAX ? 0 : f.timeToLive;  // HConstants.FOREVER
  }
  auto& a = out.attributes;
  if (f.__isset.blockSize) a["BLOCKSIZE"] = std::to_string(f.blockSize);
  if (f.__isset.bloomnFilterType)
    set_enum_attribute(a, "BLOOMFILTER", t2::_TBloomFilterType_VALUES_TO_NAMES, f.bloomnFilterType);
  if (f.__isset.compressionType)
    set_enum_attribute(a, "COMPRESSION", t2::_TCompressionAlgorithm_VALUES_TO_NAMES, f.compressionType);
  if (f.__isset.dfsReplication) a["DFS_REPLICATION"] = std::to_string(f.dfsReplication);
  if (f.__isset.dataBlockEncoding)
    set_enum_attribute(a, "DATA_BLOCK_ENCODING", t2::_TDataBlockEncoding_VALUES_TO_NAMES, f.dataBlockEncoding);
  if (f.__isset.keepDeletedCells)
    set_enum_attribute(a, "KEEP_DELETED_CELLS", t2::_TKeepDeletedCells_VALUES_TO_NAMES, f.keepDeletedCells);
  if (f.__isset.scope) a["REPLICATION_SCOPE"] = std::to_string(f.scope);
  if (f.__isset.blockCacheEnabled) a["BLOCKCACHE"] = boolean(f.blockCacheEnabled);
  if (f.__isset.cacheBloomsOnWrite) a["CACHE_BLOOMS_ON_WRITE"] = boolean(f.cacheBloomsOnWrite);
  if (f.__isset.cacheDataOnWrite) a["CACHE_DATA_ON_WRITE"] = boolean(f.cacheDataOnWrite);
  if (f.__isset.cacheIndexesOnWrite) a["CACHE_INDEX_ON_WRITE"] = boolean(f.cacheIndexesOnWrite);
  if (f.__isset.compressTags) a["COMPRESS_TAGS"] = boolean(f.compressTags);
  if (f.__isset.evictBlocksOnClose) a["EVICT_BLOCKS_ON_CLOSE"] = boolean(f.evictBlocksOnClose);
  if (f.__isset.inMemory) a["IN_MEMORY"] = boolean(f.inMemory);
  return out;
}

result<table_descriptor> to_table_descriptor(const t2::TTableDescriptor& d, const std::vector<std::string>& split_keys,
                                             std::uint32_t default_partitions) {
  table_descriptor out;
  out.name = table_name(d.tableName);
  for (const auto& f : d.columns) {
    auto fd = to_family_descriptor(f);
    if (!fd) return fd.error();
    out.families.push_back(std::move(fd).value());
  }
  for (const auto& [k, v] : d.attributes) out.attributes[k] = v;
  if (d.__isset.durability && d.durability != t2::TDurability::USE_DEFAULT)
    set_enum_attribute(out.attributes, "DURABILITY", t2::_TDurability_VALUES_TO_NAMES, d.durability);
  if (split_keys.empty()) {
    out.partitioning = partition_spec::hash(default_partitions);
  } else {
    std::vector<std::string> bounds = split_keys;
    std::sort(bounds.begin(), bounds.end());
    if (std::adjacent_find(bounds.begin(), bounds.end()) != bounds.end())
      return status(code::invalid_argument, "split keys must be distinct");
    if (bounds.front().empty()) return status(code::invalid_argument, "a split key must not be empty");
    out.partitioning = partition_spec::range_bounds(std::move(bounds));
  }
  return out;
}

t2::TTableDescriptor to_ttable_descriptor(const table_descriptor& d) {
  t2::TTableDescriptor out;
  out.tableName = to_ttable_name(d.name);
  std::vector<t2::TColumnFamilyDescriptor> columns;
  for (const auto& f : d.families) {
    t2::TColumnFamilyDescriptor c;
    c.name = f.name;
    std::map<std::string, std::string> attributes(f.attributes.begin(), f.attributes.end());
    c.__set_attributes(std::move(attributes));
    c.__set_maxVersions(f.max_versions == 0
                            ? INT32_MAX
                            : static_cast<std::int32_t>(std::min<std::uint32_t>(f.max_versions, INT32_MAX)));
    c.__set_minVersions(static_cast<std::int32_t>(std::min<std::uint32_t>(f.min_versions, INT32_MAX)));
    c.__set_timeToLive(
        f.ttl_seconds == 0 ? INT32_MAX : static_cast<std::int32_t>(std::min<std::int64_t>(f.ttl_seconds, INT32_MAX)));
    columns.push_back(std::move(c));
  }
  out.__set_columns(std::move(columns));
  out.__set_attributes(std::map<std::string, std::string>(d.attributes.begin(), d.attributes.end()));
  return out;
}

}  // namespace cellar::thrift
