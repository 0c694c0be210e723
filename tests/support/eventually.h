// tests/support/eventually.h: waiting for an asynchronous effect in a test.
//
// eventually(pred) polls `pred` until it holds, or until `timeout` passes, and returns its
// last value. It is for waiting on effects the test cannot be told of directly (a watch
// firing, a connection counted, a session expiring), never for timing them: the timeout
// only bounds a test whose effect never comes.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace testsupport {

inline bool eventually(const std::function<bool()>& pred,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace testsupport
