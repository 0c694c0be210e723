// The redis engine, built as the cellar frames engine is (engine_cellar_frames.cc): epoll
// for readiness, each turn's reads and sends made together through an io_uring (uring_io.h;
// a recv(2) and a send(2) each with `--io-uring false`), and per connection a buffer of
// commands written once per turn of the loop, so every request of a pipeline that is ready
// leaves in one write. Commands are encoded and replies parsed in place by resp.h (no
// allocation per reply); replies come in the order of the commands, so each connection
// keeps a queue of what it waits for.
//
// Records are stored as YCSB's Redis binding stores them: a hash per record (HSET; YCSB
// calls HMSET, the same command since Redis 4) and a sorted set "_indices" scored by the
// key's Java String.hashCode, which scans walk (ZRANGEBYSCORE score +inf LIMIT 0 n, then
// HGETALL of each key). One difference from the binding: a scan's HGETALLs are pipelined
// (one write) instead of one round trip each, which favours redis.
//
// With --redis-shards the records are split over several servers as Redis Cluster places
// them (redis_slots.h), and each connection has a socket to every server, as the cellar
// cluster target has one to every node: the baseline of docs/cluster.md's 1-against-3
// comparison. Scans need one server.
//
// With --redis-wait N (synchronous replication, as far as Redis offers it) each slot's writes
// on a connection are followed, in the same pipeline, by one `WAIT N timeout`, and the slot
// completes only when that answers: its writes count as done once N replicas have them, or
// as errors when WAIT reports fewer. One WAIT per slot and connection (not per command)
// covers all of the slot's writes there, since WAIT waits for every write the connection
// sent before it; with one operation per slot, as in a run phase, that is one WAIT per
// write. A read-modify-write's write, sent when its read answers, gets a WAIT of its own.
#include <hiredis/hiredis.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <kj/exception.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <utility>

#include "engine.h"
#include "epoll_out.h"
#include "redis_slots.h"
#include "resp.h"
#include "rpc/socket_stream.h"
#include "uring_io.h"

namespace loadgen {

namespace {

constexpr std::string_view index_key = "_indices";

struct pending {
  slot* s;
  std::size_t op;  // index in s->ops
  enum kind_t : std::uint8_t { final_reply, read_reply, rmw_read, scan_keys, scan_row, wait_reply } kind;
};

// pending::op of a WAIT that covers all of its slot's writes on its connection.
constexpr std::size_t all_writes = static_cast<std::size_t>(-1);

struct redis_conn {
  int fd = -1;
  std::string out;  // commands not yet written, from out_pos
  std::size_t out_pos = 0;
  std::vector<char> in;  // replies read, from in_pos to in_end
  std::size_t in_pos = 0, in_end = 0;
  bool polling_out = false;
  uring_slot io;          // with the ring: its send in a turn
  std::deque<pending> q;  // what the next replies answer, in order
  ~redis_conn() {
    if (fd >= 0) ::close(fd);
  }
};

class redis_engine final : public engine {
 public:
  explicit redis_engine(const target_options& o)
      : o_(o),
        values_(o.seed, o.field_length),
        rng_(o.seed * 7919 + 3),
        epfd_(::epoll_create1(EPOLL_CLOEXEC)),
        servers_(o.redis_shards),
        wait_replicas_(std::to_string(o.redis_wait)),
        wait_ms_(std::to_string(o.redis_wait_timeout_ms)) {
    if (epfd_ < 0) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
    for (int i = 0; i < field_count; ++i) fields_.push_back(field_name(i));
    if (servers_.empty()) servers_.push_back({o.host, o.port});
    for (int i = 0; i < o.connections; ++i)
      for (const auto& [host, port] : servers_) {
        auto c = std::make_unique<redis_conn>();
        try {
          c->fd = cellar::rpc::connect_socket(host, static_cast<std::uint16_t>(port)).release();
        } catch (const kj::Exception& e) {
          throw std::runtime_error("redis connect " + host + ":" + std::to_string(port) + ": " +
                                   e.getDescription().cStr());
        }
        c->in.resize(64 * 1024);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.ptr = c.get();
        if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, c->fd, &ev) != 0)
          throw std::runtime_error(std::string("epoll_ctl: ") + std::strerror(errno));
        conns_.push_back(std::move(c));
      }
    wrote_.assign(conns_.size(), 0);
    if (o.io_uring) ring_ = uring_io::open();
  }

