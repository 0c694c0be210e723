// store/ddl_apply.h: DDL statements (catalog/ddl.h) applied to a store through its public
// calls, the same checks and the same single commit path as the embedded API's DDL.
//
// Thread safety: as thread-safe as `store`.
#pragma once

#include <string_view>

#include "catalog/ddl.h"
#include "cellar/status.h"
#include "cellar/store.h"

namespace cellar {

// Applies one statement to the store. CREATE TABLE with TABLEGROUP = g requires g to exist
// (TABLE_NOT_FOUND otherwise, as OceanBase); without the clause a missing group is created
// and, when the family then fails, removed again. CREATE TABLE ... LIKE copies the
// template's family descriptor and its group's partitioning (TABLE_NOT_FOUND or
// FAMILY_NOT_FOUND when the template is missing). DROP TABLEGROUP drops the group and all
// its families, whether the group is enabled or not. Families keep all versions unless
// kv_attributes gives MaxVersions. ALTER TABLE keeps the family's kind and value size.
// TRUNCATE TABLE empties one family (store::truncate_family). SHOW and DESC change
// nothing: they check that what they name exists (DESC: TABLE_NOT_FOUND,
// FAMILY_NOT_FOUND); a client prints their answer from list_tables / describe (the shell
// does: shell/sql.cc).
status execute_ddl(store& s, const ddl_statement& st);

// Parses `sql`, then runs each statement in order, stopping at the first error (earlier
// statements stay applied, as in a MySQL client running a script). A syntax error anywhere
// runs nothing. After `USE db` (db must exist: NOT_FOUND), the table groups the later
// statements name without a database are db's.
status execute_ddl(store& s, std::string_view sql);

}  // namespace cellar
