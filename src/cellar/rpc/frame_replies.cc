#include "rpc/frame_replies.h"

#include <capnp/message.h>
#include <kj/debug.h>

#include <algorithm>
#include <cstring>

#include "rpc/convert.h"
#include "rpc/frames.h"

namespace cellar::rpc {

void fill_batch_reply(wire::Reply::Builder out, std::uint64_t id, const status& s, const std::vector<op_result>& r) {
  out.setId(id);
  to_wire(s, out.initError());
  if (!s) return;
  auto results = out.initResults(static_cast<unsigned>(r.size()));
  for (unsigned i = 0; i < results.size(); ++i) to_wire(r[i], results[i]);
}

namespace {

std::vector<unsigned char> framed_plain_ok(std::uint64_t id) {
  capnp::MallocMessageBuilder b;
  fill_batch_reply(b.initRoot<wire::Reply>(), id, status::ok(), std::vector<op_result>(1));
  std::vector<unsigned char> out;
  append_frame(out, b);
  return out;
}

// The template and where its id sits, made once for the process: every connection's
// plain_ok_reply starts as a copy. {} when the layout is not the expected one.
struct ok_template {
  std::vector<unsigned char> bytes;
  std::size_t id_at = 0;
};

ok_template make_ok_template() {
  constexpr std::uint64_t probe = 0x0123456789abcdefull;
  auto zero = framed_plain_ok(0);
  auto other = framed_plain_ok(probe);
  if (zero.size() != other.size()) return {};
  std::size_t first = zero.size(), last = 0, differ = 0;
  for (std::size_t i = 0; i < zero.size(); ++i)
    if (zero[i] != other[i]) {
      first = std::min(first, i);
      last = i;
      ++differ;
    }
  // Every byte of the probe is non-zero, so the id's eight bytes are exactly the ones that
  // differ; they must hold the probe as the message stores it (little-endian).
  std::uint64_t at = 0;
  if (differ != sizeof at || last - first + 1 != sizeof at) return {};
  std::memcpy(&at, other.data() + first, sizeof at);
  if (at != probe || first == 0) return {};
  return {std::move(zero), first};
}

}  // namespace

plain_ok_reply::plain_ok_reply() {
  static const ok_template shared = make_ok_template();
  bytes_ = shared.bytes;
  id_at_ = shared.id_at;
}

bool plain_ok_reply::fits(const status& s, const std::vector<op_result>& r) {
  if (!s || !s.message().empty() || r.size() != 1) return false;
  const auto& x = r[0];
  return x.st && x.st.message().empty() && !x.processed && x.row.row.empty() && !x.row.exists && !x.row.partial &&
         x.row.cells.empty();
}

const std::vector<unsigned char>& plain_ok_reply::bytes(std::uint64_t id) {
  std::memcpy(bytes_.data() + id_at_, &id, sizeof id);
  return bytes_;
}

}  // namespace cellar::rpc
