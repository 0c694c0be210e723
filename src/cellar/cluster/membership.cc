#include "cluster/membership.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include <spdlog/spdlog.h>

#include "cluster/layout.h"
#include "persist/codec.h"

namespace cellar::cluster {

namespace {
constexpr std::uint32_t node_info_format = 1;
}

std::string encode_node_info(const node_info& n) {
  std::string out;
  detail::put_u32(out, node_info_format);
  detail::put_bytes(out, n.id);
  detail::put_bytes(out, n.data_address);
  detail::put_bytes(out, n.peer_address);
  return out;
}

result<node_info> decode_node_info(std::string_view bytes) {
  detail::reader r(bytes);
  std::uint32_t format = 0;
  node_info n;
  if (!r.u32(format) || format != node_info_format || !r.bytes(n.id) || !r.bytes(n.data_address) ||
      !r.bytes(n.peer_address) || !r.done())
    return status{code::corruption, "malformed node entry"};
  return n;
}

status check_node_id(std::string_view id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..")
    return {code::invalid_argument, "node id must be 1 to 128 bytes and not '.' or '..'"};
  for (unsigned char c : id) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok)
      return {code::invalid_argument,
              "node id '" + std::string(id) + "' may only hold letters, digits, '_', '-' and '.'"};
  }
  return status::ok();
}

struct membership::state : std::enable_shared_from_this<state> {
  zk_client* zk = nullptr;
  std::optional<node_info> self;
  change_fn on_change;
  std::atomic<bool> closed{false};
  std::atomic<bool> is_registered{false};
  std::uint64_t listener = 0;
  mutable std::mutex mutex;
  std::vector<node_info> members;
  bool reported = false;  // event thread: on_change ran once

  std::string path() const { return join_path(layout::nodes, self->id); }

  // Reads the list and sets the next watch; calls on_change when it differs.
  void refresh() {
    if (closed) return;
    std::weak_ptr<state> weak = weak_from_this();
    auto names = zk->children(layout::nodes, [weak](const watch_event&) {
      if (auto s = weak.lock()) s->refresh();
    });
    if (!names) {
      // Without a watch the list is read again when the next session starts.
      spdlog::warn("cellar: reading the cluster members: {}", names.error().to_string());
      return;
    }
    std::vector<node_info> now;
    for (const auto& name : *names) {
      auto n = zk->get(join_path(layout::nodes, name));
      if (!n) continue;  // left meanwhile: the watch reports it
      auto info = decode_node_info(n->data);
      if (!info || info->id != name) {
        spdlog::warn("cellar: ignoring malformed member znode '{}'", name);
        continue;
      }
      now.push_back(std::move(*info));
    }
    std::sort(now.begin(), now.end(), [](const node_info& a, const node_info& b) { return a.id < b.id; });
    {
      std::lock_guard lock(mutex);
      if (reported && now == members) return;
      members = now;
    }
    reported = true;
    if (on_change && !closed) on_change(now);
  }

