/*
 * Licensed to the Apache Software Foundation (ASF) under one
 * or more contributor license agreements.  See the NOTICE file
 * distributed with this work for additional information
 * regarding copyright ownership.  The ASF licenses this file
 * to you under the Apache License, Version 2.0 (the
 * "License"); you may not use this file except in compliance
 * with the License.  You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

// HBase 2.x's thrift2 IDL (hbase-thrift/src/main/resources/org/apache/hadoop/hbase/thrift2/
// hbase.thrift in Apache HBase): the structs, field ids, types and methods are HBase's, since
// they are the wire contract its clients speak; the long doc comments are shortened here.
// cellar's gateway (docs/thrift.md) serves this service.
// NOTE: The "required" and "optional" keywords for the service methods are purely for documentation

namespace java org.apache.hadoop.hbase.thrift2.generated
namespace cpp apache.hadoop.hbase.thrift2
namespace rb Apache.Hadoop.Hbase.Thrift2
namespace py hbase
namespace perl Hbase

struct TTimeRange {
  1: required i64 minStamp,
  2: required i64 maxStamp
}

/** Addresses a single cell or multiple cells by family and optionally qualifier and timestamp. */
struct TColumn {
  1: required binary family,
  2: optional binary qualifier,
  3: optional i64 timestamp
}

/** Represents a single cell and its value. */
struct TColumnValue {
  1: required binary family,
  2: required binary qualifier,
  3: required binary value,
  4: optional i64 timestamp,
  5: optional binary tags,
  6: optional byte type
}

/** Represents a single cell and the amount to increment it by */
struct TColumnIncrement {
  1: required binary family,
  2: required binary qualifier,
  3: optional i64 amount = 1
}

/** if no Result is found, row and columnValues will not be set. */
struct TResult {
  1: optional binary row,
  2: required list<TColumnValue> columnValues,
  3: optional bool stale = false
  4: optional bool partial = false
}

/**
 * Specify type of delete:
 *  - DELETE_COLUMN means exactly one version will be removed,
 *  - DELETE_COLUMNS means previous versions will also be removed.
 */
enum TDeleteType {
  DELETE_COLUMN = 0,
  DELETE_COLUMNS = 1,
  DELETE_FAMILY = 2,
  DELETE_FAMILY_VERSION = 3
}

enum TDurability {
  USE_DEFAULT = 0,
  SKIP_WAL = 1,
  ASYNC_WAL = 2,
  SYNC_WAL = 3,
  FSYNC_WAL = 4
}
struct TAuthorization {
 1: optional list<string> labels
}

struct TCellVisibility {
 1: optional string expression
}

enum TConsistency {
  STRONG = 1,
  TIMELINE = 2
}

/**
 * Used to perform Get operations on a single row.
 * If you specify a time range and a timestamp the range is ignored.
 * Timestamps on TColumns are ignored.
 */
struct TGet {
  1: required binary row,
  2: optional list<TColumn> columns,

  3: optional i64 timestamp,
  4: optional TTimeRange timeRange,

  5: optional i32 maxVersions,
  6: optional binary filterString,
  7: optional map<binary, binary> attributes
  8: optional TAuthorization authorizations
  9: optional TConsistency consistency
  10: optional i32 targetReplicaId
  11: optional bool cacheBlocks
  12: optional i32 storeLimit
  13: optional i32 storeOffset
  14: optional bool existence_only
  15: optional binary filterBytes

}

/** Used to perform Put operations for a single row. */
struct TPut {
  1: required binary row,
  2: required list<TColumnValue> columnValues
  3: optional i64 timestamp,
  5: optional map<binary, binary> attributes,
  6: optional TDurability durability,
  7: optional TCellVisibility cellVisibility
}

/**
 * Used to perform Delete operations on a single row.
 * A family-only TColumn deletes the family (versions <= timestamp when given); a
 * family and qualifier delete the newest version, or exactly the timestamp given, or
 * every version <= timestamp with DELETE_COLUMNS. With no columns the whole row goes.
 */
struct TDelete {
  1: required binary row,
  2: optional list<TColumn> columns,
  3: optional i64 timestamp,
  4: optional TDeleteType deleteType = 1,
  6: optional map<binary, binary> attributes,
  7: optional TDurability durability

}