  ~redis_engine() noexcept override { ::close(epfd_); }

  void start(slot& s) override {
    s.ok.assign(s.ops.size(), 1);
    s.rows.assign(s.ops.size(), 0);
    s.calls_pending = 0;
    for (std::size_t i = 0; i < s.ops.size(); ++i) issue(s, i);
    // One WAIT after the slot's writes on each connection that has some.
    for (std::size_t ci : written_) {
      wrote_[ci] = 0;
      push_wait(*conns_[ci], s, all_writes);
    }
    written_.clear();
  }

  const char* io() const override { return ring_ ? "io_uring" : "epoll"; }

  void wait(std::vector<slot*>& done, std::int64_t deadline_ns) override {
    if (ring_) {
      wait_ring(deadline_ns);
    } else {
      epoll_wait_loop<redis_conn>(
          epfd_, deadline_ns, now_ns, [this] { flush_all(); }, [this] { return !completed_.empty(); },
          [this](redis_conn& c, std::uint32_t events) {
            if (events & EPOLLOUT) flush(c);
            if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) read_replies(c);
          });
    }
    for (auto* s : completed_) done.push_back(s);
    completed_.clear();
  }

 private:
  void wait_ring(std::int64_t deadline_ns) {
    for (;;) {
      const std::int64_t left = deadline_ns - now_ns();
      uring_turn(
          *ring_, epfd_, conns_, wait_ms(left),
          [](redis_conn& c) {
            if (c.in_end == c.in.size()) c.in.resize(c.in.size() * 2);  // a reply larger than the buffer
            return std::pair<void*, std::size_t>(c.in.data() + c.in_end, c.in.size() - c.in_end);
          },
          [this](redis_conn& c, std::size_t n) {
            c.in_end += n;
            parse_replies(c);
          },
          "redis-server");
      if (!completed_.empty() || left <= 0) break;
    }
  }

  // Operation i of `s`, on the connection of s.conn to the server holding its key (the one
  // server, or its shard's).
  void issue(slot& s, std::size_t i) {
    const operation& op = s.ops[i];
    const std::string key = build_key_name(op.keynum, o_.keys);
    const std::size_t ci = conn_index(s, key);
    redis_conn& c = *conns_[ci];
    if (o_.redis_wait > 0 && (op.kind == op_kind::update || op.kind == op_kind::insert) && !wrote_[ci]) {
      wrote_[ci] = 1;
      written_.push_back(ci);
    }
    switch (op.kind) {
      case op_kind::read:
        resp::append_command(c.out, {"HGETALL", key});
        push(c, s, i, pending::read_reply);
        break;
      case op_kind::rmw:
        resp::append_command(c.out, {"HGETALL", key});
        push(c, s, i, pending::rmw_read);
        break;
      case op_kind::update:
        resp::append_command(c.out, {"HSET", key, fields_[static_cast<std::size_t>(op.field)], values_.pick(rng_)});
        push(c, s, i, pending::final_reply);
        break;
      case op_kind::insert: {
        std::string_view argv[2 + 2 * field_count];
        argv[0] = "HSET";
        argv[1] = key;
        for (std::size_t f = 0; f < field_count; ++f) {
          argv[2 + 2 * f] = fields_[f];
          argv[3 + 2 * f] = values_.pick(rng_);
        }
        resp::append_command(c.out, argv, 2 + 2 * field_count);
        push(c, s, i, pending::final_reply);
        char score[16];
        const auto end = std::to_chars(score, score + sizeof score, java_string_hash(key)).ptr;
        resp::append_command(c.out,
                             {"ZADD", index_key, std::string_view(score, static_cast<std::size_t>(end - score)), key});
        push(c, s, i, pending::final_reply);
        break;
      }
      case op_kind::scan: {
        // The index is per server: a scan over shards would have to merge them.
        if (servers_.size() > 1) throw std::runtime_error("redis: scans need one server, not --redis-shards");
        char score[16], limit[16];
        const auto se = std::to_chars(score, score + sizeof score, java_string_hash(key)).ptr;
        const auto le = std::to_chars(limit, limit + sizeof limit, op.scan_length).ptr;
        resp::append_command(c.out,
                             {"ZRANGEBYSCORE", index_key, std::string_view(score, static_cast<std::size_t>(se - score)),
                              "+inf", "LIMIT", "0", std::string_view(limit, static_cast<std::size_t>(le - limit))});
        push(c, s, i, pending::scan_keys);
        break;
      }
      default: break;
    }
  }

  std::size_t conn_index(const slot& s, const std::string& key) const {
    return static_cast<std::size_t>(s.conn) * servers_.size() + redis_shard(key, servers_.size());
  }

  void push_wait(redis_conn& c, slot& s, std::size_t i) {
    resp::append_command(c.out, {"WAIT", wait_replicas_, wait_ms_});
    push(c, s, i, pending::wait_reply);
  }

  // A WAIT answered: below redis_wait replicas (or an error), the writes it covers failed.
  void on_wait(redis_conn& c, slot& s, std::size_t i, const resp::reply& r) {
    if (r.type == ':' && r.n >= o_.redis_wait) return;
    for (std::size_t k = 0; k < s.ops.size(); ++k) {
      const operation& op = s.ops[k];
      const bool write = op.kind == op_kind::update || op.kind == op_kind::insert || op.kind == op_kind::rmw;
      if (i == all_writes ? write && op.kind != op_kind::rmw &&
                                conns_[conn_index(s, build_key_name(op.keynum, o_.keys))].get() == &c
                          : k == i)
        s.ok[k] = 0;
    }
    if (s.why.empty())
      s.why = r.type == ':' ? "WAIT: " + std::to_string(r.n) + " of " + wait_replicas_ +
                                  " replicas acknowledged within " + wait_ms_ + " ms (--redis-wait)"
                            : "WAIT: " + std::string(r.text);
  }

  void push(redis_conn& c, slot& s, std::size_t i, pending::kind_t k) {
    c.q.push_back({&s, i, k});
    ++s.calls_pending;
  }

  void on_reply(redis_conn& c, const resp::reply& r) {
    if (c.q.empty()) throw std::runtime_error("redis: a reply to no command");
    const pending p = c.q.front();
    c.q.pop_front();
    slot& s = *p.s;
    if (p.kind == pending::wait_reply) {
      on_wait(c, s, p.op, r);
    } else if (r.type == '-') {
      s.ok[p.op] = 0;
      if (s.why.empty()) s.why = std::string(r.text);
    }
    const bool found = r.type == '*' && r.n > 0;  // HGETALL of a missing key: an empty array
    switch (p.kind) {
      case pending::read_reply:
        if (!found) s.ok[p.op] = 0;
        break;
      case pending::rmw_read: {
        s.mid_ns = now_ns();
        if (!found) {
          s.ok[p.op] = 0;
          break;
        }
        const operation& op = s.ops[p.op];
        resp::append_command(c.out, {"HSET", build_key_name(op.keynum, o_.keys),
                                     fields_[static_cast<std::size_t>(op.field)], values_.pick(rng_)});
        push(c, s, p.op, pending::final_reply);
        if (o_.redis_wait > 0) push_wait(c, s, p.op);
        break;
      }
      case pending::scan_keys:
        if (r.type != '*') s.ok[p.op] = 0;
        for (auto k : keys_) {
          resp::append_command(c.out, {"HGETALL", k});
          push(c, s, p.op, pending::scan_row);
        }
        break;
      case pending::scan_row:
        if (found) ++s.rows[p.op];
        break;
      default: break;
    }
    if (--s.calls_pending == 0) {
      s.end_ns = now_ns();
      if (s.mid_ns == 0) s.mid_ns = s.end_ns;
      completed_.push_back(&s);
    }
  }

  void flush_all() {
    for (auto& c : conns_)
      if (c->out_pos < c->out.size()) flush(*c);
  }

  void flush(redis_conn& c) {
    flush_queued(
        epfd_, c, [&](const auto* p, std::size_t n) { return ::send(c.fd, p, n, MSG_NOSIGNAL); }, "redis-server");
  }

  void read_replies(redis_conn& c) {
    if (c.in_end == c.in.size()) c.in.resize(c.in.size() * 2);  // a reply larger than the buffer
    const ssize_t n = ::recv(c.fd, c.in.data() + c.in_end, c.in.size() - c.in_end, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n < 0) throw std::runtime_error(std::string("recv from redis-server: ") + std::strerror(errno));
    if (n == 0) throw std::runtime_error("redis-server closed the connection");
    c.in_end += static_cast<std::size_t>(n);
    parse_replies(c);
  }

  // Handles every whole reply in c.in, keeping a partial one at the buffer's start.
  void parse_replies(redis_conn& c) {
    for (;;) {
      // Only a scan's ZRANGEBYSCORE needs the elements (the keys to read next).
      const bool keys = !c.q.empty() && c.q.front().kind == pending::scan_keys;
      keys_.clear();
      resp::reply r;
      const std::size_t size = resp::parse(c.in.data() + c.in_pos, c.in_end - c.in_pos, r, keys ? &keys_ : nullptr);
      if (size == 0) break;
      on_reply(c, r);
      c.in_pos += size;
    }
    if (c.in_pos == c.in_end) {
      c.in_pos = c.in_end = 0;
    } else if (c.in_pos > 0) {  // keep the partial reply, at the buffer's start
      std::memmove(c.in.data(), c.in.data() + c.in_pos, c.in_end - c.in_pos);
      c.in_end -= c.in_pos;
      c.in_pos = 0;
    }
  }

  target_options o_;
  value_pool values_;
  rng rng_;
  int epfd_;
  std::vector<std::pair<std::string, int>> servers_;  // one, or the shards; connections: conn * size + shard
  std::string wait_replicas_, wait_ms_;               // WAIT's arguments (--redis-wait)
  std::vector<char> wrote_;                           // per connection: the slot being started wrote there
  std::vector<std::size_t> written_;                  // those connections, in order
  std::vector<std::string> fields_;
  std::vector<std::unique_ptr<redis_conn>> conns_;
  std::vector<std::string_view> keys_;  // the keys of the scan reply being handled
  std::vector<slot*> completed_;
  std::unique_ptr<uring_io> ring_;  // null: epoll (declared last: gone before the connections)
};

}  // namespace

void prepare_redis(const target_options& o, bool recreate) {
  if (!recreate) return;
  auto servers = o.redis_shards;
  if (servers.empty()) servers.push_back({o.host, o.port});
  for (const auto& [host, port] : servers) {
    redisContext* c = redisConnect(host.c_str(), port);
    if (!c || c->err) {
      std::string e = c ? c->errstr : "out of memory";
      if (c) redisFree(c);
      throw std::runtime_error("redis connect " + host + ":" + std::to_string(port) + ": " + e);
    }
    auto* r = static_cast<redisReply*>(redisCommand(c, "FLUSHALL"));
    const bool ok = r && r->type != REDIS_REPLY_ERROR;
    if (r) freeReplyObject(r);
    redisFree(c);
    if (!ok) throw std::runtime_error("redis FLUSHALL failed on " + host + ":" + std::to_string(port));
  }
}

std::unique_ptr<engine> make_redis_engine(const target_options& o) { return std::make_unique<redis_engine>(o); }

}  // namespace loadgen
