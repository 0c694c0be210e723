// cluster/ask_node.h: one request to another node's endpoint, waited for by a thread.
//
// Moves, membership changes and named snapshots run their steps at other nodes from a
// thread of their own and wait for each answer. CAF's middleman fails no request in flight
// to a peer whose connection breaks, so a helper actor monitors the endpoint while it
// waits: a node that dies mid-step fails the step at once, not after its timeout.
//
// Thread safety: blocks; call it from a thread that is not a CAF worker.
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "cellar/status.h"
#include "cluster/remote.h"

namespace cellar::cluster {

// What a request to an endpoint came to.
template <class Reply>
struct node_answer {
  result<Reply> reply = status{code::unavailable, "no answer"};
  bool down = false;  // the endpoint went away during the request: the caller forgets it
};

// Sends `m` to `ep` and waits for its reply, at most `timeout`. UNAVAILABLE, the message
// starting with `about` (which names the node), when the endpoint does not answer in time,
// goes away first, or `cancelled` (checked every 100 ms; may be empty) turns true.
template <class Reply, class Msg>
node_answer<Reply> ask_node(caf::actor_system& sys, const node_endpoint& ep, Msg m, std::chrono::milliseconds timeout,
                            const std::string& about, const std::function<bool()>& cancelled = {}) {
  auto answer = std::make_shared<std::promise<node_answer<Reply>>>();
  auto got = answer->get_future();
  sys.spawn([ep, m = std::move(m), answer, about, timeout](caf::event_based_actor* a) mutable {
    // Whichever comes first answers; quit() drops the other.
    a->monitor(ep);
    a->set_down_handler([a, answer, about](caf::down_msg& d) {
      answer->set_value(
          {status{code::unavailable, about + "went away during the step: " + a->system().render(d.reason)}, true});
      a->quit();
    });
    a->request(ep, timeout, std::move(m))
        .then(
            [a, answer](Reply& r) {
              answer->set_value({std::move(r), false});
              a->quit();
            },
            [a, answer, about](caf::error& e) {
              answer->set_value({status{code::unavailable, about + "did not answer: " + a->system().render(e)}, false});
              a->quit();
            });
  });
  // The helper answers within the timeout, unless this node's actor system does not run it
  // at all (no CAF worker free): then the step fails, naming it, instead of waiting forever.
  const auto until = std::chrono::steady_clock::now() + timeout + std::chrono::seconds(5);
  while (got.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (cancelled && cancelled())
      return {status{code::unavailable, about + "was still at it when the call was cancelled"}};
    if (std::chrono::steady_clock::now() >= until)
      return {status{code::unavailable, about + "got no answer: this node's actor system did not run the step"}};
  }
  return got.get();
}

}  // namespace cellar::cluster
