#include "cellar/names.h"

namespace cellar {

namespace {

status check_part(std::string_view what, std::string_view part, std::string_view whole) {
  if (part.empty() || part.size() > 128)
    return {code::invalid_argument, std::string(what) + " name in '" + std::string(whole) + "' must be 1 to 128 bytes"};
  for (unsigned char c : part) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok)
      return {code::invalid_argument,
              std::string(what) + " name '" + std::string(part) + "' may only hold letters, digits, '_', '-' and '.'"};
  }
  return status::ok();
}

}  // namespace

std::string table_name::full() const { return ns == default_namespace ? qualifier : ns + ":" + qualifier; }

status check_namespace_name(std::string_view ns) { return check_part("namespace", ns, ns); }

result<table_name> parse_table_name(std::string_view name) {
  table_name out;
  auto colon = name.find(':');
  if (colon == std::string_view::npos) {
    if (auto s = check_part("table", name, name); !s) return s;
    out.ns = std::string(default_namespace);
    out.qualifier = std::string(name);
    return out;
  }
  auto ns = name.substr(0, colon);
  auto q = name.substr(colon + 1);
  if (q.find(':') != std::string_view::npos)
    return status{code::invalid_argument, "table name '" + std::string(name) + "' has more than one ':'"};
  if (auto s = check_part("namespace", ns, name); !s) return s;
  if (auto s = check_part("table", q, name); !s) return s;
  out.ns = std::string(ns);
  out.qualifier = std::string(q);
  return out;
}

std::string canonical_table_name(std::string_view name) {
  auto t = parse_table_name(name);
  return t ? t->full() : std::string(name);
}

}  // namespace cellar
