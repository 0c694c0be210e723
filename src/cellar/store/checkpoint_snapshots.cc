// store/checkpoint_snapshots.cc: named snapshots kept as WiredTiger checkpoints
// (store/checkpoint_snapshots.h).
#include "store/checkpoint_snapshots.h"

#include <absl/strings/escaping.h>

#include <numeric>
#include <set>
#include <vector>

#include "persist/codec.h"
#include "persist/loaded_cells.h"
#include "store/store_impl.h"

namespace cellar::detail {

namespace {

// WiredTiger's name for the checkpoint of snapshot `name`: any byte of the name stays
// clear of WiredTiger's configuration syntax.
std::string checkpoint_name(const std::string& name) { return "cellar_" + absl::BytesToHexString(name); }

// The bytes of a part file gathered before they are written: big enough that a write
// costs little, small enough to hold for each partition in turn.
constexpr std::size_t write_bytes = 1 << 20;

// Part file `index` of checkpoint snapshot `m` written through `w`: the cells of the families
// the snapshot names, in key order. Returns its size, cells and CRC.
result<snapshot_manifest::file> write_part(store_persistence& p, const snapshot_manifest& m, std::uint32_t index,
                                           snapshot_writer& w) {
  const std::string file = part_file_name(index);
  snapshot_manifest::file f;
  std::string buf = cell_file_header();
  auto flush = [&]() -> status {
    if (auto st = w.append(file, buf); !st) return st;
    f.bytes += buf.size();
    f.crc = crc32c_extend(f.crc, buf);
    buf.clear();
    return status::ok();
  };
  auto st = p.read_named(m.uid, index, m.checkpoint, m.tables,
                         [&](std::string_view key, std::int64_t expires, std::string_view value) -> status {
                           reader r(key);
                           std::uint32_t family = 0;
                           if (!r.u32(family)) return {code::corruption, "a malformed cell key"};
                           // Families dropped before the snapshot are not its cells.
                           if (!m.families.count(family)) return status::ok();
                           append_cell_record(buf, key, expires, value);
                           ++f.cells;
                           return buf.size() >= write_bytes ? flush() : status::ok();
                         });
  if (!st) return status{st.code(), "snapshot '" + m.name + "': " + st.message()};
  if (auto fl = flush(); !fl) return fl;
  return f;
}

}  // namespace

status take_checkpoint_snapshot(store_impl& s, const std::string& table, const std::string& name) {
  const std::string checkpoint = checkpoint_name(name);
  std::vector<std::string> taken;  // the tables checkpointed
  auto st = s.snapshots->put_streamed(name, [&](snapshot_writer& w) -> result<snapshot_manifest> {
    // The catalog held, so no DDL runs until the snapshot is in the repo: the schema is the
    // one its cells were cut under, and a drop of the table then keeps its tables.
    absl::MutexLock lock(&s.catalog->mutex());
    auto rt = s.catalog->lookup(table);
    if (!rt) return status{code::table_not_found, "table '" + table + "' does not exist"};
    if (rt->partitions.empty()) return status{code::invalid_argument, "table '" + table + "' has no family yet"};
    const table_schema& schema = *rt->schema;
    snapshot_manifest m;
    m.name = name;
    m.table = schema.name;
    m.created_unix_ms = s.options.clock();
    m.partitions = static_cast<std::uint32_t>(rt->partitions.size());
    for (const auto& f : schema.families) m.families[f.id] = f.desc.name;
    auto cut = s.persistence->snapshot_named([c = s.catalog.get()] { return c->current(); }, schema.uid, m.partitions,
                                             checkpoint);
    if (!cut) return cut.error();
    taken = cut->tables;
    m.checkpoint = checkpoint;
    m.uid = schema.uid;
    m.cells = std::accumulate(cut->cells.begin(), cut->cells.end(), std::uint64_t{0});
    m.tables.insert(cut->tables.begin(), cut->tables.end());
    const std::string encoded = encode_schema(schema);
    if (auto a = w.append(std::string(schema_file), encoded); !a) return a;
    m.files[std::string(schema_file)] = {encoded.size(), 0, crc32c(encoded)};
    return m;
  });
  // A checkpoint no manifest names would hold its pages for good.
  if (!st && !taken.empty()) (void)s.persistence->drop_named(checkpoint, taken);
  return st;
}

result<snapshot_manifest> write_checkpoint_files(store_impl& s, const snapshot_manifest& m, const std::string& dir) {
  if (!s.persistence) return status{code::internal, "a checkpoint snapshot in a store without a directory"};
  // Held first, then found still listed: a delete that came first has removed it
  // (NOT_FOUND) or dropped its checkpoint (CORRUPTION, naming the checkpoint); one that
  // comes later answers CONFLICT until the files are written.
  auto hold = s.persistence->hold_named(m.checkpoint);
  if (auto listed = s.snapshots->manifest(m.name); !listed) return listed.error();
  auto schema = s.snapshots->read(m.name, std::string(schema_file));
  if (!schema) return schema.error();
  snapshot_manifest out = m;
  out.checkpoint.clear();
  out.uid = 0;
  out.cells = 0;
  out.tables.clear();
  auto st = write_dir_files(dir, [&](snapshot_writer& w) -> status {
    if (auto a = w.append(std::string(schema_file), *schema); !a) return a;
    for (std::uint32_t p = 0; p < m.partitions; ++p) {
      auto f = write_part(*s.persistence, m, p, w);
      if (!f) return f.error();
      out.files[part_file_name(p)] = *f;
    }
    return status::ok();
  });
  if (!st) return st;
  return out;
}

status delete_checkpoint_snapshot(store_impl& s, const snapshot_manifest& m) {
  if (!s.persistence) return {code::internal, "a checkpoint snapshot in a store without a directory"};
  // The checkpoint first: a crash before the files go leaves a snapshot that says it lost
  // its checkpoint and can be deleted again, never pages no snapshot names.
  if (auto st = s.persistence->drop_named(m.checkpoint, {m.tables.begin(), m.tables.end()}); !st)
    return st.code() == code::conflict
               ? status{code::conflict, "snapshot '" + m.name + "' is being read; delete it again once that is done"}
               : st;
  if (auto st = s.snapshots->remove(m.name); !st) return st;
  const auto now = s.catalog->current();
  for (const auto& [name, rt] : *now)
    if (rt->schema->uid == m.uid) return status::ok();  // the table's own tables
  if (holds_tables(*s.snapshots, m.uid)) return status::ok();
  std::vector<std::uint32_t> all(m.partitions);
  std::iota(all.begin(), all.end(), 0u);
  s.persistence->drop_partitions(m.uid, all, m.table);
  return status::ok();
}

bool holds_tables(const snapshot_repo& repo, std::uint64_t uid) {
  auto all = repo.list();
  if (!all) return true;
  for (const auto& m : *all)
    if (!m.checkpoint.empty() && m.uid == uid) return true;
  return false;
}

}  // namespace cellar::detail
