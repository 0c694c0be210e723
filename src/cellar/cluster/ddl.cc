#include "cluster/ddl.h"

#include "catalog/hbase_options.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "cluster/layout.h"
#include "cluster/placement.h"
#include "cluster/zk_state.h"
#include "persist/codec.h"

namespace cellar::cluster {

namespace {
constexpr std::uint32_t result_format = 1;
constexpr std::int64_t result_ttl_ms = 10 * 60 * 1000;
}  // namespace

std::string encode_ddl_result(const status& st, std::uint64_t version) {
  std::string out;
  detail::put_u32(out, result_format);
  detail::put_u32(out, static_cast<std::uint32_t>(st.code()));
  detail::put_bytes(out, st.message());
  detail::put_u64(out, version);
  return out;
}

result<std::uint64_t> decode_ddl_result(std::string_view bytes) {
  detail::reader r(bytes);
  std::uint32_t format = 0, c = 0;
  std::string message;
  std::uint64_t version = 0;
  if (!r.u32(format) || format != result_format || !r.u32(c) || !r.bytes(message) || !r.u64(version) || !r.done() ||
      c > static_cast<std::uint32_t>(last_code))
    return status{code::corruption, "malformed DDL result"};
  if (c != 0) return status{static_cast<code>(c), std::move(message)};
  return version;
}

result<std::uint64_t> submit_ddl(zk_client& zk, const ddl_request& r, std::chrono::milliseconds timeout) {
  if (zk.on_event_thread())
    return status{code::invalid_argument, "submit_ddl cannot wait on the ZooKeeper event thread"};
  if (auto st = zk.ensure_path(layout::ddl_requests); !st) return st;
  if (auto st = zk.ensure_path(layout::ddl_results); !st) return st;
  auto made =
      zk.create(join_path(layout::ddl_requests, "r_"), encode_ddl_request(r), create_mode::persistent_sequential);
  if (!made) return made.error();
  const std::string name = made->substr(made->rfind('/') + 1);
  const std::string answer = join_path(layout::ddl_results, name);

  struct signal {
    std::mutex m;
    std::condition_variable cv;
    bool fired = false;
  };
  auto sig = std::make_shared<signal>();
  auto take = [&]() -> std::optional<result<std::uint64_t>> {
    auto n = zk.get(answer);
    if (!n) return std::nullopt;
    (void)zk.remove(answer);
    return decode_ddl_result(n->data);
  };
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    {
      std::lock_guard lock(sig->m);
      sig->fired = false;
    }
    auto e = zk.exists(answer, [sig](const watch_event&) {
      std::lock_guard lock(sig->m);
      sig->fired = true;
      sig->cv.notify_all();
    });
    if (e && e->has_value())
      if (auto got = take()) return std::move(*got);
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::unique_lock lock(sig->m);
    // Wakes on the answer, and every second anyway (a watch lost with a session).
    sig->cv.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(1)),
                       [&] { return sig->fired; });
  }
  // Withdraw the request; if the master has taken it, its answer is there (or coming).
  auto withdrawn = zk.remove(*made);
  if (withdrawn)
    return status{code::unavailable, "no master answered the DDL within " + std::to_string(timeout.count()) +
                                         " ms; it was withdrawn and nothing changed"};
  for (int i = 0; i < 100; ++i) {
    if (auto got = take()) return std::move(*got);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return status{code::unavailable, "the master took the DDL but its answer could not be read"};
}

