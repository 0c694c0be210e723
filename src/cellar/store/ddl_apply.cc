// store/ddl_apply.cc: DDL statements (catalog/ddl.h) applied to a store.
#include "store/ddl_apply.h"

#include <algorithm>
#include <string>

#include "cellar/cluster_admin.h"
#include "cellar/names.h"

namespace cellar {

status execute_ddl(store& s, const ddl_statement& st) {
  using k = ddl_statement::kind;
  switch (st.what) {
    case k::move_partition: {
      auto admin = cluster_admin::of(s);
      if (!admin) return admin.error();
      return st.from_node.empty() ? admin->move_partition(st.partition, st.node)
                                  : admin->move_replica(st.partition, st.from_node, st.node);
    }
    case k::transfer_leader: {
      auto admin = cluster_admin::of(s);
      return admin ? admin->transfer_leader(st.partition, st.node) : admin.error();
    }
    case k::balance: {
      auto admin = cluster_admin::of(s);
      if (!admin) return admin.error();
      auto n = admin->balance();
      return n ? status::ok() : n.error();
    }
    case k::create_database: {
      auto r = s.create_namespace({st.group, {}});
      if (r.code() == code::already_exists && st.if_not_exists) return status::ok();
      return r;
    }
    case k::drop_database: {
      auto r = s.drop_namespace(st.group);
      if (r.code() == code::not_found && st.if_exists) return status::ok();
      return r;
    }
    case k::use_database: return s.describe_namespace(st.group).error();
    case k::show_databases: return status::ok();
    case k::create_table_group: {
      auto r = s.create_table_group(st.group);
      if (r.code() == code::already_exists && st.if_not_exists) return status::ok();
      return r;
    }
    case k::drop_table_group: {
      auto r = s.drop_table(st.group);
      if (r.code() == code::table_not_found && st.if_exists) return status::ok();
      return r;
    }
    case k::drop_table: {
      auto r = s.drop_family(st.group, st.family, schema_origin::oceanbase_ddl);
      if ((r.code() == code::table_not_found || r.code() == code::family_not_found) && st.if_exists)
        return status::ok();
      return r;
    }
    case k::alter_table: {
      auto d = s.describe(st.group);
      if (!d) return d.error();
      auto it = std::find_if(d->families.begin(), d->families.end(),
                             [&](const family_descriptor& f) { return f.name == st.family; });
      if (it == d->families.end())
        return {code::family_not_found, "table " + st.group + "$" + st.family + " does not exist"};
      family_descriptor f = *it;
      f.ttl_seconds = st.descriptor.ttl_seconds;
      f.max_versions = st.descriptor.max_versions;
      return s.alter_family(st.group, f);
    }
    case k::truncate_table: return s.truncate_family(st.group, st.family);
    case k::show_table_groups:
    case k::show_tables: return status::ok();
    case k::describe_table: {
      auto d = s.describe(st.group);
      if (!d) return d.error();
      for (const auto& f : d->families)
        if (f.name == st.family) return status::ok();
      return {code::family_not_found, "table " + st.group + "$" + st.family + " does not exist"};
    }
    case k::create_table:
    case k::create_table_like: {
      family_descriptor f = st.descriptor;
      partition_spec p = st.partitioning;
      if (st.what == k::create_table_like) {
        auto src = s.describe(st.source_group);
        if (!src)
          return {code::table_not_found, "template table " + st.source_group + "$" + st.source_family +
                                             ": table group '" + st.source_group + "' does not exist"};
        auto it = std::find_if(src->families.begin(), src->families.end(),
                               [&](const family_descriptor& d) { return d.name == st.source_family; });
        if (it == src->families.end())
          return {code::family_not_found,
                  "template table " + st.source_group + "$" + st.source_family + " does not exist"};
        f = *it;
        p = src->partitioning;
      }
      f.name = st.family;
      auto existing = s.describe(st.group);
      bool created_group = false;
      if (!existing) {
        if (st.explicit_table_group)
          return {code::table_not_found,
                  "table group '" + st.group + "' does not exist; run CREATE TABLEGROUP " + st.group + " first"};
        if (auto r = s.create_table_group(st.group); !r) return r;
        created_group = true;
      } else if (st.if_not_exists) {
        for (const auto& d : existing->families)
          if (d.name == st.family) return status::ok();
      }
      auto r = s.add_family(st.group, f, p);
      if (!r && created_group) (void)s.drop_table(st.group);
      return r;
    }
  }
  return {code::internal, "unknown DDL statement"};
}

status execute_ddl(store& s, std::string_view sql) {
  auto parsed = parse_ddl(sql);
  if (!parsed) return parsed.error();
  std::string db;  // USE's database; empty: the default one
  for (auto& st : *parsed) {
    if (st.what == ddl_statement::kind::use_database) {
      if (auto d = s.describe_namespace(st.group); !d)
        return {d.code(), "USE " + st.group + ": " + d.error().message()};
      db = st.group == default_namespace ? std::string() : st.group;
      continue;
    }
    const bool names_group = st.what != ddl_statement::kind::create_database &&
                             st.what != ddl_statement::kind::drop_database &&
                             st.what != ddl_statement::kind::show_databases;
    if (!db.empty() && names_group) {
      if (!st.group.empty() && st.group.find(':') == std::string::npos) st.group = db + ":" + st.group;
      if (!st.source_group.empty() && st.source_group.find(':') == std::string::npos)
        st.source_group = db + ":" + st.source_group;
    }
    if (auto r = execute_ddl(s, st); !r) return {r.code(), describe_ddl(st) + ": " + r.message()};
  }
  return status::ok();
}

}  // namespace cellar
