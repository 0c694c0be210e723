// partition/memtable.h: the cells of one partition, and the HBase semantics over them.
//
// A memtable holds, for each column family of its table group, one ordered map from
// (row, qualifier, timestamp descending) to value: the OBKV layout of `group$family`
// (primary key K, Q, T). Reads apply the rules of docs/semantics.md: time-to-live, the
// family's MaxVersions, time ranges, requested versions, per-family limit and offset.
// Writes can be grouped into a unit (`begin` .. `commit`/`rollback`): every change inside
// a unit is recorded so that a failure undoes the whole unit.
//
// Thread safety: none of its own. A memtable belongs to one partition (partition.h), and is
// touched only by whoever holds that partition: its actor, or a caller running a request in
// place under the partition's lock (only the const reads run under a lock shared with other
// readers). That is what makes a unit atomic.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <absl/functional/function_ref.h>

#include "catalog/catalog.h"
#include "cellar/ops.h"
#include "partition/cell_map.h"
#include "partition/key_bytes.h"
#include "partition/memory_budget.h"
#include "persist/delta_map.h"
#include "persist/loaded_cells.h"

namespace cellar::detail {

// The cells of one family: grouped by row, a hash index over the rows (cell_map.h).
using family_map = cell_map;

// One page of a scan, as a partition serves it.
struct scan_page_request {
  std::optional<std::string> from;  // first row to consider; nullopt: the scan's start
  bool from_inclusive = true;
  std::string stop;  // empty: unbounded
  bool stop_inclusive = false;
  bool reversed = false;
  std::size_t max_rows = 256;
  read_options options;
  // With a filter: the `filter_state` of this cursor's previous page (empty for the first),
  // so that state spanning rows (PageFilter's count, ...) carries across pages.
  std::string filter_state;
};

struct scan_page {
  std::vector<row_result> rows;
  bool exhausted = false;
  std::string last_row;  // continue after this row (exclusive) when not exhausted
  bool examined_any = false;
  // The filter ended the scan here (filterAllRemaining: a WhileMatchFilter's inner filter
  // failed, a PageFilter is full, a PrefixFilter, InclusiveStopFilter, MultiRowRangeFilter
  // or FuzzyRowFilter can match no later row). `exhausted` is then set too, and no row after
  // `last_row` in scan direction (after the cursor's `from` when !examined_any; every row
  // when it had none) belongs to the scan, from any partition: the scanner ends the whole
  // scan there (it still takes the rows before it from the other partitions).
  bool filter_done = false;
  // Opaque: pass it back in the next page request of this cursor.
  std::string filter_state;
};

// A cell of a read, as views into the memtable: valid only while nothing writes to it
// (a partition's cells, under its read lock).
struct read_cell_view {
  const std::string* family;  // the family's name in the schema read with
  std::string_view qualifier;
  std::int64_t timestamp;
  std::string_view value;
};

struct memtable_stats {
  std::uint64_t cells = 0;
  std::uint64_t bytes = 0;
};

class memtable {
 public:
  // Charges its cells to an account in `pool` (null: no limit).
  explicit memtable(memory_pool* pool);
  ~memtable();
  memtable(const memtable&) = delete;
  memtable& operator=(const memtable&) = delete;

  // --- reads -----------------------------------------------------------------------
  // With `o.filter` (or `req.options.filter`), the filter is applied here, inside the
  // partition (memtable_filter.cc); only matching cells come out.
  row_result read_row(const table_schema& schema, std::string_view row, const read_options& o, bool exists_only,
                      std::int64_t now) const;
  scan_page scan(const table_schema& schema, const scan_page_request& req, std::int64_t now) const;
  // read_row's cells (o.filter must be unset; not exists_only) appended to `out` as views,
  // without copying them; returns whether any cell matched (row_result::exists).
  bool read_row_views(const table_schema& schema, std::string_view row, const read_options& o, std::int64_t now,
                      std::vector<read_cell_view>& out) const;

  // A hint for a point operation on `row` coming soon: starts step `step` of loading what
  // its lookup reads, in every family (cell_map::prefetch_row). Reads nothing back,
  // changes nothing; safe wherever a read is.
  void prefetch_row(std::string_view row, cell_map::prefetch_step step) const {
    for (const auto& f : families_) f.second.prefetch_row(row, step);
  }

