// A replica's persistent state (replica/storage.h) and the raft_io that writes it
// (replica/actor_io.h), driven by hand: the log, truncation, snapshots, restarts, the bytes
// of messages, and that completions wait for the owner's flush.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../support/temp_dir.h"
#include "persist/codec.h"
#include "replica/actor_io.h"
#include "replica/storage.h"
#include "replica/wire.h"

using namespace cellar;
using namespace cellar::replica;

namespace {

// A fresh, empty directory, removed afterwards.
struct temp_dir : testsupport::made_dir {
  temp_dir() : testsupport::made_dir("cellar-replica") {}
};

log_entry entry(std::uint64_t term, std::string data) { return {term, RAFT_COMMAND, std::move(data)}; }

std::vector<std::string> datas(const persisted_state& s) {
  std::vector<std::string> out;
  for (const auto& e : s.entries) out.push_back(e.data);
  return out;
}

// The same checks against both storages; `reopen` gives the storage as a restarted replica
// finds it (the same object for memory_storage, the files read again for file_storage).
void check_storage(replica_storage& st, const std::function<replica_storage&()>& reopen) {
  persisted_state s;
  REQUIRE(st.load(s).is_ok());
  CHECK(s.term == 0);
  CHECK(s.entries.empty());
  CHECK(st.last_index() == 0);

  REQUIRE(st.set_term(3).is_ok());
  REQUIRE(st.set_vote(2).is_ok());
  REQUIRE(st.append({entry(1, "a"), entry(2, "b"), entry(3, "c")}).is_ok());
  REQUIRE(st.append({entry(3, "d")}).is_ok());
  CHECK(st.last_index() == 4);
  // A follower's log diverged: the leader's entries replace index 3 on.
  REQUIRE(st.truncate(3).is_ok());
  REQUIRE(st.append({entry(4, "C")}).is_ok());

  auto& r1 = reopen();
  REQUIRE(r1.load(s).is_ok());
  CHECK(s.term == 3);
  CHECK(s.vote == 2);
  CHECK(s.first_index == 1);
  CHECK(datas(s) == std::vector<std::string>{"a", "b", "C"});
  CHECK(s.entries[2].term == 4);
  CHECK_FALSE(s.snapshot);

  // A new term clears the vote.
  REQUIRE(r1.set_term(5).is_ok());
  REQUIRE(r1.append({entry(5, "e"), entry(5, "f")}).is_ok());  // 4, 5

  // A snapshot at 4 keeping 2 trailing entries: 3 and 4 stay, 1 and 2 go.
  REQUIRE(r1.put_snapshot({4, 5, "conf", 1}, "state@4", 2).is_ok());
  std::optional<snapshot_record> now;
  REQUIRE(r1.get_snapshot(now).is_ok());
  REQUIRE(now);
  CHECK(now->data == "state@4");
  auto& r2 = reopen();
  REQUIRE(r2.load(s).is_ok());
  CHECK(s.term == 5);
  CHECK(s.vote == 0);
  CHECK(s.first_index == 3);
  CHECK(datas(s) == std::vector<std::string>{"C", "e", "f"});
  REQUIRE(s.snapshot);
  CHECK(s.snapshot->index == 4);
  CHECK(s.snapshot->data == "state@4");
  CHECK(s.snapshot->configuration == "conf");
  CHECK(r2.last_index() == 5);

  // A snapshot installed from a leader (no trailing entries) replaces the whole log.
  REQUIRE(r2.put_snapshot({9, 6, "conf2", 8}, "state@9", 0).is_ok());
  CHECK(r2.last_index() == 9);
  REQUIRE(r2.append({entry(6, "j")}).is_ok());
  auto& r3 = reopen();
  REQUIRE(r3.load(s).is_ok());
  CHECK(s.first_index == 10);
  CHECK(datas(s) == std::vector<std::string>{"j"});
  std::optional<snapshot_record> got;
  REQUIRE(r3.get_snapshot(got).is_ok());
  REQUIRE(got);
  CHECK(got->index == 9);
  CHECK(got->term == 6);
  CHECK(got->configuration_index == 8);
  CHECK(got->data == "state@9");
  // Truncating before the first entry is a bug in the caller, reported.
  CHECK(r3.truncate(5).code() == code::internal);
}

}  // namespace

TEST_CASE("replica storage in memory: log, truncate, snapshot, restart", "[replica]") {
  memory_storage m;
  check_storage(m, [&]() -> replica_storage& { return m; });
}

