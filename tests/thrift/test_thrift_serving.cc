// The gateway's serving: transports and protocols as HBase's server has them, and
// connections that fail alone.
#include <unistd.h>

#include <thrift/TApplicationException.h>

#include "thrift_fixture.h"

TEST_CASE("thrift2 over framed transport and the compact protocol") {
  const bool framed = GENERATE(false, true);
  const bool compact = GENERATE(false, true);
  cellar::thrift::gateway_options o;
  o.framed = framed;
  o.compact = compact;
  served_gateway g(o);
  client2 c(g);
  create_table2(c, "t", {"f"});
  c->put("t", tput("r", {column_value("f", "q", std::string("\0\xff v", 4))}));
  t2::TResult r;
  c->get(r, "t", tget("r"));
  REQUIRE(r.columnValues.size() == 1);
  CHECK(r.columnValues[0].value == std::string("\0\xff v", 4));
}

TEST_CASE("thrift1 over framed transport and the compact protocol") {
  cellar::thrift::gateway_options o;
  o.service = cellar::thrift::service::thrift1;
  o.framed = true;
  o.compact = true;
  served_gateway g(o);
  client1 c(g);
  t1::ColumnDescriptor cf;
  cf.name = "cf:";
  c->createTable("t", {cf});
  std::vector<std::string> names;
  c->getTableNames(names);
  CHECK(names == std::vector<std::string>{"t"});
}

TEST_CASE("a bad request fails alone: other connections keep being served") {
  served_gateway g;
  client2 a(g);
  client2 b(g);
  create_table2(a, "t", {"f"});
  b->put("t", tput("r", {column_value("f", "q", "v")}));

  // Garbage instead of a message: the gateway closes that connection only.
  CHECK(closed_after(g.gateway->port(), std::string(64, '\x7f')));
  // A message that announces a huge string: refused without allocating it.
  CHECK(closed_after(g.gateway->port(), std::string("\x80\x01\x00\x01\x7f\xff\xff\xf0xx", 12)));

  // A call to a method the service does not have: an exception on that connection, which
  // keeps serving.
  client1 wrong(g);
  std::vector<std::string> names;
  CHECK_THROWS_AS(wrong->getTableNames(names), apache::thrift::TApplicationException);

  // Errors on a connection leave it and the others working.
  t2::TResult r;
  CHECK_THROWS_AS(a->get(r, "nope", tget("r")), t2::TIOError);
  a->get(r, "t", tget("r"));
  CHECK(r.columnValues.size() == 1);
  b->get(r, "t", tget("r"));
  CHECK(r.columnValues.size() == 1);
  CHECK(b->exists("t", tget("r")));
}

TEST_CASE("the gateway refuses a port it cannot bind") {
  served_gateway g;
  cellar::thrift::gateway_options o;
  o.port = g.gateway->port();
  auto second = cellar::thrift::gateway::start(*g.store, o);
  REQUIRE_FALSE(second);
  CHECK(second.code() == cellar::code::io_error);
}

TEST_CASE("requests and replies larger than a socket's buffers cross in many reads and sends") {
  cellar::thrift::gateway_options o;
  o.framed = GENERATE(false, true);
  o.threads = 1;
  served_gateway g(o);
  client2 c(g);
  create_table2(c, "t", {"f"});
  std::vector<t2::TColumnValue> values;
  for (int i = 0; i < 12; ++i)
    values.push_back(column_value("f", std::string(1, static_cast<char>('a' + i)),
                                  std::string(1000 * 1000, static_cast<char>('a' + i))));
  c->put("t", tput("r", values));
  t2::TResult r;
  c->get(r, "t", tget("r"));
  REQUIRE(r.columnValues.size() == 12);
  for (int i = 0; i < 12; ++i) CHECK((r.columnValues[i].value == values[i].value));
}

namespace {

void send_all(int fd, const std::string& bytes) {
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

}  // namespace

TEST_CASE("a buffered message that arrives in pieces is answered once whole, pipelined calls in order") {
  cellar::thrift::gateway_options o;
  o.threads = 1;
  served_gateway g(o);
  client2 c(g);
  create_table2(c, "t", {"f"});

  const int fd = connect_to(g.gateway->port());
  const auto call = table_exists_call("t", 7);
  for (std::size_t cut : {std::size_t{1}, call.size() / 2, call.size() - 1}) {
    send_all(fd, call.substr(0, cut));
    // Another connection's round trip on the same loop: the first piece has been read by now.
    CHECK(c->tableExists(tname("t")));
    send_all(fd, call.substr(cut));
    CHECK(table_exists_answer(fd, 7));
  }
  send_all(fd, table_exists_call("t", 1) + table_exists_call("nope", 2) + table_exists_call("t", 3));
  CHECK(table_exists_answer(fd, 1));
  CHECK_FALSE(table_exists_answer(fd, 2));
  CHECK(table_exists_answer(fd, 3));
  ::close(fd);
}

TEST_CASE("past the connection limit a client waits until a connection closes") {
  cellar::thrift::gateway_options o;
  o.max_connections = 1;
  served_gateway g(o);
  auto first = std::make_unique<client2>(g);
  CHECK_FALSE((*first)->tableExists(tname("t")));
  const int fd = connect_to(g.gateway->port());
  send_all(fd, table_exists_call("t", 5));
  first.reset();
  CHECK_FALSE(table_exists_answer(fd, 5));
  ::close(fd);
}
