// Linearizability of a replicated table under failures: clients put, get and checkAndPut a
// few rows of a factor-3 table through different nodes while a nemesis kills (SIGKILL, then
// restarts) and pauses (SIGSTOP / SIGCONT) one node at a time. The recorded history of each
// row is checked as a register by the Wing-Gong search (with Lowe's memoisation of states
// already explored, as Knossos does): the test fails if no order of the operations agrees
// with both real time and every answer.
#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cellar/client.h"
#include "servers_test.h"

using namespace cellar;
using namespace clustertest;
using namespace std::chrono_literals;

namespace {

// One operation on a register. A write whose outcome is unknown (UNAVAILABLE: it may have
// committed) has no completion: it may take effect at any time after its invocation, or never.
struct reg_op {
  enum kind_t { read, write, cas } kind = read;
  std::int64_t invoked = 0, completed = 0;  // nanoseconds; completed: INT64_MAX when unknown
  bool known = true;
  std::optional<std::string> value;     // read: what it saw (none: absent); write/cas: what it writes
  std::optional<std::string> expected;  // cas: the value it compared with (none: absent)
  bool processed = false;               // cas, known: whether it wrote
};

// Wing-Gong with memoisation: is there an order of `ops` (each known op exactly once, each
// unknown write at most once) consistent with real time and a register starting absent?
class register_checker {
 public:
  explicit register_checker(std::vector<reg_op> ops) : ops_(std::move(ops)) {}

  bool linearizable() {
    if (ops_.size() > 64) return false;  // the search keys its states on a 64-bit set
    for (std::size_t i = 0; i < ops_.size(); ++i)
      if (ops_[i].known) required_ |= bit(i);
    return search(0, std::nullopt);
  }

 private:
  static std::uint64_t bit(std::size_t i) { return std::uint64_t{1} << i; }

  // Applies op `o` to `state`; false when its answer contradicts it.
  static bool step(const reg_op& o, std::optional<std::string>& state) {
    switch (o.kind) {
      case reg_op::read: return o.value == state;
      case reg_op::write: state = o.value; return true;
      case reg_op::cas: {
        const bool matches = state == o.expected;
        if (o.known && matches != o.processed) return false;
        if (matches) state = o.value;
        return o.known || matches;  // an unknown cas that would not write changes nothing: skip it
      }
    }
    return false;
  }

  bool search(std::uint64_t done, std::optional<std::string> state) {
    if ((done & required_) == required_) return true;
    if (!seen_.insert({done, state}).second) return false;
    // Any op invoked before the earliest completion among those not yet placed may go next.
    std::int64_t horizon = INT64_MAX;
    for (std::size_t i = 0; i < ops_.size(); ++i)
      if (!(done & bit(i)) && ops_[i].known) horizon = std::min(horizon, ops_[i].completed);
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if ((done & bit(i)) || ops_[i].invoked > horizon) continue;
      auto next = state;
      if (step(ops_[i], next) && search(done | bit(i), next)) return true;
    }
    return false;
  }

