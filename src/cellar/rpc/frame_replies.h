// rpc/frame_replies.h: the server's frames reply to a batch (schemas/cellar.capnp, Reply),
// and the same reply copied from a template for the commonest batch (one action that
// succeeded with nothing to return: a put, a delete, an increment without its result).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/ops.h"
#include "cellar/status.h"

namespace cellar::rpc {

// Fills `out` with the reply to batch `id`: the batch's status and, when it is OK, one
// result per action.
void fill_batch_reply(wire::Reply::Builder out, std::uint64_t id, const status& s, const std::vector<op_result>& r);

// The framed bytes fill_batch_reply makes for an OK batch of one plain OK result (fits()),
// made once per process with fill_batch_reply itself and then copied with the id patched
// in: the reply to every plain put is the same bytes but for the id, so a copy serves where
// a message builder would lay out the same message again each time.
// Not thread-safe: one per connection or per event loop.
class plain_ok_reply {
 public:
  // A copy of the template, built at the first construction; if the two ids it tries do
  // not differ in exactly eight bytes where the id sits (a layout it does not expect),
  // enabled() is false and callers build.
  plain_ok_reply();
  bool enabled() const { return id_at_ != 0; }
  // True when the reply to (`s`, `r`) is the template's: both OK with no message, one
  // result with an empty row, no cells, not partial, not processed.
  static bool fits(const status& s, const std::vector<op_result>& r);
  // The reply to batch `id`, framed; valid until the next call.
  const std::vector<unsigned char>& bytes(std::uint64_t id);

 private:
  std::vector<unsigned char> bytes_;
  std::size_t id_at_ = 0;  // where the id's eight bytes start; 0: disabled (the frame header is there)
};

}  // namespace cellar::rpc
