// THBaseService's data methods: gets, puts, deletes, checks, counters and scanners.
#include <utility>

#include "thrift/convert2.h"
#include "thrift/errors.h"
#include "thrift/thrift2_handler.h"

namespace cellar::thrift {

namespace {

using io_error = t2::TIOError;

}  // namespace

std::vector<op_result> thrift2_handler::run(const std::string& table, std::vector<batch_op> ops) {
  auto results = c_.batch(table_name(table), std::move(ops));
  for (const auto& r : results)
    if (!r.st) raise<io_error>(r.st);
  return results;
}

bool thrift2_handler::exists(const std::string& table, const t2::TGet& tget) {
  auto g = take<io_error>(to_get(tget));
  g.exists_only();
  return run(table, {std::move(g)}).front().row.exists;
}

void thrift2_handler::existsAll(std::vector<bool>& out, const std::string& table, const std::vector<t2::TGet>& tgets) {
  std::vector<batch_op> ops;
  for (const auto& tg : tgets) {
    auto g = take<io_error>(to_get(tg));
    g.exists_only();
    ops.emplace_back(std::move(g));
  }
  if (ops.empty()) return;
  for (const auto& r : run(table, std::move(ops))) out.push_back(r.row.exists);
}

void thrift2_handler::get(t2::TResult& out, const std::string& table, const t2::TGet& tget) {
  out = to_tresult(run(table, {take<io_error>(to_get(tget))}).front().row);
}

void thrift2_handler::getMultiple(std::vector<t2::TResult>& out, const std::string& table,
                                  const std::vector<t2::TGet>& tgets) {
  std::vector<batch_op> ops;
  for (const auto& tg : tgets) ops.emplace_back(take<io_error>(to_get(tg)));
  if (ops.empty()) return;
  for (const auto& r : run(table, std::move(ops))) out.push_back(to_tresult(r.row));
}

void thrift2_handler::put(const std::string& table, const t2::TPut& tput) {
  run(table, {take<io_error>(to_put(tput))});
}

void thrift2_handler::putMultiple(const std::string& table, const std::vector<t2::TPut>& tputs) {
  std::vector<batch_op> ops;
  for (const auto& p : tputs) ops.emplace_back(take<io_error>(to_put(p)));
  if (!ops.empty()) run(table, std::move(ops));
}

void thrift2_handler::deleteSingle(const std::string& table, const t2::TDelete& tdelete) {
  run(table, {take<io_error>(to_deletion(tdelete))});
}

void thrift2_handler::deleteMultiple(std::vector<t2::TDelete>& out, const std::string& table,
                                     const std::vector<t2::TDelete>& tdeletes) {
  (void)out;  // HBase answers an empty list whatever happened
  std::vector<batch_op> ops;
  for (const auto& d : tdeletes) ops.emplace_back(take<io_error>(to_deletion(d)));
  if (!ops.empty()) run(table, std::move(ops));
}

bool thrift2_handler::check_and_mutate(const std::string& table, cellar::check_and_mutate c) {
  return run(table, {std::move(c)}).front().processed;
}

namespace {

// HBase treats an empty expected value as none: the check is then for a column that is
// absent (or holds an empty value).
cellar::check_and_mutate check_of(const std::string& row, const std::string& family, const std::string& qualifier,
                                  compare_op op, const std::string& value) {
  cellar::check_and_mutate c(row, family, qualifier);
  if (value.empty())
    c.if_not_exists();
  else
    c.if_matches(op, value);
  return c;
}

}  // namespace

bool thrift2_handler::checkAndPut(const std::string& table, const std::string& row, const std::string& family,
                                  const std::string& qualifier, const std::string& value, const t2::TPut& tput) {
  auto c = check_of(row, family, qualifier, compare_op::equal, value);
  c.then(take<io_error>(to_put(tput)));
  return check_and_mutate(table, std::move(c));
}

bool thrift2_handler::checkAndDelete(const std::string& table, const std::string& row, const std::string& family,
                                     const std::string& qualifier, const std::string& value,
                                     const t2::TDelete& tdelete) {
  auto c = check_of(row, family, qualifier, compare_op::equal, value);
  c.then(take<io_error>(to_deletion(tdelete)));
  return check_and_mutate(table, std::move(c));
}

bool thrift2_handler::checkAndMutate(const std::string& table, const std::string& row, const std::string& family,
                                     const std::string& qualifier, t2::TCompareOperator::type compareOperator,
                                     const std::string& value, const t2::TRowMutations& rowMutations) {
  auto c = check_of(row, family, qualifier, to_compare_op(compareOperator), value);
  c.then(take<io_error>(to_row_mutations(rowMutations)));
  return check_and_mutate(table, std::move(c));
}

void thrift2_handler::increment(t2::TResult& out, const std::string& table, const t2::TIncrement& tincrement) {
  out = to_tresult(run(table, {take<io_error>(to_increment(tincrement))}).front().row);
}

void thrift2_handler::append(t2::TResult& out, const std::string& table, const t2::TAppend& tappend) {
  out = to_tresult(run(table, {take<io_error>(to_append(tappend))}).front().row);
}

void thrift2_handler::mutateRow(const std::string& table, const t2::TRowMutations& trowMutations) {
  run(table, {take<io_error>(to_row_mutations(trowMutations))});
}

std::int32_t thrift2_handler::openScanner(const std::string& table, const t2::TScan& tscan) {
  auto stream = take<io_error>(c_.scan(table_name(table), take<io_error>(to_scan(tscan))));
  return take<io_error>(scanners_.open(std::move(stream)));
}

namespace {

[[noreturn]] void invalid_scanner(std::int32_t id) {
  t2::TIllegalArgument e;
  e.__set_message("Invalid scanner Id: " + std::to_string(id));
  throw e;
}

void page(std::vector<t2::TResult>& out, row_stream& stream, std::int32_t rows) {
  auto got = take<io_error>(stream.next(static_cast<std::size_t>(rows < 1 ? 1 : rows)));
  out.reserve(got.size());
  for (const auto& r : got) out.push_back(to_tresult(r));
}

}  // namespace

void thrift2_handler::getScannerRows(std::vector<t2::TResult>& out, std::int32_t scannerId, std::int32_t numRows) {
  auto e = scanners_.find(scannerId);
  if (!e) invalid_scanner(scannerId);
  absl::MutexLock l(&e->mu);
  page(out, *e->stream, numRows);
}

void thrift2_handler::closeScanner(std::int32_t scannerId) {
  if (!scanners_.close(scannerId)) invalid_scanner(scannerId);
}

void thrift2_handler::getScannerResults(std::vector<t2::TResult>& out, const std::string& table, const t2::TScan& tscan,
                                        std::int32_t numRows) {
  auto s = take<io_error>(to_scan(tscan));
  if (numRows > 0 && (s.limit_ < 0 || s.limit_ > numRows)) s.limit(numRows);
  auto stream = take<io_error>(c_.scan(table_name(table), s));
  page(out, *stream, numRows);
}

}  // namespace cellar::thrift
