// store/named_snapshots.cc: the store's named snapshots, their export and import, and bulk
// loads (cellar/backup.h; docs/backup.md).
//
// A store with a directory keeps a snapshot as a WiredTiger checkpoint of the table's own
// tables (store/checkpoint_snapshots.h). Elsewhere (a memory-only store, a cluster) a
// snapshot copies each partition with the steps a move uses (partition/protocol.h:
// move_request): `track` starts a record of every change, `chunk`s copy the cells in key
// order a bounded piece at a time (so the partition keeps serving between them), and
// `cut` takes the changes recorded since `track`. The chunks alone are no instant's
// state, but every change after `track` is in the cut, so the chunks with the cut applied
// on top are the partition exactly as it was when it handled the cut: one instant per
// partition, between two of its requests. Cells go back into a partition with `apply`,
// one message per partition, so a partition takes a whole file at once.
//
// On a cluster member the partitions live on several nodes and every node answers for
// the same snapshots: the copies, the keeping and listing of the files, and the loading
// of cells go through the cluster (store/snapshot_cluster.h); the manifest, the checks
// and the DDL of a restore stay here.
#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <latch>
#include <optional>
#include <set>

#include "partition/ask.h"
#include "persist/codec.h"
#include "persist/loaded_cells.h"
#include "route/router.h"
#include "store/checkpoint_snapshots.h"
#include "store/snapshot_cluster.h"
#include "store/snapshot_files.h"
#include "store/store_impl.h"

namespace cellar {

using namespace detail;

namespace {

// Bytes of cells a chunk copies: small enough that a partition answers other requests
// between two chunks promptly.
constexpr std::uint64_t chunk_bytes = 1 << 20;

template <class Reply, class Request>
result<Reply> ask_one(caf::actor_system& sys, const partition_actor& p, Request req) {
  std::optional<result<Reply>> got;
  std::latch done(1);
  ask<Reply>(sys, p, std::move(req), [&](result<Reply> r) {
    got.emplace(std::move(r));
    done.count_down();
  });
  done.wait();
  return std::move(*got);
}

move_request step(std::uint8_t what) {
  move_request r;
  r.what = what;
  return r;
}

// Stops the change record of every partition of `rt` (after a copy, or a failed one).
void stop_tracking(caf::actor_system& sys, const table_runtime& rt) {
  (void)ask_all<move_reply>(sys, rt, [](std::uint32_t) { return step(move_request::abort); });
}

// Each partition of `rt` as it was at one instant (see above): every chunk of its cells,
// as cell file records in key order (each chunk after the one before), is given to
// `take(partition, records, last key)` as it comes; what changed in each partition since
// its first chunk was copied is returned, for the caller to apply.
using take_chunk_fn = std::function<status(std::size_t, std::string_view, const std::string&)>;
result<std::vector<std::shared_ptr<const delta_map>>> copy_partitions(caf::actor_system& sys, const table_runtime& rt,
                                                                      const take_chunk_fn& take) {
  const std::size_t n = rt.partitions.size();
  for (auto& r : ask_all<move_reply>(sys, rt, [](std::uint32_t) { return step(move_request::track); }))
    if (!r || !r->st) {
      stop_tracking(sys, rt);
      return r ? r->st : r.error();
    }
  std::vector<std::string> after(n);
  std::vector<bool> done(n, false);
  status failed;
  for (;;) {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < n; ++i)
      if (!done[i]) open.push_back(i);
    if (open.empty()) break;
    // One chunk from every partition not yet copied, all at once.
    std::vector<std::optional<result<move_reply>>> got(n);
    std::latch left(static_cast<std::ptrdiff_t>(open.size()));
    for (auto i : open) {
      move_request r = step(move_request::records);
      r.after = after[i];
      r.max_bytes = chunk_bytes;
      ask<move_reply>(sys, rt.partitions[i].actor, std::move(r), [&got, &left, i](result<move_reply> x) {
        got[i].emplace(std::move(x));
        left.count_down();
      });
    }
    left.wait();
    for (auto i : open) {
      auto& r = *got[i];
      if (!r || !r->st) {
        failed = r ? r->st : r.error();
        break;
      }
      if (!r->records.empty())
        if (auto st = take(i, r->records, r->last); !st) {
          failed = st;
          break;
        }
      if (!r->last.empty()) after[i] = r->last;
      done[i] = r->done;
    }
    if (failed.is_ok()) continue;
    stop_tracking(sys, rt);
    return failed;
  }
  auto cuts = ask_all<move_reply>(sys, rt, [](std::uint32_t) { return step(move_request::cut); });
  stop_tracking(sys, rt);
  std::vector<std::shared_ptr<const delta_map>> changes(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!cuts[i]) return cuts[i].error();
    if (!cuts[i]->st) return cuts[i]->st;
    changes[i] = std::move(cuts[i]->cells.map);
  }
  return changes;
}

