// The embedded engine: cellar in this process. Reads, updates and inserts of a slot go
// to table::batch_async (answers arrive on CAF workers and are queued for the driver
// thread); scans run synchronously on the driver thread (table::scan has no async form).
#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "cellar/store.h"
#include "engine.h"

namespace loadgen {

namespace {

std::unique_ptr<cellar::store> g_store;

struct answer {
  slot* s;
  std::vector<std::size_t> idx;
  bool second;
  std::vector<cellar::op_result> results;
};

class embedded_engine final : public engine {
 public:
  explicit embedded_engine(const target_options& o)
      : o_(o), table_(g_store->open_table(o.table).value()), values_(o.seed, o.field_length), rng_(o.seed * 7919 + 5) {
    for (int i = 0; i < field_count; ++i) fields_.push_back(field_name(i));
  }

  void start(slot& s) override {
    s.ok.assign(s.ops.size(), 1);
    s.rows.assign(s.ops.size(), 0);
    s.calls_pending = 0;
    std::vector<std::size_t> batched;
    for (std::size_t i = 0; i < s.ops.size(); ++i)
      if (s.ops[i].kind != op_kind::scan) batched.push_back(i);
    if (!batched.empty()) send_batch(s, std::move(batched), false);
    for (std::size_t i = 0; i < s.ops.size(); ++i)
      if (s.ops[i].kind == op_kind::scan) run_scan(s, i);
    if (s.calls_pending == 0) finish(s);
  }

  const char* io() const override { return "caf"; }

  void wait(std::vector<slot*>& done, std::int64_t deadline_ns) override {
    std::vector<answer> got;
    if (local_done_.empty()) {
      std::unique_lock l(mu_);
      const auto deadline = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline_ns));
      cv_.wait_until(l, deadline, [&] { return !answers_.empty(); });
      got.swap(answers_);
    } else {
      std::lock_guard l(mu_);
      got.swap(answers_);
    }
    for (auto& a : got) handle(a);
    for (auto* s : local_done_) done.push_back(s);
    local_done_.clear();
  }

 private:
  void finish(slot& s) {
    s.end_ns = now_ns();
    if (s.mid_ns == 0) s.mid_ns = s.end_ns;
    local_done_.push_back(&s);
  }

  void send_batch(slot& s, std::vector<std::size_t> idx, bool second) {
    std::vector<cellar::batch_op> ops;
    ops.reserve(idx.size());
    for (auto i : idx) {
      const operation& op = s.ops[i];
      std::string key = build_key_name(op.keynum, o_.keys);
      const bool write = second || op.kind == op_kind::update || op.kind == op_kind::insert;
      if (!write) {
        ops.emplace_back(cellar::get(std::move(key)));
        continue;
      }
      cellar::put p(std::move(key));
      if (op.kind == op_kind::insert) {
        for (int f = 0; f < field_count; ++f)
          p.add(o_.family, fields_[static_cast<std::size_t>(f)], values_.pick(rng_));
      } else {
        p.add(o_.family, fields_[static_cast<std::size_t>(op.field)], values_.pick(rng_));
      }
      ops.emplace_back(std::move(p));
    }
    ++s.calls_pending;
    auto* sp = &s;
    table_.batch_async(std::move(ops),
                       [this, sp, idx = std::move(idx), second](std::vector<cellar::op_result> r) mutable {
                         {
                           std::lock_guard l(mu_);
                           answers_.push_back({sp, std::move(idx), second, std::move(r)});
                         }
                         cv_.notify_one();
                       });
  }

  void handle(answer& a) {
    slot& s = *a.s;
    std::vector<std::size_t> rmw;
    for (std::size_t k = 0; k < a.idx.size(); ++k) {
      const std::size_t i = a.idx[k];
      bool ok = k < a.results.size() && a.results[k].st.is_ok();
      const operation& op = s.ops[i];
      if (!ok && s.why.empty())
        s.why = k < a.results.size() ? a.results[k].st.to_string() : "fewer results than actions";
      if (ok && !a.second && (op.kind == op_kind::read || op.kind == op_kind::rmw)) {
        ok = !a.results[k].row.cells.empty();
        if (!ok && s.why.empty()) s.why = "a read found no row";
      }
      if (!ok) s.ok[i] = 0;
      if (!a.second && op.kind == op_kind::rmw && ok) rmw.push_back(i);
    }
    if (!a.second) s.mid_ns = now_ns();
    if (!rmw.empty()) send_batch(s, std::move(rmw), true);
    if (--s.calls_pending == 0) finish(s);
  }

  void run_scan(slot& s, std::size_t i) {
    const operation& op = s.ops[i];
    auto sc = table_.scan(
        cellar::scan().start_row(build_key_name(op.keynum, o_.keys)).limit(op.scan_length).caching(op.scan_length));
    if (!sc) {
      s.ok[i] = 0;
      return;
    }
    auto rows = sc->next(static_cast<std::size_t>(op.scan_length));
    if (!rows) {
      s.ok[i] = 0;
      return;
    }
    s.rows[i] = static_cast<std::int32_t>(rows->size());
  }

  target_options o_;
  cellar::table table_;
  value_pool values_;
  rng rng_;
  std::vector<std::string> fields_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<answer> answers_;
  std::vector<slot*> local_done_;
};

}  // namespace

void prepare_embedded(const target_options& o) {
  if (!g_store) {
    auto s = cellar::store::open({});
    if (!s) throw std::runtime_error("open store: " + s.error().to_string());
    g_store = std::move(s.value());
  }
  if (g_store->table_exists(o.table)) return;
  if (auto st = g_store->create_table(ycsb_table(o), cellar::schema_origin::hbase_shell); !st)
    throw std::runtime_error("create table: " + st.to_string());
}

void close_embedded() {
  if (g_store) (void)g_store->close();
}

std::unique_ptr<engine> make_embedded_engine(const target_options& o) { return std::make_unique<embedded_engine>(o); }

}  // namespace loadgen