  // --- writes (inside or outside a unit) --------------------------------------------
  void begin();
  void commit();
  void rollback();

  status apply(const table_schema& schema, const put& p, std::int64_t now);
  status apply(const table_schema& schema, const deletion& d, std::int64_t now);
  result<row_result> apply(const table_schema& schema, const increment& inc, std::int64_t now);
  result<row_result> apply(const table_schema& schema, const append& app, std::int64_t now);
  status apply(const table_schema& schema, const row_mutations& m, std::int64_t now);
  result<bool> apply(const table_schema& schema, const check_and_mutate& c, std::int64_t now);

  // --- upkeep ------------------------------------------------------------------------
  // Erases expired cells and versions beyond MaxVersions, examining at most `budget`
  // cells from where the previous call stopped; returns the number erased.
  std::size_t reclaim(const table_schema& schema, std::int64_t now, std::size_t budget);
  // The next reclaim starts over from the first family.
  void restart_reclaim();
  // Cells reclaim has examined so far (for tests: a settled memtable examines none).
  std::uint64_t reclaim_examined() const { return reclaim_examined_; }
  // Forgets a family's cells; later writes to that id are refused.
  void drop_family(std::uint32_t id);
  bool dropped(std::uint32_t id) const { return dropped_.count(id) != 0; }
  memtable_stats stats() const;
  // What its maps take, counted anew (tests: it walks every row); every change keeps
  // stats().bytes, the bytes charged to the pool, equal to it.
  std::int64_t bytes_recounted() const;

  // --- persistence --------------------------------------------------------------------
  // Which change records to keep: the snapshot delta, and/or the redo of the current
  // message (for the log).
  void track(bool delta, bool redo) {
    track_delta_ = delta;
    track_redo_ = redo;
  }
  // The changes since the last cut; starts a new delta. O(1): this is the snapshot cut.
  // With bulk loads since the last cut, the delta holds only the changes after the last
  // of them; take_loaded() has the loads and the changes before each.
  delta_map take_delta();
  std::vector<loaded_layer> take_loaded() { return std::move(loaded_); }
  std::size_t delta_size() const { return delta_.size(); }
  // Puts back the changes of a cut whose snapshot failed (its delta and its loaded
  // layers); newer changes win.
  void merge_delta(delta_map older, std::vector<loaded_layer> older_loaded = {});
  // Redo entries of the changes since the last clear, in order:
  //   u8 1 (put) | bytes key | i64 expires_at | bytes value,  or  u8 0 (erase) | bytes key
  const std::string& redo() const { return redo_; }
  void clear_redo() { redo_.clear(); }
  // Recovery: sets a cell from a snapshot (not tracked) or from the log (tracked in the
  // delta, so the next snapshot holds it).
  void load(std::uint32_t fid, cell_key key, cell_value v);
  // Recovery: a snapshot's change run erased the cell (not tracked).
  void unload(std::uint32_t fid, const cell_key& key);
  // Recovery: sets cells from a snapshot as load() does, faster for cells in key order (a
  // base's runs): a cell that sorts after the last cell of its family is appended without
  // a search (cell_map::append); any other goes through load(). The cells and their bytes
  // are charged to the memtable's account when the loader is flushed or destroyed, once
  // instead of once per cell (the account's pool is shared by the loading threads).
  class bulk_loader {
   public:
    explicit bulk_loader(memtable& m) : m_(m) {}
    ~bulk_loader() { flush(); }
    bulk_loader(const bulk_loader&) = delete;
    bulk_loader& operator=(const bulk_loader&) = delete;
    void load(std::uint32_t fid, const key_view& key, std::string_view value, std::int64_t expires_at);
    void flush();

   private:
    memtable& m_;
    std::uint32_t fid_ = 0;
    family_map* map_ = nullptr;  // family fid_'s
    std::int64_t charge_ = 0;    // not yet charged
    std::uint64_t cells_ = 0;    // appended, not yet counted
  };
  void replay(std::uint32_t fid, cell_key key, std::optional<cell_value> v);

