#include "replica/replicated_partition.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "partition/cell_stream.h"
#include "partition/inspect.h"
#include "persist/codec.h"

namespace cellar::replica {

namespace {

using namespace cellar::detail;

// The first byte of every log entry: what applying it does.
constexpr char writes_entry = 'W';  // the leader's clock, then batches of writes
constexpr char schema_entry = 'S';  // a table schema, adopted if newer than the replica's
constexpr char drop_entry = 'D';    // family ids whose cells every replica drops
constexpr char cells_entry = 'C';   // cells every replica writes (a load of one entry)
// A load of more than one entry (see spawn_replicated_partition): its parts, which every
// replica stages, then the entry that writes what was staged in one step, or an abort.
constexpr char part_entry = 'P';   // load id, part number, cells
constexpr char load_entry = 'L';   // load id, number of parts: the staged parts are written
constexpr char abort_entry = 'A';  // load id whose staged parts are dropped
// A split or merge of the partition (cluster/reshaper.h): from the freeze on every replica
// refuses writes, until the release. Each names its hold (a token; see freeze_through_log).
constexpr char freeze_entry = 'Z';   // hold
constexpr char release_entry = 'R';  // hold (0: whichever)

bool reads_only(const std::vector<batch_op>& ops) {
  for (const auto& op : ops)
    if (!std::holds_alternative<get>(op)) return false;
  return true;
}

batch_reply failed(std::size_t n, const status& why) {
  batch_reply out;
  out.results.resize(n);
  fail_all(out.results, why);
  return out;
}

// `cells` in pieces of about `piece_bytes` each (at least one piece).
std::vector<delta_handle> pieces_of(const delta_map& cells, std::size_t piece_bytes) {
  std::vector<delta_handle> out(1);
  std::size_t bytes = 0;
  for (auto it = cells.begin(); it != cells.end(); ++it) {
    if (bytes >= piece_bytes) {
      out.emplace_back();
      bytes = 0;
    }
    if (it->second.present)
      out.back().map->put(it->first.bytes, it->second.expires_at, it->second.value());
    else
      out.back().map->erase(it->first.bytes);
    bytes += it->first.bytes.size() + it->second.value().size() + 16;
  }
  return out;
}

template <class T>
std::string serialize(caf::actor_system& sys, const T& x) {
  std::vector<char> buf;
  caf::binary_serializer sink(sys, buf);
  auto err = sink(const_cast<T&>(x));
  if (err) return {};
  return std::string(buf.begin(), buf.end());
}

template <class T>
bool deserialize(caf::actor_system& sys, std::string_view bytes, T& x) {
  caf::binary_deserializer source(sys, bytes.data(), bytes.size());
  return !source(x);
}

class replicated_owner final : public replicated_partition_actor::base, public state_machine {
 public:
  replicated_owner(caf::actor_config& cfg, partition_config pc, replication_config rc)
      : replicated_partition_actor::base(cfg),
        cfg_(std::move(pc)),
        rc_(std::move(rc)),
        mem_(std::make_unique<memtable>(cfg_.memory)),
        loop_(this) {}

  const char* name() const override { return "cellar.replicated_partition"; }

  void on_exit() override {
    // A load's caller learns at once that it was not written (its parts, if any, are
    // dropped by the next load or leader).
    fail_loads({code::unavailable, "partition " + std::to_string(cfg_.index) + " stopped during a load"});
    group_.reset();
    rc_.keep.reset();
  }