status table_not_found(const std::string& name) {
  return {code::table_not_found, "table '" + name + "' does not exist"};
}

// A cluster member that has not joined yet has no cluster to keep its snapshots in.
status not_joined() { return {code::unavailable, "this node has not joined its cluster yet"}; }

// Reads part file `p` of a snapshot or a bulk load.
using part_reader = std::function<result<file_bytes>(const std::string& file)>;
using loaded_parts = std::vector<std::shared_ptr<const loaded_cells>>;

// Checks the cells of part file `p` without copying them: well-formed keys in strictly
// ascending order (a snapshot writes a loaded file into an empty base as it is), of
// families the manifest names (`ids`), each row in partition `p`. Counts them into *cells.
status check_part(const table_schema& schema, std::uint32_t p, const std::string& file, std::string_view records,
                  const loaded_cells::id_map& ids, std::uint64_t* cells) {
  cell_record_reader in(records);
  std::string_view key, value;
  std::int64_t expires = 0;
  key_parts k;
  std::string row_scratch, qualifier_scratch, last_row;
  bool have_row = false;
  std::uint32_t last_family = 0;
  bool have_family = false;
  std::uint64_t n = 0;
  std::string_view previous;
  while (in.next(key, expires, value)) {
    if (!decode_cell_key(key, k, row_scratch, qualifier_scratch))
      return {code::corruption, "file '" + file + "' holds a malformed cell key"};
    if (n > 0 && !(previous < key))
      return {code::corruption, "file '" + file + "' holds cell " + std::to_string(n + 1) + " out of key order"};
    previous = key;
    if (!have_family || k.family != last_family) {
      bool named = false;
      for (const auto& [from, to] : ids) named = named || from == k.family;
      if (!named)
        return {code::corruption, "file '" + file + "' holds a cell of family id " + std::to_string(k.family) +
                                      ", which its manifest does not name"};
      last_family = k.family;
      have_family = true;
      have_row = false;
    }
    // A file is in key order, so a row's cells of one family come together: one check each.
    if (!have_row || k.row != last_row) {
      if (partition_of(schema.partitioning, k.row) != p)
        return {code::invalid_argument,
                "file '" + file + "' holds row '" + std::string(k.row) + "' of another partition"};
      last_row.assign(k.row);
      have_row = true;
    }
    ++n;
  }
  if (in.failed()) return {code::corruption, "file '" + file + "' is cut short after " + std::to_string(n) + " cells"};
  *cells = n;
  return status::ok();
}

// The files' family ids mapped to `schema`'s (by family name).
result<loaded_cells::id_map> family_ids(const table_schema& schema, const snapshot_manifest& m) {
  loaded_cells::id_map ids;
  for (const auto& [id, name] : m.families) {
    const family_schema* f = schema.find(name);
    if (!f) return status{code::family_not_found, "table '" + schema.name + "' has no family '" + name + "'"};
    ids.emplace_back(id, f->id);
  }
  return ids;
}

// INVALID_ARGUMENT unless the files are of as many partitions as `rt` has.
status check_partitions(const table_runtime& rt, const snapshot_manifest& m) {
  if (rt.partitions.size() == m.partitions) return status::ok();
  return {code::invalid_argument, "the files hold " + std::to_string(m.partitions) + " partitions, table '" +
                                      rt.schema->name + "' has " + std::to_string(rt.partitions.size())};
}

