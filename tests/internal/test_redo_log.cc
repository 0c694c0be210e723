// The redo log's checksum (persist/codec.h: crc32c, WiredTiger's wiredtiger_crc32c_func)
// and its record format: logs whose checksums a software CRC-32C table computed (cellar
// 0.1) must still read, so both must give the same values.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../support/temp_dir.h"
#include "persist/codec.h"
#include "persist/redo_log.h"

namespace {

using cellar::detail::crc32c;
using cellar::detail::redo_log;

// The bitwise definition of CRC-32C (reflected polynomial 0x82F63B78, init and final
// XOR 0xFFFFFFFF): what the table implementation computed.
std::uint32_t reference_crc32c(std::string_view data) {
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return ~c;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::vector<std::string> replay_all(const std::string& dir, cellar::status* st = nullptr) {
  std::vector<std::string> out;
  auto s = redo_log::replay(
      *cellar::env::posix(), dir, 0,
      [&](std::string_view p) {
        out.emplace_back(p);
        return cellar::status::ok();
      },
      nullptr);
  if (st)
    *st = s;
  else
    REQUIRE(s.is_ok());
  return out;
}

// Two records as the software table wrote them (big-endian length, big-endian CRC-32C,
// payload); the CRCs were computed by that implementation.
const std::string first_payload = "written by cellar 0.1 before crc32c came from WiredTiger";  // 56 bytes
const std::string second_payload = "second record";                                            // 13 bytes
std::string old_log() {
  std::string log;
  log += std::string("\x00\x00\x00\x38", 4) + "\x86\x0e\x6a\xf6" + first_payload;
  log += std::string("\x00\x00\x00\x0d", 4) + "\xb9\xd0\xfc\x32" + second_payload;
  return log;
}

}  // namespace

TEST_CASE("crc32c: the standard CRC-32C check values", "[redo_log]") {
  CHECK(crc32c("") == 0u);
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc32c(std::string(32, '\0')) == 0x8A9136AAu);  // RFC 3720 B.4
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  CHECK(crc32c(ascending) == 0x46DD794Eu);
}

TEST_CASE("crc32c: equals the bitwise definition at every length and alignment", "[redo_log]") {
  std::mt19937 rng(15);
  std::string buf(4096 + 16, '\0');
  for (auto& c : buf) c = static_cast<char>(rng());
  for (std::size_t offset = 0; offset < 8; ++offset)
    for (std::size_t len = 0; len < 300; ++len) {
      std::string_view v(buf.data() + offset, len);
      REQUIRE(crc32c(v) == reference_crc32c(v));
    }
  std::string_view big(buf.data() + 3, 4096);
  CHECK(crc32c(big) == reference_crc32c(big));
}

TEST_CASE("redo log: a log written with the software CRC table still replays", "[redo_log]") {
  testsupport::made_dir tmp("cellar-redo");
  const std::string& dir = tmp.path;
  write_file(dir + "/" + cellar::detail::log_file_name(1), old_log());
  auto got = replay_all(dir);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == first_payload);
  CHECK(got[1] == second_payload);
}

TEST_CASE("redo log: a damaged record before the end is CORRUPTION", "[redo_log]") {
  testsupport::made_dir tmp("cellar-redo");
  const std::string& dir = tmp.path;
  auto log = old_log();
  log[8 + 10] ^= 0x01;  // a payload byte of the first record
  write_file(dir + "/" + cellar::detail::log_file_name(1), log);
  cellar::status st;
  replay_all(dir, &st);
  CHECK(st.code() == cellar::code::corruption);
  CHECK(st.message().find("checksum mismatch") != std::string::npos);
}

TEST_CASE("redo log: records appended now replay, in order, with the same layout", "[redo_log]") {
  testsupport::made_dir tmp("cellar-redo");
  const std::string& dir = tmp.path;
  {
    auto l = redo_log::open(cellar::env::posix(), dir, 7, /*sync_each=*/true, std::chrono::milliseconds(10));
    REQUIRE(l.is_ok());
    REQUIRE(l.value()->append(first_payload, nullptr).is_ok());
    REQUIRE(l.value()->append(second_payload, nullptr).is_ok());
  }  // the destructor drains and syncs
  std::ifstream in(dir + "/" + cellar::detail::log_file_name(7), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(bytes == old_log());  // byte for byte what the software table wrote
  auto got = replay_all(dir);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == first_payload);
}
