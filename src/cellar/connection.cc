#include "cellar/connection.h"

#include "store/ddl_apply.h"

namespace cellar {

result<row_result> connection::get(const std::string& table, const cellar::get& g) {
  auto r = batch(table, {g});
  if (!r[0].st) return r[0].st;
  return std::move(r[0].row);
}

status connection::put(const std::string& table, const cellar::put& p) { return batch(table, {p})[0].st; }

namespace {
status no_backup() { return {code::unsupported, "this connection does not reach named snapshots or bulk loads"}; }
}  // namespace

status connection::snapshot_table(const std::string&, const std::string&) { return no_backup(); }
result<std::vector<snapshot_info>> connection::list_snapshots(const std::string&, const std::string&) {
  return no_backup();
}
status connection::delete_snapshot(const std::string&) { return no_backup(); }
status connection::restore_snapshot(const std::string&) { return no_backup(); }
status connection::clone_snapshot(const std::string&, const std::string&) { return no_backup(); }
status connection::export_snapshot(const std::string&, const std::string&) { return no_backup(); }
result<snapshot_info> connection::import_snapshot(const std::string&) { return no_backup(); }
result<bulk_load_stats> connection::bulk_load(const std::string&, const std::string&) { return no_backup(); }

namespace {

status not_here(std::string_view what) {
  return {code::unsupported, "this connection does not reach " + std::string(what)};
}

}  // namespace

status connection::create_namespace(const namespace_descriptor&) { return not_here("namespaces"); }
status connection::drop_namespace(const std::string&) { return not_here("namespaces"); }
status connection::alter_namespace(const std::string&, const std::map<std::string, std::string>&,
                                   const std::vector<std::string>&) {
  return not_here("namespaces");
}
result<namespace_descriptor> connection::describe_namespace(const std::string&) { return not_here("namespaces"); }
result<std::vector<namespace_descriptor>> connection::list_namespaces() { return not_here("namespaces"); }
result<std::vector<std::string>> connection::list_namespace_tables(const std::string&) {
  return not_here("namespaces");
}
result<std::vector<region_info>> connection::list_regions(const std::string&) { return not_here("regions"); }
status connection::split_region(const std::string&, const std::string&) { return not_here("regions"); }
status connection::split_partition(const std::string&, std::uint32_t, const std::string&) {
  return not_here("regions");
}
result<std::uint32_t> connection::split_table(const std::string&) { return not_here("regions"); }
status connection::merge_regions(const std::string&, std::uint32_t) { return not_here("regions"); }

namespace {

class embedded_stream final : public row_stream {
 public:
  explicit embedded_stream(scanner sc) : sc_(std::move(sc)) {}
  result<std::vector<row_result>> next(std::size_t n) override { return sc_.next(n); }

 private:
  scanner sc_;
};

class embedded_connection final : public connection {
 public:
  explicit embedded_connection(store& s) : s_(s) {}

  std::vector<op_result> batch(const std::string& table, std::vector<batch_op> ops) override {
    auto t = s_.open_table(table);
    if (!t) {
      std::vector<op_result> out(ops.size());
      for (auto& r : out) r.st = t.error();
      return out;
    }
    return t->batch(std::move(ops));
  }

  result<std::unique_ptr<row_stream>> scan(const std::string& table, const cellar::scan& s) override {
    auto t = s_.open_table(table);
    if (!t) return t.error();
    auto sc = t->scan(s);
    if (!sc) return sc.error();
    return std::unique_ptr<row_stream>(new embedded_stream(std::move(sc.value())));
  }

  status ddl(std::string_view statements) override { return execute_ddl(s_, statements); }
  status create_table(const table_descriptor& d, schema_origin origin) override { return s_.create_table(d, origin); }
  status alter_family(const std::string& t, const family_descriptor& f) override { return s_.alter_family(t, f); }
  status drop_family(const std::string& t, const std::string& f) override { return s_.drop_family(t, f); }
  status drop_table(const std::string& t) override { return s_.drop_table(t); }
  status truncate_table(const std::string& t) override { return s_.truncate_table(t); }
  status disable_table(const std::string& t) override { return s_.disable_table(t); }
  status enable_table(const std::string& t) override { return s_.enable_table(t); }
  result<bool> is_table_enabled(const std::string& t) override { return s_.is_table_enabled(t); }
  status alter_table(const std::string& t, const std::map<std::string, std::string>& set,
                     const std::vector<std::string>& unset) override {
    return s_.alter_table(t, set, unset);
  }
  status create_namespace(const namespace_descriptor& ns) override { return s_.create_namespace(ns); }
  status drop_namespace(const std::string& n) override { return s_.drop_namespace(n); }
  status alter_namespace(const std::string& n, const std::map<std::string, std::string>& set,
                         const std::vector<std::string>& unset) override {
    return s_.alter_namespace(n, set, unset);
  }
  result<namespace_descriptor> describe_namespace(const std::string& n) override { return s_.describe_namespace(n); }
  result<std::vector<namespace_descriptor>> list_namespaces() override { return s_.list_namespaces(); }
  result<std::vector<std::string>> list_namespace_tables(const std::string& n) override {
    return s_.list_namespace_tables(n);
  }
  result<std::vector<region_info>> list_regions(const std::string& t) override { return s_.list_regions(t); }
  status split_region(const std::string& t, const std::string& key) override { return s_.split_region(t, key); }
  status split_partition(const std::string& t, std::uint32_t i, const std::string& key) override {
    return s_.split_partition(t, i, key);
  }
  result<std::uint32_t> split_table(const std::string& t) override { return s_.split_table(t); }
  status merge_regions(const std::string& t, std::uint32_t i) override { return s_.merge_regions(t, i); }
  result<std::vector<std::string>> list_tables() override { return s_.list_tables(); }
  result<table_descriptor> describe(const std::string& t) override { return s_.describe(t); }
  result<snapshot_stats> snapshot() override { return s_.snapshot(); }
  result<table_stats> stats(const std::string& t) override { return s_.stats(t); }
  result<store_summary> summary() override { return summarize(s_); }
  status snapshot_table(const std::string& t, const std::string& n) override { return s_.snapshot(t, n); }
  result<std::vector<snapshot_info>> list_snapshots(const std::string& t, const std::string& n) override {
    return s_.list_table_snapshots(t, n);
  }
  status delete_snapshot(const std::string& n) override { return s_.delete_snapshot(n); }
  status restore_snapshot(const std::string& n) override { return s_.restore_snapshot(n); }
  status clone_snapshot(const std::string& n, const std::string& t) override { return s_.clone_snapshot(n, t); }
  status export_snapshot(const std::string& n, const std::string& d) override { return s_.export_snapshot(n, d); }
  result<snapshot_info> import_snapshot(const std::string& d) override { return s_.import_snapshot(d); }
  result<bulk_load_stats> bulk_load(const std::string& t, const std::string& d) override { return s_.bulk_load(t, d); }

 private:
  store& s_;
};

}  // namespace

std::unique_ptr<connection> connect_embedded(store& s) { return std::make_unique<embedded_connection>(s); }

}  // namespace cellar
