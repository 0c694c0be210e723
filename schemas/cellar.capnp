@0x882d4de526922659;
# cellar's wire contract (Cap'n Proto RPC).
#
# A client connects, takes the bootstrap capability `Login`, and calls `login` with the
# server's token (any token when the server has none) to get `Cellar`, which holds every
# operation. Scans return a `Scanner` capability that pages. Every operation has a batched
# form (`batch` takes many actions): each call costs at least one syscall each way, so
# batching is how the RPC path gets fast.
#
# Errors are results, never exceptions: `Error.code` is one of cellar's stable codes
# (include/cellar/status.h; 0 = OK) and `name` its upper-case name ("TABLE_NOT_FOUND"):
#   1 TABLE_NOT_FOUND  2 FAMILY_NOT_FOUND  3 INVALID_ARGUMENT  4 TOO_LARGE  5 UNSUPPORTED
#   6 MEMORY_LIMIT  7 ALREADY_EXISTS  8 NOT_A_LONG  9 ABORTED  10 IO_ERROR  11 CORRUPTION
#   12 INTERNAL  13 PERMISSION_DENIED  14 UNAVAILABLE
#   15 TABLE_DISABLED: the table was disabled (`disableTable`); every read and write of it
#      is refused with this code until `enableTable` (HBase's TableNotEnabledException).
#   16 NOT_FOUND  17 CONFLICT  18 NOT_OWNER
#   19 TABLE_READ_ONLY: a write to a table whose READONLY attribute is true.
#   20 NOT_LEADER: cluster: the replica asked is not its partition's Raft leader; the
#      message names the leader it knows.
#   21 TABLE_NOT_DISABLED: the call needs the table disabled first (`restoreSnapshot`).
#   22 RESHAPING: cluster: the partition is frozen by a split or merge of its table, or was
#      just replaced by one; nothing was applied: send it again.
# A client that meets a code it does not know reads it as INTERNAL.
# Names of tables and families are Text; row keys, qualifiers and values are Data.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("cellar::wire");

struct Error {
  code @0 :UInt16;     # 0 = OK
  name @1 :Text;
  message @2 :Text;
}

# ---- cells and results ----------------------------------------------------------------

struct Cell {
  row @0 :Data;                # unset inside a RowResult: the RowResult's row
  family @1 :Text;
  qualifier @2 :Data;
  timestamp @3 :Int64;
  value @4 :Data;
}

struct RowResult {
  row @0 :Data;
  cells @1 :List(Cell);
  exists @2 :Bool;
  partial @3 :Bool;
  ttls @4 :List(Int64);              # ReadOptions.cellTtls: each cell's ttl_ms, in order
}

# ---- requests (mirror include/cellar/ops.h) ------------------------------------------

const latestTimestamp :Int64 = 9223372036854775807;

struct TimeRange {
  min @0 :Int64 = 0;
  max @1 :Int64 = .latestTimestamp;
}

struct FamilyColumns {
  family @0 :Text;
  qualifiers @1 :List(Data);   # empty: the whole family
}

struct ReadOptions {
  columns @0 :List(FamilyColumns);   # empty: every family
  maxVersions @1 :UInt32 = 1;
  range @2 :TimeRange;
  maxPerFamily @3 :Int64 = -1;
  offsetPerFamily @4 :Int64 = 0;
  maxVersionsGiven @5 :Bool;         # time-series families: limit versions only when set
  filter @6 :Filter;                 # no nodes: no filter
  filterText @7 :Text;               # or the filter in HBase's filter language (not both)
  cellTtls @8 :Bool;                 # scans: fill RowResult.ttls
}

# ---- filters (include/cellar/filter.h) --------------------------------------------------
#
# A filter is a tree; on the wire its nodes are listed in prefix order (a flat list keeps
# any nesting within Cap'n Proto's nesting limit): a `skip` or `whileMatch` node is followed
# by its one child's subtree, a `list` node by its `count` children's subtrees. Filters
# nest at most 100 levels. A bad filter answers INVALID_ARGUMENT.

struct Comparator {
  kind @0 :Kind;
  value @1 :Data;              # the bytes (the pattern for regexString; 8 bytes big-endian for long)
  enum Kind {
    binary @0; binaryPrefix @1; substring @2; regexString @3; null @4; bitAnd @5; bitOr @6; bitXor @7; long @8;
  }
}

struct Filter {
  nodes @0 :List(FilterNode);
}

