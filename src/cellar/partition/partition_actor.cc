#include "partition/partition_actor.h"

#include <algorithm>
#include <chrono>

#include "persist/codec.h"

namespace cellar::detail {

batch_part::~batch_part() {
  if (answered || !state) return;
  for (auto i : indices) state->results[i].st = {code::unavailable, "the partition stopped before running the action"};
  state->part_done();
}

scan_part::~scan_part() {
  if (answered) return;
  st = {code::unavailable, "the partition stopped before serving the scan"};
  answer();
}

namespace {

bool needs_unit(const std::vector<batch_op>& ops, const std::vector<std::uint32_t>& indices) {
  if (indices.size() > 1) return true;
  const auto& op = ops[indices.front()];
  return !(std::holds_alternative<get>(op) || std::holds_alternative<put>(op));
}

op_result run_one(memtable& mem, const table_schema& schema, const batch_op& op, std::int64_t now) {
  op_result r;
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, get>) {
          r.row = mem.read_row(schema, o.row, o.options, o.exists_only_, now);
        } else if constexpr (std::is_same_v<T, increment> || std::is_same_v<T, append>) {
          auto res = mem.apply(schema, o, now);
          if (res)
            r.row = std::move(res.value());
          else
            r.st = res.error();
        } else if constexpr (std::is_same_v<T, check_and_mutate>) {
          auto res = mem.apply(schema, o, now);
          if (res)
            r.processed = res.value();
          else
            r.st = res.error();
        } else {
          r.st = mem.apply(schema, o, now);
        }
      },
      op);
  return r;
}

}  // namespace

bool run_actions(memtable& mem, const table_schema& schema, const std::vector<batch_op>& ops,
                 const std::vector<std::uint32_t>& indices, std::vector<op_result>& results, std::int64_t now) {
  const bool unit = needs_unit(ops, indices);
  if (unit) mem.begin();
  std::size_t failed = indices.size();
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const auto i = indices[k];
    results[i] = run_one(mem, schema, ops[i], now);
    if (!results[i].st.is_ok()) {
      failed = k;
      break;
    }
  }
  if (failed == indices.size()) {
    if (unit) mem.commit();
  } else {
    if (unit) mem.rollback();
    const auto bad = indices[failed];
    for (auto i : indices) {
      if (i == bad) continue;
      results[i] = op_result{};
      results[i].st = {code::aborted, "not applied: action #" + std::to_string(bad) +
                                          " of the same partition failed (" + results[bad].st.to_string() + ")"};
    }
    return false;
  }
  return true;
}

void run_batch_part(memtable& mem, batch_part& part, std::int64_t now) {
  run_actions(mem, *part.schema, part.state->ops, part.indices, part.state->results, now);
  part.answered = true;
  part.state->part_done();
}

std::string log_record(memtable& mem, std::uint64_t table_uid, std::uint32_t partition) {
  std::string rec;
  rec.reserve(12 + mem.redo().size());
  put_u64(rec, table_uid);
  put_u32(rec, partition);
  rec += mem.redo();
  mem.clear_redo();
  return rec;
}

namespace {

// The log record of what the last message changed.
std::string take_record(memtable& mem, const partition_config& cfg) {
  return log_record(mem, cfg.schema ? cfg.schema->uid : 0, cfg.partition);
}

bool only_reads(const batch_part& part) {
  return std::all_of(part.indices.begin(), part.indices.end(),
                     [&](std::uint32_t i) { return std::holds_alternative<get>(part.state->ops[i]); });
}

// Every action of the part fails with `why` (the redo log's failure): never acknowledged.
void fail_part(batch_part& part, const status& why) {
  for (auto i : part.indices) {
    part.state->results[i] = op_result{};
    part.state->results[i].st = why;
  }
}

}  // namespace

