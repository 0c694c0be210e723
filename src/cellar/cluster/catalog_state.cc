#include "cluster/catalog_state.h"

#include <algorithm>

#include "catalog/hbase_options.h"
#include "persist/codec.h"

namespace cellar::cluster {

using detail::family_schema;
using detail::table_schema;

const table_schema* cluster_catalog::find(std::string_view table) const {
  auto it = tables.find(std::string(table));
  return it == tables.end() ? nullptr : &it->second;
}

ddl_request ddl_request::create(table_descriptor d, schema_origin o) {
  ddl_request r;
  r.what = kind::create_table;
  r.table = d.name;
  r.descriptor = std::move(d);
  r.origin = o;
  return r;
}
ddl_request ddl_request::create_group(std::string table) {
  ddl_request r;
  r.what = kind::create_table_group;
  r.table = std::move(table);
  return r;
}
ddl_request ddl_request::add(std::string table, family_descriptor f, partition_spec p) {
  ddl_request r;
  r.what = kind::add_family;
  r.table = std::move(table);
  r.family = std::move(f);
  r.partitioning = std::move(p);
  return r;
}
ddl_request ddl_request::alter(std::string table, family_descriptor f) {
  ddl_request r;
  r.what = kind::alter_family;
  r.table = std::move(table);
  r.family = std::move(f);
  return r;
}
ddl_request ddl_request::drop_family(std::string table, std::string family, schema_origin origin) {
  ddl_request r;
  r.what = kind::drop_family;
  r.origin = origin;
  r.table = std::move(table);
  r.family_name = std::move(family);
  return r;
}
ddl_request ddl_request::drop(std::string table) {
  ddl_request r;
  r.what = kind::drop_table;
  r.table = std::move(table);
  return r;
}
ddl_request ddl_request::truncate(std::string table) {
  ddl_request r;
  r.what = kind::truncate_table;
  r.table = std::move(table);
  return r;
}

ddl_request ddl_request::set_disabled(std::string table, bool disabled) {
  ddl_request r;
  r.what = disabled ? kind::disable_table : kind::enable_table;
  r.table = std::move(table);
  return r;
}
ddl_request ddl_request::truncate_family(std::string table, std::string family) {
  ddl_request r;
  r.what = kind::truncate_family;
  r.table = std::move(table);
  r.family_name = std::move(family);
  return r;
}
ddl_request ddl_request::alter_table(std::string table, std::map<std::string, std::string> set,
                                     std::vector<std::string> unset) {
  ddl_request r;
  r.what = kind::alter_table;
  r.table = std::move(table);
  r.set_attributes = std::move(set);
  r.unset_attributes = std::move(unset);
  return r;
}

ddl_request ddl_request::create_namespace(namespace_descriptor ns) {
  ddl_request r;
  r.what = kind::create_namespace;
  r.ns = std::move(ns);
  return r;
}
ddl_request ddl_request::drop_namespace(std::string name) {
  ddl_request r;
  r.what = kind::drop_namespace;
  r.ns.name = std::move(name);
  return r;
}
ddl_request ddl_request::alter_namespace(std::string name, std::map<std::string, std::string> set,
                                         std::vector<std::string> unset) {
  ddl_request r;
  r.what = kind::alter_namespace;
  r.ns.name = std::move(name);
  r.set_attributes = std::move(set);
  r.unset_attributes = std::move(unset);
  return r;
}

ddl_request ddl_request::reshape(std::string table, partition_spec p, std::uint64_t uid,
                                 std::vector<std::string> owners, std::vector<std::string> intents,
                                 std::uint64_t expected_version) {
  ddl_request r;
  r.what = kind::reshape_table;
  r.table = std::move(table);
  r.partitioning = std::move(p);
  r.uid = uid;
  r.owners = std::move(owners);
  r.intents = std::move(intents);
  r.expected_version = expected_version;
  return r;
}

namespace {

status table_not_found(const std::string& t) { return {code::table_not_found, "table '" + t + "' does not exist"}; }

status family_not_found(const std::string& t, const std::string& f) {
  return {code::family_not_found, "family '" + f + "' does not exist in table '" + t + "'"};
}

void sort_families(table_schema& t) {
  std::sort(t.families.begin(), t.families.end(),
            [](const family_schema& a, const family_schema& b) { return a.desc.name < b.desc.name; });
}

detail::namespace_usage usage(const cluster_catalog& c, std::string_view ns) {
  std::vector<std::pair<std::string, std::uint32_t>> tables;
  for (const auto& [name, t] : c.tables) tables.emplace_back(name, t.partitioned ? t.partitioning.count() : 0);
  return detail::usage_of(ns, tables);
}

// The same rules as store::create_table ... store::truncate_table.
status apply(cluster_catalog& c, const ddl_request& r, ddl_outcome& out) {
  using k = ddl_request::kind;
  const table_schema* old = c.find(r.table);
  switch (r.what) {
    case k::create_table: {
      table_descriptor desc = r.descriptor;
      if (auto s = detail::check_table_name(desc.name); !s) return s;
      if (auto s = detail::check_partitioning(desc.partitioning); !s) return s;
      if (desc.families.empty()) return {code::invalid_argument, "a table needs at least one column family"};
      for (std::size_t i = 0; i < desc.families.size(); ++i) {
        if (auto s = detail::check_family(desc.families[i]); !s) return s;
        for (std::size_t j = 0; j < i; ++j)
          if (desc.families[j].name == desc.families[i].name)
            return {code::invalid_argument, "family '" + desc.families[i].name + "' is given twice"};
      }
      if (old) return {code::already_exists, "table '" + desc.name + "' already exists"};
      if (auto s = detail::check_table_namespace(c.namespaces, desc.name, desc.partitioning.count(),
                                                 usage(c, detail::namespace_of(desc.name)));
          !s)
        return s;
      table_schema t;
      t.name = desc.name;
      t.uid = c.next_uid++;
      t.partitioned = true;
      t.partitioning = desc.partitioning;
      t.attributes = desc.attributes;
      for (auto& f : desc.families) {
        if (f.max_versions == 0 && r.origin == schema_origin::hbase_shell) f.max_versions = 1;  // R7
        t.families.push_back({f, c.next_family_id++});
      }
      sort_families(t);
      c.tables[t.name] = std::move(t);
      out.new_partitions = true;
      return status::ok();
    }
    case k::create_table_group: {
      if (auto s = detail::check_table_name(r.table); !s) return s;
      if (old) return {code::already_exists, "table group '" + r.table + "' already exists"};
      if (auto s = detail::check_table_namespace(c.namespaces, r.table, 0, usage(c, detail::namespace_of(r.table))); !s)
        return s;
      table_schema t;
      t.name = r.table;
      t.uid = c.next_uid++;
      c.tables[t.name] = std::move(t);
      return status::ok();
    }
    case k::add_family: {
      if (auto s = detail::check_family(r.family); !s) return s;
      if (auto s = detail::check_partitioning(r.partitioning); !s) return s;
      if (!old) return table_not_found(r.table);
      if (old->find(r.family.name))
        return {code::already_exists, "family '" + r.family.name + "' already exists in '" + r.table + "'"};
      const bool repartition = old->partitioned && old->families.empty() && !(old->partitioning == r.partitioning);
      if (old->partitioned && !repartition && !(old->partitioning == r.partitioning))
        return {code::invalid_argument, "the partitioning of '" + r.table + "$" + r.family.name +
                                            "' differs from its table group's; all families of a group "
                                            "must share one partition rule"};
      table_schema t = *old;
      out.new_partitions = !old->partitioned || repartition;
      out.old_partitions_gone = repartition;
      t.partitioned = true;
      t.partitioning = r.partitioning;
      t.families.push_back({r.family, c.next_family_id++});
      if (repartition) t.uid = c.next_uid++;  // new partitions, new storage
      sort_families(t);
      c.tables[r.table] = std::move(t);
      return status::ok();
    }
    case k::alter_family: {
      if (auto s = detail::check_family(r.family); !s) return s;
      if (!old) return table_not_found(r.table);
      if (!old->partitioned)
        return {code::invalid_argument, "table group '" + r.table + "' has no partitioning yet; add a family first"};
      table_schema t = *old;
      bool found = false;
      for (auto& f : t.families)
        if (f.desc.name == r.family.name) {
          f.desc = r.family;
          found = true;
        }
      if (!found) t.families.push_back({r.family, c.next_family_id++});
      sort_families(t);
      c.tables[r.table] = std::move(t);
      return status::ok();
    }
    case k::drop_family: {
      if (!old) return table_not_found(r.table);
      if (!old->find(r.family_name)) return family_not_found(r.table, r.family_name);
      if (auto s = detail::check_family_drop(*old, r.family_name, r.origin); !s) return s;
      table_schema t = *old;
      t.families.erase(std::remove_if(t.families.begin(), t.families.end(),
                                      [&](const family_schema& f) { return f.desc.name == r.family_name; }),
                       t.families.end());
      c.tables[r.table] = std::move(t);
      return status::ok();
    }
    case k::drop_table: {
      if (!old) return table_not_found(r.table);
      out.dropped = true;
      out.old_partitions_gone = old->partitioned;
      c.tables.erase(r.table);
      return status::ok();
    }
    case k::truncate_table: {
      if (!old) return table_not_found(r.table);
      table_schema t = *old;
      for (auto& f : t.families) f.id = c.next_family_id++;
      c.tables[r.table] = std::move(t);
      return status::ok();
    }
    case k::disable_table:
    case k::enable_table: {
      if (!old) return table_not_found(r.table);
      table_schema t = *old;
      t.disabled = r.what == k::disable_table;
      c.tables[r.table] = std::move(t);
      return status::ok();
    }
    case k::truncate_family: {
      if (!old) return table_not_found(r.table);
      if (!old->find(r.family_name)) return family_not_found(r.table, r.family_name);
      table_schema t = *old;
      for (auto& f : t.families)
        if (f.desc.name == r.family_name) f.id = c.next_family_id++;
      c.tables[r.table] = std::move(t);
      return status::ok();
    }
    case k::alter_table: {
      if (!old) return table_not_found(r.table);
      table_schema t = *old;
      if (auto s = apply_table_attributes(t.attributes, r.set_attributes, r.unset_attributes); !s) return s;
      c.tables[r.table] = std::move(t);
      return status::ok();
    }
    case k::create_namespace: {
      if (auto s = detail::check_create_namespace(c.namespaces, r.ns); !s) return s;
      c.namespaces[r.ns.name] = r.ns.properties;
      return status::ok();
    }
    case k::drop_namespace: {
      if (auto s = detail::check_drop_namespace(c.namespaces, r.ns.name, usage(c, r.ns.name)); !s) return s;
      c.namespaces.erase(r.ns.name);
      return status::ok();
    }
    case k::alter_namespace: {
      std::map<std::string, std::string> props;
      if (auto s =
              detail::alter_namespace_properties(c.namespaces, r.ns.name, r.set_attributes, r.unset_attributes, props);
          !s)
        return s;
      c.namespaces[r.ns.name] = std::move(props);
      return status::ok();
    }
    case k::reshape_table: {
      if (!old) return table_not_found(r.table);
      using m = partition_spec::method;
      if (!old->partitioned || old->partitioning.how == m::key || old->partitioning.how == m::key_prefix ||
          r.partitioning.how != m::range)
        return {code::invalid_argument, "only RANGE partitions of '" + r.table + "' split and merge"};
      if (auto s = detail::check_partitioning(r.partitioning); !s) return s;
      const std::uint32_t was = old->partitioning.count(), now = r.partitioning.count();
      if (r.owners.size() != now || (!r.replica_sets.empty() && r.replica_sets.size() != now))
        return {code::invalid_argument, "a split or merge of '" + r.table + "' names " +
                                            std::to_string(r.owners.size()) + " owners for " + std::to_string(now) +
                                            " partitions"};
      if (now > was)
        if (auto s = detail::check_namespace_regions(c.namespaces, detail::namespace_of(r.table), now - was,
                                                     usage(c, detail::namespace_of(r.table)));
            !s)
          return s;
      table_schema t = *old;
      t.partitioning = r.partitioning;
      t.uid = c.next_uid++;
      if (r.uid != 0 && t.uid != r.uid)
        return {code::conflict, "the split or merge of '" + r.table + "' was prepared as incarnation " +
                                    std::to_string(r.uid) + " but the catalog would give it " + std::to_string(t.uid)};
      c.tables[r.table] = std::move(t);
      out.new_partitions = true;
      out.old_partitions_gone = true;
      return status::ok();
    }
  }
  return {code::invalid_argument, "unknown DDL kind"};
}

}  // namespace

result<ddl_outcome> apply_ddl(const cluster_catalog& c, const ddl_request& r) {
  if (r.expected_version && *r.expected_version != c.version)
    return status{code::conflict, "the catalog changed: it is at version " + std::to_string(c.version) +
                                      ", the DDL expected version " + std::to_string(*r.expected_version)};
  ddl_outcome out;
  out.catalog = c;
  out.table = r.table;
  if (auto st = apply(out.catalog, r, out); !st) return st;
  out.catalog.version = c.version + 1;
  if (auto it = out.catalog.tables.find(r.table); it != out.catalog.tables.end())
    it->second.version = out.catalog.version;
  return out;
}

// --- encodings ---------------------------------------------------------------------------

namespace {

// 1: up to expected_version. 2: then, per family of the descriptor and for `family`,
// `u32 min_versions` and its attributes; the descriptor's attributes; set_attributes;
// unset_attributes (attributes: `u32 n` and n pairs of bytes; names: `u32 n` and n bytes).
// 3: then the namespace's name and properties. 4: then `u64 uid`, the owners and the
// intents (names: `u32 n` and n bytes each).
constexpr std::uint32_t request_format = 5;
// 1: version, counters, tables. 2: then the namespaces (`u32 n`, each name and properties).
constexpr std::uint32_t header_format = 2;

void put_family(std::string& out, const family_descriptor& f) {
  detail::put_bytes(out, f.name);
  detail::put_u32(out, f.max_versions);
  detail::put_u64(out, static_cast<std::uint64_t>(f.ttl_seconds));
  detail::put_u64(out, f.max_value_bytes);
  out.push_back(static_cast<char>(f.kind));
}

bool get_family(detail::reader& r, family_descriptor& f) {
  std::uint64_t ttl = 0, maxv = 0;
  std::uint8_t kind = 0;
  if (!r.bytes(f.name) || !r.u32(f.max_versions) || !r.u64(ttl) || !r.u64(maxv) || !r.u8(kind) || kind > 1)
    return false;
  f.ttl_seconds = static_cast<std::int64_t>(ttl);
  f.max_value_bytes = maxv;
  f.kind = static_cast<family_kind>(kind);
  return true;
}

void put_partitioning(std::string& out, const partition_spec& p) {
  out.push_back(static_cast<char>(p.how));
  detail::put_u32(out, p.partitions);
  detail::put_u32(out, p.prefix_bytes);
  detail::put_u32(out, static_cast<std::uint32_t>(p.bounds.size()));
  for (const auto& b : p.bounds) detail::put_bytes(out, b);
}

bool get_partitioning(detail::reader& r, partition_spec& p) {
  std::uint8_t how = 0;
  std::uint32_t n = 0;
  if (!r.u8(how) || how > static_cast<std::uint8_t>(partition_spec::method::range) || !r.u32(p.partitions) ||
      !r.u32(p.prefix_bytes) || !r.u32(n))
    return false;
  p.how = static_cast<partition_spec::method>(how);
  p.bounds.clear();
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string b;
    if (!r.bytes(b)) return false;
    p.bounds.push_back(std::move(b));
  }
  return true;
}

}  // namespace

