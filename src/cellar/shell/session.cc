// shell/session.cc: reading lines into SQL statements and shell commands, running them
// (shell/command.h) and printing each outcome as HBase / MySQL text or as one JSON object.
#include "shell/session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "shell/command.h"

namespace cellar {

namespace {

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

// SQL keywords that are no HBase shell command start SQL whatever follows; those that are
// also commands (create 't', 'f'; delete 't', 'r', 'c'; desc 't') start SQL only when a
// bare word follows (CREATE TABLE, DELETE FROM, DESC g$f), as a shell command's first
// argument is always quoted.
bool starts_sql(std::string_view line) {
  std::size_t i = line.find_first_not_of(" \t\r");
  if (i == std::string_view::npos) return false;
  std::size_t j = i;
  while (j < line.size() && is_word_char(line[j])) ++j;
  if (j == i) return false;
  const std::string word = shell::lower(line.substr(i, j - i));
  const std::size_t k = line.find_first_not_of(" \t\r", j);
  const char next = k == std::string_view::npos ? '\0' : line[k];
  if (j < line.size() && next != '\0' && k == j && next != ';') return false;  // "show_filters", "get(": not a keyword
  static const std::string_view sql_only[] = {"select",   "insert",  "update", "replace", "use",   "set",
                                              "show",     "explain", "rename", "begin",   "start", "commit",
                                              "rollback", "lock",    "unlock", "call",    "load",  "analyze",
                                              "optimize", "purge",   "kill",   "with"};
  static const std::string_view shared[] = {"create",   "drop",   "alter", "truncate", "desc",
                                            "describe", "delete", "grant", "revoke",   "flush"};
  if (std::find(std::begin(sql_only), std::end(sql_only), word) != std::end(sql_only)) return true;
  if (std::find(std::begin(shared), std::end(shared), word) != std::end(shared))
    return (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || next == '_' || next == '`';
  return false;
}

shell_session::shell_session(connection& c, std::ostream& out, session_options o)
    : conn_(c), out_(out), opts_(std::move(o)) {}

void shell_session::finish() {
  if (pending_sql_.empty()) return;
  std::string sql;
  sql.swap(pending_sql_);
  run_sql(sql);
}

bool shell_session::feed(std::string_view line) {
  if (!pending_sql_.empty() || starts_sql(line)) {
    pending_sql_ += line;
    pending_sql_ += '\n';
    // A statement ends at a `;` outside quotes and comments.
    bool in_single = false, in_double = false, in_back = false;
    for (std::size_t i = 0; i < pending_sql_.size(); ++i) {
      char ch = pending_sql_[i];
      if (ch == '\\' && (in_single || in_double)) {
        ++i;
        continue;
      }
      if (!in_double && !in_back && ch == '\'')
        in_single = !in_single;
      else if (!in_single && !in_back && ch == '"')
        in_double = !in_double;
      else if (!in_single && !in_double && ch == '`')
        in_back = !in_back;
      else if (!in_single && !in_double && !in_back && ch == '-' && i + 1 < pending_sql_.size() &&
               pending_sql_[i + 1] == '-') {
        while (i < pending_sql_.size() && pending_sql_[i] != '\n') ++i;
      } else if (!in_single && !in_double && !in_back && ch == ';') {
        std::string sql = pending_sql_.substr(0, i + 1);
        std::string rest = pending_sql_.substr(i + 1);
        pending_sql_.clear();
        run_sql(sql);
        if (rest.find_first_not_of(" \t\r\n") != std::string::npos)
          return feed(rest.substr(0, rest.find_last_not_of("\n") + 1));
        return true;
      }
    }
    return true;
  }
  auto trimmed = line.substr(std::min(line.size(), line.find_first_not_of(" \t\r")));
  if (trimmed == "exit" || trimmed == "quit") return false;
  if (trimmed.rfind("--", 0) == 0) return true;  // an SQL comment line between statements
  run_command(line);
  return true;
}

namespace {

void print(std::ostream& out, const shell::outcome& o, const session_options& opts, double seconds) {
  if (opts.json) {
    shell::json j;
    if (!o.st) {
      j = {{"ok", false}, {"error", std::string(code_name(o.st.code()))}, {"message", o.st.message()}};
    } else {
      j["ok"] = true;
      for (const auto& [k, v] : o.data.items()) j[k] = v;
    }
    out << j.dump(-1, ' ', false, shell::json::error_handler_t::replace) << '\n';
    out.flush();
    return;
  }
  if (!o.st)
    out << "ERROR: " << code_name(o.st.code()) << ": " << o.st.message() << '\n';
  else
    out << o.text;
  if (opts.show_timing && o.timed) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "Took %.4f seconds\n", seconds);
    out << buf;
  }
  out.flush();
}

}  // namespace

void shell_session::run_sql(const std::string& sql) {
  auto t0 = std::chrono::steady_clock::now();
  shell::context ctx{conn_, opts_, database_};
  shell::outcome o = shell::run_sql(ctx, sql);
  if (!o.st) ++errors_;
  print(out_, o, opts_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

void shell_session::run_command(std::string_view line) {
  auto parsed = parse_shell_line(line);
  if (parsed && parsed->name.empty()) return;  // blank or comment
  auto t0 = std::chrono::steady_clock::now();
  shell::outcome o;
  if (!parsed) {
    o = shell::fail(parsed.error());
  } else if (const shell::command_def* cmd = shell::find_command(parsed->name)) {
    shell::context ctx{conn_, opts_, database_};
    shell::args_view a{parsed->name, parsed->args};
    o = cmd->run(ctx, a);
  } else {
    o = shell::fail(code::invalid_argument, "unknown command '" + parsed->name + "'; type help for the list");
  }
  if (!o.st) ++errors_;
  print(out_, o, opts_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace cellar