struct FilterNode {
  union {
    row @0 :CompareSpec;
    family @1 :CompareSpec;
    qualifier @2 :CompareSpec;
    value @3 :CompareSpec;
    prefix @4 :Data;
    columnPrefix @5 :Data;
    multipleColumnPrefix @6 :List(Data);
    columnRange @7 :ColumnRange;
    columnCountGet @8 :Int32;
    columnPagination @9 :ColumnPagination;
    page @10 :Int64;
    singleColumnValue @11 :ColumnCheck;
    singleColumnValueExclude @12 :ColumnCheck;
    columnValue @13 :ColumnCheck;
    dependentColumn @14 :DependentColumn;
    firstKeyOnly @15 :Void;
    keyOnly @16 :Bool;                 # lenAsVal
    inclusiveStop @17 :Data;
    timestamps @18 :Timestamps;
    randomRow @19 :Float32;            # the chance
    skip @20 :Void;
    whileMatch @21 :Void;
    list @22 :FilterList;
    multiRowRange @23 :List(RowRange);
    fuzzyRow @24 :List(FuzzyKey);
  }

  struct CompareSpec {
    op @0 :CompareOp;
    comparator @1 :Comparator;
  }
  struct ColumnRange {
    min @0 :Data;                      # empty: unbounded
    minInclusive @1 :Bool = true;
    max @2 :Data;
    maxInclusive @3 :Bool;
  }
  struct ColumnPagination {
    limit @0 :Int32;
    offset @1 :Int32;
    columnOffset @2 :Data;
    hasColumnOffset @3 :Bool;
  }
  struct ColumnCheck {                 # SingleColumnValue(Exclude)Filter, ColumnValueFilter
    family @0 :Data;
    qualifier @1 :Data;
    op @2 :CompareOp;
    comparator @3 :Comparator;
    filterIfMissing @4 :Bool;
    latestVersionOnly @5 :Bool = true;
  }
  struct DependentColumn {
    family @0 :Data;
    qualifier @1 :Data;
    dropDependentColumn @2 :Bool;
    op @3 :CompareOp = noOp;
    comparator @4 :Comparator;
    hasComparator @5 :Bool;
  }
  struct Timestamps {
    timestamps @0 :List(Int64);
    canHint @1 :Bool;
  }
  struct FilterList {
    mustPassOne @0 :Bool;              # false: MUST_PASS_ALL
    count @1 :UInt32;
  }
  struct RowRange {
    start @0 :Data;
    startInclusive @1 :Bool = true;
    stop @2 :Data;
    stopInclusive @3 :Bool;
  }
  struct FuzzyKey {
    key @0 :Data;
    mask @1 :Data;                     # per byte: 0 fixed, 1 any
  }
}

struct Put {
  row @0 :Data;
  timestamp @1 :Int64 = .latestTimestamp;
  entries @2 :List(Entry);
  ttlMs @3 :Int64;
  hasTtl @4 :Bool;
  struct Entry {
    family @0 :Text;
    qualifier @1 :Data;
    timestamp @2 :Int64 = .latestTimestamp;
    value @3 :Data;
  }
}

struct Delete {
  row @0 :Data;
  timestamp @1 :Int64 = .latestTimestamp;
  entries @2 :List(Entry);     # empty: the whole row
  enum Scope { family @0; familyVersion @1; columnLatest @2; columnVersion @3; columns @4; }
  struct Entry {
    scope @0 :Scope;
    family @1 :Text;
    qualifier @2 :Data;
    timestamp @3 :Int64;
  }
}

struct Get {
  row @0 :Data;
  options @1 :ReadOptions;
  existsOnly @2 :Bool;
}

struct Increment {
  row @0 :Data;
  entries @1 :List(Entry);
  ttlMs @2 :Int64;
  hasTtl @3 :Bool;
  returnResults @4 :Bool = true;
  struct Entry {
    family @0 :Text;
    qualifier @1 :Data;
    amount @2 :Int64;
  }
}

struct Append {
  row @0 :Data;
  entries @1 :List(Entry);
  ttlMs @2 :Int64;
  hasTtl @3 :Bool;
  returnResults @4 :Bool = true;
  struct Entry {
    family @0 :Text;
    qualifier @1 :Data;
    value @2 :Data;
  }
}

struct Mutation {
  union {
    put @0 :Put;
    delete @1 :Delete;
  }
}

struct RowMutations {
  row @0 :Data;
  mutations @1 :List(Mutation);
}

enum CompareOp { less @0; lessOrEqual @1; equal @2; notEqual @3; greaterOrEqual @4; greater @5; noOp @6; }

