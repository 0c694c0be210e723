#include "rpc/rpc_session.h"

#include <capnp/rpc-twoparty.h>
#include <kj/async.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rpc/convert.h"
#include "store/ddl_apply.h"

namespace cellar::rpc::serving {

namespace {

std::string str(capnp::Text::Reader t) { return {t.cStr(), t.size()}; }

class cellar_impl final : public wire::Cellar::Server {
 public:
  cellar_impl(shared_state& st, std::shared_ptr<connection_state> conn) : st_(st), conn_(std::move(conn)) {}

  kj::Promise<void> batch(BatchContext context) override {
    auto params = context.getParams();
    const auto t0 = metrics::clock::now();
    const auto actions = params.getActions();
    const auto op = batch_operation(actions);
    auto waiting = serve_batch(st_, conn_, params.getTable(), actions, params.getNoForward(),
                               [context, &m = st_.m, t0, op](const status& s, std::vector<op_result> r) mutable {
                                 m.record_batch(protocol::rpc, op, s, r, t0);
                                 if (!s) {
                                   to_wire(s, context.getResults().initError());
                                   return;
                                 }
                                 std::uint64_t words = 16;
                                 for (const auto& x : r) words += wire_words(x);
                                 auto res = context.getResults(capnp::MessageSize{words, 0});
                                 to_wire(status::ok(), res.initError());
                                 auto out = res.initResults(static_cast<unsigned>(r.size()));
                                 for (unsigned i = 0; i < out.size(); ++i) to_wire(r[i], out[i]);
                               });
    KJ_IF_MAYBE (p, waiting) {
      return kj::mv(*p);
    }
    return kj::READY_NOW;
  }

  // With firstCount > 0 the reply carries the first page; a scan that ends within it
  // returns no scanner capability (nothing to page, nothing to release).
  kj::Promise<void> scan(ScanContext context) override {
    auto params = context.getParams();
    const std::size_t first = std::min<std::uint32_t>(params.getFirstCount(), 10000);
    const auto t0 = metrics::clock::now();
    if (first == 0) {
      auto table = params.getTable();
      auto sc = st_.data.open_scan(std::string_view(table.cStr(), table.size()), from_wire(params.getScan()),
                                   conn_->order, scope_of(params));
      if (!sc) {
        to_wire(sc.error(), context.getResults().initError());
        st_.m.record(protocol::rpc, operation::scan, sc.code(), t0);
        return kj::READY_NOW;
      }
      auto res = context.getResults();
      to_wire(status::ok(), res.initError());
      res.setScanner(make_scanner(std::make_shared<scanner>(std::move(sc.value())), st_.m));
      st_.m.record(protocol::rpc, operation::scan, code::ok, t0);
      return kj::READY_NOW;
    }
    return serve_scan(st_, conn_, params.getTable(), params.getScan(), scope_of(params), first,
                      [context, &m = st_.m, t0](const status& s, std::shared_ptr<scanner> sc,
                                                std::shared_ptr<scan_page_result> page) mutable {
                        m.record(protocol::rpc, operation::scan, s ? page->rows.code() : s.code(), t0);
                        if (!s) {
                          to_wire(s, context.getResults().initError());
                          return;
                        }
                        auto res = context.getResults(capnp::MessageSize{page_words(*page), 1});
                        fill_page(res, *page);
                        if (!page->done) res.setScanner(make_scanner(std::move(sc), m));
                      });
  }

