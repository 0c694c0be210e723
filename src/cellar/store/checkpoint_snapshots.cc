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

// The records of a part file gathered before they are written: big enough that a write
// costs little, small enough to hold for each partition in turn.
constexpr std::size_t write_bytes = 1 << 20;

// Part file `index` of checkpoint snapshot `m` written through `w`: the cells of
// `families` (those the snapshot names), in key order. Returns its size, cells and CRC.
result<snapshot_manifest::file> write_part(store_persistence& p, const snapshot_manifest& m, std::uint32_t index,
                                           const std::set<std::uint32_t>& families, snapshot_writer& w) {
  cell_file_writer file(w, part_file_name(index), families);
  if (auto st = file.begin(); !st) return st;
  std::string records, last;  // `last`: a chunk's last key, against which `file` checks the next
  auto st = p.read_named(m.uid, index, m.checkpoint, m.tables,
                         [&](std::string_view key, std::int64_t expires, std::string_view value) -> status {
                           append_cell_record(records, key, expires, value);
                           if (records.size() < write_bytes) return status::ok();
                           last.assign(key);
                           auto added = file.add(records, last);
                           records.clear();
                           return added;
                         });
  if (!st) return status{st.code(), "snapshot '" + m.name + "': " + st.message()};
  if (!records.empty())
    if (auto added = file.add(records, last); !added) return added;
  // In key order and with no changes to apply: nothing is written again.
  if (auto done = file.finish(nullptr); !done) return done;
  return file.written();
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
    std::set<std::uint32_t> families;
    snapshot_manifest m =
        manifest_of(name, s.options.clock(), schema, static_cast<std::uint32_t>(rt->partitions.size()), families);
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
  std::set<std::uint32_t> families;
  for (const auto& [id, name] : m.families) families.insert(id);
  auto st = write_dir_files(dir, [&](snapshot_writer& w) -> status {
    if (auto a = w.append(std::string(schema_file), *schema); !a) return a;
    for (std::uint32_t p = 0; p < m.partitions; ++p) {
      auto f = write_part(*s.persistence, m, p, families, w);
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
  if (tables_in_use(s, m.uid)) return status::ok();
  std::vector<std::uint32_t> all(m.partitions);
  std::iota(all.begin(), all.end(), 0u);
  s.persistence->drop_partitions(m.uid, all, m.table);
  return status::ok();
}

bool tables_in_use(store_impl& s, std::uint64_t uid) {
  for (const auto& [name, rt] : *s.catalog->current())
    if (rt->schema->uid == uid) return true;
  return holds_tables(*s.snapshots, uid);
}

bool holds_tables(const snapshot_repo& repo, std::uint64_t uid) {
  auto all = repo.list();
  if (!all) return true;
  for (const auto& m : *all)
    if (!m.checkpoint.empty() && m.uid == uid) return true;
  return false;
}

}  // namespace cellar::detail