struct CheckAndMutate {
  row @0 :Data;
  family @1 :Text;
  qualifier @2 :Data;
  op @3 :CompareOp;
  expected @4 :Data;
  hasExpected @5 :Bool;        # false: pass iff the column is absent or empty
  range @6 :TimeRange;
  mutation @7 :RowMutations;
  # HBase 2.4's ifMatches(filter): the check passes iff a get of the row with this filter
  # finds a cell (family, qualifier, op and expected are then unused).
  filter @8 :Filter;
  filterText @9 :Text;
}

struct Action {
  union {
    get @0 :Get;
    put @1 :Put;
    delete @2 :Delete;
    increment @3 :Increment;
    append @4 :Append;
    rowMutations @5 :RowMutations;
    checkAndMutate @6 :CheckAndMutate;
  }
}

struct ActionResult {
  error @0 :Error;
  row @1 :RowResult;
  processed @2 :Bool;          # checkAndMutate: the check passed
}

struct Scan {
  start @0 :Data;
  startInclusive @1 :Bool = true;
  stop @2 :Data;
  stopInclusive @3 :Bool = false;
  reversed @4 :Bool;
  limit @5 :Int64 = -1;
  batch @6 :Int64 = -1;
  maxResultSize @7 :Int64 = -1;
  allowPartialResults @8 :Bool;
  caching @9 :Int64 = 256;
  options @10 :ReadOptions;
}

# ---- schema ----------------------------------------------------------------------------

# An HBase setting or METADATA entry of a family or table, as the HBase shell names it
# (include/cellar/schema.h: family_descriptor::attributes).
struct Attribute {
  name @0 :Text;
  value @1 :Text;
}

struct FamilyDescriptor {
  name @0 :Text;
  maxVersions @1 :UInt32;      # 0: keep all
  ttlSeconds @2 :Int64;        # 0: none
  maxValueBytes @3 :UInt64;
  timeSeries @4 :Bool;
  minVersions @5 :UInt32;      # HBase MIN_VERSIONS: the TTL never removes the newest n versions
  attributes @6 :List(Attribute);
}

struct PartitionSpec {
  enum Method { none @0; key @1; keyPrefix @2; range @3; }
  method @0 :Method;
  partitions @1 :UInt32 = 1;
  prefixBytes @2 :UInt32;
  bounds @3 :List(Data);
}

struct TableDescriptor {
  name @0 :Text;
  partitioning @1 :PartitionSpec;
  families @2 :List(FamilyDescriptor);
  attributes @3 :List(Attribute);  # READONLY, MAX_FILESIZE, DURABILITY, ..., METADATA
}

struct SnapshotStats {
  generation @0 :UInt64;
  changes @1 :UInt64;
  bytes @2 :UInt64;
  seconds @3 :Float64;
}

struct TableStats {
  cells @0 :UInt64;
  bytes @1 :UInt64;
  cellsPerPartition @2 :List(UInt64);
}

# What a store holds and has done (include/cellar/summary.h): the status page's figures.
struct Summary {
  enum Durability { snapshot @0; log @1; logSync @2; }
  version @0 :Text;
  directory @1 :Text;              # empty: memory only
  durability @2 :Durability;
  memoryUsedBytes @3 :UInt64;
  memoryLimitBytes @4 :UInt64;     # 0: unlimited
  snapshots @5 :UInt64;            # completed since the store opened
  hasLastSnapshot @6 :Bool;
  lastSnapshot @7 :SnapshotStats;
  lastSnapshotUnixMs @8 :Int64;
  logGeneration @9 :UInt64;        # 0: no redo log
  logRecords @10 :UInt64;
  logBytes @11 :UInt64;
  logSyncs @12 :UInt64;
  recoveryCellsLoaded @13 :UInt64;
  recoveryLogRecords @14 :UInt64;
  recoverySeconds @15 :Float64;
  connections @16 :Int64;          # client connections open on the server
  tables @17 :List(TableSummary);  # by name
  cluster @18 :Text;               # the nodes, their partitions and the master; empty: not a cluster
  clusterLiveNodes @19 :List(Text);  # "id address" of each node registered now (cluster)
  clusterDownNodes @20 :List(Text);  # ids of the nodes the placement map names that are not
  struct TableSummary {
    descriptor @0 :TableDescriptor;
    stats @1 :TableStats;
  }
}

# ---- capabilities ----------------------------------------------------------------------

interface Login {
  login @0 (token :Text) -> (cellar :Cellar, error :Error);
}

