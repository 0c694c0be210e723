#include "cluster/zk_state.h"

#include "cluster/layout.h"

namespace cellar::cluster {

std::string table_path(const std::string& table) { return join_path(layout::catalog_tables, "t_" + table); }

result<catalog_read> read_catalog(zk_client& zk, const cluster_catalog* previous, watch_fn watch) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    // The watch goes on the first read only (a watch per attempt would fire several times).
    auto head = attempt == 0 ? zk.get(layout::catalog, watch) : zk.get(layout::catalog);
    if (!head) {
      if (head.code() != code::not_found) return head.error();
      if (attempt == 0 && watch) {
        auto e = zk.exists(layout::catalog, watch);  // the get set no watch on a missing node
        if (e && e->has_value()) continue;           // created meanwhile: read it
      }
      return catalog_read{};
    }
    auto h = decode_catalog_header(head->data);
    if (!h) return h.error();
    catalog_read out;
    out.znode_version = head->stat.version;
    out.catalog.version = h->version;
    out.catalog.next_uid = h->next_uid;
    out.catalog.next_family_id = h->next_family_id;
    out.catalog.namespaces = h->namespaces;
    bool torn = false;
    for (const auto& [name, version] : h->tables) {
      if (previous)
        if (const auto* t = previous->find(name); t && t->version == version) {
          out.catalog.tables[name] = *t;
          continue;
        }
      auto entry = zk.get(table_path(name));
      if (!entry) {
        if (entry.code() == code::not_found) {
          torn = true;  // dropped after the header was read
          break;
        }
        return entry.error();
      }
      auto t = decode_table_entry(entry->data);
      if (!t) return t.error();
      if (t->version != version) {
        torn = true;  // changed after the header was read
        break;
      }
      out.catalog.tables[name] = std::move(*t);
    }
    if (!torn) return out;
  }
  return status{code::unavailable, "the catalog changed too often to be read"};
}

result<placement_read> read_placement(zk_client& zk, watch_fn watch) {
  auto n = zk.get(layout::placement, watch);
  if (!n && n.code() == code::not_found && watch) {
    auto e = zk.exists(layout::placement, watch);  // the get set no watch on a missing node
    if (e && e->has_value()) n = zk.get(layout::placement);
  }
  if (!n) {
    if (n.code() != code::not_found) return n.error();
    return placement_read{};
  }
  auto m = decode_placement(n->data);
  if (!m) return m.error();
  return placement_read{std::move(*m), n->stat.version};
}

std::vector<zk_op> catalog_ops(const catalog_read& before, const cluster_catalog& after, const std::string& table) {
  std::vector<zk_op> ops;
  const std::string header = encode_catalog_header(header_of(after));
  if (before.znode_version < 0)
    ops.push_back(zk_op::create(layout::catalog, header));
  else
    ops.push_back(zk_op::set(layout::catalog, header, before.znode_version));
  if (before.znode_version < 0) ops.push_back(zk_op::create(layout::catalog_tables, ""));
  const bool had = before.catalog.find(table) != nullptr;
  const auto* now = after.find(table);
  if (now && had)
    ops.push_back(zk_op::set(table_path(table), encode_table_entry(*now)));
  else if (now)
    ops.push_back(zk_op::create(table_path(table), encode_table_entry(*now)));
  else if (had)
    ops.push_back(zk_op::remove(table_path(table)));
  return ops;
}

zk_op placement_op(const placement_read& before, const placement_map& after) {
  if (before.znode_version < 0) return zk_op::create(layout::placement, encode_placement(after));
  return zk_op::set(layout::placement, encode_placement(after), before.znode_version);
}

}  // namespace cellar::cluster
