// catalog/ddl_lexer.h: the tokens of the OceanBase DDL subset (catalog/ddl.cc parses them)
// and the two text helpers the lexer and the parser share. Internal to the catalog.
#ifndef CELLAR_CATALOG_DDL_LEXER_H_
#define CELLAR_CATALOG_DDL_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/status.h"

namespace cellar::ddl_detail {

struct token {
  enum class type : std::uint8_t { ident, quoted_ident, number, string, punct, end };
  type t = type::end;
  std::string text;  // identifier as written, decoded string bytes, digits, or the punctuation
  std::size_t line = 1;
  std::size_t col = 1;
};

// "line L, column C: ", the prefix of every DDL error message.
std::string where(std::size_t line, std::size_t col);

// s with ASCII letters in upper case.
std::string upper(std::string_view s);

// The tokens of sql, ending with one token of type end. Errors: invalid_argument, its
// message starting with where() of the token at fault (an unexpected character, an
// unterminated string, X'...' literal, `quoted name` or /* comment, a bad hex literal).
result<std::vector<token>> lex(std::string_view sql);

}  // namespace cellar::ddl_detail

#endif  // CELLAR_CATALOG_DDL_LEXER_H_
