// thrift/thrift1_handler.h: Hbase (HBase's thrift1, the service happybase speaks) over a
// cellar connection.
//
// One handler serves every connection of a gateway: its state is the connection (shared,
// thread-safe: an embedded connection) and the gateway's scanners. Columns are named
// "family:qualifier" ("family" or "family:" for a whole family); cells are TCell values
// with their timestamps.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Hbase.h"
#include "cellar/connection.h"
#include "thrift/gateway.h"
#include "thrift/scanners.h"

namespace cellar::thrift {

namespace t1 = apache::hadoop::hbase::thrift;

class thrift1_handler : public t1::HbaseIf {
 public:
  using attributes = std::map<t1::Text, t1::Text>;

  thrift1_handler(store& s, connection& c, scanner_table& scanners, const gateway_options& options,
                  const endpoint& where)
      : s_(s), c_(c), scanners_(scanners), options_(options), where_(where) {}

  // Tables, regions, scanners (thrift1_handler.cc).
  void enableTable(const t1::Bytes& tableName) override;
  void disableTable(const t1::Bytes& tableName) override;
  bool isTableEnabled(const t1::Bytes& tableName) override;
  void compact(const t1::Bytes& tableNameOrRegionName) override;
  void majorCompact(const t1::Bytes& tableNameOrRegionName) override;
  void getTableNames(std::vector<t1::Text>& out) override;
  void getTableNamesWithIsTableEnabled(std::map<t1::Text, bool>& out) override;
  void getColumnDescriptors(std::map<t1::Text, t1::ColumnDescriptor>& out, const t1::Text& tableName) override;
  void getTableRegions(std::vector<t1::TRegionInfo>& out, const t1::Text& tableName) override;
  void createTable(const t1::Text& tableName, const std::vector<t1::ColumnDescriptor>& columnFamilies) override;
  void deleteTable(const t1::Text& tableName) override;
  t1::ScannerID scannerOpenWithScan(const t1::Text& tableName, const t1::TScan& scan, const attributes& a) override;
  t1::ScannerID scannerOpen(const t1::Text& tableName, const t1::Text& startRow, const std::vector<t1::Text>& columns,
                            const attributes& a) override;
  t1::ScannerID scannerOpenWithStop(const t1::Text& tableName, const t1::Text& startRow, const t1::Text& stopRow,
                                    const std::vector<t1::Text>& columns, const attributes& a) override;
  t1::ScannerID scannerOpenWithPrefix(const t1::Text& tableName, const t1::Text& startAndPrefix,
                                      const std::vector<t1::Text>& columns, const attributes& a) override;
  t1::ScannerID scannerOpenTs(const t1::Text& tableName, const t1::Text& startRow, const std::vector<t1::Text>& columns,
                              std::int64_t timestamp, const attributes& a) override;
  t1::ScannerID scannerOpenWithStopTs(const t1::Text& tableName, const t1::Text& startRow, const t1::Text& stopRow,
                                      const std::vector<t1::Text>& columns, std::int64_t timestamp,
                                      const attributes& a) override;
  void scannerGet(std::vector<t1::TRowResult>& out, t1::ScannerID id) override;
  void scannerGetList(std::vector<t1::TRowResult>& out, t1::ScannerID id, std::int32_t nbRows) override;
  void scannerClose(t1::ScannerID id) override;
  void getRegionInfo(t1::TRegionInfo& out, const t1::Text& row) override;
  t1::TThriftServerType::type getThriftServerType() override { return t1::TThriftServerType::ONE; }
  void getClusterId(std::string& out) override;
  bool grant(const t1::TAccessControlEntity& info) override;
  bool revoke(const t1::TAccessControlEntity& info) override;

