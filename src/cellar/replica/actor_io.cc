#include "replica/actor_io.h"

#include <cstdio>
#include <cstring>

#include "replica/wire.h"

namespace cellar::replica {

namespace {

// A snapshot for libraft: everything from raft_malloc, as libraft frees it.
raft_snapshot* to_raft(const snapshot_record& s) {
  auto* out = static_cast<raft_snapshot*>(raft_calloc(1, sizeof(raft_snapshot)));
  if (out == nullptr) return nullptr;
  out->index = s.index;
  out->term = s.term;
  raft_configuration_init(&out->configuration);
  out->configuration_index = s.configuration_index;
  out->bufs = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
  void* data = raft_malloc(s.data.empty() ? 1 : s.data.size());
  if (out->bufs == nullptr || data == nullptr || !decode_configuration(s.configuration, out->configuration)) {
    raft_free(data);
    raft_free(out->bufs);
    raft_configuration_close(&out->configuration);
    raft_free(out);
    return nullptr;
  }
  if (!s.data.empty()) std::memcpy(data, s.data.data(), s.data.size());
  out->bufs[0].base = data;
  out->bufs[0].len = s.data.size();
  out->n_bufs = 1;
  return out;
}

}  // namespace

actor_io::actor_io(replica_storage& storage, transport& net, io_loop& loop)
    : storage_(storage), net_(net), loop_(loop), rng_(std::random_device{}()) {
  io_.version = 1;
  io_.impl = this;
  io_.init = m_init;
  io_.close = m_close;
  io_.load = m_load;
  io_.start = m_start;
  io_.bootstrap = m_bootstrap;
  io_.recover = m_recover;
  io_.set_term = m_set_term;
  io_.set_vote = m_set_vote;
  io_.send = m_send;
  io_.append = m_append;
  io_.truncate = m_truncate;
  io_.snapshot_put = m_snapshot_put;
  io_.snapshot_get = m_snapshot_get;
  io_.time = m_time;
  io_.random = m_random;
}

void actor_io::queue(std::function<void()> completion) {
  pending_.push_back(std::move(completion));
  if (!flush_posted_) {
    flush_posted_ = true;
    loop_.post_flush();
  }
}

void actor_io::fail(const status& st) { std::snprintf(io_.errmsg, sizeof io_.errmsg, "%s", st.to_string().c_str()); }

void actor_io::on_tick(std::uint64_t generation) {
  if (generation != generation_ || closing_ || tick_cb_ == nullptr) return;
  loop_.post_tick(std::chrono::milliseconds(tick_ms_), generation_);
  tick_cb_(&io_);
}

void actor_io::on_flush() {
  flush_posted_ = false;
  // Only what was queued before this flush: a completion that queues another leaves it for
  // the next flush, so one flush never runs unboundedly.
  for (auto n = pending_.size(); n > 0 && !pending_.empty(); --n) {
    auto completion = std::move(pending_.front());
    pending_.pop_front();
    completion();
  }
}

void actor_io::drain() {
  while (!pending_.empty()) {
    auto completion = std::move(pending_.front());
    pending_.pop_front();
    completion();
  }
}

namespace {

std::uint64_t* slot_of(std::vector<std::pair<raft_id, std::uint64_t>>& v, raft_id id) {
  for (auto& [k, t] : v)
    if (k == id) return &t;
  v.emplace_back(id, 0);
  return &v.back().second;
}

raft_term term_of(const raft_message& m) {
  switch (m.type) {
    case RAFT_IO_APPEND_ENTRIES: return m.append_entries.term;
    case RAFT_IO_APPEND_ENTRIES_RESULT: return m.append_entries_result.term;
    case RAFT_IO_REQUEST_VOTE: return m.request_vote.term;
    case RAFT_IO_REQUEST_VOTE_RESULT: return m.request_vote_result.term;
    case RAFT_IO_INSTALL_SNAPSHOT: return m.install_snapshot.term;
    case RAFT_IO_TIMEOUT_NOW: return m.timeout_now.term;
    default: return 0;
  }
}

}  // namespace

std::uint64_t actor_io::now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void actor_io::accept_from_leader(raft_id from, std::uint64_t sent) {
  auto* t = slot_of(accepted_, from);
  if (sent > *t) *t = sent;
}

std::uint64_t actor_io::echoed_by(raft_id peer) const {
  for (const auto& [k, t] : echoed_)
    if (k == peer) return t;
  return 0;
}

void actor_io::on_receive(std::string_view bytes) {
  last_ = {};
  if (recv_cb_ == nullptr || closing_) return;
  raft_message m;
  std::string from_address;
  lease_stamps stamps;
  if (!decode_message(bytes, m, from_address, &stamps)) {
    ++malformed_;
    return;
  }
  if (m.type == RAFT_IO_REQUEST_VOTE && now_ns() < votes_from_ns_) {
    release_message(m);
    return;
  }
  if (stamps.echo != 0) {
    auto* t = slot_of(echoed_, m.server_id);
    if (stamps.echo > *t) *t = stamps.echo;
  }
  last_ = {m.server_id, m.type, term_of(m), stamps.sent};
  recv_cb_(&io_, &m);  // libraft takes the message's entries and snapshot data
}

int actor_io::m_init(raft_io* io, raft_id id, const char* address) {
  auto& self = of(io);
  self.id_ = id;
  self.address_ = address ? address : "";
  return 0;
}

void actor_io::m_close(raft_io* io, raft_io_close_cb cb) {
  auto& self = of(io);
  self.closing_ = true;
  ++self.generation_;
  self.queue([io, cb] {
    if (cb != nullptr) cb(io);
  });
}

int actor_io::m_load(raft_io* io, raft_term* term, raft_id* voted_for, raft_snapshot** snapshot,
                     raft_index* start_index, raft_entry** entries, size_t* n_entries) {
  auto& self = of(io);
  persisted_state s;
  if (auto st = self.storage_.load(s); !st) {
    self.fail(st);
    return st.code() == code::corruption ? RAFT_CORRUPT : RAFT_IOERR;
  }
  *term = s.term;
  *voted_for = s.vote;
  *snapshot = nullptr;
  *entries = nullptr;
  *n_entries = 0;
  *start_index = s.first_index;
  if (s.snapshot) {
    *snapshot = to_raft(*s.snapshot);
    if (*snapshot == nullptr) return RAFT_NOMEM;
  }
  if (s.entries.empty()) return 0;
  std::size_t total = 0;
  for (const auto& e : s.entries) total += e.data.size();
  auto* array = static_cast<raft_entry*>(raft_calloc(s.entries.size(), sizeof(raft_entry)));
  auto* batch = static_cast<char*>(raft_malloc(total > 0 ? total : 1));
  if (array == nullptr || batch == nullptr) {
    raft_free(array);
    raft_free(batch);
    return RAFT_NOMEM;
  }
  char* cursor = batch;
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    const auto& e = s.entries[i];
    array[i].term = e.term;
    array[i].type = e.type;
    array[i].buf.base = cursor;
    array[i].buf.len = e.data.size();
    array[i].batch = batch;
    if (!e.data.empty()) std::memcpy(cursor, e.data.data(), e.data.size());
    cursor += e.data.size();
  }
  *entries = array;
  *n_entries = s.entries.size();
  return 0;
}