std::string encode_ddl_request(const ddl_request& q) {
  std::string out;
  detail::put_u32(out, request_format);
  out.push_back(static_cast<char>(q.what));
  detail::put_bytes(out, q.table);
  detail::put_bytes(out, q.descriptor.name);
  put_partitioning(out, q.descriptor.partitioning);
  detail::put_u32(out, static_cast<std::uint32_t>(q.descriptor.families.size()));
  for (const auto& f : q.descriptor.families) put_family(out, f);
  out.push_back(static_cast<char>(q.origin));
  put_family(out, q.family);
  put_partitioning(out, q.partitioning);
  detail::put_bytes(out, q.family_name);
  out.push_back(q.expected_version ? '\1' : '\0');
  detail::put_u64(out, q.expected_version.value_or(0));
  for (const auto& f : q.descriptor.families) {
    detail::put_u32(out, f.min_versions);
    detail::put_string_map(out, f.attributes);
  }
  detail::put_u32(out, q.family.min_versions);
  detail::put_string_map(out, q.family.attributes);
  detail::put_string_map(out, q.descriptor.attributes);
  detail::put_string_map(out, q.set_attributes);
  detail::put_u32(out, static_cast<std::uint32_t>(q.unset_attributes.size()));
  for (const auto& n : q.unset_attributes) detail::put_bytes(out, n);
  detail::put_bytes(out, q.ns.name);
  detail::put_string_map(out, q.ns.properties);
  detail::put_u64(out, q.uid);
  for (const auto* names : {&q.owners, &q.intents}) {
    detail::put_u32(out, static_cast<std::uint32_t>(names->size()));
    for (const auto& n : *names) detail::put_bytes(out, n);
  }
  detail::put_u32(out, static_cast<std::uint32_t>(q.replica_sets.size()));
  for (const auto& set : q.replica_sets) {
    detail::put_u32(out, static_cast<std::uint32_t>(set.size()));
    for (const auto& n : set) detail::put_bytes(out, n);
  }
  return out;
}

