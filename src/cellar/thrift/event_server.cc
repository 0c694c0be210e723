#include "thrift/event_server.h"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "thrift/tls_session.h"

namespace cellar::thrift {

namespace at = apache::thrift;
namespace tt = apache::thrift::transport;

namespace {

// The bytes of one message (or of everything received so far, with buffered transport) as
// the transport a protocol reads from, without copying them.
class input_view final : public tt::TVirtualTransport<input_view, tt::TBufferBase> {
 public:
  explicit input_view(std::size_t max) : max_(max) {}

  void reset(const std::uint8_t* p, std::size_t n) {
    start_ = p;
    starved_ = false;
    setReadBuffer(const_cast<std::uint8_t*>(p), static_cast<std::uint32_t>(n));
    resetConsumedMessageSize();
  }
  std::size_t consumed() const { return static_cast<std::size_t>(rBase_ - start_); }
  // Whether the last read wanted bytes past the end: the message is not all here yet.
  bool starved() const { return starved_; }

  std::uint32_t readSlow(std::uint8_t* buf, std::uint32_t len) override {
    const auto have = static_cast<std::uint32_t>(rBound_ - rBase_);
    const auto give = std::min(have, len);
    if (give < len) starved_ = true;
    std::memcpy(buf, rBase_, give);
    rBase_ += give;
    return give;
  }
  void writeSlow(const std::uint8_t*, std::uint32_t) override {
    throw tt::TTransportException(tt::TTransportException::NOT_OPEN, "input only");
  }
  // The binary protocol borrows a string's bytes before it allocates them: one longer than
  // what has arrived ends the attempt here, so a message that announces a huge string is
  // refused (or waited for) without allocating it. The compact protocol borrows up to 10
  // bytes for a varint and reads them one by one when they are not all here.
  const std::uint8_t* borrowSlow(std::uint8_t*, std::uint32_t* len) override {
    if (*len <= 10) return nullptr;
    want(*len);  // throws: fewer than *len bytes are here
    return nullptr;
  }

 private:
  void want(long n) {
    if (n < 0 || consumed() + static_cast<std::size_t>(n) > max_)
      throw tt::TTransportException(tt::TTransportException::CORRUPTED_DATA, "message too large");
    if (static_cast<long>(rBound_ - rBase_) < n) {
      starved_ = true;
      throw tt::TTransportException(tt::TTransportException::END_OF_FILE, "message incomplete");
    }
  }

  const std::size_t max_;
  const std::uint8_t* start_ = nullptr;
  bool starved_ = false;
};

using out_buffer = tt::TMemoryBuffer;

struct connection {
  int fd = -1;
  std::string in;  // in[in_pos, in_len) received and not yet a whole message
  std::size_t in_pos = 0, in_len = 0;
  std::string out;  // out[out_pos, end) replied and not yet sent
  std::size_t out_pos = 0;
  bool paused = false;  // requests not read until the client reads its replies
  bool closed = false;
  std::unique_ptr<tls_session> tls;  // null: plain TCP
  std::uint64_t serial = 0;          // tells it from a later connection at the same address
};

// The address of the client at the other end of `fd`, for the log.
std::string peer_of(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "a client";
  char host[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    return std::string("[") + host + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
  ::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(v4->sin_port));
}

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

struct event_server::impl {
  class loop;

  std::shared_ptr<at::TProcessor> processor;
  event_server_options options;
  int listen_fd = -1;
  std::uint16_t bound_port = 0;
  std::vector<std::unique_ptr<loop>> loops;
  std::atomic<std::size_t> open{0};
  absl::Mutex accept_mu;
  bool accepting ABSL_GUARDED_BY(accept_mu) = true;
  bool stopped ABSL_GUARDED_BY(accept_mu) = false;