/** Used to perform Increment operations for a single row. */
struct TIncrement {
  1: required binary row,
  2: required list<TColumnIncrement> columns,
  4: optional map<binary, binary> attributes,
  5: optional TDurability durability
  6: optional TCellVisibility cellVisibility
  7: optional bool returnResults
}

/* Used to perform append operation */
struct TAppend {
  1: required binary row,
  2: required list<TColumnValue> columns,
  3: optional map<binary, binary> attributes,
  4: optional TDurability durability
  5: optional TCellVisibility cellVisibility
  6: optional bool returnResults
}

enum TReadType {
  DEFAULT = 1,
  STREAM = 2,
  PREAD = 3
}

/** Any timestamps in the columns are ignored. Max versions defaults to 1. */
struct TScan {
  1: optional binary startRow,
  2: optional binary stopRow,
  3: optional list<TColumn> columns
  4: optional i32 caching,
  5: optional i32 maxVersions=1,
  6: optional TTimeRange timeRange,
  7: optional binary filterString,
  8: optional i32 batchSize,
  9: optional map<binary, binary> attributes
  10: optional TAuthorization authorizations
  11: optional bool reversed
  12: optional bool cacheBlocks
  13: optional map<binary,TTimeRange> colFamTimeRangeMap
  14: optional TReadType readType
  15: optional i32 limit
  16: optional TConsistency consistency
  17: optional i32 targetReplicaId
  18: optional binary filterBytes

}

/** Atomic mutation for the specified row. It can be either Put or Delete. */
union TMutation {
  1: TPut put
  2: TDelete deleteSingle
}

/** A TRowMutations object is used to apply a number of Mutations to a single row. */
struct TRowMutations {
  1: required binary row
  2: required list<TMutation> mutations
}

struct THRegionInfo {
  1: required i64 regionId
  2: required binary tableName
  3: optional binary startKey
  4: optional binary endKey
  5: optional bool offline
  6: optional bool split
  7: optional i32 replicaId
}

struct TServerName {
  1: required string hostName
  2: optional i32 port
  3: optional i64 startCode
}

struct THRegionLocation {
  1: required TServerName serverName
  2: required THRegionInfo regionInfo
}

/** Thrift wrapper around org.apache.hadoop.hbase.CompareOperator. */
enum TCompareOperator {
  LESS = 0,
  LESS_OR_EQUAL = 1,
  EQUAL = 2,
  NOT_EQUAL = 3,
  GREATER_OR_EQUAL = 4,
  GREATER = 5,
  NO_OP = 6
}

/** Thrift wrapper around org.apache.hadoop.hbase.regionserver.BloomType */
enum TBloomFilterType {
  NONE = 0,
  ROW = 1,
  ROWCOL = 2,
  ROWPREFIX_FIXED_LENGTH = 3,
}

/** Thrift wrapper around org.apache.hadoop.hbase.io.compress.Algorithm */
enum TCompressionAlgorithm {
  LZO = 0,
  GZ = 1,
  NONE = 2,
  SNAPPY = 3,
  LZ4 = 4,
  BZIP2 = 5,
  ZSTD = 6
}

/** Thrift wrapper around org.apache.hadoop.hbase.io.encoding.DataBlockEncoding */
enum TDataBlockEncoding {
  NONE = 0,
  // id 1 is reserved for the BITSET algorithm to be added later
  PREFIX = 2,
  DIFF  = 3,
  FAST_DIFF = 4,
  // id 5 is reserved for the COPY_KEY algorithm for benchmarking
  ROW_INDEX_V1 = 7
}

/** Thrift wrapper around org.apache.hadoop.hbase.KeepDeletedCells */
enum TKeepDeletedCells {
  FALSE = 0,
  TRUE = 1,
  TTL = 2
}

/** Thrift wrapper around org.apache.hadoop.hbase.TableName */
struct TTableName {
  /** namespace name */
  1: optional binary ns
  /** tablename */
  2: required binary qualifier
}