int actor_io::m_start(raft_io* io, unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv) {
  auto& self = of(io);
  self.tick_ms_ = msecs;
  self.tick_cb_ = tick;
  self.recv_cb_ = recv;
  self.votes_from_ns_ = now_ns() + static_cast<std::uint64_t>(std::chrono::nanoseconds(self.vote_quiet_).count());
  self.loop_.post_tick(std::chrono::milliseconds(msecs), self.generation_);
  return 0;
}

int actor_io::m_bootstrap(raft_io* io, const raft_configuration* conf) {
  auto& self = of(io);
  persisted_state s;
  if (auto st = self.storage_.load(s); !st) {
    self.fail(st);
    return RAFT_IOERR;
  }
  if (s.term != 0 || !s.entries.empty() || s.snapshot) return RAFT_CANTBOOTSTRAP;
  raft_buffer buf{};
  if (int rv = raft_configuration_encode(conf, &buf); rv != 0) return rv;
  log_entry first{1, RAFT_CHANGE, std::string(static_cast<const char*>(buf.base), buf.len)};
  raft_free(buf.base);
  auto st = self.storage_.append({first});
  if (st) st = self.storage_.set_term(1);
  if (!st) {
    self.fail(st);
    return RAFT_IOERR;
  }
  return 0;
}

int actor_io::m_recover(raft_io* io, const raft_configuration*) {
  of(io).fail({code::unsupported, "forcing a Raft configuration is not supported"});
  return RAFT_CANTCHANGE;
}

