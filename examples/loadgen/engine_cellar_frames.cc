// The cellar-over-frames engine (rpc/frames.h): the server's lean data path, driven by
// epoll, with each turn's reads and sends made together through an io_uring (uring_io.h, as
// the redis engine does; a recv(2) and a send(2) each with `--io-uring false` or TLS).
// Each connection has a buffer of requests, written once per turn of the loop; a
// slot's reads, updates and inserts go in one batch request, each scan in one scan
// request whose reply carries its rows. Replies are matched to requests by id.
//
// The cluster target (o.route set): each of the engine's connections is one socket to every
// node; a slot's batch is split by the node owning each row (route/router.h, as the nodes
// route), each part sent to that node, and each scan to the owner of its start row.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "cellar.capnp.h"
#include "cellar_batch.h"
#include "engine.h"
#include "epoll_out.h"
#include "route/router.h"
#include "rpc/frames.h"
#include "rpc/socket_stream.h"
#include "rpc/tls.h"
#include "uring_io.h"

namespace loadgen {

namespace {

capnp::Data::Reader bytes(const std::string& s) { return {reinterpret_cast<const kj::byte*>(s.data()), s.size()}; }

struct frame_conn {
  int fd = -1;
  std::unique_ptr<cellar::rpc::tls_socket> tls;  // null: plain TCP
  std::vector<unsigned char> out;                // requests not yet written, from out_pos
  std::size_t out_pos = 0;
  std::vector<capnp::word> in;  // replies read, from byte in_pos to in_end
  std::size_t in_pos = 0, in_end = 0;
  bool polling_out = false;
  bool greeted = false;  // the server's eight bytes (rpc/frames.h) have come
  uring_slot io;         // with the ring: its send in a turn
  ~frame_conn() {
    if (fd >= 0) ::close(fd);
  }
};

struct call {
  slot* s;
  frame_conn* c;
  std::vector<std::size_t> idx;  // the slot's ops in this request
  bool scan, second;
};

class cellar_frames_engine final : public engine {
 public:
  explicit cellar_frames_engine(const target_options& o)
      : o_(o), scratch_(4096), batch_(o), epfd_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (epfd_ < 0) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
    ro_.traversalLimitInWords = (256ull << 20) / 8;
    std::memset(scratch_.data(), 0, scratch_.size() * sizeof(capnp::word));
    // Connection i to node n is conns_[i * nodes_ + n].
    std::vector<std::pair<std::string, std::uint16_t>> nodes;
    if (o.route) {
      for (const auto& a : o.route->addresses) {
        auto node = cellar::rpc::split_host_port(a);
        if (!node || node->second == 0) throw std::runtime_error("a node's address is not host:port: '" + a + "'");
        nodes.push_back(std::move(*node));
      }
    } else {
      nodes.emplace_back(o.host, static_cast<std::uint16_t>(o.port));
    }
    nodes_ = nodes.size();
    parts_.resize(nodes_);
    for (int i = 0; i < o.connections * static_cast<int>(nodes_); ++i) {
      const auto& [host, port] = nodes[static_cast<std::size_t>(i) % nodes_];
      auto c = std::make_unique<frame_conn>();
      c->fd = cellar::rpc::connect_socket(host, port).release();
      if (!o.tls_ca.empty()) {
        auto t = cellar::rpc::tls_socket::handshake(c->fd, o.tls_ca, host);
        if (!t) throw std::runtime_error("cannot connect to cellar-server: " + t.error().message());
        c->tls = std::move(t.value());
      }
      c->in.resize(8192);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.ptr = c.get();
      if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, c->fd, &ev) != 0)
        throw std::runtime_error(std::string("epoll_ctl: ") + std::strerror(errno));
      c->out.assign(cellar::rpc::frame_magic, cellar::rpc::frame_magic + sizeof cellar::rpc::frame_magic);
      capnp::MallocMessageBuilder m(kj::arrayPtr(scratch_.data(), scratch_.size()));
      auto req = m.initRoot<cellar::wire::Request>();
      req.setId(0);  // login
      req.setLogin(o.token);
      cellar::rpc::append_frame(c->out, m);
      conns_.push_back(std::move(c));
    }
    // Wait up to 10 s for every login reply. epoll_wait can end early with EINTR (a signal,
    // or io_uring task work queued on this thread), which only shortens one wait.
    std::size_t logged_in = 0;
    const std::int64_t deadline = now_ns() + 10'000'000'000;
    while (logged_in < conns_.size()) {
      flush_all();
      const std::int64_t left = deadline - now_ns();
      if (left <= 0) throw std::runtime_error("no login reply from cellar-server within 10 s");
      epoll_event evs[64];
      const int n = ::epoll_wait(epfd_, evs, 64, static_cast<int>((left + 999999) / 1000000));
      if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("epoll_wait: ") + std::strerror(errno));
      for (int e = 0; e < n; ++e)
        read_replies(*static_cast<frame_conn*>(evs[e].data.ptr), [&](cellar::wire::Reply::Reader r) {
          if (r.getError().getCode() != 0)
            throw std::runtime_error(std::string("login: ") + r.getError().getMessage().cStr());
          ++logged_in;
        });
    }
    if (o.io_uring && o.tls_ca.empty()) ring_ = uring_io::open();
  }

  ~cellar_frames_engine() noexcept override { ::close(epfd_); }

  void start(slot& s) override {
    if (nodes_ == 1) {
      auto& c = *conns_[static_cast<std::size_t>(s.conn)];
      start_slot(
          s, [&](std::size_t i) { send_scan(c, s, i); },
          [&](std::vector<std::size_t> batched) { send_batch(c, s, std::move(batched), false); });
      return;
    }
    start_slot(
        s, [&](std::size_t i) { send_scan(conn_of(s, i), s, i); },
        [&](std::vector<std::size_t> batched) {
          // One part per owner node, in batch order within each.
          for (auto& p : parts_) p.clear();
          for (auto i : batched) parts_[node_of(s.ops[i].keynum)].push_back(i);
          for (std::size_t n = 0; n < nodes_; ++n)
            if (!parts_[n].empty())
              send_batch(*conns_[static_cast<std::size_t>(s.conn) * nodes_ + n], s, parts_[n], false);
        });
  }

  const char* io() const override { return ring_ ? "io_uring" : "epoll"; }

  void wait(std::vector<slot*>& done, std::int64_t deadline_ns) override {
    if (ring_) {
      wait_ring(deadline_ns);
    } else {
      epoll_wait_loop<frame_conn>(
          epfd_, deadline_ns, now_ns, [this] { flush_all(); }, [this] { return !completed_.empty(); },
          [this](frame_conn& c, std::uint32_t events) {
            if (events & EPOLLOUT) flush(c);
            if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
              read_replies(c, [this](cellar::wire::Reply::Reader r) { on_reply(r); });
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
          [](frame_conn& c) {
            if (c.in_end == c.in.size() * sizeof(capnp::word)) c.in.resize(c.in.size() * 2);
            return std::pair<void*, std::size_t>(reinterpret_cast<unsigned char*>(c.in.data()) + c.in_end,
                                                 c.in.size() * sizeof(capnp::word) - c.in_end);
          },
          [this](frame_conn& c, std::size_t n) {
            c.in_end += n;
            auto on = [this](cellar::wire::Reply::Reader r) { on_reply(r); };
            parse_replies(c, on);
          },
          "cellar-server");
      if (!completed_.empty() || left <= 0) break;
    }
  }

  // Cluster target: the index of the node owning key number `keynum`'s row.
  std::size_t node_of(std::int64_t keynum) {
    key_ = build_key_name(keynum, o_.keys);
    return o_.route->owner[cellar::detail::partition_of(o_.route->spec, key_)];
  }
  frame_conn& conn_of(const slot& s, std::size_t i) {
    return *conns_[static_cast<std::size_t>(s.conn) * nodes_ + node_of(s.ops[i].keynum)];
  }

  std::uint64_t queue(frame_conn& c, capnp::MallocMessageBuilder& m) {
    const std::uint64_t id = next_id_++;
    m.getRoot<cellar::wire::Request>().setId(id);
    cellar::rpc::append_frame(c.out, m);
    return id;
  }

  // Reads, updates and inserts (and the reads of rmw when !second; the writes when second).
  void send_batch(frame_conn& c, slot& s, std::vector<std::size_t> idx, bool second) {
    capnp::MallocMessageBuilder m(kj::arrayPtr(scratch_.data(), scratch_.size()));  // zeroes what it used when it goes
    auto b = m.initRoot<cellar::wire::Request>().initBatch();
    b.setTable(o_.table);
    batch_.fill(b.initActions(static_cast<unsigned>(idx.size())), s, idx, second);
    ++s.calls_pending;
    calls_.emplace(queue(c, m), call{&s, &c, std::move(idx), false, second});
  }

  void send_scan(frame_conn& c, slot& s, std::size_t i) {
    const operation& op = s.ops[i];
    capnp::MallocMessageBuilder m(kj::arrayPtr(scratch_.data(), scratch_.size()));
    auto r = m.initRoot<cellar::wire::Request>().initScan();
    r.setTable(o_.table);
    const std::string key = build_key_name(op.keynum, o_.keys);
    auto sc = r.initScan();
    sc.setStart(bytes(key));
    sc.setLimit(op.scan_length);
    r.setCount(static_cast<std::uint32_t>(op.scan_length));
    ++s.calls_pending;
    calls_.emplace(queue(c, m), call{&s, &c, {i}, true, false});
  }

  void on_reply(cellar::wire::Reply::Reader r) {
    auto it = calls_.find(r.getId());
    if (it == calls_.end()) throw std::runtime_error("a reply to no request: id " + std::to_string(r.getId()));
    call k = std::move(it->second);
    calls_.erase(it);
    slot& s = *k.s;
    const bool call_ok = r.getError().getCode() == 0;
    if (!call_ok && s.why.empty())
      s.why = "code " + std::to_string(r.getError().getCode()) + ": " + std::string(r.getError().getMessage().cStr());
    if (k.scan) {
      const std::size_t i = k.idx[0];
      if (!call_ok || !r.getDone()) s.ok[i] = 0;
      s.rows[i] = static_cast<std::int32_t>(r.getRows().size());
      return call_done(s);
    }
    auto rmw = take_batch_answer(s, k.idx, k.second, call_ok, r.getResults());
    if (!rmw.empty()) {
      s.mid_ns = now_ns();
      send_batch(*k.c, s, std::move(rmw), true);
    } else if (!k.second) {
      s.mid_ns = now_ns();
    }
    call_done(s);
  }

  void call_done(slot& s) {
    if (--s.calls_pending > 0) return;
    s.end_ns = now_ns();
    completed_.push_back(&s);
  }

  void flush_all() {
    for (auto& c : conns_)
      if (c->out_pos < c->out.size()) flush(*c);
  }

  void flush(frame_conn& c) {
    flush_queued(
        epfd_, c,
        [&](const auto* p, std::size_t n) { return c.tls ? c.tls->send(p, n) : ::send(c.fd, p, n, MSG_NOSIGNAL); },
        "cellar-server");
  }

  // Reads what the socket has; with TLS, also what the TLS layer has decrypted beyond the
  // buffer (epoll cannot see that).
  template <class F>
  void read_replies(frame_conn& c, F on) {
    do read_once(c, on);
    while (c.tls && c.tls->pending() > 0);
  }

  template <class F>
  void read_once(frame_conn& c, F& on) {
    auto* b = reinterpret_cast<unsigned char*>(c.in.data());
    if (c.in_end == c.in.size() * sizeof(capnp::word)) {
      c.in.resize(c.in.size() * 2);
      b = reinterpret_cast<unsigned char*>(c.in.data());
    }
    const std::size_t room = c.in.size() * sizeof(capnp::word) - c.in_end;
    const ssize_t n = c.tls ? c.tls->recv(b + c.in_end, room) : ::recv(c.fd, b + c.in_end, room, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n < 0) throw std::runtime_error(std::string("recv from cellar-server: ") + std::strerror(errno));
    if (n == 0) throw std::runtime_error("cellar-server closed the connection");
    c.in_end += static_cast<std::size_t>(n);
    parse_replies(c, on);
  }

  // Handles every whole reply in c.in (after the server's greeting), keeping a partial one
  // at the buffer's start.
  template <class F>
  void parse_replies(frame_conn& c, F& on) {
    auto* b = reinterpret_cast<unsigned char*>(c.in.data());
    if (!c.greeted) {
      if (c.in_end - c.in_pos < sizeof cellar::rpc::frame_magic) return;
      if (std::memcmp(b + c.in_pos, cellar::rpc::frame_magic, sizeof cellar::rpc::frame_magic) != 0)
        throw std::runtime_error("cellar-server does not speak frames (use --protocol capnp)");
      c.greeted = true;
      c.in_pos += sizeof cellar::rpc::frame_magic;
    }
    for (;;) {
      const std::size_t size = cellar::rpc::frame_size(b + c.in_pos, c.in_end - c.in_pos, ro_);
      if (size == 0) break;
      {
        capnp::FlatArrayMessageReader reader(kj::arrayPtr(c.in.data() + c.in_pos / sizeof(capnp::word),
                                                          size / sizeof(capnp::word)),
                                             ro_);
        on(reader.getRoot<cellar::wire::Reply>());
      }
      c.in_pos += size;
    }
    if (c.in_pos == c.in_end) {
      c.in_pos = c.in_end = 0;
    } else if (c.in_pos > 0) {  // keep the partial reply, at the buffer's start (word-aligned)
      std::memmove(b, b + c.in_pos, c.in_end - c.in_pos);
      c.in_end -= c.in_pos;
      c.in_pos = 0;
    }
  }

  target_options o_;
  capnp::ReaderOptions ro_;
  std::vector<capnp::word> scratch_;  // the first segment of every request built
  batch_writer batch_;
  int epfd_;
  std::vector<std::unique_ptr<frame_conn>> conns_;
  std::size_t nodes_ = 1;                        // sockets per connection: one per node (cluster target)
  std::vector<std::vector<std::size_t>> parts_;  // per node: the ops of a batch being split
  std::string key_;                              // scratch for node_of
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, call> calls_;
  std::vector<slot*> completed_;
  std::unique_ptr<uring_io> ring_;  // null: epoll (declared last: gone before the connections)
};

}  // namespace

std::unique_ptr<engine> make_cellar_frames_engine(const target_options& o) {
  return std::make_unique<cellar_frames_engine>(o);
}

}  // namespace loadgen
