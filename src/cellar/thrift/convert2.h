// thrift/convert2.h: thrift2's structs (hbase.thrift) to and from cellar's operations.
//
// Each conversion follows HBase's own (ThriftUtilities in hbase-thrift): the same defaults,
// the same meaning of an unset field. What cellar cannot honour (a serialized Java filter,
// per-family time ranges, cell visibility) is refused with UNSUPPORTED naming it, rather
// than ignored.
#pragma once

#include <string>
#include <vector>

#include "THBaseService.h"
#include "cellar/ops.h"
#include "cellar/schema.h"
#include "cellar/status.h"

namespace cellar::thrift {

namespace t2 = apache::hadoop::hbase::thrift2;

result<cellar::get> to_get(const t2::TGet& g);
result<cellar::put> to_put(const t2::TPut& p);
result<cellar::deletion> to_deletion(const t2::TDelete& d);
result<cellar::increment> to_increment(const t2::TIncrement& i);
result<cellar::append> to_append(const t2::TAppend& a);
result<cellar::scan> to_scan(const t2::TScan& s);
result<cellar::row_mutations> to_row_mutations(const t2::TRowMutations& m);
compare_op to_compare_op(t2::TCompareOperator::type op);

t2::TResult to_tresult(const row_result& r);

// HBase's table name as cellar's (cellar/names.h): `t` in the default namespace, else
// `ns:t`. The store checks the parts.
std::string table_name(const t2::TTableName& t);
// The same for a table named by bytes ("t", "default:t" or "ns:t").
std::string table_name(const std::string& t);
// A full name as a TTableName, its namespace always set.
t2::TTableName to_ttable_name(const std::string& table);
t2::TNamespaceDescriptor to_tnamespace(const namespace_descriptor& ns);

// A create: the families and attributes of `d`; range partitions at `split_keys`, or
// `default_partitions` KEY partitions without them.
result<table_descriptor> to_table_descriptor(const t2::TTableDescriptor& d, const std::vector<std::string>& split_keys,
                                             std::uint32_t default_partitions);
result<family_descriptor> to_family_descriptor(const t2::TColumnFamilyDescriptor& f);
t2::TTableDescriptor to_ttable_descriptor(const table_descriptor& d);

}  // namespace cellar::thrift