interface Cellar {
  # Data: one result per action, in order (see table::batch in include/cellar/store.h).
  # noForward (cluster; default false): the node answers NOT_OWNER for the actions of
  # partitions it does not own instead of forwarding them to their owner (docs/cluster.md §4).
  batch @0 (table :Text, actions :List(Action), noForward :Bool)
      -> (results :List(ActionResult), error :Error);
  # With firstCount > 0 the reply carries up to that many results and `done`; the scanner
  # is then set only if more results follow (HBase's open-scanner call with numberOfRows).
  # partitions (cluster; empty = all): the scan visits only these of the table's
  # partitions (a number out of range: INVALID_ARGUMENT). noForward (cluster): the node
  # answers NOT_OWNER if another node owns a partition the scan would visit, instead of
  # forwarding its pages. filterEnd: on the last page (done), where a filter ended the
  # scan, if one did (docs/cluster.md §4).
  scan @1 (table :Text, scan :Scan, firstCount :UInt32, partitions :List(UInt32), noForward :Bool)
      -> (scanner :Scanner, error :Error, results :List(RowResult), done :Bool, filterEnd :ScanEnd);

  # Schema: one OceanBase DDL statement (CREATE TABLEGROUP, CREATE TABLE g$f ..., DROP ...).
  ddl @2 (statement :Text) -> (error :Error);
  # HBase-style create: hbaseDefaults gives families without maxVersions one version.
  createTable @3 (descriptor :TableDescriptor, hbaseDefaults :Bool) -> (error :Error);
  alterFamily @4 (table :Text, family :FamilyDescriptor) -> (error :Error);
  dropFamily @5 (table :Text, family :Text) -> (error :Error);
  dropTable @6 (table :Text) -> (error :Error);
  truncateTable @7 (table :Text) -> (error :Error);

  # Admin.
  listTables @8 () -> (tables :List(Text));
  describe @9 (table :Text) -> (descriptor :TableDescriptor, error :Error);
  snapshot @10 () -> (stats :SnapshotStats, error :Error);
  stats @11 (table :Text) -> (stats :TableStats, error :Error);

  # Table state (HBase's disable / enable / is_enabled): a disabled table answers every
  # read and write with TABLE_DISABLED until enabled; the state survives a restart.
  # Disabling a disabled table (enabling an enabled one) does nothing.
  disableTable @12 (table :Text) -> (error :Error);
  enableTable @13 (table :Text) -> (error :Error);
  isTableEnabled @14 (table :Text) -> (enabled :Bool, error :Error);

  # Every table's description and counts and the store-wide figures, as the server's
  # status page shows them.
  summary @15 () -> (summary :Summary, error :Error);

  # HBase's alter of table attributes: removes each attribute named in `unset` (one not set:
  # INVALID_ARGUMENT), then sets each of `set`, checked as at createTable.
  alterTable @16 (table :Text, set :List(Attribute), unset :List(Text)) -> (error :Error);

  # Named snapshots, their files and bulk loads (include/cellar/backup.h). Directories are
  # paths on the server's machine.
  snapshotTable @17 (table :Text, name :Text) -> (error :Error);
  # Snapshots of tables matching tableRegex named to match nameRegex (RE2; empty: any).
  listSnapshots @18 (tableRegex :Text, nameRegex :Text) -> (snapshots :List(SnapshotInfo), error :Error);
  deleteSnapshot @19 (name :Text) -> (error :Error);
  # The table must be disabled: TABLE_NOT_DISABLED otherwise.
  restoreSnapshot @20 (name :Text) -> (error :Error);
  cloneSnapshot @21 (name :Text, table :Text) -> (error :Error);
  exportSnapshot @22 (name :Text, dir :Text) -> (error :Error);
  importSnapshot @23 (dir :Text) -> (snapshot :SnapshotInfo, error :Error);
  bulkLoad @24 (table :Text, dir :Text) -> (stats :BulkLoadStats, error :Error);

  # HBase's namespaces (include/cellar/store.h: create_namespace ... list_namespace_tables).
  createNamespace @25 (descriptor :Namespace) -> (error :Error);
  dropNamespace @26 (name :Text) -> (error :Error);
  alterNamespace @27 (name :Text, set :List(Attribute), unset :List(Text)) -> (error :Error);
  describeNamespace @28 (name :Text) -> (descriptor :Namespace, error :Error);
  listNamespaces @29 () -> (namespaces :List(Namespace), error :Error);
  listNamespaceTables @30 (name :Text) -> (tables :List(Text), error :Error);

