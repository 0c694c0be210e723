#include "rpc/frames.h"

#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>
#include <cerrno>
#include <cstring>

#include <kj/debug.h>

#include "rpc/convert.h"
#include "rpc/socket_stream.h"
#include "rpc/tls.h"

namespace cellar::rpc {

namespace {

// capnp's own limit (serialize.c++): more segments than this is a malformed message.
constexpr std::uint32_t max_segments = 512;

std::uint32_t load_u32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);  // the wire format is little-endian, as is every target we build for
  return v;
}

void store_u32(std::vector<unsigned char>& out, std::uint32_t v) {
  unsigned char b[4];
  std::memcpy(b, &v, sizeof v);
  out.insert(out.end(), b, b + 4);
}

}  // namespace

std::size_t frame_size(const unsigned char* p, std::size_t avail, const capnp::ReaderOptions& options) {
  if (avail < 8) return 0;
  const std::uint64_t segments = std::uint64_t{load_u32(p)} + 1;
  if (segments > max_segments) KJ_FAIL_REQUIRE("message has too many segments", segments);
  const std::size_t header = static_cast<std::size_t>((segments / 2 + 1) * 8);
  if (avail < header) return 0;
  std::uint64_t words = 0;
  for (std::uint64_t i = 0; i < segments; ++i) words += load_u32(p + 4 + 4 * i);
  if (words > options.traversalLimitInWords)
    KJ_FAIL_REQUIRE("message is too large; see capnp::ReaderOptions", words * 8, options.traversalLimitInWords * 8);
  const std::size_t total = header + static_cast<std::size_t>(words) * 8;
  return avail < total ? 0 : total;
}

void append_frame(std::vector<unsigned char>& out, capnp::MessageBuilder& m) {
  append_segments(out, m.getSegmentsForOutput());
}

void append_segments(std::vector<unsigned char>& out, kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) {
  KJ_REQUIRE(segments.size() > 0, "a message has at least one segment");
  store_u32(out, static_cast<std::uint32_t>(segments.size() - 1));
  for (auto& s : segments) store_u32(out, static_cast<std::uint32_t>(s.size()));
  if (segments.size() % 2 == 0) store_u32(out, 0);
  for (auto& s : segments) {
    auto b = s.asBytes();
    out.insert(out.end(), b.begin(), b.end());
  }
}

frame_reply::frame_reply(std::vector<capnp::word> words, const capnp::ReaderOptions& options)
    : words_(std::move(words)), reader_(kj::arrayPtr(words_.data(), words_.size()), options) {}

frame_client::frame_client(int fd, std::uint64_t max_message_bytes) : fd_(fd), in_(8192) {
  ro_.traversalLimitInWords = max_message_bytes / 8;
  ro_.nestingLimit = 64;
  out_.assign(frame_magic, frame_magic + sizeof frame_magic);
}

frame_client::~frame_client() {
  tls_.reset();
  ::close(fd_);
}

ssize_t frame_client::send_some(const unsigned char* p, std::size_t n) {
  if (tls_) return tls_->send(p, n);
  return ::send(fd_, p, n, MSG_NOSIGNAL);
}

ssize_t frame_client::recv_some(unsigned char* p, std::size_t n) {
  if (tls_) return tls_->recv(p, n);
  return ::recv(fd_, p, n, 0);
}

result<std::unique_ptr<frame_client>> frame_client::connect(const std::string& address, const std::string& token,
                                                            std::uint64_t max_message_bytes) {
  frame_client_options o;
  o.token = token;
  o.max_message_bytes = max_message_bytes;
  return connect(address, o);
}