// The cells of part file `p`, checked (check_part) and mapped to the table's family ids by
// `ids`; null when it holds none. Adds them to `stats`.
result<std::shared_ptr<const loaded_cells>> read_part(const table_schema& schema, const part_reader& read,
                                                      const loaded_cells::id_map& ids, std::uint32_t p,
                                                      bulk_load_stats& stats) {
  const std::string file = part_file_name(p);
  auto data = read(file);
  if (!data) return data.error();
  stats.bytes += data->data.size();
  auto records = cell_records(data->data);
  if (!records) return status{code::corruption, "file '" + file + "': " + records.error().message()};
  std::uint64_t cells = 0;
  if (auto st = check_part(schema, p, file, *records, ids, &cells); !st) return st;
  stats.cells += cells;
  if (!cells) return std::shared_ptr<const loaded_cells>();
  ++stats.partitions;
  return std::make_shared<const loaded_cells>(std::move(data->owner), *records, ids, cells);
}

// The cells of every part file (read_part) for the partitions of `rt`; nothing is changed.
// Returns one set per partition.
result<loaded_parts> read_parts(const table_runtime& rt, const snapshot_manifest& m, const part_reader& read,
                                bulk_load_stats& stats) {
  if (auto st = check_partitions(rt, m); !st) return st;
  auto ids = family_ids(*rt.schema, m);
  if (!ids) return ids.error();
  loaded_parts out;
  for (std::uint32_t p = 0; p < m.partitions; ++p) {
    auto part = read_part(*rt.schema, read, *ids, p, stats);
    if (!part) return part.error();
    out.push_back(std::move(*part));
  }
  return out;
}

// Gives each partition of `rt` its part of `parts` (from read_parts) in one message, all
// partitions at once.
status apply_parts(caf::actor_system& sys, const table_runtime& rt, loaded_parts& parts) {
  auto replies = ask_all<move_reply>(sys, rt, [&](std::uint32_t p) {
    move_request r = step(move_request::load);
    r.loaded.cells = std::move(parts[p]);
    return r;
  });
  for (auto& r : replies) {
    if (!r) return r.error();
    if (!r->st) return r->st;
  }
  return status::ok();
}

result<std::unique_ptr<RE2>> compile(const std::string& regex) {
  auto re = std::make_unique<RE2>(regex.empty() ? ".*" : regex, RE2::Quiet);
  if (!re->ok()) return status{code::invalid_argument, "bad regex '" + regex + "': " + re->error()};
  return re;
}

// store::snapshot on one store: every partition copied at one instant (the catalog held,
// so no DDL meanwhile), each chunk of its cells written to its file as it comes; then
// the file of each partition that changed during the copy is written again with the
// changes applied (cell_file_writer). Neither the copy nor the files are ever whole in
// memory.
result<snapshot_manifest> write_snapshot(store_impl& s, const std::string& table, const std::string& name,
                                         snapshot_writer& w) {
  table_schema schema;
  std::set<std::uint32_t> families;
  snapshot_manifest m;
  std::vector<cell_file_writer> files;
  std::vector<std::shared_ptr<const delta_map>> changes;
  {
    absl::MutexLock lock(&s.catalog->mutex());
    auto rt = s.catalog->lookup(table);
    if (!rt) return table_not_found(table);
    if (rt->partitions.empty()) return status{code::invalid_argument, "table '" + table + "' has no family yet"};
    schema = *rt->schema;
    const auto n = static_cast<std::uint32_t>(rt->partitions.size());
    m = manifest_of(name, s.options.clock(), schema, n, families);
    for (std::uint32_t p = 0; p < n; ++p) {
      files.emplace_back(w, part_file_name(p), families);
      if (auto st = files.back().begin(); !st) return st;
    }
    auto c = copy_partitions(*s.system, *rt, [&](std::size_t p, std::string_view records, const std::string& to) {
      return files[p].add(records, to);
    });
    if (!c) return c.error();
    changes = std::move(*c);
  }
  for (std::uint32_t p = 0; p < files.size(); ++p) {
    if (auto st = files[p].finish(changes[p]); !st) return st;
    m.files[part_file_name(p)] = files[p].written();
  }
  const std::string encoded_schema = encode_schema(schema);
  if (auto st = w.append(std::string(schema_file), encoded_schema); !st) return st;
  m.files[std::string(schema_file)] = {encoded_schema.size(), 0, crc32c(encoded_schema)};
  return m;
}

