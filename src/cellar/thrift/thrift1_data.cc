// Hbase's (thrift1's) reads and writes.
#include "thrift/convert1.h"
#include "thrift/convert2.h"
#include "thrift/errors.h"
#include "thrift/thrift1_handler.h"

namespace cellar::thrift {

std::vector<op_result> thrift1_handler::run(const std::string& table, std::vector<batch_op> ops,
                                            bool illegal_argument) {
  auto results = c_.batch(table_name(table), std::move(ops));
  for (const auto& r : results) check1(r.st, illegal_argument);
  return results;
}

namespace {

cellar::get cell_get(const t1::Text& row, const t1::Text& column) {
  cellar::get g(row);
  auto col = parse_column(column);
  if (col.qualifier)
    g.column(col.family, *col.qualifier);
  else
    g.family(col.family);
  return g;
}

}  // namespace

void thrift1_handler::get(std::vector<t1::TCell>& out, const t1::Text& tableName, const t1::Text& row,
                          const t1::Text& column, const attributes&) {
  out = to_tcells(run(tableName, {cell_get(row, column)}).front().row);
}

void thrift1_handler::getVer(std::vector<t1::TCell>& out, const t1::Text& tableName, const t1::Text& row,
                             const t1::Text& column, std::int32_t numVersions, const attributes&) {
  if (numVersions < 1) raise1(status(code::invalid_argument, "numVersions must be at least 1"));
  auto g = cell_get(row, column);
  g.max_versions(static_cast<std::uint32_t>(numVersions));
  out = to_tcells(run(tableName, {std::move(g)}).front().row);
}

void thrift1_handler::getVerTs(std::vector<t1::TCell>& out, const t1::Text& tableName, const t1::Text& row,
                               const t1::Text& column, std::int64_t timestamp, std::int32_t numVersions,
                               const attributes&) {
  if (numVersions < 1) raise1(status(code::invalid_argument, "numVersions must be at least 1"));
  auto g = cell_get(row, column);
  g.max_versions(static_cast<std::uint32_t>(numVersions)).range(0, timestamp);  // HBase: setTimeRange(0, ts)
  out = to_tcells(run(tableName, {std::move(g)}).front().row);
}

void thrift1_handler::read_rows(std::vector<t1::TRowResult>& out, const std::string& table,
                                const std::vector<t1::Text>& rows, const std::vector<t1::Text>& columns,
                                std::int64_t timestamp) {
  std::vector<batch_op> ops;
  for (const auto& row : rows) {
    cellar::get g(row);
    select_columns(columns, g.options);
    if (timestamp != latest_timestamp) g.range(0, timestamp);  // HBase: setTimeRange(0, ts)
    ops.emplace_back(std::move(g));
  }
  if (ops.empty()) return;
  for (const auto& r : run(table, std::move(ops)))
    if (!r.row.cells.empty()) out.push_back(to_trowresult(r.row, false));  // HBase skips empty rows
}

void thrift1_handler::getRow(std::vector<t1::TRowResult>& out, const t1::Text& tableName, const t1::Text& row,
                             const attributes&) {
  read_rows(out, tableName, {row}, {}, latest_timestamp);
}

void thrift1_handler::getRowWithColumns(std::vector<t1::TRowResult>& out, const t1::Text& tableName,
                                        const t1::Text& row, const std::vector<t1::Text>& columns, const attributes&) {
  read_rows(out, tableName, {row}, columns, latest_timestamp);
}

void thrift1_handler::getRowTs(std::vector<t1::TRowResult>& out, const t1::Text& tableName, const t1::Text& row,
                               std::int64_t timestamp, const attributes&) {
  read_rows(out, tableName, {row}, {}, timestamp);
}

void thrift1_handler::getRowWithColumnsTs(std::vector<t1::TRowResult>& out, const t1::Text& tableName,
                                          const t1::Text& row, const std::vector<t1::Text>& columns,
                                          std::int64_t timestamp, const attributes&) {
  read_rows(out, tableName, {row}, columns, timestamp);
}

void thrift1_handler::getRows(std::vector<t1::TRowResult>& out, const t1::Text& tableName,
                              const std::vector<t1::Text>& rows, const attributes&) {
  read_rows(out, tableName, rows, {}, latest_timestamp);
}

void thrift1_handler::getRowsWithColumns(std::vector<t1::TRowResult>& out, const t1::Text& tableName,
                                         const std::vector<t1::Text>& rows, const std::vector<t1::Text>& columns,
                                         const attributes&) {
  read_rows(out, tableName, rows, columns, latest_timestamp);
}

void thrift1_handler::getRowsTs(std::vector<t1::TRowResult>& out, const t1::Text& tableName,
                                const std::vector<t1::Text>& rows, std::int64_t timestamp, const attributes&) {
  read_rows(out, tableName, rows, {}, timestamp);
}

void thrift1_handler::getRowsWithColumnsTs(std::vector<t1::TRowResult>& out, const t1::Text& tableName,
                                           const std::vector<t1::Text>& rows, const std::vector<t1::Text>& columns,
                                           std::int64_t timestamp, const attributes&) {
  read_rows(out, tableName, rows, columns, timestamp);
}

namespace {

// One row's thrift1 mutations as HBase applies them: the deletes (every version <= the
// timestamp of a column, or of a family), then one put of the values at the timestamp.
// Here they are one atomic row mutation.
cellar::row_mutations row_mutations_of(const t1::Text& row, const std::vector<t1::Mutation>& mutations,
                                       std::int64_t timestamp) {
  cellar::deletion d(row);
  cellar::put p(row, timestamp);
  for (const auto& m : mutations) {
    auto col = parse_column(m.column);
    if (m.isDelete) {
      if (col.qualifier)
        d.columns(col.family, *col.qualifier, timestamp);
      else
        d.family(col.family, timestamp);
    } else {
      if (!col.qualifier)
        raise<t1::IllegalArgument>(status(code::invalid_argument,
                                          "No column qualifier specified. Delete is the only mutation supported "
                                          "over the whole column family."));
      p.add(col.family, *col.qualifier, timestamp, m.value);
    }
  }
  cellar::row_mutations out(row);
  if (!d.entries.empty()) out.add(std::move(d));
  if (!p.entries.empty()) out.add(std::move(p));
  return out;
}

}  // namespace

void thrift1_handler::mutate(const std::string& table, const std::vector<t1::BatchMutation>& batches,
                             std::int64_t timestamp) {
  std::vector<batch_op> ops;
  for (const auto& b : batches) {
    auto m = row_mutations_of(b.row, b.mutations, timestamp);
    if (!m.mutations.empty()) ops.emplace_back(std::move(m));
  }
  if (!ops.empty()) run(table, std::move(ops), true);
}

void thrift1_handler::mutateRow(const t1::Text& tableName, const t1::Text& row,
                                const std::vector<t1::Mutation>& mutations, const attributes&) {
  mutateRowTs(tableName, row, mutations, latest_timestamp, {});
}

void thrift1_handler::mutateRowTs(const t1::Text& tableName, const t1::Text& row,
                                  const std::vector<t1::Mutation>& mutations, std::int64_t timestamp,
                                  const attributes&) {
  t1::BatchMutation b;
  b.row = row;
  b.mutations = mutations;
  mutate(tableName, {b}, timestamp);
}

void thrift1_handler::mutateRows(const t1::Text& tableName, const std::vector<t1::BatchMutation>& rowBatches,
                                 const attributes&) {
  mutate(tableName, rowBatches, latest_timestamp);
}

void thrift1_handler::mutateRowsTs(const t1::Text& tableName, const std::vector<t1::BatchMutation>& rowBatches,
                                   std::int64_t timestamp, const attributes&) {
  mutate(tableName, rowBatches, timestamp);
}

std::int64_t thrift1_handler::atomicIncrement(const t1::Text& tableName, const t1::Text& row, const t1::Text& column,
                                              std::int64_t value) {
  auto col = parse_column(column);
  cellar::increment inc(row);
  inc.add(col.family, col.qualifier.value_or(""), value);
  auto r = run(tableName, {std::move(inc)}, true).front().row;
  if (r.cells.empty()) raise1(status(code::internal, "increment returned no cell"));
  auto v = to_long(r.cells.front().value);
  if (!v) raise1(status(code::internal, "increment returned a value that is not 8 bytes"));
  return *v;
}

void thrift1_handler::deleteAll(const t1::Text& tableName, const t1::Text& row, const t1::Text& column,
                                const attributes& a) {
  deleteAllTs(tableName, row, column, latest_timestamp, a);
}

void thrift1_handler::deleteAllTs(const t1::Text& tableName, const t1::Text& row, const t1::Text& column,
                                  std::int64_t timestamp, const attributes&) {
  auto col = parse_column(column);
  cellar::deletion d(row);
  if (col.qualifier)
    d.columns(col.family, *col.qualifier, timestamp);
  else
    d.family(col.family, timestamp);
  run(tableName, {std::move(d)});
}

void thrift1_handler::deleteAllRow(const t1::Text& tableName, const t1::Text& row, const attributes&) {
  run(tableName, {cellar::deletion(row)});
}

void thrift1_handler::deleteAllRowTs(const t1::Text& tableName, const t1::Text& row, std::int64_t timestamp,
                                     const attributes&) {
  run(tableName, {cellar::deletion(row, timestamp)});
}

void thrift1_handler::increment(const t1::TIncrement& inc) { incrementRows({inc}); }

void thrift1_handler::incrementRows(const std::vector<t1::TIncrement>& increments) {
  // Each names its own table: one batch per table, in order.
  for (const auto& i : increments) {
    auto col = parse_column(i.column);
    cellar::increment inc(i.row);
    inc.add(col.family, col.qualifier.value_or(""), i.ammount).return_results(false);
    run(i.table, {std::move(inc)});
  }
}

void thrift1_handler::append(std::vector<t1::TCell>& out, const t1::TAppend& a) {
  if (a.columns.size() != a.values.size())
    raise1(status(code::invalid_argument, "an append needs as many values as columns"));
  cellar::append app(a.row);
  for (std::size_t i = 0; i < a.columns.size(); ++i) {
    auto col = parse_column(a.columns[i]);
    app.add(col.family, col.qualifier.value_or(""), a.values[i]);
  }
  out = to_tcells(run(a.table, {std::move(app)}).front().row);
}

bool thrift1_handler::checkAndPut(const t1::Text& tableName, const t1::Text& row, const t1::Text& column,
                                  const t1::Text& value, const t1::Mutation& mput, const attributes&) {
  auto col = parse_column(column);
  auto put_col = parse_column(mput.column);
  if (!put_col.qualifier)
    raise<t1::IllegalArgument>(status(code::invalid_argument, "the put of checkAndPut needs a column qualifier"));
  cellar::check_and_mutate c(row, col.family, col.qualifier.value_or(""));
  if (value.empty())
    c.if_not_exists();  // HBase: an empty expected value is none
  else
    c.if_equals(value);
  c.then(cellar::put(row).add(put_col.family, *put_col.qualifier, mput.value));
  return run(tableName, {std::move(c)}, true).front().processed;
}

}  // namespace cellar::thrift