namespace {

// The move intents a split or merge froze its partitions under, all still there (the node
// running it holds them; ABORTED once its session ended, which released the partitions).
status check_intents(zk_client& zk, const ddl_request& r) {
  for (const auto& intent : r.intents) {
    auto e = zk.exists(intent);
    if (!e) return e.error();
    if (!e->has_value())
      return {code::aborted, "the split or merge of '" + r.table + "' lost its hold on the partitions (" + intent +
                                 " is gone): nothing changed"};
  }
  return status::ok();
}

// `m` with table `table`'s partitions on `owners`, one each, or on the replica sets `sets`
// when it has them (epoch + 1).
placement_map place_on(const placement_map& m, const std::string& table, const std::vector<std::string>& owners,
                       const std::vector<std::vector<std::string>>& sets) {
  placement_map out = m;
  out.epoch = m.epoch + 1;
  auto& parts = out.tables[table];
  parts.clear();
  for (std::size_t i = 0; i < owners.size(); ++i)
    parts.push_back(partition_owner{owners[i], out.epoch, i < sets.size() ? sets[i] : std::vector<std::string>{}, {}});
  return out;
}

// One request: the ops of its multi, or the error to answer with.
status serve_one(zk_client& zk, const std::string& fence, const std::string& name,
                 const std::function<std::vector<std::string>()>& live) {
  const std::string request = join_path(layout::ddl_requests, name);
  const std::string answer = join_path(layout::ddl_results, name);
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto n = zk.get(request);
    if (!n) return n.code() == code::not_found ? status::ok() : n.error();  // withdrawn
    std::vector<zk_op> ops{zk_op::check(fence, 0)};
    status outcome_status = status::ok();
    std::uint64_t version = 0;
    auto req = decode_ddl_request(n->data);
    auto cat = read_catalog(zk, nullptr);
    if (!cat) return cat.error();
    auto pl = read_placement(zk);
    if (!pl) return pl.error();
    result<ddl_outcome> outcome = req ? apply_ddl(cat->catalog, *req) : result<ddl_outcome>(req.error());
    const bool reshape = req && req->what == ddl_request::kind::reshape_table;
    if (outcome && reshape)
      if (auto st = check_intents(zk, *req); !st) outcome = st;
    if (outcome) {
      placement_map map = pl->map;
      const auto* t = outcome->catalog.find(outcome->table);
      if (outcome->dropped || outcome->old_partitions_gone) map = remove_table(map, outcome->table);
      if (reshape) {
        // The new partitions' cells wait at the owners the request names (cluster/reshaper.h).
        map = place_on(map, outcome->table, req->owners, req->replica_sets);
        for (const auto& intent : req->intents) ops.push_back(zk_op::remove(intent, 0));
      } else if (outcome->new_partitions && t) {
        auto placed =
            assign_table(map, outcome->table, t->partitioning.count(), live(), replication_factor(t->attributes));
        if (!placed) {
          outcome = placed.error();
        } else {
          map = std::move(*placed);
        }
      }
      if (outcome) {
        auto cops = catalog_ops(*cat, outcome->catalog, outcome->table);
        ops.insert(ops.end(), cops.begin(), cops.end());
        if (!(map == pl->map)) ops.push_back(placement_op(*pl, map));
        version = outcome->catalog.version;
      }
    }
    if (!outcome) outcome_status = outcome.error();
    ops.push_back(zk_op::remove(request, n->stat.version));
    ops.push_back(zk_op::create(answer, encode_ddl_result(outcome_status, version)));
    auto done = zk.multi(ops);
    if (done) {
      if (outcome_status)
        spdlog::info("cellar: DDL {} on '{}' applied: catalog version {}", name, outcome->table, version);
      else
        spdlog::info("cellar: DDL {} refused: {}", name, outcome_status.to_string());
      return status::ok();
    }
    // Lost the fence: another node is master now.
    auto f = zk.exists(fence);
    if (!f || !f->has_value()) return status{code::unavailable, "no longer the master: " + done.error().to_string()};
    if (done.code() != code::conflict && done.code() != code::not_found && done.code() != code::already_exists)
      return done.error();
    // The catalog or the map moved under us (a master that has not heard yet that it was
    // deposed): read again.
  }
  return status{code::unavailable, "DDL " + name + " kept conflicting with other writers"};
}

void remove_stale_results(zk_client& zk) {
  auto names = zk.children(layout::ddl_results);
  if (!names) return;
  const auto now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  for (const auto& name : *names) {
    const std::string path = join_path(layout::ddl_results, name);
    auto st = zk.exists(path);
    if (st && st->has_value() && now_ms - (*st)->ctime_ms > result_ttl_ms) (void)zk.remove(path);
  }
}

}  // namespace

status serve_ddl_requests(zk_client& zk, const std::string& fence,
                          const std::function<std::vector<std::string>()>& live) {
  if (auto st = zk.ensure_path(layout::ddl_requests); !st) return st;
  if (auto st = zk.ensure_path(layout::ddl_results); !st) return st;
  auto names = zk.children(layout::ddl_requests);
  if (!names) return names.error();
  // Sequential names sort in submission order.
  for (const auto& name : *names)
    if (auto st = serve_one(zk, fence, name, live); !st) return st;
  if (!names->empty()) remove_stale_results(zk);
  return status::ok();
}

}  // namespace cellar::cluster