result<ddl_request> decode_ddl_request(std::string_view bytes) {
  const status bad{code::corruption, "malformed DDL request"};
  detail::reader r(bytes);
  ddl_request q;
  std::uint32_t format = 0, nfam = 0;
  std::uint8_t what = 0, origin = 0, has_expected = 0;
  std::uint64_t expected = 0;
  if (!r.u32(format) || format < 1 || format > request_format || !r.u8(what) ||
      what > static_cast<std::uint8_t>(ddl_request::kind::reshape_table))
    return bad;
  q.what = static_cast<ddl_request::kind>(what);
  if (!r.bytes(q.table) || !r.bytes(q.descriptor.name) || !get_partitioning(r, q.descriptor.partitioning) ||
      !r.u32(nfam))
    return bad;
  for (std::uint32_t i = 0; i < nfam; ++i) {
    family_descriptor f;
    if (!get_family(r, f)) return bad;
    q.descriptor.families.push_back(std::move(f));
  }
  if (!r.u8(origin) || origin > 1 || !get_family(r, q.family) || !get_partitioning(r, q.partitioning) ||
      !r.bytes(q.family_name) || !r.u8(has_expected) || !r.u64(expected))
    return bad;
  if (format >= 2) {
    for (auto& f : q.descriptor.families)
      if (!r.u32(f.min_versions) || !r.string_map(f.attributes)) return bad;
    std::uint32_t n = 0;
    if (!r.u32(q.family.min_versions) || !r.string_map(q.family.attributes) || !r.string_map(q.descriptor.attributes) ||
        !r.string_map(q.set_attributes) || !r.u32(n))
      return bad;
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string name;
      if (!r.bytes(name)) return bad;
      q.unset_attributes.push_back(std::move(name));
    }
  }
  if (format >= 3 && (!r.bytes(q.ns.name) || !r.string_map(q.ns.properties))) return bad;
  if (format >= 4) {
    if (!r.u64(q.uid)) return bad;
    for (auto* names : {&q.owners, &q.intents}) {
      std::uint32_t n = 0;
      if (!r.u32(n)) return bad;
      for (std::uint32_t i = 0; i < n; ++i) {
        std::string name;
        if (!r.bytes(name)) return bad;
        names->push_back(std::move(name));
      }
    }
  }
  if (format >= 5) {
    std::uint32_t sets = 0;
    if (!r.u32(sets)) return bad;
    for (std::uint32_t i = 0; i < sets; ++i) {
      std::uint32_t n = 0;
      if (!r.u32(n)) return bad;
      auto& set = q.replica_sets.emplace_back();
      for (std::uint32_t j = 0; j < n; ++j) {
        std::string name;
        if (!r.bytes(name)) return bad;
        set.push_back(std::move(name));
      }
    }
  }
  if (!r.done()) return bad;
  q.origin = static_cast<schema_origin>(origin);
  if (has_expected) q.expected_version = expected;
  return q;
}

