// admin/row_files.cc: cellar-admin's row file formats.
#include "admin/row_files.h"

#include <nlohmann/json.hpp>

#include <charconv>

namespace cellar::admin {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";
constexpr char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

status bad(std::string what) { return {code::invalid_argument, std::move(what)}; }

}  // namespace

result<row_format> parse_format(std::string_view name) {
  if (name == "tsv") return row_format::tsv;
  if (name == "jsonl") return row_format::jsonl;
  return bad("unknown format '" + std::string(name) + "' (tsv or jsonl)");
}

std::string escape(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char c : bytes) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c <= 0x7e) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(hex_digits[c >> 4]);
      out.push_back(hex_digits[c & 15]);
    }
  }
  return out;
}

std::optional<std::string> unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '\\') {
      out.push_back('\\');
      ++i;
    } else if (i + 3 < text.size() && text[i + 1] == 'x' && hex_value(text[i + 2]) >= 0 &&
               hex_value(text[i + 3]) >= 0) {
      out.push_back(static_cast<char>(hex_value(text[i + 2]) * 16 + hex_value(text[i + 3])));
      i += 3;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::string base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t(std::uint8_t(bytes[i])) << 16) |
                            (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) | std::uint8_t(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(b64_digits[(v >> (6 * k)) & 63]);
  }
  if (i < bytes.size()) {
    std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out.push_back(b64_digits[(v >> 18) & 63]);
    out.push_back(b64_digits[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? b64_digits[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> unbase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else {
        if (pad) return std::nullopt;
        v[k] = b64_value(c);
        if (v[k] < 0) return std::nullopt;
      }
    }
    const std::uint32_t x =
        (std::uint32_t(v[0]) << 18) | (std::uint32_t(v[1]) << 12) | (std::uint32_t(v[2]) << 6) | std::uint32_t(v[3]);
    out.push_back(static_cast<char>(x >> 16));
    if (pad < 2) out.push_back(static_cast<char>((x >> 8) & 255));
    if (pad < 1) out.push_back(static_cast<char>(x & 255));
  }
  return out;
}

std::string format_cell(const cell& c, row_format f) {
  if (f == row_format::tsv) {
    std::string out = escape(c.row) + "\t" + c.family + ":" + escape(c.qualifier) + "\t" + std::to_string(c.timestamp) +
                      "\t" + escape(c.value);
    if (c.ttl_ms != 0) out += "\t" + std::to_string(c.ttl_ms);
    return out;
  }
  nlohmann::ordered_json j;
  j["row"] = base64(c.row);
  j["family"] = c.family;
  j["qualifier"] = base64(c.qualifier);
  j["timestamp"] = c.timestamp;
  j["value"] = base64(c.value);
  if (c.ttl_ms != 0) j["ttl"] = c.ttl_ms;
  return j.dump();
}

result<cell> parse_cell(std::string_view line, row_format f) {
  cell c;
  if (f == row_format::tsv) {
    auto fields = split(line, '\t');
    if (fields.size() != 4 && fields.size() != 5)
      return bad("expected 4 or 5 tab-separated fields (row, family:qualifier, timestamp, value[, ttl]), found " +
                 std::to_string(fields.size()));
    if (fields.size() == 5) {
      const auto* end = fields[4].data() + fields[4].size();
      auto [p, ec] = std::from_chars(fields[4].data(), end, c.ttl_ms);
      if (ec != std::errc() || p != end || c.ttl_ms == 0)
        return bad("the cell TTL '" + std::string(fields[4]) + "' is not a non-zero number");
    }
    auto row = unescape(fields[0]);
    if (!row) return bad("a malformed escape in the row");
    const auto colon = fields[1].find(':');
    if (colon == std::string_view::npos) return bad("the column '" + std::string(fields[1]) + "' has no ':'");
    c.family = std::string(fields[1].substr(0, colon));
    auto q = unescape(fields[1].substr(colon + 1));
    if (!q) return bad("a malformed escape in the qualifier");
    auto v = unescape(fields[3]);
    if (!v) return bad("a malformed escape in the value");
    const auto* end = fields[2].data() + fields[2].size();
    auto [p, ec] = std::from_chars(fields[2].data(), end, c.timestamp);
    if (ec != std::errc() || p != end) return bad("the timestamp '" + std::string(fields[2]) + "' is not a number");
    c.row = std::move(*row);
    c.qualifier = std::move(*q);
    c.value = std::move(*v);
  } else {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    for (const char* k : {"row", "family", "qualifier", "value"})
      if (!j.contains(k) || !j[k].is_string()) return bad(std::string("no string field \"") + k + "\"");
    if (!j.contains("timestamp") || !j["timestamp"].is_number_integer()) return bad("no integer field \"timestamp\"");
    auto row = unbase64(j["row"].get<std::string>());
    auto q = unbase64(j["qualifier"].get<std::string>());
    auto v = unbase64(j["value"].get<std::string>());
    if (!row || !q || !v) return bad("a field that is not base64");
    c.row = std::move(*row);
    c.family = j["family"].get<std::string>();
    c.qualifier = std::move(*q);
    c.value = std::move(*v);
    c.timestamp = j["timestamp"].get<std::int64_t>();
    if (j.contains("ttl")) {
      if (!j["ttl"].is_number_integer() || j["ttl"].get<std::int64_t>() == 0)
        return bad("the field \"ttl\" is not a non-zero integer");
      c.ttl_ms = j["ttl"].get<std::int64_t>();
    }
  }
  if (c.row.empty()) return bad("an empty row key");
  if (c.family.empty()) return bad("an empty family");
  return c;
}

result<tsv_columns> parse_columns(std::string_view spec) {
  tsv_columns out;
  bool row = false;
  auto parts = split(spec, ',');
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (p == "HBASE_ROW_KEY") {
      if (row) return bad("HBASE_ROW_KEY appears twice in --columns");
      row = true;
      out.row = i;
    } else if (p == "HBASE_TS_KEY") {
      if (out.ts) return bad("HBASE_TS_KEY appears twice in --columns");
      out.ts = i;
    } else if (p.empty()) {
      return bad("--columns has an empty entry");
    } else {
      const auto colon = p.find(':');
      tsv_columns::column c{i, std::string(p.substr(0, colon)),
                            colon == std::string_view::npos ? std::string() : std::string(p.substr(colon + 1))};
      if (c.family.empty()) return bad("--columns entry '" + std::string(p) + "' has no family");
      out.columns.push_back(std::move(c));
    }
  }
  if (!row) return bad("--columns must name HBASE_ROW_KEY");
  if (out.columns.empty()) return bad("--columns names no FAMILY:QUALIFIER");
  out.fields = parts.size();
  return out;
}

std::vector<std::string_view> split(std::string_view line, char separator) {
  std::vector<std::string_view> out;
  std::size_t from = 0;
  for (;;) {
    const auto at = line.find(separator, from);
    if (at == std::string_view::npos) {
      out.push_back(line.substr(from));
      return out;
    }
    out.push_back(line.substr(from, at - from));
    from = at + 1;
  }
}

}  // namespace cellar::admin