// The cluster's side of the store's snapshots; null on a single store or a member that
// has not joined.
snapshot_cluster* cluster_snapshots(store_impl& s) {
  auto h = s.cluster.hooks();
  return h ? h->snapshots() : nullptr;
}

// The runtime of `table` on a cluster member, after catching up with the cluster's catalog
// when this node does not know it yet (another node may have created it a moment ago).
runtime_ptr lookup_caught_up(store_impl& s, const std::string& table) {
  auto rt = s.catalog->lookup(table);
  if (!rt)
    if (auto h = s.cluster.hooks(); h && h->catch_up()) rt = s.catalog->lookup(table);
  return rt;
}

// store::snapshot on a cluster member (snapshot_cluster.h): each partition's file made
// where the partition lives and kept by every live node (snapshot_keeper), then the schema.
status snapshot_in_cluster(store_impl& s, snapshot_cluster& c, const std::string& table, const std::string& name) {
  if (auto st = check_snapshot_name(name); !st) return st;
  if (c.manifest(name)) return {code::already_exists, "snapshot '" + name + "' already exists"};
  auto rt = lookup_caught_up(s, table);
  if (!rt) return table_not_found(table);
  if (rt->partitions.empty()) return {code::invalid_argument, "table '" + table + "' has no family yet"};
  const table_schema schema = *rt->schema;
  const auto n = static_cast<std::uint32_t>(rt->partitions.size());
  return c.put(name, [&](snapshot_keeper& k) -> result<snapshot_manifest> {
    std::set<std::uint32_t> families;
    snapshot_manifest m = manifest_of(name, s.options.clock(), schema, n, families);
    auto copied = k.copy_partitions(table, n, families, [&](std::uint32_t p, const snapshot_manifest::file& f) {
      m.files[part_file_name(p)] = f;
      return status::ok();
    });
    if (!copied) return copied;
    // DDL goes through the master, so no lock here keeps it out: a table changed while it
    // was copied is not snapshotted with the schema it had before.
    auto now = s.catalog->lookup(table);
    if (!now || now->schema->uid != schema.uid || now->schema->version != schema.version)
      return status{code::conflict,
                    "table '" + table + "' changed while snapshot '" + name + "' was taken; take it again"};
    const std::string encoded = encode_schema(schema);
    m.files[std::string(schema_file)] = {encoded.size(), 0, crc32c(encoded)};
    if (auto st = k.keep(std::string(schema_file), encoded); !st) return st;
    return m;
  });
}

}  // namespace

// --- store ------------------------------------------------------------------------------------

status store::snapshot(const std::string& table, const std::string& name) {
  auto& s = *impl_;
  if (s.cluster.hooks()) {
    auto* c = cluster_snapshots(s);
    return c ? snapshot_in_cluster(s, *c, table, name) : not_joined();
  }
  if (auto st = check_snapshot_name(name); !st) return st;
  if (s.snapshots->manifest(name)) return {code::already_exists, "snapshot '" + name + "' already exists"};
  // A store with a directory keeps the cells where they are; a memory-only one copies them.
  if (s.persistence) return take_checkpoint_snapshot(s, table, name);
  return s.snapshots->put_streamed(name, [&](snapshot_writer& w) { return write_snapshot(s, table, name, w); });
}

result<std::vector<snapshot_info>> store::list_snapshots(const std::string& regex) const {
  return list_table_snapshots("", regex);
}

result<std::vector<snapshot_info>> store::list_table_snapshots(const std::string& table_regex,
                                                               const std::string& name_regex) const {
  auto tre = compile(table_regex);
  if (!tre) return tre.error();
  auto nre = compile(name_regex);
  if (!nre) return nre.error();
  auto* c = cluster_snapshots(*impl_);
  if (!c && impl_->cluster.hooks()) return not_joined();
  auto all = c ? c->list() : impl_->snapshots->list();
  if (!all) return all.error();
  std::vector<snapshot_info> out;
  for (const auto& m : *all)
    if (RE2::FullMatch(m.table, **tre) && RE2::FullMatch(m.name, **nre)) out.push_back(m.info());
  return out;
}