  behavior_type make_behavior() override {
    group_ = std::make_unique<replica_group>(rc_.group, *rc_.storage, *rc_.net, loop_, *this);
    if (auto st = group_->start(rc_.members); !st) {
      quit(caf::make_error(caf::sec::runtime_error, st.to_string()));  // the behaviour below never runs
    } else if (cfg_.maintenance_interval.count() > 0) {
      delayed_send(this, cfg_.maintenance_interval, tick_atom::value);
    }
    return {
        [this](batch_request& r) -> caf::result<batch_reply> {
          if (stopping_) return failed(r.ops.size(), stopped_status());
          if (stale(r.schema_version)) {
            const auto n = r.ops.size();
            return wait_for_schema<batch_reply>(std::move(r), [n](const status& st) { return failed(n, st); });
          }
          if (reads_only(r.ops)) return read(std::move(r));
          return write(std::move(r));
        },
        [this](scan_request& r) -> caf::result<scan_reply> {
          if (stopping_) return scan_reply{stopped_status(), {}};
          if (stale(r.schema_version))
            return wait_for_schema<scan_reply>(std::move(r), [](const status& st) { return scan_reply{st, {}}; });
          if (group_->lease_valid()) return scan_reply{status::ok(), mem_->scan(*cfg_.schema, r.page, cfg_.clock())};
          auto rp = make_response_promise<scan_reply>();
          after_barrier([this, rp, r = std::move(r)](const status& st) mutable {
            if (!st) {
              rp.deliver(scan_reply{named(st), {}});
              return;
            }
            rp.deliver(scan_reply{status::ok(), mem_->scan(*cfg_.schema, r.page, cfg_.clock())});
          });
          return rp;
        },
        // Schema changes go through the log, so that every replica applies each write with
        // the schema the leader checked it against. Each node tells its own replica; the
        // one leading (now, or once elected) proposes the change.
        [this](adopt_schema_request& r) -> admin_reply {
          const auto newest = pending_schema_ ? pending_schema_->version : 0;
          if ((!cfg_.schema || r.schema.version > cfg_.schema->version) && r.schema.version > newest)
            pending_schema_ = std::move(r.schema);
          propose_pending();
          return {};
        },
        [this](drop_families_request& r) -> admin_reply {
          pending_drops_.insert(pending_drops_.end(), r.family_ids.begin(), r.family_ids.end());
          propose_pending();
          return {};
        },
        [this](reclaim_request&) -> reclaim_reply {
          if (!cfg_.schema) return {};
          mem_->restart_reclaim();
          return {mem_->reclaim(*cfg_.schema, cfg_.clock(), std::numeric_limits<std::size_t>::max())};
        },
        [this](stats_request&) -> stats_reply { return {mem_->stats()}; },
        // The Raft snapshot, not the store's, holds a replicated partition's cells.
        [this](cut_request&) -> cut_reply { return {}; },
        [this](merge_delta_request&) -> admin_reply { return {}; },
        [this](stop_request&) -> caf::result<admin_reply> {
          stopping_ = true;
          fail_loads(stopped_status());
          end_schema_waits(true);
          auto rp = make_response_promise<admin_reply>();
          group_->close([this, rp]() mutable {
            rp.deliver(admin_reply{});
            quit();
          });
          return rp;
        },
        [this](move_request& r) -> caf::result<move_reply> {
          if (r.what == move_request::copy) return copy_all();
          if (r.what == move_request::apply) return apply_through_log(std::move(r.cells));
          if (r.what == move_request::freeze || r.what == move_request::abort)
            return freeze_through_log(r.what == move_request::freeze, r.max_bytes);
          return move_reply{{code::unsupported, "a replicated partition moves by Raft membership change, not by copy"},
                            {},
                            {},
                            false};
        },
        [this](handoff_request&) -> admin_reply {
          return {{code::unsupported, "a replicated partition moves by Raft membership change, not by copy"}};
        },
        [this](tick_atom) {
          if (cfg_.schema) mem_->reclaim(*cfg_.schema, cfg_.clock(), cfg_.maintenance_slice);
          delayed_send(this, cfg_.maintenance_interval, tick_atom::value);
        },
        [](log_synced_atom) {},
        [this](replica_tick_atom, std::uint64_t generation) {
          group_->on_tick(generation);
          end_schema_waits(false);
          propose_pending();
          next_part();
        },
        [this](replica_flush_atom) { group_->on_flush(); },
        [this](replica_msg_atom, const std::string& bytes) { group_->on_receive(bytes); },
        [this](replica_status_atom) { return group_->report(); },
        [this](batch_flush_atom) { flush_batch(); },
        [this](replica_add_atom, std::uint64_t id, std::string& address) -> caf::result<admin_reply> {
          return change([&](auto done) { group_->add_member({id, std::move(address)}, std::move(done)); });
        },
        [this](replica_remove_atom, std::uint64_t id) -> caf::result<admin_reply> {
          return change([&](auto done) { group_->remove_member(id, std::move(done)); });
        },
        [this](replica_prefer_atom, std::uint64_t id) { group_->set_preferred_leader(id); },
    };
  }

