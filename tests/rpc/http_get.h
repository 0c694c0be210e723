// A blocking HTTP/1.1 GET (or another method) on loopback, for the tests of the metrics
// endpoint and status page (rpc/status_http.h).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace testhttp {

struct response {
  int status = 0;
  std::string headers;  // the header block, lower-cased names and values as sent
  std::string body;
};

inline response request(std::uint16_t port, const std::string& path, const std::string& method = "GET") {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    throw std::runtime_error("connect to port " + std::to_string(port));
  }
  const std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    throw std::runtime_error("send");
  }
  std::string in;
  char buf[65536];
  std::size_t header_end = std::string::npos, want = std::string::npos;
  for (;;) {
    if (header_end == std::string::npos && (header_end = in.find("\r\n\r\n")) != std::string::npos) {
      std::string lower;
      for (std::size_t i = 0; i < header_end; ++i)
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(in[i])));
      auto cl = lower.find("content-length:");
      want = cl == std::string::npos ? 0 : header_end + 4 + std::stoull(lower.substr(cl + 15));
      if (method == "HEAD") want = header_end + 4;
    }
    if (want != std::string::npos && in.size() >= want) break;
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (header_end == std::string::npos) throw std::runtime_error("no HTTP response: " + in);
  response r;
  r.status = std::stoi(in.substr(in.find(' ') + 1, 3));
  for (std::size_t i = 0; i < header_end; ++i)
    r.headers += static_cast<char>(std::tolower(static_cast<unsigned char>(in[i])));
  r.body = in.substr(header_end + 4);
  return r;
}

}  // namespace testhttp
