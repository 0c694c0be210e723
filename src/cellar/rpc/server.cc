#include "rpc/server.h"

#include <capnp/serialize.h>
#include <kj/async-io.h>
#include <kj/thread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dispatch/call_order.h"
#include "rpc/connection_guard.h"
#include "rpc/convert.h"
#include "rpc/frame_replies.h"
#include "rpc/frames.h"
#include "rpc/io_ring.h"
#include "rpc/listen.h"
#include "rpc/loop_handoff.h"
#include "rpc/message_stream.h"
#include "rpc/metrics.h"
#include "rpc/rpc_session.h"
#include "rpc/scan_pages.h"
#include "rpc/serve_calls.h"
#include "rpc/socket_stream.h"
#include "rpc/tls.h"

namespace cellar::rpc {

namespace {

using namespace serving;

// A connection speaking frames (schemas/cellar.capnp, "frames"): every request of a read is
// served before the next read, in place when it may be (serve_batch), and each reply is one
// message; the message stream sends the replies of a loop turn in one write.
class frame_session final : private kj::TaskSet::ErrorHandler {
 public:
  frame_session(shared_state& st, buffered_message_stream& messages, capnp::ReaderOptions ro, connection_guard& guard,
                std::shared_ptr<connection_state> conn)
      : st_(st),
        messages_(messages),
        ro_(ro),
        guard_(guard),
        conn_(std::move(conn)),
        scratch_(kj::heapArray<capnp::word>(scratch_words)),
        tasks_(*this) {
    std::memset(scratch_.begin(), 0, scratch_.size() * sizeof(capnp::word));
    // The same eight bytes back, before any reply: a client that gets anything else (an
    // RPC-only server answers with an Abort message) knows frames are not spoken here.
    write_bytes(kj::arrayPtr(frame_magic, sizeof frame_magic));
  }

  // Resolves once the client has closed its side and every reply is written.
  kj::Promise<void> serve() { return messages_.direct() ? serve_direct() : serve_buffered(); }

 private:
  static constexpr std::size_t scratch_words = 1024;  // 8 KB: a reply of a few rows

  // Every request read so far, in order. Their arrival is now: one clock reading serves
  // them all, and a request's recorded time includes the wait for those before it.
  // The table lookups of those requests share one cache, dropped afterwards so that an
  // idle connection keeps no table alive (store/catalog_map.h: table_lookup_cache).
  //
  // A point operation waits on four cache misses in a row (cell_map::prefetch_step), so
  // before serving request i this starts the last of those loads for request i+1, the one
  // before for i+2 and the first for i+3: each request then finds its row's lines loaded
  // while the ones before it were served. Each frame is decoded once, `ahead` frames before
  // it is served, into the ring slot it is served from. Frames are taken out first (they
  // stay in place in the stream's buffer until its next read); a malformed one fails the
  // session after the frames before it are served, as when they were served one by one.
  void handle_buffered() {
    const auto arrived = metrics::clock::now();
    frames_.clear();
    kj::Maybe<kj::Exception> malformed = kj::runCatchingExceptions([this] {
      for (;;) {
        KJ_IF_MAYBE (words, messages_.take_buffered(ro_)) {
          frames_.push_back(*words);
        } else {
          break;
        }
      }
    });
    const std::size_t n = frames_.size();
    const bool hint = n > 1 && logged_in_;
    std::size_t decoded_upto = 0;
    using step = detail::cell_map::prefetch_step;
    for (std::size_t i = 0; i < n; ++i) {
      for (; decoded_upto < std::min(n, i + ahead + 1); ++decoded_upto) {
        decoded& d = ring_[decoded_upto % ring_.size()];
        if (decoded_upto == i) {  // the first: nothing before it to serve, so it may throw now
          decode(frames_[i], d);
          d.ok = true;
        } else {
          d.ok = kj::runCatchingExceptions([&] { decode(frames_[decoded_upto], d); }) == nullptr;
        }
        d.at = hint ? locate(d) : point{};
      }
      if (hint) {
        prefetch(ring_[(i + 3) % ring_.size()], i + 3 < n, step::probe);
        prefetch(ring_[(i + 2) % ring_.size()], i + 2 < n, step::node);
        prefetch(ring_[(i + 1) % ring_.size()], i + 1 < n, step::cells);
      }
      decoded& d = ring_[i % ring_.size()];
      if (d.ok) {
        handle(d, arrived);
      } else {
        decoded again;
        decode(frames_[i], again);  // throws what it threw ahead, now that those before are served
        handle(again, arrived);
      }
    }
    for (std::size_t k = 0; k < std::min(n, ring_.size()); ++k) ring_[k].reader = nullptr;
    tables_.clear();
    held_.clear();
    KJ_IF_MAYBE (e, malformed) {
      kj::throwFatalException(kj::mv(*e));
    }
  }