  // --- state_machine: what a committed entry does, on every replica ----------------------

  std::string apply(std::uint64_t, std::string_view command) override {
    if (command.empty()) return {};
    const char kind = command[0];
    command.remove_prefix(1);
    if (kind == writes_entry) return apply_writes(command);
    if (kind == schema_entry) {
      table_schema schema;
      if (!deserialize(system(), command, schema)) return {};
      if (!cfg_.schema || schema.version > cfg_.schema->version)
        cfg_.schema = std::make_shared<const table_schema>(std::move(schema));
      if (pending_schema_ && pending_schema_->version <= cfg_.schema->version) pending_schema_.reset();
      end_schema_waits(false);
      return "ok";
    }
    if (kind == cells_entry) {
      delta_handle cells;
      if (!deserialize(system(), command, cells) || !cells.map) return {};
      mem_->apply_cells(*cells.map);
      return "ok";
    }
    if (kind == freeze_entry || kind == release_entry) {
      detail::reader in(command);
      std::uint64_t hold = 0;
      if (!in.u64(hold)) return {};
      if (kind == freeze_entry) {
        frozen_ = true;
        frozen_by_ = hold;
      } else if (hold == 0 || hold == frozen_by_) {
        frozen_ = false;  // a release of an earlier hold leaves a later freeze alone
        frozen_by_ = 0;
      }
      return "ok";
    }
    if (kind == part_entry) return apply_part(command);
    if (kind == load_entry) return apply_load(command);
    if (kind == abort_entry) {
      detail::reader in(command);
      std::uint64_t id = 0;
      if (!in.u64(id)) return {};
      if (stage_ && stage_->id == id) stage_.reset();
      return "ok";
    }
    if (kind == drop_entry) {
      std::vector<std::uint32_t> ids;
      if (!deserialize(system(), command, ids)) return {};
      for (auto id : ids) {
        mem_->drop_family(id);
        std::erase(pending_drops_, id);
      }
      return "ok";
    }
    return {};  // an entry of a kind this build does not know: refused alike everywhere
  }

  // A writes entry: the leader's clock, then the batches proposed together, each run as one
  // unit in order; the answer is their replies in the same order.
  std::string apply_writes(std::string_view command) {
    detail::reader in(command);
    std::int64_t now = 0;
    std::vector<batch_request> batches;
    std::vector<batch_reply> out;
    if (!in.i64(now) || !deserialize(system(), in.rest(), batches)) {
      // Every replica refuses the same bytes the same way, so they stay equal; the leader
      // answers each waiting write with the error (the replies do not match its batches).
      return {};
    }
    out.resize(batches.size());
    for (std::size_t b = 0; b < batches.size(); ++b) {
      if (frozen_)
        out[b] = failed(batches[b].ops.size(), frozen_status());  // proposed before the freeze, ordered after it
      else if (!cfg_.schema)
        out[b] = failed(batches[b].ops.size(),
                        {code::unavailable, "partition " + std::to_string(cfg_.index) + " has no schema yet"});
      else
        run_actions(*mem_, *cfg_.schema, batches[b].ops, out[b].results, now);
    }
    // Only the leader answers a client; a follower's result is not wanted.
    return group_ && group_->is_leader() ? serialize(system(), out) : std::string();
  }

