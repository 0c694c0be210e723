// rpc/frames.h: the frame protocol (schemas/cellar.capnp, "frames"): a lighter path for
// data calls on the server's port, one Cap'n Proto message each way per call.
//
// frame_size and append_frame are the stream framing both ends use; frame_client is a
// blocking client of one connection that can keep several requests in flight.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/ops.h"
#include "cellar/status.h"
#include "cellar/store.h"
#include "route/scan_scope.h"
#include "rpc/message_stream.h"

namespace cellar::rpc {

// The first eight bytes of a frame connection, each way. Read as a Cap'n Proto stream
// header it would be a segment count far above capnp's limit of 512, so no RPC client sends
// it; the server answers with the same bytes, which no RPC-only server sends.
inline constexpr unsigned char frame_magic[8] = {'C', 'E', 'L', 'L', 'A', 'R', 'F', '1'};

// Bytes of the complete message at the front of `p` (`avail` bytes), 0 if more are needed.
// Throws kj::Exception for a malformed message or one above options' traversal limit.
std::size_t frame_size(const unsigned char* p, std::size_t avail, const capnp::ReaderOptions& options);

// Appends `m` (its segments) to `out` in the stream framing.
void append_frame(std::vector<unsigned char>& out, capnp::MessageBuilder& m);
void append_segments(std::vector<unsigned char>& out, kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments);

// One reply, owning its bytes.
class frame_reply {
 public:
  frame_reply(std::vector<capnp::word> words, const capnp::ReaderOptions& options);
  wire::Reply::Reader get() { return reader_.getRoot<wire::Reply>(); }

 private:
  std::vector<capnp::word> words_;
  capnp::FlatArrayMessageReader reader_;
};

struct scan_page {
  std::vector<row_result> rows;
  bool done = true;  // nothing follows
  // When done: where a filter ended the scan, if one did (wire Reply.filterEnd).
  std::optional<scan_end> filter_end;
};

class tls_socket;

struct frame_client_options {
  std::string token;
  std::uint64_t max_message_bytes = 256ull << 20;
  // Set: TLS, trusting the CA certificates of this PEM file only (rpc/tls.h).
  std::string tls_ca;
  // The name the server's certificate must carry; empty: the host of the address.
  std::string tls_server_name;
  // Cluster: every batch asks the node not to forward (wire BatchRequest.noForward): the
  // actions of partitions it does not own answer NOT_OWNER (docs/cluster.md §4).
  bool no_forward = false;
};

// A frame connection: blocking socket calls on the caller's thread; use it from one thread.
// `batch` and `scan` wait for their own reply. For pipelining, send_* queue requests and
// return their ids, flush() writes them, receive() returns replies as they come (in any
// order). A broken connection makes every later call fail with UNAVAILABLE.
class frame_client {
 public:
  // `address` is "host:port" or "[v6]:port"; logs in with `token`.
  static result<std::unique_ptr<frame_client>> connect(const std::string& address, const std::string& token = "",
                                                       std::uint64_t max_message_bytes = 256ull << 20);
  static result<std::unique_ptr<frame_client>> connect(const std::string& address, const frame_client_options& o);
  ~frame_client();
  frame_client(const frame_client&) = delete;
  frame_client& operator=(const frame_client&) = delete;

  // One result per op, or the error of the call as a whole.
  result<std::vector<op_result>> batch(const std::string& table, const std::vector<batch_op>& ops);
  // Up to `count` results of `s` (1-10000), over the partitions of `scope` (ScanRequest's
  // partitions and noForward; the default: every partition, forwarded).
  result<scan_page> scan(const std::string& table, const cellar::scan& s, std::uint32_t count,
                         const detail::scan_scope& scope = {});

  std::uint64_t send_batch(const std::string& table, const std::vector<batch_op>& ops);
  std::uint64_t send_scan(const std::string& table, const cellar::scan& s, std::uint32_t count,
                          const detail::scan_scope& scope = {});
  // Queues `request` (a wire::Request message) after giving it the next id; returns the id.
  std::uint64_t send(capnp::MessageBuilder& request);
  status flush();
  // The next reply (flushes first).
  result<std::unique_ptr<frame_reply>> receive();

  // The results of a batch reply; the page of a scan reply.
  static result<std::vector<op_result>> batch_results(wire::Reply::Reader r);
  static result<scan_page> page_of(wire::Reply::Reader r);

 private:
  frame_client(int fd, std::uint64_t max_message_bytes);
  result<std::unique_ptr<frame_reply>> receive_id(std::uint64_t id);
  status broken(const std::string& what);
  ssize_t send_some(const unsigned char* p, std::size_t n);
  ssize_t recv_some(unsigned char* p, std::size_t n);

  int fd_;
  std::unique_ptr<tls_socket> tls_;  // null: plain TCP
  capnp::ReaderOptions ro_;
  std::uint64_t next_id_ = 1;
  std::vector<unsigned char> out_;
  word_buffer in_;  // bytes read, from byte in_pos_ to in_end_
  std::size_t in_pos_ = 0, in_end_ = 0;
  bool no_forward_ = false;  // frame_client_options::no_forward
  bool greeted_ = false;     // the server's eight bytes have come (the first thing it sends)
  status error_;
  std::map<std::uint64_t, std::unique_ptr<frame_reply>> early_;  // replies received while waiting for another
};

}  // namespace cellar::rpc
