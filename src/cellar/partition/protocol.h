// partition/protocol.h: the partition protocol, the only way to reach a partition.
//
// A partition (partition/partition.h) is a CAF actor of type `partition_actor`: it takes the
// requests below, one at a time, and answers each with its reply type. Every request and
// reply is a plain value with a CAF `inspect` overload (partition/inspect.h), so the same
// messages reach a partition in this process or, through CAF's middleman, on another node.
// Errors travel as values inside the replies (a `status` per action, per page, per admin
// call), never as CAF errors; a request that never reaches a partition able to run it (the
// partition stopped, or its node is gone) is answered UNAVAILABLE by the sender's side
// (partition/ask.h).
//
//   batch_request         -> batch_reply          the actions of one batch that fall in
//                                                 this partition, run in order as one unit
//   scan_request          -> scan_reply           one page of a scan
//   adopt_schema_request  -> admin_reply          a newer schema of the table group
//   drop_families_request -> admin_reply          forget the cells of dropped families
//   reclaim_request       -> reclaim_reply        reclaim expired cells and extra versions now
//   stats_request         -> stats_reply          cells and bytes held
//   cut_request           -> cut_reply            the changes since the last cut (a snapshot) and
//                                                 the cells held then
//   merge_delta_request   -> admin_reply          changes a failed snapshot hands back
//   stop_request          -> admin_reply          answer, then stop; later requests get
//                                                 UNAVAILABLE
//   move_request          -> move_reply           one step of a move (cluster/mover.h)
//   handoff_request       -> admin_reply          after a move: pass every later request on
//
// Each partition also reacts to two messages it sends itself: `tick_atom` (a background
// slice of reclamation) and `log_synced_atom` (its log records are on disk: deliver the
// replies that waited for that, in log-sync mode).
//
// A partition of this process may also run a batch or a scan page in place, on the
// caller's thread, when it is free at that instant (local_partition in partition.h); the
// reply is the same value the actor would send. docs/concurrency.md states the rules.
#pragma once

#include <caf/all.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "catalog/catalog.h"
#include "cellar/ops.h"
#include "partition/inspect.h"
#include "partition/memtable.h"
#include "persist/delta_map.h"
#include "persist/loaded_cells.h"