TEST_CASE("replica storage in files: log, truncate, snapshot, restart", "[replica]") {
  temp_dir dir;
  for (bool sync : {true, false}) {
    std::unique_ptr<file_storage> fs;
    auto open = [&]() -> replica_storage& {
      fs.reset();
      auto r = file_storage::open(dir.path, sync ? "g-sync" : "g", sync);
      REQUIRE(r.is_ok());
      fs = std::move(r).value();
      return *fs;
    };
    auto& first = open();
    check_storage(first, open);
  }
}

TEST_CASE("replica storage in files: a torn record at the end is dropped, damage is reported", "[replica]") {
  temp_dir dir;
  {
    auto fs = file_storage::open(dir.path, "g", true);
    REQUIRE(fs.is_ok());
    REQUIRE((*fs)->set_term(2).is_ok());
    REQUIRE((*fs)->append({entry(2, "x"), entry(2, "y")}).is_ok());
  }
  std::string log = dir.path + "/g.raftlog";
  auto size = std::filesystem::file_size(log);
  std::filesystem::resize_file(log, size - 3);  // the last record cut short by a crash
  {
    auto fs = file_storage::open(dir.path, "g", true);
    REQUIRE(fs.is_ok());
    persisted_state s;
    REQUIRE((*fs)->load(s).is_ok());
    CHECK(s.term == 2);
    CHECK(datas(s) == std::vector<std::string>{"x"});
    // The log goes on after the intact records.
    REQUIRE((*fs)->append({entry(2, "z")}).is_ok());
  }
  {
    auto fs = file_storage::open(dir.path, "g", true);
    REQUIRE(fs.is_ok());
    persisted_state s;
    REQUIRE((*fs)->load(s).is_ok());
    CHECK(datas(s) == std::vector<std::string>{"x", "z"});
  }
  // A damaged snapshot file is not silently ignored.
  {
    int fd = ::open((dir.path + "/g.raftsnap").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "garbage!", 8) == 8);
    ::close(fd);
    auto fs = file_storage::open(dir.path, "g", true);
    CHECK(fs.code() == code::corruption);
  }
}

TEST_CASE("crc32c_extend checksums pieces as their concatenation", "[replica]") {
  std::string all;
  for (int i = 0; i < 1000; ++i) all.push_back(static_cast<char>(i * 7 + i / 13));
  CHECK(detail::crc32c_extend(0, all) == detail::crc32c(all));
  CHECK(detail::crc32c_extend(0, "123456789") == 0xE3069283u);  // the CRC-32C check value
  for (std::size_t cut : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    const std::string_view a(all.data(), cut), b(all.data() + cut, all.size() - cut);
    CHECK(detail::crc32c_extend(detail::crc32c(a), b) == detail::crc32c(all));
  }
}

TEST_CASE("a snapshot file is read back whole, and a damaged one is refused", "[replica]") {
  temp_dir dir;
  std::string big(1 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>(i);
  {
    auto fs = file_storage::open(dir.path, "g", false);
    REQUIRE(fs.is_ok());
    REQUIRE((*fs)->append({entry(1, "a")}).is_ok());
    REQUIRE((*fs)->put_snapshot({1, 1, "conf", 1}, big, 0).is_ok());
  }
  {
    auto fs = file_storage::open(dir.path, "g", false);
    REQUIRE(fs.is_ok());
    persisted_state s;
    REQUIRE((*fs)->load(s).is_ok());
    REQUIRE(s.snapshot);
    CHECK(s.snapshot->data == big);
  }
  // One byte of the data flipped: the checksum over header and data catches it.
  const std::string snap = dir.path + "/g.raftsnap";
  int fd = ::open(snap.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, "y", 1, static_cast<off_t>(std::filesystem::file_size(snap) - 100)) == 1);
  ::close(fd);
  CHECK(file_storage::open(dir.path, "g", false).code() == code::corruption);
}