  kj::Promise<void> ddl(DdlContext context) override {
    auto sql = str(context.getParams().getStatement());
    return blocking<status>(
        operation::ddl, context, [this, sql] { return execute_ddl(st_.s, sql); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> createTable(CreateTableContext context) override {
    auto d = from_wire(context.getParams().getDescriptor());
    if (!d) {
      to_wire(d.error(), context.getResults().initError());
      return kj::READY_NOW;
    }
    const auto origin =
        context.getParams().getHbaseDefaults() ? schema_origin::hbase_shell : schema_origin::oceanbase_ddl;
    if (d->partitioning.how == partition_spec::method::key && d->partitioning.partitions == 0)
      d->partitioning.partitions = st_.opts.default_partitions;
    return blocking<status>(
        operation::create_table, context,
        [this, d = std::move(d.value()), origin] { return st_.s.create_table(d, origin); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> alterFamily(AlterFamilyContext context) override {
    auto table = str(context.getParams().getTable());
    auto f = from_wire(context.getParams().getFamily());
    return blocking<status>(
        operation::alter_family, context, [this, table, f] { return st_.s.alter_family(table, f); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> dropFamily(DropFamilyContext context) override {
    auto table = str(context.getParams().getTable());
    auto f = str(context.getParams().getFamily());
    return blocking<status>(
        operation::drop_family, context, [this, table, f] { return st_.s.drop_family(table, f); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> dropTable(DropTableContext context) override {
    auto table = str(context.getParams().getTable());
    return blocking<status>(
        operation::drop_table, context, [this, table] { return st_.s.drop_table(table); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> truncateTable(TruncateTableContext context) override {
    auto table = str(context.getParams().getTable());
    return blocking<status>(
        operation::truncate_table, context, [this, table] { return st_.s.truncate_table(table); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> disableTable(DisableTableContext context) override {
    auto table = str(context.getParams().getTable());
    return blocking<status>(
        operation::disable_table, context, [this, table] { return st_.s.disable_table(table); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> enableTable(EnableTableContext context) override {
    auto table = str(context.getParams().getTable());
    return blocking<status>(
        operation::enable_table, context, [this, table] { return st_.s.enable_table(table); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> alterTable(AlterTableContext context) override {
    auto params = context.getParams();
    auto table = str(params.getTable());
    auto set = from_wire(params.getSet());
    std::vector<std::string> unset;
    for (auto n : params.getUnset()) unset.push_back(str(n));
    return blocking<status>(
        operation::alter_table, context,
        [this, table, set = std::move(set), unset = std::move(unset)] { return st_.s.alter_table(table, set, unset); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  // --- named snapshots, their files, bulk loads -----------------------------------------------
  template <class Context>
  kj::Promise<void> backup_call(Context context, std::function<status()> f) {
    return blocking<status>(operation::backup, context, std::move(f),
                            [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> snapshotTable(SnapshotTableContext context) override {
    auto table = str(context.getParams().getTable());
    auto name = str(context.getParams().getName());
    return backup_call(context, [this, table, name] { return st_.s.snapshot(table, name); });
  }

  kj::Promise<void> deleteSnapshot(DeleteSnapshotContext context) override {
    auto name = str(context.getParams().getName());
    return backup_call(context, [this, name] { return st_.s.delete_snapshot(name); });
  }

  kj::Promise<void> restoreSnapshot(RestoreSnapshotContext context) override {
    auto name = str(context.getParams().getName());
    return backup_call(context, [this, name] { return st_.s.restore_snapshot(name); });
  }

  kj::Promise<void> cloneSnapshot(CloneSnapshotContext context) override {
    auto name = str(context.getParams().getName());
    auto table = str(context.getParams().getTable());
    return backup_call(context, [this, name, table] { return st_.s.clone_snapshot(name, table); });
  }

  kj::Promise<void> exportSnapshot(ExportSnapshotContext context) override {
    auto name = str(context.getParams().getName());
    auto dir = str(context.getParams().getDir());
    return backup_call(context, [this, name, dir] { return st_.s.export_snapshot(name, dir); });
  }

  kj::Promise<void> listSnapshots(ListSnapshotsContext context) override {
    auto t = str(context.getParams().getTableRegex());
    auto n = str(context.getParams().getNameRegex());
    return blocking<result<std::vector<snapshot_info>>>(
        operation::backup, context, [this, t, n] { return st_.s.list_table_snapshots(t, n); },
        [](auto& res, result<std::vector<snapshot_info>> r) {
          to_wire(r.error(), res.initError());
          if (!r) return;
          auto out = res.initSnapshots(static_cast<unsigned>(r->size()));
          for (unsigned i = 0; i < out.size(); ++i) to_wire((*r)[i], out[i]);
        });
  }

  kj::Promise<void> importSnapshot(ImportSnapshotContext context) override {
    auto dir = str(context.getParams().getDir());
    return blocking<result<snapshot_info>>(
        operation::backup, context, [this, dir] { return st_.s.import_snapshot(dir); },
        [](auto& res, result<snapshot_info> r) {
          to_wire(r.error(), res.initError());
          if (r) to_wire(*r, res.initSnapshot());
        });
  }

  kj::Promise<void> bulkLoad(BulkLoadContext context) override {
    auto table = str(context.getParams().getTable());
    auto dir = str(context.getParams().getDir());
    return blocking<result<bulk_load_stats>>(
        operation::backup, context, [this, table, dir] { return st_.s.bulk_load(table, dir); },
        [](auto& res, result<bulk_load_stats> r) {
          to_wire(r.error(), res.initError());
          if (!r) return;
          auto s = res.initStats();
          s.setPartitions(r->partitions);
          s.setCells(r->cells);
          s.setBytes(r->bytes);
        });
  }

  kj::Promise<void> createNamespace(CreateNamespaceContext context) override {
    auto d = context.getParams().getDescriptor();
    namespace_descriptor ns{str(d.getName()), from_wire(d.getProperties())};
    return blocking<status>(
        operation::create_namespace, context, [this, ns = std::move(ns)] { return st_.s.create_namespace(ns); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> dropNamespace(DropNamespaceContext context) override {
    auto name = str(context.getParams().getName());
    return blocking<status>(
        operation::drop_namespace, context, [this, name] { return st_.s.drop_namespace(name); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> alterNamespace(AlterNamespaceContext context) override {
    auto params = context.getParams();
    auto name = str(params.getName());
    auto set = from_wire(params.getSet());
    std::vector<std::string> unset;
    for (auto n : params.getUnset()) unset.push_back(str(n));
    return blocking<status>(
        operation::alter_namespace, context,
        [this, name, set = std::move(set), unset = std::move(unset)] {
          return st_.s.alter_namespace(name, set, unset);
        },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> describeNamespace(DescribeNamespaceContext context) override {
    const auto t0 = metrics::clock::now();
    auto d = st_.s.describe_namespace(str(context.getParams().getName()));
    auto res = context.getResults();
    to_wire(d.error(), res.initError());
    if (d) {
      auto out = res.initDescriptor();
      out.setName(d->name);
      to_wire(d->properties, out.initProperties(static_cast<unsigned>(d->properties.size())));
    }
    st_.m.record(protocol::rpc, operation::describe_namespace, d.code(), t0);
    return kj::READY_NOW;
  }

  kj::Promise<void> listNamespaces(ListNamespacesContext context) override {
    const auto t0 = metrics::clock::now();
    auto all = st_.s.list_namespaces();
    auto res = context.getResults();
    to_wire(status::ok(), res.initError());
    auto out = res.initNamespaces(static_cast<unsigned>(all.size()));
    for (unsigned i = 0; i < out.size(); ++i) {
      out[i].setName(all[i].name);
      to_wire(all[i].properties, out[i].initProperties(static_cast<unsigned>(all[i].properties.size())));
    }
    st_.m.record(protocol::rpc, operation::list_namespaces, code::ok, t0);
    return kj::READY_NOW;
  }

  kj::Promise<void> listNamespaceTables(ListNamespaceTablesContext context) override {
    const auto t0 = metrics::clock::now();
    auto names = st_.s.list_namespace_tables(str(context.getParams().getName()));
    auto res = context.getResults();
    to_wire(names.error(), res.initError());
    if (names) {
      auto out = res.initTables(static_cast<unsigned>(names->size()));
      for (unsigned i = 0; i < out.size(); ++i) out.set(i, (*names)[i]);
    }
    st_.m.record(protocol::rpc, operation::list_namespace_tables, names.code(), t0);
    return kj::READY_NOW;
  }

  kj::Promise<void> listRegions(ListRegionsContext context) override {
    auto table = str(context.getParams().getTable());
    return blocking<result<std::vector<region_info>>>(
        operation::list_regions, context, [this, table] { return st_.s.list_regions(table); },
        [](auto& res, result<std::vector<region_info>> r) {
          to_wire(r.error(), res.initError());
          if (!r) return;
          auto out = res.initRegions(static_cast<unsigned>(r->size()));
          for (unsigned i = 0; i < out.size(); ++i) {
            const auto& x = (*r)[i];
            out[i].setIndex(x.index);
            out[i].setStartKey(
                capnp::Data::Reader(reinterpret_cast<const kj::byte*>(x.start_key.data()), x.start_key.size()));
            out[i].setEndKey(
                capnp::Data::Reader(reinterpret_cast<const kj::byte*>(x.end_key.data()), x.end_key.size()));
            out[i].setNode(x.node);
            out[i].setCells(x.cells);
            out[i].setBytes(x.bytes);
          }
        });
  }

  kj::Promise<void> splitRegion(SplitRegionContext context) override {
    auto table = str(context.getParams().getTable());
    auto k = context.getParams().getKey();
    std::string key(reinterpret_cast<const char*>(k.begin()), k.size());
    return blocking<status>(
        operation::split_region, context, [this, table, key] { return st_.s.split_region(table, key); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> splitRegions(SplitRegionsContext context) override {
    auto p = context.getParams();
    auto table = str(p.getTable());
    const bool by_index = p.getByIndex();
    const auto index = p.getIndex();
    std::string key(reinterpret_cast<const char*>(p.getKey().begin()), p.getKey().size());
    return blocking<result<std::uint32_t>>(
        operation::split_region, context,
        [this, table, by_index, index, key]() -> result<std::uint32_t> {
          if (!by_index) return st_.s.split_table(table);
          if (auto s = st_.s.split_partition(table, index, key); !s) return s;
          return 1u;
        },
        [](auto& res, result<std::uint32_t> r) {
          to_wire(r.error(), res.initError());
          if (r) res.setSplits(r.value());
        });
  }

  kj::Promise<void> mergeRegions(MergeRegionsContext context) override {
    auto table = str(context.getParams().getTable());
    auto index = context.getParams().getIndex();
    return blocking<status>(
        operation::merge_regions, context, [this, table, index] { return st_.s.merge_regions(table, index); },
        [](auto& res, status s) { to_wire(s, res.initError()); });
  }

  kj::Promise<void> isTableEnabled(IsTableEnabledContext context) override {
    const auto t0 = metrics::clock::now();
    auto r = st_.s.is_table_enabled(str(context.getParams().getTable()));
    auto res = context.getResults();
    to_wire(r.error(), res.initError());
    if (r) res.setEnabled(r.value());
    st_.m.record(protocol::rpc, operation::is_table_enabled, r.code(), t0);
    return kj::READY_NOW;
  }

  kj::Promise<void> listTables(ListTablesContext context) override {
    const auto t0 = metrics::clock::now();
    auto names = st_.s.list_tables();
    auto out = context.getResults().initTables(static_cast<unsigned>(names.size()));
    for (unsigned i = 0; i < out.size(); ++i) out.set(i, names[i]);
    st_.m.record(protocol::rpc, operation::list_tables, code::ok, t0);
    return kj::READY_NOW;
  }

  kj::Promise<void> describe(DescribeContext context) override {
    const auto t0 = metrics::clock::now();
    auto d = st_.s.describe(str(context.getParams().getTable()));
    auto res = context.getResults();
    to_wire(d.error(), res.initError());
    st_.m.record(protocol::rpc, operation::describe, d.code(), t0);
    if (d) to_wire(d.value(), res.initDescriptor());
    return kj::READY_NOW;
  }

  kj::Promise<void> snapshot(SnapshotContext context) override {
    return blocking<result<snapshot_stats>>(
        operation::snapshot, context, [this] { return st_.s.snapshot(); },
        [](auto& res, result<snapshot_stats> r) {
          to_wire(r.error(), res.initError());
          if (!r) return;
          auto s = res.initStats();
          s.setGeneration(r->generation);
          s.setChanges(r->changes);
          s.setBytes(r->bytes);
          s.setSeconds(r->seconds);
        });
  }

  kj::Promise<void> stats(StatsContext context) override {
    auto table = str(context.getParams().getTable());
    return blocking<result<table_stats>>(
        operation::stats, context, [this, table] { return st_.s.stats(table); },
        [](auto& res, result<table_stats> r) {
          to_wire(r.error(), res.initError());
          if (!r) return;
          auto s = res.initStats();
          s.setCells(r->cells);
          s.setBytes(r->bytes);
          auto per = s.initCellsPerPartition(static_cast<unsigned>(r->cells_per_partition.size()));
          for (unsigned i = 0; i < per.size(); ++i) per.set(i, r->cells_per_partition[i]);
        });
  }

  kj::Promise<void> summary(SummaryContext context) override {
    return blocking<result<store_summary>>(
        operation::summary, context,
        [this]() -> result<store_summary> {
          auto sum = summarize(st_.s);
          if (sum) sum->connections = st_.m.open_connections();
          return sum;
        },
        [](auto& res, result<store_summary> r) {
          to_wire(r.error(), res.initError());
          if (r) to_wire(r.value(), res.initSummary());
        });
  }

 private:
  // Runs `work` on the pool and `fill`s the results on the loop.
  template <class T, class Context, class Work, class Fill>
  kj::Promise<void> blocking(operation op, Context context, Work work, Fill fill) {
    const auto t0 = metrics::clock::now();
    if (auto s = admit(st_, *conn_); !s) {
      auto res = context.getResults();
      to_wire(s, res.initError());
      st_.m.record(protocol::rpc, op, s.code(), t0);
      return kj::READY_NOW;
    }
    // Later calls of the connection must see what this one does: none runs in place
    // until it is answered (dispatch/call_order.h).
    auto conn = conn_;
    conn->order->raise_barrier();
    return off_loop<T>(st_.pool, std::function<T()>(std::move(work)))
        .then([context, fill, &m = st_.m, op, t0](T r) mutable {
          m.record(protocol::rpc, op, r.code(), t0);
          auto res = context.getResults();
          fill(res, std::move(r));
        })
        .attach(kj::defer([conn] {
          --conn->in_flight;
          conn->order->lower_barrier();
        }));
  }

  shared_state& st_;
  std::shared_ptr<connection_state> conn_;
};

class login_impl final : public wire::Login::Server {
 public:
  login_impl(shared_state& st, connection_guard& guard, std::shared_ptr<connection_state> conn)
      : st_(st), guard_(guard), conn_(std::move(conn)) {}

  kj::Promise<void> login(LoginContext context) override {
    const auto t0 = metrics::clock::now();
    auto res = context.getResults();
    auto token = context.getParams().getToken();
    if (auto s = guard_.login(std::string_view(token.cStr(), token.size()), "rpc"); !s) {
      to_wire(s, res.initError());
      st_.m.record(protocol::rpc, operation::login, s.code(), t0);
      return kj::READY_NOW;
    }
    to_wire(status::ok(), res.initError());
    st_.m.record(protocol::rpc, operation::login, code::ok, t0);
    res.setCellar(kj::heap<cellar_impl>(st_, conn_));
    return kj::READY_NOW;
  }

 private:
  shared_state& st_;
  connection_guard& guard_;
  std::shared_ptr<connection_state> conn_;
};

}  // namespace

rpc_session::rpc_session(buffered_message_stream& messages, shared_state& st, capnp::ReaderOptions ro,
                         connection_guard& guard, std::shared_ptr<connection_state> conn)
    : network(messages, capnp::rpc::twoparty::Side::SERVER, ro),
      rpc(capnp::makeRpcServer(network, kj::heap<login_impl>(st, guard, std::move(conn)))) {}

}  // namespace cellar::rpc::serving
