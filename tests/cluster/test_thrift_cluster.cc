// The HBase Thrift gateway in a cluster: every node serves it, and a row reaches the node
// that owns its partition whichever node's gateway the client talks to.
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <thrift/transport/TSocket.h>

#include <set>

#include "THBaseService.h"
#include "servers_test.h"

namespace {

namespace t2 = apache::hadoop::hbase::thrift2;
namespace at = apache::thrift;

int thrift2_port(testproc::server& s) {
  std::smatch m;
  const std::string& banner = s.banner();
  REQUIRE(std::regex_search(banner, m, std::regex("thrift2 on 127\\.0\\.0\\.1:([0-9]+)")));
  return std::stoi(m[1].str());
}

struct thrift2_client {
  std::shared_ptr<at::transport::TTransport> transport;
  std::unique_ptr<t2::THBaseServiceClient> c;
  explicit thrift2_client(int port) {
    transport = std::make_shared<at::transport::TBufferedTransport>(
        std::make_shared<at::transport::TSocket>("127.0.0.1", port));
    c = std::make_unique<t2::THBaseServiceClient>(std::make_shared<at::protocol::TBinaryProtocol>(transport));
    transport->open();
  }
  ~thrift2_client() { transport->close(); }
};

}  // namespace

TEST_CASE("thrift2 through node 1 writes, through node 3 reads, the partitions on all three nodes",
          "[cluster][servers][thrift]") {
  clustertest::cluster3 c({"--thrift-listen", "127.0.0.1:0"});
  thrift2_client one(thrift2_port(c.node(1)));
  thrift2_client three(thrift2_port(c.node(3)));

  t2::TTableDescriptor d;
  d.tableName.qualifier = "t";
  t2::TColumnFamilyDescriptor f;
  f.name = "f";
  d.__set_columns({f});
  one.c->createTable(d, {});
  auto m = c.placement();
  REQUIRE(m.tables.count("t") == 1);
  CHECK(m.load() == std::map<std::string, std::uint32_t>{{"n1", 2}, {"n2", 2}, {"n3", 2}});

  std::vector<t2::TPut> puts;
  for (int i = 0; i < 60; ++i) {
    t2::TPut p;
    p.row = "row" + std::to_string(100 + i);
    t2::TColumnValue cv;
    cv.family = "f";
    cv.qualifier = "q";
    cv.value = std::to_string(i);
    p.columnValues = {cv};
    puts.push_back(p);
  }
  one.c->putMultiple("t", puts);

  t2::TScan s;
  std::vector<t2::TResult> rows;
  three.c->getScannerResults(rows, "t", s, 1000);
  REQUIRE(rows.size() == 60);
  for (int i = 0; i < 60; ++i) {
    CHECK(rows[static_cast<std::size_t>(i)].row == "row" + std::to_string(100 + i));
    CHECK(rows[static_cast<std::size_t>(i)].columnValues.at(0).value == std::to_string(i));
  }
  t2::TGet g;
  g.row = "row137";
  t2::TResult r;
  three.c->get(r, "t", g);
  REQUIRE(r.columnValues.size() == 1);
  CHECK(r.columnValues[0].value == "37");
  // Each region names the node that owns its partition (its data port), whichever node's
  // gateway answers.
  std::vector<t2::THRegionLocation> regions;
  three.c->getAllRegionLocations(regions, "t");
  REQUIRE(regions.size() == 6);
  const auto& owners = m.tables.at("t");
  auto data_port_of = [&](const std::string& node) { return c.node(std::stoi(node.substr(1))).port(); };
  std::set<int> ports;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    CHECK(regions[i].serverName.hostName == "127.0.0.1");
    CHECK(regions[i].serverName.port == data_port_of(owners[i].node));
    ports.insert(regions[i].serverName.port);
  }
  CHECK(ports.size() == 3);
  t2::THRegionLocation one_region;
  one.c->getRegionLocation(one_region, "t", "row137", false);
  CHECK(one_region.serverName.port ==
        data_port_of(owners.at(static_cast<std::size_t>(one_region.regionInfo.regionId)).node));
}
