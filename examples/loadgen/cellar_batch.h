// loadgen/cellar_batch.h: what both cellar network engines (frames and Cap'n Proto RPC) put
// in a batch of a slot's operations and read from its answer: the wire form is the same
// `List(Action)` / `List(ActionResult)` either way (schemas/cellar.capnp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cellar.capnp.h"
#include "engine.h"

namespace loadgen {

class batch_writer {
 public:
  explicit batch_writer(const target_options& o);
  // The actions of s.ops[idx...]: a get for a read (and the read of a read-modify-write), a
  // put of one field for an update, of every field for an insert; with `second`, the
  // writes of read-modify-writes.
  void fill(capnp::List<cellar::wire::Action>::Builder actions, const slot& s, const std::vector<std::size_t>& idx,
            bool second);

 private:
  std::string family_;
  key_format keys_;
  std::vector<std::string> fields_;
  value_pool values_;
  rng rng_;
  std::string key_;
};

// Marks s.ok for the operations of a batch's answer (`call_ok`: the call as a whole
// succeeded): an error, or a read that found nothing, is not ok. Returns the
// read-modify-writes whose read succeeded, to write next (none when `second`).
std::vector<std::size_t> take_batch_answer(slot& s, const std::vector<std::size_t>& idx, bool second, bool call_ok,
                                           capnp::List<cellar::wire::ActionResult>::Reader results);

// Starts a slot's operations as both cellar engines send them: resets its per-op state,
// sends each scan as its own call and every other operation in one batch.
template <class SendScan, class SendBatch>
void start_slot(slot& s, SendScan send_scan, SendBatch send_batch) {
  s.ok.assign(s.ops.size(), 1);
  s.rows.assign(s.ops.size(), 0);
  s.calls_pending = 0;
  std::vector<std::size_t> batched;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    if (s.ops[i].kind == op_kind::scan)
      send_scan(i);
    else
      batched.push_back(i);
  }
  if (!batched.empty()) send_batch(std::move(batched));
}

}  // namespace loadgen
