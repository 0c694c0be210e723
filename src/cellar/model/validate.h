// model/validate.h: the checks every request passes before it reaches a partition.
//
// A request that fails here is refused whole and touches nothing. The checks depend only
// on the request and the table's schema, so they run on the caller's thread.
#pragma once

#include "catalog/catalog.h"
#include "cellar/ops.h"

namespace cellar::detail {

status validate(const table_schema& schema, const batch_op& op);
status validate(const table_schema& schema, const scan& s);

}  // namespace cellar::detail