status store::delete_snapshot(const std::string& name) {
  if (impl_->cluster.hooks()) {
    auto* c = cluster_snapshots(*impl_);
    return c ? c->remove(name) : not_joined();
  }
  auto m = impl_->snapshots->manifest(name);
  if (!m) return m.error();
  if (!m->checkpoint.empty()) return delete_checkpoint_snapshot(*impl_, *m);
  return impl_->snapshots->remove(name);
}

namespace {

// A snapshot opened for a restore or a clone: every file checked against its manifest,
// its schema, and a reader of its part files.
struct opened_snapshot {
  snapshot_manifest m;
  table_schema schema;
  part_reader read;
  std::shared_ptr<void> files;  // the part files of a checkpoint snapshot, removed with it
};

// The files of checkpoint snapshot `m` (checkpoint_snapshots.h) written into a hidden
// directory of the store's snapshots (one a crash leaves is removed at the next open),
// into `out`: its manifest, a reader of them, and what removes them when it goes.
status open_checkpoint_files(store_impl& s, const snapshot_manifest& m, opened_snapshot& out) {
  static std::atomic<std::uint64_t> opened{0};
  const std::string dir =
      s.options.directory + "/snapshots/.read-" + m.name + "-" + std::to_string(opened.fetch_add(1));
  if (auto st = create_snapshot_dir(dir); !st) return st;
  out.files = std::shared_ptr<void>(nullptr, [dir](void*) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  });
  auto files = write_checkpoint_files(s, m, dir);
  if (!files) return files.error();
  out.m = std::move(*files);
  out.read = [dir, m = out.m](const std::string& file) { return map_file_checked(dir, m, file); };
  return status::ok();
}

// The snapshot `name`, checked whole: from the store's repo, or on a cluster member from
// the cluster (snapshot_cluster.h).
result<opened_snapshot> open_snapshot(store_impl& s, const std::string& name) {
  opened_snapshot out;
  std::string schema_bytes;
  if (s.cluster.hooks()) {
    auto* c = cluster_snapshots(s);
    if (!c) return not_joined();
    auto m = c->manifest(name);
    if (!m) return m.error();
    if (!m->files.count(std::string(schema_file)))
      return status{code::corruption, "snapshot '" + name + "' has no schema file"};
    // Every file checked before anything changes; each read again when its turn comes.
    for (const auto& [file, f] : m->files) {
      auto bytes = c->file(*m, file);
      if (!bytes) return bytes.error();
      if (file == schema_file) schema_bytes = bytes->data;
    }
    out.m = std::move(*m);
    out.read = [c, m = out.m](const std::string& file) { return c->file(m, file); };
  } else {
    const snapshot_repo& repo = *s.snapshots;
    auto m = repo.manifest(name);
    if (!m) return m.error();
    if (auto st = repo.verify(name); !st) return st;
    auto bytes = repo.read(name, std::string(schema_file));
    if (!bytes) return bytes.error();
    schema_bytes = std::move(*bytes);
    if (!m->checkpoint.empty()) {
      // Every part written from the checkpoint, and so read whole, before anything changes.
      if (auto st = open_checkpoint_files(s, *m, out); !st) return st;
    } else {
      out.m = std::move(*m);
      out.read = [&repo, name](const std::string& file) { return repo.map(name, file); };
    }
  }
  auto schema = decode_schema(schema_bytes);
  if (!schema) return schema.error();
  out.schema = std::move(*schema);
  return out;
}

// Writes the cells of `m`'s part files into the partitions of `rt` and makes them durable.
// Every part is checked before any is written.
status load_snapshot(store_impl& s, const table_runtime& rt, const opened_snapshot& snap) {
  bulk_load_stats stats;
  if (auto* c = cluster_snapshots(s)) {
    // A part at a time: this node holds one part's file, not the table's; each partition's
    // node loads the part from its own copy of the file, or one it fetches.
    if (auto st = check_partitions(rt, snap.m); !st) return st;
    auto ids = family_ids(*rt.schema, snap.m);
    if (!ids) return ids.error();
    for (std::uint32_t p = 0; p < snap.m.partitions; ++p)
      if (auto part = read_part(*rt.schema, snap.read, *ids, p, stats); !part) return part.error();
    return c->load(rt.schema->name, snap.m.partitions, {&snap.m, std::move(*ids), {}});
  }
  auto parts = read_parts(rt, snap.m, snap.read, stats);
  if (!parts) return parts.error();
  if (auto st = apply_parts(*s.system, rt, *parts); !st) return st;
  if (s.persistence)
    if (auto r = s.snapshot(); !r) return r.error();
  return status::ok();
}

}  // namespace