  # HBase's list_regions, split and merge_region (store.h: list_regions, split_region,
  # merge_regions).
  listRegions @31 (table :Text) -> (regions :List(Region), error :Error);
  splitRegion @32 (table :Text, key :Data) -> (error :Error);
  mergeRegions @33 (table :Text, index :UInt32) -> (error :Error);
  # HBase's split of a region or of a whole table (store.h: split_partition, split_table).
  # With byIndex, partition `index` is split at `key`, or (key empty) at its middle row;
  # without, every partition with at least two rows is split at its middle row and
  # `splits` says how many were. A server older than this method answers it as
  # unimplemented, which the client reports as UNSUPPORTED.
  splitRegions @34 (table :Text, byIndex :Bool, index :UInt32, key :Data) -> (splits :UInt32, error :Error);
}

struct SnapshotInfo {
  name @0 :Text;
  table @1 :Text;
  createdUnixMs @2 :Int64;
  partitions @3 :UInt32;
  cells @4 :UInt64;
  bytes @5 :UInt64;
}

struct BulkLoadStats {
  partitions @0 :UInt32;
  cells @1 :UInt64;
  bytes @2 :UInt64;
}

struct Namespace {
  name @0 :Text;
  properties @1 :List(Attribute);
}

# One partition (include/cellar/store.h: region_info).
struct Region {
  index @0 :UInt32;
  startKey @1 :Data;
  endKey @2 :Data;
  node @3 :Text;
  cells @4 :UInt64;
  bytes @5 :UInt64;
}

interface Scanner {
  # Up to `count` results; `done` once the scan has nothing more (with `filterEnd`, as
  # in Cellar.scan).
  next @0 (count :UInt32) -> (results :List(RowResult), done :Bool, error :Error, filterEnd :ScanEnd);
}

# Where a filter (a WhileMatchFilter that met a row it rejects, ...) ended a scan: no row
# after `row` in scan direction belongs to it, from any partition; `beforeAll`: no row at
# all does. Set on a scan's last page only; unset: no filter ended it. A client that merges
# the scans of several nodes (each over its own partitions) drops the rows beyond the
# earliest end, as a node's scanner does across its partitions.
struct ScanEnd {
  row @0 :Data;
  beforeAll @1 :Bool;
}

# ---- frames: the lean data path ---------------------------------------------------------
#
# The same port also speaks a lighter protocol for data calls. A connection that starts
# with the eight bytes "CELLARF1" (never the start of a Cap'n Proto message: read as a
# segment count it is far above capnp's limit) carries, each way, a sequence of Cap'n
# Proto messages in the standard stream framing: a `Request` per message from the client,
# a `Reply` per message from the server. There are no capabilities, promises or Finish
# messages: a call costs one message each way, which is what matters when the work of a
# call is a few microseconds (docs/benchmarks.md). Everything else (DDL, admin, paging
# scanners) stays on the RPC interface above.
#
# The server answers the eight bytes with the same eight bytes, before any reply (an
# RPC-only server answers with an Abort message instead). The first request must be
# `login`. Replies carry the request's id and may come in
# another order than the requests: a request answered in place can overtake one that
# waits at a busy partition. Calls to one partition run in the order they were sent, as
# on the RPC path (docs/concurrency.md; docs/semantics.md §5).
struct Request {
  id @0 :UInt64;
  union {
    login @1 :Text;            # the server's token (any, when the server has none)
    batch @2 :BatchRequest;
    scan @3 :ScanRequest;
  }
}

struct BatchRequest {
  table @0 :Text;
  actions @1 :List(Action);
  noForward @2 :Bool;  # as in Cellar.batch: NOT_OWNER instead of forwarding (cluster)
}

# One page: up to `count` (1-10000) results of the scan. To go on, scan again from after
# the last row.
struct ScanRequest {
  table @0 :Text;
  scan @1 :Scan;
  count @2 :UInt32;
  partitions @3 :List(UInt32);  # as in Cellar.scan (cluster; empty = all)
  noForward @4 :Bool;           # as in Cellar.scan: NOT_OWNER instead of forwarding (cluster)
}

struct Reply {
  id @0 :UInt64;
  error @1 :Error;                  # of the call as a whole; per action in `results`
  results @2 :List(ActionResult);   # batch: one per action, in order
  rows @3 :List(RowResult);         # scan
  done @4 :Bool;                    # scan: true when nothing follows `rows`
  filterEnd @5 :ScanEnd;            # scan, when done: where a filter ended it (as in Cellar.scan)
}