  // The row of a batch of one get or put and the partition of this process that holds it,
  // resolved once for the three prefetch steps; a null partition for anything else, for a
  // frame that does not decode (handle() answers it), or for a row of another node.
  struct point {
    detail::local_partition* part = nullptr;
    std::string_view row;
  };
  // A frame's request, decoded once. The readers point into `reader`, and it into the
  // frame's words.
  struct decoded {
    kj::Maybe<capnp::FlatArrayMessageReader> reader;
    bool ok = false;  // false: decode() threw
    wire::Request::Reader req;
    // Of a batch (req.which() == BATCH):
    wire::BatchRequest::Reader batch;
    capnp::List<wire::Action>::Reader actions;
    capnp::Text::Reader table;
    point at;  // what to prefetch for it
  };
  static constexpr std::size_t ahead = 3;  // the prefetch's reach: the ring holds 1 + ahead

  // Throws what capnp throws for a malformed frame.
  void decode(kj::ArrayPtr<const capnp::word> words, decoded& d) {
    auto& reader = d.reader.emplace(words, ro_);
    d.req = reader.getRoot<wire::Request>();
    if (d.req.which() != wire::Request::BATCH) return;
    d.batch = d.req.getBatch();
    d.actions = d.batch.getActions();  // once: each get of a list checks it again
    d.table = d.batch.getTable();
  }
  point locate(const decoded& d) {
    if (!d.ok || d.req.which() != wire::Request::BATCH || d.actions.size() != 1) return {};
    point p;
    KJ_IF_MAYBE (e, kj::runCatchingExceptions([&] {
                   auto a = d.actions[0];
                   capnp::Data::Reader row;
                   if (a.which() == wire::Action::GET)
                     row = a.getGet().getRow();
                   else if (a.which() == wire::Action::PUT)
                     row = a.getPut().getRow();
                   else
                     return;
                   p.row = std::string_view(reinterpret_cast<const char*>(row.begin()), row.size());
                 })) {
      (void)e;
      return {};
    }
    if (p.row.data() == nullptr) return {};
    const std::string_view table(d.table.cStr(), d.table.size());
    p.part = st_.data.local_partition_of(table, tables_, p.row, held_);
    return p;
  }
  static void prefetch(const decoded& d, bool exists, detail::cell_map::prefetch_step step) {
    if (exists && d.at.part != nullptr) d.at.part->prefetch_row(d.at.row, step);
  }