  ~impl() {
    if (listen_fd >= 0) ::close(listen_fd);
  }
  // Stops or resumes accepting in every loop (the connection limit).
  void set_accepting(bool on);
  void connection_closed() {
    open.fetch_sub(1);
    if (options.max_connections > 0) set_accepting(true);
  }
};

class event_server::impl::loop {
 public:
  explicit loop(impl& server) : s_(server), in_(std::make_shared<input_view>(server.options.max_message_bytes)) {
    out_ = std::make_shared<out_buffer>(64 * 1024);
    // A string or container longer than a whole message is refused as it is announced.
    namespace ap = at::protocol;
    const auto limit = static_cast<std::int32_t>(std::min<std::size_t>(s_.options.max_message_bytes, INT32_MAX));
    if (s_.options.compact) {
      iprot_ = std::make_shared<ap::TCompactProtocolT<input_view>>(in_, limit, limit);
      oprot_ = std::make_shared<ap::TCompactProtocolT<out_buffer>>(out_);
    } else {
      iprot_ = std::make_shared<ap::TBinaryProtocolT<input_view>>(in_, limit, limit, false, true);
      oprot_ = std::make_shared<ap::TBinaryProtocolT<out_buffer>>(out_);
    }
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.ptr = &wake_;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &e);
    listen(true);
  }
  ~loop() {
    for (auto* c : conns_) {
      ::close(c->fd);
      delete c;
    }
    ::close(wake_);
    ::close(epoll_);
  }
  void start() {
    thread_ = std::thread([this] { run(); });
  }
  void stop() {
    std::uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
    if (thread_.joinable()) thread_.join();
  }
  // Whether this loop's epoll reports new connections (the connection limit).
  void listen(bool on) {
    if (on) {
      epoll_event e{};
      e.events = EPOLLIN | EPOLLEXCLUSIVE;
      e.data.ptr = &s_.listen_fd;
      ::epoll_ctl(epoll_, EPOLL_CTL_ADD, s_.listen_fd, &e);
    } else {
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, s_.listen_fd, nullptr);
    }
  }

