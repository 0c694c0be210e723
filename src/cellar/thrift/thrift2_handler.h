// thrift/thrift2_handler.h: THBaseService (HBase's thrift2) over a cellar connection.
//
// One handler serves every connection of a gateway: its state is the connection (shared,
// thread-safe: an embedded connection) and the gateway's scanners. The data methods are in
// thrift2_data.cc, the table and region methods in thrift2_admin.cc.
#pragma once

#include <string>
#include <vector>

#include "THBaseService.h"
#include "cellar/connection.h"
#include "thrift/gateway.h"
#include "thrift/scanners.h"

namespace cellar::thrift {

namespace t2 = apache::hadoop::hbase::thrift2;

class thrift2_handler : public t2::THBaseServiceIf {
 public:
  // `where`: this gateway, as region locations name it.
  thrift2_handler(store& s, connection& c, scanner_table& scanners, const gateway_options& options,
                  const endpoint& where)
      : s_(s), c_(c), scanners_(scanners), options_(options), where_(where) {}

  // Data (thrift2_data.cc).
  bool exists(const std::string& table, const t2::TGet& tget) override;
  void existsAll(std::vector<bool>& out, const std::string& table, const std::vector<t2::TGet>& tgets) override;
  void get(t2::TResult& out, const std::string& table, const t2::TGet& tget) override;
  void getMultiple(std::vector<t2::TResult>& out, const std::string& table,
                   const std::vector<t2::TGet>& tgets) override;
  void put(const std::string& table, const t2::TPut& tput) override;
  bool checkAndPut(const std::string& table, const std::string& row, const std::string& family,
                   const std::string& qualifier, const std::string& value, const t2::TPut& tput) override;
  void putMultiple(const std::string& table, const std::vector<t2::TPut>& tputs) override;
  void deleteSingle(const std::string& table, const t2::TDelete& tdelete) override;
  void deleteMultiple(std::vector<t2::TDelete>& out, const std::string& table,
                      const std::vector<t2::TDelete>& tdeletes) override;
  bool checkAndDelete(const std::string& table, const std::string& row, const std::string& family,
                      const std::string& qualifier, const std::string& value, const t2::TDelete& tdelete) override;
  void increment(t2::TResult& out, const std::string& table, const t2::TIncrement& tincrement) override;
  void append(t2::TResult& out, const std::string& table, const t2::TAppend& tappend) override;
  std::int32_t openScanner(const std::string& table, const t2::TScan& tscan) override;
  void getScannerRows(std::vector<t2::TResult>& out, std::int32_t scannerId, std::int32_t numRows) override;
  void closeScanner(std::int32_t scannerId) override;
  void mutateRow(const std::string& table, const t2::TRowMutations& trowMutations) override;
  void getScannerResults(std::vector<t2::TResult>& out, const std::string& table, const t2::TScan& tscan,
                         std::int32_t numRows) override;
  bool checkAndMutate(const std::string& table, const std::string& row, const std::string& family,
                      const std::string& qualifier, t2::TCompareOperator::type compareOperator,
                      const std::string& value, const t2::TRowMutations& rowMutations) override;

  // Tables and regions (thrift2_admin.cc).
  void getRegionLocation(t2::THRegionLocation& out, const std::string& table, const std::string& row,
                         bool reload) override;
  void getAllRegionLocations(std::vector<t2::THRegionLocation>& out, const std::string& table) override;
  void getTableDescriptor(t2::TTableDescriptor& out, const t2::TTableName& table) override;
  void getTableDescriptors(std::vector<t2::TTableDescriptor>& out, const std::vector<t2::TTableName>& tables) override;
  bool tableExists(const t2::TTableName& tableName) override;
  void getTableDescriptorsByPattern(std::vector<t2::TTableDescriptor>& out, const std::string& regex,
                                    bool includeSysTables) override;
  void getTableDescriptorsByNamespace(std::vector<t2::TTableDescriptor>& out, const std::string& name) override;
  void getTableNamesByPattern(std::vector<t2::TTableName>& out, const std::string& regex,
                              bool includeSysTables) override;
  void getTableNamesByNamespace(std::vector<t2::TTableName>& out, const std::string& name) override;
  void createTable(const t2::TTableDescriptor& desc, const std::vector<std::string>& splitKeys) override;
  void deleteTable(const t2::TTableName& tableName) override;
  void truncateTable(const t2::TTableName& tableName, bool preserveSplits) override;
  void enableTable(const t2::TTableName& tableName) override;
  void disableTable(const t2::TTableName& tableName) override;
  bool isTableEnabled(const t2::TTableName& tableName) override;
  bool isTableDisabled(const t2::TTableName& tableName) override;
  bool isTableAvailable(const t2::TTableName& tableName) override;
  bool isTableAvailableWithSplit(const t2::TTableName& tableName, const std::vector<std::string>& splitKeys) override;
  void addColumnFamily(const t2::TTableName& tableName, const t2::TColumnFamilyDescriptor& column) override;
  void deleteColumnFamily(const t2::TTableName& tableName, const std::string& column) override;
  void modifyColumnFamily(const t2::TTableName& tableName, const t2::TColumnFamilyDescriptor& column) override;
  void modifyTable(const t2::TTableDescriptor& desc) override;
  void createNamespace(const t2::TNamespaceDescriptor& namespaceDesc) override;
  void modifyNamespace(const t2::TNamespaceDescriptor& namespaceDesc) override;
  void deleteNamespace(const std::string& name) override;
  void getNamespaceDescriptor(t2::TNamespaceDescriptor& out, const std::string& name) override;
  void listNamespaceDescriptors(std::vector<t2::TNamespaceDescriptor>& out) override;
  void listNamespaces(std::vector<std::string>& out) override;
  t2::TThriftServerType::type getThriftServerType() override { return t2::TThriftServerType::TWO; }

 private:
  // Runs `ops` on `table`; the results, or TIOError with the first action's error.
  std::vector<op_result> run(const std::string& table, std::vector<batch_op> ops);
  bool check_and_mutate(const std::string& table, check_and_mutate c);
  std::string table_of(const t2::TTableName& t);
  std::vector<std::string> tables_matching(const std::string& regex);

  store& s_;  // region locations ask it for the partitions' owners (thrift/regions.h)
  connection& c_;
  scanner_table& scanners_;
  const gateway_options& options_;
  const endpoint& where_;
};

}  // namespace cellar::thrift