TEST_CASE("raft messages and configurations survive their bytes", "[replica]") {
  raft_configuration conf;
  raft_configuration_init(&conf);
  REQUIRE(raft_configuration_add(&conf, 1, "node-a/7", RAFT_VOTER) == 0);
  REQUIRE(raft_configuration_add(&conf, 9, "node-b/7", RAFT_STANDBY) == 0);
  raft_configuration back;
  raft_configuration_init(&back);
  REQUIRE(decode_configuration(encode_configuration(conf), back));
  REQUIRE(back.n == 2);
  CHECK(back.servers[1].id == 9);
  CHECK(std::string(back.servers[1].address) == "node-b/7");
  CHECK(back.servers[1].role == RAFT_STANDBY);
  raft_configuration_close(&back);

  // AppendEntries with two entries.
  raft_message m{};
  m.type = RAFT_IO_APPEND_ENTRIES;
  m.server_id = 2;
  std::string d1 = "one", d2 = "two!";
  raft_entry es[2] = {};
  es[0] = {4, RAFT_COMMAND, {d1.data(), d1.size()}, nullptr};
  es[1] = {5, RAFT_BARRIER, {d2.data(), d2.size()}, nullptr};
  m.append_entries = {5, 10, 4, 9, es, 2};
  std::string bytes = encode_message(m, 1, "node-a/7");
  raft_message got;
  std::string from;
  REQUIRE(decode_message(bytes, got, from));
  CHECK(got.type == RAFT_IO_APPEND_ENTRIES);
  CHECK(got.server_id == 1);
  CHECK(std::string(got.server_address) == "node-a/7");
  CHECK(got.append_entries.prev_log_index == 10);
  CHECK(got.append_entries.leader_commit == 9);
  REQUIRE(got.append_entries.n_entries == 2);
  CHECK(got.append_entries.entries[1].term == 5);
  CHECK(got.append_entries.entries[1].type == RAFT_BARRIER);
  CHECK(std::string(static_cast<char*>(got.append_entries.entries[1].buf.base), 4) == "two!");
  release_message(got);
  // Any cut of the bytes is refused, never read past.
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    raft_message cut;
    CHECK_FALSE(decode_message(std::string_view(bytes).substr(0, n), cut, from));
  }

  // InstallSnapshot carries the configuration and the data.
  raft_message snap{};
  snap.type = RAFT_IO_INSTALL_SNAPSHOT;
  std::string data = "snapshot-bytes";
  snap.install_snapshot = {7, 100, 6, conf, 90, {data.data(), data.size()}};
  REQUIRE(decode_message(encode_message(snap, 3, "c"), got, from));
  CHECK(got.install_snapshot.last_index == 100);
  CHECK(got.install_snapshot.conf.n == 2);
  CHECK(std::string(static_cast<char*>(got.install_snapshot.data.base), got.install_snapshot.data.len) == data);
  release_message(got);
  raft_configuration_close(&conf);
}

TEST_CASE("every other raft message type survives its bytes, and its cuts are refused", "[replica]") {
  std::vector<raft_message> all(4);
  all[0].type = RAFT_IO_REQUEST_VOTE;
  all[0].request_vote = {11, 3, 40, 10, true, false};
  all[1].type = RAFT_IO_REQUEST_VOTE_RESULT;
  all[1].request_vote_result = {12, true, raft_tribool_false};
  all[2].type = RAFT_IO_APPEND_ENTRIES_RESULT;
  all[2].append_entries_result = {13, 77, 78};
  all[3].type = RAFT_IO_TIMEOUT_NOW;
  all[3].timeout_now = {14, 90, 13};
  for (const auto& m : all) {
    INFO("type " << m.type);
    const std::string bytes = encode_message(m, 5, "e");
    raft_message got;
    std::string from;
    REQUIRE(decode_message(bytes, got, from));
    CHECK(got.type == m.type);
    CHECK(got.server_id == 5);
    CHECK(from == "e");
    // The same bytes again: every field came back.
    CHECK(encode_message(got, 5, "e") == bytes);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      raft_message cut;
      CHECK_FALSE(decode_message(std::string_view(bytes).substr(0, n), cut, from));
    }
  }
  raft_message got;
  std::string from;
  REQUIRE(decode_message(encode_message(all[0], 5, "e"), got, from));
  CHECK(got.request_vote.candidate_id == 3);
  CHECK(got.request_vote.disrupt_leader);
  CHECK_FALSE(got.request_vote.pre_vote);
  REQUIRE(decode_message(encode_message(all[1], 5, "e"), got, from));
  CHECK(got.request_vote_result.pre_vote == raft_tribool_false);
  REQUIRE(decode_message(encode_message(all[2], 5, "e"), got, from));
  CHECK(got.append_entries_result.rejected == 77);
  REQUIRE(decode_message(encode_message(all[3], 5, "e"), got, from));
  CHECK(got.timeout_now.last_log_term == 13);
  // A bad boolean or tribool byte (the last field, before the 16 bytes of lease stamps)
  // is refused.
  std::string bad = encode_message(all[0], 5, "e");
  bad[bad.size() - 17] = 2;
  CHECK_FALSE(decode_message(bad, got, from));
  bad = encode_message(all[1], 5, "e");
  bad[bad.size() - 17] = 3;
  CHECK_FALSE(decode_message(bad, got, from));
  // The lease stamps come back as sent.
  lease_stamps stamps;
  REQUIRE(decode_message(encode_message(all[2], 5, "e", {123456789, 987654321}), got, from, &stamps));
  CHECK(stamps.sent == 123456789);
  CHECK(stamps.echo == 987654321);
}