catalog_header header_of(const cluster_catalog& c) {
  catalog_header h;
  h.version = c.version;
  h.next_uid = c.next_uid;
  h.next_family_id = c.next_family_id;
  for (const auto& [name, t] : c.tables) h.tables[name] = t.version;
  h.namespaces = c.namespaces;
  return h;
}

std::string encode_catalog_header(const catalog_header& h) {
  std::string out;
  detail::put_u32(out, header_format);
  detail::put_u64(out, h.version);
  detail::put_u64(out, h.next_uid);
  detail::put_u32(out, h.next_family_id);
  detail::put_u32(out, static_cast<std::uint32_t>(h.tables.size()));
  for (const auto& [name, v] : h.tables) {
    detail::put_bytes(out, name);
    detail::put_u64(out, v);
  }
  detail::put_u32(out, static_cast<std::uint32_t>(h.namespaces.size()));
  for (const auto& [name, props] : h.namespaces) {
    detail::put_bytes(out, name);
    detail::put_string_map(out, props);
  }
  return out;
}

result<catalog_header> decode_catalog_header(std::string_view bytes) {
  const status bad{code::corruption, "malformed catalog header"};
  detail::reader r(bytes);
  catalog_header h;
  std::uint32_t format = 0, n = 0;
  if (!r.u32(format) || format < 1 || format > header_format || !r.u64(h.version) || !r.u64(h.next_uid) ||
      !r.u32(h.next_family_id) || !r.u32(n))
    return bad;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string name;
    std::uint64_t v = 0;
    if (!r.bytes(name) || !r.u64(v)) return bad;
    h.tables[std::move(name)] = v;
  }
  if (format >= 2) {
    if (!r.u32(n)) return bad;
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string name;
      std::map<std::string, std::string> props;
      if (!r.bytes(name) || !r.string_map(props)) return bad;
      h.namespaces[std::move(name)] = std::move(props);
    }
  }
  if (!r.done()) return bad;
  return h;
}

std::string encode_table_entry(const table_schema& t) {
  std::string out;
  detail::put_u64(out, t.version);
  out += detail::encode_schema(t);
  return out;
}

result<table_schema> decode_table_entry(std::string_view bytes) {
  detail::reader r(bytes);
  std::uint64_t version = 0;
  if (!r.u64(version)) return status{code::corruption, "malformed catalog entry"};
  auto t = detail::decode_schema(r.rest());
  if (!t) return t.error();
  t->version = version;
  return t;
}

}  // namespace cellar::cluster
