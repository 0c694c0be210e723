// resolve_token (cellar/client.h): the login token from a flag, a file or the environment.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cellar/client.h"

namespace cellar::rpc {

result<std::string> resolve_token(const std::string& token, const std::string& token_file) {
  if (!token.empty() && !token_file.empty())
    return status{code::invalid_argument, "give the token once: --token or --token-file, not both"};
  if (!token.empty()) return token;
  if (!token_file.empty()) {
    std::ifstream in(token_file, std::ios::binary);
    if (!in) return status{code::io_error, "cannot read the token file " + token_file + ": " + std::strerror(errno)};
    std::ostringstream all;
    all << in.rdbuf();
    std::string t = all.str();
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ' || t.back() == '\t')) t.pop_back();
    if (t.empty()) return status{code::invalid_argument, "the token file " + token_file + " is empty"};
    return t;
  }
  if (const char* env = std::getenv("CELLAR_TOKEN")) return std::string(env);
  return std::string();
}

}  // namespace cellar::rpc