  // A plain socket: read, serve every request read, read again, with no promise until the
  // socket is empty (then one, for its readable edge). The replies go out with the stream's
  // end-of-turn flush, as every connection's do: one write per connection per loop turn,
  // sent together, so a client of many connections finds many replies per wake instead of
  // waking for one reply at a time. A
  // client that keeps the socket full gets `reads_per_turn` reads, then the other
  // connections' turn. With the loop's io_uring (io_ring.h) the read after a readable edge
  // goes with the other connections' reads in one submission at the end of the turn.
  //   got: the outcome of a read already made (read_now()'s values), or read_next.
  static constexpr int read_next = -2;
  kj::Promise<void> serve_direct(int got = read_next) {
    static constexpr int reads_per_turn = 8;
    for (int reads = 0;; got = read_next) {
      if (got == read_next) {
        handle_buffered();
        if (messages_.writers_held()) {
          KJ_IF_MAYBE (e, messages_.write_error()) {
            return kj::cp(*e);
          }
          return take_backpressure().then([this] { return serve_direct(); });
        }
        backpressure_ = nullptr;
        got = messages_.read_now();
      }
      switch (got) {
        case 1:
          if (++reads < reads_per_turn) continue;
          return kj::evalLater([this] { return serve_direct(); });
        case 0: return tasks_.onEmpty().then([this] { return messages_.end(); });
        default:
          if (messages_.has_ring())
            return messages_.when_readable().then([this] { return messages_.read_ring(); }).then([this](int next) {
              return serve_direct(next);
            });
          return messages_.when_readable().then([this] { return serve_direct(); });
      }
    }
  }

  // Any stream (TLS): the same steps through the stream's promises.
  kj::Promise<void> serve_buffered() {
    handle_buffered();
    return take_backpressure()
        .then([this] { return messages_.read_some(); })
        .then([this](bool more) -> kj::Promise<void> {
          if (more) return serve_buffered();
          return tasks_.onEmpty().then([this] { return messages_.end(); });
        });
  }

  void handle(const decoded& d, metrics::clock::time_point t0) {
    const auto req = d.req;
    const std::uint64_t id = req.getId();
    switch (req.which()) {
      case wire::Request::LOGIN: {
        auto token = req.getLogin();
        const auto s = guard_.login(std::string_view(token.cStr(), token.size()), "frames");
        if (s) logged_in_ = true;
        send_error(id, s);
        st_.m.record(protocol::frames, operation::login, s.code(), t0);
        return;
      }
      case wire::Request::BATCH: {
        const auto actions = d.actions;
        const auto op = batch_operation(actions);
        if (!logged_in_) {
          st_.m.record(protocol::frames, op, code::permission_denied, t0);
          return send_error(id, not_logged_in());
        }
        const auto table = d.table;
        if (actions.size() == 1 &&
            (get_in_place(id, t0, op, table, actions[0]) || put_in_place(id, t0, op, table, actions[0])))
          return;
        // Answered in place (the common case): nothing to keep.
        auto waiting = serve_batch(st_, conn_, table, actions, d.batch.getNoForward(),
                                   [this, id, t0, op](const status& s, std::vector<op_result> r) {
                                     st_.m.record_batch(protocol::frames, op, s, r, t0);
                                     send_batch_reply(id, s, r);
                                   });
        KJ_IF_MAYBE (p, waiting) {
          tasks_.add(kj::mv(*p));
        }
        return;
      }
      case wire::Request::SCAN: {
        auto sc = req.getScan();
        const std::uint32_t count = sc.getCount();
        status refused = !logged_in_ ? not_logged_in()
                         : count == 0 || count > 10000
                             ? status{code::invalid_argument,
                                      "a scan request's count must be 1 to 10000, not " + std::to_string(count)}
                             : status::ok();
        if (!refused) {
          st_.m.record(protocol::frames, operation::scan, refused.code(), t0);
          return send_error(id, refused);
        }
        tasks_.add(serve_scan(st_, conn_, sc.getTable(), sc.getScan(), scope_of(sc), count,
                              [this, id, t0](const status& s, std::shared_ptr<scanner>,
                                             std::shared_ptr<scan_page_result> page) {
                                st_.m.record(protocol::frames, operation::scan, s ? page->rows.code() : s.code(), t0);
                                if (!s) return send_error(id, s);
                                send(page_words(*page), [&](wire::Reply::Builder out) {
                                  out.setId(id);
                                  if (!page->rows) {
                                    to_wire(page->rows.error(), out.initError());
                                    out.setDone(true);
                                    return;
                                  }
                                  to_wire(status::ok(), out.initError());
                                  auto rows = out.initRows(static_cast<unsigned>(page->rows->size()));
                                  for (unsigned i = 0; i < rows.size(); ++i) to_wire((*page->rows)[i], rows[i]);
                                  out.setDone(page->done);
                                  set_filter_end(out, *page);
                                });
                              }));
        return;
      }
    }
    send_error(id, status{code::unsupported, "unknown request kind " + std::to_string(static_cast<int>(req.which()))});
  }

