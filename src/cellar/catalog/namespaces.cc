#include "catalog/namespaces.h"

#include <charconv>

#include "cellar/names.h"

namespace cellar::detail {

namespace {

constexpr std::string_view max_tables = "hbase.namespace.quota.maxtables";
constexpr std::string_view max_regions = "hbase.namespace.quota.maxregions";

status not_found(std::string_view ns) {
  return {code::not_found, "namespace '" + std::string(ns) + "' does not exist"};
}

status check_quota_value(std::string_view key, const std::string& v) {
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || p != v.data() + v.size() || v.empty())
    return {code::invalid_argument, std::string(key) + " must be a whole number, not '" + v + "'"};
  return status::ok();
}

status check_properties(const std::map<std::string, std::string>& props) {
  for (const auto& [k, v] : props) {
    if (k.empty()) return {code::invalid_argument, "a namespace property needs a name"};
    if (k == max_tables || k == max_regions)
      if (auto s = check_quota_value(k, v); !s) return s;
  }
  return status::ok();
}

// The quota `key` of `props`, or nullopt-like UINT64_MAX when unset.
std::uint64_t quota(const std::map<std::string, std::string>& props, std::string_view key) {
  auto it = props.find(std::string(key));
  if (it == props.end()) return UINT64_MAX;
  std::uint64_t n = 0;
  std::from_chars(it->second.data(), it->second.data() + it->second.size(), n);
  return n;
}

}  // namespace

namespace_map builtin_namespaces() {
  namespace_map m;
  m[std::string(default_namespace)];
  m[std::string(system_namespace)];
  return m;
}

bool is_builtin_namespace(std::string_view ns) { return ns == default_namespace || ns == system_namespace; }

std::string_view namespace_of(std::string_view table) {
  auto colon = table.find(':');
  return colon == std::string_view::npos ? default_namespace : table.substr(0, colon);
}

namespace_usage usage_of(std::string_view ns, const std::vector<std::pair<std::string, std::uint32_t>>& tables) {
  namespace_usage u;
  for (const auto& [name, partitions] : tables)
    if (namespace_of(name) == ns) {
      ++u.tables;
      u.partitions += partitions;
    }
  return u;
}

status check_create_namespace(const namespace_map& all, const namespace_descriptor& ns) {
  if (auto s = check_namespace_name(ns.name); !s) return s;
  if (all.count(ns.name)) return {code::already_exists, "namespace '" + ns.name + "' already exists"};
  return check_properties(ns.properties);
}

status check_drop_namespace(const namespace_map& all, std::string_view ns, const namespace_usage& used) {
  if (is_builtin_namespace(ns))
    return {code::invalid_argument, "namespace '" + std::string(ns) + "' is reserved and cannot be removed"};
  if (!all.count(ns)) return not_found(ns);
  if (used.tables > 0)
    return {code::invalid_argument, "Only empty namespaces can be removed. Namespace " + std::string(ns) + " has " +
                                        std::to_string(used.tables) + " tables"};
  return status::ok();
}

status alter_namespace_properties(const namespace_map& all, std::string_view ns,
                                  const std::map<std::string, std::string>& set, const std::vector<std::string>& unset,
                                  std::map<std::string, std::string>& out) {
  auto it = all.find(ns);
  if (it == all.end()) return not_found(ns);
  auto props = it->second;
  for (const auto& k : unset)
    if (props.erase(k) == 0)
      return {code::invalid_argument, "namespace '" + std::string(ns) + "' has no property '" + k + "'"};
  if (auto s = check_properties(set); !s) return s;
  for (const auto& [k, v] : set) props[k] = v;
  out = std::move(props);
  return status::ok();
}

status check_table_namespace(const namespace_map& all, std::string_view table, std::uint32_t partitions,
                             const namespace_usage& used) {
  const auto ns = namespace_of(table);
  if (ns == system_namespace)
    return {code::invalid_argument, "table '" + std::string(table) +
                                        "': the hbase namespace is the system "
                                        "namespace and takes no user table"};
  auto it = all.find(ns);
  if (it == all.end()) return not_found(ns);
  const auto tables = quota(it->second, max_tables);
  if (used.tables + 1 > tables)
    return {code::invalid_argument, "The table " + std::string(table) +
                                        " cannot be created as it would exceed "
                                        "maximum number of tables allowed in the namespace. The total number of tables "
                                        "permitted is " +
                                        std::to_string(tables)};
  return check_namespace_regions(all, ns, partitions, used);
}

status check_namespace_regions(const namespace_map& all, std::string_view ns, std::uint64_t extra,
                               const namespace_usage& used) {
  auto it = all.find(ns);
  if (it == all.end()) return not_found(ns);
  const auto regions = quota(it->second, max_regions);
  if (used.partitions + extra > regions)
    return {code::invalid_argument, "The number of regions in namespace " + std::string(ns) + " would be " +
                                        std::to_string(used.partitions + extra) + ", above its quota " +
                                        std::string(max_regions) + " = " + std::to_string(regions)};
  return status::ok();
}

}  // namespace cellar::detail
