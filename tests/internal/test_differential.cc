// A randomized differential test of the ways a batch reaches a partition: run in place on
// the caller's thread, queued at the partition's actor (docs/concurrency.md), or, for a
// single get or put, through the server's direct entry points (data_path::read_views and
// write_in_place, which fall back to a batch when they cannot run now). Several
// callers (each its own call_order, as connections are) issue random puts, deletes,
// increments, multi-row batches and gets of one or several rows on their own rows, which share partitions with
// every other caller's (contention), choosing the path at random per call; some callers are
// forced onto the queued path. Queued writes are not waited for, so a later in-place call of
// the same caller has to respect the ordering rule. Every answer is checked against a simple
// model (a map per caller), at issue time for gets and in the callback for queued ones, and
// the whole store against the union of the models at the end.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cellar/store.h"
#include "store/access.h"
#include "store/data_path.h"

using namespace cellar;
using cellar::detail::call_order;

namespace {

using row_model = std::map<std::string, std::string>;  // qualifier -> value
using model = std::map<std::string, row_model>;        // row -> its cells

std::string render(const row_result& r) {
  std::string s;
  for (const auto& c : r.cells) s += c.qualifier + "=" + c.value + ";";
  return s;
}

std::string render(const row_model& m) {
  std::string s;
  for (const auto& [q, v] : m) s += q + "=" + v + ";";
  return s;
}

// What the callers share: failures, and the queued calls still unanswered.
struct shared_state {
  std::mutex mu;
  std::vector<std::string> failures;
  std::condition_variable idle;
  int pending = 0;

  void fail(std::string what) {
    std::lock_guard l(mu);
    if (failures.size() < 20) failures.push_back(std::move(what));
  }
  void started() {
    std::lock_guard l(mu);
    ++pending;
  }
  void finished() {
    std::lock_guard l(mu);
    if (--pending == 0) idle.notify_all();
  }
  void wait_idle() {
    std::unique_lock l(mu);
    idle.wait(l, [&] { return pending == 0; });
  }
};

class caller {
 public:
  caller(detail::data_path& s, shared_state& sh, int id, bool queued_only, std::uint64_t seed)
      : s_(s), sh_(sh), id_(id), queued_only_(queued_only), rng_(seed) {}

  void run(int steps) {
    for (int i = 0; i < steps; ++i) step();
  }
  const model& state() const { return m_; }
  int direct_calls() const { return direct_calls_; }

 private:
  std::string row(int k) const { return "c" + std::to_string(id_) + "-r" + std::to_string(k); }
  std::string pick_row() { return row(static_cast<int>(rng_() % 12)); }
  std::string pick_q() { return "q" + std::to_string(rng_() % 3); }

  // A single get or put through data_path's direct entry point, as the frames server calls
  // it; false when it did not run (the caller then issues a batch, as the server does).
  bool direct(const std::vector<batch_op>& ops, const std::function<void(const std::vector<op_result>&)>& check) {
    if (ops.size() != 1) return false;
    if (const get* g = std::get_if<get>(&ops[0])) {
      struct context {
        std::string_view row;
        std::vector<op_result> results;
      } ctx{g->row, {}};
      auto use = [](void* arg, bool exists, const std::vector<detail::read_cell_view>& cells) {
        auto& c = *static_cast<context*>(arg);
        op_result r;
        if (exists) r.row.row = std::string(c.row);
        for (const auto& v : cells) {
          cell x;
          x.row = std::string(c.row);
          x.family = *v.family;
          x.qualifier = std::string(v.qualifier);
          x.timestamp = v.timestamp;
          x.value = std::string(v.value);
          r.row.cells.push_back(std::move(x));
        }
        c.results.push_back(std::move(r));
      };
      if (!s_.read_views("t", cache_, ops[0], order_, views_, use, &ctx)) return false;
      ++direct_calls_;
      check(ctx.results);
      return true;
    }
    if (!std::holds_alternative<put>(ops[0])) return false;
    put_req_.ops = ops;
    if (!s_.write_in_place("t", cache_, put_req_, order_, put_reply_)) return false;
    ++direct_calls_;
    check(put_reply_.results);
    return true;
  }

  // Runs `ops`; `check` gets the results, now or from the partition's thread later.
  void issue(std::vector<batch_op> ops, bool wait, std::function<void(const std::vector<op_result>&)> check) {
    if (!queued_only_ && rng_() % 3 == 0 && direct(ops, check)) return;
    const bool in_place = !queued_only_ && rng_() % 2 == 0;
    if (!wait) {
      sh_.started();
      auto now = s_.run_batch("t", std::move(ops), order_, in_place, [this, check](std::vector<op_result> r) {
        check(r);
        sh_.finished();
      });
      if (now) {
        check(*now);
        sh_.finished();
      }
      return;
    }
    std::mutex mu;
    std::condition_variable cv;
    std::optional<std::vector<op_result>> later;
    auto now = s_.run_batch("t", std::move(ops), order_, in_place, [&](std::vector<op_result> r) {
      std::lock_guard l(mu);
      later = std::move(r);
      cv.notify_all();
    });
    if (!now) {
      std::unique_lock l(mu);
      cv.wait(l, [&] { return later.has_value(); });
      now = std::move(later);
    }
    check(*now);
  }