status store::restore_snapshot(const std::string& name) {
  auto& s = *impl_;
  auto snap = open_snapshot(s, name);
  if (!snap) return snap.error();
  const auto& m = snap->m;
  const auto& schema = snap->schema;
  const std::string& table = m.table;
  auto rt = s.cluster.hooks() ? lookup_caught_up(s, table) : s.catalog->lookup(table);
  if (!rt) {
    // HBase restores a table that was dropped since: created from the snapshot, disabled.
    auto desc = schema.descriptor();
    if (auto st = create_table(desc, schema_origin::oceanbase_ddl); !st) return st;
    if (auto st = disable_table(table); !st) return st;
    rt = s.catalog->lookup(table);
    if (!rt) return table_not_found(table);
  } else if (!rt->schema->disabled && s.cluster.hooks()) {
    // Disabled through another node a moment ago, perhaps: this node answers that the table
    // is enabled only after catching up with the cluster's catalog.
    if (auto h = s.cluster.hooks(); h->catch_up()) rt = s.catalog->lookup(table);
    if (!rt) return table_not_found(table);
  }
  if (!rt->schema->disabled) {
    return {code::table_not_disabled,
            "table '" + table + "' must be disabled to restore snapshot '" + name + "' (disable '" + table + "')"};
  }
  if (!(rt->schema->partitioning == schema.partitioning))
    return {code::invalid_argument,
            "table '" + table + "' is partitioned differently from snapshot '" + name + "'; drop it to restore"};
  // The schema as the snapshot has it: its families (replacing, adding), not the others.
  for (const auto& f : schema.families) {
    const family_schema* now = rt->schema->find(f.desc.name);
    if (!now || !(now->desc == f.desc))
      if (auto st = alter_family(table, f.desc); !st) return st;
  }
  for (const auto& f : rt->schema->families)
    if (!schema.find(f.desc.name))
      if (auto st = drop_family(table, f.desc.name, schema_origin::hbase_shell); !st) return st;
  if (rt->schema->attributes != schema.attributes) {
    std::vector<std::string> unset;
    for (const auto& [k, v] : rt->schema->attributes)
      if (!schema.attributes.count(k)) unset.push_back(k);
    if (auto st = alter_table(table, schema.attributes, unset); !st) return st;
  }
  // One store: new, empty partitions, so the cells load into tables never written. A
  // cluster's truncate goes through its master.
  if (auto st = s.cluster.hooks() ? truncate_table(table) : s.catalog->renew_partitions(table); !st) return st;
  rt = s.catalog->lookup(table);
  if (!rt) return table_not_found(table);
  return load_snapshot(s, *rt, *snap);
}

status store::clone_snapshot(const std::string& name, const std::string& table) {
  auto& s = *impl_;
  if (s.cluster.hooks() ? lookup_caught_up(s, table) : s.catalog->lookup(table))
    return {code::already_exists, "table '" + table + "' already exists"};
  auto snap = open_snapshot(s, name);
  if (!snap) return snap.error();
  auto desc = snap->schema.descriptor();
  desc.name = table;
  if (auto st = create_table(desc, schema_origin::oceanbase_ddl); !st) return st;
  auto rt = s.catalog->lookup(table);
  if (!rt) return table_not_found(table);
  status st = load_snapshot(s, *rt, *snap);
  if (!st) (void)drop_table(table);  // leaves the store as it was
  return st;
}