 private:
  void run() {
    epoll_event events[64];
    std::vector<connection*> dead;
    for (;;) {
      const int n = ::epoll_wait(epoll_, events, 64, wait_ms());
      if (n < 0 && errno != EINTR) {
        spdlog::error("thrift gateway: epoll_wait: {}", std::strerror(errno));
        return;
      }
      for (int i = 0; i < n; ++i) {
        void* tag = events[i].data.ptr;
        if (tag == &wake_) return;
        if (tag == &s_.listen_fd) {
          accept_all();
          continue;
        }
        auto* c = static_cast<connection*>(tag);
        if (c->closed) continue;
        const auto ev = events[i].events;
        if (ev & EPOLLOUT) on_writable(*c);
        if (!c->closed && (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) on_readable(*c);
        if (c->closed) dead.push_back(c);
      }
      // Freed after the batch: a later event of this batch may still name them.
      for (auto* c : dead) delete c;
      dead.clear();
      expire_handshakes();
    }
  }

  // When a TLS connection must have finished its handshake.
  struct handshake_deadline {
    std::chrono::steady_clock::time_point at;
    connection* c;
    std::uint64_t serial;
  };
  // Whether the connection `h` was set for is still open and handshaking.
  bool handshaking(const handshake_deadline& h) const {
    return conns_.contains(h.c) && h.c->serial == h.serial && !h.c->tls->handshake_done();
  }

  // How long epoll may wait: until the first deadline of a handshake still under way.
  int wait_ms() {
    while (!handshakes_.empty() && !handshaking(handshakes_.front())) handshakes_.pop_front();
    if (handshakes_.empty()) return -1;
    const auto left = handshakes_.front().at - std::chrono::steady_clock::now();
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return static_cast<int>(std::clamp<std::int64_t>(ms, 0, INT_MAX));
  }

  // Closes the TLS connections whose handshake is not done by their deadline. Deadlines
  // are kept in the order the connections arrived, which is the order they fall due.
  void expire_handshakes() {
    const auto now = std::chrono::steady_clock::now();
    while (!handshakes_.empty() && handshakes_.front().at <= now) {
      const auto h = handshakes_.front();
      handshakes_.pop_front();
      if (!handshaking(h)) continue;
      spdlog::warn("thrift gateway: closing the connection from {}: no TLS handshake within {} ms", peer_of(h.c->fd),
                   s_.options.tls_handshake_timeout.count());
      close(*h.c);
      delete h.c;
    }
  }

  void accept_all() {
    for (;;) {
      if (s_.options.max_connections > 0 && s_.open.load() >= s_.options.max_connections) {
        s_.set_accepting(false);
        return;
      }
      const int fd = ::accept4(s_.listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) spdlog::warn("thrift gateway: accept: {}", std::strerror(errno));
        return;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto* c = new connection;
      c->fd = fd;
      c->serial = ++serial_;
      if (s_.options.tls) {
        c->tls = tls_session::accept(s_.options.tls.get());
        if (!c->tls) {
          spdlog::warn("thrift gateway: no TLS session for the connection from {}: out of memory", peer_of(fd));
          ::close(fd);
          delete c;
          continue;
        }
        handshakes_.push_back({std::chrono::steady_clock::now() + s_.options.tls_handshake_timeout, c, c->serial});
      }
      epoll_event e{};
      e.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
      e.data.ptr = c;
      if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e) != 0) {
        ::close(fd);
        delete c;
        continue;
      }
      conns_.insert(c);
      s_.open.fetch_add(1);
    }
  }

  void close(connection& c) {
    if (c.closed) return;
    c.closed = true;
    ::close(c.fd);
    conns_.erase(&c);
    s_.connection_closed();
  }

  // Reads what the socket holds, answers every whole message, sends the replies.
  void on_readable(connection& c) {
    if (c.paused) return;
    bool eof = false;
    for (;;) {
      // With TLS the socket's bytes are records, read into the loop's buffer and decrypted
      // into c.in; without, they are the messages themselves.
      char* to = raw_.data();
      std::size_t room = raw_.size();
      if (!c.tls) {
        if (c.in.size() - c.in_len < 4096) make_room(c);
        to = c.in.data() + c.in_len;
        room = c.in.size() - c.in_len;
      }
      const ssize_t n = ::recv(c.fd, to, room, 0);
      if (n > 0) {
        if (!c.tls) {
          c.in_len += static_cast<std::size_t>(n);
        } else if (!decrypt(c, to, static_cast<std::size_t>(n))) {
          if (c.closed) return;
          eof = true;  // the client ended the session
          break;
        }
        if (static_cast<std::size_t>(n) < room) break;  // the socket is empty: wait for the next edge
        continue;
      }
      if (n == 0) {
        eof = true;
        break;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      close(c);
      return;
    }
    answer(c);
    if (c.closed) return;
    if (eof) {
      flush(c);
      close(c);
      return;
    }
    if (c.in_len - c.in_pos > s_.options.max_message_bytes + 4) {
      spdlog::warn("thrift gateway: a message over {} bytes: connection closed", s_.options.max_message_bytes);
      close(c);
    }
  }

  // Hands `n` bytes received on c to its TLS session, appends the plaintext they complete to
  // c.in and sends what the session has for the client (its handshake messages, an alert).
  // False when the session ended: the client closed it (close_notify), or it failed and c
  // is closed.
  bool decrypt(connection& c, const char* p, std::size_t n) {
    c.tls->received(p, n);
    for (;;) {
      if (c.in.size() - c.in_len < 4096) make_room(c);
      std::size_t got = 0;
      const auto r = c.tls->read(c.in.data() + c.in_len, c.in.size() - c.in_len, &got);
      c.in_len += got;
      if (r == tls_session::read_result::data) continue;
      send_tls_output(c);
      if (c.closed) return false;
      if (r == tls_session::read_result::failed) {
        spdlog::warn("thrift gateway: TLS {}with {} failed: {}", c.tls->handshake_done() ? "" : "handshake ",
                     peer_of(c.fd), c.tls->why());
        close(c);
        return false;
      }
      return r == tls_session::read_result::need_more;
    }
  }

  // Sends (or queues) the bytes c's TLS session has for the client.
  void send_tls_output(connection& c) {
    const auto out = c.tls->output();
    if (!out.empty()) queue(c, reinterpret_cast<const std::uint8_t*>(out.data()), out.size());
    c.tls->take();
  }

  void make_room(connection& c) {
    if (c.in_pos > 0) {
      std::memmove(c.in.data(), c.in.data() + c.in_pos, c.in_len - c.in_pos);
      c.in_len -= c.in_pos;
      c.in_pos = 0;
    }
    if (c.in.size() - c.in_len < 4096) c.in.resize(std::max<std::size_t>(16 * 1024, c.in.size() * 2));
  }

  void on_writable(connection& c) {
    if (c.out_pos == c.out.size()) return;
    flush(c);
    if (!c.closed && c.paused && c.out.size() - c.out_pos <= s_.options.max_unsent_bytes) {
      c.paused = false;
      answer(c);                                   // whole messages already read
      if (!c.closed && !c.paused) on_readable(c);  // and what arrived meanwhile (no new edge comes for it)
    }
  }

  // Runs the processor on each whole message in c.in.
  void answer(connection& c) {
    const bool framed = s_.options.framed;
    while (!c.closed && !c.paused && c.in_pos < c.in_len) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(c.in.data()) + c.in_pos;
      std::size_t avail = c.in_len - c.in_pos, header = 0;
      if (framed) {
        if (avail < 4) break;
        const std::size_t len = be32(p);
        if (len > s_.options.max_message_bytes) {
          spdlog::warn("thrift gateway: a frame of {} bytes: connection closed", len);
          close(c);
          return;
        }
        if (avail < 4 + len) break;
        header = 4;
        avail = len;
      }
      in_->reset(p + header, avail);
      out_->resetBuffer();
      if (framed) out_->write(reinterpret_cast<const std::uint8_t*>("\0\0\0\0"), 4);
      bool ok = false;
      try {
        ok = s_.processor->process(iprot_, oprot_, nullptr);
      } catch (const tt::TTransportException& e) {
        if (!framed && in_->starved() && e.getType() == tt::TTransportException::END_OF_FILE) break;  // more to come
        spdlog::debug("thrift gateway: {}: connection closed", e.what());
      } catch (const std::exception& e) {
        spdlog::debug("thrift gateway: {}: connection closed", e.what());
      }
      if (!ok) {
        close(c);
        return;
      }
      c.in_pos += framed ? header + avail : in_->consumed();
      std::uint8_t* reply;
      std::uint32_t size;
      out_->getBuffer(&reply, &size);
      if (framed) {
        const std::uint32_t len = htonl(size - 4);
        std::memcpy(reply, &len, 4);
      }
      send_reply(c, reply, size);
    }
    if (c.in_pos == c.in_len) c.in_pos = c.in_len = 0;
    // A reply buffer grown by one large answer is not kept for every later one.
    if (out_->available_write() > (4u << 20)) out_->resetBuffer(64 * 1024);
  }

  void send_reply(connection& c, const std::uint8_t* p, std::size_t n) {
    if (n == 0) return;  // a oneway call
    if (!c.tls) {
      queue(c, p, n);
      return;
    }
    if (!c.tls->write(p, n)) {
      spdlog::warn("thrift gateway: TLS with {} failed: {}", peer_of(c.fd), c.tls->why());
      close(c);
      return;
    }
    send_tls_output(c);
  }

  // Sends what the socket takes of p[0, n) now, after what is queued before it, and queues
  // the rest.
  void queue(connection& c, const std::uint8_t* p, std::size_t n) {
    if (c.out_pos == c.out.size()) {
      c.out.clear();
      c.out_pos = 0;
      const ssize_t sent = send_some(c, p, n);
      if (sent < 0) return;
      p += sent;
      n -= static_cast<std::size_t>(sent);
    }
    c.out.append(reinterpret_cast<const char*>(p), n);
    if (c.out.size() - c.out_pos > s_.options.max_unsent_bytes) c.paused = true;
  }

  void flush(connection& c) {
    const ssize_t sent =
        send_some(c, reinterpret_cast<const std::uint8_t*>(c.out.data()) + c.out_pos, c.out.size() - c.out_pos);
    if (sent < 0) return;
    c.out_pos += static_cast<std::size_t>(sent);
    if (c.out_pos == c.out.size()) {
      c.out.clear();
      c.out_pos = 0;
      if (c.out.capacity() > (4u << 20)) c.out.shrink_to_fit();
    }
  }

  // Sends what the socket takes now: the bytes sent, or -1 when the connection failed
  // (and is closed).
  ssize_t send_some(connection& c, const std::uint8_t* p, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      const ssize_t r = ::send(c.fd, p + done, n - done, MSG_NOSIGNAL);
      if (r > 0) {
        done += static_cast<std::size_t>(r);
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      close(c);
      return -1;
    }
    return static_cast<ssize_t>(done);
  }

  impl& s_;
  std::shared_ptr<input_view> in_;
  std::shared_ptr<out_buffer> out_;
  std::shared_ptr<at::protocol::TProtocol> iprot_, oprot_;
  int epoll_ = -1;
  int wake_ = -1;
  std::thread thread_;
  absl::flat_hash_set<connection*> conns_;
  std::vector<char> raw_ = std::vector<char>(64 * 1024);  // TLS records as read from a socket
  std::deque<handshake_deadline> handshakes_;             // in the order they fall due
  std::uint64_t serial_ = 0;
};

