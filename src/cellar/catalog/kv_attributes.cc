// catalog/kv_attributes.cc: a tiny JSON reader (objects, strings, numbers; other literals
// only to refuse them) and the kv_attributes option read with it (kv_attributes.h).
#include "catalog/kv_attributes.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace cellar {
namespace {

bool ascii_iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// ---------------------------------------------------------------------------------------
// kv_attributes: a tiny JSON reader (objects, strings, numbers; literals only to refuse).

struct json_value {
  enum class type : std::uint8_t { object, string, integer, other };
  type t = type::other;
  std::vector<std::pair<std::string, json_value>> members;
  std::string text;  // string value, or the literal as written for numbers and others
  std::int64_t integer = 0;
  bool integer_overflow = false;
};

class json_reader {
 public:
  explicit json_reader(std::string_view in) : in_(in) {}

  result<json_value> document() {
    auto v = value(0);
    if (!v) return v;
    skip();
    if (i_ != in_.size()) return fail("unexpected text after the JSON value");
    return v;
  }

 private:
  status fail(const std::string& msg) const {
    return {code::invalid_argument, "kv_attributes is not valid JSON at offset " + std::to_string(i_) + ": " + msg};
  }
  void skip() {
    while (i_ < in_.size() && (in_[i_] == ' ' || in_[i_] == '\t' || in_[i_] == '\n' || in_[i_] == '\r')) ++i_;
  }

  result<json_value> value(int depth) {
    if (depth > 16) return fail("nested too deeply");
    skip();
    if (i_ >= in_.size()) return fail("a value is missing");
    const char c = in_[i_];
    json_value v;
    if (c == '{') {
      v.t = json_value::type::object;
      ++i_;
      skip();
      if (i_ < in_.size() && in_[i_] == '}') {
        ++i_;
        return v;
      }
      for (;;) {
        skip();
        if (i_ >= in_.size() || in_[i_] != '"') return fail("an object key must be a \"string\"");
        auto key = string();
        if (!key) return key.error();
        skip();
        if (i_ >= in_.size() || in_[i_] != ':') return fail("':' expected after an object key");
        ++i_;
        auto member = value(depth + 1);
        if (!member) return member;
        v.members.emplace_back(std::move(*key), std::move(*member));
        skip();
        if (i_ < in_.size() && in_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < in_.size() && in_[i_] == '}') {
          ++i_;
          return v;
        }
        return fail("',' or '}' expected in an object");
      }
    }
    if (c == '"') {
      auto s = string();
      if (!s) return s.error();
      v.t = json_value::type::string;
      v.text = std::move(*s);
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t start = i_;
      if (in_[i_] == '-') ++i_;
      if (i_ >= in_.size() || !(in_[i_] >= '0' && in_[i_] <= '9')) return fail("a digit expected");
      if (in_[i_] == '0' && i_ + 1 < in_.size() && in_[i_ + 1] >= '0' && in_[i_ + 1] <= '9')
        return fail("a number must not have leading zeros");
      while (i_ < in_.size() && in_[i_] >= '0' && in_[i_] <= '9') ++i_;
      bool integral = true;
      if (i_ < in_.size() && in_[i_] == '.') {
        integral = false;
        ++i_;
        if (i_ >= in_.size() || !(in_[i_] >= '0' && in_[i_] <= '9')) return fail("a digit expected after '.'");
        while (i_ < in_.size() && in_[i_] >= '0' && in_[i_] <= '9') ++i_;
      }
      if (i_ < in_.size() && (in_[i_] == 'e' || in_[i_] == 'E')) {
        integral = false;
        ++i_;
        if (i_ < in_.size() && (in_[i_] == '+' || in_[i_] == '-')) ++i_;
        if (i_ >= in_.size() || !(in_[i_] >= '0' && in_[i_] <= '9')) return fail("a digit expected in the exponent");
        while (i_ < in_.size() && in_[i_] >= '0' && in_[i_] <= '9') ++i_;
      }
      v.text = std::string(in_.substr(start, i_ - start));
      if (integral) {
        v.t = json_value::type::integer;
        auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), v.integer);
        v.integer_overflow = ec != std::errc();
      }
      return v;
    }
    for (std::string_view lit : {"true", "false", "null"}) {
      if (in_.substr(i_, lit.size()) == lit) {
        i_ += lit.size();
        v.text = std::string(lit);
        return v;
      }
    }
    if (c == '[') return fail("arrays are not expected in kv_attributes");
    return fail(std::string("unexpected character '") + c + "'");
  }

  result<std::string> string() {
    ++i_;  // opening quote
    std::string out;
    for (;;) {
      if (i_ >= in_.size()) return fail("unterminated string");
      const char c = in_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= in_.size()) return fail("unterminated string");
      const char e = in_[i_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > in_.size()) return fail("\\u needs four hex digits");
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            int h = hex_value(in_[i_++]);
            if (h < 0) return fail("\\u needs four hex digits");
            cp = cp * 16 + static_cast<unsigned>(h);
          }
          // Names we look for are ASCII; anything else only needs to stay distinct.
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: return fail(std::string("unknown escape \\") + e);
      }
    }
  }

  std::string_view in_;
  std::size_t i_ = 0;
};

}  // namespace

// Reads '{"HBase": {"TimeToLive": n, "MaxVersions": n}}' into the family.
status apply_kv_attributes(std::string_view text, family_descriptor& f) {
  auto doc = json_reader(text).document();
  if (!doc) return doc.error();
  const status shape{code::invalid_argument,
                     "kv_attributes must be of the form '{\"HBase\": {\"TimeToLive\": <seconds>, "
                     "\"MaxVersions\": <n>}}' (either setting may be left out)"};
  if (doc->t != json_value::type::object || doc->members.size() != 1 ||
      !ascii_iequal(doc->members[0].first, "HBase"))
    return shape;
  const json_value& hbase = doc->members[0].second;
  if (hbase.t != json_value::type::object) return shape;
  bool seen_ttl = false, seen_versions = false;
  for (const auto& [key, v] : hbase.members) {
    const bool is_ttl = ascii_iequal(key, "TimeToLive");
    const bool is_versions = ascii_iequal(key, "MaxVersions");
    if (!is_ttl && !is_versions)
      return {code::invalid_argument, "kv_attributes: unknown HBase setting \"" + key +
                                          "\"; only TimeToLive and MaxVersions are supported"};
    bool& seen = is_ttl ? seen_ttl : seen_versions;
    if (seen) return {code::invalid_argument, "kv_attributes: \"" + key + "\" is given twice"};
    seen = true;
    const char* name = is_ttl ? "TimeToLive" : "MaxVersions";
    if (v.t != json_value::type::integer || v.integer_overflow || v.integer <= 0)
      return {code::invalid_argument, std::string("kv_attributes: ") + name + " must be a positive integer, not " +
                                          (v.t == json_value::type::string ? "\"" + v.text + "\"" : v.text.empty() ? "an object" : v.text)};
    if (is_ttl) {
      f.ttl_seconds = v.integer;
    } else {
      if (v.integer > std::numeric_limits<std::uint32_t>::max())
        return {code::invalid_argument, "kv_attributes: MaxVersions " + v.text + " is too large"};
      f.max_versions = static_cast<std::uint32_t>(v.integer);
    }
  }
  return status::ok();
}

}  // namespace cellar
