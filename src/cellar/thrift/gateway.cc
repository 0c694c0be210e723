#include "thrift/gateway.h"

#include "cellar/connection.h"
#include "rpc/tls.h"
#include "thrift/event_server.h"
#include "thrift/scanners.h"
#include "thrift/thrift1_handler.h"
#include "thrift/thrift2_handler.h"

namespace cellar::thrift {

namespace at = apache::thrift;

struct gateway::impl {
  impl(store& s, gateway_options o)
      : options(std::move(o)), conn(connect_embedded(s)), scanners(options.max_scanners, options.scanner_timeout) {}

  gateway_options options;
  std::unique_ptr<connection> conn;
  scanner_table scanners;
  endpoint where;
  std::unique_ptr<event_server> loops;
  std::uint16_t port = 0;
  bool stopped = false;
};

gateway::gateway(std::unique_ptr<impl> i) : impl_(std::move(i)) {}

gateway::~gateway() { stop(); }

std::uint16_t gateway::port() const { return impl_->port; }

void gateway::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  if (impl_->loops) impl_->loops->stop();
}

result<std::unique_ptr<gateway>> gateway::start(store& s, gateway_options options) {
  auto i = std::make_unique<impl>(s, std::move(options));
  const auto& o = i->options;
  std::int32_t advertised_port = 0;  // 0: the port bound
  i->where.host = o.address;
  if (!o.advertise.empty()) {
    const auto colon = o.advertise.rfind(':');
    if (colon == std::string::npos)
      return status(code::invalid_argument, "advertise must be host:port, not " + o.advertise);
    i->where.host = o.advertise.substr(0, colon);
    try {
      advertised_port = std::stoi(o.advertise.substr(colon + 1));
    } catch (...) {
      return status(code::invalid_argument, "advertise must be host:port, not " + o.advertise);
    }
  }

  std::shared_ptr<at::TProcessor> processor;
  if (o.service == service::thrift2)
    processor = std::make_shared<t2::THBaseServiceProcessor>(
        std::make_shared<thrift2_handler>(s, *i->conn, i->scanners, i->options, i->where));
  else
    processor = std::make_shared<t1::HbaseProcessor>(
        std::make_shared<thrift1_handler>(s, *i->conn, i->scanners, i->options, i->where));
  event_server_options eo;
  eo.address = o.address;
  eo.port = o.port;
  eo.loops = o.threads;
  eo.framed = o.framed;
  eo.compact = o.compact;
  eo.max_connections = o.max_connections;
  if (!o.tls_cert_file.empty() || !o.tls_key_file.empty()) {
    // The data port's keys and TLS settings (rpc/tls.h), so that both ports accept the
    // same clients.
    if (o.tls_cert_file.empty() || o.tls_key_file.empty())
      return status(code::invalid_argument, "TLS needs both a certificate and its key");
    auto keys = rpc::load_server_keys(o.tls_cert_file, o.tls_key_file);
    if (!keys) return keys.error();
    auto tls = rpc::server_ssl_context(keys.value());
    if (!tls) return tls.error();
    eo.tls = std::move(tls.value());
    eo.tls_handshake_timeout = o.tls_handshake_timeout;
  }
  auto loops = event_server::start(processor, eo);
  if (!loops) return loops.error();
  i->loops = std::move(loops.value());
  i->port = i->loops->port();
  i->where.port = advertised_port > 0 ? advertised_port : i->port;
  return std::unique_ptr<gateway>(new gateway(std::move(i)));
}

}  // namespace cellar::thrift