  // A part of a load: staged, if it is the next part of the load staged here (part 0
  // starts a load, dropping what an earlier one left staged).
  std::string apply_part(std::string_view command) {
    detail::reader in(command);
    std::uint64_t id = 0, part = 0;
    delta_handle cells;
    if (!in.u64(id) || !in.u64(part) || !deserialize(system(), in.rest(), cells) || !cells.map) return {};
    if (part == 0) stage_ = staged_load{id, {}};
    if (!stage_ || stage_->id != id || stage_->parts.size() != part) return {};
    stage_->parts.push_back(std::move(cells));
    return "ok";
  }

  // The end of a load: every staged part written in this one step, so a reader sees all
  // of the load or none; refused (nothing written) unless each of its parts was staged.
  std::string apply_load(std::string_view command) {
    detail::reader in(command);
    std::uint64_t id = 0, parts = 0;
    if (!in.u64(id) || !in.u64(parts)) return {};
    if (!stage_ || stage_->id != id) return {};
    auto staged = std::move(*stage_);
    stage_.reset();
    if (staged.parts.size() != parts) return {};
    for (const auto& p : staged.parts) mem_->apply_cells(*p.map);
    return "ok";
  }

  // A snapshot: whether the replica had adopted a schema, the schema, the cells, then the
  // parts of a load staged but not yet written, in one serialisation. The cells are
  // written straight from the memtable, in the bytes a delta_handle of them serialises to
  // (restore reads them as one), so each cell is copied once.
  std::vector<char> snapshot() override {
    bool has_schema = cfg_.schema != nullptr;
    table_schema schema = has_schema ? *cfg_.schema : table_schema{};
    bool has_stage = stage_.has_value();
    std::uint64_t stage_id = has_stage ? stage_->id : 0;
    std::vector<delta_handle> no_parts;
    auto& parts = has_stage ? stage_->parts : no_parts;
    bool frozen = frozen_;
    std::uint64_t frozen_by = frozen_by_;
    std::vector<char> buf;
    const auto st = mem_->stats();
    buf.reserve(st.bytes + st.cells * 32 + 4096);
    caf::binary_serializer sink(system(), buf);
    if (sink(has_schema, schema) || write_cells(system(), sink, buf, *mem_)) return {};
    if (sink(has_stage, stage_id, parts, frozen, frozen_by)) return {};
    return buf;
  }

  status restore(std::string_view bytes) override {
    bool has_schema = false;
    table_schema schema;
    delta_handle cells;
    bool has_stage = false;
    std::uint64_t stage_id = 0;
    std::vector<delta_handle> parts;
    const status damaged{code::corruption,
                         "the Raft snapshot of partition " + std::to_string(cfg_.index) + " is damaged"};
    caf::binary_deserializer source(system(), bytes.data(), bytes.size());
    if (source(has_schema, schema, cells)) return damaged;
    // A snapshot of a build without staged loads ends after the cells.
    if (source.remaining() > 0 && source(has_stage, stage_id, parts)) return damaged;
    // One of a build without freezes ends after the staged parts.
    bool frozen = false;
    std::uint64_t frozen_by = 0;
    if (source.remaining() > 0 && source(frozen, frozen_by)) return damaged;
    if (has_schema && (!cfg_.schema || schema.version > cfg_.schema->version))
      cfg_.schema = std::make_shared<const table_schema>(std::move(schema));
    auto fresh = std::make_unique<memtable>(cfg_.memory);
    fresh->apply_cells(*cells.map);
    mem_ = std::move(fresh);
    stage_.reset();
    if (has_stage) stage_ = staged_load{stage_id, std::move(parts)};
    frozen_ = frozen;
    frozen_by_ = frozen_by;
    end_schema_waits(false);
    return status::ok();
  }

 private:
  static status stopped_status() { return {code::unavailable, "the partition is stopping"}; }
  status frozen_status() const {
    return named({code::reshaping, "frozen by a split or merge of its table: send the write again"});
  }

  // A membership change: `start` hands the group a callback that answers the request.
  template <class Start>
  caf::result<admin_reply> change(Start start) {
    if (stopping_) return admin_reply{stopped_status()};
    auto rp = make_response_promise<admin_reply>();
    start([this, rp](const status& st) mutable { rp.deliver(admin_reply{st ? st : named(st)}); });
    return rp;
  }