namespace cellar::detail {

// --- data ----------------------------------------------------------------------------------

struct batch_request {
  // The schema version the sender checked the actions against. A partition that has not
  // yet adopted it answers UNAVAILABLE (a sender that routes with a newer catalog than the
  // partition has seen; in one process the adopt_schema_request always arrives first).
  std::uint64_t schema_version = 0;
  std::vector<batch_op> ops;  // in batch order
};

struct batch_reply {
  std::vector<op_result> results;  // one per action of the request, in order
};

struct scan_request {
  std::uint64_t schema_version = 0;
  scan_page_request page;
};

struct scan_reply {
  status st;
  scan_page page;
};

// --- admin ---------------------------------------------------------------------------------

struct adopt_schema_request {
  table_schema schema;  // taken only if newer than the partition's
};

struct drop_families_request {
  std::vector<std::uint32_t> family_ids;
};

struct reclaim_request {};

struct reclaim_reply {
  std::uint64_t cells = 0;  // cells erased
};

struct stats_request {};

struct stats_reply {
  memtable_stats stats;
};

struct cut_request {};

// A delta travels by pointer inside one process (a cut of a large partition is never
// copied); serialized, it is its entries. A snapshot cut after bulk loads also carries the
// loads (memtable::take_loaded): `map` then holds the changes after the last of them.
struct delta_handle {
  std::shared_ptr<delta_map> map = std::make_shared<delta_map>();
  std::vector<loaded_layer> loaded;
};

// A bulk load's cells for one partition travel by pointer inside one process; serialized,
// they are their records and family ids.
struct loaded_cells_handle {
  std::shared_ptr<const loaded_cells> cells;
};

struct cut_reply {
  delta_handle delta;
  std::uint64_t cells = 0;  // the partition's cells at the cut
};

struct merge_delta_request {
  delta_handle delta;
};

struct stop_request {};

struct admin_reply {
  status st;
};

// One step of moving a partition to another node (cluster/mover.h, docs/cluster.md §7).
// On the partition that moves (the source):
//   track   starts recording every change in a move delta (a second delta: snapshots
//           keep their own)
//   chunk   copies the cells after `after`, in key order, about `max_bytes` of them
//   cut     takes the move delta (the changes since track or the previous cut)
//   freeze  as cut, and from here on runs no write: writes (and what comes after them)
//           are held, in order, until `abort` or a handoff_request
//   abort   stops recording, unfreezes and runs what was held, in order
// On the copy being built (the target, not yet serving):
//   apply   applies `cells` (a chunk or a cut) over what it holds
// On a partition taking a bulk load, a restore or a clone (store/named_snapshots.cc):
//   load    writes every cell of `loaded` over what it holds, in this one message
// On a replicated partition (replica/replicated_partition.h), for a named snapshot in a
// cluster (cluster/snapshot_service.h), answered by the leader only (NOT_LEADER otherwise):
//   copy    every cell, at one instant after a read barrier (`cells`)
//   apply   writes `cells` through the Raft log: every replica applies them
struct move_request {
  // records: as chunk, the cells as cell file records (move_reply::records), for a named
  // snapshot, which writes them to its files as they are.
  enum step : std::uint8_t {
    track = 0,
    chunk = 1,
    cut = 2,
    freeze = 3,
    abort = 4,
    apply = 5,
    load = 6,
    copy = 7,
    records = 8
  };
  std::uint8_t what = track;
  std::string after;
  std::uint64_t max_bytes = 0;
  delta_handle cells;
  loaded_cells_handle loaded;
};

struct move_reply {
  status st;
  delta_handle cells;   // chunk, cut, freeze
  std::string last;     // chunk: the last key copied (empty: none)
  bool done = false;    // chunk: nothing after `last`
  std::string records;  // records: the cells copied, as cell file records
};

// The partition moved to another node: requests held by a freeze, and every later
// request, go on to `to` (the forwarder to the new owner), in order. The in-place path
// declines from here on.
struct handoff_request {
  caf::actor to;
};

using tick_atom = caf::atom_constant<caf::atom("tick")>;
using log_synced_atom = caf::atom_constant<caf::atom("logsynced")>;

using partition_actor = caf::typed_actor<
    caf::replies_to<batch_request>::with<batch_reply>, caf::replies_to<scan_request>::with<scan_reply>,
    caf::replies_to<adopt_schema_request>::with<admin_reply>, caf::replies_to<drop_families_request>::with<admin_reply>,
    caf::replies_to<reclaim_request>::with<reclaim_reply>, caf::replies_to<stats_request>::with<stats_reply>,
    caf::replies_to<cut_request>::with<cut_reply>, caf::replies_to<merge_delta_request>::with<admin_reply>,
    caf::replies_to<stop_request>::with<admin_reply>, caf::replies_to<move_request>::with<move_reply>,
    caf::replies_to<handoff_request>::with<admin_reply>, caf::reacts_to<tick_atom>, caf::reacts_to<log_synced_atom>>;

// Registers every request and reply type with `cfg` under a stable name, as CAF's
// middleman needs to send them to another node.
void add_partition_protocol(caf::actor_system_config& cfg);

// --- inspect -------------------------------------------------------------------------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, family_schema& x) {
  return f(caf::meta::type_name("family_schema"), x.desc, x.id);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, table_schema& x) {
  return f(caf::meta::type_name("table_schema"), x.name, x.uid, x.version, x.partitioned, x.partitioning, x.families);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scan_page_request& x) {
  return f(caf::meta::type_name("scan_page_request"), wire_detail::opt(x.from), x.from_inclusive, x.stop,
           x.stop_inclusive, x.reversed, x.max_rows, x.options, x.filter_state);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scan_page& x) {
  return f(caf::meta::type_name("scan_page"), x.rows, x.exhausted, x.last_row, x.examined_any, x.filter_done,
           x.filter_state);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, memtable_stats& x) {
  return f(caf::meta::type_name("memtable_stats"), x.cells, x.bytes);
}

