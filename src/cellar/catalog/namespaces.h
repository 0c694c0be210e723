// catalog/namespaces.h: the rules of namespaces (cellar/names.h), shared by a store's
// catalog (store/catalog_service.h) and a cluster's (cluster/catalog_state.h), so that a
// namespace DDL means the same thing on one node and on a cluster.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/schema.h"
#include "cellar/status.h"

namespace cellar::detail {

// Namespace name -> its properties.
using namespace_map = std::map<std::string, std::map<std::string, std::string>, std::less<>>;

// `default` and `hbase`, which always exist.
namespace_map builtin_namespaces();
bool is_builtin_namespace(std::string_view ns);

// The namespace of a table's full name: its part before ':', or "default".
std::string_view namespace_of(std::string_view table);

// A table in a namespace, as the rules below count them.
struct namespace_usage {
  std::uint32_t tables = 0;
  std::uint64_t partitions = 0;
};

// What the tables of namespace `ns` hold now; `tables` lists every table's full name and
// partition count.
namespace_usage usage_of(std::string_view ns, const std::vector<std::pair<std::string, std::uint32_t>>& tables);

// CREATE: a valid new name and valid properties. ALREADY_EXISTS, INVALID_ARGUMENT.
status check_create_namespace(const namespace_map& all, const namespace_descriptor& ns);
// DROP: an existing, empty, non-built-in namespace. NOT_FOUND, INVALID_ARGUMENT.
status check_drop_namespace(const namespace_map& all, std::string_view ns, const namespace_usage& used);
// ALTER: removes each of `unset` (one not set: INVALID_ARGUMENT), then sets `set`, checked.
// NOT_FOUND when the namespace does not exist.
status alter_namespace_properties(const namespace_map& all, std::string_view ns,
                                  const std::map<std::string, std::string>& set, const std::vector<std::string>& unset,
                                  std::map<std::string, std::string>& out);
// A new table `table` with `partitions` partitions: its namespace exists, is not the system
// one, and its quotas allow it. NOT_FOUND; INVALID_ARGUMENT (also a quota, in HBase's words).
status check_table_namespace(const namespace_map& all, std::string_view table, std::uint32_t partitions,
                             const namespace_usage& used);
// A table of namespace `ns` growing by `extra` partitions (a split): the maxregions quota.
status check_namespace_regions(const namespace_map& all, std::string_view ns, std::uint64_t extra,
                               const namespace_usage& used);

}  // namespace cellar::detail