namespace {

// A loop driven by the test: it records what the io asked for.
struct manual_loop final : io_loop {
  int flushes = 0;
  std::vector<std::uint64_t> ticks;
  void post_flush() override { ++flushes; }
  void post_tick(std::chrono::milliseconds, std::uint64_t generation) override { ticks.push_back(generation); }
};

struct null_transport final : transport {
  std::vector<std::string> sent;
  bool deliver(raft_id, const std::string&, std::string bytes) override {
    sent.push_back(std::move(bytes));
    return true;
  }
};

}  // namespace

TEST_CASE("actor_io: writes land at once, callbacks wait for the owner's flush", "[replica]") {
  memory_storage st;
  manual_loop loop;
  null_transport net;
  actor_io aio(st, net, loop);
  raft_io* io = aio.io();
  REQUIRE(io->init(io, 1, "a") == 0);

  raft_configuration conf;
  raft_configuration_init(&conf);
  REQUIRE(raft_configuration_add(&conf, 1, "a", RAFT_VOTER) == 0);
  REQUIRE(io->bootstrap(io, &conf) == 0);
  CHECK(io->bootstrap(io, &conf) == RAFT_CANTBOOTSTRAP);  // only a pristine replica bootstraps
  raft_configuration_close(&conf);

  std::string a = "A", b = "B";
  raft_entry es[2] = {};
  es[0] = {1, RAFT_COMMAND, {a.data(), 1}, nullptr};
  es[1] = {1, RAFT_COMMAND, {b.data(), 1}, nullptr};
  raft_io_append req{};
  static int appended = -1;
  appended = -1;
  REQUIRE(io->append(io, &req, es, 2, [](raft_io_append*, int status) { appended = status; }) == 0);
  CHECK(appended == -1);  // not from within the call
  CHECK(loop.flushes == 1);
  CHECK(st.last_index() == 3);  // the configuration entry, then A and B
  aio.on_flush();
  CHECK(appended == 0);

  REQUIRE(io->truncate(io, 3) == 0);
  REQUIRE(io->set_term(io, 4) == 0);
  REQUIRE(io->set_vote(io, 1) == 0);

  // A snapshot at 2 with no trailing entry, then load as a restarted replica would.
  std::string state = "S";
  raft_buffer buf{state.data(), 1};
  raft_snapshot snap{};
  snap.index = 2;
  snap.term = 1;
  raft_configuration_init(&snap.configuration);
  REQUIRE(raft_configuration_add(&snap.configuration, 1, "a", RAFT_VOTER) == 0);
  snap.configuration_index = 1;
  snap.bufs = &buf;
  snap.n_bufs = 1;
  raft_io_snapshot_put put{};
  static int put_status = -1;
  REQUIRE(io->snapshot_put(io, 0, &put, &snap, [](raft_io_snapshot_put*, int s) { put_status = s; }) == 0);
  CHECK(put_status == -1);
  aio.on_flush();
  CHECK(put_status == 0);
  raft_configuration_close(&snap.configuration);

  raft_term term = 0;
  raft_id vote = 0;
  raft_snapshot* loaded = nullptr;
  raft_index start = 0;
  raft_entry* entries = nullptr;
  size_t n = 0;
  REQUIRE(io->load(io, &term, &vote, &loaded, &start, &entries, &n) == 0);
  CHECK(term == 4);
  CHECK(vote == 1);
  CHECK(start == 3);
  CHECK(n == 0);
  REQUIRE(loaded != nullptr);
  CHECK(loaded->index == 2);
  CHECK(loaded->configuration.n == 1);
  REQUIRE(loaded->n_bufs == 1);
  CHECK(std::string(static_cast<char*>(loaded->bufs[0].base), loaded->bufs[0].len) == "S");
  raft_free(loaded->bufs[0].base);
  raft_free(loaded->bufs);
  raft_configuration_close(&loaded->configuration);
  raft_free(loaded);

  // Ticks: start asks for one; each tick asks for the next; a close makes older ones stale.
  static int ticked = 0;
  ticked = 0;
  REQUIRE(io->start(
              io, 50, [](raft_io*) { ++ticked; }, [](raft_io*, raft_message*) {}) == 0);
  REQUIRE(loop.ticks.size() == 1);
  aio.on_tick(loop.ticks[0]);
  CHECK(ticked == 1);
  CHECK(loop.ticks.size() == 2);
  static bool closed = false;
  io->close(io, [](raft_io*) { closed = true; });
  CHECK_FALSE(closed);
  aio.on_tick(loop.ticks[1]);
  CHECK(ticked == 1);
  aio.on_flush();
  CHECK(closed);
}
