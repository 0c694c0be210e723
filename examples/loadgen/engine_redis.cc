// The redis engine: hiredis contexts driven by poll(2), several commands in flight per
// connection (redisAppendCommand, one write per flush, replies read as they come).
// Records are stored as YCSB's Redis binding stores them: a hash per record (HSET; YCSB
// calls HMSET, the same command since Redis 4) and a sorted set "_indices" scored by the
// key's Java String.hashCode, which scans walk (ZRANGEBYSCORE score +inf LIMIT 0 n, then
// HGETALL of each key). One difference from the binding: a scan's HGETALLs are pipelined
// (one write) instead of one round trip each, which favours redis.
#include <hiredis/hiredis.h>
#include <poll.h>

#include <deque>
#include <stdexcept>

#include "engine.h"

namespace loadgen {

namespace {

constexpr const char* index_key = "_indices";

struct pending {
  slot* s;
  std::size_t op;  // index in s->ops
  enum kind_t : std::uint8_t { final_reply, read_reply, rmw_read, scan_keys, scan_row } kind;
};

struct redis_conn {
  redisContext* c = nullptr;
  std::deque<pending> q;
  ~redis_conn() {
    if (c) redisFree(c);
  }
};

redisContext* dial(const target_options& o) {
  redisContext* c = redisConnect(o.host.c_str(), o.port);
  if (!c || c->err) {
    std::string e = c ? c->errstr : "out of memory";
    if (c) redisFree(c);
    throw std::runtime_error("redis connect " + o.host + ":" + std::to_string(o.port) + ": " + e);
  }
  return c;
}

class redis_engine final : public engine {
 public:
  explicit redis_engine(const target_options& o)
      : keys_(o.keys), values_(o.seed, o.field_length), rng_(o.seed * 7919 + 3) {
    for (int i = 0; i < field_count; ++i) fields_.push_back(field_name(i));
    for (int i = 0; i < o.connections; ++i) {
      auto c = std::make_unique<redis_conn>();
      c->c = dial(o);
      conns_.push_back(std::move(c));
    }
    pfds_.resize(conns_.size());
  }

  void start(slot& s) override {
    s.ok.assign(s.ops.size(), 1);
    s.rows.assign(s.ops.size(), 0);
    s.calls_pending = 0;
    auto& c = *conns_[static_cast<std::size_t>(s.conn)];
    for (std::size_t i = 0; i < s.ops.size(); ++i) issue(c, s, i);
    flush(c);
  }

  void wait(std::vector<slot*>& done, std::int64_t deadline_ns) override {
    for (;;) {
      nfds_t n = 0;
      for (std::size_t i = 0; i < conns_.size(); ++i) {
        pfds_[i] = {conns_[i]->c->fd, static_cast<short>(conns_[i]->q.empty() ? 0 : POLLIN), 0};
        ++n;
      }
      std::int64_t left = deadline_ns - now_ns();
      const int timeout = completed_.empty() ? static_cast<int>(std::max<std::int64_t>(0, (left + 999999) / 1000000)) : 0;
      int r = ::poll(pfds_.data(), n, timeout);
      if (r > 0) {
        for (std::size_t i = 0; i < conns_.size(); ++i)
          if (pfds_[i].revents & (POLLIN | POLLERR | POLLHUP)) read_replies(*conns_[i]);
      }
      if (!completed_.empty() || now_ns() >= deadline_ns) break;
    }
    for (auto* s : completed_) done.push_back(s);
    completed_.clear();
  }

 private:
  void issue(redis_conn& c, slot& s, std::size_t i) {
    const operation& op = s.ops[i];
    const std::string key = build_key_name(op.keynum, keys_);
    switch (op.kind) {
      case op_kind::read:
        redisAppendCommand(c.c, "HGETALL %b", key.data(), key.size());
        push(c, s, i, pending::read_reply);
        break;
      case op_kind::rmw:
        redisAppendCommand(c.c, "HGETALL %b", key.data(), key.size());
        push(c, s, i, pending::rmw_read);
        break;
      case op_kind::update: {
        const auto& f = fields_[static_cast<std::size_t>(op.field)];
        const auto& v = values_.pick(rng_);
        redisAppendCommand(c.c, "HSET %b %b %b", key.data(), key.size(), f.data(), f.size(), v.data(), v.size());
        push(c, s, i, pending::final_reply);
        break;
      }
      case op_kind::insert: {
        const char* argv[2 + 2 * field_count];
        std::size_t lens[2 + 2 * field_count];
        argv[0] = "HSET";
        lens[0] = 4;
        argv[1] = key.data();
        lens[1] = key.size();
        for (int f = 0; f < field_count; ++f) {
          const auto& v = values_.pick(rng_);
          argv[2 + 2 * f] = fields_[static_cast<std::size_t>(f)].data();
          lens[2 + 2 * f] = fields_[static_cast<std::size_t>(f)].size();
          argv[3 + 2 * f] = v.data();
          lens[3 + 2 * f] = v.size();
        }
        redisAppendCommandArgv(c.c, 2 + 2 * field_count, argv, lens);
        push(c, s, i, pending::final_reply);
        const std::string score = std::to_string(java_string_hash(key));
        redisAppendCommand(c.c, "ZADD %s %s %b", index_key, score.c_str(), key.data(), key.size());
        push(c, s, i, pending::final_reply);
        break;
      }
      case op_kind::scan: {
        const std::string score = std::to_string(java_string_hash(key));
        redisAppendCommand(c.c, "ZRANGEBYSCORE %s %s +inf LIMIT 0 %d", index_key, score.c_str(), op.scan_length);
        push(c, s, i, pending::scan_keys);
        break;
      }
      default: break;
    }
  }