// A delta's entries, in key order: key, present, fresh, expires_at, value. Loaded layers
// travel as the entries they make with the delta (materialize).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, delta_handle& x) {
  if constexpr (Inspector::reads_state) {
    delta_map merged;
    const delta_map* m = x.map.get();
    if (!x.loaded.empty()) {
      const delta_map none;
      merged = materialize(x.loaded, m ? *m : none);
      m = &merged;
    }
    std::uint64_t n = m ? m->size() : 0;
    if constexpr (std::is_same_v<typename Inspector::result_type, void>) {
      f(caf::meta::type_name("delta"), n);
    } else {
      if (auto err = f(caf::meta::type_name("delta"), n)) return err;
      if (m)
        for (auto it = m->begin(); it != m->end(); ++it) {
          std::string key(it->first.bytes);
          bool present = it->second.present;
          bool fresh = it->second.fresh;
          std::int64_t expires = it->second.expires_at;
          std::string value(it->second.value());
          if (auto err = f(key, present, fresh, expires, value)) return err;
        }
      return caf::none;
    }
  } else {
    std::uint64_t n = 0;
    if (auto err = f(caf::meta::type_name("delta"), n)) return err;
    x.map = std::make_shared<delta_map>();
    x.loaded.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      std::string key;
      bool present = false;
      bool fresh = false;
      std::int64_t expires = 0;
      std::string value;
      if (auto err = f(key, present, fresh, expires, value)) return err;
      if (present)
        x.map->put(key, expires, value, fresh);
      else
        x.map->erase(key);
    }
    return caf::none;
  }
}

// Loaded cells: their records, the family id pairs and the cell count.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, loaded_cells_handle& x) {
  if constexpr (Inspector::reads_state) {
    std::string records(x.cells ? x.cells->records() : std::string_view{});
    auto ids = x.cells ? x.cells->ids() : loaded_cells::id_map{};
    std::uint64_t n = x.cells ? x.cells->cells() : 0;
    return f(caf::meta::type_name("loaded_cells"), records, ids, n);
  } else {
    std::string records;
    loaded_cells::id_map ids;
    std::uint64_t n = 0;
    if (auto err = f(caf::meta::type_name("loaded_cells"), records, ids, n)) return err;
    x.cells = std::make_shared<const loaded_cells>(std::move(records), std::move(ids), n);
    return caf::none;
  }
}

#define CELLAR_INSPECT_FIELDS(type, ...)                                            \
  template <class Inspector>                                                        \
  typename Inspector::result_type inspect(Inspector& f, [[maybe_unused]] type& x) { \
    return f(caf::meta::type_name(#type) __VA_OPT__(, ) __VA_ARGS__);               \
  }

CELLAR_INSPECT_FIELDS(batch_request, x.schema_version, x.ops)
CELLAR_INSPECT_FIELDS(batch_reply, x.results)
CELLAR_INSPECT_FIELDS(scan_request, x.schema_version, x.page)
CELLAR_INSPECT_FIELDS(scan_reply, x.st, x.page)
CELLAR_INSPECT_FIELDS(adopt_schema_request, x.schema)
CELLAR_INSPECT_FIELDS(drop_families_request, x.family_ids)
CELLAR_INSPECT_FIELDS(reclaim_request)
CELLAR_INSPECT_FIELDS(reclaim_reply, x.cells)
CELLAR_INSPECT_FIELDS(stats_request)
CELLAR_INSPECT_FIELDS(stats_reply, x.stats)
CELLAR_INSPECT_FIELDS(cut_request)
CELLAR_INSPECT_FIELDS(cut_reply, x.delta, x.cells)
CELLAR_INSPECT_FIELDS(merge_delta_request, x.delta)
CELLAR_INSPECT_FIELDS(stop_request)
CELLAR_INSPECT_FIELDS(admin_reply, x.st)
CELLAR_INSPECT_FIELDS(move_request, x.what, x.after, x.max_bytes, x.cells, x.loaded)
CELLAR_INSPECT_FIELDS(move_reply, x.st, x.cells, x.last, x.done, x.records)
CELLAR_INSPECT_FIELDS(handoff_request, x.to)

#undef CELLAR_INSPECT_FIELDS

}  // namespace cellar::detail