int actor_io::m_set_term(raft_io* io, raft_term term) {
  auto& self = of(io);
  if (auto st = self.storage_.set_term(term); !st) {
    self.fail(st);
    return RAFT_IOERR;
  }
  return 0;
}

int actor_io::m_set_vote(raft_io* io, raft_id server_id) {
  auto& self = of(io);
  if (auto st = self.storage_.set_vote(server_id); !st) {
    self.fail(st);
    return RAFT_IOERR;
  }
  return 0;
}

int actor_io::m_send(raft_io* io, raft_io_send* req, const raft_message* message, raft_io_send_cb cb) {
  auto& self = of(io);
  req->cb = cb;
  if (message->type == RAFT_IO_TIMEOUT_NOW && message->timeout_now.term > self.timeout_now_term_)
    self.timeout_now_term_ = message->timeout_now.term;
  lease_stamps stamps{now_ns(), *slot_of(self.accepted_, message->server_id)};
  bool sent = self.net_.deliver(message->server_id, message->server_address ? message->server_address : "",
                                encode_message(*message, self.id_, self.address_, stamps));
  self.queue([req, cb, sent] {
    if (cb != nullptr) cb(req, sent ? 0 : RAFT_NOCONNECTION);
  });
  return 0;
}

int actor_io::m_append(raft_io* io, raft_io_append* req, const raft_entry entries[], unsigned n, raft_io_append_cb cb) {
  auto& self = of(io);
  req->cb = cb;
  std::vector<log_entry> batch;
  batch.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    batch.push_back({entries[i].term, entries[i].type,
                     std::string(static_cast<const char*>(entries[i].buf.base), entries[i].buf.len)});
  }
  auto st = self.storage_.append(batch);
  if (!st) self.fail(st);
  self.queue([req, cb, ok = st.is_ok()] {
    if (cb != nullptr) cb(req, ok ? 0 : RAFT_IOERR);
  });
  return 0;
}

int actor_io::m_truncate(raft_io* io, raft_index index) {
  auto& self = of(io);
  if (auto st = self.storage_.truncate(index); !st) {
    self.fail(st);
    return RAFT_IOERR;
  }
  return 0;
}

int actor_io::m_snapshot_put(raft_io* io, unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* snapshot,
                             raft_io_snapshot_put_cb cb) {
  auto& self = of(io);
  req->cb = cb;
  snapshot_meta meta;
  meta.index = snapshot->index;
  meta.term = snapshot->term;
  meta.configuration = encode_configuration(snapshot->configuration);
  meta.configuration_index = snapshot->configuration_index;
  // libraft's snapshots come in one buffer (the state machine's, or an installed one's);
  // pieces are joined only if it ever gives more.
  std::string joined;
  std::string_view data;
  if (snapshot->n_bufs == 1) {
    data = std::string_view(static_cast<const char*>(snapshot->bufs[0].base), snapshot->bufs[0].len);
  } else {
    for (unsigned i = 0; i < snapshot->n_bufs; ++i)
      joined.append(static_cast<const char*>(snapshot->bufs[i].base), snapshot->bufs[i].len);
    data = joined;
  }
  auto st = self.storage_.put_snapshot(meta, data, trailing);
  if (!st) self.fail(st);
  self.queue([req, cb, ok = st.is_ok()] {
    if (cb != nullptr) cb(req, ok ? 0 : RAFT_IOERR);
  });
  return 0;
}

int actor_io::m_snapshot_get(raft_io* io, raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb) {
  auto& self = of(io);
  req->cb = cb;
  self.queue([&self, req, cb] {
    std::optional<snapshot_record> rec;
    auto st = self.storage_.get_snapshot(rec);
    if (!st || !rec) {
      if (cb != nullptr) cb(req, nullptr, st ? RAFT_NOTFOUND : RAFT_IOERR);
      return;
    }
    raft_snapshot* s = to_raft(*rec);
    if (cb != nullptr) cb(req, s, s != nullptr ? 0 : RAFT_NOMEM);
  });
  return 0;
}

raft_time actor_io::m_time(raft_io*) {
  return static_cast<raft_time>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

int actor_io::m_random(raft_io* io, int min, int max) {
  return std::uniform_int_distribution<int>(min, max)(of(io).rng_);
}

}  // namespace cellar::replica
