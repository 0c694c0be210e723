// examples/blog.cc: the blog migration of seed 003, through the embedded API.
//
// A Chinese blog post ("关系型数据库到HBase的数据储存方式变迁") moves a MySQL blog (tables blog
// and comment) into one HBase table, 'blogtable', with the families info, text,
// comment_title, comment_author and comment_text. This program replays its HBase shell
// session on an in-process cellar store: the same `create`, the same `put`s, then each read
// of the post, printed as the HBase shell prints it:
//
//   hbase> get 'blogtable','1', {COLUMN => 'info'}
//   COLUMN                     CELL
//    info:author               timestamp=1764460000000, value=javabloger
//    ...
//   3 row(s)
//
// Shell column syntax, as in HBase: 'text:' is family text with the empty qualifier,
// 'text' alone is the whole family. `create` in the shell keeps one version per column
// (schema_origin::hbase_shell). Timestamps are the store's clock, so they change per run.
//
// Usage: blog (no arguments). Exits 1 with the error text if any call fails.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cellar/store.h"

namespace {

// HBase's Bytes.toStringBinary: letters, digits and the punctuation below as they are,
// every other byte as \xNN (upper-case hex).
std::string to_string_binary(std::string_view bytes) {
  static constexpr std::string_view printable = " `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?";
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char ch : bytes) {
    if ((ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
        printable.find(static_cast<char>(ch)) != std::string_view::npos) {
      out.push_back(static_cast<char>(ch));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", ch);
      out += buf;
    }
  }
  return out;
}

[[noreturn]] void fail(std::string_view what, const cellar::status& st) {
  std::fprintf(stderr, "blog: %.*s failed: %s\n", static_cast<int>(what.size()), what.data(), st.to_string().c_str());
  std::exit(1);
}

template <class T>
T check(cellar::result<T> r, std::string_view what) {
  if (!r) fail(what, r.error());
  return std::move(r).value();
}

void check(const cellar::status& st, std::string_view what) {
  if (!st) fail(what, st);
}

// The shell's two-column layout (shell/formatter.rb) on a 100-column terminal: the first
// column is 100/4 = 25 characters wide, the second 100 - 25 - 2 = 73; longer text wraps
// onto continuation lines. Data lines are inset by one space, the header line is not.
constexpr std::size_t terminal_width = 100;
constexpr std::size_t first_width = terminal_width / 4;
constexpr std::size_t second_width = terminal_width - first_width - 2;

std::vector<std::string> split(const std::string& s, std::size_t width) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < s.size(); i += width) parts.push_back(s.substr(i, width));
  if (parts.empty()) parts.emplace_back();
  return parts;
}

void print_row(const std::string& left, const std::string& right, bool inset) {
  auto l = split(left, first_width);
  auto r = split(right, second_width);
  for (std::size_t i = 0; i < std::max(l.size(), r.size()); ++i) {
    std::string line = inset ? " " : "";
    std::string a = i < l.size() ? l[i] : "";
    a.resize(first_width, ' ');
    line += a;
    line += inset ? " " : "  ";
    if (i < r.size()) line += r[i];
    // (The shell also pads the second column to its width; that padding is left out.)
    std::printf("%s\n", line.c_str());
  }
}

void print_header(const char* left, const char* right) { print_row(left, right, false); }
void print_line(const std::string& left, const std::string& right) { print_row(left, right, true); }

std::string column_name(const cellar::cell& c) {
  return to_string_binary(c.family) + ":" + to_string_binary(c.qualifier);
}

std::string cell_text(const cellar::cell& c) {
  return "timestamp=" + std::to_string(c.timestamp) + ", value=" + to_string_binary(c.value);
}

// `get`: one line per cell, "N row(s)" counts the cells as the shell does.
void show_get(cellar::table& t, const char* command, const cellar::get& g) {
  std::printf("hbase> %s\n", command);
  auto r = check(t.get(g), command);
  print_header("COLUMN", "CELL");
  for (const auto& c : r.cells) print_line(column_name(c), cell_text(c));
  std::printf("%zu row(s)\n\n", r.cells.size());
}

