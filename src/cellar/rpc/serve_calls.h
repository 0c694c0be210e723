// rpc/serve_calls.h: what the server's two protocols share (internal to rpc/): the state of
// the server and of each connection, and the batch and scan calls as both serve them
// (rpc_session.cc for Cap'n Proto RPC, server.cc for frames).
//
// Thread safety: a connection_state belongs to its connection's event loop; shared_state
// is shared by every loop (store, metrics and connection slots are thread-safe; opts is
// read only). Every reply callback runs on the calling loop.
#pragma once

#include <kj/async.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cellar.capnp.h"
#include "cellar/store.h"
#include "dispatch/call_order.h"
#include "route/scan_scope.h"
#include "rpc/connection_guard.h"
#include "rpc/convert.h"
#include "rpc/loop_handoff.h"
#include "rpc/metrics.h"
#include "rpc/scan_pages.h"
#include "rpc/server.h"
#include "rpc/tls.h"
#include "store/access.h"
#include "store/data_path.h"

namespace cellar::rpc::serving {

// One connection's calls: how many are in flight (--max-in-flight), and their order at the
// partitions (dispatch/call_order.h): the connection is one caller.
struct connection_state {
  std::size_t in_flight = 0;
  std::shared_ptr<detail::call_order> order = std::make_shared<detail::call_order>();
};

struct shared_state {
  store& s;
  detail::data_path& data;  // every data call goes through it
  server_options opts;
  worker_pool pool;
  rpc::metrics m;
  connection_slots slots;
  std::optional<tls_server_keys> tls;  // set: every connection starts with a TLS handshake
  shared_state(store& st, server_options o)
      : s(st),
        data(detail::store_access::data(st)),
        opts(std::move(o)),
        pool(opts.worker_threads),
        slots(opts.max_connections) {}
};

// Admits a call of `conn` (counted in in_flight until it is answered), or says why not.
inline status admit(const shared_state& st, connection_state& conn) {
  if (conn.in_flight >= st.opts.max_in_flight)
    return {code::unavailable,
            "too many calls in flight on this connection (limit " + std::to_string(st.opts.max_in_flight) + ")"};
  ++conn.in_flight;
  return status::ok();
}

template <class Reply>
kj::Maybe<kj::Promise<void>> run_checked_batch(detail::data_path& data, const std::shared_ptr<connection_state>& conn,
                                               std::string_view table, std::vector<batch_op> ops, Reply reply);

// A batch call, from either protocol: checked, then dispatched with the connection's call
// order (dispatch/dispatch.h): parts run on this thread where the partitions are free and
// nothing of this connection waits ahead of them, the rest at the partitions' actors.
// `no_forward` (wire: noForward): a cluster member answers NOT_OWNER for the actions of
// partitions it does not own instead of forwarding them (data_path::not_owned).
// `reply(st, results)` is called once, on this loop: with an error and no results when
// nothing ran. Returns nothing when `reply` has been called already, else the promise that
// calls it.
template <class Reply>
kj::Maybe<kj::Promise<void>> serve_batch(shared_state& st, const std::shared_ptr<connection_state>& conn,
                                         capnp::Text::Reader table_name, capnp::List<wire::Action>::Reader actions,
                                         bool no_forward, Reply reply) {
  if (actions.size() > st.opts.max_batch) {
    reply(status{code::too_large, "a batch of " + std::to_string(actions.size()) + " actions exceeds the limit of " +
                                      std::to_string(st.opts.max_batch)},
          std::vector<op_result>{});
    return nullptr;
  }
  if (auto s = admit(st, *conn); !s) {
    reply(s, std::vector<op_result>{});
    return nullptr;
  }
  std::vector<batch_op> ops;
  ops.reserve(actions.size());
  for (auto a : actions) {
    auto op = from_wire(a);
    if (!op) {
      --conn->in_flight;
      reply(op.error(), std::vector<op_result>{});
      return nullptr;
    }
    ops.push_back(std::move(op.value()));
  }
  // An unknown table fails the call as a whole (the embedded API answers per action).
  auto& data = st.data;
  const std::string_view table(table_name.cStr(), table_name.size());
  auto rt = data.lookup(table);
  if (!rt) {
    --conn->in_flight;
    reply(data.missing(table), std::vector<op_result>{});
    return nullptr;
  }
  if (no_forward && data.cluster_member()) {
    auto refused = data.not_owned(*rt, ops);
    if (!refused.empty()) {
      // Only the actions of this node's partitions run; the others answer NOT_OWNER.
      const std::size_t n = ops.size();
      std::vector<batch_op> kept;
      std::vector<std::uint32_t> kept_at;
      for (std::uint32_t i = 0, r = 0; i < n; ++i) {
        if (r < refused.size() && refused[r].first == i) {
          ++r;
          continue;
        }
        kept.push_back(std::move(ops[i]));
        kept_at.push_back(i);
      }
      auto merge = [n, refused = std::move(refused), kept_at = std::move(kept_at),
                    reply = kj::mv(reply)](const status& s, std::vector<op_result> r) mutable {
        if (!s) return reply(s, std::move(r));
        std::vector<op_result> out(n);
        for (auto& [i, e] : refused) out[i].st = e;
        for (std::size_t k = 0; k < kept_at.size() && k < r.size(); ++k) out[kept_at[k]] = std::move(r[k]);
        reply(s, std::move(out));
      };
      if (kept.empty()) {
        --conn->in_flight;
        merge(status::ok(), {});
        return nullptr;
      }
      return run_checked_batch(data, conn, table, std::move(kept), kj::mv(merge));
    }
  }
  return run_checked_batch(data, conn, table, std::move(ops), kj::mv(reply));
}

// The rest of serve_batch: `ops` of an existing table, the call admitted.
template <class Reply>
kj::Maybe<kj::Promise<void>> run_checked_batch(detail::data_path& data, const std::shared_ptr<connection_state>& conn,
                                               std::string_view table, std::vector<batch_op> ops, Reply reply) {
  auto later = std::make_shared<handoff<std::vector<op_result>>>();
  auto now = data.run_batch(table, std::move(ops), conn->order, true, later->deliverer());
  if (now) {
    --conn->in_flight;
    reply(status::ok(), std::move(*now));
    return nullptr;
  }
  return kj::Promise<void>(
      later->promise()
          .then([reply = kj::mv(reply)](std::vector<op_result> r) mutable { reply(status::ok(), std::move(r)); })
          .attach(kj::defer([conn] { --conn->in_flight; })));
}

// The first page (`first` > 0 results) of a scan over `scope`, from either protocol; its
// pages are read for the connection's call order. `reply(st, scanner, page)` is called
// once, on this loop: with an error and null pointers when the scan did not start.
template <class Reply>
kj::Promise<void> serve_scan(shared_state& st, const std::shared_ptr<connection_state>& conn,
                             capnp::Text::Reader table_name, wire::Scan::Reader scan_spec,
                             const detail::scan_scope& scope, std::size_t first, Reply reply) {
  auto sc = st.data.open_scan(std::string_view(table_name.cStr(), table_name.size()), from_wire(scan_spec), conn->order,
                              scope);
  if (!sc) {
    reply(sc.error(), nullptr, nullptr);
    return kj::READY_NOW;
  }
  if (auto s = admit(st, *conn); !s) {
    reply(s, nullptr, nullptr);
    return kj::READY_NOW;
  }
  auto shared = std::make_shared<scanner>(std::move(sc.value()));
  return fetch_page(shared, first)
      .then([shared, reply = kj::mv(reply)](std::shared_ptr<scan_page_result> page) mutable {
        reply(status::ok(), std::move(shared), std::move(page));
      })
      .attach(kj::defer([conn] { --conn->in_flight; }));
}

}  // namespace cellar::rpc::serving
