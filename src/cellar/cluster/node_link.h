// cluster/node_link.h: a routed client's RPC connection to one node, on a thread of its own
// (cluster/routed_connection.h), and a scan's stream read through it.
//
// An RPC connection runs a kj event loop on the thread that made it, and a thread has at
// most one, so each node's connection lives on its own thread and the routed connection
// hands it calls: `post` queues one and returns a future of its result, `call` waits for
// it. Calls posted to several links run in parallel.
//
// Thread safety: post and call from any thread; the connection is touched only on the
// link's thread. A stream made on a link holds the link (shared_ptr), so the routed
// connection may drop the link (a broken connection, a node that moved) while a scan
// still reads from it.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cellar/client.h"
#include "cellar/connection.h"

namespace cellar::cluster {

class node_link {
 public:
  static result<std::shared_ptr<node_link>> open(const std::string& address, const rpc::client_options& o) {
    auto link = std::shared_ptr<node_link>(new node_link);
    link->thread_ = std::thread([l = link.get()] { l->run(); });
    auto made = link->call([&](std::unique_ptr<connection>& c) -> status {
      auto r = rpc::connect(address, o);
      if (!r) return r.error();
      c = std::move(r.value());
      return status::ok();
    });
    if (!made) return made;
    return link;
  }

  ~node_link() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  node_link(const node_link&) = delete;
  node_link& operator=(const node_link&) = delete;

  // Runs f(connection) on the link's thread; the future gets its result.
  template <class F>
  auto post(F f) -> std::future<decltype(f(std::declval<std::unique_ptr<connection>&>()))> {
    using R = decltype(f(std::declval<std::unique_ptr<connection>&>()));
    auto task = std::make_shared<std::packaged_task<R()>>([this, f = std::move(f)]() mutable { return f(conn_); });
    auto fut = task->get_future();
    {
      std::lock_guard lock(mu_);
      tasks_.push_back([task] { (*task)(); });
    }
    cv_.notify_all();
    return fut;
  }
  template <class F>
  auto call(F f) -> decltype(f(std::declval<std::unique_ptr<connection>&>())) {
    return post(std::move(f)).get();
  }

 private:
  node_link() = default;
  void run() {
    for (;;) {
      std::function<void()> t;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) break;
        t = std::move(tasks_.front());
        tasks_.pop_front();
      }
      t();
    }
    conn_.reset();  // on its own thread
  }

  std::unique_ptr<connection> conn_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

// A stream made on the link's connection, read and destroyed on the link's thread.
class linked_stream final : public row_stream {
 public:
  linked_stream(std::shared_ptr<node_link> link, std::unique_ptr<row_stream> s)
      : link_(std::move(link)), s_(std::move(s)) {}
  ~linked_stream() override {
    link_->call([this](std::unique_ptr<connection>&) {
      s_.reset();
      return 0;
    });
  }
  result<std::vector<row_result>> next(std::size_t n) override {
    return link_->call([this, n](std::unique_ptr<connection>&) { return s_->next(n); });
  }

 private:
  std::shared_ptr<node_link> link_;  // declared first: outlives s_
  std::unique_ptr<row_stream> s_;
};

}  // namespace cellar::cluster