  // `st` with the partition it is about: a client of several partitions learns which one
  // has no leader.
  status named(const status& st) const {
    const std::string table = cfg_.schema ? cfg_.schema->name : std::string();
    return {st.code(), "partition " + std::to_string(cfg_.index) + " of '" + table + "': " + st.message()};
  }

  std::optional<status> stale(std::uint64_t version) const {
    if (cfg_.schema && version <= cfg_.schema->version) return std::nullopt;
    return status{code::unavailable, "partition " + std::to_string(cfg_.index) +
                                         " has not yet adopted schema version " + std::to_string(version)};
  }

  // A request routed with a schema version this replica has not applied yet. Its node has
  // applied it (a node routes with the versions it knows), so the schema entry is on its
  // way through the group's log: the request waits for it, up to schema_wait, and then is
  // handled as it came (sent to this actor again), or answers UNAVAILABLE (`refuse`).
  template <class Reply, class Request, class Refuse>
  caf::result<Reply> wait_for_schema(Request r, Refuse refuse) {
    auto rp = make_response_promise<Reply>();
    const auto version = r.schema_version;
    schema_waits_.push_back({version, std::chrono::steady_clock::now() + schema_wait,
                             [this, rp, r = std::move(r), refuse](const std::optional<status>& why) mutable {
                               if (why)
                                 rp.deliver(refuse(*why));
                               else
                                 rp.delegate(caf::actor_cast<detail::partition_actor>(this), std::move(r));
                             }});
    return rp;
  }