  // Reads and writes (thrift1_data.cc).
  void get(std::vector<t1::TCell>& out, const t1::Text& tableName, const t1::Text& row, const t1::Text& column,
           const attributes& a) override;
  void getVer(std::vector<t1::TCell>& out, const t1::Text& tableName, const t1::Text& row, const t1::Text& column,
              std::int32_t numVersions, const attributes& a) override;
  void getVerTs(std::vector<t1::TCell>& out, const t1::Text& tableName, const t1::Text& row, const t1::Text& column,
                std::int64_t timestamp, std::int32_t numVersions, const attributes& a) override;
  void getRow(std::vector<t1::TRowResult>& out, const t1::Text& tableName, const t1::Text& row,
              const attributes& a) override;
  void getRowWithColumns(std::vector<t1::TRowResult>& out, const t1::Text& tableName, const t1::Text& row,
                         const std::vector<t1::Text>& columns, const attributes& a) override;
  void getRowTs(std::vector<t1::TRowResult>& out, const t1::Text& tableName, const t1::Text& row,
                std::int64_t timestamp, const attributes& a) override;
  void getRowWithColumnsTs(std::vector<t1::TRowResult>& out, const t1::Text& tableName, const t1::Text& row,
                           const std::vector<t1::Text>& columns, std::int64_t timestamp, const attributes& a) override;
  void getRows(std::vector<t1::TRowResult>& out, const t1::Text& tableName, const std::vector<t1::Text>& rows,
               const attributes& a) override;
  void getRowsWithColumns(std::vector<t1::TRowResult>& out, const t1::Text& tableName,
                          const std::vector<t1::Text>& rows, const std::vector<t1::Text>& columns,
                          const attributes& a) override;
  void getRowsTs(std::vector<t1::TRowResult>& out, const t1::Text& tableName, const std::vector<t1::Text>& rows,
                 std::int64_t timestamp, const attributes& a) override;
  void getRowsWithColumnsTs(std::vector<t1::TRowResult>& out, const t1::Text& tableName,
                            const std::vector<t1::Text>& rows, const std::vector<t1::Text>& columns,
                            std::int64_t timestamp, const attributes& a) override;
  void mutateRow(const t1::Text& tableName, const t1::Text& row, const std::vector<t1::Mutation>& mutations,
                 const attributes& a) override;
  void mutateRowTs(const t1::Text& tableName, const t1::Text& row, const std::vector<t1::Mutation>& mutations,
                   std::int64_t timestamp, const attributes& a) override;
  void mutateRows(const t1::Text& tableName, const std::vector<t1::BatchMutation>& rowBatches,
                  const attributes& a) override;
  void mutateRowsTs(const t1::Text& tableName, const std::vector<t1::BatchMutation>& rowBatches, std::int64_t timestamp,
                    const attributes& a) override;
  std::int64_t atomicIncrement(const t1::Text& tableName, const t1::Text& row, const t1::Text& column,
                               std::int64_t value) override;
  void deleteAll(const t1::Text& tableName, const t1::Text& row, const t1::Text& column, const attributes& a) override;
  void deleteAllTs(const t1::Text& tableName, const t1::Text& row, const t1::Text& column, std::int64_t timestamp,
                   const attributes& a) override;
  void deleteAllRow(const t1::Text& tableName, const t1::Text& row, const attributes& a) override;
  void deleteAllRowTs(const t1::Text& tableName, const t1::Text& row, std::int64_t timestamp,
                      const attributes& a) override;
  void increment(const t1::TIncrement& increment) override;
  void incrementRows(const std::vector<t1::TIncrement>& increments) override;
  void append(std::vector<t1::TCell>& out, const t1::TAppend& append) override;
  bool checkAndPut(const t1::Text& tableName, const t1::Text& row, const t1::Text& column, const t1::Text& value,
                   const t1::Mutation& mput, const attributes& a) override;

 private:
  // Runs `ops` on `table`; the results, or the error of the first action that failed, as
  // IllegalArgument when `illegal_argument` says the method declares it, else IOError.
  std::vector<op_result> run(const std::string& table, std::vector<batch_op> ops, bool illegal_argument = false);
  void read_rows(std::vector<t1::TRowResult>& out, const std::string& table, const std::vector<t1::Text>& rows,
                 const std::vector<t1::Text>& columns, std::int64_t timestamp);
  void mutate(const std::string& table, const std::vector<t1::BatchMutation>& batches, std::int64_t timestamp);
  t1::ScannerID open_scanner(const std::string& table, const cellar::scan& s, bool sort_columns);

  store& s_;  // region locations ask it for the partitions' owners (thrift/regions.h)
  connection& c_;
  scanner_table& scanners_;
  const gateway_options& options_;
  const endpoint& where_;
};

}  // namespace cellar::thrift