result<std::unique_ptr<frame_client>> frame_client::connect(const std::string& address, const frame_client_options& o) {
  int fd = -1;
  try {
    fd = connect_socket(address).release();
  } catch (const kj::Exception& e) {
    return status{code::unavailable, std::string("cannot connect to ") + address + ": " + e.getDescription().cStr()};
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // this client blocks
  std::unique_ptr<frame_client> c(new frame_client(fd, o.max_message_bytes));
  c->no_forward_ = o.no_forward;
  if (!o.tls_ca.empty()) {
    auto t = tls_socket::handshake(fd, o.tls_ca, o.tls_server_name.empty() ? host_of(address) : o.tls_server_name);
    if (!t) return status{t.code(), "cannot connect to " + address + ": " + t.error().message()};
    c->tls_ = std::move(t.value());
  }
  capnp::MallocMessageBuilder m(64);
  m.initRoot<wire::Request>().setLogin(o.token);
  const auto id = c->send(m);
  auto r = c->receive_id(id);
  if (!r) return r.error();
  if (auto s = from_wire(r.value()->get().getError()); !s) return s;
  return c;
}

status frame_client::broken(const std::string& what) {
  if (error_) error_ = {code::unavailable, "connection to cellar-server failed: " + what};
  return error_;
}

std::uint64_t frame_client::send(capnp::MessageBuilder& request) {
  const std::uint64_t id = next_id_++;
  request.getRoot<wire::Request>().setId(id);
  append_frame(out_, request);
  return id;
}

std::uint64_t frame_client::send_batch(const std::string& table, const std::vector<batch_op>& ops) {
  capnp::MallocMessageBuilder m;
  auto b = m.initRoot<wire::Request>().initBatch();
  b.setTable(table);
  if (no_forward_) b.setNoForward(true);
  auto actions = b.initActions(static_cast<unsigned>(ops.size()));
  for (unsigned i = 0; i < actions.size(); ++i) to_wire(ops[i], actions[i]);
  return send(m);
}

std::uint64_t frame_client::send_scan(const std::string& table, const cellar::scan& s, std::uint32_t count,
                                      const detail::scan_scope& scope) {
  capnp::MallocMessageBuilder m;
  auto b = m.initRoot<wire::Request>().initScan();
  b.setTable(table);
  to_wire(s, b.initScan());
  b.setCount(count);
  if (!scope.partitions.empty()) {
    auto ps = b.initPartitions(static_cast<unsigned>(scope.partitions.size()));
    for (unsigned i = 0; i < ps.size(); ++i) ps.set(i, scope.partitions[i]);
  }
  if (scope.no_forward) b.setNoForward(true);
  return send(m);
}

status frame_client::flush() {
  if (!error_) return error_;
  std::size_t done = 0;
  while (done < out_.size()) {
    const ssize_t n = send_some(out_.data() + done, out_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return broken(std::string("send: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  out_.clear();
  return status::ok();
}

result<std::unique_ptr<frame_reply>> frame_client::receive() {
  if (auto s = flush(); !s) return s;
  for (;;) {
    auto* bytes = reinterpret_cast<unsigned char*>(in_.data());
    if (!greeted_ && in_end_ - in_pos_ >= sizeof frame_magic) {
      if (std::memcmp(bytes + in_pos_, frame_magic, sizeof frame_magic) != 0)
        return broken("the server does not speak frames");
      greeted_ = true;
      in_pos_ += sizeof frame_magic;
      continue;
    }
    std::size_t n = 0;
    try {
      n = frame_size(bytes + in_pos_, in_end_ - in_pos_, ro_);
    } catch (const kj::Exception& e) {
      return broken(std::string("malformed reply: ") + e.getDescription().cStr());
    }
    if (greeted_ && n > 0) {
      std::vector<capnp::word> words(n / sizeof(capnp::word));
      std::memcpy(words.data(), bytes + in_pos_, n);
      in_pos_ += n;
      if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
      try {
        return std::make_unique<frame_reply>(std::move(words), ro_);
      } catch (const kj::Exception& e) {
        return broken(std::string("malformed reply: ") + e.getDescription().cStr());
      }
    }
    if (in_pos_ > 0) {
      std::memmove(bytes, bytes + in_pos_, in_end_ - in_pos_);
      in_end_ -= in_pos_;
      in_pos_ = 0;
    }
    if (in_end_ == in_.size() * sizeof(capnp::word)) {
      in_.resize(in_.size() * 2);
      bytes = reinterpret_cast<unsigned char*>(in_.data());
    }
    const ssize_t got = recv_some(bytes + in_end_, in_.size() * sizeof(capnp::word) - in_end_);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return broken(std::string("recv: ") + std::strerror(errno));
    if (got == 0) return broken("the server closed the connection");
    in_end_ += static_cast<std::size_t>(got);
  }
}

result<std::unique_ptr<frame_reply>> frame_client::receive_id(std::uint64_t id) {
  if (auto it = early_.find(id); it != early_.end()) {
    auto r = std::move(it->second);
    early_.erase(it);
    return r;
  }
  for (;;) {
    auto r = receive();
    if (!r) return r;
    if (r.value()->get().getId() == id) return r;
    early_[r.value()->get().getId()] = std::move(r.value());
  }
}

result<std::vector<op_result>> frame_client::batch_results(wire::Reply::Reader r) {
  if (auto s = from_wire(r.getError()); !s) return s;
  std::vector<op_result> out;
  out.reserve(r.getResults().size());
  for (auto x : r.getResults()) out.push_back(from_wire(x));
  return out;
}

result<scan_page> frame_client::page_of(wire::Reply::Reader r) {
  if (auto s = from_wire(r.getError()); !s) return s;
  scan_page page;
  page.rows.reserve(r.getRows().size());
  for (auto x : r.getRows()) page.rows.push_back(from_wire(x));
  page.done = r.getDone();
  if (r.hasFilterEnd()) page.filter_end = from_wire(r.getFilterEnd());
  return page;
}

result<std::vector<op_result>> frame_client::batch(const std::string& table, const std::vector<batch_op>& ops) {
  auto r = receive_id(send_batch(table, ops));
  if (!r) return r.error();
  auto out = batch_results(r.value()->get());
  if (out && out->size() != ops.size())
    return status{code::internal, "the server answered a different number of results"};
  return out;
}

result<scan_page> frame_client::scan(const std::string& table, const cellar::scan& s, std::uint32_t count,
                                     const detail::scan_scope& scope) {
  auto r = receive_id(send_scan(table, s, count, scope));
  if (!r) return r.error();
  return page_of(r.value()->get());
}

}  // namespace cellar::rpc