  // Resumes the waits the schema now allows; with `all`, or once past its deadline, a wait
  // ends refused (stopping: the partition's stop status).
  void end_schema_waits(bool all) {
    if (schema_waits_.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    std::vector<schema_waiter> waits;
    waits.swap(schema_waits_);
    for (auto& w : waits) {
      if (!stale(w.version) && !stopping_)
        w.resume(std::nullopt);
      else if (all || stopping_)
        w.resume(stopped_status());
      else if (now >= w.deadline)
        w.resume(stale(w.version));
      else
        schema_waits_.push_back(std::move(w));
    }
  }

  // Reads at once under the leader's lease, else after a read barrier.
  caf::result<batch_reply> read(batch_request r) {
    if (group_->lease_valid()) return read_now(r);
    auto rp = make_response_promise<batch_reply>();
    after_barrier([this, rp, r = std::move(r)](const status& st) mutable {
      rp.deliver(st ? read_now(r) : failed(r.ops.size(), named(st)));
    });
    return rp;
  }

  batch_reply read_now(const batch_request& r) {
    batch_reply out;
    out.results.resize(r.ops.size());
    const auto now = cfg_.clock();
    for (std::size_t k = 0; k < r.ops.size(); ++k) {
      const auto& g = std::get<get>(r.ops[k]);
      out.results[k].row = mem_->read_row(*cfg_.schema, g.row, g.options, g.exists_only_, now);
    }
    return out;
  }

  struct queued_write {
    batch_request req;
    caf::typed_response_promise<batch_reply> rp;
  };

  caf::result<batch_reply> write(batch_request r) {
    if (!group_->is_leader()) return failed(r.ops.size(), named(group_->not_leader()));
    if (frozen_) return failed(r.ops.size(), frozen_status());
    auto rp = make_response_promise<batch_reply>();
    writes_.push_back({std::move(r), rp});
    queued();
    return rp;
  }

  static move_reply move_failed(status st) { return {std::move(st), {}, {}, false}; }

  // Every cell, as of an instant after every write acknowledged before the request: a read
  // barrier first, then one copy between two applied entries (a snapshot's cut).
  caf::result<move_reply> copy_all() {
    if (stopping_) return move_failed(stopped_status());
    if (!group_->is_leader()) return move_failed(named(group_->not_leader()));
    auto rp = make_response_promise<move_reply>();
    after_barrier([this, rp](const status& st) mutable {
      move_reply out;
      if (!st) {
        out.st = named(st);
      } else {
        std::string last;
        mem_->copy_cells({}, std::numeric_limits<std::size_t>::max(), *out.cells.map, last);
        out.done = true;
      }
      rp.deliver(std::move(out));
    });
    return rp;
  }

  // A freeze (or its release) as a log entry, answered once applied here. A freeze answers
  // every cell as of the entry: its callback runs right after the entry is applied, before
  // the next one, so the copy holds each write ordered before the freeze and none after.
  // `hold` names the freeze; a release names the hold it ends (0: any), so that a late
  // release of a split that gave up never thaws the freeze of the next one.
  caf::result<move_reply> freeze_through_log(bool freeze, std::uint64_t hold) {
    if (stopping_) return move_failed(stopped_status());
    if (!group_->is_leader()) return move_failed(named(group_->not_leader()));
    auto rp = make_response_promise<move_reply>();
    std::string entry(1, freeze ? freeze_entry : release_entry);
    put_u64(entry, hold);
    group_->propose(std::move(entry), [this, rp, freeze](const status& st, std::string reply) mutable {
      move_reply out;
      if (!st) {
        out.st = named(st);
      } else if (reply.empty()) {
        out.st = {code::corruption,
                  "a replicated entry of partition " + std::to_string(cfg_.index) + " could not be decoded"};
      } else if (freeze) {
        std::string last;
        mem_->copy_cells({}, std::numeric_limits<std::size_t>::max(), *out.cells.map, last);
        out.done = true;
      }
      rp.deliver(std::move(out));
    });
    return rp;
  }

  // Writes `cells` on every replica, answered once they are committed and applied: in one
  // log entry if they fit in one, else as a staged load (next_part).
  caf::result<move_reply> apply_through_log(delta_handle cells) {
    if (stopping_) return move_failed(stopped_status());
    if (!group_->is_leader()) return move_failed(named(group_->not_leader()));
    if (!cells.map) return move_reply{};
    auto pieces = pieces_of(*cells.map, std::max<std::size_t>(1, rc_.load_entry_bytes));
    if (pieces.size() > 1) {
      auto rp = make_response_promise<move_reply>();
      std::uint64_t id = 0;
      while (id == 0) id = load_ids_();
      loads_.push_back({id, std::move(pieces), 0, false, rp});
      next_part();
      return rp;
    }
    auto rp = make_response_promise<move_reply>();
    group_->propose(std::string(1, cells_entry) + serialize(system(), cells), [this, rp](const status& st,
                                                                                         std::string reply) mutable {
      if (!st)
        rp.deliver(move_failed(named(st)));
      else if (reply.empty())
        rp.deliver(move_failed({code::corruption, "a replicated entry of partition " + std::to_string(cfg_.index) +
                                                      " could not be decoded"}));
      else
        rp.deliver(move_reply{});
    });
    return rp;
  }

  // Proposes the next entry of the load at the front of loads_ (a part, or once every part
  // is committed the load entry), one at a time; answers the load once its load entry is
  // applied, or with the first failure. A load that fails leaves its parts staged until the
  // next load or the abort propose_pending sends.
  void next_part() {
    if (loads_.empty() || loads_.front().in_flight) return;
    if (stopping_ || !group_->is_leader())
      return fail_loads(stopping_ ? stopped_status() : named(group_->not_leader()));
    auto& l = loads_.front();
    if (rc_.load_may_continue && !rc_.load_may_continue(l.committed)) return;  // asked again at the next tick
    std::string entry;
    if (l.committed < l.parts.size()) {
      entry.push_back(part_entry);
      put_u64(entry, l.id);
      put_u64(entry, l.committed);
      entry += serialize(system(), l.parts[l.committed]);
    } else {
      entry.push_back(load_entry);
      put_u64(entry, l.id);
      put_u64(entry, l.parts.size());
    }
    l.in_flight = true;
    group_->propose(std::move(entry), [this, id = l.id](const status& st, std::string reply) {
      if (loads_.empty() || loads_.front().id != id) return;  // failed meanwhile (fail_loads)
      auto& l = loads_.front();
      l.in_flight = false;
      status failure = status::ok();
      if (!st)
        failure = named(st);
      else if (reply.empty())
        failure = {code::unavailable, "partition " + std::to_string(cfg_.index) +
                                          ": a load's parts were not staged whole on its replicas; load again"};
      const bool done = !failure.is_ok() || l.committed == l.parts.size();
      if (!done) {
        l.parts[l.committed++].map.reset();  // in the log now
      } else {
        auto rp = l.rp;
        loads_.pop_front();
        rp.deliver(failure.is_ok() ? move_reply{} : move_failed(failure));
      }
      next_part();
    });
  }

  void fail_loads(const status& why) {
    auto failing = std::exchange(loads_, {});
    for (auto& l : failing) l.rp.deliver(move_failed(why));
  }

  // Runs `served` once a read barrier shared with the reads queued beside it completes.
  void after_barrier(std::function<void(const status&)> served) {
    reads_.push_back(std::move(served));
    queued();
  }

  // Writes and reads wait for the flush message this actor sends itself, which comes after
  // every message already in its mailbox: the writes then go as one entry and the reads
  // share one barrier, so concurrent requests cost one round of Raft messages, not one each.
  void queued() {
    if (writes_.size() + reads_.size() >= max_queued) return flush_batch();
    if (!flush_posted_) {
      flush_posted_ = true;
      send(this, batch_flush_atom::value);
    }
  }

  void flush_batch() {
    flush_posted_ = false;
    // While a writes entry is in flight, new writes wait for it and go together in the next.
    if (writes_in_flight_ > 0 && writes_.size() < max_queued && reads_.empty()) return;
    auto reads = std::exchange(reads_, {});
    if (!writes_.empty())
      // The writes' entry is the reads' barrier: once it is committed in this leader's term
      // and applied, a read sees every write acknowledged before it was asked, and the
      // writes queued beside it; one Raft round for both.
      return propose_writes(std::exchange(writes_, {}), std::move(reads));
    if (!reads.empty())
      group_->barrier([reads = std::move(reads)](const status& st) {
        for (const auto& served : reads) served(st);
      });
  }

  using queued_reads = std::vector<std::function<void(const status&)>>;
  void propose_writes(std::vector<queued_write> ws, queued_reads reads) {
    std::vector<batch_request> batches;
    batches.reserve(ws.size());
    for (auto& w : ws) batches.push_back(std::move(w.req));
    std::string entry(1, writes_entry);
    put_u64(entry, static_cast<std::uint64_t>(cfg_.clock()));
    entry += serialize(system(), batches);
    std::vector<std::pair<std::size_t, caf::typed_response_promise<batch_reply>>> waiting;
    waiting.reserve(ws.size());
    ++writes_in_flight_;
    for (std::size_t i = 0; i < ws.size(); ++i) waiting.emplace_back(batches[i].ops.size(), ws[i].rp);
    group_->propose(std::move(entry), [this, waiting = std::move(waiting),
                                       reads = std::move(reads)](const status& st, std::string reply) mutable {
      std::vector<batch_reply> out;
      const bool whole = st && deserialize(system(), reply, out) && out.size() == waiting.size();
      for (std::size_t i = 0; i < waiting.size(); ++i) {
        auto& [n, rp] = waiting[i];
        if (!st)
          rp.deliver(failed(n, named(st)));
        else if (reply.empty())  // apply() could not decode the entry, on every replica alike
          rp.deliver(failed(n, {code::corruption, "a replicated entry of partition " + std::to_string(cfg_.index) +
                                                      " could not be decoded"}));
        else if (!whole || out[i].results.size() != n)
          rp.deliver(
              failed(n, {code::internal, "partition " + std::to_string(cfg_.index) + " lost the reply of a write"}));
        else
          rp.deliver(std::move(out[i]));
      }
      // A read was not served, whatever became of the entry: it may be asked again.
      const status read_st = st || st.code() == code::not_leader
                                 ? status(st)
                                 : status{code::unavailable, "partition " + std::to_string(cfg_.index) +
                                                                 ": leadership was lost before the read was served"};
      for (const auto& served : reads) served(read_st);
      if (--writes_in_flight_ == 0 && !writes_.empty()) flush_batch();
    });
  }

  // On the leader, proposes the schema change and the family drops this replica was told
  // of and the log has not applied yet, one of each in flight at a time; a follower keeps
  // them until it leads (a leader that dies before they commit leaves them to the next).
  void propose_pending() {
    if (stopping_ || !group_ || !group_->is_leader()) return;
    // Parts a leader left staged (it failed or died mid-load) are not of this leader's
    // running load: dropped, so every replica frees them.
    if (stage_ && (loads_.empty() || loads_.front().id != stage_->id) && !abort_in_flight_) {
      abort_in_flight_ = true;
      std::string entry(1, abort_entry);
      put_u64(entry, stage_->id);
      group_->propose(std::move(entry), [this](const status&, std::string) { abort_in_flight_ = false; });
    }
    if (pending_schema_ && cfg_.schema && pending_schema_->version <= cfg_.schema->version) pending_schema_.reset();
    if (pending_schema_ && !schema_in_flight_) {
      schema_in_flight_ = true;
      group_->propose(std::string(1, schema_entry) + serialize(system(), *pending_schema_),
                      [this](const status&, std::string) { schema_in_flight_ = false; });
    }
    if (!pending_drops_.empty() && !drops_in_flight_) {
      drops_in_flight_ = true;
      group_->propose(std::string(1, drop_entry) + serialize(system(), pending_drops_),
                      [this](const status&, std::string) { drops_in_flight_ = false; });
    }
  }

  // A flush comes at the latest after this many queued requests, bounding an entry's size.
  static constexpr std::size_t max_queued = 256;

  // The parts of a load staged so far, on every replica alike (applied from the log).
  struct staged_load {
    std::uint64_t id = 0;
    std::vector<delta_handle> parts;
  };
  std::optional<staged_load> stage_;
  // On the leader: the loads asked of it, the front one being proposed.
  struct running_load {
    std::uint64_t id = 0;
    std::vector<delta_handle> parts;
    std::size_t committed = 0;  // parts committed
    bool in_flight = false;
    caf::typed_response_promise<move_reply> rp;
  };
  std::deque<running_load> loads_;
  bool abort_in_flight_ = false;
  // Load ids: random, so that a load of another leader (or of this one before a restart)
  // never has the id of this one's.
  std::mt19937_64 load_ids_{std::random_device{}()};

  std::vector<queued_write> writes_;
  int writes_in_flight_ = 0;  // writes entries proposed and not yet answered
  queued_reads reads_;
  std::optional<table_schema> pending_schema_;  // told of, not yet applied from the log
  std::vector<std::uint32_t> pending_drops_;
  bool schema_in_flight_ = false;
  bool drops_in_flight_ = false;
  bool flush_posted_ = false;

  partition_config cfg_;
  replication_config rc_;
  std::unique_ptr<memtable> mem_;
  caf_loop<replicated_owner> loop_;
  std::unique_ptr<replica_group> group_;
  bool stopping_ = false;
  // Requests waiting for a newer schema (wait_for_schema), in arrival order.
  struct schema_waiter {
    std::uint64_t version = 0;
    std::chrono::steady_clock::time_point deadline;
    std::function<void(const std::optional<status>&)> resume;
  };
  static constexpr std::chrono::seconds schema_wait{5};
  std::vector<schema_waiter> schema_waits_;
  // Between a freeze entry and a release entry: writes are refused (a split or merge copies
  // the cells), on every replica alike, and in its Raft snapshot.
  bool frozen_ = false;
  std::uint64_t frozen_by_ = 0;  // the hold the freeze names
};

}  // namespace

replicated_partition_actor spawn_replicated_partition(caf::actor_system& sys, partition_config cfg,
                                                      replication_config rc) {
  return sys.spawn<replicated_owner>(std::move(cfg), std::move(rc));
}

}  // namespace cellar::replica