  // --- moves (cluster/mover.h) --------------------------------------------------------
  // A second change record, independent of the snapshot's: from start_move_delta() on,
  // every change is also recorded there until stop_move_delta(). take_move_delta() is
  // O(1) and starts a new one.
  void start_move_delta() { move_delta_ = std::make_unique<delta_map>(); }
  void stop_move_delta() { move_delta_.reset(); }
  bool tracking_move() const { return move_delta_ != nullptr; }
  delta_map take_move_delta();
  // Copies the cells whose encoded key (persist/codec.h) comes after `after` (all of them
  // when empty), in key order, into `out` until about `max_bytes` of keys and values;
  // returns true when the copy reached the last cell. `last` is the last key copied
  // (unchanged when none was).
  bool copy_cells(const std::string& after, std::size_t max_bytes, delta_map& out, std::string& last) const;
  // As copy_cells, each cell appended to `out` as a cell file record (persist/loaded_cells.h:
  // append_cell_record) instead of put in a delta_map: one buffer, no node or heap block a cell.
  bool copy_records(const std::string& after, std::size_t max_bytes, std::string& out, std::string& last) const;
  // Calls `fn(key, expires_at, value)` for every cell, in the order of copy_cells, with its
  // encoded key: the cells copy_cells would copy, without building a delta_map of them.
  // The views last until `fn` returns; `fn` must not change this memtable.
  void visit_cells(
      absl::FunctionRef<void(std::string_view key, std::int64_t expires_at, std::string_view value)> fn) const;
  // Applies the cells of `cells` (a copy or a move delta of another partition), tracked
  // in the snapshot delta like replayed log records, not in the redo.
  void apply_cells(const delta_map& cells);
  // Writes every cell of `cells` (a bulk load, a restore or a clone; malformed records and
  // cells of families the file does not map or this partition dropped are skipped: the
  // store checked them before). While the snapshot delta is tracked, the cells are not
  // copied into it: the load becomes a loaded layer over the delta recorded so far, which
  // the next cut hands over (take_loaded) and the snapshot writes from `cells` itself.
  void load_cells(std::shared_ptr<const loaded_cells> cells);

 private:
  // copy_cells and copy_records: the cells after `after`, in key order, each given to `emit`
  // with its encoded key, until about `max_bytes`.
  bool copy_after(
      const std::string& after, std::size_t max_bytes, std::string& last,
      absl::FunctionRef<void(std::string_view key, std::int64_t expires_at, std::string_view value)> emit) const;
  template <class Out>
  void read_row_into(const table_schema& schema, std::string_view row, const read_options& o, bool exists_only,
                     std::int64_t now, Out& out) const;
  row_result read_row_filtered(const table_schema& schema, std::string_view row, const read_options& o,
                               bool exists_only, std::int64_t now) const;
  scan_page scan_filtered(const table_schema& schema, const scan_page_request& req, std::int64_t now) const;

  // `absent_before` (a put): the memtable did not hold the cell (delta_map::change::fresh).
  // `encoded`: the key already encoded (persist/codec.h), or empty to encode it here.
  void record(std::uint32_t fid, const key_view& key, const cell_value* v, bool absent_before = false,
              std::string_view encoded = {});
  struct undo_record {
    std::uint32_t family;
    cell_key key;
    std::optional<cell_value> old;  // nullopt: the key did not exist
  };

  family_map* find(std::uint32_t id);
  const family_map* find(std::uint32_t id) const;
  family_map& ensure(std::uint32_t id);

  // A put to a family that keeps one version (MaxVersions 1), of a column whose only cell
  // is older than `key`: the end state of write_cell plus trim_column (the new cell alone),
  // reached by giving the old cell the new timestamp and value in place, with the same
  // change records (the new cell put, the old one erased) and undo; a value of the old
  // one's size is copied into its heap block (short_bytes::take), and `v` is left without
  // its value. Returns false, having changed nothing, when those conditions do not hold.
  bool replace_sole_version(const family_schema& f, family_map& m, const key_view& key, cell_value& v,
                            std::int64_t now);
  // Writes the cell; returns where it is now. `hint`: finds a row written just before
  // without the index (cell_map::row_hint).
  family_map::iterator write_cell(std::uint32_t fid, family_map& m, const key_view& key, cell_value v,
                                  std::string_view encoded = {}, family_map::row_hint* hint = nullptr);
  family_map::iterator erase_cell(std::uint32_t fid, family_map& m, family_map::iterator it);
  // After a write to a column: removes the versions no read can return any more (beyond
  // the family's MaxVersions, or expired), as the background reclaim would later (R18).
  // From `at`: a cell of the column (or the column's place), e.g. just written.
  void trim_column(const family_schema& f, family_map& m, std::string_view row, std::string_view q,
                   family_map::iterator at, std::int64_t now);
  void account(std::int64_t delta);
  status reserve(std::int64_t bytes) const;

