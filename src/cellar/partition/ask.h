// partition/ask.h: sending one partition request from any thread, with a callback for its
// reply.
//
// `ask` enqueues the request at the partition's actor with a fresh reply sink as sender: a
// tiny actor whose mailbox is a function call, so the reply runs the callback on the thread
// that sends it (the partition's worker, or the middleman's for a partition on another
// node), with no further hand-off. The callback runs exactly once: with the reply; with
// UNAVAILABLE when CAF answers the request with an error (the receiver is down); or with
// UNAVAILABLE when the request is dropped unanswered (a partition that stopped before
// reaching it), which the sink notices when the last reference to it goes.
//
// Thread safety: `ask` may be called from any thread; the callback must not block.
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <functional>
#include <utility>

#include "cellar/status.h"
#include "partition/protocol.h"

namespace cellar::detail {

template <class Reply>
using reply_callback = std::function<void(result<Reply>)>;

template <class Reply>
class reply_sink final : public caf::monitorable_actor {
 public:
  reply_sink(caf::actor_config& cfg, reply_callback<Reply> f) : caf::monitorable_actor(cfg), f_(std::move(f)) {}
  ~reply_sink() override {
    if (f_) f_(status{code::unavailable, "the partition stopped before answering"});
  }

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit*) override {
    auto f = std::move(f_);
    f_ = nullptr;
    if (!f || !what) return;
    auto msg = what->move_content_to_message();
    if (msg.match_elements<Reply>()) {
      f(std::move(msg.get_mutable_as<Reply>(0)));
    } else if (msg.match_elements<caf::error>()) {
      f(status{code::unavailable, "the partition did not answer: " + caf::to_string(msg.get_as<caf::error>(0))});
    } else {
      f(status{code::internal, "a partition answered with " + caf::to_string(msg)});
    }
  }

  const char* name() const override { return "cellar.reply"; }

 private:
  reply_callback<Reply> f_;
};

// Sends `req` to `p`; `done` gets the reply (see above).
template <class Reply, class Request>
void ask(caf::actor_system& sys, const partition_actor& p, Request req, reply_callback<Reply> done) {
  if (!p) {
    done(status{code::unavailable, "no such partition"});
    return;
  }
  // A request of normal priority (a non-zero request number in the normal category): it
  // keeps its place in the mailbox behind earlier messages, and CAF answers it with an
  // error if the partition terminates before handling it. One sink gets one reply, so the
  // number only has to be non-zero.
  static std::atomic<std::uint64_t> next_request{1};
  const auto number = next_request.fetch_add(1, std::memory_order_relaxed) & caf::message_id::request_id_mask;
  caf::actor_config cfg;
  auto sink = caf::make_actor<reply_sink<Reply>, caf::strong_actor_ptr>(sys.next_actor_id(), sys.node(), &sys, cfg,
                                                                        std::move(done));
  caf::actor_cast<caf::abstract_actor*>(p)->enqueue(std::move(sink), caf::make_message_id(number == 0 ? 1 : number),
                                                    caf::make_message(std::move(req)), nullptr);
}

}  // namespace cellar::detail