status store::export_snapshot(const std::string& name, const std::string& dir) {
  // A file at a time, each checked against the manifest as it is read.
  auto* c = cluster_snapshots(*impl_);
  if (!c && impl_->cluster.hooks()) return not_joined();
  auto m = c ? c->manifest(name) : impl_->snapshots->manifest(name);
  if (!m) return m.error();
  if (auto st = create_snapshot_dir(dir); !st) return st;
  if (!m->checkpoint.empty()) {
    auto files = write_checkpoint_files(*impl_, *m, dir);
    if (!files) return files.error();
    return write_snapshot_manifest(dir, *files, true);
  }
  for (const auto& [file, f] : m->files) {
    auto data = c ? c->file(*m, file) : impl_->snapshots->map(name, file);
    if (!data) return data.error();
    if (auto st = write_snapshot_file(dir, file, data->data, true); !st) return st;
  }
  return write_snapshot_manifest(dir, *m, true);
}

result<snapshot_info> store::import_snapshot(const std::string& dir) {
  auto m = read_manifest_dir(dir);
  if (!m) return m.error();
  if (m->kind != "snapshot") return status{code::invalid_argument, "'" + dir + "' holds a bulk load, not a snapshot"};
  if (!m->checkpoint.empty())
    return status{code::invalid_argument,
                  "'" + dir + "' is a snapshot kept inside another store; export it with export-snapshot"};
  if (auto st = check_snapshot_name(m->name); !st) return st;
  if (impl_->cluster.hooks()) {
    auto* c = cluster_snapshots(*impl_);
    if (!c) return not_joined();
    // A file at a time: each checked and handed to the nodes keeping the snapshot.
    auto st = c->put(m->name, [&](snapshot_keeper& k) -> result<snapshot_manifest> {
      for (const auto& [file, f] : m->files) {
        auto data = map_file_checked(dir, *m, file);
        if (!data) return data.error();
        if (auto kept = k.keep(file, data->data); !kept) return kept;
      }
      return *m;
    });
    if (!st) return st;
    return m->info();
  }
  if (auto st = impl_->snapshots->put_from_dir(*m, dir); !st) return st;
  return m->info();
}

result<bulk_load_stats> store::bulk_load(const std::string& table, const std::string& dir) {
  auto& s = *impl_;
  auto* cluster = cluster_snapshots(s);
  if (s.cluster.hooks() && !cluster) return not_joined();
  auto m = read_manifest_dir(dir);
  if (!m) return m.error();
  auto rt = cluster ? lookup_caught_up(s, table) : s.catalog->lookup(table);
  if (!rt) return table_not_found(table);
  using clock = std::chrono::steady_clock;
  auto seconds = [](clock::time_point from, clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  };
  const auto t0 = clock::now();
  bulk_load_stats stats;
  // Each file mapped and checked once; read_parts checks every cell against the table.
  std::map<std::string, file_bytes> files;
  for (std::uint32_t p = 0; p < m->partitions; ++p) {
    const std::string file = part_file_name(p);
    auto data = map_file_checked(dir, *m, file);
    if (!data) return data.error();
    files.emplace(file, std::move(*data));
  }
  auto parts = read_parts(
      *rt, *m,
      [&](const std::string& f) -> result<file_bytes> {
        auto it = files.find(f);
        if (it == files.end()) return status{code::corruption, "the files have no '" + f + "'"};
        return it->second;
      },
      stats);
  if (!parts) return parts.error();
  const auto t1 = clock::now();
  if (cluster) {
    // Each partition's node fetches its part file from this one, in pieces, and loads it
    // there: its owner in one step, its Raft group through the log.
    parts->clear();
    auto ids = family_ids(*rt->schema, *m);
    if (!ids) return ids.error();
    if (auto st = cluster->load(table, m->partitions, {&*m, std::move(*ids), std::move(files)}); !st) return st;
    spdlog::info("bulk load into '{}': {} cells, {} bytes; files checked in {:.3f} s, loaded in {:.3f} s", table,
                 stats.cells, stats.bytes, seconds(t0, t1), seconds(t1, clock::now()));
    return stats;
  }
  if (auto st = apply_parts(*s.system, *rt, *parts); !st) return st;
  const auto t2 = clock::now();
  if (s.persistence)
    if (auto r = s.snapshot(); !r) return r.error();
  spdlog::info(
      "bulk load into '{}': {} cells, {} bytes; files checked in {:.3f} s, loaded in {:.3f} s, snapshot {:.3f} s",
      table, stats.cells, stats.bytes, seconds(t0, t1), seconds(t1, t2), seconds(t2, clock::now()));
  return stats;
}

}  // namespace cellar
