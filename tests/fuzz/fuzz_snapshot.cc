// Fuzz target: what recovery decodes from a snapshot (persist/codec.h, persist/runs.h,
// catalog/catalog.h): the first byte picks the decoder, the rest is its input.
//   0: a cell key        decode_cell_key; a key that decodes re-encodes to the same bytes
//   1: a run             for_each_run_cell under the key given by the input's first cell;
//                        every cell it passes is of the run's family, ascending, and
//                        re-encoding the cells gives a run that reads the same
//   2: a catalog entry   decode_schema; an entry that decodes re-encodes to an entry that
//                        decodes to the same, its families are found by name
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "fuzz_target.h"
#include "persist/codec.h"
#include "persist/runs.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

void cell_key(std::string_view in) {
  auto k = decode_cell_key(in);
  if (!k) return;
  fuzz_check(encode_cell_key(k->family, k->row, k->qualifier, k->ts) == in, "a decoded key re-encodes to itself");
}

void run(std::string_view in) {
  // The run's WiredTiger key: the first cell's key when the run starts with one, so most
  // inputs get past the first check; or the first 12 bytes otherwise.
  std::string_view run_key = in.substr(0, 12);
  {
    run_reader r(in);
    std::string_view k, v;
    if (r.next(k, v)) run_key = k;
  }
  std::string rebuilt, last;
  std::vector<std::pair<std::string, std::string>> cells;
  bool first = true;
  auto st = for_each_run_cell(run_key, in, [&](std::string_view k, std::string_view stored) {
    fuzz_check(k.substr(0, 4) == run_key.substr(0, 4), "one family per run");
    fuzz_check(first ? k >= run_key : k > last, "cells ascend from the run's key");
    fuzz_check(stored.size() >= 8, "a stored value holds its expiry");
    first = false;
    last = std::string(k);
    append_run_cell(rebuilt, k, stored);
    cells.emplace_back(k, stored);
    return status::ok();
  });
  if (!st) {
    fuzz_check(st.code() == code::corruption, "a bad run is CORRUPTION");
    return;
  }
  // Re-encoded (lengths as shortest varints), the run reads the same cells.
  std::size_t n = 0;
  auto again = for_each_run_cell(run_key, rebuilt, [&](std::string_view k, std::string_view stored) {
    fuzz_check(n < cells.size() && cells[n].first == k && cells[n].second == stored, "the same cells");
    ++n;
    return status::ok();
  });
  fuzz_check(again.is_ok() && n == cells.size(), "a run that reads whole re-encodes to one that reads the same");
}

void schema(std::string_view in) {
  auto t = decode_schema(in);
  if (!t) {
    fuzz_check(t.code() == code::corruption, "a bad catalog entry is CORRUPTION");
    return;
  }
  const std::string bytes = encode_schema(t.value());
  auto again = decode_schema(bytes);
  fuzz_check(again.is_ok(), "a decoded entry re-encodes to one that decodes");
  fuzz_check(encode_schema(again.value()) == bytes, "and to the same");
  for (const auto& f : t->families) fuzz_check(t->find(f.desc.name) == &f, "every family is found by its name");
  (void)t->descriptor();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: cell_key(in); break;
    case 1: run(in); break;
    case 2: schema(in); break;
  }
  return 0;
}