  std::vector<reg_op> ops_;
  std::uint64_t required_ = 0;
  std::set<std::pair<std::uint64_t, std::optional<std::string>>> seen_;
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("the register checker accepts linearizable histories and finds anomalies", "[linearizability]") {
  auto w = [](std::int64_t a, std::int64_t b, const char* v) {
    return reg_op{reg_op::write, a, b, true, std::string(v), std::nullopt, false};
  };
  auto r = [](std::int64_t a, std::int64_t b, std::optional<std::string> v) {
    return reg_op{reg_op::read, a, b, true, std::move(v), std::nullopt, false};
  };
  // Overlapping write and read: the read may see either.
  CHECK(register_checker({w(0, 10, "a"), r(5, 15, std::nullopt)}).linearizable());
  CHECK(register_checker({w(0, 10, "a"), r(5, 15, "a")}).linearizable());
  // A read after a completed write must see it (a stale read).
  CHECK_FALSE(register_checker({w(0, 10, "a"), r(20, 30, std::nullopt)}).linearizable());
  // Two reads that see the writes in opposite orders.
  CHECK_FALSE(
      register_checker({w(0, 10, "a"), w(0, 10, "b"), r(20, 30, "a"), r(40, 50, "b"), r(60, 70, "a")}).linearizable());
  // An unknown write may have happened, late...
  reg_op lost = w(0, INT64_MAX, "x");
  lost.known = false;
  CHECK(register_checker({lost, r(100, 110, std::nullopt), r(200, 210, "x")}).linearizable());
  // ...or never, but not undone.
  CHECK_FALSE(register_checker({lost, r(100, 110, "x"), r(200, 210, std::nullopt)}).linearizable());
  // A cas that claims to have written over a value that was never there.
  CHECK_FALSE(register_checker({w(0, 10, "a"), reg_op{reg_op::cas, 20, 30, true, "c", "b", true}}).linearizable());
  CHECK(register_checker({w(0, 10, "a"), reg_op{reg_op::cas, 20, 30, true, "c", "a", true}, r(40, 50, "c")})
            .linearizable());
}

TEST_CASE("factor 3: put, get and checkAndPut stay linearizable while nodes are killed and paused",
          "[cluster][servers][replication][failure][linearizability]") {
  cluster3 c({"--durability", "log", "--replication-factor", "3", "--election-timeout-ms", "400"});
  REQUIRE(lines(shell(c.node(1), "create 'lin', 'f'\n").out) == std::vector<std::string>{"{\"ok\":true}"});
  // CELLAR_LINEARIZABILITY_SECONDS lengthens the run (scripts/linearizability.sh): more
  // rows, each with as many operations as the checker's search takes (at most 64).
  const int seconds = [] {
    const char* v = std::getenv("CELLAR_LINEARIZABILITY_SECONDS");
    return v != nullptr && std::atoi(v) > 25 ? std::atoi(v) : 25;
  }();
  std::vector<std::string> keys;
  for (int k = 0; k < 3 * seconds / 25; ++k) keys.push_back("k" + std::to_string(k));
  constexpr int per_key = 48;
  std::mutex mu;
  std::vector<std::vector<reg_op>> history(keys.size());
  std::atomic<int> issued{0};
  std::atomic<bool> stop{false};
  std::vector<std::string> unexpected;  // errors other than the failover's
  std::vector<std::string> addresses{c.node(1).address(), c.node(2).address(), c.node(3).address()};

  auto client = [&](int id) {
    std::mt19937 rng(static_cast<unsigned>(id) * 7919u);
    std::unique_ptr<connection> conn;
    int at = id;  // the node this client talks to; the next one when it fails
    std::map<std::size_t, std::optional<std::string>> last_seen;
    for (int n = 0; !stop.load(); ++n) {
      const int slot = issued.fetch_add(1);
      if (slot >= per_key * static_cast<int>(keys.size())) break;
      const std::size_t k = static_cast<std::size_t>(slot) % keys.size();
      if (!conn) {
        std::string address;
        {
          std::lock_guard lock(mu);
          address = addresses[static_cast<std::size_t>(at % 3)];
        }
        auto made = rpc::connect(address);
        if (!made) {
          ++at;
          issued.fetch_sub(1);
          std::this_thread::sleep_for(50ms);  // a paced retry of the connect, not a wait for an effect
          continue;
        }
        conn = std::move(*made);
      }
      reg_op o;
      const int pick = static_cast<int>(rng() % 3);
      const std::string value = "c" + std::to_string(id) + "-" + std::to_string(n);
      batch_op op;
      if (pick == 0) {
        o.kind = reg_op::read;
        op = cellar::get(keys[k]).column("f", "q");
      } else if (pick == 1) {
        o.kind = reg_op::write;
        o.value = value;
        op = cellar::put(keys[k]).add("f", "q", value);
      } else {
        o.kind = reg_op::cas;
        o.value = value;
        o.expected = last_seen[k];
        auto cm = check_and_mutate(keys[k], "f", "q");
        if (o.expected)
          cm.if_equals(*o.expected);
        else
          cm.if_not_exists();
        op = cm.then(cellar::put(keys[k]).add("f", "q", value));
      }
      o.invoked = now_ns();
      std::vector<batch_op> ops;
      ops.push_back(std::move(op));
      auto res = conn->batch("lin", std::move(ops));
      o.completed = now_ns();
      const status st = res.empty() ? status{code::unavailable, "no result"} : res[0].st;
      if (st.is_ok()) {
        if (o.kind == reg_op::read) {
          o.value = res[0].row.cells.empty() ? std::nullopt : std::optional<std::string>(res[0].row.cells[0].value);
          last_seen[k] = o.value;
        } else if (o.kind == reg_op::cas) {
          o.processed = res[0].processed;
          if (o.processed) last_seen[k] = o.value;
        } else {
          last_seen[k] = o.value;
        }
      } else {
        if (st.code() != code::unavailable && st.code() != code::not_leader) {
          std::lock_guard lock(mu);
          unexpected.push_back(st.to_string());  // Catch2's assertions are for the main thread
        }
        conn.reset();
        ++at;
        // A failed read tells nothing; a write refused NOT_LEADER by every replica never ran;
        // any other failed write may have run.
        if (o.kind == reg_op::read || st.code() == code::not_leader) continue;
        o.known = false;
        o.completed = INT64_MAX;
      }
      std::lock_guard lock(mu);
      history[k].push_back(std::move(o));
    }
  };

  std::vector<std::thread> clients;
  for (int id = 0; id < 3; ++id) clients.emplace_back(client, id);

  // The nemesis: one node at a time, killed and restarted or paused and resumed.
  std::mt19937 rng(12345);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (int round = 0; std::chrono::steady_clock::now() < end && issued.load() < per_key * static_cast<int>(keys.size());
       ++round) {
    const int victim = 1 + static_cast<int>(rng() % 3);
    if (round % 2 == 0) {
      c.kill9(victim);
      std::this_thread::sleep_for(1500ms);  // the nemesis' schedule: how long the node stays down
      c.start(victim);
      std::lock_guard lock(mu);
      addresses[static_cast<std::size_t>(victim - 1)] = c.node(victim).address();
    } else {
      ::kill(c.node(victim).pid(), SIGSTOP);
      std::this_thread::sleep_for(1500ms);  // the nemesis' schedule: how long the node stays paused
      ::kill(c.node(victim).pid(), SIGCONT);
    }
    std::this_thread::sleep_for(1000ms);  // the nemesis' schedule: the quiet time between faults
  }
  stop.store(true);
  for (auto& t : clients) t.join();

  for (const auto& e : unexpected) UNSCOPED_INFO(e);
  CHECK(unexpected.empty());
  std::size_t total = 0, unknown = 0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    for (const auto& o : history[k]) unknown += o.known ? 0 : 1;
    total += history[k].size();
    INFO("row " << keys[k] << ": " << history[k].size() << " operations");
    CHECK(register_checker(history[k]).linearizable());
  }
  INFO(total << " operations, " << unknown << " of unknown outcome");
  CHECK(total >= 60u);
}