  // A batch of one get, answered straight from the partition's cells when it can be
  // read in place now (data_path::read_views): the reply is built from views of the
  // cells, with no row_result in between. False: nothing was sent, serve_batch answers.
  bool get_in_place(std::uint64_t id, metrics::clock::time_point t0, operation op, capnp::Text::Reader table,
                    wire::Action::Reader action) {
    if (action.which() != wire::Action::GET || st_.opts.max_batch < 1 || conn_->in_flight >= st_.opts.max_in_flight)
      return false;
    // Decoded into the session's own get: its row's storage serves the next.
    auto& g = std::get<get>(views_get_);
    from_wire(action.getGet(), g);
    struct context {
      frame_session* self;
      std::uint64_t id;
      std::string_view row;
    } ctx{this, id, g.row};
    auto use = [](void* arg, bool exists, const std::vector<detail::read_cell_view>& cells) {
      auto& c = *static_cast<context*>(arg);
      c.self->send(16 + get_views_words(c.row, cells), [&](wire::Reply::Builder out) {
        out.setId(c.id);
        to_wire(status::ok(), out.initError());
        get_views_to_wire(c.row, exists, cells, out.initResults(1)[0]);
      });
    };
    const bool read = st_.data.read_views(std::string_view(table.cStr(), table.size()), tables_, views_get_,
                                          conn_->order, views_, use, &ctx);
    if (views_.capacity() > kept_views) {  // a wide row's views are not kept for the rest of the connection
      views_.clear();
      views_.shrink_to_fit();
    }
    if (!read) return false;
    st_.m.record_action(op, code::ok);
    st_.m.record(protocol::frames, op, code::ok, t0);
    return true;
  }

  // A batch of one put, decoded into the session's own put (its strings keep their storage)
  // and run in place now (data_path::write_in_place). False: nothing ran, nothing was
  // sent; serve_batch answers.
  bool put_in_place(std::uint64_t id, metrics::clock::time_point t0, operation op, capnp::Text::Reader table,
                    wire::Action::Reader action) {
    if (action.which() != wire::Action::PUT || st_.opts.max_batch < 1 || conn_->in_flight >= st_.opts.max_in_flight)
      return false;
    auto& p = std::get<put>(put_req_.ops[0]);
    from_wire(action.getPut(), p);
    // A large put's storage is not kept for the rest of the connection.
    KJ_DEFER(if (put_bytes(p) > kept_put_bytes) p = put{});
    if (!st_.data.write_in_place(std::string_view(table.cStr(), table.size()), tables_, put_req_, conn_->order,
                                 put_reply_))
      return false;
    st_.m.record_batch(protocol::frames, op, status::ok(), put_reply_.results, t0);
    send_batch_reply(id, status::ok(), put_reply_.results);
    return true;
  }

  static constexpr std::size_t kept_views = 1024;  // cells
  static constexpr std::size_t kept_put_bytes = 64 << 10;
  static std::size_t put_bytes(const put& p) {
    std::size_t n = p.row.capacity() + p.entries.capacity() * sizeof(put::entry);
    for (const auto& e : p.entries) n += e.family.capacity() + e.qualifier.capacity() + e.value.capacity();
    return n;
  }

  void send_batch_reply(std::uint64_t id, const status& s, const std::vector<op_result>& r) {
    if (ok_reply_.enabled() && plain_ok_reply::fits(s, r)) {
      const auto& bytes = ok_reply_.bytes(id);
      write_bytes(kj::arrayPtr(bytes.data(), bytes.size()));
      return;
    }
    std::uint64_t words = 16;
    for (const auto& x : r) words += wire_words(x);
    send(words, [&](wire::Reply::Builder out) { fill_batch_reply(out, id, s, r); });
  }

