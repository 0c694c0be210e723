// store_admin.cc: table states and per-family DDL of `store` (store.h): HBase's
// disable / enable (SH3) and OceanBase's TRUNCATE TABLE group$family.
//
// Each call is a schema change like those in store.cc: under ddl_mutex, copy the schema,
// change it, persist it (commit_schema) and publish the new runtime. Data calls read the
// published schema at admission (store.cc `admit`, scanner.cc `table::scan`), so a
// disabled flag takes effect for every call admitted after the swap.
#include <algorithm>
#include <mutex>

#include "store_impl.h"

namespace cellar {

namespace detail {

status table_disabled_error(std::string_view table) {
  return {code::table_disabled, "table '" + std::string(table) + "' is disabled; enable it first"};
}

}  // namespace detail

using namespace detail;

namespace {

status not_found(std::string_view table) {
  return {code::table_not_found, "table '" + std::string(table) + "' does not exist"};
}

status set_disabled(store_impl& s, const std::string& table, bool disabled) {
  if (auto hooks = s.cluster.load()) {
    ddl_call c;
    c.what = disabled ? ddl_call::kind::disable_table : ddl_call::kind::enable_table;
    c.table = table;
    return hooks->ddl(c);
  }
  std::lock_guard lock(s.ddl_mutex);
  auto old = s.lookup(table);
  if (!old) return not_found(table);
  if (old->schema->disabled == disabled) return status::ok();  // as HBase's shell: nothing to do
  auto schema = std::make_shared<table_schema>(*old->schema);
  schema->disabled = disabled;
  return commit_schema(s, std::move(schema), old.get()).error();
}

}  // namespace

status store::disable_table(const std::string& table) { return set_disabled(*impl_, table, true); }

status store::enable_table(const std::string& table) { return set_disabled(*impl_, table, false); }

result<bool> store::is_table_enabled(const std::string& table) const {
  auto rt = impl_->lookup(table);
  if (!rt) return not_found(table);
  return !rt->schema->disabled;
}

status store::truncate_family(const std::string& table, const std::string& family) {
  if (auto hooks = impl_->cluster.load()) {
    ddl_call c;
    c.what = ddl_call::kind::truncate_family;
    c.table = table;
    c.family_name = family;
    return hooks->ddl(c);
  }
  std::lock_guard lock(impl_->ddl_mutex);
  auto old = impl_->lookup(table);
  if (!old) return not_found(table);
  const family_schema* f = old->schema->find(family);
  if (!f) return {code::family_not_found, "family '" + family + "' does not exist in table '" + table + "'"};
  // A new family id: the old cells become unreachable at the swap, then are freed (as
  // truncate_table does for every family).
  const std::uint32_t old_id = f->id;
  auto schema = std::make_shared<table_schema>(*old->schema);
  for (auto& x : schema->families)
    if (x.id == old_id) x.id = impl_->next_family_id++;
  auto rt = commit_schema(*impl_, std::move(schema), old.get());
  if (!rt) return rt.error();
  drop_family_cells(*impl_, **rt, {old_id});
  return status::ok();
}

}  // namespace cellar
