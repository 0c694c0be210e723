// rpc/scan_pages.h: the server's scan pages, for both protocols: a page fetched without
// blocking the event loop, its wire form, and the RPC `Scanner` capability that pages a
// scan (schemas/cellar.capnp).
#pragma once

#include <kj/async.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/store.h"
#include "route/scan_scope.h"
#include "rpc/convert.h"

namespace cellar::rpc {

class metrics;

// One page of a scan. `done`: the scan has nothing after the page; `filter_end`, when done:
// where a filter ended the scan (scanner::filter_end), carried as the wire's filterEnd.
struct scan_page_result {
  result<std::vector<row_result>> rows = std::vector<row_result>{};
  bool done = true;
  std::optional<scan_end> filter_end;
};

// Up to `n` results of `sc`: the scanner asks the partitions and the last answer fulfills
// the promise on this loop. `done` and `filter_end` are read while no other fetch can run.
kj::Promise<std::shared_ptr<scan_page_result>> fetch_page(std::shared_ptr<scanner> sc, std::size_t n);

// An upper bound of the words of a reply carrying `page`.
std::uint64_t page_words(const scan_page_result& page);

// Sets `filterEnd` of a reply (Cellar.scan, Scanner.next, frames' Reply) from `page`.
template <class Builder>
void set_filter_end(Builder b, const scan_page_result& page) {
  if (page.done && page.filter_end) to_wire(*page.filter_end, b.initFilterEnd());
}

// Fills the results of Cellar.scan or Scanner.next with `page`.
template <class Results>
void fill_page(Results res, const scan_page_result& page) {
  if (!page.rows) {
    to_wire(page.rows.error(), res.initError());
    res.setDone(true);
    return;
  }
  to_wire(status::ok(), res.initError());
  auto out = res.initResults(static_cast<unsigned>(page.rows->size()));
  for (unsigned i = 0; i < out.size(); ++i) to_wire((*page.rows)[i], out[i]);
  res.setDone(page.done);
  set_filter_end(res, page);
}

// The Scanner capability over `sc`; its calls are recorded in `m`, which must outlive it.
kj::Own<wire::Scanner::Server> make_scanner(std::shared_ptr<scanner> sc, metrics& m);

// The scope a scan request names: the params of Cellar.scan or a frames ScanRequest.
template <class Request>
detail::scan_scope scope_of(Request r) {
  detail::scan_scope s;
  for (auto p : r.getPartitions()) s.partitions.push_back(p);
  s.no_forward = r.getNoForward();
  return s;
}

}  // namespace cellar::rpc
