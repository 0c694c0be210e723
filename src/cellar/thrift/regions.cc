#include "thrift/regions.h"

#include <map>

#include "cellar/cluster_admin.h"

namespace cellar::thrift {

namespace {

// "host:port" or "[v6]:port" split; false when it is neither.
bool split_address(const std::string& address, server_address& out) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  try {
    out.port = std::stoi(address.substr(colon + 1));
  } catch (...) {
    return false;
  }
  out.host = std::move(host);
  return true;
}

}  // namespace

std::vector<server_address> partition_servers(store& s, const std::string& table, std::uint32_t count,
                                              const endpoint& self) {
  std::vector<server_address> out(count, server_address{self.host, self.port.load()});
  auto admin = cluster_admin::of(s);
  if (!admin) return out;  // not a cluster: every partition is served here
  auto regions = s.list_regions(table);
  if (!regions) return out;
  std::map<std::string, std::string> address;
  for (const auto& n : admin->status().nodes)
    if (!n.address.empty()) address[n.id] = n.address;
  for (const auto& r : *regions) {
    auto it = address.find(r.node);
    if (r.index < count && it != address.end()) split_address(it->second, out[r.index]);
  }
  return out;
}

}  // namespace cellar::thrift
