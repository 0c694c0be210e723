#include "persist/runs.h"

#include "persist/codec.h"
#include "util/coding.h"

namespace cellar::detail {

namespace {}  // namespace

void append_run_cell(std::string& run, std::string_view key, std::int64_t expires_at, std::string_view value) {
  put_sized(run, key);
  put_varint(run, 8 + value.size());
  put_u64(run, static_cast<std::uint64_t>(expires_at));
  run.append(value);
}

void append_run_cell(std::string& run, std::string_view key, std::string_view stored) {
  put_sized(run, key);
  put_sized(run, stored);
}

bool run_reader::next(std::string_view& key, std::string_view& stored) {
  if (!ok_ || in_.empty()) return false;
  if (!get_sized(in_, key) || !get_sized(in_, stored) || key.size() < 4 ||
      (stored.size() < 8 && !(erasures_ && stored.empty())) || (!first_ && key <= last_)) {
    ok_ = false;
    return false;
  }
  first_ = false;
  last_ = key;
  return true;
}

namespace {

status for_each_cell(std::string_view run_key, std::string_view run, bool erasures,
                     const std::function<status(std::string_view key, std::string_view stored)>& fn) {
  if (run_key.size() < 4) return {code::corruption, "malformed run: a key shorter than a family id"};
  const std::string_view family = run_key.substr(0, 4);
  run_reader r(run, erasures);
  std::string_view key, stored;
  bool first = true;
  while (r.next(key, stored)) {
    if (first && key < run_key) return {code::corruption, "malformed run: its first cell sorts before its key"};
    if (key.substr(0, 4) != family) return {code::corruption, "malformed run: cells of another family"};
    first = false;
    if (auto s = fn(key, stored); !s) return s;
  }
  if (!r.ok()) return {code::corruption, "malformed run: a cell is cut short or out of order"};
  if (first) return {code::corruption, "malformed run: no cells"};
  return status::ok();
}

}  // namespace

status for_each_run_cell(std::string_view run_key, std::string_view run,
                         const std::function<status(std::string_view key, std::string_view stored)>& fn) {
  return for_each_cell(run_key, run, false, fn);
}

status for_each_change_cell(std::string_view table_key, std::string_view run, std::uint64_t* generation,
                            const std::function<status(std::string_view key, std::string_view stored)>& fn) {
  reader r(table_key);
  std::uint64_t g = 0;
  if (!r.u64(g)) return {code::corruption, "malformed change run: a key shorter than a generation"};
  if (generation) *generation = g;
  return for_each_cell(r.rest(), run, true, fn);
}

}  // namespace cellar::detail