  // Creates this node's znode. Off the event thread it waits up to `wait` for a previous
  // session's znode to go; on the event thread it watches for that instead of waiting.
  status register_self(std::chrono::milliseconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    const std::string data = encode_node_info(*self);
    for (;;) {
      if (closed) return status::ok();
      auto made = zk->create(path(), data, create_mode::ephemeral);
      if (made) {
        is_registered = true;
        return status::ok();
      }
      if (made.code() == code::not_found) {
        if (auto st = zk->ensure_path(layout::nodes); !st) return st;
        continue;
      }
      if (made.code() != code::already_exists) return made.error();
      std::weak_ptr<state> weak = weak_from_this();
      const bool event_thread = zk->on_event_thread();
      auto st = event_thread ? zk->exists(path(),
                                          [weak](const watch_event& ev) {
                                            auto s = weak.lock();
                                            if (s && ev.kind == watch_kind::deleted) s->reregister();
                                          })
                             : zk->exists(path());
      if (!st) return st.error();
      if (!st->has_value()) continue;  // gone meanwhile
      if ((*st)->ephemeral_owner == zk->session_id()) {
        is_registered = true;  // an earlier attempt of ours succeeded
        return status::ok();
      }
      if (event_thread) {
        spdlog::warn("cellar: node id '{}' is still registered by session 0x{:x}; waiting for it to go", self->id,
                     (*st)->ephemeral_owner);
        return status::ok();
      }
      if (std::chrono::steady_clock::now() > deadline)
        return {code::already_exists, "node id '" + self->id + "' is registered by another live session (0x" +
                                          fmt::format("{:x}", (*st)->ephemeral_owner) + ")"};
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void reregister() {
    if (closed || !self) return;
    if (auto st = register_self(std::chrono::milliseconds(0)); !st)
      spdlog::error("cellar: registering node '{}' again: {}", self->id, st.to_string());
  }

  void on_session(const session_event& ev) {
    if (ev.state == session_state::expired) {
      is_registered = false;
      return;
    }
    if (ev.state != session_state::connected || !ev.new_session) return;
    reregister();
    refresh();  // the old session's watch is gone
  }
};

namespace {

result<std::shared_ptr<membership::state>> start(zk_client& zk, std::optional<node_info> self,
                                                 membership::change_fn on_change, std::chrono::milliseconds wait) {
  if (self)
    if (auto st = check_node_id(self->id); !st) return st;
  if (auto st = zk.ensure_path(layout::nodes); !st) return st;
  auto s = std::make_shared<membership::state>();
  s->zk = &zk;
  s->self = std::move(self);
  s->on_change = std::move(on_change);
  if (s->self)
    if (auto st = s->register_self(wait); !st) return st;
  std::weak_ptr<membership::state> weak = s;
  s->listener = zk.add_session_listener([weak](const session_event& ev) {
    if (auto st = weak.lock()) st->on_session(ev);
  });
  // The first read runs on the event thread, like every later one.
  zk.post([weak] {
    if (auto st = weak.lock()) st->refresh();
  });
  zk.barrier();
  return s;
}

}  // namespace

result<std::unique_ptr<membership>> membership::join(zk_client& zk, node_info self, change_fn on_change,
                                                     std::chrono::milliseconds wait_for_previous) {
  auto s = start(zk, std::move(self), std::move(on_change), wait_for_previous);
  if (!s) return s.error();
  return std::unique_ptr<membership>(new membership(std::move(*s)));
}

result<std::unique_ptr<membership>> membership::observe(zk_client& zk, change_fn on_change) {
  auto s = start(zk, std::nullopt, std::move(on_change), {});
  if (!s) return s.error();
  return std::unique_ptr<membership>(new membership(std::move(*s)));
}

result<std::vector<node_info>> membership::list(zk_client& zk) {
  auto names = zk.children(layout::nodes);
  if (!names) {
    if (names.code() == code::not_found) return std::vector<node_info>{};
    return names.error();
  }
  std::vector<node_info> out;
  for (const auto& name : *names) {
    auto n = zk.get(join_path(layout::nodes, name));
    if (!n) continue;
    if (auto info = decode_node_info(n->data)) out.push_back(std::move(*info));
  }
  return out;
}

membership::membership(std::shared_ptr<state> st) : st_(std::move(st)) {}

membership::~membership() {
  st_->closed = true;
  st_->zk->remove_session_listener(st_->listener);
  st_->zk->barrier();
  if (st_->self && st_->is_registered) {
    auto st = st_->zk->exists(st_->path());
    if (st && st->has_value() && (*st)->ephemeral_owner == st_->zk->session_id())
      (void)st_->zk->remove(st_->path(), (*st)->version);
  }
}

std::vector<node_info> membership::members() const {
  std::lock_guard lock(st_->mutex);
  return st_->members;
}

bool membership::registered() const { return st_->is_registered; }

}  // namespace cellar::cluster
