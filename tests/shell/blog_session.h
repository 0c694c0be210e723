// Seed 003's HBase shell session (the blog table): its writes, then its reads, as the
// shell and cluster tests run them; and the cells of a JSON line the shell printed.
#pragma once

#include <regex>
#include <string>
#include <vector>

namespace testproc {

inline constexpr const char* blog_writes =
    R"(create 'blogtable', 'info','text','comment_title','comment_author','comment_text'
put 'blogtable', '1', 'info:title', 'this is doc title'
put 'blogtable', '1', 'info:author', 'javabloger'
put 'blogtable', '1', 'info:url', 'http://www.javabloger.com/index.php'
put 'blogtable', '2', 'info:title', 'this is doc title2'
put 'blogtable', '2', 'info:author', 'H.E.'
put 'blogtable', '2', 'info:url', 'http://www.javabloger.com/index.html'
put 'blogtable', '1', 'text:', 'what is this doc context ?'
put 'blogtable', '2', 'text:', 'what is this doc context2?'
put 'blogtable', '1', 'comment_title:', 'this is doc comment_title '
put 'blogtable', '1', 'comment_author:', 'javabloger'
put 'blogtable', '1', 'comment_text:', 'this is nice doc'
put 'blogtable', '2', 'comment_title:', 'this is blog comment_title '
put 'blogtable', '2', 'comment_author:', 'H.E.'
put 'blogtable', '2', 'comment_text:', 'this is nice blog'
)";

inline constexpr const char* blog_reads = R"(scan 'blogtable' ,{COLUMNS => ['text:','info:title'] }
scan 'blogtable' , {COLUMNS => 'info:url' , STARTROW => '2'}
get 'blogtable','1'
get 'blogtable','1', {COLUMN => 'info'}
get 'blogtable','1', {COLUMN => 'text'}
get 'blogtable','1', {COLUMN => ['text','info:author']}
)";

// "row column = value" of every cell in a JSON line, in order.
inline std::vector<std::string> cells_of(const std::string& json_line) {
  std::vector<std::string> out;
  std::regex cell("\\{\"row\":\"([^\"]*)\",\"column\":\"([^\"]*)\",\"timestamp\":[0-9]+,\"value\":\"([^\"]*)\"\\}");
  for (std::sregex_iterator it(json_line.begin(), json_line.end(), cell), end; it != end; ++it)
    out.push_back((*it)[1].str() + " " + (*it)[2].str() + " = " + (*it)[3].str());
  return out;
}

}  // namespace testproc
