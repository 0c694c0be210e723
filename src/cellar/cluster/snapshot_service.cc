#include "cluster/snapshot_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cluster/ask_node.h"
#include "cluster/layout.h"
#include "cluster/snapshot_sweep.h"
#include "persist/codec.h"
#include "store/cluster_state.h"

namespace cellar::cluster {

using detail::delta_handle;
using detail::delta_map;
using detail::move_reply;
using detail::move_request;
using detail::snapshot_manifest;

namespace {

// Bytes of cells a chunk of a single-copy partition's copy carries, as a move's chunks:
// the partition answers other requests between two of them.
constexpr std::uint64_t chunk_bytes = 1 << 20;
// Partitions copied at once.
constexpr std::uint32_t parallel_copies = 4;
// Bytes of a file one step carries between nodes: a message this size passes through the
// node links' buffers, which keep their largest size.
constexpr std::uint64_t piece_bytes = 4 << 20;
std::string snapshot_znode(const std::string& name) { return std::string(layout::snapshots) + "/s_" + name; }
std::string claim_znode(const std::string& name) { return std::string(layout::snapshot_writes) + "/s_" + name; }

std::string where(const std::string& table, std::uint32_t index) {
  return "partition " + std::to_string(index) + " of '" + table + "'";
}

node_snapshot_reply failed(status st) {
  node_snapshot_reply r;
  r.st = std::move(st);
  return r;
}

// Asks partition actor `p` for a move step and waits, at most `timeout`.
result<move_reply> ask_partition(caf::actor_system& sys, const detail::partition_actor& p, move_request req,
                                 std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys};
  result<move_reply> out = status{code::unavailable, "no answer"};
  self->request(p, timeout, std::move(req))
      .receive([&](move_reply& r) { out = r.st ? result<move_reply>(std::move(r)) : result<move_reply>(r.st); },
               [&](caf::error& e) {
                 out = status{code::unavailable, "the partition did not answer: " + sys.render(e)};
               });
  return out;
}

move_request step(std::uint8_t what) {
  move_request r;
  r.what = what;
  return r;
}

// Applies a cut (cells present or erased since the last one) to `copy`.
void apply_cut(delta_map& copy, const delta_map& cut) {
  for (auto it = cut.begin(); it != cut.end(); ++it) {
    if (it->second.present)
      copy.put(it->first.bytes, it->second.expires_at, it->second.value());
    else
      copy.erase(it->first.bytes);
  }
}

// Every chunk of partition `p` (`what`: move_request::chunk or records), in key order, each
// handed to `take` as it comes; then its cut: the changes since `track`.
result<move_reply> copy_chunks(caf::actor_system& sys, const detail::partition_actor& p, std::uint8_t what,
                               std::chrono::milliseconds timeout, const std::function<status(move_reply&)>& take) {
  std::string after;
  for (bool done = false; !done;) {
    move_request r = step(what);
    r.after = after;
    r.max_bytes = chunk_bytes;
    auto c = ask_partition(sys, p, std::move(r), timeout);
    if (!c) return c.error();
    if (auto st = take(*c); !st) return st;
    if (!c->last.empty()) after = c->last;
    done = c->done;
  }
  return ask_partition(sys, p, step(move_request::cut), timeout);
}

// A single-copy partition of this node as it was when it froze, for a split or merge
// (reshaper.h): the chunks copied while it serves, with every change since `track` (the
// cut) and the freeze's own changes applied on top. The partition holds writes from the
// freeze on; a copy that fails is abandoned (the partition thaws).
result<std::shared_ptr<delta_map>> copy_frozen(caf::actor_system& sys, const detail::partition_actor& p,
                                               std::chrono::milliseconds timeout) {
  if (auto t = ask_partition(sys, p, step(move_request::track), timeout); !t) return t.error();
  auto copy = std::make_shared<delta_map>();
  auto run = [&]() -> status {
    auto cut = copy_chunks(sys, p, move_request::chunk, timeout, [&](move_reply& c) {
      for (auto it = c.cells.map->begin(); it != c.cells.map->end(); ++it)
        copy->put(it->first.bytes, it->second.expires_at, it->second.value());
      return status::ok();
    });
    if (!cut) return cut.error();
    apply_cut(*copy, *cut->cells.map);
    auto last = ask_partition(sys, p, step(move_request::freeze), timeout);
    if (!last) return last.error();
    apply_cut(*copy, *last->cells.map);
    return status::ok();
  };
  const status st = run();
  if (!st) {
    (void)ask_partition(sys, p, step(move_request::abort), timeout);
    return st;
  }
  return copy;
}

// A single-copy partition of this node as it was at one instant, written through `w` as
// file `file` of its cells of `families`: each chunk copied as cell file records while it
// serves is appended as it comes, and the file is written again with every change since
// `track` (the cut) applied (store/snapshot_files.h: cell_file_writer). Neither the copy
// nor the file is ever whole in memory.
result<snapshot_manifest::file> copy_local_file(caf::actor_system& sys, const detail::partition_actor& p,
                                                detail::snapshot_writer& w, const std::string& file,
                                                const std::set<std::uint32_t>& families,
                                                std::chrono::milliseconds timeout) {
  if (auto t = ask_partition(sys, p, step(move_request::track), timeout); !t) return t.error();
  detail::cell_file_writer out(w, file, families);
  std::shared_ptr<const delta_map> changes;
  auto run = [&]() -> status {
    if (auto st = out.begin(); !st) return st;
    auto cut = copy_chunks(sys, p, move_request::records, timeout, [&](move_reply& c) {
      return c.records.empty() ? status::ok() : out.add(c.records, c.last);
    });
    if (!cut) return cut.error();
    changes = std::move(cut->cells.map);
    return status::ok();
  };
  const status st = run();
  (void)ask_partition(sys, p, step(move_request::abort), timeout);
  if (!st) return st;
  if (auto fin = out.finish(changes); !fin) return fin;
  return out.written();
}

// This node's copy of file `file` of snapshot `name`, mapped (and checked against this
// node's manifest as it is), when that manifest records the same size and CRC (not an older
// snapshot of that name); that entry into *entry when given. Null when there is none.
std::optional<detail::file_bytes> intact_copy(const detail::snapshot_repo& repo, const std::string& name,
                                              const std::string& file, std::uint64_t bytes, std::uint32_t crc,
                                              snapshot_manifest::file* entry = nullptr) {
  auto mine = repo.manifest(name);
  if (!mine) return std::nullopt;
  auto f = mine->files.find(file);
  if (f == mine->files.end() || f->second.bytes != bytes || f->second.crc != crc) return std::nullopt;
  auto data = repo.map(name, file);
  if (!data) return std::nullopt;
  if (entry) *entry = f->second;
  return std::move(*data);
}

bool matches(const snapshot_manifest::file& f, std::string_view data) {
  return f.bytes == data.size() && f.crc == detail::crc32c(data);
}

// Worth asking another replica: this one does not lead, or could not be reached.
bool try_next_replica(const status& st) { return st.code() == code::not_leader || st.code() == code::unavailable; }

}  // namespace