  // Queues bytes that are whole frames (or the greeting).
  void write_bytes(kj::ArrayPtr<const unsigned char> bytes) {
    messages_.queue(
        [&](std::vector<unsigned char>& out) {
          out.insert(out.end(), bytes.begin(), bytes.end());
          return true;
        },
        backpressure_);
  }

  // What the next read waits for: the promise a write left (room in the queue, or the
  // stream's error), else room now.
  kj::Promise<void> take_backpressure() {
    KJ_IF_MAYBE (p, backpressure_) {
      auto written = kj::mv(*p);
      backpressure_ = nullptr;
      return written;
    }
    return messages_.when_room();
  }

  static status not_logged_in() { return {code::permission_denied, "log in first: the first request must be login"}; }

  void send_error(std::uint64_t id, const status& s) {
    send(16, [&](wire::Reply::Builder out) {
      out.setId(id);
      to_wire(s, out.initError());
    });
  }

  // Builds a reply of about `words` words (in the scratch segment when it fits) and
  // queues it; the next read waits while the stream holds too much unsent.
  template <class Fill>
  void send(std::uint64_t words, Fill fill) {
    auto queue = [&](capnp::MallocMessageBuilder& b) {
      fill(b.initRoot<wire::Reply>());
      const auto segments = b.getSegmentsForOutput();
      messages_.queue(
          [&](std::vector<unsigned char>& out) {
            append_segments(out, segments);
            return true;
          },
          backpressure_);
    };
    if (words + 8 <= scratch_.size()) {
      capnp::MallocMessageBuilder b(scratch_);  // zeroes what it used when it goes
      queue(b);
    } else {
      capnp::MallocMessageBuilder b(static_cast<unsigned>(std::min<std::uint64_t>(words + 8, 1u << 28)));
      queue(b);
    }
  }

  void taskFailed(kj::Exception&& e) override {
    spdlog::warn("cellar-server: a frame request failed: {}", e.getDescription().cStr());
  }

