// cellar/names.h: table names with a namespace, as HBase writes them.
//
// A table's full name is `namespace:qualifier`. A name without a colon is in the `default`
// namespace, and `default:t` names the same table as `t`: the store keeps and lists a
// default-namespace table under its bare qualifier, every other table under `ns:t`. The
// `hbase` namespace is the system one (HBase keeps its catalog tables there): it always
// exists, cannot be dropped and takes no user table. In OceanBase terms a namespace is a
// database (docs/semantics.md §7, "Namespaces").
//
// Every front end (the shell, the embedded API, the Cap'n Proto and Thrift gateways) reads
// table names through parse_table_name, so `ns:t` means the same everywhere.
//
// Thread safety: plain functions.
#pragma once

#include <string>
#include <string_view>

#include "cellar/status.h"

namespace cellar {

inline constexpr std::string_view default_namespace = "default";
inline constexpr std::string_view system_namespace = "hbase";

struct table_name {
  std::string ns;         // "default" when the name has none
  std::string qualifier;  // the table's name within its namespace

  // The name the store keeps: the qualifier alone in the default namespace, else ns:qualifier.
  std::string full() const;
  bool operator==(const table_name&) const = default;
};

// Splits `name` at its colon and checks both parts: each 1 to 128 bytes of letters, digits,
// '_', '-' and '.' (HBase's characters; the qualifier may not start with '.' or '-' for
// HBase, which cellar does not insist on). Errors: INVALID_ARGUMENT naming what is wrong
// (an empty part, a second colon, a bad character).
result<table_name> parse_table_name(std::string_view name);

// Checks a namespace name as parse_table_name checks its first part. INVALID_ARGUMENT.
status check_namespace_name(std::string_view ns);

// The name the store keeps for `name` (parse_table_name(name)->full()), or `name` itself
// when it does not parse (the call that uses it then reports the error).
std::string canonical_table_name(std::string_view name);

}  // namespace cellar
