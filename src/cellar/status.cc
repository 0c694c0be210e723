#include "cellar/status.h"

namespace cellar {

std::string_view code_name(code c) noexcept {
  switch (c) {
    case code::ok: return "OK";
    case code::table_not_found: return "TABLE_NOT_FOUND";
    case code::family_not_found: return "FAMILY_NOT_FOUND";
    case code::invalid_argument: return "INVALID_ARGUMENT";
    case code::too_large: return "TOO_LARGE";
    case code::unsupported: return "UNSUPPORTED";
    case code::memory_limit: return "MEMORY_LIMIT";
    case code::already_exists: return "ALREADY_EXISTS";
    case code::not_a_long: return "NOT_A_LONG";
    case code::aborted: return "ABORTED";
    case code::io_error: return "IO_ERROR";
    case code::corruption: return "CORRUPTION";
    case code::internal: return "INTERNAL";
    case code::permission_denied: return "PERMISSION_DENIED";
    case code::unavailable: return "UNAVAILABLE";
    case code::table_disabled: return "TABLE_DISABLED";
    case code::not_found: return "NOT_FOUND";
    case code::conflict: return "CONFLICT";
    case code::not_owner: return "NOT_OWNER";
    case code::table_read_only: return "TABLE_READ_ONLY";
    case code::not_leader: return "NOT_LEADER";
    case code::table_not_disabled: return "TABLE_NOT_DISABLED";
    case code::reshaping: return "RESHAPING";
  }
  return "UNKNOWN";
}

std::string status::to_string() const {
  if (is_ok()) return "OK";
  std::string s(code_name(code_));
  if (!message_.empty()) {
    s += ": ";
    s += message_;
  }
  return s;
}

}  // namespace cellar
