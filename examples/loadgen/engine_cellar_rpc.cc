// The cellar-over-RPC engine: Cap'n Proto clients on one kj event loop per driver thread.
// Several calls are in flight per connection (pipelining); reads, updates and inserts of a
// slot go in one `batch` call; a scan is one `scan` call whose reply carries the rows.
#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <stdexcept>

#include "cellar.capnp.h"
#include "cellar/client.h"
#include "cellar_batch.h"
#include "engine.h"
#include "rpc/message_stream.h"
#include "rpc/socket_stream.h"
#include "rpc/tls.h"

namespace loadgen {

namespace {

capnp::Data::Reader bytes(const std::string& s) { return {reinterpret_cast<const kj::byte*>(s.data()), s.size()}; }

struct rpc_conn {
  kj::Own<cellar::rpc::client_channel> channel;
  cellar::wire::Cellar::Client cellar{nullptr};
};

class cellar_rpc_engine final : public engine, private kj::TaskSet::ErrorHandler {
 public:
  explicit cellar_rpc_engine(const target_options& o) : o_(o), io_(kj::setupAsyncIo()), tasks_(*this), batch_(o) {
    for (int i = 0; i < o.connections; ++i) {
      auto c = std::make_unique<rpc_conn>();
      kj::Own<kj::AsyncIoStream> stream =
          kj::heap<cellar::rpc::socket_stream>(io_.unixEventPort,
                                               cellar::rpc::connect_socket(o.host, static_cast<std::uint16_t>(o.port)));
      if (!o.tls_ca.empty()) {
        if (!tls_) {
          auto ca = cellar::rpc::load_ca(o.tls_ca);
          if (!ca) throw std::runtime_error(ca.error().to_string());
          tls_ = cellar::rpc::client_tls_context(ca.value());
        }
        stream = tls_->wrapClient(kj::mv(stream), o.host).wait(io_.waitScope);
      }
      c->channel = kj::heap<cellar::rpc::client_channel>(kj::mv(stream));
      auto login = c->channel->login();
      auto req = login.loginRequest();
      req.setToken(o.token);
      auto res = req.send().wait(io_.waitScope);
      if (res.getError().getCode() != 0)
        throw std::runtime_error(std::string("login: ") + res.getError().getMessage().cStr());
      c->cellar = res.getCellar();
      conns_.push_back(std::move(c));
    }
  }

  ~cellar_rpc_engine() noexcept override = default;

  void start(slot& s) override {
    auto& c = *conns_[static_cast<std::size_t>(s.conn)];
    start_slot(
        s, [&](std::size_t i) { send_scan(c, s, i); },
        [&](std::vector<std::size_t> batched) { send_batch(c, s, std::move(batched), false); });
  }

  const char* io() const override { return "kj"; }

  void wait(std::vector<slot*>& done, std::int64_t deadline_ns) override {
    if (completed_.empty()) {
      const std::int64_t d = deadline_ns - now_ns();
      if (d > 0) {
        auto paf = kj::newPromiseAndFulfiller<void>();
        waiter_ = kj::mv(paf.fulfiller);
        paf.promise.exclusiveJoin(io_.provider->getTimer().afterDelay(d * kj::NANOSECONDS)).wait(io_.waitScope);
        waiter_ = nullptr;
      } else {
        io_.waitScope.poll();
      }
    }
    for (auto* s : completed_) done.push_back(s);
    completed_.clear();
  }

 private:
  void taskFailed(kj::Exception&& e) override {
    failures_++;
    (void)e;
  }

  void call_done(slot& s) {
    if (--s.calls_pending > 0) return;
    s.end_ns = now_ns();
    completed_.push_back(&s);
    if (waiter_.get() != nullptr && waiter_->isWaiting()) waiter_->fulfill();
  }

  // Reads, updates and inserts (and the reads of rmw when !second; the writes when second).
  void send_batch(rpc_conn& c, slot& s, std::vector<std::size_t> idx, bool second) {
    auto req = c.cellar.batchRequest();
    req.setTable(o_.table);
    batch_.fill(req.initActions(static_cast<unsigned>(idx.size())), s, idx, second);
    ++s.calls_pending;
    auto* sp = &s;
    auto* cp = &c;
    tasks_.add(req.send().then(
        [this, sp, cp, idx = std::move(idx), second](capnp::Response<cellar::wire::Cellar::BatchResults> r) mutable {
          slot& s = *sp;
          auto rmw = take_batch_answer(s, idx, second, r.getError().getCode() == 0, r.getResults());
          if (!rmw.empty()) {
            s.mid_ns = now_ns();
            send_batch(*cp, s, std::move(rmw), true);
          } else if (!second) {
            s.mid_ns = now_ns();
          }
          call_done(s);
        },
        [this, sp, idx](kj::Exception&&) {
          for (auto i : idx) sp->ok[i] = 0;
          call_done(*sp);
        }));
  }

  void send_scan(rpc_conn& c, slot& s, std::size_t i) {
    const operation& op = s.ops[i];
    auto req = c.cellar.scanRequest();
    req.setTable(o_.table);
    auto sc = req.initScan();
    const std::string key = build_key_name(op.keynum, o_.keys);
    sc.setStart(bytes(key));
    sc.setLimit(op.scan_length);
    sc.setCaching(op.scan_length);
    // One call: the reply carries the rows (firstCount) and, the limit being the
    // length, no scanner to page or release.
    req.setFirstCount(static_cast<std::uint32_t>(op.scan_length));
    ++s.calls_pending;
    auto* sp = &s;
    tasks_.add(req.send().then(
        [this, sp, i](capnp::Response<cellar::wire::Cellar::ScanResults> r) {
          if (r.getError().getCode() != 0 || !r.getDone()) sp->ok[i] = 0;
          sp->rows[i] = static_cast<std::int32_t>(r.getResults().size());
          call_done(*sp);
        },
        [this, sp, i](kj::Exception&&) {
          sp->ok[i] = 0;
          call_done(*sp);
        }));
  }

  target_options o_;
  kj::AsyncIoContext io_;
  kj::Own<kj::TlsContext> tls_;  // before the connections: they use it
  std::vector<std::unique_ptr<rpc_conn>> conns_;
  kj::TaskSet tasks_;
  batch_writer batch_;
  std::vector<slot*> completed_;
  kj::Own<kj::PromiseFulfiller<void>> waiter_;
  std::uint64_t failures_ = 0;
};

}  // namespace

void prepare_cellar_rpc(const target_options& o, bool recreate) {
  cellar::rpc::client_options co;
  co.token = o.token;
  co.tls_ca = o.tls_ca;
  auto c = cellar::rpc::connect(o.host + ":" + std::to_string(o.port), co);
  if (!c) throw std::runtime_error("cannot connect: " + c.error().to_string());
  auto& conn = *c.value();
  auto tables = conn.list_tables();
  bool exists = false;
  if (tables)
    for (auto& t : tables.value()) exists |= t == o.table;
  if (exists && !recreate) return;
  if (exists) {
    if (auto s = conn.drop_table(o.table); !s) throw std::runtime_error("drop table: " + s.to_string());
  }
  if (auto s = conn.create_table(ycsb_table(o), cellar::schema_origin::hbase_shell); !s)
    throw std::runtime_error("create table: " + s.to_string());
}

std::unique_ptr<engine> make_cellar_rpc_engine(const target_options& o) {
  return std::make_unique<cellar_rpc_engine>(o);
}

}  // namespace loadgen