partition_actor::behavior_type partition_behavior(partition_actor::stateful_pointer<partition_state> self,
                                                  partition_config cfg) {
  if (cfg.recovered && *cfg.recovered)
    self->state.mem = std::move(*cfg.recovered);
  else
    self->state.mem = std::make_unique<memtable>(cfg.global_bytes, cfg.memory_limit);
  cfg.recovered.reset();
  self->state.mem->track(cfg.track_delta, cfg.log != nullptr);
  self->state.cfg = std::move(cfg);
  if (auto& sh = self->state.cfg.shared) {
    std::lock_guard l(sh->mu);
    sh->mem = self->state.mem.get();
  }
  if (self->state.cfg.maintenance_interval.count() > 0)
    self->delayed_send(self, self->state.cfg.maintenance_interval, tick_atom::value);
  return {
      [=](batch_part_ptr& part) {
        auto& st = self->state;
        // A failed log takes no writes: refused before anything is applied (redo_log.h).
        if (st.cfg.log && st.cfg.log->failed() && !only_reads(*part)) {
          fail_part(*part, st.cfg.log->health());
          part->answered = true;
          part->state->part_done();
          return;
        }
        auto lock = st.lock();
        run_actions(*st.mem, *part->schema, part->state->ops, part->indices, part->state->results, st.cfg.clock());
        part->answered = true;
        if (st.cfg.log && !st.mem->redo().empty()) {
          // Acknowledged once the log has it (log-sync: on disk), never if it fails.
          auto record = take_record(*st.mem, st.cfg);
          redo_log::ack_fn ack;
          if (st.cfg.log_sync)
            ack = [part](const status& s) {
              if (!s) fail_part(*part, s);
              part->state->part_done();
            };
          auto queued = st.cfg.log->append(std::move(record), std::move(ack));
          if (!queued) fail_part(*part, queued);
          if (st.cfg.log_sync && queued) return;
        }
        part->state->part_done();
      },
      [=](scan_part_ptr& part) {
        {
          auto lock = self->state.lock();
          part->page = self->state.mem->scan(*part->schema, part->request, self->state.cfg.clock());
        }
        part->answer();
      },
      [=](admin_part_ptr& part) {
        auto& st = self->state;
        auto lock = st.lock();
        using k = admin_part::kind;
        switch (part->what) {
          case k::adopt_schema:
            if (!st.cfg.schema || part->schema->version > st.cfg.schema->version) st.cfg.schema = part->schema;
            break;
          case k::drop_families:
            for (auto id : part->family_ids) st.mem->drop_family(id);
            break;
          case k::reclaim_all: {
            std::size_t n = 0;
            if (part->schema && (!st.cfg.schema || part->schema->version > st.cfg.schema->version))
              st.cfg.schema = part->schema;
            st.mem->restart_reclaim();
            if (st.cfg.schema) n = st.mem->reclaim(*st.cfg.schema, st.cfg.clock(), static_cast<std::size_t>(-1));
            if (part->fan) part->fan->reclaimed += n;
            // Reclamation is redone after a restart if its record is lost.
            if (st.cfg.log && !st.mem->redo().empty()) (void)st.cfg.log->append(take_record(*st.mem, st.cfg), nullptr);
            break;
          }
          case k::stats:
            if (part->fan) part->fan->stats[part->partition] = st.mem->stats();
            break;
          case k::cut:
            if (part->fan) part->fan->deltas[part->partition] = st.mem->take_delta();
            break;
          case k::merge_delta:
            st.mem->merge_delta(std::move(part->delta));
            break;
          case k::stop:
            lock.unlock();
            part->answer();
            self->quit();
            return;
        }
        part->answer();
      },
      [=](tick_atom) {
        auto& st = self->state;
        auto lock = st.lock();
        if (st.cfg.schema) st.mem->reclaim(*st.cfg.schema, st.cfg.clock(), st.cfg.maintenance_slice);
        if (st.cfg.log && !st.mem->redo().empty()) (void)st.cfg.log->append(take_record(*st.mem, st.cfg), nullptr);
        self->delayed_send(self, st.cfg.maintenance_interval, tick_atom::value);
      },
  };
}

}  // namespace cellar::detail
