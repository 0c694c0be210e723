// consumer: opens a cellar store, creates a table, writes a row and reads it back.
//
//   consumer DIR                     an embedded store in DIR (created if missing)
//   consumer --connect HOST:PORT     the same over RPC, against a running cellar-server
//
// Prints what it read, one cell per line, and exits 0; on any error prints it and exits 1.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include <cellar/client.h>
#include <cellar/connection.h>
#include <cellar/store.h>
#include <cellar/version.h>

namespace {

int fail(const cellar::status& s) {
  std::fprintf(stderr, "consumer: %s\n", s.to_string().c_str());
  return 1;
}

// The table: HBase's `create 'greetings', 'msg'`, two partitions by row-key hash.
cellar::table_descriptor greetings() {
  cellar::table_descriptor d;
  d.name = "greetings";
  d.partitioning = cellar::partition_spec::hash(2);
  cellar::family_descriptor msg;
  msg.name = "msg";
  d.families.push_back(msg);
  return d;
}

void print(const cellar::row_result& r) {
  for (const auto& c : r.cells)
    std::printf("%s %s:%s = %s\n", c.row.c_str(), c.family.c_str(), c.qualifier.c_str(), c.value.c_str());
}

// The embedded API: a store in this process, a table handle, put and get.
int embedded(const std::string& dir) {
  cellar::store_options o;
  o.directory = dir;
  auto opened = cellar::store::open(o);
  if (!opened) return fail(opened.error());
  auto& store = *opened.value();
  if (!store.table_exists("greetings"))
    if (auto s = store.create_table(greetings(), cellar::schema_origin::hbase_shell); !s) return fail(s);
  auto t = store.open_table("greetings");
  if (!t) return fail(t.error());
  if (auto s = t->put(cellar::put("row1").add("msg", "text", "hello from an embedded store")); !s) return fail(s);
  auto r = t->get(cellar::get("row1"));
  if (!r) return fail(r.error());
  print(r.value());
  return store.close().is_ok() ? 0 : 1;  // takes a final snapshot
}

// The client: the same through a connection to cellar-server.
int client(const std::string& address) {
  auto c = cellar::rpc::connect(address);
  if (!c) return fail(c.error());
  auto& conn = *c.value();
  if (auto s = conn.create_table(greetings(), cellar::schema_origin::hbase_shell);
      !s && s.code() != cellar::code::already_exists)
    return fail(s);
  if (auto s = conn.put("greetings", cellar::put("row1").add("msg", "text", "hello over RPC")); !s) return fail(s);
  auto r = conn.get("greetings", cellar::get("row1"));
  if (!r) return fail(r.error());
  print(r.value());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("cellar %s\n", CELLAR_VERSION);
  if (argc == 3 && std::string_view(argv[1]) == "--connect") return client(argv[2]);
  if (argc == 2) return embedded(argv[1]);
  std::fprintf(stderr, "usage: consumer DIR | consumer --connect HOST:PORT\n");
  return 2;
}
