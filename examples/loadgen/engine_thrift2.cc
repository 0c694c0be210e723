// The thrift2 engine: cellar's HBase Thrift gateway (docs/thrift.md) through the C++ client
// generated from the project's hbase.thrift, buffered transport and binary protocol as
// HBase's clients default to. Thrift's C++ client is synchronous: a slot's reads go in one
// getMultiple call, its writes in one putMultiple, each scan in one getScannerResults, and
// the slot is done when start() returns, so each connection has one request in flight
// (--depth does not add any: use more connections or threads).
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>

#include <stdexcept>

#include "THBaseService.h"
#include "engine.h"

namespace loadgen {

namespace {

namespace t2 = apache::hadoop::hbase::thrift2;
namespace at = apache::thrift;

struct thrift2_connection {
  std::shared_ptr<at::transport::TTransport> transport;
  std::unique_ptr<t2::THBaseServiceClient> client;

  thrift2_connection(const std::string& host, int port) {
    auto socket = std::make_shared<at::transport::TSocket>(host, port);
    socket->setNoDelay(true);
    transport = std::make_shared<at::transport::TBufferedTransport>(socket);
    client = std::make_unique<t2::THBaseServiceClient>(std::make_shared<at::protocol::TBinaryProtocol>(transport));
    transport->open();
  }
};

class thrift2_engine final : public engine {
 public:
  explicit thrift2_engine(const target_options& o) : o_(o), values_(o.seed, o.field_length), rng_(o.seed * 7919 + 5) {
    for (int i = 0; i < field_count; ++i) fields_.push_back(field_name(i));
    for (int i = 0; i < o.connections; ++i) conns_.push_back(std::make_unique<thrift2_connection>(o.host, o.port));
  }

  void start(slot& s) override {
    s.ok.assign(s.ops.size(), 1);
    s.rows.assign(s.ops.size(), 0);
    auto& c = *conns_[static_cast<std::size_t>(s.conn) % conns_.size()]->client;
    try {
      run(s, c);
    } catch (const t2::TIOError& e) {
      fail_all(s, e.message);
    } catch (const std::exception& e) {
      fail_all(s, e.what());
    }
    s.end_ns = now_ns();
    if (s.mid_ns == 0) s.mid_ns = s.end_ns;
    done_.push_back(&s);
  }

  void wait(std::vector<slot*>& done, std::int64_t) override {
    done.insert(done.end(), done_.begin(), done_.end());
    done_.clear();
  }

  const char* io() const override { return "thrift-blocking"; }

 private:
  void fail_all(slot& s, const std::string& why) {
    s.ok.assign(s.ops.size(), 0);
    if (s.why.empty()) s.why = why;
  }

  t2::TPut put_of(const operation& op) {
    t2::TPut p;
    p.row = build_key_name(op.keynum, o_.keys);
    auto add = [&](int f) {
      t2::TColumnValue cv;
      cv.family = o_.family;
      cv.qualifier = fields_[static_cast<std::size_t>(f)];
      cv.value = values_.pick(rng_);
      p.columnValues.push_back(std::move(cv));
    };
    if (op.kind == op_kind::insert)
      for (int f = 0; f < field_count; ++f) add(f);
    else
      add(op.field);
    return p;
  }

  void run(slot& s, t2::THBaseServiceClient& c) {
    std::vector<std::size_t> reads;
    std::vector<t2::TGet> gets;
    std::vector<t2::TPut> puts;
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
      const operation& op = s.ops[i];
      if (op.kind == op_kind::read || op.kind == op_kind::rmw) {
        t2::TGet g;
        g.row = build_key_name(op.keynum, o_.keys);
        gets.push_back(std::move(g));
        reads.push_back(i);
      } else if (op.kind == op_kind::update || op.kind == op_kind::insert) {
        puts.push_back(put_of(op));
      }
    }
    std::vector<t2::TPut> rmw_puts;
    if (!gets.empty()) {
      std::vector<t2::TResult> got;
      c.getMultiple(got, o_.table, gets);
      for (std::size_t k = 0; k < reads.size(); ++k) {
        const auto i = reads[k];
        if (k >= got.size() || got[k].columnValues.empty()) {
          s.ok[i] = 0;
          if (s.why.empty()) s.why = "a read found no row";
        } else if (s.ops[i].kind == op_kind::rmw) {
          rmw_puts.push_back(put_of(s.ops[i]));
        }
      }
      s.mid_ns = now_ns();
    }
    if (!rmw_puts.empty()) puts.insert(puts.end(), rmw_puts.begin(), rmw_puts.end());
    if (!puts.empty()) c.putMultiple(o_.table, puts);
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
      const operation& op = s.ops[i];
      if (op.kind != op_kind::scan) continue;
      t2::TScan sc;
      sc.__set_startRow(build_key_name(op.keynum, o_.keys));
      sc.__set_caching(op.scan_length);
      sc.__set_limit(op.scan_length);
      std::vector<t2::TResult> rows;
      c.getScannerResults(rows, o_.table, sc, op.scan_length);
      s.rows[i] = static_cast<std::int32_t>(rows.size());
    }
  }

  target_options o_;
  value_pool values_;
  rng rng_;
  std::vector<std::string> fields_;
  std::vector<std::unique_ptr<thrift2_connection>> conns_;
  std::vector<slot*> done_;
};

}  // namespace

void prepare_thrift2(const target_options& o, bool recreate) {
  thrift2_connection conn(o.host, o.port);
  auto& c = *conn.client;
  t2::TTableName name;
  name.qualifier = o.table;
  if (c.tableExists(name)) {
    if (!recreate) return;
    c.disableTable(name);
    c.deleteTable(name);
  }
  const auto d = ycsb_table(o);
  if (d.partitioning.how != cellar::partition_spec::method::range)
    throw std::invalid_argument("the thrift2 target creates RANGE partitions (split keys): --partitioning range:N");
  t2::TTableDescriptor td;
  td.tableName = name;
  t2::TColumnFamilyDescriptor f;
  f.name = o.family;
  td.__set_columns({f});
  c.createTable(td, d.partitioning.bounds);
}

std::unique_ptr<engine> make_thrift2_engine(const target_options& o) { return std::make_unique<thrift2_engine>(o); }

}  // namespace loadgen
