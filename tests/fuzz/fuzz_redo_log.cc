// Fuzz target: the redo log as recovery reads it (persist/redo_log.h): the input is a log
// file's bytes, read as the last file (a torn tail allowed) and as an earlier one, and
// every record's payload is decoded as recovery decodes it.
// Properties: the records replayed are whole and in order, and together with the torn
// tail they account for every byte; read as an earlier file, the same bytes replay the
// same records and fail with CORRUPTION exactly when the last file had a torn tail; a
// payload's entries decode or fail with CORRUPTION; a decoded entry's key re-encodes.
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_target.h"
#include "persist/codec.h"
#include "persist/redo_log.h"

using namespace cellar;
using namespace cellar::detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> payloads;
  log_replay_stats stats;
  auto st = redo_log::replay_bytes(
      bytes, "fuzz-log", true,
      [&](std::string_view payload) {
        payloads.emplace_back(payload);
        auto h = decode_log_header(payload);
        if (!h) return status{code::corruption, "malformed log record header"};
        return for_each_log_entry(h->entries, [&](log_entry& e) {
          fuzz_check(decode_cell_key(encode_cell_key(e.key.family, e.key.row, e.key.qualifier, e.key.ts)).has_value(),
                     "an entry's key re-encodes");
        });
      },
      &stats);
  if (!st) {
    fuzz_check(st.code() == code::corruption, "a bad log is CORRUPTION");
    return 0;
  }
  fuzz_check(stats.records == payloads.size(), "every record counted");
  fuzz_check(stats.bytes + stats.dropped_bytes == size, "whole records and the torn tail are the file");
  fuzz_check(stats.dropped_bytes == 0 || stats.torn_offset == stats.bytes, "the torn tail follows the records");
  // The same bytes as an earlier file: a torn tail is damage there.
  std::size_t n = 0;
  auto middle = redo_log::replay_bytes(
      bytes, "fuzz-log", false,
      [&](std::string_view payload) {
        fuzz_check(n < payloads.size() && payload == payloads[n], "same records");
        ++n;
        return status::ok();
      },
      nullptr);
  fuzz_check(middle.is_ok() == (stats.dropped_bytes == 0), "a torn tail is damage in an earlier file");
  fuzz_check(n == payloads.size(), "the same records before it");
  return 0;
}