  void step() {
    const auto kind = rng_() % 10;
    const bool wait = rng_() % 4 == 0;  // most writes are not waited for
    const std::string tag = "caller " + std::to_string(id_) + " step " + std::to_string(++steps_);
    if (kind < 3) {  // put
      auto r = pick_row();
      auto q = pick_q();
      auto v = "v" + std::to_string(++ts_);
      m_[r][q] = v;
      issue({put(r).add("f", q, ts_, v)}, wait, [this, tag](const std::vector<op_result>& res) {
        if (!res.at(0).st) sh_.fail(tag + ": put failed: " + res[0].st.to_string());
      });
    } else if (kind < 4) {  // delete every version of a column
      auto r = pick_row();
      auto q = pick_q();
      m_[r].erase(q);
      if (m_[r].empty()) m_.erase(r);
      issue({deletion(r).columns("f", q)}, wait, [this, tag](const std::vector<op_result>& res) {
        if (!res.at(0).st) sh_.fail(tag + ": delete failed: " + res[0].st.to_string());
      });
    } else if (kind < 6) {  // increment a counter: the answer is known now
      auto r = pick_row();
      auto& cell = m_[r]["n"];
      const std::int64_t before = cell.empty() ? 0 : *to_long(cell);
      const std::int64_t amount = static_cast<std::int64_t>(rng_() % 5) + 1;
      cell = long_bytes(before + amount);
      const auto expect = before + amount;
      issue({increment(r).add("f", "n", amount)}, wait, [this, tag, expect](const std::vector<op_result>& res) {
        const auto& o = res.at(0);
        if (!o.st || o.row.cells.size() != 1 || to_long(o.row.cells[0].value) != expect)
          sh_.fail(tag + ": increment answered " + o.st.to_string() + " " +
                   (o.row.cells.empty() ? "nothing" : std::to_string(to_long(o.row.cells[0].value).value_or(-1))) +
                   ", expected " + std::to_string(expect));
      });
    } else if (kind < 7) {  // a batch over several rows (and so partitions)
      std::vector<batch_op> ops;
      for (int k = 0; k < 3; ++k) {
        auto r = pick_row();
        auto v = "b" + std::to_string(++ts_);
        m_[r]["b"] = v;
        ops.push_back(put(r).add("f", "b", ts_, v));
      }
      issue(std::move(ops), wait, [this, tag](const std::vector<op_result>& res) {
        for (const auto& o : res)
          if (!o.st) sh_.fail(tag + ": batch put failed: " + o.st.to_string());
      });
    } else {  // gets of one or three rows: must see every earlier call of this caller
      const int rows_read = rng_() % 2 == 0 ? 1 : 3;
      std::vector<batch_op> ops;
      std::vector<std::string> expect;
      for (int k = 0; k < rows_read; ++k) {
        auto r = pick_row();
        auto it = m_.find(r);
        expect.push_back(it == m_.end() ? "" : render(it->second));
        ops.push_back(get(r));
      }
      issue(std::move(ops), rng_() % 3 != 0, [this, tag, expect](const std::vector<op_result>& res) {
        for (std::size_t k = 0; k < expect.size(); ++k) {
          const auto& o = res.at(k);
          if (!o.st)
            sh_.fail(tag + ": get failed: " + o.st.to_string());
          else if (render(o.row) != expect[k])
            sh_.fail(tag + ": get #" + std::to_string(k) + " = " + render(o.row) + ", model " + expect[k]);
        }
      });
    }
  }

  detail::data_path& s_;
  shared_state& sh_;
  const int id_;
  const bool queued_only_;
  std::mt19937_64 rng_;
  std::shared_ptr<call_order> order_ = std::make_shared<call_order>();
  model m_;
  std::int64_t ts_ = 0;
  int steps_ = 0;
  detail::table_lookup_cache cache_;
  std::vector<detail::read_cell_view> views_;
  detail::batch_request put_req_;
  detail::batch_reply put_reply_;
  int direct_calls_ = 0;
};

void run_differential(const store_options& o, std::uint64_t seed) {
  auto s = store::open(o).value();
  REQUIRE(s->create_table({"t", partition_spec::hash(4), {{"f", 1}}}, schema_origin::oceanbase_ddl).is_ok());
  auto& data = detail::store_access::data(*s);
  shared_state sh;
  std::vector<std::unique_ptr<caller>> callers;
  for (int c = 0; c < 4; ++c)
    callers.push_back(
        std::make_unique<caller>(data, sh, c, /*queued_only=*/c == 3, seed * 31 + static_cast<std::uint64_t>(c)));
  std::vector<std::thread> threads;
  for (auto& c : callers) threads.emplace_back([&c] { c->run(2500); });
  for (auto& t : threads) t.join();
  sh.wait_idle();
  {
    std::lock_guard l(sh.mu);
    INFO("seed " << seed);
    for (const auto& f : sh.failures) FAIL_CHECK(f);
    CHECK(sh.failures.empty());
  }
  // The whole store equals the union of the models.
  std::map<std::string, std::string> want, got;
  for (const auto& c : callers)
    for (const auto& [r, cells] : c->state()) want[r] = render(cells);
  auto t = s->open_table("t").value();
  auto sc = t.scan(scan()).value();
  for (;;) {
    auto page = sc.next(100).value();
    if (page.empty()) break;
    for (const auto& r : page) got[r.row] = render(r);
  }
  CHECK(got == want);
  // Every path was taken.
  CHECK(data.stats()->in_place.load() > 0);
  CHECK(data.stats()->queued.load() > 0);
  int direct = 0;
  for (const auto& c : callers) direct += c->direct_calls();
  CHECK(direct > 0);
}

}  // namespace

TEST_CASE("in place and queued calls of concurrent callers agree with a model", "[differential]") {
  const std::uint64_t seed = std::random_device{}();
  SECTION("in memory") { run_differential(store_options{}, seed); }
  SECTION("two workers, background reclamation often") {
    store_options o;
    o.worker_threads = 2;
    o.maintenance_interval = std::chrono::milliseconds(1);
    run_differential(o, seed + 1);
  }
}
