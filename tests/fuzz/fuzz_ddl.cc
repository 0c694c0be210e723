// Fuzz target: the OceanBase DDL parser, kv_attributes JSON included (catalog/ddl.h), and
// what it parses applied to an in-memory store.
// Properties: SQL either parses or fails with INVALID_ARGUMENT or UNSUPPORTED and a
// message; every statement parsed can be described; applying the statements ends in OK
// or a clear refusal, never INTERNAL; each input starts from an empty store.
#include <string>
#include <string_view>

#include "catalog/ddl.h"
#include "cellar/store.h"
#include "fuzz_target.h"
#include "store/ddl_apply.h"

namespace {

cellar::store& memory_store() {
  static cellar::store* s = [] {
    cellar::store_options o;
    o.worker_threads = 1;
    o.maintenance_interval = std::chrono::milliseconds(0);
    auto opened = cellar::store::open(o);
    fuzz_check(opened.is_ok(), "a memory store opens");
    return opened.value().release();  // lives for the process
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view sql(reinterpret_cast<const char*>(data), size);
  auto parsed = cellar::parse_ddl(sql);
  if (!parsed) {
    fuzz_check(parsed.code() == cellar::code::invalid_argument || parsed.code() == cellar::code::unsupported,
               "a refused statement is INVALID_ARGUMENT or UNSUPPORTED");
    fuzz_check(!parsed.error().message().empty(), "a refusal says why");
    return 0;
  }
  std::size_t partitions = 0;
  for (const auto& st : parsed.value()) {
    fuzz_check(!cellar::describe_ddl(st).empty(), "a statement can be described");
    partitions += st.partitioning.partitions;
  }
  // Apply it, unless it would spawn many partition actors (slow, and not the parser).
  if (partitions > 64) return 0;
  auto& s = memory_store();
  for (const auto& st : parsed.value()) {
    auto applied = cellar::execute_ddl(s, st);
    fuzz_check(applied.code() != cellar::code::internal, "DDL never fails with INTERNAL");
    fuzz_check(applied.is_ok() || !applied.message().empty(), "a refusal says why");
  }
  for (const auto& t : s.list_tables()) fuzz_check(s.drop_table(t).is_ok(), "a table drops");
  return 0;
}
