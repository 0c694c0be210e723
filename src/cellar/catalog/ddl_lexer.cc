// catalog/ddl_lexer.cc: the lexer of the OceanBase DDL subset (see ddl_lexer.h).
#include "catalog/ddl_lexer.h"

namespace cellar::ddl_detail {

std::string where(std::size_t line, std::size_t col) {
  return "line " + std::to_string(line) + ", column " + std::to_string(col) + ": ";
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

namespace {

bool is_ident_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         c >= 0x80;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class lexer {
 public:
  explicit lexer(std::string_view in) : in_(in) {}

  result<std::vector<token>> run() {
    std::vector<token> out;
    for (;;) {
      if (auto s = skip_blanks(); !s) return s;
      token tk;
      tk.line = line_;
      tk.col = col();
      if (i_ >= in_.size()) {
        out.push_back(tk);
        return out;
      }
      const char c = in_[i_];
      if ((c == 'x' || c == 'X') && i_ + 1 < in_.size() && in_[i_ + 1] == '\'') {
        // X'4142': a hexadecimal byte string.
        advance(2);
        std::string hex;
        while (i_ < in_.size() && in_[i_] != '\'') hex += in_[i_], advance(1);
        if (i_ >= in_.size()) return error(tk, "unterminated X'...' literal");
        advance(1);
        if (hex.size() % 2 != 0) return error(tk, "X'...' needs an even number of hex digits");
        tk.t = token::type::string;
        for (std::size_t k = 0; k < hex.size(); k += 2) {
          int hi = hex_value(hex[k]), lo = hex_value(hex[k + 1]);
          if (hi < 0 || lo < 0) return error(tk, "X'...' holds a character that is not a hex digit");
          tk.text += static_cast<char>(hi * 16 + lo);
        }
      } else if (c == '0' && i_ + 1 < in_.size() && (in_[i_ + 1] == 'x' || in_[i_ + 1] == 'X') && i_ + 2 < in_.size() &&
                 hex_value(in_[i_ + 2]) >= 0) {
        // 0x4142: also a byte string in MySQL.
        advance(2);
        std::string hex;
        while (i_ < in_.size() && hex_value(in_[i_]) >= 0) hex += in_[i_], advance(1);
        if (hex.size() % 2 != 0) hex.insert(hex.begin(), '0');
        tk.t = token::type::string;
        for (std::size_t k = 0; k < hex.size(); k += 2)
          tk.text += static_cast<char>(hex_value(hex[k]) * 16 + hex_value(hex[k + 1]));
      } else if (c >= '0' && c <= '9') {
        tk.t = token::type::number;
        while (i_ < in_.size() && in_[i_] >= '0' && in_[i_] <= '9') tk.text += in_[i_], advance(1);
        if (i_ < in_.size() && is_ident_char(static_cast<unsigned char>(in_[i_])))
          return error(tk, "a name must not start with a digit here");
      } else if (is_ident_char(static_cast<unsigned char>(c))) {
        tk.t = token::type::ident;
        while (i_ < in_.size() && is_ident_char(static_cast<unsigned char>(in_[i_]))) tk.text += in_[i_], advance(1);
      } else if (c == '`') {
        tk.t = token::type::quoted_ident;
        advance(1);
        for (;;) {
          if (i_ >= in_.size()) return error(tk, "unterminated `quoted name`");
          if (in_[i_] == '`') {
            if (i_ + 1 < in_.size() && in_[i_ + 1] == '`') {
              tk.text += '`';
              advance(2);
              continue;
            }
            advance(1);
            break;
          }
          tk.text += in_[i_];
          advance(1);
        }
        if (tk.text.empty()) return error(tk, "empty `quoted name`");
      } else if (c == '\'' || c == '"') {
        tk.t = token::type::string;
        if (auto s = read_string(c, tk); !s) return s;
      } else if (c == '(' || c == ')' || c == ',' || c == ';' || c == '=' || c == '.' ||
                 std::string_view("*+-/%<>!&|^~?@:{}[]").find(c) != std::string_view::npos) {
        // Punctuation the subset never uses still makes a token, so that a statement it
        // does not run (SELECT * ...) is refused by name, and a stray '*' by the parser.
        tk.t = token::type::punct;
        tk.text = std::string(1, c);
        advance(1);
      } else {
        return error(tk, std::string("unexpected character '") + c + "'");
      }
      out.push_back(std::move(tk));
    }
  }

 private:
  std::size_t col() const { return i_ - line_start_ + 1; }
  void advance(std::size_t n) {
    for (std::size_t k = 0; k < n && i_ < in_.size(); ++k) {
      if (in_[i_] == '\n') {
        ++line_;
        line_start_ = i_ + 1;
      }
      ++i_;
    }
  }
  static status error(const token& tk, const std::string& msg) {
    return {code::invalid_argument, where(tk.line, tk.col) + msg};
  }

  status skip_blanks() {
    for (;;) {
      while (i_ < in_.size() && (in_[i_] == ' ' || in_[i_] == '\t' || in_[i_] == '\n' || in_[i_] == '\r' ||
                                 in_[i_] == '\f' || in_[i_] == '\v'))
        advance(1);
      if (i_ >= in_.size()) return status::ok();
      const bool dash_comment =
          in_.substr(i_, 2) == "--" && (i_ + 2 >= in_.size() || in_[i_ + 2] == ' ' || in_[i_ + 2] == '\t' ||
                                        in_[i_ + 2] == '\n' || in_[i_ + 2] == '\r');
      if (dash_comment || in_[i_] == '#') {
        while (i_ < in_.size() && in_[i_] != '\n') advance(1);
        continue;
      }
      if (in_.substr(i_, 2) == "/*") {
        token tk;
        tk.line = line_;
        tk.col = col();
        auto end = in_.find("*/", i_ + 2);
        if (end == std::string_view::npos) return error(tk, "unterminated /* comment");
        advance(end + 2 - i_);
        continue;
      }
      return status::ok();
    }
  }

  // MySQL string literal: backslash escapes, and a doubled quote stands for itself.
  status read_string(char quote, token& tk) {
    advance(1);
    for (;;) {
      if (i_ >= in_.size()) return error(tk, "unterminated string");
      char c = in_[i_];
      if (c == quote) {
        if (i_ + 1 < in_.size() && in_[i_ + 1] == quote) {
          tk.text += quote;
          advance(2);
          continue;
        }
        advance(1);
        return status::ok();
      }
      if (c == '\\' && i_ + 1 < in_.size()) {
        char e = in_[i_ + 1];
        switch (e) {
          case '0': tk.text += '\0'; break;
          case 'b': tk.text += '\b'; break;
          case 'n': tk.text += '\n'; break;
          case 'r': tk.text += '\r'; break;
          case 't': tk.text += '\t'; break;
          case 'Z': tk.text += '\x1A'; break;
          case '%': tk.text += "\\%"; break;
          case '_': tk.text += "\\_"; break;
          default: tk.text += e; break;
        }
        advance(2);
        continue;
      }
      tk.text += c;
      advance(1);
    }
  }

  std::string_view in_;
  std::size_t i_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
};

}  // namespace

result<std::vector<token>> lex(std::string_view sql) { return lexer(sql).run(); }

}  // namespace cellar::ddl_detail