/** Thrift wrapper around org.apache.hadoop.hbase.client.ColumnFamilyDescriptor */
struct TColumnFamilyDescriptor {
  1: required binary name
  2: optional map<binary, binary> attributes
  3: optional map<string, string> configuration
  4: optional i32 blockSize
  5: optional TBloomFilterType bloomnFilterType
  6: optional TCompressionAlgorithm compressionType
  7: optional i16 dfsReplication
  8: optional TDataBlockEncoding dataBlockEncoding
  9: optional TKeepDeletedCells keepDeletedCells
  10: optional i32 maxVersions
  11: optional i32 minVersions
  12: optional i32 scope
  13: optional i32 timeToLive
  14: optional bool blockCacheEnabled
  15: optional bool cacheBloomsOnWrite
  16: optional bool cacheDataOnWrite
  17: optional bool cacheIndexesOnWrite
  18: optional bool compressTags
  19: optional bool evictBlocksOnClose
  20: optional bool inMemory

}

/** Thrift wrapper around org.apache.hadoop.hbase.client.TableDescriptor */
struct TTableDescriptor {
 1: required TTableName tableName
 2: optional list<TColumnFamilyDescriptor> columns
 3: optional map<binary, binary> attributes
 4: optional TDurability durability
}

/** Thrift wrapper around org.apache.hadoop.hbase.NamespaceDescriptor */
struct TNamespaceDescriptor {
1: required string name
2: optional map<string, string> configuration
}

//
// Exceptions
//

/** A general error: the store, the table, a node. */
exception TIOError {
  1: optional string message
}

/** An illegal or invalid argument was passed into a procedure. */
exception TIllegalArgument {
  1: optional string message
}

/** Specify type of thrift server: thrift and thrift2 */
enum TThriftServerType {
  ONE = 1,
  TWO = 2
}

