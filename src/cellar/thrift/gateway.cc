#include "thrift/gateway.h"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/server/TThreadedServer.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSSLServerSocket.h>
#include <thrift/transport/TSSLSocket.h>
#include <thrift/transport/TServerSocket.h>

#include <signal.h>

#include <future>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "cellar/connection.h"
#include "thrift/event_server.h"
#include "thrift/scanners.h"
#include "thrift/thrift1_handler.h"
#include "thrift/thrift2_handler.h"

namespace cellar::thrift {

namespace at = apache::thrift;

namespace {

// Reports the bound port once the server socket listens (serve() binds it on the serving
// thread), or why it could not.
class ready_signal : public at::server::TServerEventHandler {
 public:
  explicit ready_signal(std::shared_ptr<at::transport::TServerSocket> socket) : socket_(std::move(socket)) {}
  void preServe() override { ready_.set_value(socket_->getPort()); }
  std::future<int> port() { return ready_.get_future(); }
  void failed(const std::string& why) {
    try {
      ready_.set_exception(std::make_exception_ptr(std::runtime_error(why)));
    } catch (const std::future_error&) {
      // serve() failed after it was ready: the port was reported already
    }
  }

 private:
  std::shared_ptr<at::transport::TServerSocket> socket_;
  std::promise<int> ready_;
};

}  // namespace

struct gateway::impl {
  impl(store& s, gateway_options o)
      : options(std::move(o)), conn(connect_embedded(s)), scanners(options.max_scanners, options.scanner_timeout) {}

  gateway_options options;
  std::unique_ptr<connection> conn;
  scanner_table scanners;
  endpoint where;
  std::unique_ptr<event_server> loops;                  // without TLS
  std::unique_ptr<at::server::TThreadedServer> server;  // with TLS
  std::thread serving;
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
  if (impl_->server) impl_->server->stop();  // interrupts the accept and every connection's read
  if (impl_->serving.joinable()) impl_->serving.join();
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
  if (o.tls_cert_file.empty() && o.tls_key_file.empty()) {
    event_server_options eo;
    eo.address = o.address;
    eo.port = o.port;
    eo.loops = o.threads;
    eo.framed = o.framed;
    eo.compact = o.compact;
    eo.max_connections = o.max_connections;
    auto loops = event_server::start(processor, eo);
    if (!loops) return loops.error();
    i->loops = std::move(loops.value());
    i->port = i->loops->port();
    i->where.port = advertised_port > 0 ? advertised_port : i->port;
    return std::unique_ptr<gateway>(new gateway(std::move(i)));
  }
  std::shared_ptr<at::transport::TTransportFactory> transports;
  if (o.framed)
    transports = std::make_shared<at::transport::TFramedTransportFactory>();
  else
    transports = std::make_shared<at::transport::TBufferedTransportFactory>();
  std::shared_ptr<at::protocol::TProtocolFactory> protocols;
  if (o.compact)
    protocols = std::make_shared<at::protocol::TCompactProtocolFactory>();
  else
    protocols = std::make_shared<at::protocol::TBinaryProtocolFactory>();

  std::shared_ptr<at::transport::TServerSocket> socket;
  {
    if (o.tls_cert_file.empty() || o.tls_key_file.empty())
      return status(code::invalid_argument, "TLS needs both a certificate and its key");
    // Thrift's TLS sockets write through OpenSSL's socket BIO, whose write(2) raises SIGPIPE
    // when the peer has gone: a client that disconnects must fail its own write, not end
    // the process. So a process left at the default disposition ignores SIGPIPE.
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
    try {
      auto tls = std::make_shared<at::transport::TSSLSocketFactory>(at::transport::SSLProtocol::TLSv1_2);
      tls->server(true);
      tls->loadCertificate(o.tls_cert_file.c_str());
      tls->loadPrivateKey(o.tls_key_file.c_str());
      socket = std::make_shared<at::transport::TSSLServerSocket>(o.address, o.port, tls);
    } catch (const std::exception& e) {
      return status(code::io_error, std::string("TLS certificate or key: ") + e.what());
    }
  }
  i->server = std::make_unique<at::server::TThreadedServer>(processor, socket, transports, protocols);
  if (o.max_connections > 0) i->server->setConcurrentClientLimit(static_cast<std::int64_t>(o.max_connections));
  auto ready = std::make_shared<ready_signal>(socket);
  auto bound = ready->port();
  i->server->setServerEventHandler(ready);
  i->serving = std::thread([server = i->server.get(), ready] {
    try {
      server->serve();
    } catch (const std::exception& e) {
      ready->failed(e.what());
      spdlog::error("thrift gateway: {}", e.what());
    }
  });
  try {
    i->port = static_cast<std::uint16_t>(bound.get());
  } catch (const std::exception& e) {
    i->serving.join();
    i->stopped = true;
    return status(code::io_error, "cannot listen on " + o.address + ":" + std::to_string(o.port) + ": " + e.what());
  }
  i->where.port = advertised_port > 0 ? advertised_port : i->port;
  return std::unique_ptr<gateway>(new gateway(std::move(i)));
}

}  // namespace cellar::thrift
