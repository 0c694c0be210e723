#include "resp.h"

#include <charconv>
#include <cstring>
#include <stdexcept>

namespace loadgen::resp {

namespace {

constexpr std::size_t max_line = 64 * 1024;             // status and error lines, headers
constexpr std::int64_t max_bulk = 512ll * 1024 * 1024;  // redis-server's proto-max-bulk-len
constexpr int max_depth = 16;

[[noreturn]] void malformed(const std::string& what) { throw std::runtime_error("redis: malformed reply: " + what); }

void append_number(std::string& out, std::size_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// The '\r' that ends the line starting at p, or nullptr when its "\r\n" has not come yet.
const char* line_end(const char* p, const char* end) {
  const std::size_t avail = static_cast<std::size_t>(end - p);
  const auto* cr = static_cast<const char*>(std::memchr(p, '\r', avail));
  if (!cr) {
    if (avail > max_line) malformed("a line longer than 64 KiB");
    return nullptr;
  }
  if (cr + 1 == end) return nullptr;
  if (cr[1] != '\n') malformed("'\\r' not followed by '\\n'");
  return cr;
}

std::int64_t integer(const char* b, const char* e) {
  std::int64_t v = 0;
  const auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e) malformed("not an integer: '" + std::string(b, e) + "'");
  return v;
}

// The end of the element at p, or nullptr when it is not all in [p, end).
const char* element(const char* p, const char* end, reply& r, std::vector<std::string_view>* elements, int depth) {
  if (p == end) return nullptr;
  const char* le = line_end(p + 1, end);
  if (!le) return nullptr;
  r.type = *p;
  r.text = {};
  r.n = 0;
  switch (*p) {
    case '+':
    case '-': r.text = {p + 1, static_cast<std::size_t>(le - p - 1)}; return le + 2;
    case ':': r.n = integer(p + 1, le); return le + 2;
    case '$': {
      r.n = integer(p + 1, le);
      if (r.n == -1) return le + 2;
      if (r.n < 0 || r.n > max_bulk) malformed("bulk length " + std::to_string(r.n));
      const char* body = le + 2;
      if (end - body < r.n + 2) return nullptr;
      if (body[r.n] != '\r' || body[r.n + 1] != '\n') malformed("a bulk string not ended by \"\\r\\n\"");
      r.text = {body, static_cast<std::size_t>(r.n)};
      return body + r.n + 2;
    }
    case '*': {
      r.n = integer(p + 1, le);
      if (r.n == -1) return le + 2;
      if (r.n < 0) malformed("array length " + std::to_string(r.n));
      if (depth >= max_depth) malformed("arrays nested deeper than 16");
      const char* q = le + 2;
      reply e;
      for (std::int64_t i = 0; i < r.n; ++i) {
        q = element(q, end, e, nullptr, depth + 1);
        if (!q) return nullptr;
        if (elements && e.type == '$' && e.n >= 0) elements->push_back(e.text);
      }
      return q;
    }
    default: malformed(std::string("type byte '") + *p + "'");
  }
}

}  // namespace

void append_command(std::string& out, const std::string_view* args, std::size_t n) {
  out += '*';
  append_number(out, n);
  out += "\r\n";
  for (std::size_t i = 0; i < n; ++i) {
    out += '$';
    append_number(out, args[i].size());
    out += "\r\n";
    out.append(args[i]);
    out += "\r\n";
  }
}

void append_command(std::string& out, std::initializer_list<std::string_view> args) {
  append_command(out, args.begin(), args.size());
}

std::size_t parse(const char* p, std::size_t len, reply& r, std::vector<std::string_view>* elements) {
  const std::size_t had = elements ? elements->size() : 0;
  const char* e = element(p, p + len, r, elements, 0);
  if (!e) {
    if (elements) elements->resize(had);  // what came of a reply that is not all here
    return 0;
  }
  return static_cast<std::size_t>(e - p);
}

}  // namespace loadgen::resp
