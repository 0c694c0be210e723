#include "cellar/client.h"

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include "rpc/convert.h"
#include "rpc/frames.h"
#include "rpc/message_stream.h"
#include "rpc/scoped_scan.h"
#include "rpc/socket_stream.h"
#include "rpc/tls.h"
#include "util/resend.h"

namespace cellar::rpc {

namespace {

std::string str(capnp::Text::Reader t) { return {t.cStr(), t.size()}; }

status lost(const kj::Exception& e) {
  return {code::unavailable, std::string("connection to cellar-server failed: ") + e.getDescription().cStr()};
}

class rpc_stream;

class rpc_connection final : public connection {
 public:
  rpc_connection(kj::AsyncIoContext io, kj::Own<kj::AsyncIoStream> stream, capnp::ReaderOptions ro)
      : io_(kj::mv(io)), channel_(kj::mv(stream), ro), login_(channel_.login()), cellar_(nullptr) {}
  ~rpc_connection() noexcept override = default;

  status login(const std::string& token) {
    try {
      auto req = login_.loginRequest();
      req.setToken(token);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      cellar_ = res.getCellar();
      return status::ok();
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  kj::WaitScope& ws() { return io_.waitScope; }

  // Batches from now on over `f` (already logged in).
  void use_frames(std::unique_ptr<frame_client> f) { frames_ = std::move(f); }
  void set_no_forward(bool on) { no_forward_ = on; }

  std::vector<op_result> batch(const std::string& table, std::vector<batch_op> ops) override {
    return detail::resend_while_reshaping(std::move(ops), [&](const std::vector<batch_op>& part, int) {
      return batch_once(table, part);
    });
  }

  std::vector<op_result> batch_once(const std::string& table, const std::vector<batch_op>& ops) {
    if (frames_) {
      auto r = frames_->batch(table, ops);
      if (r) return std::move(r.value());
      std::vector<op_result> out(ops.size());
      for (auto& x : out) x.st = r.error();
      return out;
    }
    std::vector<op_result> out(ops.size());
    try {
      auto req = cellar_.batchRequest();
      req.setTable(table);
      if (no_forward_) req.setNoForward(true);
      auto actions = req.initActions(static_cast<unsigned>(ops.size()));
      for (unsigned i = 0; i < actions.size(); ++i) to_wire(ops[i], actions[i]);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) {
        for (auto& r : out) r.st = s;
        return out;
      }
      auto results = res.getResults();
      if (results.size() != ops.size()) {
        for (auto& r : out) r.st = {code::internal, "the server answered a different number of results"};
        return out;
      }
      for (unsigned i = 0; i < results.size(); ++i) out[i] = from_wire(results[i]);
    } catch (const kj::Exception& e) {
      for (auto& r : out) r.st = lost(e);
    }
    return out;
  }

  result<std::unique_ptr<row_stream>> scan(const std::string& table, const cellar::scan& s) override {
    auto r = scan(table, s, {});
    if (!r) return r.error();
    return std::unique_ptr<row_stream>(std::move(r.value()));
  }
  result<std::unique_ptr<scoped_stream>> scan(const std::string& table, const cellar::scan& s,
                                              const detail::scan_scope& scope);

  status ddl(std::string_view statements) override {
    return call_status([&] {
      auto req = cellar_.ddlRequest();
      req.setStatement(std::string(statements));
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status create_table(const table_descriptor& d, schema_origin origin) override {
    return call_status([&] {
      auto req = cellar_.createTableRequest();
      to_wire(d, req.initDescriptor());
      req.setHbaseDefaults(origin == schema_origin::hbase_shell);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status alter_family(const std::string& table, const family_descriptor& f) override {
    return call_status([&] {
      auto req = cellar_.alterFamilyRequest();
      req.setTable(table);
      to_wire(f, req.initFamily());
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status drop_family(const std::string& table, const std::string& family) override {
    return call_status([&] {
      auto req = cellar_.dropFamilyRequest();
      req.setTable(table);
      req.setFamily(family);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status drop_table(const std::string& table) override {
    return call_status([&] {
      auto req = cellar_.dropTableRequest();
      req.setTable(table);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status truncate_table(const std::string& table) override {
    return call_status([&] {
      auto req = cellar_.truncateTableRequest();
      req.setTable(table);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status disable_table(const std::string& table) override {
    return call_status([&] {
      auto req = cellar_.disableTableRequest();
      req.setTable(table);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status enable_table(const std::string& table) override {
    return call_status([&] {
      auto req = cellar_.enableTableRequest();
      req.setTable(table);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status alter_table(const std::string& table, const std::map<std::string, std::string>& set,
                     const std::vector<std::string>& unset) override {
    return call_status([&] {
      auto req = cellar_.alterTableRequest();
      req.setTable(table);
      to_wire(set, req.initSet(static_cast<unsigned>(set.size())));
      auto names = req.initUnset(static_cast<unsigned>(unset.size()));
      for (unsigned i = 0; i < names.size(); ++i) names.set(i, unset[i]);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status create_namespace(const namespace_descriptor& ns) override {
    return call_status([&] {
      auto req = cellar_.createNamespaceRequest();
      auto d = req.initDescriptor();
      d.setName(ns.name);
      to_wire(ns.properties, d.initProperties(static_cast<unsigned>(ns.properties.size())));
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status drop_namespace(const std::string& name) override {
    return call_status([&] {
      auto req = cellar_.dropNamespaceRequest();
      req.setName(name);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status alter_namespace(const std::string& name, const std::map<std::string, std::string>& set,
                         const std::vector<std::string>& unset) override {
    return call_status([&] {
      auto req = cellar_.alterNamespaceRequest();
      req.setName(name);
      to_wire(set, req.initSet(static_cast<unsigned>(set.size())));
      auto names = req.initUnset(static_cast<unsigned>(unset.size()));
      for (unsigned i = 0; i < names.size(); ++i) names.set(i, unset[i]);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  result<namespace_descriptor> describe_namespace(const std::string& name) override {
    try {
      auto req = cellar_.describeNamespaceRequest();
      req.setName(name);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      return namespace_descriptor{str(res.getDescriptor().getName()), from_wire(res.getDescriptor().getProperties())};
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<std::vector<namespace_descriptor>> list_namespaces() override {
    try {
      auto res = cellar_.listNamespacesRequest().send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      std::vector<namespace_descriptor> out;
      for (auto n : res.getNamespaces()) out.push_back({str(n.getName()), from_wire(n.getProperties())});
      return out;
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<std::vector<std::string>> list_namespace_tables(const std::string& name) override {
    try {
      auto req = cellar_.listNamespaceTablesRequest();
      req.setName(name);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      std::vector<std::string> out;
      for (auto t : res.getTables()) out.push_back(str(t));
      return out;
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<std::vector<region_info>> list_regions(const std::string& table) override {
    try {
      auto req = cellar_.listRegionsRequest();
      req.setTable(table);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      std::vector<region_info> out;
      for (auto r : res.getRegions()) {
        region_info x;
        x.index = r.getIndex();
        x.start_key.assign(reinterpret_cast<const char*>(r.getStartKey().begin()), r.getStartKey().size());
        x.end_key.assign(reinterpret_cast<const char*>(r.getEndKey().begin()), r.getEndKey().size());
        x.node = str(r.getNode());
        x.cells = r.getCells();
        x.bytes = r.getBytes();
        out.push_back(std::move(x));
      }
      return out;
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  status split_region(const std::string& table, const std::string& key) override {
    return call_status([&] {
      auto req = cellar_.splitRegionRequest();
      req.setTable(table);
      req.setKey(capnp::Data::Reader(reinterpret_cast<const kj::byte*>(key.data()), key.size()));
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status split_partition(const std::string& table, std::uint32_t index, const std::string& key) override {
    return split_regions(table, true, index, key).error();
  }

  result<std::uint32_t> split_table(const std::string& table) override { return split_regions(table, false, 0, {}); }

  // splitRegions; UNSUPPORTED from a server that predates it.
  result<std::uint32_t> split_regions(const std::string& table, bool by_index, std::uint32_t index,
                                      const std::string& key) {
    try {
      auto req = cellar_.splitRegionsRequest();
      req.setTable(table);
      req.setByIndex(by_index);
      req.setIndex(index);
      req.setKey(capnp::Data::Reader(reinterpret_cast<const kj::byte*>(key.data()), key.size()));
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      return res.getSplits();
    } catch (const kj::Exception& e) {
      if (e.getType() == kj::Exception::Type::UNIMPLEMENTED)
        return status{code::unsupported,
                      "split: the server is older than splits of a region by name or of a whole "
                      "table (split 'table', 'key' still works)"};
      return lost(e);
    }
  }

  status merge_regions(const std::string& table, std::uint32_t index) override {
    return call_status([&] {
      auto req = cellar_.mergeRegionsRequest();
      req.setTable(table);
      req.setIndex(index);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  result<bool> is_table_enabled(const std::string& table) override {
    try {
      auto req = cellar_.isTableEnabledRequest();
      req.setTable(table);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      return res.getEnabled();
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<std::vector<std::string>> list_tables() override {
    try {
      auto res = cellar_.listTablesRequest().send().wait(io_.waitScope);
      std::vector<std::string> out;
      for (auto t : res.getTables()) out.push_back(str(t));
      return out;
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<table_descriptor> describe(const std::string& table) override {
    try {
      auto req = cellar_.describeRequest();
      req.setTable(table);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      return from_wire(res.getDescriptor());
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<snapshot_stats> snapshot() override {
    try {
      auto res = cellar_.snapshotRequest().send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      auto w = res.getStats();
      snapshot_stats out;
      out.generation = w.getGeneration();
      out.changes = w.getChanges();
      out.bytes = w.getBytes();
      out.seconds = w.getSeconds();
      return out;
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  status snapshot_table(const std::string& table, const std::string& name) override {
    return call_status([&] {
      auto req = cellar_.snapshotTableRequest();
      req.setTable(table);
      req.setName(name);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  result<std::vector<snapshot_info>> list_snapshots(const std::string& table_regex,
                                                    const std::string& name_regex) override {
    try {
      auto req = cellar_.listSnapshotsRequest();
      req.setTableRegex(table_regex);
      req.setNameRegex(name_regex);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      std::vector<snapshot_info> out;
      for (auto x : res.getSnapshots()) out.push_back(from_wire(x));
      return out;
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  status delete_snapshot(const std::string& name) override {
    return call_status([&] {
      auto req = cellar_.deleteSnapshotRequest();
      req.setName(name);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status restore_snapshot(const std::string& name) override {
    return call_status([&] {
      auto req = cellar_.restoreSnapshotRequest();
      req.setName(name);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status clone_snapshot(const std::string& name, const std::string& table) override {
    return call_status([&] {
      auto req = cellar_.cloneSnapshotRequest();
      req.setName(name);
      req.setTable(table);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  status export_snapshot(const std::string& name, const std::string& dir) override {
    return call_status([&] {
      auto req = cellar_.exportSnapshotRequest();
      req.setName(name);
      req.setDir(dir);
      return from_wire(req.send().wait(io_.waitScope).getError());
    });
  }

  result<snapshot_info> import_snapshot(const std::string& dir) override {
    try {
      auto req = cellar_.importSnapshotRequest();
      req.setDir(dir);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      return from_wire(res.getSnapshot());
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<bulk_load_stats> bulk_load(const std::string& table, const std::string& dir) override {
    try {
      auto req = cellar_.bulkLoadRequest();
      req.setTable(table);
      req.setDir(dir);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      bulk_load_stats out;
      out.partitions = res.getStats().getPartitions();
      out.cells = res.getStats().getCells();
      out.bytes = res.getStats().getBytes();
      return out;
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<table_stats> stats(const std::string& table) override {
    try {
      auto req = cellar_.statsRequest();
      req.setTable(table);
      auto res = req.send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      table_stats out;
      out.table = table;
      out.cells = res.getStats().getCells();
      out.bytes = res.getStats().getBytes();
      for (auto n : res.getStats().getCellsPerPartition()) out.cells_per_partition.push_back(n);
      return out;
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  result<store_summary> summary() override {
    try {
      auto res = cellar_.summaryRequest().send().wait(io_.waitScope);
      if (auto s = from_wire(res.getError()); !s) return s;
      return from_wire(res.getSummary());
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

 private:
  template <class F>
  status call_status(F f) {
    try {
      return f();
    } catch (const kj::Exception& e) {
      return lost(e);
    }
  }

  kj::AsyncIoContext io_;
  client_channel channel_;
  wire::Login::Client login_;
  wire::Cellar::Client cellar_;
  std::unique_ptr<frame_client> frames_;
  bool no_forward_ = false;  // client_options::no_forward
};

class rpc_stream final : public scoped_stream {
 public:
  // `first`: the page the scan call returned; `s` is null when that page was the last,
  // whose filter end is `end`.
  rpc_stream(rpc_connection& c, wire::Scanner::Client s, std::vector<row_result> first, bool done,
             std::optional<scan_end> end)
      : c_(c), s_(kj::mv(s)), buffered_(std::move(first)), done_(done), end_(std::move(end)) {}
  ~rpc_stream() noexcept override = default;

  result<std::vector<row_result>> next(std::size_t n) override {
    std::vector<row_result> out;
    while (taken_ < buffered_.size() && out.size() < n) out.push_back(std::move(buffered_[taken_++]));
    try {
      while (!done_ && out.size() < n) {
        auto req = s_.nextRequest();
        req.setCount(static_cast<std::uint32_t>(std::min<std::size_t>(n - out.size(), 10000)));
        auto res = req.send().wait(c_.ws());
        if (auto s = from_wire(res.getError()); !s) return s;
        for (auto r : res.getResults()) out.push_back(from_wire(r));
        done_ = res.getDone();
        if (done_ && res.hasFilterEnd()) end_ = from_wire(res.getFilterEnd());
      }
    } catch (const kj::Exception& e) {
      return lost(e);
    }
    return out;
  }

  bool over() const override { return done_ && taken_ == buffered_.size(); }
  std::optional<scan_end> filter_end() const override { return done_ ? end_ : std::nullopt; }

 private:
  rpc_connection& c_;
  wire::Scanner::Client s_;
  std::vector<row_result> buffered_;
  std::size_t taken_ = 0;
  bool done_ = false;
  std::optional<scan_end> end_;
};

result<std::unique_ptr<scoped_stream>> rpc_connection::scan(const std::string& table, const cellar::scan& s,
                                                            const detail::scan_scope& scope) {
  try {
    auto req = cellar_.scanRequest();
    req.setTable(table);
    to_wire(s, req.initScan());
    if (!scope.partitions.empty()) {
      auto ps = req.initPartitions(static_cast<unsigned>(scope.partitions.size()));
      for (unsigned i = 0; i < ps.size(); ++i) ps.set(i, scope.partitions[i]);
    }
    if (scope.no_forward) req.setNoForward(true);
    // The first page comes with the scan call, as HBase's open-scanner call returns its
    // first `caching` rows (bounded by the limit, when there is one).
    std::int64_t first = s.caching_ > 0 ? s.caching_ : 100;
    if (s.limit_ >= 0) first = std::min(first, std::max<std::int64_t>(1, s.limit_));
    req.setFirstCount(static_cast<std::uint32_t>(std::min<std::int64_t>(first, 10000)));
    auto res = req.send().wait(io_.waitScope);
    if (auto st = from_wire(res.getError()); !st) return st;
    std::vector<row_result> rows;
    rows.reserve(res.getResults().size());
    for (auto r : res.getResults()) rows.push_back(from_wire(r));
    std::optional<scan_end> end;
    if (res.getDone() && res.hasFilterEnd()) end = from_wire(res.getFilterEnd());
    return std::unique_ptr<scoped_stream>(
        new rpc_stream(*this, res.getScanner(), std::move(rows), res.getDone(), std::move(end)));
  } catch (const kj::Exception& e) {
    return lost(e);
  }
}

}  // namespace

result<std::unique_ptr<scoped_stream>> scan_scoped(connection& c, const std::string& table, const cellar::scan& s,
                                                   const detail::scan_scope& scope) {
  auto* rc = dynamic_cast<rpc_connection*>(&c);
  if (rc == nullptr) return status{code::unsupported, "a scan over chosen partitions needs an RPC connection"};
  return rc->scan(table, s, scope);
}

result<std::unique_ptr<connection>> connect(const std::string& address, client_options o) {
  try {
    auto io = kj::setupAsyncIo();
    kj::Own<kj::AsyncIoStream> stream = kj::heap<socket_stream>(io.unixEventPort, connect_socket(address));
    if (!o.tls_ca.empty()) {
      auto ca = load_ca(o.tls_ca);
      if (!ca) return ca.error();
      auto ctx = client_tls_context(ca.value());
      const std::string name = o.tls_server_name.empty() ? host_of(address) : o.tls_server_name;
      stream = ctx->wrapClient(kj::mv(stream), name).wait(io.waitScope).attach(kj::mv(ctx));
    }
    capnp::ReaderOptions ro;
    ro.traversalLimitInWords = o.max_message_bytes / 8;
    auto c = std::make_unique<rpc_connection>(kj::mv(io), kj::mv(stream), ro);
    if (auto s = c->login(o.token); !s) return s;
    c->set_no_forward(o.no_forward);
    if (o.frames) {
      // A server that does not speak frames (an older cellar-server closes the connection
      // at the magic bytes) still serves everything over RPC: keep that. A refused token
      // is refused on RPC already, above.
      frame_client_options fo;
      fo.token = o.token;
      fo.max_message_bytes = o.max_message_bytes;
      fo.tls_ca = o.tls_ca;
      fo.tls_server_name = o.tls_server_name;
      fo.no_forward = o.no_forward;
      if (auto f = frame_client::connect(address, fo)) c->use_frames(std::move(f.value()));
    }
    return std::unique_ptr<connection>(std::move(c));
  } catch (const kj::Exception& e) {
    return status{code::unavailable, "cannot connect to " + address + ": " + e.getDescription().cStr()};
  }
}

}  // namespace cellar::rpc