void event_server::impl::set_accepting(bool on) {
  absl::MutexLock l(&accept_mu);
  if (accepting == on || stopped) return;
  // Checked again under the lock: a connection that closed since the caller looked must
  // not leave the server deaf, nor one just accepted take it past the limit.
  if ((open.load() < options.max_connections) != on) return;
  accepting = on;
  for (auto& each : loops) each->listen(on);
}

namespace {

result<int> bind_listen(const std::string& address, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const auto service = std::to_string(port);
  if (int rc = ::getaddrinfo(address.empty() ? nullptr : address.c_str(), service.c_str(), &hints, &found); rc != 0)
    return status(code::io_error, "cannot listen on " + address + ":" + service + ": " + ::gai_strerror(rc));
  std::string why = "no address";
  for (auto* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      ::freeaddrinfo(found);
      return fd;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return status(code::io_error, "cannot listen on " + address + ":" + service + ": " + why);
}

}  // namespace

result<std::unique_ptr<event_server>> event_server::start(std::shared_ptr<at::TProcessor> processor,
                                                          event_server_options options) {
  auto i = std::make_unique<impl>();
  i->processor = std::move(processor);
  i->options = std::move(options);
  auto fd = bind_listen(i->options.address, i->options.port);
  if (!fd) return fd.error();
  i->listen_fd = *fd;
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  ::getsockname(i->listen_fd, reinterpret_cast<sockaddr*>(&a), &len);
  i->bound_port = ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&a)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  for (std::size_t n = 0; n < std::max<std::size_t>(1, i->options.loops); ++n)
    i->loops.push_back(std::make_unique<impl::loop>(*i));
  for (auto& l : i->loops) l->start();
  return std::unique_ptr<event_server>(new event_server(std::move(i)));
}

event_server::event_server(std::unique_ptr<impl> i) : impl_(std::move(i)) {}

event_server::~event_server() { stop(); }

std::uint16_t event_server::port() const { return impl_->bound_port; }

void event_server::stop() {
  {
    absl::MutexLock l(&impl_->accept_mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  for (auto& l : impl_->loops) l->stop();
  impl_->loops.clear();
}

}  // namespace cellar::thrift