// `scan`: one line per cell, "N row(s)" counts the rows.
void show_scan(cellar::table& t, const char* command, const cellar::scan& s) {
  std::printf("hbase> %s\n", command);
  auto sc = check(t.scan(s), command);
  auto rows = check(sc.all(), command);
  print_header("ROW", "COLUMN+CELL");
  std::size_t row_count = 0;
  std::string last_row;
  for (const auto& r : rows) {
    // A row split into partial results still counts once.
    if (row_count == 0 || r.row != last_row) ++row_count;
    last_row = r.row;
    for (const auto& c : r.cells) {
      print_line(to_string_binary(r.row), "column=" + column_name(c) + ", " + cell_text(c));
    }
  }
  std::printf("%zu row(s)\n\n", row_count);
}

struct shell_put {
  const char* row;
  const char* family;
  const char* qualifier;
  const char* value;
};

}  // namespace

int main() {
  auto opened = cellar::store::open({});
  if (!opened) fail("store::open", opened.error());
  auto& store = *opened.value();

  // create 'blogtable', 'info','text','comment_title','comment_author','comment_text'
  std::printf("hbase> create 'blogtable', 'info','text','comment_title','comment_author','comment_text'\n");
  cellar::table_descriptor desc;
  desc.name = "blogtable";
  for (const char* f : {"info", "text", "comment_title", "comment_author", "comment_text"}) {
    cellar::family_descriptor fd;
    fd.name = f;
    desc.families.push_back(fd);
  }
  check(store.create_table(desc, cellar::schema_origin::hbase_shell), "create 'blogtable'");
  std::printf("=> Hbase::Table - blogtable\n\n");

  auto t = check(store.open_table("blogtable"), "open_table 'blogtable'");

  // The puts of the post, in its order. 'text:' is family text, empty qualifier.
  const shell_put puts[] = {
      {"1", "info", "title", "this is doc title"},
      {"1", "info", "author", "javabloger"},
      {"1", "info", "url", "http://www.javabloger.com/index.php"},
      {"2", "info", "title", "this is doc title2"},
      {"2", "info", "author", "H.E."},
      {"2", "info", "url", "http://www.javabloger.com/index.html"},
      {"1", "text", "", "what is this doc context ?"},
      {"2", "text", "", "what is this doc context2?"},
      {"1", "comment_title", "", "this is doc comment_title "},
      {"1", "comment_author", "", "javabloger"},
      {"1", "comment_text", "", "this is nice doc"},
      {"2", "comment_title", "", "this is blog comment_title "},
      {"2", "comment_author", "", "H.E."},
      {"2", "comment_text", "", "this is nice blog"},
  };
  for (const auto& p : puts) {
    std::string command =
        std::string("put 'blogtable', '") + p.row + "', '" + p.family + ":" + p.qualifier + "', '" + p.value + "'";
    std::printf("hbase> %s\n", command.c_str());
    check(t.put(cellar::put(p.row).add(p.family, p.qualifier, p.value)), command);
  }
  std::printf("\n");

  show_scan(t, "scan 'blogtable' ,{COLUMNS => ['text:','info:title'] }",
            cellar::scan().column("text", "").column("info", "title"));

  show_scan(t, "scan 'blogtable' , {COLUMNS => 'info:url' , STARTROW => '2'}",
            cellar::scan().column("info", "url").start_row("2"));

  show_get(t, "get 'blogtable','1'", cellar::get("1"));

  show_get(t, "get 'blogtable','1', {COLUMN => 'info'}", cellar::get("1").family("info"));

  show_get(t, "get 'blogtable','1', {COLUMN => 'text'}", cellar::get("1").family("text"));

  show_get(t, "get 'blogtable','1', {COLUMN => ['text','info:author']}",
           cellar::get("1").family("text").column("info", "author"));

  return 0;
}