  void push(redis_conn& c, slot& s, std::size_t i, pending::kind_t k) {
    c.q.push_back({&s, i, k});
    ++s.calls_pending;
  }

  static void flush(redis_conn& c) {
    int done = 0;
    while (!done)
      if (redisBufferWrite(c.c, &done) != REDIS_OK) throw std::runtime_error(std::string("redis write: ") + c.c->errstr);
  }

  void read_replies(redis_conn& c) {
    if (redisBufferRead(c.c) != REDIS_OK) throw std::runtime_error(std::string("redis read: ") + c.c->errstr);
    bool wrote = false;
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(c.c->reader, &raw) != REDIS_OK) throw std::runtime_error("redis: protocol error");
      if (!raw) break;
      auto* r = static_cast<redisReply*>(raw);
      if (c.q.empty()) {
        freeReplyObject(r);
        throw std::runtime_error("redis: unexpected reply");
      }
      pending p = c.q.front();
      c.q.pop_front();
      slot& s = *p.s;
      const bool err = r->type == REDIS_REPLY_ERROR;
      if (err) s.ok[p.op] = 0;
      switch (p.kind) {
        case pending::read_reply:
          if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) s.ok[p.op] = 0;
          break;
        case pending::rmw_read: {
          s.mid_ns = now_ns();
          if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
            s.ok[p.op] = 0;
            break;
          }
          const operation& op = s.ops[p.op];
          const std::string key = build_key_name(op.keynum, keys_);
          const auto& f = fields_[static_cast<std::size_t>(op.field)];
          const auto& v = values_.pick(rng_);
          redisAppendCommand(c.c, "HSET %b %b %b", key.data(), key.size(), f.data(), f.size(), v.data(), v.size());
          push(c, s, p.op, pending::final_reply);
          wrote = true;
          break;
        }
        case pending::scan_keys:
          if (r->type == REDIS_REPLY_ARRAY) {
            for (std::size_t k = 0; k < r->elements; ++k) {
              auto* e = r->element[k];
              redisAppendCommand(c.c, "HGETALL %b", e->str, static_cast<std::size_t>(e->len));
              push(c, s, p.op, pending::scan_row);
              wrote = true;
            }
          }
          break;
        case pending::scan_row:
          if (r->type == REDIS_REPLY_ARRAY && r->elements > 0) ++s.rows[p.op];
          break;
        default: break;
      }
      freeReplyObject(r);
      if (--s.calls_pending == 0) {
        s.end_ns = now_ns();
        if (s.mid_ns == 0) s.mid_ns = s.end_ns;
        completed_.push_back(&s);
      }
    }
    if (wrote) flush(c);
  }

  key_format keys_;
  value_pool values_;
  rng rng_;
  std::vector<std::string> fields_;
  std::vector<std::unique_ptr<redis_conn>> conns_;
  std::vector<pollfd> pfds_;
  std::vector<slot*> completed_;
};

}  // namespace

void prepare_redis(const target_options& o, bool recreate) {
  if (!recreate) return;
  redisContext* c = dial(o);
  auto* r = static_cast<redisReply*>(redisCommand(c, "FLUSHALL"));
  const bool ok = r && r->type != REDIS_REPLY_ERROR;
  if (r) freeReplyObject(r);
  redisFree(c);
  if (!ok) throw std::runtime_error("redis FLUSHALL failed");
}

std::unique_ptr<engine> make_redis_engine(const target_options& o) { return std::make_unique<redis_engine>(o); }

}  // namespace loadgen