  shared_state& st_;
  buffered_message_stream& messages_;
  capnp::ReaderOptions ro_;
  connection_guard& guard_;
  std::shared_ptr<connection_state> conn_;
  kj::Array<capnp::word> scratch_;
  std::vector<detail::read_cell_view> views_;            // get_in_place's cells, kept for the next
  batch_op views_get_{get{}};                            // get_in_place's get, kept for the next
  detail::batch_request put_req_{0, {batch_op{put{}}}};  // put_in_place's put, kept for the next
  detail::batch_reply put_reply_;                        // and its result
  detail::table_lookup_cache tables_;                    // the in-place calls' table, per read
  std::vector<kj::ArrayPtr<const capnp::word>> frames_;  // handle_buffered's, kept for the next
  std::array<decoded, 1 + ahead> ring_;                  // and the next ones, decoded
  std::vector<detail::runtime_ptr> held_;                // what keeps ring_'s partitions alive
  plain_ok_reply ok_reply_;                              // a put's reply, copied
  bool logged_in_ = false;
  // Set by a write that found the queue over its bound or the stream failed (null: none).
  kj::Maybe<kj::Promise<void>> backpressure_;
  kj::TaskSet tasks_;  // requests waiting at partition actors
};

// An accepted socket, before and after its first bytes say which protocol it speaks.
struct accepted_connection {
  accepted_connection(kj::Own<kj::AsyncIoStream> s, const server_options& o, std::string peer)
      : stream(kj::mv(s)), messages(*stream), guard(o, std::move(peer)) {}
  kj::Own<kj::AsyncIoStream> stream;
  buffered_message_stream messages;
  connection_guard guard;
  std::shared_ptr<connection_state> calls = std::make_shared<connection_state>();
  kj::Maybe<kj::Own<rpc_session>> rpc;
  kj::Maybe<kj::Own<frame_session>> frames;
};

// Serves `c` until it closes: frames if it starts with the frame magic, RPC otherwise.
kj::Promise<void> serve_connection(accepted_connection& c, shared_state& st, capnp::ReaderOptions ro) {
  return c.messages.peek(sizeof frame_magic)
      .then([&c, &st, ro](kj::ArrayPtr<const unsigned char> head) -> kj::Promise<void> {
        if (head.size() == 0) return kj::READY_NOW;  // closed before a byte
        if (st.opts.frames && head.size() == sizeof frame_magic &&
            std::memcmp(head.begin(), frame_magic, sizeof frame_magic) == 0) {
          c.messages.skip(sizeof frame_magic);
          st.m.connection_accepted(protocol::frames);
          auto session = kj::heap<frame_session>(st, c.messages, ro, c.guard, c.calls);
          auto served = session->serve();
          c.frames = kj::mv(session);
          return served;
        }
        st.m.connection_accepted(protocol::rpc);
        c.messages.never_hold_writers();  // capnp would queue what waits, out of max_unsent_bytes' sight
        auto session = kj::heap<rpc_session>(c.messages, st, ro, c.guard, c.calls);
        auto done = session->network.onDisconnect();
        c.rpc = kj::mv(session);
        return done;
      });
}

// Serves `c` until it closes, or until the server closes it: after a refused login (once
// the reply is written), when it has been idle for the idle timeout, or when it leaves
// more than max_unsent_bytes of replies unread.
kj::Promise<void> serve_guarded(accepted_connection& c, shared_state& st, capnp::ReaderOptions ro, kj::Timer& timer) {
  auto closing = c.guard.closing().then([&c] { return kj::evalLast([&c] { return c.messages.end(); }); });
  auto unread = c.messages.when_unsent_exceeds(st.opts.max_unsent_bytes, [&c, &st](std::uint64_t n) {
    spdlog::warn(
        "cellar-server: closing the connection from {}: it does not read its replies ({} bytes unsent, limit {})",
        c.guard.peer(), n, st.opts.max_unsent_bytes);
  });
  // A refused connection gets 10 s to log in and hear why.
  auto limit = st.opts.idle_timeout;
  if (c.guard.refused() && (limit.count() == 0 || limit > std::chrono::seconds(10))) limit = std::chrono::seconds(10);
  kj::Promise<void> idle = kj::NEVER_DONE;
  if (limit.count() > 0)
    idle = idle_for(timer, limit.count() * kj::MILLISECONDS, [&c, seen = ~std::uint64_t{0}]() mutable {
             const bool active = c.messages.progress() != seen || c.calls->in_flight > 0;
             seen = c.messages.progress();
             return active;
           }).then([&c, limit] {
      spdlog::info("cellar-server: closing the connection from {}: idle for {} ms", c.guard.peer(), limit.count());
    });
  // A session that fails because its writes do (the unsent bound) has been logged above.
  auto served = serve_connection(c, st, ro).catch_([&c](kj::Exception&& e) {
    if (!c.messages.unsent_exceeded()) kj::throwFatalException(kj::mv(e));
  });
  return served.exclusiveJoin(kj::mv(closing)).exclusiveJoin(kj::mv(unread)).exclusiveJoin(kj::mv(idle));
}

class error_logger final : public kj::TaskSet::ErrorHandler {
 public:
  void taskFailed(kj::Exception&& e) override {
    spdlog::warn("cellar-server: connection closed: {}", e.getDescription().cStr());
  }
};

}  // namespace

// Event-loop turns between two looks at epoll while the loop's queue never empties.
constexpr unsigned busy_poll_turns = 64;

struct server::impl {
  struct loop {
    std::thread thread;
    std::shared_ptr<kj::Own<kj::CrossThreadPromiseFulfiller<void>>> stopper;
    bool ready = false;
    status error;
    std::size_t index = 0;
    int cpu = -1;  // the CPU this loop runs on (loop affinity); -1: any
    std::atomic<int> connections{0};
    std::atomic<bool> ring{false};  // reads and sends through io_uring
    io_ring_stats ring_stats;
  };
  std::unique_ptr<shared_state> st;
  std::vector<std::unique_ptr<loop>> loops;
  std::uint16_t port = 0;
  std::mutex mu;
  std::condition_variable cv;
  bool stopped = false;

