// catalog/kv_attributes.h: OceanBase's kv_attributes table option for OBKV-HBase tables.
//
// The option is a JSON string of the form '{"HBase": {"TimeToLive": <seconds>,
// "MaxVersions": <n>}}' (keys case-insensitive, either setting may be left out; seed 000).
// It is read by CREATE TABLE and ALTER TABLE (catalog/ddl.h).
//
// Thread safety: plain functions.
#pragma once

#include <string_view>

#include "cellar/schema.h"
#include "cellar/status.h"

namespace cellar {

// Reads `text` into f.ttl_seconds and f.max_versions, leaving the settings it does not give
// as they were. Errors: INVALID_ARGUMENT naming what is wrong (not JSON, another shape, an
// unknown setting, a value that is not a positive integer).
status apply_kv_attributes(std::string_view text, family_descriptor& f);

}  // namespace cellar
