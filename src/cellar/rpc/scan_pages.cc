#include "rpc/scan_pages.h"

#include <algorithm>

#include "rpc/loop_handoff.h"
#include "rpc/metrics.h"

namespace cellar::rpc {

kj::Promise<std::shared_ptr<scan_page_result>> fetch_page(std::shared_ptr<scanner> sc, std::size_t n) {
  using rows = result<std::vector<row_result>>;
  auto later = std::make_shared<handoff<rows>>();
  // `sc` stays alive in the callback until the scanner is done with it.
  sc->next_async(n, [deliver = later->deliverer(), sc](rows r) { deliver(std::move(r)); });
  return later->promise().then([sc, n](rows r) {
    auto out = std::make_shared<scan_page_result>();
    out->done = !r || r->size() < n || sc->finished();
    if (out->done && r) out->filter_end = sc->filter_end();
    out->rows = std::move(r);
    return out;
  });
}

std::uint64_t page_words(const scan_page_result& page) {
  std::uint64_t words = 16;
  if (page.rows)
    for (const auto& row : *page.rows) words += wire_words(row);
  if (page.filter_end) words += 4 + page.filter_end->row.size() / 8;
  return words;
}

namespace {

class scanner_impl final : public wire::Scanner::Server {
 public:
  scanner_impl(std::shared_ptr<scanner> sc, rpc::metrics& m) : sc_(std::move(sc)), m_(m) {}

  // Calls on one scanner run in order: each fetch starts after the previous one.
  kj::Promise<void> next(NextContext context) override {
    const auto n = std::min<std::size_t>(std::max<std::uint32_t>(1, context.getParams().getCount()), 10000);
    kj::Promise<void> before = kj::READY_NOW;
    KJ_IF_MAYBE (t, tail_) {
      before = t->addBranch().ignoreResult();
    }
    auto sc = sc_;
    const auto t0 = metrics::clock::now();
    // The fetch itself: ordered after the previous call's, and carried on even if this
    // call is cancelled (its rows are then dropped), so the next call starts after it.
    auto fetched = before.then([sc, n] { return fetch_page(sc, n); }).fork();
    auto mine = fetched.addBranch().then([context, &m = m_, t0](std::shared_ptr<scan_page_result> page) mutable {
      fill_page(context.getResults(capnp::MessageSize{page_words(*page), 0}), *page);
      m.record(protocol::rpc, operation::scanner_next, page->rows.code(), t0);
    });
    tail_ = kj::mv(fetched);
    return mine;
  }

 private:
  std::shared_ptr<scanner> sc_;
  rpc::metrics& m_;
  kj::Maybe<kj::ForkedPromise<std::shared_ptr<scan_page_result>>> tail_;
};

}  // namespace

kj::Own<wire::Scanner::Server> make_scanner(std::shared_ptr<scanner> sc, metrics& m) {
  return kj::heap<scanner_impl>(std::move(sc), m);
}

}  // namespace cellar::rpc