snapshot_service::snapshot_service(detail::cluster_seat& seat, peer_directory& peers, const node_gate& gate,
                                   snapshot_service_options o)
    : seat_(seat), peers_(peers), gate_(gate), o_(std::move(o)) {}

std::vector<std::string> snapshot_service::live_nodes(cluster_node& n) {
  std::vector<std::string> out;
  for (const auto& m : n.members()) out.push_back(m.id);
  return out;
}

result<node_snapshot_reply> snapshot_service::ask(const std::string& n, node_snapshot m) {
  if (n == o_.self) {
    auto r = serve(m);
    if (!r.st) return r.st;
    return r;
  }
  auto ep = peers_.endpoint(n, o_.connect_timeout);
  if (!ep) return ep.error();
  auto a =
      ask_node<node_snapshot_reply>(seat_.system(), *ep, std::move(m), o_.step_timeout,
                                    "snapshot step at node '" + n + "': the node ", [this] { return gate_.closing(); });
  if (a.down) peers_.forget(n, ep->address());
  if (a.reply && !a.reply->st) return a.reply->st;
  return std::move(a.reply);
}

result<node_snapshot_reply> snapshot_service::ask_leader(const std::vector<std::string>& replicas,
                                                         const node_snapshot& m, std::string* who) {
  const auto deadline = std::chrono::steady_clock::now() + o_.leader_wait;
  for (;;) {
    status last;
    for (const auto& r : replicas) {
      auto got = ask(r, m);
      if (got) {
        if (who) *who = r;
        return got;
      }
      if (!try_next_replica(got.error())) return got.error();
      last = got.error();
    }
    if (std::chrono::steady_clock::now() >= deadline || gate_.closing()) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// --- the steps at this node ---------------------------------------------------------------

node_snapshot_reply snapshot_service::serve(node_snapshot& m) {
  auto& repo = *o_.repo;
  switch (m.step) {
    case node_snapshot::copy: return copy_here(m);
    case node_snapshot::load: return load_here(m);
    case node_snapshot::persist:
      if (seat_.persistence())
        if (auto r = seat_.snapshot(); !r) return failed(r.error());
      return {};
    case node_snapshot::begin: return failed(repo.begin_staged(m.name));
    case node_snapshot::keep_file:
      for (const auto& [file, data] : m.files)
        if (auto st = repo.stage(m.name, file, data, m.offset); !st) return failed(st);
      return {};
    case node_snapshot::pull: return failed(pull_here(m));
    case node_snapshot::fetch_staged: return piece_here(m);
    case node_snapshot::keep: {
      auto man = detail::decode_manifest(m.manifest);
      if (!man) return failed(man.error());
      return failed(repo.commit_staged(*man));
    }
    case node_snapshot::fetch: return piece_here(m);
    case node_snapshot::fetch_offered: return piece_offered(m);
    case node_snapshot::drop: {
      // A write cut short leaves its files staged; a snapshot kept has them in place.
      repo.abandon_staged(m.name);
      auto st = repo.remove(m.name);
      return failed(st.code() == code::not_found ? status::ok() : st);
    }
    case node_snapshot::freeze:
    case node_snapshot::release: return freeze_here(m);
    case node_snapshot::stage:
    case node_snapshot::unstage:
    case node_snapshot::fill:
      if (!o_.stage) return failed({code::unsupported, "this node builds no partitions of a split or merge"});
      return failed(o_.stage(m));
    case node_snapshot::stats: return stats_here(m);
  }
  return failed({code::invalid_argument, "unknown snapshot step " + std::to_string(m.step)});
}

// This node's partition (table, index), waiting a moment for a table it has not applied yet
// (another node created it just now).
static bool find_here(const snapshot_service_options& o, detail::cluster_seat& seat, const node_snapshot& m,
                      detail::partition_ref& ref) {
  if (o.find(m.table, m.index, ref)) return true;
  if (auto h = seat.cluster().hooks(); h && h->catch_up()) return o.find(m.table, m.index, ref);
  return false;
}

node_snapshot_reply snapshot_service::freeze_here(const node_snapshot& m) {
  // The partition the caller planned with, not another incarnation of the table: a node
  // that has not applied the catalog the caller read catches up first, and one that is
  // past it refuses (the caller's plan is stale: it undoes the split and may call again).
  if (m.step == node_snapshot::freeze && m.uid != 0 && o_.table_uid && o_.table_uid(m.table) != m.uid) {
    if (auto h = seat_.cluster().hooks(); h) (void)h->catch_up();
    if (o_.table_uid(m.table) != m.uid)
      return failed({code::unavailable, "node '" + o_.self + "' holds another incarnation of table '" + m.table +
                                            "' than the split or merge was planned with: call it again"});
  }
  detail::partition_ref ref;
  if (!find_here(o_, seat_, m, ref))
    return failed({code::unavailable, "node '" + o_.self + "' has not applied table '" + m.table + "' yet"});
  auto& sys = seat_.system();
  if (ref.replica_here) {
    // Through the group's log, on its leader: the freeze holds whoever leads later.
    if (m.step == node_snapshot::freeze && o_.guard_source) o_.guard_source(m.table, m.index);
    move_request req = step(m.step == node_snapshot::freeze ? move_request::freeze : move_request::abort);
    req.max_bytes = m.hold;  // the hold (replicated_partition.h)
    auto r = ask_partition(sys, ref.actor, std::move(req), o_.step_timeout);
    if (!r) return failed(r.error());
    node_snapshot_reply out;
    out.cells = std::move(r->cells);
    return out;
  }
  if (!ref.local) return failed({code::not_owner, "node '" + o_.self + "' does not hold " + where(m.table, m.index)});
  if (m.step == node_snapshot::release) {
    auto r = ask_partition(sys, ref.actor, step(move_request::abort), std::chrono::seconds(60));
    return failed(r ? status::ok() : r.error());
  }
  // Should the node running the split die, its intent goes and this node runs what the
  // freeze held (member.h: the source side of a move).
  if (o_.guard_source) o_.guard_source(m.table, m.index);
  auto c = copy_frozen(sys, ref.actor, std::chrono::seconds(60));
  if (!c) return failed(c.error());
  node_snapshot_reply out;
  out.cells.map = std::move(*c);
  return out;
}

node_snapshot_reply snapshot_service::copy_here(const node_snapshot& m) {
  detail::partition_ref ref;
  if (!find_here(o_, seat_, m, ref))
    return failed({code::unavailable, "node '" + o_.self + "' has not applied table '" + m.table + "' yet"});
  auto& sys = seat_.system();
  const std::set<std::uint32_t> families(m.families.begin(), m.families.end());
  node_snapshot_reply out;
  const std::string file = detail::part_file_name(m.index);
  result<snapshot_manifest::file> f = status{code::internal, "not copied"};
  if (ref.replica_here) {
    auto r = ask_partition(sys, ref.actor, step(move_request::copy), o_.step_timeout);
    if (!r) return failed(r.error());
    static const delta_map none;
    snapshot_manifest::file made;
    const std::string data = detail::encode_cells(r->cells.map ? *r->cells.map : none, families, &made.cells);
    made.bytes = data.size();
    made.crc = detail::crc32c(data);
    if (auto st = o_.repo->stage(m.name, file, data); !st) return failed(st);
    f = made;
  } else if (ref.local) {
    // Each request copies at most a chunk: a partition that does not answer one within a
    // minute is stuck.
    status st = o_.repo->write_staged(m.name, [&](detail::snapshot_writer& w) -> status {
      f = copy_local_file(sys, ref.actor, w, file, families, std::chrono::seconds(60));
      return f ? status::ok() : f.error();
    });
    if (!st) return failed(st);
  } else {
    return failed({code::not_owner, "node '" + o_.self + "' does not hold " + where(m.table, m.index)});
  }
  if (!f) return failed(f.error());
  out.cells_held = f->cells;
  out.bytes_held = f->bytes;
  out.crc = f->crc;
  return out;
}

node_snapshot_reply snapshot_service::piece_here(const node_snapshot& m) {
  auto piece = o_.repo->read_piece(m.name, m.file, m.offset, piece_bytes, m.step == node_snapshot::fetch_staged);
  if (!piece) return failed(piece.error());
  node_snapshot_reply out;
  out.files.emplace(m.file, std::move(*piece));
  return out;
}

result<std::string> snapshot_service::fetch_from(const std::string& n, std::uint8_t step, const std::string& name,
                                                 const std::string& file) {
  node_snapshot fetch;
  fetch.step = step;
  fetch.name = name;
  fetch.file = file;
  std::string out;
  for (;;) {
    fetch.offset = out.size();
    auto r = ask(n, fetch);
    if (!r) return r.error();
    auto got = r->files.find(file);
    if (got == r->files.end()) return status{code::internal, "node '" + n + "' sent no piece of '" + file + "'"};
    out.append(got->second);
    if (got->second.size() < piece_bytes) return out;
  }
}

status snapshot_service::pull_here(const node_snapshot& m) {
  node_snapshot fetch;
  fetch.step = node_snapshot::fetch_staged;
  fetch.name = m.name;
  fetch.file = m.file;
  std::uint32_t crc = 0;
  for (;;) {
    auto r = ask(m.from, fetch);
    if (!r) return r.error();
    auto got = r->files.find(m.file);
    if (got == r->files.end()) return {code::internal, "node '" + m.from + "' sent no piece of '" + m.file + "'"};
    const std::string& piece = got->second;
    if (fetch.offset + piece.size() > m.bytes) break;
    if (auto st = o_.repo->stage(m.name, m.file, piece, fetch.offset); !st) return st;
    crc = detail::crc32c_extend(crc, piece);
    fetch.offset += piece.size();
    if (piece.size() < piece_bytes) break;
  }
  if (fetch.offset != m.bytes || crc != m.crc)
    return {code::corruption, "file '" + m.file + "' of snapshot '" + m.name + "' fetched from node '" + m.from +
                                  "' is not the file copied there"};
  return status::ok();
}

node_snapshot_reply snapshot_service::stats_here(const node_snapshot& m) {
  detail::partition_ref ref;
  if (!find_here(o_, seat_, m, ref))
    return failed({code::unavailable, "node '" + o_.self + "' has not applied table '" + m.table + "' yet"});
  if (!ref.local && !ref.replica_here)
    return failed({code::not_owner, "node '" + o_.self + "' does not hold " + where(m.table, m.index)});
  caf::scoped_actor self{seat_.system()};
  node_snapshot_reply out;
  self->request(ref.actor, std::chrono::seconds(60), detail::stats_request{})
      .receive(
          [&](detail::stats_reply& r) {
            out.cells_held = r.stats.cells;
            out.bytes_held = r.stats.bytes;
          },
          [&](caf::error& e) {
            out.st = {code::unavailable, where(m.table, m.index) + " did not answer: " + seat_.system().render(e)};
          });
  return out;
}

node_snapshot_reply snapshot_service::load_here(const node_snapshot& m) {
  detail::partition_ref ref;
  if (!find_here(o_, seat_, m, ref))
    return failed({code::unavailable, "node '" + o_.self + "' has not applied table '" + m.table + "' yet"});
  if (!ref.local && !ref.replica_here)
    return failed({code::not_owner, "node '" + o_.self + "' does not hold " + where(m.table, m.index)});
  detail::file_bytes data;
  if (m.from.empty()) {
    auto here = intact_copy(*o_.repo, m.name, m.file, m.bytes, m.crc);
    if (!here)
      return failed({code::not_found, "node '" + o_.self + "' holds no intact copy of file '" + m.file +
                                          "' of snapshot '" + m.name + "'"});
    data = std::move(*here);
  } else {
    auto got = fetch_for_load(m);
    if (!got) return failed(got.error());
    data = std::move(*got);
  }
  auto records = detail::cell_records(data.data);
  if (!records) return failed({code::corruption, "file '" + m.file + "': " + records.error().message()});
  detail::loaded_cells::id_map ids;
  for (std::size_t i = 0; i + 1 < m.ids.size(); i += 2) ids.emplace_back(m.ids[i], m.ids[i + 1]);
  auto cells =
      std::make_shared<const detail::loaded_cells>(std::move(data.owner), *records, std::move(ids), m.file_cells);
  // A single-copy partition takes the file as a bulk load does; a replica proposes the
  // cells through its group's log (NOT_LEADER unless it leads).
  move_request r = step(ref.local ? move_request::load : move_request::apply);
  if (ref.local)
    r.loaded.cells = std::move(cells);
  else
    r.cells.map = detail::to_cells(*cells);
  auto got = ask_partition(seat_.system(), ref.actor, std::move(r), o_.step_timeout);
  return failed(got ? status::ok() : got.error());
}

result<detail::file_bytes> snapshot_service::fetch_for_load(const node_snapshot& m) {
  // A file this node offers is loaded from its mapping (checked when it was offered), not
  // copied.
  if (m.offered && m.from == o_.self)
    if (auto here = offered_file(m.name, m.file)) return std::move(*here);
  auto got = fetch_from(m.from, m.offered ? node_snapshot::fetch_offered : node_snapshot::fetch, m.name, m.file);
  // NOT_FOUND, not the fetch's own code: the caller then asks another holder, where an
  // UNAVAILABLE would have it wait for another leader.
  if (!got)
    return status{code::not_found, "node '" + o_.self + "' could not fetch file '" + m.file + "' from node '" + m.from +
                                       "': " + got.error().to_string()};
  if (!matches({m.bytes, m.file_cells, m.crc}, *got))
    return status{code::corruption, "file '" + m.file + "' fetched from node '" + m.from + "' is not the file of '" +
                                        m.name + "' (size or CRC)"};
  auto held = std::make_shared<const std::string>(std::move(*got));
  return detail::file_bytes{held, *held};
}

std::optional<detail::file_bytes> snapshot_service::offered_file(const std::string& name,
                                                                 const std::string& file) const {
  absl::MutexLock lock(&offers_mu_);
  auto o = offers_.find(name);
  if (o == offers_.end()) return std::nullopt;
  auto f = o->second.find(file);
  if (f == o->second.end()) return std::nullopt;
  return f->second;
}

node_snapshot_reply snapshot_service::piece_offered(const node_snapshot& m) {
  auto offered = offered_file(m.name, m.file);
  if (!offered)
    return failed({code::not_found, "node '" + o_.self + "' offers no file '" + m.file + "' under '" + m.name + "'"});
  const detail::file_bytes& file = *offered;
  if (m.offset > file.data.size())
    return failed(
        {code::invalid_argument, "offset " + std::to_string(m.offset) + " is past the end of '" + m.file + "'"});
  node_snapshot_reply out;
  out.files.emplace(m.file, std::string(file.data.substr(m.offset, piece_bytes)));
  return out;
}

// --- the calls of the serving node ----------------------------------------------------------

result<snapshot_service::staged_copy> snapshot_service::copy_one(const std::string& name, const std::string& table,
                                                                 std::uint32_t index,
                                                                 const std::set<std::uint32_t>& families) {
  auto n = node();
  if (!n) return n.error();
  auto owner_now = [&]() -> result<partition_owner> {
    auto map = (*n)->placement();
    const partition_owner* o = map ? map->owner({table, index}) : nullptr;
    if (!o) return status{code::unavailable, "the placement map has no " + where(table, index) + " yet"};
    return *o;
  };
  auto owner = owner_now();
  if (!owner) return owner.error();
  node_snapshot m;
  m.step = node_snapshot::copy;
  m.name = name;
  m.table = table;
  m.index = index;
  m.families.assign(families.begin(), families.end());
  result<node_snapshot_reply> got = status{code::unavailable, "not asked"};
  staged_copy out;
  if (owner->replicated()) {
    got = ask_leader(owner->replicas, m, &out.node);
  } else {
    // The move intent keeps moves of the partition out while its owner tracks its changes
    // (a move's track would replace the snapshot's change record, and the reverse).
    auto& zk = (*n)->zookeeper();
    if (auto st = zk.ensure_path(layout::moves); !st) return st;
    const std::string intent = layout::move_intent(table, index);
    if (auto made = zk.create(intent, "snapshot", create_mode::ephemeral); !made)
      return made.error().code() == code::already_exists
                 ? status{code::conflict, "a move of " + where(table, index) + " is running; take the snapshot again"}
                 : made.error();
    // The intent as made: should this node's session end meanwhile, the intent there
    // afterwards may be a move's, which is not this snapshot's to delete.
    auto made = zk.exists(intent);
    const std::int64_t mine = made && *made ? (*made)->czxid : 0;
    owner = owner_now();  // a move that flipped just before the intent
    if (owner) out.node = owner->node;
    got = owner ? ask(owner->node, m) : result<node_snapshot_reply>(owner.error());
    if (auto now = zk.exists(intent); now && *now && (*now)->czxid == mine) (void)zk.remove(intent);
  }
  if (!got) return got.error();
  out.f = {got->bytes_held, got->cells_held, got->crc};
  return out;
}

result<snapshot_service::holders_and_manifest> snapshot_service::read_znode(const std::string& name) {
  auto n = node();
  if (!n) return n.error();
  if (auto st = detail::check_snapshot_name(name); !st)
    return status{code::not_found, "snapshot '" + name + "' does not exist"};
  auto z = (*n)->zookeeper().get(snapshot_znode(name));
  if (!z) {
    if (z.error().code() == code::not_found) return status{code::not_found, "snapshot '" + name + "' does not exist"};
    return z.error();
  }
  // "holders N1 N2 ...\n", then the manifest.
  const auto eol = z->data.find('\n');
  if (eol == std::string::npos || !z->data.starts_with("holders"))
    return status{code::corruption, "the znode of snapshot '" + name + "' is malformed"};
  holders_and_manifest out;
  std::istringstream in(z->data.substr(0, eol));
  std::string word;
  in >> word;
  while (in >> word) out.holders.push_back(word);
  auto m = detail::decode_manifest(std::string_view(z->data).substr(eol + 1));
  if (!m) return m.error();
  out.m = std::move(*m);
  return out;
}

// The keeper snapshot_service::put gives the maker of snapshot `name`: it hands each file
// to the nodes of `keeping`, leaving out a node that fails a step (its error in `failure`).
class snapshot_service::keeper final : public detail::snapshot_keeper {
 public:
  keeper(snapshot_service& s, std::string name, std::vector<std::string> live)
      : s_(s), name_(std::move(name)), keeping_(std::move(live)), needed_(std::min<std::size_t>(2, keeping_.size())) {}

  // Runs `step` at every node still keeping, leaving out those that fail it.
  void at_each(const node_snapshot& step, const std::string& except = {}) {
    std::vector<std::string> kept;
    for (const auto& node_id : keeping_) {
      if (node_id == except) {
        kept.push_back(node_id);
      } else if (auto r = s_.ask(node_id, step); r) {
        kept.push_back(node_id);
      } else {
        failure_ = r.error();
      }
    }
    keeping_ = std::move(kept);
  }
  status enough() const {
    if (keeping_.size() >= needed_ && !keeping_.empty()) return status::ok();
    return {code::unavailable, "snapshot '" + name_ + "' reached " + std::to_string(keeping_.size()) +
                                   " node(s), fewer than " + std::to_string(std::max<std::size_t>(needed_, 1)) + ": " +
                                   failure_.to_string()};
  }
  const std::vector<std::string>& keeping() const { return keeping_; }

  status keep(const std::string& file, std::string_view data) override {
    node_snapshot f;
    f.name = name_;
    f.step = node_snapshot::keep_file;
    std::uint64_t at = 0;
    do {
      const auto piece = data.substr(at, piece_bytes);
      f.offset = at;
      f.files = {{file, std::string(piece)}};
      at_each(f);
      if (auto st = enough(); !st) return st;
      at += piece.size();
    } while (at < data.size());
    return status::ok();
  }

  status copy_partitions(const std::string& table, std::uint32_t partitions, const std::set<std::uint32_t>& families,
                         const std::function<status(std::uint32_t, const snapshot_manifest::file&)>& kept) override {
    // Several partitions at once (each at its own instant, as one at a time would be), so
    // that the copies of different nodes overlap; each pulled by the other keeping nodes
    // from the node that staged it as soon as it is made.
    using copied = result<staged_copy>;
    std::deque<std::pair<std::uint32_t, std::future<copied>>> running;
    std::uint32_t next = 0;
    status failed;
    while (!running.empty() || (failed.is_ok() && next < partitions)) {
      while (failed.is_ok() && next < partitions && running.size() < parallel_copies) {
        const std::uint32_t i = next++;
        running.emplace_back(i, std::async(std::launch::async, [this, &table, &families, i] {
                               return s_.copy_one(name_, table, i, families);
                             }));
      }
      auto [i, f] = std::move(running.front());
      running.pop_front();
      auto c = f.get();
      if (!failed.is_ok()) continue;  // the copies already running end unused
      if (!c) {
        failed = c.error();
        continue;
      }
      node_snapshot pull;
      pull.step = node_snapshot::pull;
      pull.name = name_;
      pull.file = detail::part_file_name(i);
      pull.from = c->node;
      pull.bytes = c->f.bytes;
      pull.crc = c->f.crc;
      at_each(pull, c->node);
      if (auto st = enough(); !st)
        failed = st;
      else if (auto st2 = kept(i, c->f); !st2)
        failed = st2;
    }
    return failed;
  }

  // The manifest to every node still keeping.
  status keep_manifest(const snapshot_manifest& m) {
    node_snapshot step;
    step.name = name_;
    step.step = node_snapshot::keep;
    step.manifest = detail::encode_manifest(m);
    at_each(step);
    return enough();
  }
  status begin() {
    node_snapshot step;
    step.name = name_;
    step.step = node_snapshot::begin;
    at_each(step);
    return enough();
  }

 private:
  snapshot_service& s_;
  const std::string name_;
  std::vector<std::string> keeping_;
  const std::size_t needed_;
  status failure_;
};

status snapshot_service::put(const std::string& name,
                             const std::function<result<snapshot_manifest>(detail::snapshot_keeper&)>& make) {
  auto n = node();
  if (!n) return n.error();
  auto& zk = (*n)->zookeeper();
  if (auto st = zk.ensure_path(layout::snapshots); !st) return st;
  if (auto st = zk.ensure_path(layout::snapshot_writes); !st) return st;
  const status taken{code::already_exists, "snapshot '" + name + "' already exists"};
  if (auto e = zk.exists(snapshot_znode(name)); !e || *e) return e ? taken : e.error();
  // The claim: one writer per name; it goes with this node's session if it dies.
  if (auto c = zk.create(claim_znode(name), o_.self, create_mode::ephemeral); !c)
    return c.error().code() == code::already_exists
               ? status{code::already_exists, "snapshot '" + name + "' is being taken through another node"}
               : c.error();
  auto release = [&] { (void)zk.remove(claim_znode(name)); };
  if (auto e = zk.exists(snapshot_znode(name)); !e || *e) {
    release();
    return e ? taken : e.error();
  }
  // Two copies at least when two nodes live: losing one node then loses no snapshot.
  const auto live = live_nodes(**n);
  keeper k(*this, name, live);
  result<snapshot_manifest> m = status{code::internal, "snapshot '" + name + "' was not made"};
  status st = k.begin();
  if (st) {
    m = make(k);
    if (m && m->name != name) m = status{code::internal, "snapshot '" + name + "' was given another name's manifest"};
    st = m ? k.keep_manifest(*m) : m.error();
  }
  if (st) {
    std::string data = "holders";
    for (const auto& h : k.keeping()) data += " " + h;
    data += "\n" + detail::encode_manifest(*m);
    if (auto made = zk.create(snapshot_znode(name), data); !made) st = made.error();
  }
  // The nodes to drop what they staged or kept of it: every live node when the snapshot
  // failed, those left out midway when it was made.
  std::vector<std::string> drop_at;
  for (const auto& node_id : live)
    if (!st || std::find(k.keeping().begin(), k.keeping().end(), node_id) == k.keeping().end())
      drop_at.push_back(node_id);
  if (!st && m) {
    // Some nodes may have kept the snapshot (its manifest reached them): one down when
    // asked to drop it removes its copy when it sweeps, by the tombstone.
    record_gone(zk, *m, {live.begin(), live.end()}, live);
  } else {
    // Only staged files, which a node also drops when it restarts.
    node_snapshot drop;
    drop.step = node_snapshot::drop;
    drop.name = name;
    for (const auto& node_id : drop_at) (void)ask(node_id, drop);
  }
  release();
  return st;
}

void snapshot_service::record_gone(zk_client& zk, const snapshot_manifest& m, const std::set<std::string>& may_hold,
                                   const std::vector<std::string>& live) {
  auto calls = tombstone_zk_of(zk);
  // The tombstone first: a node that misses the drops below finds it when it sweeps.
  if (auto st = mark_deleted(*calls, m, may_hold); !st)
    spdlog::warn("cellar: snapshot '{}' is gone but its record for nodes that were down was not written: {}", m.name,
                 st.to_string());
  node_snapshot drop;
  drop.step = node_snapshot::drop;
  drop.name = m.name;
  std::set<std::string> dropped;
  for (const auto& node_id : live) {
    if (auto r = ask(node_id, drop); r)
      dropped.insert(node_id);
    else
      spdlog::warn("cellar: deleting the files of snapshot '{}' on node '{}': {}", m.name, node_id,
                   r.error().to_string());
  }
  if (auto st = mark_swept(*calls, m, dropped); !st)
    spdlog::warn("cellar: the record of deleted snapshot '{}' still names the nodes that dropped its files: {}", m.name,
                 st.to_string());
}

result<std::vector<snapshot_manifest>> snapshot_service::list() {
  auto n = node();
  if (!n) return n.error();
  auto names = (*n)->zookeeper().children(layout::snapshots);
  if (!names) {
    if (names.error().code() == code::not_found) return std::vector<snapshot_manifest>{};
    return names.error();
  }
  std::sort(names->begin(), names->end());
  std::vector<snapshot_manifest> out;
  for (const auto& child : *names) {
    if (!child.starts_with("s_")) continue;
    auto z = read_znode(child.substr(2));
    if (!z) {
      if (z.error().code() == code::not_found) continue;  // deleted meanwhile
      return z.error();
    }
    out.push_back(std::move(z->m));
  }
  return out;
}

result<snapshot_manifest> snapshot_service::manifest(const std::string& name) {
  auto z = read_znode(name);
  if (!z) return z.error();
  return std::move(z->m);
}

status snapshot_service::remove(const std::string& name) {
  auto z = read_znode(name);
  if (!z) return z.error();
  auto n = node();
  if (!n) return n.error();
  if (auto st = (*n)->zookeeper().remove(snapshot_znode(name)); !st)
    return st.code() == code::not_found ? status{code::not_found, "snapshot '" + name + "' does not exist"} : st;
  // The snapshot is gone; its files go from every node that is up, and a node that holds
  // them but is down now removes them when it sweeps (drop_unnamed), by the record written
  // here.
  const auto live = live_nodes(**n);
  std::set<std::string> may_hold(z->holders.begin(), z->holders.end());
  may_hold.insert(live.begin(), live.end());
  record_gone((*n)->zookeeper(), z->m, may_hold, live);
  return status::ok();
}

status snapshot_service::drop_unnamed() {
  auto n = node();
  if (!n) return n.error();
  auto calls = tombstone_zk_of((*n)->zookeeper());
  return sweep_snapshot_copies(*calls, *o_.repo, o_.self);
}

result<detail::file_bytes> snapshot_service::file(const snapshot_manifest& m, const std::string& file) {
  auto f = m.files.find(file);
  if (f == m.files.end()) return status{code::corruption, "snapshot '" + m.name + "' has no file '" + file + "'"};
  if (auto here = intact_copy(*o_.repo, m.name, file, f->second.bytes, f->second.crc)) return std::move(*here);
  // This node's copy is missing or damaged: another holder's, checked alike.
  auto z = read_znode(m.name);
  if (!z) return z.error();
  for (const auto& h : z->holders) {
    if (h == o_.self) continue;
    auto got = fetch_from(h, node_snapshot::fetch, m.name, file);
    if (!got || !matches(f->second, *got)) continue;
    auto held = std::make_shared<const std::string>(std::move(*got));
    return detail::file_bytes{held, *held};
  }
  return status{code::corruption, "snapshot '" + m.name + "': no node holds an intact copy of its file '" + file + "'"};
}

// A bulk load's files, offered by this node to the nodes loading them (fetch_offered)
// while the load runs.
class snapshot_service::offer {
 public:
  offer(snapshot_service& s, std::map<std::string, detail::file_bytes> files) : s_(s) {
    static std::atomic<std::uint64_t> next{0};
    name_ = "bulkload-" + std::to_string(next.fetch_add(1) + 1);
    absl::MutexLock lock(&s_.offers_mu_);
    s_.offers_.emplace(name_, std::move(files));
  }
  offer(const offer&) = delete;
  offer& operator=(const offer&) = delete;
  ~offer() {
    absl::MutexLock lock(&s_.offers_mu_);
    s_.offers_.erase(name_);
  }
  const std::string& name() const { return name_; }

 private:
  snapshot_service& s_;
  std::string name_;
};

result<node_snapshot_reply> snapshot_service::ask_loader(const partition_owner& o, const node_snapshot& m) {
  // A load a leader did not finish wrote nothing, and writing the same cells again is
  // harmless, so a load whose leader stopped answering is asked, whole, of the next one.
  return o.replicated() ? ask_leader(o.replicas, m) : ask(o.node, m);
}

status snapshot_service::load(const std::string& table, std::uint32_t partitions, const load_source& from) {
  auto n = node();
  if (!n) return n.error();
  auto map = (*n)->placement();
  std::optional<offer> offered;
  if (!from.files.empty()) offered.emplace(*this, from.files);
  std::optional<holders_and_manifest> z;  // read once a node lacks its copy
  std::set<std::string> owners;           // nodes whose single-copy partitions took cells
  for (std::uint32_t p = 0; p < partitions; ++p) {
    const partition_owner* o = map ? map->owner({table, p}) : nullptr;
    if (!o) return status{code::unavailable, "the placement map has no " + where(table, p) + " yet"};
    node_snapshot m;
    m.step = node_snapshot::load;
    m.table = table;
    m.index = p;
    m.file = detail::part_file_name(p);
    const auto f = from.m->files.find(m.file);
    if (f == from.m->files.end()) return status{code::corruption, "the files have none for " + where(table, p)};
    if (f->second.cells == 0) continue;
    m.bytes = f->second.bytes;
    m.crc = f->second.crc;
    m.file_cells = f->second.cells;
    for (const auto& [file_id, table_id] : from.ids) m.ids.insert(m.ids.end(), {file_id, table_id});
    result<node_snapshot_reply> r = status{code::internal, "not asked"};
    if (offered) {
      m.name = offered->name();
      m.from = o_.self;
      m.offered = true;
      r = ask_loader(*o, m);
    } else {
      m.name = from.m->name;
      r = ask_loader(*o, m);
      if (!r && r.error().code() == code::not_found) {
        // That node holds no intact copy: it fetches one from a node that does.
        if (!z) {
          auto got = read_znode(m.name);
          if (!got) return got.error();
          z = std::move(*got);
        }
        for (const auto& h : z->holders) {
          m.from = h;
          r = ask_loader(*o, m);
          if (r || (r.error().code() != code::not_found && r.error().code() != code::corruption)) break;
        }
      }
    }
    if (!r) return r.error();
    if (!o->replicated()) owners.insert(o->node);
  }
  node_snapshot persist;
  persist.step = node_snapshot::persist;
  for (const auto& node_id : owners)
    if (auto r = ask(node_id, persist); !r) return r.error();
  return status::ok();
}

}  // namespace cellar::cluster