  // One event loop: accepts on its own socket and serves those connections.
  void run(loop& me, int fd) {
    pthread_setname_np(pthread_self(), ("cellar-loop-" + std::to_string(me.index)).c_str());  // for top -H, perf
    if (me.cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(me.cpu, &set);
      pthread_setaffinity_np(pthread_self(), sizeof set, &set);  // best effort
    }
    try {
      auto io = kj::setupAsyncIo();
      kj::Timer& timer = io.provider->getTimer();
      socket_listener listener(io.unixEventPort, kj::AutoCloseFd(fd));
      auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
      error_logger logger;
      // Before `tasks`, which holds the connections: their streams queue themselves here.
      kj::Own<io_ring> ring;
      if (st->opts.io_uring) ring = io_ring::open(&me.ring_stats);
      me.ring.store(ring.get() != nullptr, std::memory_order_relaxed);
      kj::Maybe<kj::Own<kj::TlsContext>> tls;
      if (st->tls) tls = server_tls_context(*st->tls, timer, 10 * kj::SECONDS);
      kj::TaskSet tasks(logger);
      capnp::ReaderOptions ro;
      ro.traversalLimitInWords = st->opts.max_message_bytes / 8;
      ro.nestingLimit = 64;
      {
        std::lock_guard l(mu);
        me.stopper = std::make_shared<kj::Own<kj::CrossThreadPromiseFulfiller<void>>>(kj::mv(paf.fulfiller));
        me.ready = true;
      }
      cv.notify_all();
      // Serves one connection, after its TLS handshake if the port has TLS. `refusal` set:
      // every login gets it, then the connection closes (a plain client on a TLS port).
      connection_start begin = [&](kj::Own<kj::AsyncIoStream> stream, std::string peer, status refusal) {
        auto conn = kj::heap<accepted_connection>(kj::mv(stream), st->opts, std::move(peer));
        if (ring.get() != nullptr && conn->messages.direct()) conn->messages.use_ring(*ring);
        const bool counted = refusal.is_ok() && st->slots.take();
        if (!refusal.is_ok()) {
          conn->guard.refuse(std::move(refusal));
        } else if (!counted) {
          spdlog::warn("cellar-server: refusing the connection from {}: at the connection limit ({})",
                       conn->guard.peer(), st->opts.max_connections);
          conn->guard.refuse({code::unavailable, "the server is at its connection limit (" +
                                                     std::to_string(st->opts.max_connections) +
                                                     " connections); try again later"});
        }
        auto served = serve_guarded(*conn, *st, ro, timer);
        me.connections.fetch_add(1, std::memory_order_relaxed);
        st->m.connection_opened();
        tasks.add(served.attach(kj::mv(conn), kj::defer([&me, &m = st->m, &slots = st->slots, counted] {
                                  me.connections.fetch_sub(1, std::memory_order_relaxed);
                                  m.connection_closed();
                                  if (counted) slots.give_back();
                                })));
      };
      std::function<kj::Promise<void>()> accept_loop = [&]() -> kj::Promise<void> {
        return listener.accept().then([&](kj::Own<socket_stream> stream) {
          std::string peer = peer_address(KJ_ASSERT_NONNULL(stream->getFd()));
          KJ_IF_MAYBE (t, tls) {
            tasks.add(accept_tls(**t, kj::mv(stream), std::move(peer), timer, begin));
          } else {
            begin(kj::mv(stream), std::move(peer), status::ok());
          }
          return accept_loop();
        });
      };
      // kj looks at epoll only when its queue is empty, unless told to look every so many
      // turns: a connection that always has bytes to read (a client that never stops
      // sending) would otherwise keep new connections, the other clients' requests and the
      // stop signal out for as long as it sends.
      io.waitScope.setBusyPollInterval(busy_poll_turns);
      paf.promise.exclusiveJoin(accept_loop()).wait(io.waitScope);
    } catch (const kj::Exception& e) {
      std::lock_guard l(mu);
      me.error = {code::io_error, std::string("event loop failed: ") + e.getDescription().cStr()};
      me.ready = true;
      cv.notify_all();
    }
  }
};

result<std::unique_ptr<server>> server::start(store& s, server_options o) {
  auto p = std::make_unique<impl>();
  p->st = std::make_unique<shared_state>(s, std::move(o));
  const auto& opts = p->st->opts;
  if (!opts.tls_cert_file.empty() || !opts.tls_key_file.empty()) {
    if (opts.tls_cert_file.empty() || opts.tls_key_file.empty())
      return status{code::invalid_argument, "TLS needs both a certificate and its key (--tls-cert and --tls-key)"};
    auto keys = load_server_keys(opts.tls_cert_file, opts.tls_key_file);
    if (!keys) return keys.error();
    p->st->tls = std::move(keys.value());
  }
  // One socket per event loop on one port, which no other process may share (listen.h).
  auto sockets = listen_on(opts.address, opts.port, std::max<std::size_t>(1, opts.event_loops));
  if (!sockets) return sockets.error();
  p->port = sockets->port();
  std::vector<int> fds;
  for (std::size_t i = 0; i < sockets->size(); ++i) fds.push_back(sockets->take(i));
  // Loop affinity: loop i runs on the i-th CPU the process may use and takes the
  // connections the kernel sees arriving on that CPU (SO_INCOMING_CPU on a SO_REUSEPORT
  // group, Linux 6.1+; earlier kernels spread by hash, as without affinity).
  std::vector<int> cpus;
  if (opts.loop_affinity && fds.size() > 1) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    if (cpus.size() < fds.size()) cpus.clear();  // more loops than CPUs: no affinity
  }
  for (std::size_t i = 0; i < fds.size(); ++i) {
    p->loops.push_back(std::make_unique<impl::loop>());
    auto* l = p->loops.back().get();
    l->index = i;
    if (!cpus.empty()) {
      l->cpu = cpus[i];
      ::setsockopt(fds[i], SOL_SOCKET, SO_INCOMING_CPU, &l->cpu, sizeof l->cpu);
    }
    l->thread = std::thread([raw = p.get(), l, fd = fds[i]] { raw->run(*l, fd); });
  }
  status error;
  {
    std::unique_lock lk(p->mu);
    p->cv.wait(lk, [&] {
      for (auto& l : p->loops)
        if (!l->ready) return false;
      return true;
    });
    for (auto& l : p->loops)
      if (!l->error) error = l->error;
  }
  auto srv = std::unique_ptr<server>(new server(std::move(p)));
  if (!error) return error;  // the destructor stops the loops that did start
  return srv;
}

server::server(std::unique_ptr<impl> p) : p_(std::move(p)) {}

server::~server() { stop(); }

std::uint16_t server::port() const { return p_->port; }

std::vector<server::loop_info> server::loops() const {
  std::vector<loop_info> out;
  for (const auto& l : p_->loops)
    out.push_back({l->cpu, l->connections.load(std::memory_order_relaxed), l->ring.load(std::memory_order_relaxed),
                   l->ring_stats.enters.load(std::memory_order_relaxed),
                   l->ring_stats.sends.load(std::memory_order_relaxed),
                   l->ring_stats.recvs.load(std::memory_order_relaxed)});
  return out;
}

std::int64_t server::connections() const { return p_->st->m.open_connections(); }

const rpc::metrics& server::metrics() const { return p_->st->m; }

void server::stop() {
  if (p_->stopped) return;
  p_->stopped = true;
  for (auto& l : p_->loops)
    if (l->stopper) (*l->stopper)->fulfill();
  for (auto& l : p_->loops)
    if (l->thread.joinable()) l->thread.join();
}

}  // namespace cellar::rpc
