// The child of the crash tests: writes, snapshots and runs DDL until it is killed (see
// crash_workload.h). Usage: crash_writer DIR MODE ACKFILE
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <optional>
#include <string>

#include "crash_workload.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: crash_writer DIR MODE ACKFILE\n");
    return 2;
  }
  cellar::store_options o;
  o.directory = argv[1];
  o.durability = crash::mode(argv[2]);
  o.log_sync_interval = std::chrono::milliseconds(20);
  o.snapshot_interval = std::chrono::milliseconds(0);  // the writer snapshots explicitly
  auto opened = cellar::store::open(o);
  if (!opened) {
    std::fprintf(stderr, "open: %s\n", opened.error().to_string().c_str());
    return 1;
  }
  auto& s = *opened.value();
  if (!s.table_exists("crash"))
    if (auto st = s.create_table(crash::table(), cellar::schema_origin::oceanbase_ddl); !st) {
      std::fprintf(stderr, "create: %s\n", st.to_string().c_str());
      return 1;
    }
  auto t = s.open_table("crash").value();
  int fd = ::open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return 1;
  auto say = [&](const std::string& line) {
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::_Exit(1);
  };
  say("ready\n");
  long ddl = 0;
  for (long i = 0;; ++i) {
    // Odd writes run in place when the partition is free (table::batch: the dispatcher's
    // in-place path, as for an RPC connection with nothing else in flight), the others go
    // through the partition's actor (batch_async): both must keep what the mode promises.
    auto ops = crash::write(i);
    std::vector<cellar::op_result> results;
    if (i % 2 == 1) {
      results = t.batch(std::move(ops));
    } else {
      std::promise<std::vector<cellar::op_result>> p;
      t.batch_async(std::move(ops), [&p](std::vector<cellar::op_result> r) { p.set_value(std::move(r)); });
      results = p.get_future().get();
    }
    for (const auto& r : results)
      if (!r.st) {
        std::fprintf(stderr, "write %ld: %s\n", i, r.st.to_string().c_str());
        return 1;
      }
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    say(std::to_string(i) + " " + std::to_string(ms) + "\n");
    if (i % crash::snapshot_every == crash::snapshot_every - 1) {
      say("snap-begin " + std::to_string(i) + "\n");
      if (auto snap = s.snapshot(); snap) say("snap " + std::to_string(i) + "\n");
    }
    if (i % crash::ddl_every == crash::ddl_every / 2) {
      say("ddl-begin " + std::to_string(ddl) + "\n");
      if (auto st = crash::ddl_step(s, ddl); !st) {
        std::fprintf(stderr, "ddl step %ld: %s\n", ddl, st.to_string().c_str());
        return 1;
      }
      say("ddl " + std::to_string(ddl) + "\n");
      ++ddl;
    }
  }
}
