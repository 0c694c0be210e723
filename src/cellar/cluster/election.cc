#include "cluster/election.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include <spdlog/spdlog.h>

#include "cluster/layout.h"

namespace cellar::cluster {

namespace {

constexpr const char* prefix = "n_";

// Candidate names in election order (sequence number; names without one last).
void sort_candidates(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    auto sa = sequence_of(a), sb = sequence_of(b);
    if (sa.has_value() != sb.has_value()) return sa.has_value();
    if (sa && *sa != *sb) return *sa < *sb;
    return a < b;
  });
}

}  // namespace

struct master_election::state : std::enable_shared_from_this<state> {
  zk_client* zk = nullptr;
  std::string node_id;
  callbacks cb;
  std::atomic<bool> closed{false};
  std::atomic<bool> master{false};
  std::atomic<std::int64_t> current_term{0};
  std::uint64_t listener = 0;
  mutable std::mutex mutex;
  std::string znode;  // this candidate's znode, "" between sessions

  std::string my_znode() const {
    std::lock_guard lock(mutex);
    return znode;
  }

  status become_candidate() {
    if (auto st = zk->ensure_path(layout::election); !st) return st;
    auto made = zk->create(join_path(layout::election, prefix), node_id, create_mode::ephemeral_sequential);
    if (!made) return made.error();
    std::lock_guard lock(mutex);
    znode = *made;
    return status::ok();
  }

  // Event thread: am I the lowest candidate? If not, watch the one before me.
  void check() {
    if (closed) return;
    const std::string mine = my_znode();
    if (mine.empty()) return;
    const std::string my_name = mine.substr(mine.rfind('/') + 1);
    auto names = zk->children(layout::election);
    if (!names) {
      spdlog::warn("cellar: master election: {}", names.error().to_string());
      return;  // checked again when the connection returns
    }
    sort_candidates(*names);
    auto it = std::find(names->begin(), names->end(), my_name);
    if (it == names->end()) {
      step_down();  // the session that owned it is gone; the new session enters again
      return;
    }
    if (it == names->begin()) {
      become_master(sequence_of(my_name).value_or(0), mine);
      return;
    }
    step_down();
    const std::string before = join_path(layout::election, *(it - 1));
    std::weak_ptr<state> weak = weak_from_this();
    auto st = zk->exists(before, [weak](const watch_event&) {
      if (auto s = weak.lock()) s->check();
    });
    if (st && !st->has_value()) check();  // it went between the two reads
  }

  void become_master(std::int64_t term, const std::string& path) {
    if (closed || master) return;
    master = true;
    current_term = term;
    spdlog::info("cellar: node '{}' is the master (term {})", node_id, term);
    if (cb.elected) cb.elected({node_id, term, path});
  }

  void step_down() {
    if (!master.exchange(false)) return;
    spdlog::info("cellar: node '{}' is no longer the master (term {})", node_id, current_term.load());
    current_term = 0;
    if (cb.deposed) cb.deposed();
  }

  void on_session(const session_event& ev) {
    if (closed) return;
    switch (ev.state) {
      case session_state::disconnected: step_down(); break;
      case session_state::expired: {
        step_down();
        std::lock_guard lock(mutex);
        znode.clear();
        break;
      }
      case session_state::connected:
        if (ev.new_session) {
          if (auto st = become_candidate(); !st) {
            spdlog::error("cellar: entering the master election again: {}", st.to_string());
            return;
          }
        }
        check();
        break;
    }
  }
};

result<std::unique_ptr<master_election>> master_election::enter(zk_client& zk, std::string node_id, callbacks cb) {
  auto s = std::make_shared<state>();
  s->zk = &zk;
  s->node_id = std::move(node_id);
  s->cb = std::move(cb);
  if (auto st = s->become_candidate(); !st) return st;
  std::weak_ptr<state> weak = s;
  s->listener = zk.add_session_listener([weak](const session_event& ev) {
    if (auto st = weak.lock()) st->on_session(ev);
  });
  zk.post([weak] {
    if (auto st = weak.lock()) st->check();
  });
  zk.barrier();
  return std::unique_ptr<master_election>(new master_election(std::move(s)));
}

master_election::master_election(std::shared_ptr<state> st) : st_(std::move(st)) {}

master_election::~master_election() {
  st_->closed = true;
  st_->zk->remove_session_listener(st_->listener);
  auto s = st_;
  st_->zk->post([s] { s->step_down(); });
  st_->zk->barrier();
  if (st_->zk->on_event_thread()) st_->step_down();
  if (const auto mine = st_->my_znode(); !mine.empty()) (void)st_->zk->remove(mine);
}

bool master_election::is_master() const { return st_->master; }
std::int64_t master_election::term() const { return st_->current_term; }
std::string master_election::fence_path() const { return st_->my_znode(); }

result<master_info> master_election::current(zk_client& zk) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    auto names = zk.children(layout::election);
    if (!names && names.code() != code::not_found) return names.error();
    if (!names || names->empty()) return status{code::not_found, "no master: no node is a candidate"};
    sort_candidates(*names);
    const std::string path = join_path(layout::election, names->front());
    auto n = zk.get(path);
    if (!n) {
      if (n.code() == code::not_found) continue;  // it just left
      return n.error();
    }
    return master_info{n->data, sequence_of(names->front()).value_or(0), path};
  }
  return status{code::unavailable, "the master changed too often to be read"};
}

}  // namespace cellar::cluster