service THBaseService {

  /** Whether the TGet matches one or more cells. */
  bool exists(
    1: required binary table,
    2: required TGet tget
  ) throws (1:TIOError io)

  /** exists() of each TGet, in order. */
  list<bool> existsAll(
    1: required binary table,
    2: required list<TGet> tgets
  ) throws (1:TIOError io)

  /** One row; an empty TResult if it has no cells. */
  TResult get(
    1: required binary table,
    2: required TGet tget
  ) throws (1: TIOError io)

  /** get() of each TGet, in order. */
  list<TResult> getMultiple(
    1: required binary table,
    2: required list<TGet> tgets
  ) throws (1: TIOError io)

  /** Commit a TPut to a table. */
  void put(
    1: required binary table,
    2: required TPut tput
  ) throws (1: TIOError io)

  /** Puts tput iff family:qualifier equals value (is absent when value is not given). */
  bool checkAndPut(
    1: required binary table,
    2: required binary row,
    3: required binary family,
    4: required binary qualifier,
    5: binary value,
    6: required TPut tput
  ) throws (1: TIOError io)

  /** Commit a List of Puts to the table. */
  void putMultiple(
    1: required binary table,
    2: required list<TPut> tputs
  ) throws (1: TIOError io)

  /** Deletes as specified by the TDelete ("delete" is a reserved word in Thrift). */
  void deleteSingle(
    1: required binary table,
    2: required TDelete tdelete
  ) throws (1: TIOError io)

  /** Bulk commit of TDeletes; always returns an empty list for backwards compatibility. */
  list<TDelete> deleteMultiple(
    1: required binary table,
    2: required list<TDelete> tdeletes
  ) throws (1: TIOError io)

  /** Deletes tdelete iff family:qualifier equals value (is absent when value is not given). */
  bool checkAndDelete(
    1: required binary table,
    2: required binary row,
    3: required binary family,
    4: required binary qualifier,
    5: binary value,
    6: required TDelete tdelete
  ) throws (1: TIOError io)

  TResult increment(
    1: required binary table,
    2: required TIncrement tincrement
  ) throws (1: TIOError io)

  TResult append(
    1: required binary table,
    2: required TAppend tappend
  ) throws (1: TIOError io)

  /** A scanner id for getScannerRows and closeScanner. */
  i32 openScanner(
    1: required binary table,
    2: required TScan tscan,
  ) throws (1: TIOError io)

  /** Between zero and numRows TResults. */
  list<TResult> getScannerRows(
    1: required i32 scannerId,
    2: i32 numRows = 1
  ) throws (
    1: TIOError io,
    /** if the scannerId is invalid */
    2: TIllegalArgument ia
  )

  void closeScanner(
    1: required i32 scannerId
  ) throws (
    1: TIOError io,
    /** if the scannerId is invalid */
    2: TIllegalArgument ia
  )

  /** Multiple mutations atomically on a single row. */
  void mutateRow(
    1: required binary table,
    2: required TRowMutations trowMutations
  ) throws (1: TIOError io)

  /** Opens a scanner, gets up to numRows results and closes it. */
  list<TResult> getScannerResults(
    1: required binary table,
    2: required TScan tscan,
    3: i32 numRows = 1
  ) throws (
    1: TIOError io
  )

  /** The region that would contain the row. */
  THRegionLocation getRegionLocation(
    1: required binary table,
    2: required binary row,
    3: bool reload,
  ) throws (
    1: TIOError io
  )

  /** All of the region locations of a table. */
  list<THRegionLocation> getAllRegionLocations(
    1: required binary table,
  ) throws (
    1: TIOError io
  )

  /** Mutates the row iff compareOperator(value, family:qualifier's value) holds. */
  bool checkAndMutate(
    1: required binary table,
    2: required binary row,
    3: required binary family,
    4: required binary qualifier,
    5: required TCompareOperator compareOperator,
    6: binary value,
    7: required TRowMutations rowMutations
  ) throws (1: TIOError io)

  TTableDescriptor getTableDescriptor(
    1: required TTableName table
  ) throws (1: TIOError io)

  list<TTableDescriptor> getTableDescriptors(
    1: required list<TTableName> tables
  ) throws (1: TIOError io)

  bool tableExists(
    1: TTableName tableName
  ) throws (1: TIOError io)

  list<TTableDescriptor> getTableDescriptorsByPattern(
    1: optional string regex
    2: required bool includeSysTables
  ) throws (1: TIOError io)

  list<TTableDescriptor> getTableDescriptorsByNamespace(
    1: required string name
  ) throws (1: TIOError io)

  list<TTableName> getTableNamesByPattern(
    1: optional string regex
    2: required bool includeSysTables
  ) throws (1: TIOError io)

  list<TTableName> getTableNamesByNamespace(
    1: required string name
  ) throws (1: TIOError io)

  /** A table with split keys + 1 initial regions. */
  void createTable(
    1: required TTableDescriptor desc
    2: optional list<binary> splitKeys
  ) throws (1: TIOError io)

  void deleteTable(
    1: required TTableName tableName
  ) throws (1: TIOError io)

  void truncateTable(
    1: required TTableName tableName
    2: required bool preserveSplits
  ) throws (1: TIOError io)

  void enableTable(
    1: required TTableName tableName
  ) throws (1: TIOError io)

  void disableTable(
    1: required TTableName tableName
  ) throws (1: TIOError io)

  bool isTableEnabled(
    1: required TTableName tableName
  ) throws (1: TIOError io)

  bool isTableDisabled(
    1: required TTableName tableName
  ) throws (1: TIOError io)

  bool isTableAvailable(
    1: required TTableName tableName
  ) throws (1: TIOError io)

  bool isTableAvailableWithSplit(
    1: required TTableName tableName
    2: optional list<binary> splitKeys
  ) throws (1: TIOError io)

  void addColumnFamily(
    1: required TTableName tableName
    2: required TColumnFamilyDescriptor column
  ) throws (1: TIOError io)

  void deleteColumnFamily(
    1: required TTableName tableName
    2: required binary column
  ) throws (1: TIOError io)

  void modifyColumnFamily(
    1: required TTableName tableName
    2: required TColumnFamilyDescriptor column
  ) throws (1: TIOError io)

  void modifyTable(
    1: required TTableDescriptor desc
  ) throws (1: TIOError io)

  void createNamespace(
    1: required TNamespaceDescriptor namespaceDesc
  ) throws (1: TIOError io)

  void modifyNamespace(
    1: required TNamespaceDescriptor namespaceDesc
  ) throws (1: TIOError io)

  void deleteNamespace(
    1: required string name
  ) throws (1: TIOError io)

  TNamespaceDescriptor getNamespaceDescriptor(
    1: required string name
  ) throws (1: TIOError io)

  list<TNamespaceDescriptor> listNamespaceDescriptors(
  ) throws (1: TIOError io)

  list<string> listNamespaces(
  ) throws (1: TIOError io)

  /** The type of this thrift server. */
  TThriftServerType getThriftServerType()
}