  // The newest visible cell of a column (honouring TTL), optionally within a range.
  // m.end() if there is none.
  family_map::iterator newest(const family_schema& f, const family_map& m, std::string_view row, std::string_view q,
                              std::int64_t now, const time_range* r) const;
  void delete_range(const family_schema& f, family_map& m, std::string_view row,
                    std::optional<std::string_view> qualifier, std::int64_t max_ts,
                    std::optional<std::int64_t> exact_ts);

  std::unordered_map<std::uint32_t, family_map> families_;
  std::unordered_set<std::uint32_t> dropped_;
  memory_account account_;
  std::uint64_t cells_ = 0;
  bool in_unit_ = false;
  std::vector<undo_record> undo_;
  std::size_t unit_redo_start_ = 0;
  bool track_delta_ = false;
  bool track_redo_ = false;
  delta_map delta_;
  std::vector<loaded_layer> loaded_;       // bulk loads since the last cut, oldest first
  std::unique_ptr<delta_map> move_delta_;  // null: no move is tracking this partition
  std::string redo_;
  std::string key_scratch_;  // record(), rollback(): a cell key encoded for the delta and the log
  // Where reclaim stopped: family id and key.
  std::uint32_t reclaim_family_ = 0;
  std::optional<cell_key> reclaim_from_;
  std::uint64_t reclaim_examined_ = 0;
  // Settled: a complete pass of reclaim (every family, first to last) found nothing to
  // erase, while no cell changed, under families without a TTL, and no cell it saw has a
  // cell TTL. Until a cell changes (changes_: every change goes through account()) or
  // the families' ids, MaxVersions or TTLs do, reclaim has nothing to do and returns at
  // once (a read-only store costs no background work).
  struct reclaim_rule {
    std::uint32_t family;
    std::uint32_t max_versions;
    std::uint32_t min_versions;
    std::int64_t ttl_seconds;
    friend bool operator==(const reclaim_rule&, const reclaim_rule&) = default;
  };
  static std::vector<reclaim_rule> reclaim_rules(const table_schema& schema);
  void end_reclaim_pass(const table_schema& schema);
  std::uint64_t changes_ = 0;
  bool pass_started_ = false;
  std::uint64_t pass_changes_ = 0;
  bool pass_saw_expiry_ = false;
  bool settled_ = false;
  std::uint64_t settled_changes_ = 0;
  std::vector<reclaim_rule> settled_rules_;
};

// The bytes a write of one cell is checked against the memory limit with, before the write
// (memory_account::reserve): what the cell takes in a B-tree row, no less than it takes
// packed. Once written, the memtable is charged what its maps really take
// (cell_map::bytes()): a cell of a small row a few bytes beyond its qualifier and value,
// its row's key and node once per row.
std::int64_t cell_charge(std::size_t qualifier, std::size_t value);

// Which versions of a column a read can see, and the background reclaim keeps (R19, R20,
// HBase's ScanWildcardColumnTracker): walking a column newest first, a cell past its cell
// TTL is skipped and not counted; every other cell is a version, ranked 1, 2, ...; those
// ranked beyond MaxVersions are out of reach, and so is a cell past the family TTL unless
// its rank is within MIN_VERSIONS. Versions are in timestamp order, so once one is past
// the family TTL every older one is too. Inline: every cell a read returns is checked.
inline bool cell_ttl_expired(const cell_value& v, std::int64_t now) { return now > v.expires_at; }
inline bool cell_ttl_expired(const cell_ref& v, std::int64_t now) { return now > v.expires_at; }

inline bool family_ttl_expired(const family_descriptor& f, std::int64_t ts, std::int64_t now) {
  return f.ttl_seconds > 0 && ts < now - f.ttl_seconds * 1000;
}

// Whether the version of rank `rank` (counted as above, from 1) with timestamp `ts` is
// past the family TTL and not kept by MIN_VERSIONS.
inline bool ttl_removes(const family_descriptor& f, std::int64_t ts, std::uint32_t rank, std::int64_t now) {
  return rank > f.min_versions && family_ttl_expired(f, ts, now);
}

}  // namespace cellar::detail
